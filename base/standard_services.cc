#include "base/standard_services.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "base/reflection_v1_service.h"
#include "grpcpp/ext/health_check_service_server_builder_option.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/impl/server_builder_option.h"
#include "grpcpp/impl/server_builder_plugin.h"
#include "grpcpp/impl/server_initializer.h"

namespace ccsandbox {
namespace {

// gRPC's v1alpha plugin registers itself for every ServerBuilder of a process that loads
// libgrpc++_reflection; this is its name.
constexpr char kGrpcReflectionPlugin[] = "proto_server_reflection";

// Registers a ReflectionV1Service and gives it the server's list of services.
class ReflectionV1Plugin final : public grpc::ServerBuilderPlugin {
 public:
  std::string name() override { return "ccsandbox_reflection_v1"; }
  void InitServer(grpc::ServerInitializer* initializer) override {
    initializer->RegisterService(service_);
  }
  void Finish(grpc::ServerInitializer* initializer) override {
    service_->SetServiceList(initializer->GetServiceList());
  }
  void ChangeArguments(const std::string& /*name*/, void* /*value*/) override {}
  bool has_sync_methods() const override { return true; }

 private:
  const std::shared_ptr<ReflectionV1Service> service_ = std::make_shared<ReflectionV1Service>();
};

// Exactly one of each reflection plugin on this builder, or none.
class ReflectionOption final : public grpc::ServerBuilderOption {
 public:
  explicit ReflectionOption(bool serve) : serve_(serve) {}
  void UpdateArguments(grpc::ChannelArguments* /*args*/) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    plugins->erase(std::remove_if(plugins->begin(), plugins->end(),
                                  [](const std::unique_ptr<grpc::ServerBuilderPlugin>& plugin) {
                                    return plugin->name() == kGrpcReflectionPlugin;
                                  }),
                   plugins->end());
    if (!serve_) return;
    plugins->push_back(std::make_unique<grpc::reflection::ProtoServerReflectionPlugin>());
    plugins->push_back(std::make_unique<ReflectionV1Plugin>());
  }

 private:
  const bool serve_;
};

}  // namespace

void ServeStandardServices(grpc::ServerBuilder& builder) {
  // Process-wide; WithoutStandardServices opts its servers out.
  grpc::EnableDefaultHealthCheckService(true);
  builder.SetOption(std::make_unique<ReflectionOption>(true));
}

void WithoutStandardServices(grpc::ServerBuilder& builder) {
  // A null health service is gRPC's way to say "none on this server".
  builder.SetOption(std::make_unique<grpc::HealthCheckServiceServerBuilderOption>(nullptr));
  builder.SetOption(std::make_unique<ReflectionOption>(false));
}

}  // namespace ccsandbox
