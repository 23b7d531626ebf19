#include "launcher/shim/init.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>

#include "launcher/create_guard/filter.h"
#include "launcher/shim/init_protocol.h"
#include "launcher/shim/reaper.h"

namespace ccsandbox::launcher {
namespace {

// Closes every descriptor from 3 up but `keep`.
void CloseAllBut(std::vector<int> keep) {
  std::sort(keep.begin(), keep.end());
  unsigned from = 3;
  for (int fd : keep) {
    if (fd < static_cast<int>(from)) continue;
    if (static_cast<unsigned>(fd) > from) syscall(SYS_close_range, from, fd - 1, 0);
    from = static_cast<unsigned>(fd) + 1;
  }
  syscall(SYS_close_range, from, ~0U, 0);
}

class Init {
 public:
  Init(asio::io_context& io, int channel_fd, const CreateGuardShimConfig& guard)
      : io_(io),
        channel_fd_(channel_fd),
        guard_(guard),
        channel_(io, dup(channel_fd)),
        children_(io, SIGCHLD) {}

  int Run() {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    // A signal for a reaper that has just exited writes to a pipe nobody reads: EPIPE, not
    // the init's death.
    signal(SIGPIPE, SIG_IGN);
    if (guard_.channel_fd == kPerExecGuardChannel) {
      // Built once for every Exec: libseccomp's compilation costs more than the fork.
      absl::StatusOr<std::string> program = CreateFilterProgram();
      if (!program.ok()) {
        fprintf(stderr, "sandbox_shim: init: %s\n",
                std::string(program.status().message()).c_str());
        return 125;
      }
      guard_program_ = *std::move(program);
    }
    if (!Send({.kind = InitKind::kReady})) return 125;
    WaitForChannel();
    WaitForChildren();
    io_.run();
    return exit_code_;
  }

 private:
  struct Exec {
    pid_t reaper;
    UniqueFd control;  // write end: signal numbers for the reaper
  };

  bool Send(const InitMessage& message) {
    absl::Status sent = SendInitMessage(channel_fd_, message);
    if (!sent.ok()) Stop(0, "");  // the launcher is gone: so is the sandbox
    return sent.ok();
  }

  void Stop(int code, const std::string& why) {
    if (!why.empty()) fprintf(stderr, "sandbox_shim: init: %s\n", why.c_str());
    exit_code_ = code;
    io_.stop();
  }

  void WaitForChannel() {
    channel_.async_wait(asio::posix::stream_descriptor::wait_read, [this](asio::error_code error) {
      if (error) return;
      absl::Status read = reader_.ReadAvailable(channel_fd_);
      while (read.ok()) {
        std::optional<absl::StatusOr<InitFrame>> frame = reader_.Next();
        if (!frame.has_value()) break;
        if (!frame->ok()) {
          if (reader_.closed()) return Stop(0, "");  // the launcher ended the sandbox
          return Stop(125, std::string(frame->status().message()));
        }
        OnFrame(**frame);
      }
      if (!read.ok()) return Stop(125, std::string(read.message()));
      if (reader_.closed()) return Stop(0, "");
      WaitForChannel();
    });
  }

  void OnFrame(InitFrame& frame) {
    const InitMessage& message = frame.message;
    if (message.kind == InitKind::kSignal) {
      auto exec = execs_.find(message.exec_id);
      if (exec != execs_.end()) {
        (void)!write(exec->second.control.get(), &message.value, sizeof(message.value));
      }
      return;
    }
    if (message.kind != InitKind::kExec) return Stop(125, "unexpected frame from the launcher");
    const size_t want = guard_.channel_fd == kPerExecGuardChannel ? 4 : 3;
    if (frame.fds.size() < want || message.argv.empty() || execs_.count(message.exec_id) > 0) {
      return Stop(125, "malformed Exec from the launcher");
    }
    StartExec(frame);
  }

  void StartExec(InitFrame& frame) {
    int control[2];
    if (pipe2(control, O_CLOEXEC) != 0) {
      dprintf(frame.fds[2].get(), "sandbox_shim: pipe: %s\n", strerror(errno));
      Send({.kind = InitKind::kEnded, .exec_id = frame.message.exec_id, .value = 126});
      return;
    }
    UniqueFd control_read(control[0]), control_write(control[1]);
    fcntl(control_write.get(), F_SETFL, O_NONBLOCK);
    ReaperRequest request;
    request.argv = frame.message.argv;
    request.env = frame.message.env;
    request.workdir = frame.message.workdir;
    request.stdin_fd = frame.fds[0].get();
    request.stdout_fd = frame.fds[1].get();
    request.stderr_fd = frame.fds[2].get();
    request.guard = guard_;
    const size_t guard_fds = guard_.channel_fd == kPerExecGuardChannel ? 1 : 0;
    request.guard.channel_fd = guard_fds > 0 ? frame.fds[3].get() : -1;
    for (size_t i = 3 + guard_fds; i < frame.fds.size(); ++i) {
      request.cgroup_fds.push_back(frame.fds[i].get());
    }
    request.guard_program = &guard_program_;
    request.control_fd = control_read.get();
    const pid_t pid = fork();
    if (pid == 0) {
      // The reaper keeps the Exec's descriptors and its control pipe: not the launcher's
      // channel, not the bridge's sockets, not another Exec's pipes.
      std::vector<int> keep = {request.stdin_fd, request.stdout_fd, request.stderr_fd,
                               request.guard.channel_fd, request.control_fd};
      keep.insert(keep.end(), request.cgroup_fds.begin(), request.cgroup_fds.end());
      CloseAllBut(keep);
      _exit(RunReaper(request));
    }
    if (pid < 0) {
      dprintf(request.stderr_fd, "sandbox_shim: fork: %s\n", strerror(errno));
      Send({.kind = InitKind::kEnded, .exec_id = frame.message.exec_id, .value = 126});
      return;
    }
    by_pid_[pid] = frame.message.exec_id;
    execs_[frame.message.exec_id] = Exec{pid, std::move(control_write)};
    Send({.kind = InitKind::kStarted, .exec_id = frame.message.exec_id, .value = pid});
  }

  void WaitForChildren() {
    children_.async_wait([this](asio::error_code error, int) {
      if (error) return;
      int status;
      pid_t pid;
      while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        auto found = by_pid_.find(pid);
        if (found == by_pid_.end()) continue;  // an orphan of a reaper that died: reaped
        const uint64_t id = found->second;
        by_pid_.erase(found);
        execs_.erase(id);
        if (!WIFEXITED(status)) {
          return Stop(125, "the reaper of an Exec was killed (signal " +
                               std::to_string(WTERMSIG(status)) +
                               "): its processes can no longer be told apart; the sandbox ends");
        }
        if (!Send({.kind = InitKind::kEnded, .exec_id = id, .value = WEXITSTATUS(status)})) return;
      }
      WaitForChildren();
    });
  }

  asio::io_context& io_;
  const int channel_fd_;
  const CreateGuardShimConfig guard_;
  asio::posix::stream_descriptor channel_;  // a dup, for readiness only
  asio::signal_set children_;
  InitFrameReader reader_{/*accept_fds=*/true};
  std::map<uint64_t, Exec> execs_;
  std::map<pid_t, uint64_t> by_pid_;
  int exit_code_ = 0;
  std::string guard_program_;
};

}  // namespace

int RunInit(asio::io_context& io, int channel_fd, const CreateGuardShimConfig& guard) {
  Init init(io, channel_fd, guard);
  return init.Run();
}

}  // namespace ccsandbox::launcher
