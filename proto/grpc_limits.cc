#include "proto/grpc_limits.h"

#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/stubs/logging.h"
#include "grpcpp/support/server_interceptor.h"
#include "policy/plan/input_limits.h"

namespace ccsandbox {
namespace {

using grpc::experimental::InterceptionHookPoints;

thread_local std::string t_utf8_failure;  // full proto name of the field, e.g. pkg.Msg.field
google::protobuf::LogHandler* g_previous_handler = nullptr;

void RecordingLogHandler(google::protobuf::LogLevel level, const char* filename, int line,
                         const std::string& message) {
  constexpr absl::string_view kPrefix = "String field '";
  if (absl::StartsWith(message, kPrefix) &&
      absl::StrContains(message, "invalid UTF-8 data when parsing")) {
    const size_t end = message.find('\'', kPrefix.size());
    if (end != std::string::npos) {
      t_utf8_failure = message.substr(kPrefix.size(), end - kPrefix.size());
    }
  }
  if (g_previous_handler != nullptr) g_previous_handler(level, filename, line, message);
}

// "ccsandbox.v1.SandboxBindMount.host_path" -> "SandboxBindMount.hostPath".
std::string JsonFieldName(const std::string& full_name) {
  const google::protobuf::FieldDescriptor* field =
      google::protobuf::DescriptorPool::generated_pool()->FindFieldByName(full_name);
  if (field == nullptr) return full_name;
  return absl::StrCat(field->containing_type()->name(), ".", field->json_name());
}

class ParseErrorInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit ParseErrorInterceptor(const char* method) : method_(method) {
    t_utf8_failure.clear();  // created on the thread that is about to deserialise
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        !received_) {
      received_ = true;
      if (methods->GetRecvMessage() == nullptr) {
        unparsed_ = true;
        field_ = TakeUtf8ParseFailure();
      }
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS) && unparsed_ &&
        methods->GetSendStatus().error_code() == grpc::StatusCode::INTERNAL) {
      methods->ModifySendStatus(grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          field_.empty() ? absl::StrCat("request: the bytes sent to ", method_,
                                        " do not parse as its request message")
                         : absl::StrCat(field_,
                                        ": is not valid UTF-8 (proto3 string fields carry UTF-8 "
                                        "text only); the request to ",
                                        method_, " was refused unread")));
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  bool received_ = false;
  bool unparsed_ = false;
  std::string field_;
};

class ParseErrorInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    // Only these deserialise their one request before the handler runs.
    using Type = grpc::experimental::ServerRpcInfo::Type;
    if (info->type() != Type::UNARY && info->type() != Type::SERVER_STREAMING) return nullptr;
    return new ParseErrorInterceptor(info->method());
  }
};

}  // namespace

void CaptureProtobufParseErrors() {
  google::protobuf::LogHandler* previous = google::protobuf::SetLogHandler(&RecordingLogHandler);
  if (previous != &RecordingLogHandler) g_previous_handler = previous;
}

std::string TakeUtf8ParseFailure() {
  std::string full_name = std::move(t_utf8_failure);
  t_utf8_failure.clear();
  return full_name.empty() ? "" : JsonFieldName(full_name);
}

void ApplyServerLimits(grpc::ServerBuilder& builder) {
  builder.SetMaxReceiveMessageSize(policy::kMaxGrpcMessageBytes);
  builder.SetMaxSendMessageSize(policy::kMaxGrpcMessageBytes);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(std::make_unique<ParseErrorInterceptorFactory>());
  builder.experimental().SetInterceptorCreators(std::move(creators));
}

void ApplyChannelLimits(grpc::ChannelArguments& args) {
  args.SetMaxReceiveMessageSize(policy::kMaxGrpcMessageBytes);
  args.SetMaxSendMessageSize(policy::kMaxGrpcMessageBytes);
}

}  // namespace ccsandbox
