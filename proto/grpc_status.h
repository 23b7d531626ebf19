// absl::Status <-> grpc::Status: both use the canonical code numbering.
#ifndef CCSANDBOX_PROTO_GRPC_STATUS_H_
#define CCSANDBOX_PROTO_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace ccsandbox {

inline grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

inline absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

}  // namespace ccsandbox

#endif  // CCSANDBOX_PROTO_GRPC_STATUS_H_
