#include "tests/run_tool.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/unique_fd.h"

extern char** environ;

namespace ccsandbox::testing {
namespace {

std::string ReadAll(int fd) {
  std::string text;
  char buffer[65536];
  off_t offset = 0;
  for (;;) {
    const ssize_t n = pread(fd, buffer, sizeof(buffer), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return text;
    text.append(buffer, static_cast<size_t>(n));
    offset += n;
  }
}

}  // namespace

absl::StatusOr<ToolRun> RunToolResult(const std::vector<std::string>& argv,
                                      const std::string& cwd) {
  if (argv.empty()) return absl::InvalidArgumentError("RunTool: no command");
  UniqueFd out(memfd_create("tool-stdout", MFD_CLOEXEC));
  UniqueFd err(memfd_create("tool-stderr", MFD_CLOEXEC));
  if (!out.valid() || !err.valid()) return absl::ErrnoToStatus(errno, "memfd_create");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err.get(), 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned == ENOENT) {
    return absl::NotFoundError(absl::StrCat(argv[0], " is not installed (not on PATH)"));
  }
  if (spawned != 0) return absl::ErrnoToStatus(spawned, absl::StrCat("posix_spawnp ", argv[0]));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::ErrnoToStatus(errno, "waitpid");
  }
  ToolRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = ReadAll(out.get());
  run.err = ReadAll(err.get());
  return run;
}

absl::StatusOr<std::string> RunTool(const std::vector<std::string>& argv, const std::string& cwd) {
  absl::StatusOr<ToolRun> run = RunToolResult(argv, cwd);
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return absl::InternalError(absl::StrCat("`", absl::StrJoin(argv, " "), "`",
                                            cwd.empty() ? "" : absl::StrCat(" in ", cwd),
                                            " exited ", run->exit_code, ": ", run->err, run->out));
  }
  return std::move(run->out);
}

}  // namespace ccsandbox::testing
