#include "broker/microvm/hypervisor_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "base/unique_fd.h"

namespace ccsandbox::broker::microvm {

absl::Status HypervisorProcess::Spawn(const std::vector<std::string>& argv, int output) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  UniqueFd null(open("/dev/null", O_RDONLY | O_CLOEXEC));
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  if (pid_ == 0) {
    // Only async-signal-safe calls from here: the broker may have threads.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(null.get(), 0);
    dup2(output, 1);
    dup2(output, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  setpgid(pid_, pid_);  // either side may win the race; both ask for the same group
  return absl::OkStatus();
}

std::optional<int> HypervisorProcess::WaitUntil(absl::Time deadline) {
  if (status_.has_value() || pid_ <= 0) return status_;
  while (true) {
    siginfo_t info{};
    // WNOWAIT: the exited hypervisor stays a zombie, so its group id cannot be reused before
    // what is left of the group is killed.
    const int done = waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT);
    if (done == 0 && info.si_pid == pid_) {
      kill(-pid_, SIGKILL);
      int status = 0;
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      status_ = status;
      return status_;
    }
    if (done < 0 && errno != EINTR) return std::nullopt;
    if (absl::Now() >= deadline) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(10));
  }
}

void HypervisorProcess::Signal(int signal) {
  if (pid_ > 0 && !status_.has_value()) kill(pid_, signal);
}

void HypervisorProcess::KillAndReap() {
  if (pid_ <= 0 || killed_) return;
  killed_ = true;
  if (status_.has_value()) return;  // its group was killed when it was reaped
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = status;
}

std::string WaitStatusText(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exited with status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return absl::StrCat("killed by signal ", WTERMSIG(status));
  return "ended";
}

namespace {

int64_t HostTscKhz() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (!absl::StartsWith(line, "cpu MHz")) continue;
    std::vector<absl::string_view> kv = absl::StrSplit(line, absl::MaxSplits(':', 1));
    double mhz = 0;
    if (kv.size() == 2 && absl::SimpleAtod(absl::StripAsciiWhitespace(kv[1]), &mhz)) {
      return static_cast<int64_t>(mhz * 1000);
    }
  }
  return 0;
}

}  // namespace

std::string GuestKernelLine(const std::string& extra) {
  std::string line = "console=ttyS0 quiet panic=-1 rtc=on";
  if (const int64_t khz = HostTscKhz(); khz > 0) {
    absl::StrAppend(&line, " tsc_early_khz=", khz, " tsc=reliable");
  }
  if (!extra.empty()) absl::StrAppend(&line, " ", extra);
  return line;
}

}  // namespace ccsandbox::broker::microvm
