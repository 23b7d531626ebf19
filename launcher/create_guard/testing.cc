#include "launcher/create_guard/testing.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "launcher/create_guard/notify_channel.h"
#include "launcher/seccomp_baseline.h"
#include "policy/plan/deny_sets.h"

namespace ccsandbox::launcher {
namespace {

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, n);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> MakeBinDir(const std::string& from,
                                       const std::vector<std::string>& paths) {
  char dir_template[] = "/tmp/cg-bin-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp /tmp/cg-bin-XXXXXX: ", strerror(errno)));
  }
  const std::string dir = dir_template;
  absl::Cleanup remove_dir = [&dir] {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  };
  chmod(dir.c_str(), 0755);
  for (const std::string& path : paths) {
    const std::string name = std::filesystem::path(path).filename();
    const std::string source = from + "/" + path;
    std::error_code error;
    if (!std::filesystem::is_regular_file(source, error)) {
      return absl::NotFoundError(absl::StrCat(source, " is missing (is it in the test's data?)"));
    }
    if (!std::filesystem::copy_file(source, dir + "/" + name, error)) {
      return absl::InternalError(absl::StrCat("cannot copy ", source, ": ", error.message()));
    }
    chmod((dir + "/" + name).c_str(), 0755);
  }
  std::move(remove_dir).Cancel();
  return dir;
}

bool RunningUnderCi() {
  const char* ci = getenv("CI");
  if (ci == nullptr) return false;
  const std::string value = ci;
  return !value.empty() && value != "false" && value != "0";
}

// bwrap and the shim around `command`: /usr read-only, a private /tmp, the work dir bound at
// /work, the bin dir at kSandboxBinDir; the shim's create-guard arguments unless unguarded.
std::vector<std::string> GuardedSandbox::BwrapArgv(int baseline_fd, int channel_fd,
                                                   const GuardedRunOptions& options,
                                                   const std::vector<std::string>& command) const {
  // One bwrap operation per line.
  // clang-format off
  std::vector<std::string> argv = {
      "bwrap", "--unshare-all", "--die-with-parent", "--cap-drop", "ALL",
      "--seccomp", absl::StrCat(baseline_fd),
      "--ro-bind", "/usr", "/usr",
      "--symlink", "usr/lib", "/lib",
      "--symlink", "usr/lib64", "/lib64",
      "--symlink", "usr/bin", "/bin",
      "--proc", "/proc",
      "--dev", "/dev",
      "--tmpfs", "/tmp",
      "--bind", work_, "/work",
      "--ro-bind", bin_dir_, kSandboxBinDir,
      "--chdir", "/work",
      "--", absl::StrCat(kSandboxBinDir, "/sandbox_shim"),
  };
  // clang-format on
  if (options.guard) {
    for (const std::string& arg : options.shim_args) {
      argv.push_back(absl::StrReplaceAll(arg, {{"{fd}", absl::StrCat(channel_fd)}}));
    }
  }
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

GuardedRun GuardedSandbox::Run(const std::vector<std::string>& command,
                               GuardedRunOptions options) const {
  GuardedRun result;
  absl::StatusOr<std::pair<UniqueFd, UniqueFd>> channel = NotifyChannelPair();
  absl::StatusOr<UniqueFd> baseline = SealedProgramFd(baseline_);
  if (!channel.ok() || !baseline.ok()) {
    result.failures.push_back(!channel.ok() ? channel.status() : baseline.status());
    return result;
  }
  UniqueFd mine = std::move(channel->first), theirs = std::move(channel->second);

  const std::vector<std::string> argv = BwrapArgv(baseline->get(), theirs.get(), options, command);
  ProcessSpec spec;
  spec.executable = "/usr/bin/bwrap";
  spec.argv = argv;
  spec.envp = {"PATH=/usr/bin:/bin", "LC_ALL=C"};
  spec.cwd = "/";
  spec.identity = Identity{kSandboxUid, kSandboxUid, {}};
  spec.inherit_fds = {baseline->get()};
  if (options.guard) spec.inherit_fds.push_back(theirs.get());
  absl::StatusOr<std::unique_ptr<SandboxProcess>> process = SandboxProcess::Spawn(spec);
  if (!process.ok()) {
    result.failures.push_back(process.status());
    return result;
  }
  theirs.Reset();
  baseline->Reset();

  absl::Mutex mu;
  std::unique_ptr<CreateSupervisor> supervisor;
  if (!options.guard) {
    mine.Reset();
  } else if (options.without_supervisor) {
    options.without_supervisor(**process, std::move(mine));
  } else {
    CreateSupervisor::Options supervisor_options;
    supervisor_options.deny_patterns = policy::StandardFilenameDenyPatterns();
    supervisor_options.free_dirs = {"/tmp"};
    supervisor_options.mounts = {{"/work", work_, true}};
    absl::StatusOr<std::unique_ptr<CreateSupervisor>> started = CreateSupervisor::Start(
        supervisor_options, std::move(mine),
        [&](const CreateViolation& v) {
          absl::MutexLock lock(&mu);
          result.violations.push_back(v);
        },
        [&](const absl::Status& s) {
          absl::MutexLock lock(&mu);
          result.failures.push_back(s);
        });
    if (!started.ok()) {
      result.failures.push_back(started.status());
      return result;
    }
    supervisor = std::move(*started);
    if (options.during) options.during(**process, supervisor.get());
  }
  (*process)->CloseStdin();
  const std::string out = ReadAll((*process)->stdout_fd());
  result.stderr_text = ReadAll((*process)->stderr_fd());
  result.wait_status = (*process)->Reap().value_or(-1);
  if (supervisor != nullptr) {
    result.stats = supervisor->stats();
    supervisor->Join();  // every callback has run
    result.never_started = supervisor->never_started();
    supervisor.reset();
  }
  absl::MutexLock lock(&mu);
  result.lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  return result;
}

}  // namespace ccsandbox::launcher
