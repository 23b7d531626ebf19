// A gRPC service that answers every method with PERMISSION_DENIED and a fixed message: the
// server that refused connections are handed to, so the caller sees why instead of a
// dropped connection.
#ifndef CCSANDBOX_BASE_DENY_ALL_SERVICE_H_
#define CCSANDBOX_BASE_DENY_ALL_SERVICE_H_

#include <memory>
#include <string>
#include <utility>

#include "base/standard_services.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"

namespace ccsandbox {

class DenyAllService : public grpc::CallbackGenericService {
 public:
  explicit DenyAllService(std::string message) : message_(std::move(message)) {}

 private:
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext*) override {
    class Reactor : public grpc::ServerGenericBidiReactor {
     public:
      explicit Reactor(const std::string& message) {
        Finish(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, message));
      }
      void OnDone() override { delete this; }
    };
    return new Reactor(message_);
  }
  const std::string message_;
};

// A gRPC server without a port of its own that serves only `service`: the daemons hand it the
// connections they refuse (grpc::AddInsecureChannelFromFd). nullptr when gRPC cannot build it.
inline std::unique_ptr<grpc::Server> StartDenyAllServer(DenyAllService& service) {
  grpc::ServerBuilder builder;
  // A refused caller learns nothing: no health (the launcher's state), no reflection.
  WithoutStandardServices(builder);
  builder.RegisterCallbackGenericService(&service);
  return builder.BuildAndStart();
}

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_DENY_ALL_SERVICE_H_
