// The seccomp baseline's denied calls: each one, made for real in a child under the filter, fails
// with the errno the rule table gives it; and, for the calls anyone may make, differently without
// the filter.
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "launcher/seccomp_test_support.h"

namespace ccsandbox::launcher {
namespace {

using testing::ChildResult;
using testing::ControllingPty;
using testing::ErrnoOf;
using testing::Program;
using testing::RunInChild;

constexpr char kMissing[] = "/nonexistent-ccsandbox-seccomp-test";

// Runs `attempt` against a paused child of ours (a fork: same memory layout).
long AgainstTarget(const std::function<long(pid_t)>& attempt) {
  const pid_t target = fork();
  if (target == 0) {
    pause();
    _exit(0);
  }
  const long rc = attempt(target);
  const int saved = errno;
  kill(target, SIGKILL);
  int status;
  while (waitpid(target, &status, 0) == target && !WIFEXITED(status) && !WIFSIGNALED(status)) {
  }
  errno = saved;
  return rc;
}

// For a clone that may succeed: the new child exits at once and is reaped.
long CloneOutcome(long rc) {
  if (rc == 0) _exit(0);
  const int saved = errno;
  if (rc > 0) waitpid(static_cast<pid_t>(rc), nullptr, __WALL);
  errno = saved;
  return rc;
}

struct DeniedCall {
  std::string name;
  int expected;  // the errno the filter returns
  // The raw call, with arguments that would be harmless if it got through.
  std::function<long()> attempt;
  // Without the filter, even an unprivileged caller never gets `expected`.
  bool anyone_may_call;
};

std::vector<DeniedCall> DeniedCalls() {
  return {
      {"io_uring_setup", EPERM,
       [] {
         io_uring_params params{};
         return syscall(SYS_io_uring_setup, 4, &params);
       },
       true},
      // seccomp decides before the kernel reads the arguments: no ring needed.
      {"io_uring_enter", EPERM, [] { return syscall(SYS_io_uring_enter, -1, 1, 1, 0, nullptr, 0); },
       true},
      {"io_uring_register", EPERM,
       [] { return syscall(SYS_io_uring_register, -1, IORING_REGISTER_PROBE, nullptr, 0); }, true},
      {"ptrace_attach", EPERM,
       [] {
         return AgainstTarget([](pid_t t) { return ptrace(PTRACE_ATTACH, t, nullptr, nullptr); });
       },
       true},
      {"ptrace_traceme", EPERM, [] { return ptrace(PTRACE_TRACEME, 0, nullptr, nullptr); }, true},
      {"process_vm_readv", EPERM,
       [] {
         return AgainstTarget([](pid_t t) {
           static char secret[16] = "in the target";
           char copy[16];
           iovec local{copy, sizeof(copy)}, remote{secret, sizeof(secret)};
           return static_cast<long>(process_vm_readv(t, &local, 1, &remote, 1, 0));
         });
       },
       true},
      {"process_vm_writev", EPERM,
       [] {
         return AgainstTarget([](pid_t t) {
           static char victim[16] = "in the target";
           char payload[16] = "overwritten";
           iovec local{payload, sizeof(payload)}, remote{victim, sizeof(victim)};
           return static_cast<long>(process_vm_writev(t, &local, 1, &remote, 1, 0));
         });
       },
       true},
      // Over KEXEC_SEGMENT_MAX: harmless even if the filter let it through.
      {"kexec_load", EPERM, [] { return syscall(SYS_kexec_load, 0, 1000, nullptr, 0); }, false},
      {"kexec_file_load", EPERM, [] { return syscall(SYS_kexec_file_load, -1, -1, 0, "", 0); },
       false},
      {"bpf", EPERM,
       [] {
         bpf_attr attr{};
         attr.map_type = BPF_MAP_TYPE_ARRAY;
         attr.key_size = 4;
         attr.value_size = 4;
         attr.max_entries = 1;
         return syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
       },
       false},
      {"perf_event_open", EPERM,
       [] {
         perf_event_attr attr{};
         attr.size = sizeof(attr);
         attr.type = PERF_TYPE_SOFTWARE;
         attr.config = PERF_COUNT_SW_TASK_CLOCK;
         attr.exclude_kernel = 1;
         attr.exclude_hv = 1;
         return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
       },
       false},
      {"userfaultfd", EPERM,
       [] { return syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY); }, true},
      {"add_key", EPERM,
       [] {
         return syscall(SYS_add_key, "user", "ccsandbox-test", "x", 1, KEY_SPEC_PROCESS_KEYRING);
       },
       true},
      {"request_key", EPERM,
       [] {
         return syscall(SYS_request_key, "user", "ccsandbox-absent", nullptr,
                        KEY_SPEC_PROCESS_KEYRING);
       },
       true},
      {"keyctl", EPERM,
       [] { return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0); },
       true},
      {"ioctl_tiocsti", EPERM,
       [] {
         const char c = '\n';
         return static_cast<long>(ioctl(ControllingPty(), TIOCSTI, &c));
       },
       false},
      // The kernel drops the high half of the command, so the filter must too.
      {"ioctl_tiocsti_high_bits", EPERM,
       [] {
         const char c = '\n';
         return syscall(SYS_ioctl, ControllingPty(), TIOCSTI | (1UL << 32), &c);
       },
       false},
      {"ioctl_tioclinux", EPERM,
       [] {
         char subcode = 6;  // TIOCL_GETSHIFTSTATE: a read, harmless
         return static_cast<long>(ioctl(ControllingPty(), TIOCLINUX, &subcode));
       },
       true},
      {"mount", EPERM, [] { return syscall(SYS_mount, "none", kMissing, "tmpfs", 0, nullptr); },
       true},
      {"umount2", EPERM, [] { return syscall(SYS_umount2, kMissing, 0); }, true},
      {"pivot_root", EPERM, [] { return syscall(SYS_pivot_root, kMissing, kMissing); }, false},
      {"move_mount", EPERM,
       [] { return syscall(SYS_move_mount, AT_FDCWD, kMissing, AT_FDCWD, kMissing, 0); }, false},
      // Without OPEN_TREE_CLONE it only opens an O_PATH fd: anyone may.
      {"open_tree", EPERM, [] { return syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLOEXEC); },
       true},
      {"fsopen", EPERM, [] { return syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC); }, false},
      {"fsmount", EPERM, [] { return syscall(SYS_fsmount, -1, FSMOUNT_CLOEXEC, 0); }, false},
      {"fspick", EPERM, [] { return syscall(SYS_fspick, AT_FDCWD, kMissing, FSPICK_CLOEXEC); },
       false},
      {"mount_setattr", EPERM,
       [] {
         mount_attr attr{};
         attr.attr_clr = MOUNT_ATTR_RDONLY;
         return syscall(SYS_mount_setattr, AT_FDCWD, kMissing, 0, &attr, sizeof(attr));
       },
       false},
      // A zero-length image: harmless even if the filter let it through.
      {"init_module", EPERM,
       [] {
         static char image[64];
         return syscall(SYS_init_module, image, 0, "");
       },
       false},
      {"finit_module", EPERM, [] { return syscall(SYS_finit_module, -1, "", 0); }, false},
      {"delete_module", EPERM,
       [] { return syscall(SYS_delete_module, "ccsandbox_absent", O_NONBLOCK); }, false},
      {"swapon", EPERM, [] { return syscall(SYS_swapon, kMissing, 0); }, false},
      {"swapoff", EPERM, [] { return syscall(SYS_swapoff, kMissing); }, false},
      // Wrong magic: harmless even if the filter let it through.
      {"reboot", EPERM, [] { return syscall(SYS_reboot, 0, 0, LINUX_REBOOT_CMD_CAD_OFF, nullptr); },
       false},
      {"open_by_handle_at", EPERM,
       [] {
         struct {
           file_handle head;
           unsigned char bytes[MAX_HANDLE_SZ];
         } handle{};
         handle.head.handle_bytes = MAX_HANDLE_SZ;
         int mount_id;
         if (name_to_handle_at(AT_FDCWD, "/", &handle.head, &mount_id, 0) != 0) {
           handle.head.handle_bytes = 8;  // no handles on this fs: a forged one is as plausible
         }
         const int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
         return static_cast<long>(open_by_handle_at(root, &handle.head, O_RDONLY));
       },
       false},
      {"unshare_newuser", EPERM, [] { return static_cast<long>(unshare(CLONE_NEWUSER)); }, true},
      {"unshare_newuser_newns", EPERM,
       [] { return static_cast<long>(unshare(CLONE_NEWUSER | CLONE_NEWNS)); }, true},
      {"clone_newuser", EPERM,
       [] { return CloneOutcome(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)); }, true},
      // The kernel ignores clone's high flag bits, so the filter must too.
      {"clone_newuser_high_bits", EPERM,
       [] {
         return CloneOutcome(syscall(SYS_clone, (1UL << 40) | CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0));
       },
       true},
      // Under a missing directory: harmless even if the filter let it through.
      {"openat2_creat_setuid", ENOSYS,
       [] {
         open_how how{};
         how.flags = O_CREAT | O_WRONLY | O_CLOEXEC;
         how.mode = 04755;
         const std::string path = absl::StrCat(kMissing, "/x");
         return syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof(how));
       },
       true},
      {"clone3", ENOSYS,
       [] {
         clone_args args{};
         args.exit_signal = SIGCHLD;
         return CloneOutcome(syscall(SYS_clone3, &args, sizeof(args)));
       },
       true},
      // Another process's limits, priorities and CPUs (the parent: the same uid, and every
      // value set is the one it has, so nothing changes if the filter let it through).
      {"prlimit64_other", EPERM,
       [] {
         rlimit current;
         getrlimit(RLIMIT_CORE, &current);
         return syscall(SYS_prlimit64, getppid(), RLIMIT_CORE, &current, nullptr);
       },
       true},
      {"setpriority_other", EPERM,
       [] {
         errno = 0;
         const int nice = getpriority(PRIO_PROCESS, getppid());
         return syscall(SYS_setpriority, PRIO_PROCESS, getppid(), nice);
       },
       true},
      {"setpriority_user", EPERM,
       [] { return syscall(SYS_setpriority, PRIO_USER, 0, getpriority(PRIO_PROCESS, 0)); }, false},
      {"ioprio_set_other", EPERM,
       [] {
         const long current = syscall(SYS_ioprio_get, 1 /*IOPRIO_WHO_PROCESS*/, getppid());
         return syscall(SYS_ioprio_set, 1, getppid(), current);
       },
       true},
      {"ioprio_set_user", EPERM,
       [] { return syscall(SYS_ioprio_set, 3 /*IOPRIO_WHO_USER*/, 0, 0); }, false},
      {"sched_setscheduler_other", EPERM,
       [] {
         sched_param param{};
         return syscall(SYS_sched_setscheduler, getppid(), SCHED_OTHER, &param);
       },
       true},
      {"sched_setparam_other", EPERM,
       [] {
         sched_param param{};
         return syscall(SYS_sched_setparam, getppid(), &param);
       },
       true},
      {"sched_setaffinity_other", EPERM,
       [] {
         cpu_set_t set;
         sched_getaffinity(getppid(), sizeof(set), &set);
         return syscall(SYS_sched_setaffinity, getppid(), sizeof(set), &set);
       },
       true},
      {"clone3_newuser", ENOSYS,
       [] {
         clone_args args{};
         args.flags = CLONE_NEWUSER;
         args.exit_signal = SIGCHLD;
         return CloneOutcome(syscall(SYS_clone3, &args, sizeof(args)));
       },
       true},
  };
}

void PrintTo(const DeniedCall& call, std::ostream* os) { *os << call.name; }

class DeniedCallTest : public ::testing::TestWithParam<DeniedCall> {};

TEST_P(DeniedCallTest, FailsUnderTheFilter) {
  const DeniedCall& call = GetParam();
  ASSERT_FALSE(Program().empty());
  const ChildResult result = RunInChild(&Program(), [&] { return ErrnoOf(call.attempt()); });
  ASSERT_TRUE(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0)
      << "wait status " << result.status;
  EXPECT_EQ(result.value, call.expected) << call.name << " gave " << strerrorname_np(result.value);
}

INSTANTIATE_TEST_SUITE_P(Baseline, DeniedCallTest, ::testing::ValuesIn(DeniedCalls()),
                         [](const ::testing::TestParamInfo<DeniedCall>& info) {
                           return info.param.name;
                         });

// Shows that the refusals come from the filter, for the calls anyone may make
// without it. The others return EPERM in Bazel's sandbox anyway (no
// capabilities in the initial namespace).
TEST(DeniedCallControlTest, DifferWithoutTheFilter) {
  for (const DeniedCall& call : DeniedCalls()) {
    if (!call.anyone_may_call) continue;
    SCOPED_TRACE(call.name);
    const ChildResult result = RunInChild(nullptr, [&] { return ErrnoOf(call.attempt()); });
    ASSERT_TRUE(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0)
        << "wait status " << result.status;
    EXPECT_NE(result.value, call.expected);
  }
}

}  // namespace
}  // namespace ccsandbox::launcher
