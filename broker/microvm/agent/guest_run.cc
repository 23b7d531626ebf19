#include "broker/microvm/agent/guest_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "broker/microvm/agent/guest_spawn.h"

namespace ccsandbox::broker::microvm {
namespace {

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

}  // namespace

bool GuestRun::Start(const ExecRequest& request, const GuestSetup* root, std::string* error) {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
    *error = std::string("pipe: ") + strerror(errno);
    return false;
  }
  const pid_t pid = SpawnInGuest(
      request, root,
      [&] {
        setsid();
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
      },
      error);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  stdin_ = in[1];
  stdout_ = out[0];
  stderr_ = err[0];
  if (pid < 0) {
    Close();
    return false;
  }
  pid_ = pid;
  // Its end is seen on the pidfd, even while a background job still holds its outputs open.
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd_ < 0) {
    *error = std::string("pidfd_open: ") + strerror(errno);
    kill(-1, SIGKILL);  // never left running unwatched
    waitpid(pid_, nullptr, 0);
    Close();
    return false;
  }
  fcntl(stdin_, F_SETFL, O_NONBLOCK);
  return true;
}

void GuestRun::Kill() {
  // PID 1's kill(-1) reaches every process but itself: the whole run, wherever it went.
  if (pid_ > 0) kill(-1, SIGKILL);
}

void GuestRun::AddStdin(const std::string& bytes) {
  if (stdin_ >= 0) pending_ += bytes;
  FlushStdin();
}

void GuestRun::CloseStdin() {
  stdin_eof_ = true;
  FlushStdin();
}

void GuestRun::Fill(std::vector<pollfd>* fds) const {
  if (pid_ <= 0) return;
  if (!exited_) fds->push_back({pidfd_, POLLIN, 0});
  if (stdout_ >= 0) fds->push_back({stdout_, POLLIN, 0});
  if (stderr_ >= 0) fds->push_back({stderr_, POLLIN, 0});
  if (stdin_ >= 0 && !pending_.empty()) fds->push_back({stdin_, POLLOUT, 0});
}

int GuestRun::PollTimeoutMs() const {
  if (pid_ <= 0) return -1;
  // Orphans the agent inherits die unannounced: reap them now and then; a drain ends in time.
  if (!exited_) return 1000;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        drain_until_ - std::chrono::steady_clock::now())
                        .count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

void GuestRun::Handle(const pollfd& p, int port) {
  if (pid_ <= 0 || p.revents == 0) return;
  if (p.fd == pidfd_) return;  // MaybeFinish reaps it
  if (p.fd == stdin_) {
    FlushStdin();
    return;
  }
  if (p.fd != stdout_ && p.fd != stderr_) return;
  char buffer[65536];
  const ssize_t n = read(p.fd, buffer, sizeof(buffer));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    CloseFd(p.fd == stdout_ ? &stdout_ : &stderr_);
    return;
  }
  WriteAll(port, EncodeFrame(p.fd == stdout_ ? FrameType::kStdout : FrameType::kStderr,
                             std::string(buffer, n)));
}

void GuestRun::Reap() {
  while (true) {
    int status = 0;
    const pid_t reaped = waitpid(-1, &status, WNOHANG);
    if (reaped < 0 && errno == EINTR) continue;
    if (reaped <= 0) return;
    if (reaped != pid_ || exited_) continue;
    exited_ = true;
    status_ = status;
    // No survivor: what the run left behind goes with it.
    kill(-1, SIGKILL);
    drain_until_ = std::chrono::steady_clock::now() + kRunDrain;
  }
}

void GuestRun::MaybeFinish(int port) {
  if (pid_ <= 0) return;
  Reap();
  if (!exited_) return;
  const bool drained = stdout_ < 0 && stderr_ < 0;
  if (!drained && std::chrono::steady_clock::now() < drain_until_) return;
  const int32_t code = WIFSIGNALED(status_) ? -WTERMSIG(status_) : WEXITSTATUS(status_);
  // The swept are reaped before the exit goes out (bounded by the drain's end).
  while (std::chrono::steady_clock::now() < drain_until_) {
    const pid_t reaped = waitpid(-1, nullptr, WNOHANG);
    if (reaped > 0 || (reaped < 0 && errno == EINTR)) continue;
    if (reaped < 0) break;  // ECHILD: none left
    usleep(5 * 1000);
  }
  Close();
  WriteAll(port, EncodeFrame(FrameType::kExit, EncodeU32(static_cast<uint32_t>(code))));
}

void GuestRun::FlushStdin() {
  while (stdin_ >= 0 && !pending_.empty()) {
    const ssize_t n = write(stdin_, pending_.data(), pending_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {  // the run closed its stdin: what is left is dropped
      pending_.clear();
      break;
    }
    pending_.erase(0, n);
  }
  if (stdin_eof_ && pending_.empty()) CloseFd(&stdin_);
}

void GuestRun::Close() {
  for (int* fd : {&pidfd_, &stdin_, &stdout_, &stderr_}) CloseFd(fd);
  pid_ = -1;
  pending_.clear();
  stdin_eof_ = false;
  exited_ = false;
  status_ = 0;
}

}  // namespace ccsandbox::broker::microvm
