// One refusal, one event: with create-time enforcement the supervisor reports a refused
// creation or set-id mode exactly (file-write-create / file-write-setid, host path), and the
// command then usually prints the error too ("touch: cannot touch '.env': Permission denied",
// "chmod: changing permissions of 'x': Operation not permitted"), which the stderr parser would
// report a second time, vaguer. Such stderr reports are dropped when the supervisor already
// reported a refusal of the same name in this run. Pure; not thread-safe (the caller locks).
//
//   ViolationDedup dedup;
//   dedup.RecordRefusal("/work/tree/.env");              // from the supervisor
//   dedup.IsEcho(parsed)  // true for {file-write*, ".env"} or {file-access*, "./.env"}
#ifndef CCSANDBOX_POLICY_VIOLATIONS_DEDUP_H_
#define CCSANDBOX_POLICY_VIOLATIONS_DEDUP_H_

#include <set>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

class ViolationDedup {
 public:
  void RecordRefusal(absl::string_view host_path);
  // True for a stderr-parsed write or undetermined-access violation whose target names a
  // file the supervisor already refused to create (same final name).
  bool IsEcho(const v1::SandboxViolation& violation) const;

 private:
  std::set<std::string, std::less<>> refused_names_;
};

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_VIOLATIONS_DEDUP_H_
