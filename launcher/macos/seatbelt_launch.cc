#include "launcher/macos/seatbelt_launch.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"

namespace ccsandbox::launcher::macos {
namespace {

bool PlainName(const std::string& name) {
  if (name.empty() || name.size() > 128 || name[0] == '.') return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

absl::Status WriteNew(const std::string& path, const std::string& text) {
  // O_EXCL | O_NOFOLLOW: a file or link planted at the name is never written through.
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    const int err = errno;
    const std::string why = absl::StrCat("the profile '", path, "': ", std::strerror(err));
    return err == EEXIST ? absl::AlreadyExistsError(why) : absl::FailedPreconditionError(why);
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("writing the profile '", path, "': ", std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SeatbeltLaunched> LaunchSeatbelt(const std::string& run_id,
                                                const std::string& profile, SeatbeltRun run,
                                                const SeatbeltLaunchOptions& options) {
  if (!PlainName(run_id)) {
    return absl::InvalidArgumentError("runId: letters, digits, '-', '_' and '.' only");
  }
  run.profile_path = absl::StrCat(options.profile_dir, "/", run_id, ".sb");
  absl::StatusOr<SeatbeltExec> exec = RenderSeatbeltExec(run, options.sandbox_exec);
  if (!exec.ok()) return exec.status();
  if (absl::Status written = WriteNew(run.profile_path, profile); !written.ok()) return written;
  absl::StatusOr<std::unique_ptr<SpawnedProcess>> process =
      SpawnedProcess::Spawn({.executable = exec->executable,
                             .argv = std::move(exec->argv),
                             .envp = std::move(exec->envp),
                             .cwd = std::move(exec->cwd)});
  if (!process.ok()) return process.status();
  return SeatbeltLaunched{.process = *std::move(process), .profile_path = run.profile_path};
}

}  // namespace ccsandbox::launcher::macos
