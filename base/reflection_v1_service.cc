#include "base/reflection_v1_service.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.pb.h"

namespace ccsandbox {
namespace {

namespace pb = google::protobuf;
using grpc::reflection::v1::ServerReflectionRequest;
using grpc::reflection::v1::ServerReflectionResponse;

void SetError(grpc::StatusCode code, const std::string& message,
              ServerReflectionResponse& response) {
  response.mutable_error_response()->set_error_code(code);
  response.mutable_error_response()->set_error_message(message);
}

// `file`, then each of its transitive dependencies not sent yet (`sent`: by file name).
void AddFileAndDependencies(const pb::FileDescriptor* file, std::set<std::string>& sent,
                            ServerReflectionResponse& response) {
  if (!sent.insert(file->name()).second) return;
  pb::FileDescriptorProto proto;
  file->CopyTo(&proto);
  proto.SerializeToString(response.mutable_file_descriptor_response()->add_file_descriptor_proto());
  for (int i = 0; i < file->dependency_count(); ++i) {
    AddFileAndDependencies(file->dependency(i), sent, response);
  }
}

void SetNotFound(const std::string& what, ServerReflectionResponse& response) {
  SetError(grpc::StatusCode::NOT_FOUND, absl::StrCat(what, " not found"), response);
}

// `file` and its dependencies, or NOT_FOUND saying `what` was not found.
void AnswerFile(const pb::FileDescriptor* file, const std::string& what,
                ServerReflectionResponse& response) {
  if (file == nullptr) {
    SetNotFound(what, response);
    return;
  }
  std::set<std::string> sent;
  AddFileAndDependencies(file, sent, response);
}

void AnswerExtension(const grpc::reflection::v1::ExtensionRequest& request,
                     const pb::DescriptorPool& pool, ServerReflectionResponse& response) {
  const pb::Descriptor* type = pool.FindMessageTypeByName(request.containing_type());
  if (type == nullptr) {
    SetNotFound(absl::StrCat("message type '", request.containing_type(), "'"), response);
    return;
  }
  const pb::FieldDescriptor* extension =
      pool.FindExtensionByNumber(type, request.extension_number());
  AnswerFile(extension == nullptr ? nullptr : extension->file(),
             absl::StrCat("extension ", request.extension_number(), " of '",
                          request.containing_type(), "'"),
             response);
}

void AnswerExtensionNumbers(const std::string& type_name, const pb::DescriptorPool& pool,
                            ServerReflectionResponse& response) {
  const pb::Descriptor* type = pool.FindMessageTypeByName(type_name);
  if (type == nullptr) {
    SetNotFound(absl::StrCat("message type '", type_name, "'"), response);
    return;
  }
  std::vector<const pb::FieldDescriptor*> extensions;
  pool.FindAllExtensions(type, &extensions);
  std::vector<int> numbers;
  for (const pb::FieldDescriptor* extension : extensions) numbers.push_back(extension->number());
  std::sort(numbers.begin(), numbers.end());
  auto* answer = response.mutable_all_extension_numbers_response();
  answer->set_base_type_name(type->full_name());
  for (int number : numbers) answer->add_extension_number(number);
}

}  // namespace

ServerReflectionResponse AnswerReflection(const ServerReflectionRequest& request,
                                          const pb::DescriptorPool& pool,
                                          const std::vector<std::string>& services) {
  ServerReflectionResponse response;
  response.set_valid_host(request.host());
  *response.mutable_original_request() = request;
  switch (request.message_request_case()) {
    case ServerReflectionRequest::kListServices:
      for (const std::string& name : services) {
        response.mutable_list_services_response()->add_service()->set_name(name);
      }
      // An empty list is still a list_services_response.
      response.mutable_list_services_response();
      break;
    case ServerReflectionRequest::kFileByFilename:
      AnswerFile(pool.FindFileByName(request.file_by_filename()),
                 absl::StrCat("file '", request.file_by_filename(), "'"), response);
      break;
    case ServerReflectionRequest::kFileContainingSymbol:
      AnswerFile(pool.FindFileContainingSymbol(request.file_containing_symbol()),
                 absl::StrCat("symbol '", request.file_containing_symbol(), "'"), response);
      break;
    case ServerReflectionRequest::kFileContainingExtension:
      AnswerExtension(request.file_containing_extension(), pool, response);
      break;
    case ServerReflectionRequest::kAllExtensionNumbersOfType:
      AnswerExtensionNumbers(request.all_extension_numbers_of_type(), pool, response);
      break;
    case ServerReflectionRequest::MESSAGE_REQUEST_NOT_SET:
      SetError(grpc::StatusCode::UNIMPLEMENTED,
               "the request asks nothing this server knows (grpc.reflection.v1)", response);
      break;
  }
  return response;
}

grpc::Status ReflectionV1Service::ServerReflectionInfo(
    grpc::ServerContext* /*context*/,
    grpc::ServerReaderWriter<ServerReflectionResponse, ServerReflectionRequest>* stream) {
  static const std::vector<std::string> kNone;
  ServerReflectionRequest request;
  while (stream->Read(&request)) {
    const std::vector<std::string>* services = services_.load();
    if (!stream->Write(AnswerReflection(request, *pool_, services ? *services : kNone))) break;
  }
  return grpc::Status::OK;
}

}  // namespace ccsandbox
