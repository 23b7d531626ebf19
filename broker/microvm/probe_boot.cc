#include "broker/microvm/probe_boot.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "base/unique_fd.h"
#include "broker/microvm/hypervisor_process.h"

namespace ccsandbox::broker::microvm {
namespace {

constexpr size_t kMaxOutput = 1 << 20;

std::string ExitText(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status) == 127
               ? std::string("could not be run (exit status 127)")
               : absl::StrCat("exited with status ", WEXITSTATUS(status), " before the marker");
  }
  if (WIFSIGNALED(status)) {
    return absl::StrCat("killed by signal ", WTERMSIG(status), " before the marker");
  }
  return "ended before the marker";
}

std::vector<std::string> QemuArgv(const MicrovmConfig& config, const std::string& accel) {
  return {config.hypervisor,
          "-M",
          "microvm",
          "-accel",
          accel,
          "-m",
          "128",
          "-smp",
          "1",
          "-nodefaults",
          "-no-user-config",
          "-display",
          "none",
          "-serial",
          "stdio",
          "-no-reboot",
          "-kernel",
          config.kernel,
          "-initrd",
          config.initrd,
          "-append",
          GuestKernelLine("")};
}

std::string FileProblem(const std::string& path, int access_mode) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? std::string("not found") : absl::StrCat("stat: ", strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (access(path.c_str(), access_mode) != 0) {
    return access_mode == X_OK ? "not executable" : "not readable";
  }
  if (access_mode == R_OK && st.st_size == 0) return "empty";
  return "";
}

}  // namespace

std::string KvmProblem() {
  UniqueFd kvm(open("/dev/kvm", O_RDWR | O_CLOEXEC));
  if (!kvm.valid()) return absl::StrCat("/dev/kvm: ", strerror(errno));
  const int version = ioctl(kvm.get(), KVM_GET_API_VERSION, 0);
  if (version != KVM_API_VERSION) {
    return absl::StrCat("KVM_GET_API_VERSION: ",
                        version < 0 ? strerror(errno) : absl::StrCat("got ", version));
  }
  UniqueFd vm(ioctl(kvm.get(), KVM_CREATE_VM, 0));
  if (!vm.valid()) return absl::StrCat("KVM_CREATE_VM: ", strerror(errno));
  return "";
}

BootAttempt ProbeBoot(const MicrovmConfig& config, const std::string& accel) {
  BootAttempt boot{.accel = accel};
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + config.boot_timeout;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    boot.failure = absl::StrCat("cannot start: pipe: ", strerror(errno));
    return boot;
  }
  std::optional<UniqueFd> out(fds[0]);
  UniqueFd write_end(fds[1]);
  HypervisorProcess child;
  if (absl::Status started = child.Spawn(QemuArgv(config, accel), write_end.get()); !started.ok()) {
    boot.failure = absl::StrCat("cannot start: ", started.message());
    return boot;
  }
  write_end.Reset();
  std::string output;
  char buffer[4096];
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      boot.failure = absl::StrCat("no marker within ", absl::FormatDuration(config.boot_timeout));
      break;
    }
    pollfd p{.fd = out->get(), .events = POLLIN};
    const int ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno != EINTR) {
      boot.failure = absl::StrCat("poll: ", strerror(errno));
      break;
    }
    if (ready <= 0) continue;
    const ssize_t n = read(out->get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::optional<int> status = child.WaitUntil(deadline);
      boot.failure = status.has_value() ? ExitText(*status)
                                        : absl::StrCat("closed its output and did not exit within ",
                                                       absl::FormatDuration(config.boot_timeout));
      break;
    }
    const size_t from =
        output.size() > kProbeMarker.size() ? output.size() - kProbeMarker.size() : 0;
    output.append(buffer, n);
    if (output.find(kProbeMarker.data(), from, kProbeMarker.size()) != std::string::npos) {
      boot.reached_marker = true;
      break;
    }
    if (output.size() > kMaxOutput) output.erase(0, output.size() - kMaxOutput / 2);
  }
  boot.took = absl::Now() - start;
  if (!boot.reached_marker) boot.output_line = QuotableLine(output);
  return boot;  // `child` is killed and reaped here
}

MicrovmFacts GatherMicrovmFacts(const MicrovmConfig& config) {
  MicrovmFacts facts{.hypervisor = config.hypervisor,
                     .kernel = config.kernel,
                     .initrd = config.initrd,
                     .taken = absl::Now()};
  if (config.hypervisor.empty() || config.kernel.empty() || config.initrd.empty()) return facts;
  facts.hypervisor_problem = FileProblem(config.hypervisor, X_OK);
  facts.kernel_problem = FileProblem(config.kernel, R_OK);
  facts.initrd_problem = FileProblem(config.initrd, R_OK);
  if (!facts.hypervisor_problem.empty() || !facts.kernel_problem.empty() ||
      !facts.initrd_problem.empty()) {
    return facts;
  }
  if (config.accel != "tcg") facts.kvm_problem = KvmProblem();
  if (config.accel != "tcg" && facts.kvm_problem.empty()) {
    facts.boots.push_back(ProbeBoot(config, "kvm"));
    if (facts.boots.back().reached_marker) return facts;
  }
  // Where KVM is present but cannot run the guest (a nested host), tcg still gives a VM.
  if (config.accel != "kvm") facts.boots.push_back(ProbeBoot(config, "tcg"));
  return facts;
}

}  // namespace ccsandbox::broker::microvm
