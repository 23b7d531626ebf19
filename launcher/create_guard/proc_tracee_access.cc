#include "launcher/create_guard/proc_tracee_access.h"

#include <errno.h>
#include <string.h>

#include "absl/strings/str_cat.h"

namespace ccsandbox::launcher {
namespace {

// NOT_FOUND only for a tracee that is gone; the errno the kernel would give the tracee
// otherwise (never mapped to NOT_FOUND).
absl::Status TraceeError(int error, absl::string_view what) {
  if (error == ESRCH) return absl::NotFoundError(absl::StrCat(what, ": the tracee is gone"));
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", strerror(error)));
}

}  // namespace

absl::StatusOr<TraceeIdentity> ProcTraceeAccess::Identity(pid_t tid) {
  TraceeIdentity identity;
  if (int r = identities_.Read(tid, &identity)) {
    if (r == ESRCH) return absl::NotFoundError("the tracee is gone");
    return absl::InternalError(
        absl::StrCat("create supervisor: cannot read /proc/", tid, "/status: ", strerror(r)));
  }
  return identity;
}

absl::StatusOr<std::string> ProcTraceeAccess::ReadString(pid_t tid, uint64_t address) {
  std::string out;
  if (int r = ReadTraceeString(tid, address, &out)) return TraceeError(r, "read a path");
  return out;
}

absl::StatusOr<UniqueFd> ProcTraceeAccess::OpenFd(pid_t tid, int fd) {
  UniqueFd out;
  if (int r = OpenTraceeFd(fs_.host_proc(), tid, fd, &out)) return TraceeError(r, "open its fd");
  return out;
}

}  // namespace ccsandbox::launcher
