#include "launcher/idmap_userns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ccsandbox::launcher {
namespace {

absl::Status WriteFile(const std::string& path, const std::string& content) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid() ||
      write(fd.get(), content.data(), content.size()) != static_cast<ssize_t>(content.size())) {
    return absl::InternalError(absl::StrCat("writing ", path, ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<UniqueFd> MakeIdmapUserns(uid_t host_uid, gid_t host_gid) {
  if (host_uid == 0 || host_gid == 0) {
    return absl::InvalidArgumentError("the sandbox uid and gid of root callers may not be 0");
  }
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  UniqueFd ready_r(ready[0]), ready_w(ready[1]);
  // A child holds the namespace while its maps are written and its fd is opened.
  const pid_t child = fork();
  if (child < 0) return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  if (child == 0) {
    ready_r.Reset();
    const char ok = unshare(CLONE_NEWUSER) == 0 ? 'y' : 'n';
    (void)!write(ready_w.get(), &ok, 1);
    pause();
    _exit(0);
  }
  absl::Cleanup reap = [child] {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
  };
  ready_w.Reset();
  char ok = 0;
  if (read(ready_r.get(), &ok, 1) != 1 || ok != 'y') {
    return absl::FailedPreconditionError("cannot create a user namespace (unshare CLONE_NEWUSER)");
  }
  const std::string proc = absl::StrCat("/proc/", child);
  if (absl::Status s = WriteFile(proc + "/uid_map", absl::StrCat("0 ", host_uid, " 1\n"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteFile(proc + "/gid_map", absl::StrCat("0 ", host_gid, " 1\n"));
      !s.ok()) {
    return s;
  }
  UniqueFd ns(open((proc + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC));
  if (!ns.valid()) {
    return absl::InternalError(absl::StrCat("opening ", proc, "/ns/user: ", strerror(errno)));
  }
  return ns;
}

}  // namespace ccsandbox::launcher
