#include "base/standard_services.h"

#include <memory>
#include <set>
#include <string>

#include "base/deny_all_service.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/rpc_method.h"
#include "grpcpp/support/sync_stream.h"
#include "gtest/gtest.h"
#include "proto/health.grpc.pb.h"
#include "proto/launcher.grpc.pb.h"
#include "proto/reflection.grpc.pb.h"

namespace ccsandbox {
namespace {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;
using grpc::reflection::v1::ServerReflectionRequest;
using grpc::reflection::v1::ServerReflectionResponse;

constexpr char kV1[] = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
// v1alpha's messages are v1's, field for field: one client speaks both.
constexpr char kV1alpha[] = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

// One request on a stream of `method`, and its answer.
grpc::Status Reflect(grpc::Channel& channel, const char* method,
                     const ServerReflectionRequest& request, ServerReflectionResponse* response) {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<ServerReflectionRequest, ServerReflectionResponse>>
      stream(
          grpc::internal::
              ClientReaderWriterFactory<ServerReflectionRequest, ServerReflectionResponse>::Create(
                  &channel,
                  grpc::internal::RpcMethod(method, grpc::internal::RpcMethod::BIDI_STREAMING),
                  &context));
  stream->Write(request);
  stream->WritesDone();
  while (stream->Read(response)) {
  }
  return stream->Finish();
}

std::set<std::string> ListServices(grpc::Channel& channel, const char* method) {
  ServerReflectionRequest request;
  request.set_list_services("");
  ServerReflectionResponse response;
  grpc::Status status = Reflect(channel, method, request, &response);
  EXPECT_TRUE(status.ok()) << method << ": " << status.error_message();
  std::set<std::string> names;
  for (const auto& service : response.list_services_response().service()) {
    names.insert(service.name());
  }
  return names;
}

grpc::Status Check(grpc::Channel& channel, const std::string& service,
                   HealthCheckResponse* response) {
  auto stub = grpc::health::v1::Health::NewStub(
      std::shared_ptr<grpc::Channel>(&channel, [](grpc::Channel*) {}));
  grpc::ClientContext context;
  HealthCheckRequest request;
  request.set_service(service);
  return stub->Check(&context, request, response);
}

class StandardServicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    ServeStandardServices(builder);
    builder.RegisterService(&launcher_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = server_->InProcessChannel(grpc::ChannelArguments());
  }
  void TearDown() override { server_->Shutdown(); }

  v1::SandboxLauncher::Service launcher_;  // every method UNIMPLEMENTED: only its name matters
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(StandardServicesTest, BothReflectionsListEveryServiceOfTheServer) {
  const std::set<std::string> expected = {"ccsandbox.v1.SandboxLauncher", "grpc.health.v1.Health",
                                          "grpc.reflection.v1.ServerReflection",
                                          "grpc.reflection.v1alpha.ServerReflection"};
  EXPECT_EQ(ListServices(*channel_, kV1), expected);
  EXPECT_EQ(ListServices(*channel_, kV1alpha), expected);
}

TEST_F(StandardServicesTest, HealthResolvesThroughBothReflections) {
  for (const char* method : {kV1, kV1alpha}) {
    ServerReflectionRequest request;
    request.set_file_containing_symbol("grpc.health.v1.Health");
    ServerReflectionResponse response;
    ASSERT_TRUE(Reflect(*channel_, method, request, &response).ok()) << method;
    ASSERT_EQ(response.file_descriptor_response().file_descriptor_proto_size(), 1)
        << method << response.DebugString();
    google::protobuf::FileDescriptorProto file;
    ASSERT_TRUE(file.ParseFromString(response.file_descriptor_response().file_descriptor_proto(0)));
    EXPECT_EQ(file.package(), "grpc.health.v1") << method;
    ASSERT_EQ(file.service_size(), 1) << method;
    EXPECT_EQ(file.service(0).method(0).name(), "Check") << method;
    EXPECT_EQ(file.service(0).method(0).input_type(), ".grpc.health.v1.HealthCheckRequest");
  }
}

TEST_F(StandardServicesTest, HealthAnswersTheServerAndTheNamesItIsGiven) {
  HealthCheckResponse response;
  ASSERT_TRUE(Check(*channel_, "", &response).ok());
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
  EXPECT_EQ(Check(*channel_, "ccsandbox.v1.SandboxLauncher", &response).error_code(),
            grpc::StatusCode::NOT_FOUND);
  server_->GetHealthCheckService()->SetServingStatus("ccsandbox.v1.SandboxLauncher", true);
  ASSERT_TRUE(Check(*channel_, "ccsandbox.v1.SandboxLauncher", &response).ok());
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
}

// A caller the daemon refuses learns nothing from it: no health, no reflection.
TEST(WithoutStandardServicesTest, ARefusingServerAnswersEveryCallWithItsRefusal) {
  // As in a daemon: a serving server first, so gRPC's process-wide parts are switched on.
  grpc::ServerBuilder serving;
  ServeStandardServices(serving);
  std::unique_ptr<grpc::Server> served = serving.BuildAndStart();
  DenyAllService refusal("refused for the test");
  std::unique_ptr<grpc::Server> server = StartDenyAllServer(refusal);
  ASSERT_NE(server, nullptr);
  std::shared_ptr<grpc::Channel> channel = server->InProcessChannel(grpc::ChannelArguments());

  HealthCheckResponse health;
  grpc::Status checked = Check(*channel, "", &health);
  EXPECT_EQ(checked.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(checked.error_message(), "refused for the test");
  for (const char* method : {kV1, kV1alpha}) {
    ServerReflectionRequest request;
    request.set_list_services("");
    ServerReflectionResponse response;
    grpc::Status status = Reflect(*channel, method, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << method;
    EXPECT_FALSE(response.has_list_services_response()) << method;
  }
  server->Shutdown();
  served->Shutdown();
}

}  // namespace
}  // namespace ccsandbox
