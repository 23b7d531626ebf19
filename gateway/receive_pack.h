// The head of a receive-pack request (gitprotocol-pack: "Reference Update Request and Packfile
// Transfer"), read before a single byte is forwarded: optional `shallow` lines, the command list
// (`old-id SP new-id SP refname`, the first followed by NUL and the capabilities) ended by a
// flush, then — when the client asked for `push-options` — the options and a flush; the pack
// follows (none when every command deletes). A lone flush is git's probe before a large push: a
// done head with no update. Push certificates are refused.
//
// Bounded: at most kMaxRefUpdates commands and kMaxHeadBytes of head; object ids of one length
// (40 hex: SHA-1, 64: SHA-256); ref names as `git check-ref-format` accepts them, below refs/.
//
//   ReceivePackHeadParser parser;
//   absl::Status fed = parser.Feed(body_bytes);        // as they arrive
//   if (parser.done()) { parser.head().updates; parser.Rest(); }  // Rest: the pack so far
#ifndef CCSANDBOX_GATEWAY_RECEIVE_PACK_H_
#define CCSANDBOX_GATEWAY_RECEIVE_PACK_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gateway/pkt_line.h"

namespace ccsandbox::gateway {

inline constexpr size_t kMaxRefUpdates = 1000;
inline constexpr size_t kMaxHeadBytes = 1 << 20;

struct RefUpdate {
  std::string old_id;
  std::string new_id;
  std::string ref;  // "refs/heads/main"
  bool IsCreate() const { return old_id.find_first_not_of('0') == std::string::npos; }
  bool IsDelete() const { return new_id.find_first_not_of('0') == std::string::npos; }
};

struct ReceivePackHead {
  std::vector<std::string> shallow;
  std::vector<RefUpdate> updates;
  std::vector<std::string> capabilities;  // as sent: "report-status", "agent=git/2.39.5" …
  std::vector<std::string> push_options;
  bool Has(absl::string_view capability) const;
  // True when a pack follows the head (some command creates or updates a ref).
  bool ExpectsPack() const;
};

// True for a name `git check-ref-format` accepts that starts with "refs/".
bool IsValidRefName(absl::string_view ref);

class ReceivePackHeadParser {
 public:
  // Takes the next bytes of the request body. INVALID_ARGUMENT (saying what) for a malformed or
  // oversized head; once done, further bytes are kept as the rest.
  absl::Status Feed(absl::string_view bytes);
  bool done() const { return stage_ == Stage::kDone; }
  const ReceivePackHead& head() const { return head_; }
  // Bytes after the head fed so far: the start of the pack.
  absl::string_view Rest() const { return reader_.Rest(); }
  // How many bytes of the body the head took.
  size_t head_bytes() const { return reader_.consumed(); }

 private:
  enum class Stage { kCommands, kPushOptions, kDone, kFailed };
  absl::Status Take(const PktLine& line);
  absl::Status TakeCommand(absl::string_view line);

  Stage stage_ = Stage::kCommands;
  PktLineReader reader_;
  ReceivePackHead head_;
  absl::Status failure_;
};

}  // namespace ccsandbox::gateway

#endif  // CCSANDBOX_GATEWAY_RECEIVE_PACK_H_
