// absl::Status <-> grpc::Status: both use the canonical code numbering.
#ifndef CCSANDBOX_PROTO_GRPC_STATUS_H_
#define CCSANDBOX_PROTO_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"

namespace ccsandbox {

// No status message leaves a daemon longer than this, whatever input it quotes.
inline constexpr size_t kMaxStatusMessageBytes = 1024;

// `message` when it fits; otherwise its head (which names the field) and tail (which says
// why), cut at UTF-8 character boundaries around " … ".
inline std::string BoundedStatusMessage(absl::string_view message) {
  if (message.size() <= kMaxStatusMessageBytes) return std::string(message);
  const size_t keep = (kMaxStatusMessageBytes - 5) / 2;
  auto continuation = [&](size_t at) { return (message[at] & 0xc0) == 0x80; };
  size_t head = keep;
  while (head > 0 && continuation(head)) --head;
  size_t tail = message.size() - keep;
  while (tail < message.size() && continuation(tail)) ++tail;
  return absl::StrCat(message.substr(0, head), " … ", message.substr(tail));
}

inline grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      BoundedStatusMessage(status.message()));
}

inline absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

}  // namespace ccsandbox

#endif  // CCSANDBOX_PROTO_GRPC_STATUS_H_
