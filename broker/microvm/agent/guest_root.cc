#include "broker/microvm/agent/guest_root.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ccsandbox::broker::microvm {
namespace {

constexpr char kNinePOptions[] = "trans=virtio,version=9p2000.L,msize=262144";
constexpr char kNinePCachedOptions[] = "trans=virtio,version=9p2000.L,msize=262144,cache=loose";
constexpr unsigned long kShareFlags = MS_NOSUID | MS_NODEV;

// What a run may not keep: each could undo the layout (mount, unmount, chroot, load a module,
// reach raw memory or devices, trace the agent, open by handle past the chroot, change
// capabilities or immutable flags, load BPF) or take the guest's kernel itself.
constexpr int kDroppedCapabilities[] = {
    CAP_SYS_ADMIN,       CAP_SYS_MODULE, CAP_SYS_RAWIO, CAP_SYS_CHROOT, CAP_MKNOD,
    CAP_SYS_PTRACE,      CAP_SYS_BOOT,   CAP_NET_ADMIN, CAP_SETPCAP,    CAP_DAC_READ_SEARCH,
    CAP_LINUX_IMMUTABLE, CAP_SETFCAP,    CAP_SYS_TIME,  CAP_SYS_PACCT,  CAP_MAC_ADMIN,
    CAP_MAC_OVERRIDE,    CAP_SYSLOG,     CAP_PERFMON,   CAP_BPF,        CAP_CHECKPOINT_RESTORE,
};

bool Fail(std::string* error, const std::string& what, const std::string& path) {
  *error = what + " " + path + ": " + strerror(errno);
  return false;
}

// mkdir -p of `path` (absolute, normalised); an existing entry of any kind is left alone.
bool MakeDirs(const std::string& path, std::string* error) {
  for (size_t at = 1; at <= path.size(); ++at) {
    if (at != path.size() && path[at] != '/') continue;
    const std::string prefix = path.substr(0, at);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return Fail(error, "mkdir", prefix);
  }
  return true;
}

bool Mount(const char* source, const std::string& target, const char* type, unsigned long flags,
           const char* data, std::string* error) {
  if (mount(source, target.c_str(), type, flags, data) != 0) {
    return Fail(error, std::string("mount ") + (type ? type : "bind"), target);
  }
  return true;
}

bool BindReadOnly(const std::string& source, const std::string& target, std::string* error) {
  return Mount(source.c_str(), target, nullptr, MS_BIND | MS_REC, nullptr, error) &&
         Mount(nullptr, target, nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | kShareFlags, nullptr,
               error);
}

// /proc (its /proc/sys read-only), a minimal /dev, a private writable /tmp; in the chroot.
bool Base(std::string* error) {
  if (!MakeDirs("/proc", error) || !MakeDirs("/dev", error) || !MakeDirs("/tmp", error)) {
    return false;
  }
  if (!Mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr, error) ||
      !BindReadOnly("/proc/sys", "/proc/sys", error) ||
      !Mount("tmpfs", "/tmp", "tmpfs", kShareFlags, "mode=1777", error) ||
      !Mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755", error)) {
    return false;
  }
  struct Node {
    const char* name;
    unsigned major, minor;
  };
  for (const Node& node : {Node{"null", 1, 3}, Node{"zero", 1, 5}, Node{"full", 1, 7},
                           Node{"random", 1, 8}, Node{"urandom", 1, 9}, Node{"tty", 5, 0}}) {
    const std::string path = std::string("/dev/") + node.name;
    if (mknod(path.c_str(), S_IFCHR | 0666, makedev(node.major, node.minor)) != 0 ||
        chmod(path.c_str(), 0666) != 0) {
      return Fail(error, "mknod", path);
    }
  }
  if (!MakeDirs("/dev/pts", error) || !MakeDirs("/dev/shm", error) ||
      !Mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
             "newinstance,ptmxmode=0666,mode=0620", error) ||
      !Mount("tmpfs", "/dev/shm", "tmpfs", kShareFlags, "mode=1777", error)) {
    return false;
  }
  for (const auto& [link, target] :
       {std::pair{"/dev/ptmx", "pts/ptmx"}, std::pair{"/dev/fd", "/proc/self/fd"},
        std::pair{"/dev/stdin", "/proc/self/fd/0"}, std::pair{"/dev/stdout", "/proc/self/fd/1"},
        std::pair{"/dev/stderr", "/proc/self/fd/2"}}) {
    if (symlink(target, link) != 0) return Fail(error, "symlink", link);
  }
  return true;
}

bool Step(const GuestStep& step, int empty_file, std::string* error) {
  const std::string& path = step.path;
  switch (step.step) {
    case SetupStep::kShare:
    case SetupStep::kShareReadOnly:
    case SetupStep::kShareCached: {
      const unsigned long ro = step.step == SetupStep::kShare ? 0 : MS_RDONLY;
      const char* options =
          step.step == SetupStep::kShareCached ? kNinePCachedOptions : kNinePOptions;
      return MakeDirs(path, error) &&
             Mount(step.arg.c_str(), path, "9p", kShareFlags | ro, options, error);
    }
    case SetupStep::kSymlink:
      if (!MakeDirs(path.substr(0, path.rfind('/') + 1), error)) return false;
      if (symlink(step.arg.c_str(), path.c_str()) != 0) return Fail(error, "symlink", path);
      return true;
    case SetupStep::kBase:
      return Base(error);
    case SetupStep::kMaskDir:
      // Read-only and tiny: a writable mask would let the workload plant files there.
      return Mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                   "mode=0555,size=4k,nr_inodes=1", error);
    case SetupStep::kMaskFile:
      return BindReadOnly("/proc/self/fd/" + std::to_string(empty_file), path, error);
    case SetupStep::kPin:
      return Mount(path.c_str(), path, nullptr, MS_BIND | MS_REC, nullptr, error);
    case SetupStep::kReadOnly:
      return BindReadOnly(path, path, error);
  }
  *error = "unknown setup step";
  return false;
}

// In a child chrooted into /sysroot: a symlink in a share resolves inside the guest's root,
// never into the initramfs the agent runs from.
bool ApplyInChroot(const GuestSetup& setup, int empty_file, std::string* error) {
  if (chroot(kSysroot) != 0 || chdir("/") != 0) return Fail(error, "chroot", kSysroot);
  for (const GuestStep& step : setup.steps) {
    if (!Step(step, empty_file, error)) return false;
  }
  if (!setup.workdir.empty() && !MakeDirs(setup.workdir, error)) return false;
  // The root itself (a tmpfs holding mount points and symlinks) is read-only for the runs.
  return Mount(nullptr, "/", nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr,
               error);
}

}  // namespace

bool BuildGuestRoot(const GuestSetup& setup, std::string* error) {
  if (mkdir(kSysroot, 0755) != 0 && errno != EEXIST) return Fail(error, "mkdir", kSysroot);
  if (!Mount("sysroot", kSysroot, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755", error)) {
    return false;
  }
  // The source of every file mask: an empty read-only file outside the guest's root.
  const int empty = open("/ccsandbox-empty", O_RDONLY | O_CREAT | O_CLOEXEC, 0444);
  if (empty < 0) return Fail(error, "create", "/ccsandbox-empty");
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return Fail(error, "pipe", "");
  const pid_t pid = fork();
  if (pid == 0) {
    close(report[0]);
    std::string why;
    const bool ok = ApplyInChroot(setup, empty, &why);
    if (!ok && write(report[1], why.data(), why.size()) < 0) _exit(2);
    _exit(ok ? 0 : 1);
  }
  close(report[1]);
  close(empty);
  if (pid < 0) {
    close(report[0]);
    return Fail(error, "fork", "");
  }
  std::string why;
  char buffer[512];
  ssize_t n;
  while ((n = read(report[0], buffer, sizeof(buffer))) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) why.append(buffer, n);
  }
  close(report[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  *error = why.empty() ? std::string("the setup process failed") : why;
  return false;
}

bool EnterGuestRoot(bool chroot_into, std::string* error) {
  if (chroot_into && (chroot(kSysroot) != 0 || chdir("/") != 0)) {
    return Fail(error, "chroot", kSysroot);
  }
  for (int cap : kDroppedCapabilities) {
    // A capability this kernel does not know is not there to drop.
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
      return Fail(error, "drop capability", std::to_string(cap));
    }
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
    return Fail(error, "clear ambient capabilities", "");
  }
  __user_cap_header_struct header{.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return Fail(error, "capget", "");
  // Root regains on exec what is in the bounding or inheritable set: both lose them.
  for (int cap : kDroppedCapabilities) {
    const uint32_t bit = 1u << (cap % 32);
    data[cap / 32].effective &= ~bit;
    data[cap / 32].permitted &= ~bit;
    data[cap / 32].inheritable &= ~bit;
  }
  if (syscall(SYS_capset, &header, data) != 0) return Fail(error, "capset", "");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Fail(error, "no_new_privs", "");
  return true;
}

}  // namespace ccsandbox::broker::microvm
