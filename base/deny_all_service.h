// A gRPC service that answers every method with PERMISSION_DENIED and a fixed message: the
// server that refused connections are handed to, so the caller sees why instead of a
// dropped connection.
#ifndef CCSANDBOX_BASE_DENY_ALL_SERVICE_H_
#define CCSANDBOX_BASE_DENY_ALL_SERVICE_H_

#include <string>

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

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_DENY_ALL_SERVICE_H_
