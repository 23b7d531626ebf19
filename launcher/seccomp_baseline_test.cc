#include "launcher/seccomp_baseline.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::launcher {
namespace {

constexpr long kX32SyscallBit = 0x40000000;  // __X32_SYSCALL_BIT
constexpr long kFchmodat2 = 452;             // x86_64; not in these kernel headers
constexpr char kMissing[] = "/nonexistent-ccsandbox-seccomp-test";

// The exported bytes, read without moving the fd's offset.
std::vector<sock_filter> ReadProgram(int fd) {
  std::vector<sock_filter> program;
  sock_filter insn;
  for (off_t off = 0; pread(fd, &insn, sizeof(insn), off) == sizeof(insn); off += sizeof(insn)) {
    program.push_back(insn);
  }
  return program;
}

const std::vector<sock_filter>& Program() {
  static const std::vector<sock_filter> program = [] {
    absl::StatusOr<UniqueFd> fd = ExportSeccompBaseline();
    EXPECT_TRUE(fd.ok()) << fd.status();
    return fd.ok() ? ReadProgram(fd->get()) : std::vector<sock_filter>{};
  }();
  return program;
}

struct ChildResult {
  int status = 0;  // wait status
  int value = -1;  // what the body returned, -1 if it never reported
};

// Forks; the child loads `program` the way bwrap does (no_new_privs, then a
// seccomp filter), unless it is null, runs `body`, and reports the int it
// returns.
ChildResult RunInChild(const std::vector<sock_filter>* program, const std::function<int()>& body) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return {};
  UniqueFd report_r(report[0]), report_w(report[1]);
  const pid_t pid = fork();
  if (pid == 0) {
    if (program != nullptr) {
      sock_fprog prog{static_cast<unsigned short>(program->size()),
                      const_cast<sock_filter*>(program->data())};
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
          syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
        _exit(125);
      }
    }
    const int value = body();
    (void)!write(report_w.get(), &value, sizeof(value));
    _exit(0);
  }
  report_w.Reset();
  ChildResult result;
  if (read(report_r.get(), &result.value, sizeof(result.value)) != sizeof(result.value)) {
    result.value = -1;
  }
  waitpid(pid, &result.status, 0);
  return result;
}

int ErrnoOf(long rc) { return rc < 0 ? errno : 0; }

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

// A pty slave that is our controlling terminal, like the one an agent's shell
// would have.
int ControllingPty() {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return -1;
  setsid();
  return open(ptsname(master), O_RDWR);
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

struct AllowedCall {
  std::string name;
  std::function<int()> run;  // 0 when it worked, else an errno or a step number
};

std::vector<AllowedCall> AllowedCalls() {
  return {
      {"open_write_read",
       [] {
         char path[] = "/tmp/ccsandbox-seccomp-XXXXXX";
         const int fd = mkstemp(path);
         if (fd < 0) return errno;
         unlink(path);
         char buf[3] = {};
         if (write(fd, "abc", 3) != 3 || pread(fd, buf, 3, 0) != 3) return errno;
         close(fd);
         return std::memcmp(buf, "abc", 3) == 0 ? 0 : -2;
       }},
      {"clone_without_newuser",
       [] {
         const long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
         if (pid == 0) _exit(7);
         if (pid < 0) return errno;
         int status;
         waitpid(static_cast<pid_t>(pid), &status, 0);
         return WIFEXITED(status) && WEXITSTATUS(status) == 7 ? 0 : -2;
       }},
      {"unshare_without_newuser", [] { return ErrnoOf(unshare(CLONE_FILES | CLONE_FS)); }},
      {"fork_exec_true",
       [] {
         const pid_t pid = fork();
         if (pid == 0) {
           execl("/bin/true", "true", nullptr);
           _exit(127);
         }
         if (pid < 0) return errno;
         int status;
         waitpid(pid, &status, 0);
         return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -2;
       }},
      {"posix_spawn_true",
       [] {
         pid_t pid;
         char* argv[] = {const_cast<char*>("true"), nullptr};
         if (int rc = posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ); rc != 0) {
           return rc;
         }
         int status;
         waitpid(pid, &status, 0);
         return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -2;
       }},
      // glibc's pthread_create tries clone3, then clone on ENOSYS.
      {"thread",
       [] {
         int ran = 0;
         std::thread([&] { ran = 1; }).join();
         return ran == 1 ? 0 : -2;
       }},
      {"ioctl_fionread",
       [] {
         int fds[2];
         if (pipe(fds) != 0) return errno;
         int n = -1;
         (void)!write(fds[1], "x", 1);
         return ioctl(fds[0], FIONREAD, &n) == 0 && n == 1 ? 0 : errno;
       }},
      // Without O_CREAT or O_TMPFILE the mode is ignored: no rule applies.
      {"open_existing_with_setid_mode",
       [] {
         const long fd = syscall(SYS_open, "/etc/passwd", O_RDONLY | O_CLOEXEC, 06755);
         if (fd < 0) return errno;
         close(static_cast<int>(fd));
         return 0;
       }},
      {"chmod_sticky_dir",
       [] {
         char path[] = "/tmp/ccsandbox-seccomp-XXXXXX";
         if (mkdtemp(path) == nullptr) return errno;
         const int rc = ErrnoOf(chmod(path, 01777));
         struct stat st;
         const bool sticky = stat(path, &st) == 0 && (st.st_mode & 07777) == 01777;
         rmdir(path);
         return rc != 0 ? rc : sticky ? 0 : -2;
       }},
      // TIOCGWINSZ is TIOCSTI + 1: the masked compare spares neighbours.
      {"ioctl_tiocgwinsz",
       [] {
         winsize ws;
         return ErrnoOf(ioctl(ControllingPty(), TIOCGWINSZ, &ws));
       }},
  };
}

void PrintTo(const AllowedCall& call, std::ostream* os) { *os << call.name; }

class AllowedCallTest : public ::testing::TestWithParam<AllowedCall> {};

TEST_P(AllowedCallTest, WorksUnderTheFilter) {
  ASSERT_FALSE(Program().empty());
  const ChildResult result = RunInChild(&Program(), GetParam().run);
  ASSERT_TRUE(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0)
      << "wait status " << result.status;
  EXPECT_EQ(result.value, 0);
}

INSTANTIATE_TEST_SUITE_P(Baseline, AllowedCallTest, ::testing::ValuesIn(AllowedCalls()),
                         [](const ::testing::TestParamInfo<AllowedCall>& info) {
                           return info.param.name;
                         });

// A call that sets a mode on "f" (an existing file, mode 0644) or creates
// "new" with one, in a scratch directory.
struct ModeCall {
  std::string name;
  std::function<long(const std::string& dir, mode_t mode)> call;
  bool creates;  // names "new"; else changes "f"
  // mkdir: no rule, the kernel itself keeps only 01777 of the mode.
  bool kernel_drops_setid = false;
};

// An O_TMPFILE inode opened by `open_tmpfile`, then named "new" the usual way
// (linkat of /proc/self/fd/N): a set-id file that exists only once linked.
long TmpfileThenLink(const std::string& dir, const std::function<long()>& open_tmpfile) {
  const long fd = open_tmpfile();
  if (fd < 0) return fd;
  const UniqueFd owned(static_cast<int>(fd));
  const std::string self = absl::StrCat("/proc/self/fd/", fd);
  return linkat(AT_FDCWD, self.c_str(), AT_FDCWD, (dir + "/new").c_str(), AT_SYMLINK_FOLLOW);
}

long Closed(long fd) {
  if (fd >= 0) close(static_cast<int>(fd));
  return fd < 0 ? fd : 0;
}

// Raw syscalls: glibc's open() is openat, its chmod() may be fchmodat; each
// rule is reached by its own number.
std::vector<ModeCall> ModeCalls() {
  auto f = [](const std::string& dir) { return dir + "/f"; };
  auto fresh = [](const std::string& dir) { return dir + "/new"; };
  return {
      {"chmod", [=](const std::string& d, mode_t m) { return syscall(SYS_chmod, f(d).c_str(), m); },
       false},
      // The kernel keeps 16 bits of the mode, so the filter must ignore the
      // rest.
      {"chmod_high_bits",
       [=](const std::string& d, mode_t m) {
         return syscall(SYS_chmod, f(d).c_str(), (1UL << 32) | m);
       },
       false},
      {"fchmod",
       [=](const std::string& d, mode_t m) {
         const UniqueFd fd(open(f(d).c_str(), O_RDONLY | O_CLOEXEC));
         return syscall(SYS_fchmod, fd.get(), m);
       },
       false},
      {"fchmodat",
       [=](const std::string& d, mode_t m) {
         return syscall(SYS_fchmodat, AT_FDCWD, f(d).c_str(), m);
       },
       false},
      {"fchmodat2",
       [=](const std::string& d, mode_t m) {
         return syscall(kFchmodat2, AT_FDCWD, f(d).c_str(), m, 0);
       },
       false},
      {"open_creat",
       [=](const std::string& d, mode_t m) {
         return Closed(syscall(SYS_open, fresh(d).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, m));
       },
       true},
      {"openat_creat",
       [=](const std::string& d, mode_t m) {
         const UniqueFd dir(open(d.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC));
         return Closed(
             syscall(SYS_openat, dir.get(), "new", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, m));
       },
       true},
      {"open_tmpfile",
       [](const std::string& d, mode_t m) {
         return TmpfileThenLink(
             d, [&] { return syscall(SYS_open, d.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, m); });
       },
       true},
      {"openat_tmpfile",
       [](const std::string& d, mode_t m) {
         return TmpfileThenLink(d, [&] {
           return syscall(SYS_openat, AT_FDCWD, d.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, m);
         });
       },
       true},
      {"creat",
       [=](const std::string& d, mode_t m) {
         return Closed(syscall(SYS_creat, fresh(d).c_str(), m));
       },
       true},
      {"mknod_reg",
       [=](const std::string& d, mode_t m) {
         return syscall(SYS_mknod, fresh(d).c_str(), S_IFREG | m, 0);
       },
       true},
      {"mknodat_reg",
       [=](const std::string& d, mode_t m) {
         return syscall(SYS_mknodat, AT_FDCWD, fresh(d).c_str(), S_IFREG | m, 0);
       },
       true},
      {"mknod_fifo",
       [=](const std::string& d, mode_t m) {
         return syscall(SYS_mknod, fresh(d).c_str(), S_IFIFO | m, 0);
       },
       true},
      {"mkdir",
       [=](const std::string& d, mode_t m) { return syscall(SYS_mkdir, fresh(d).c_str(), m); },
       true, true},
      {"mkdirat",
       [=](const std::string& d, mode_t m) {
         return syscall(SYS_mkdirat, AT_FDCWD, fresh(d).c_str(), m);
       },
       true, true},
  };
}

struct ModeCase {
  ModeCall call;
  mode_t mode;
  bool Denied() const { return (mode & (S_ISUID | S_ISGID)) != 0 && !call.kernel_drops_setid; }
};

std::vector<ModeCase> ModeCases() {
  std::vector<ModeCase> cases;
  for (const ModeCall& call : ModeCalls()) {
    for (mode_t mode : {04755, 02755, 06755, 0755}) cases.push_back({call, mode});
  }
  return cases;
}

void PrintTo(const ModeCase& c, std::ostream* os) {
  *os << c.call.name << " " << std::oct << c.mode;
}

struct ModeOutcome {
  int error = -1;              // the call's errno, 0 if it worked
  std::optional<mode_t> mode;  // of the inspected name & 07777; nullopt: absent
};

// Runs the case in a child, under `program` unless it is null, with umask 022,
// in a scratch directory (not set-gid, so nothing is inherited); reports what
// the call returned and what is on disk afterwards.
ModeOutcome RunModeCase(const ModeCase& c, const std::vector<sock_filter>* program) {
  ModeOutcome outcome;
  std::string dir = ::testing::TempDir() + "/ccsandbox-mode-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return outcome;
  absl::Cleanup remove = [&] { std::filesystem::remove_all(dir); };
  const std::string f = dir + "/f";
  const UniqueFd made(open(f.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
  if (chmod(dir.c_str(), 0700) != 0 || !made.valid() || fchmod(made.get(), 0644) != 0) {
    return outcome;
  }
  const ChildResult result = RunInChild(program, [&] {
    umask(022);
    return ErrnoOf(c.call.call(dir, c.mode));
  });
  if (!WIFEXITED(result.status) || WEXITSTATUS(result.status) != 0) {
    return outcome;
  }
  outcome.error = result.value;
  struct stat st;
  if (lstat((c.call.creates ? dir + "/new" : f).c_str(), &st) == 0) {
    outcome.mode = st.st_mode & 07777;
  }
  return outcome;
}

class ModeCaseTest : public ::testing::TestWithParam<ModeCase> {};

TEST_P(ModeCaseTest, NoSetIdBitReachesTheDiskUnderTheFilter) {
  const ModeCase& c = GetParam();
  ASSERT_FALSE(Program().empty());
  const ModeOutcome got = RunModeCase(c, &Program());
  ASSERT_NE(got.error, -1) << "the case could not run";
  if (c.Denied()) {
    EXPECT_EQ(got.error, EPERM) << strerrorname_np(got.error);
    // Unchanged: "f" as it was, "new" never created.
    EXPECT_EQ(got.mode, c.call.creates ? std::nullopt : std::optional<mode_t>(0644));
  } else {
    EXPECT_EQ(got.error, 0) << strerrorname_np(got.error);
    EXPECT_EQ(got.mode, std::optional<mode_t>(c.mode & 0777));
  }
}

// Without the filter the same calls do set the bits (so the refusals above
// are the filter's), except mkdir, whose mode the kernel itself strips.
TEST_P(ModeCaseTest, WithoutTheFilter) {
  const ModeCase& c = GetParam();
  const ModeOutcome got = RunModeCase(c, nullptr);
  ASSERT_NE(got.error, -1) << "the case could not run";
  EXPECT_EQ(got.error, 0) << strerrorname_np(got.error);
  EXPECT_EQ(got.mode,
            std::optional<mode_t>(c.call.kernel_drops_setid ? c.mode & 0777 : c.mode & 07777));
}

INSTANTIATE_TEST_SUITE_P(Baseline, ModeCaseTest, ::testing::ValuesIn(ModeCases()),
                         [](const ::testing::TestParamInfo<ModeCase>& info) {
                           return absl::StrFormat("%s_%04o", info.param.call.name, info.param.mode);
                         });

long Int80(long nr, long a = 0, long b = 0, long c = 0) {
  long rc;
  asm volatile("int $0x80"
               : "=a"(rc)
               : "a"(nr), "b"(a), "c"(b), "d"(c)
               : "memory", "r8", "r9", "r10", "r11");
  return rc;
}

constexpr long kI386Getpid = 20;
constexpr long kI386Ptrace = 26;
constexpr long kX32Getpid = 39;
constexpr long kX32Ptrace = 521;

bool KilledBySigsys(const ChildResult& r) {
  return WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSYS;
}

TEST(SeccompBaselineArchTest, I386SyscallKillsTheProcess) {
  const ChildResult control = RunInChild(nullptr, [] { return Int80(kI386Getpid) > 0 ? 0 : 1; });
  if (!WIFEXITED(control.status)) {
    CCSANDBOX_SKIP_OR_FAIL_IN_CI("this kernel has no int 0x80 (no IA32 emulation)");
  }
  ASSERT_EQ(control.value, 0);

  EXPECT_TRUE(KilledBySigsys(RunInChild(&Program(), [] { return Int80(kI386Getpid) > 0; })));
  EXPECT_TRUE(KilledBySigsys(
      RunInChild(&Program(), [] { return static_cast<int>(Int80(kI386Ptrace, PTRACE_TRACEME)); })));
}

// The kernel here may lack CONFIG_X86_X32_ABI (then x32 numbers give ENOSYS),
// but seccomp sees the number first: the filter must kill before the kernel
// decides.
TEST(SeccompBaselineArchTest, X32SyscallKillsTheProcess) {
  const ChildResult control =
      RunInChild(nullptr, [] { return ErrnoOf(syscall(kX32SyscallBit | kX32Getpid)); });
  ASSERT_TRUE(WIFEXITED(control.status));

  EXPECT_TRUE(KilledBySigsys(
      RunInChild(&Program(), [] { return ErrnoOf(syscall(kX32SyscallBit | kX32Getpid)); })));
  EXPECT_TRUE(KilledBySigsys(RunInChild(&Program(), [] {
    return ErrnoOf(syscall(kX32SyscallBit | kX32Ptrace, PTRACE_TRACEME, 0, 0, 0));
  })));
}

// Runs `program` on `data` as the kernel would, for the opcodes libseccomp
// emits; nullopt on any other. Covers hosts whose kernel cannot make the call
// at all (no int 0x80 here).
std::optional<uint32_t> Evaluate(const std::vector<sock_filter>& program,
                                 const seccomp_data& data) {
  uint32_t a = 0;
  for (size_t pc = 0; pc < program.size(); ++pc) {
    const sock_filter& insn = program[pc];
    switch (insn.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (insn.k % 4 != 0 || insn.k + 4 > sizeof(data)) return std::nullopt;
        std::memcpy(&a, reinterpret_cast<const char*>(&data) + insn.k, 4);
        break;
      case BPF_ALU | BPF_AND | BPF_K:
        a &= insn.k;
        break;
      case BPF_JMP | BPF_JA:
        pc += insn.k;
        break;
      case BPF_JMP | BPF_JEQ | BPF_K:
        pc += a == insn.k ? insn.jt : insn.jf;
        break;
      case BPF_JMP | BPF_JGT | BPF_K:
        pc += a > insn.k ? insn.jt : insn.jf;
        break;
      case BPF_JMP | BPF_JGE | BPF_K:
        pc += a >= insn.k ? insn.jt : insn.jf;
        break;
      case BPF_JMP | BPF_JSET | BPF_K:
        pc += (a & insn.k) != 0 ? insn.jt : insn.jf;
        break;
      case BPF_RET | BPF_K:
        return insn.k;
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;
}

constexpr uint32_t kDeny = SECCOMP_RET_ERRNO | EPERM;
constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr uint32_t kKill = SECCOMP_RET_KILL_PROCESS;

struct Verdict {
  const char* what;
  int nr;
  std::vector<uint64_t> args;
  uint32_t expected;  // the program's return value
  uint32_t arch = AUDIT_ARCH_X86_64;
};

void ExpectVerdicts(const std::vector<Verdict>& verdicts) {
  ASSERT_FALSE(Program().empty());
  for (const Verdict& v : verdicts) {
    seccomp_data data{};
    data.arch = v.arch;
    data.nr = v.nr;
    for (size_t i = 0; i < v.args.size(); ++i) data.args[i] = v.args[i];
    EXPECT_EQ(Evaluate(Program(), data), std::optional<uint32_t>(v.expected)) << v.what;
  }
}

TEST(SeccompBaselineArchTest, ProgramSendsForeignAbisToTheBadArchAction) {
  ExpectVerdicts({
      {"i386 ptrace", kI386Ptrace, {}, kKill, AUDIT_ARCH_I386},
      {"i386 getpid", kI386Getpid, {}, kKill, AUDIT_ARCH_I386},
      {"x32 ptrace", kX32SyscallBit | kX32Ptrace, {}, kKill},
      {"x32 getpid", kX32SyscallBit | kX32Getpid, {}, kKill},
      {"x86_64 ptrace", SYS_ptrace, {}, kDeny},
      {"x86_64 getpid", SYS_getpid, {}, kAllow},
      {"TIOCSTI, high bits", SYS_ioctl, {0, TIOCSTI | (7UL << 32)}, kDeny},
      {"TIOCGWINSZ", SYS_ioctl, {0, TIOCGWINSZ}, kAllow},
  });
}

// The set-id rules on the program itself: holds on a kernel without a call
// (fchmodat2 is Linux 6.6+), and pins the AND of open's two comparisons.
TEST(SeccompBaselineSetIdTest, ProgramDecidesOnTheModeArgument) {
  ExpectVerdicts({
      {"fchmodat2 04755", kFchmodat2, {0, 0, 04755, 0}, kDeny},
      {"fchmodat2 02755", kFchmodat2, {0, 0, 02755, 0}, kDeny},
      {"fchmodat2 01777", kFchmodat2, {0, 0, 01777, 0}, kAllow},
      {"chmod 04755, high bits", SYS_chmod, {0, (1UL << 40) | 04755}, kDeny},
      {"chmod 0777, high bits", SYS_chmod, {0, (1UL << 40) | 0777}, kAllow},
      {"open O_CREAT 02000", SYS_open, {0, O_CREAT | O_WRONLY, 02000}, kDeny},
      {"open O_TMPFILE 04000", SYS_open, {0, O_TMPFILE | O_RDWR, 04000}, kDeny},
      {"open O_RDONLY 06755", SYS_open, {0, O_RDONLY, 06755}, kAllow},
      {"open O_CREAT 0777", SYS_open, {0, O_CREAT | O_WRONLY, 0777}, kAllow},
      {"openat O_CREAT 04000", SYS_openat, {0, 0, O_CREAT, 04000}, kDeny},
      {"openat O_RDONLY 04000", SYS_openat, {0, 0, O_RDONLY, 04000}, kAllow},
      {"mknodat FIFO 02644", SYS_mknodat, {0, 0, S_IFIFO | 02644, 0}, kDeny},
      {"mkdir 06777", SYS_mkdir, {0, 06777}, kAllow},
      {"openat2", SYS_openat2, {}, SECCOMP_RET_ERRNO | ENOSYS},
  });
}

TEST(SeccompBaselineExportTest, FdIsASealedCloseOnExecProgramAtOffsetZero) {
  absl::StatusOr<UniqueFd> fd = ExportSeccompBaseline();
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(fcntl(fd->get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  EXPECT_EQ(fcntl(fd->get(), F_GET_SEALS),
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  EXPECT_EQ(lseek(fd->get(), 0, SEEK_CUR), 0);
  EXPECT_EQ(write(fd->get(), "x", 1), -1);
  EXPECT_EQ(errno, EPERM);
  struct stat st;
  ASSERT_EQ(fstat(fd->get(), &st), 0);
  EXPECT_GT(st.st_size, 0);
  EXPECT_EQ(st.st_size % sizeof(sock_filter), 0u);
  EXPECT_EQ(ReadProgram(fd->get()).size() * sizeof(sock_filter), static_cast<size_t>(st.st_size));
}

struct Ran {
  int status = -1;
  std::string output;  // stdout and stderr
};

// bwrap with the baseline fd inherited under its own number, as in production.
Ran RunBwrap(int seccomp_fd, const std::vector<std::string>& command) {
  std::vector<std::string> args = {"/usr/bin/bwrap",
                                   "--ro-bind",
                                   "/",
                                   "/",
                                   "--dev",
                                   "/dev",
                                   "--proc",
                                   "/proc",
                                   "--tmpfs",
                                   "/tmp",
                                   "--unshare-all",
                                   "--die-with-parent",
                                   "--seccomp",
                                   std::to_string(seccomp_fd),
                                   "--"};
  args.insert(args.end(), command.begin(), command.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string env_path = "PATH=/usr/bin:/bin", env_home = "HOME=/tmp", env_lang = "LANG=C.UTF-8";
  char* envp[] = {env_path.data(), env_home.data(), env_lang.data(), nullptr};

  Ran ran;
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return ran;
  UniqueFd out_r(out[0]), out_w(out[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, out_w.get(), 2);
  // Same number on both sides: glibc (>= 2.29, per POSIX) clears FD_CLOEXEC.
  posix_spawn_file_actions_adddup2(&actions, seccomp_fd, seccomp_fd);
  pid_t pid;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  out_w.Reset();
  if (rc != 0) {
    ran.output = absl::StrCat("posix_spawn bwrap: ", strerror(rc));
    return ran;
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(out_r.get(), buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) ran.output.append(buf, n);
  }
  waitpid(pid, &ran.status, 0);
  return ran;
}

Ran RunBwrapWithFreshBaseline(const std::vector<std::string>& command) {
  absl::StatusOr<UniqueFd> fd = ExportSeccompBaseline();
  if (!fd.ok()) return Ran{-1, fd.status().ToString()};
  return RunBwrap(fd->get(), command);
}

TEST(SeccompBaselineBwrapTest, DeniesInsideTheSandbox) {
  const std::string script = absl::StrCat(R"(
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(*args):
    ctypes.set_errno(0)
    rc = libc.syscall(*[ctypes.c_long(a) for a in args])
    return 0 if rc >= 0 else ctypes.get_errno()
params = ctypes.create_string_buffer(120)
print("ptrace", call()",
                                          SYS_ptrace, ", ", PTRACE_ATTACH, R"(, os.getppid(), 0, 0))
print("io_uring_setup", call()",
                                          SYS_io_uring_setup, R"(, 4, ctypes.addressof(params)))
print("unshare_newuser", call()",
                                          SYS_unshare, ", ", CLONE_NEWUSER, R"())
print("clone3", call()",
                                          SYS_clone3, R"(, 0, 0))
print("getpid", call()",
                                          SYS_getpid, R"())
)");
  const Ran ran = RunBwrapWithFreshBaseline({"/usr/bin/python3", "-c", script});
  ASSERT_TRUE(WIFEXITED(ran.status) && WEXITSTATUS(ran.status) == 0)
      << "status " << ran.status << ": " << ran.output;
  EXPECT_EQ(ran.output,
            absl::StrCat("ptrace ", EPERM, "\nio_uring_setup ", EPERM, "\nunshare_newuser ", EPERM,
                         "\nclone3 ", ENOSYS, "\ngetpid 0\n"));
}

TEST(SeccompBaselineBwrapTest, OrdinaryProgramsRun) {
  const std::string script = R"(set -e
echo ok
ls / > /dev/null
bash -c 'echo bash $((20 + 22))'
seq 3 | sort -r | head -n 1
cd /tmp && mkdir d && cp /etc/passwd d/p && wc -l < d/p > /dev/null && rm -r d
git --version > /dev/null
git init -q repo && cd repo && echo hi > f && git add f
git -c user.name=t -c user.email=t@t commit -q -m m && git log --oneline | wc -l
python3 -c 1
python3 -c 'import subprocess, threading; t = threading.Thread(target=print, args=("py thread",)); t.start(); t.join(); subprocess.run(["true"], check=True)'
node -e 1
node -e 'require("fs").promises.readFile("/etc/passwd").then(() => { require("child_process").execFileSync("true"); console.log("node ok"); })'
)";
  const Ran ran = RunBwrapWithFreshBaseline({"/bin/sh", "-c", script});
  ASSERT_TRUE(WIFEXITED(ran.status) && WEXITSTATUS(ran.status) == 0)
      << "status " << ran.status << ": " << ran.output;
  EXPECT_EQ(ran.output, "ok\nbash 42\n3\n1\npy thread\nnode ok\n");
}

// bwrap reads the fd to EOF and dups share the offset: a reused fd must make
// bwrap fail, not run the command unfiltered.
TEST(SeccompBaselineBwrapTest, ReusedFdFailsClosed) {
  absl::StatusOr<UniqueFd> fd = ExportSeccompBaseline();
  ASSERT_TRUE(fd.ok()) << fd.status();
  const Ran first = RunBwrap(fd->get(), {"/bin/true"});
  ASSERT_TRUE(WIFEXITED(first.status) && WEXITSTATUS(first.status) == 0) << first.output;
  const Ran second = RunBwrap(fd->get(), {"/bin/echo", "ran"});
  EXPECT_FALSE(WIFEXITED(second.status) && WEXITSTATUS(second.status) == 0) << second.output;
  EXPECT_EQ(second.output.find("ran\n"), std::string::npos) << second.output;
}

}  // namespace
}  // namespace ccsandbox::launcher

namespace ccsandbox::launcher {
namespace {

TEST(SealedProgramFd, HoldsTheCompiledProgramSealed) {
  absl::StatusOr<std::string> program = SeccompBaselineProgram();
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<UniqueFd> fd = SealedProgramFd(*program);
  ASSERT_TRUE(fd.ok()) << fd.status();
  std::string read_back(program->size() + 1, '\0');
  EXPECT_EQ(pread(fd->get(), read_back.data(), read_back.size(), 0),
            static_cast<ssize_t>(program->size()));
  read_back.resize(program->size());
  EXPECT_EQ(read_back, *program);
  EXPECT_EQ(pwrite(fd->get(), "x", 1, 0), -1);  // sealed against writes
  EXPECT_FALSE(SealedProgramFd("").ok());
  EXPECT_FALSE(SealedProgramFd("1234567").ok());
}

}  // namespace
}  // namespace ccsandbox::launcher
