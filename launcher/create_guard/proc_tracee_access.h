// The real TraceeAccess: a tracee read through the host's /proc (its status file, its fd
// links) and process_vm_readv (tracee.h), and its root and credentials borrowed by the
// supervising thread (tracee_fs_context.h). Needs root; lives on the supervising thread.
//
//   absl::StatusOr<std::unique_ptr<TraceeFsContext>> fs = TraceeFsContext::ForThisThread(free);
//   ProcTraceeAccess access(**fs);
//   CreateEmulator emulator(access, rules);
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_PROC_TRACEE_ACCESS_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_PROC_TRACEE_ACCESS_H_

#include "launcher/create_guard/tracee.h"
#include "launcher/create_guard/tracee_access.h"
#include "launcher/create_guard/tracee_fs_context.h"

namespace ccsandbox::launcher {

class ProcTraceeAccess : public TraceeAccess {
 public:
  // `fs` must outlive this.
  explicit ProcTraceeAccess(TraceeFsContext& fs) : fs_(fs), identities_(fs.host_proc()) {}

  absl::StatusOr<TraceeIdentity> Identity(pid_t tid) override;
  absl::StatusOr<std::string> ReadString(pid_t tid, uint64_t address) override;
  absl::StatusOr<UniqueFd> OpenFd(pid_t tid, int fd) override;
  absl::Status EnterRoot(pid_t tid) override { return fs_.Enter(tid); }
  bool IsFree(int dir) override { return fs_.IsFree(dir); }
  absl::Status BecomeTracee(const TraceeIdentity& identity) override {
    return fs_.BecomeTracee(identity);
  }
  absl::Status BecomeSelf() override { return fs_.BecomeSelf(); }
  int self_proc() const override { return fs_.host_proc(); }

 private:
  TraceeFsContext& fs_;
  TraceeIdentityReader identities_;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_PROC_TRACEE_ACCESS_H_
