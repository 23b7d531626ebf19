#include "broker/microvm/agent/guest_pty.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "broker/microvm/agent/guest_root.h"
#include "broker/microvm/agent/guest_spawn.h"

namespace ccsandbox::broker::microvm {
namespace {

constexpr size_t kMaxPendingInput = 1 << 20;
constexpr size_t kMaxLastOutput = 1 << 20;

bool Fail(std::string* error, const std::string& what) {
  *error = what + ": " + strerror(errno);
  return false;
}

// The devpts the PTY comes from: the guest root's own, or one on the agent's /dev/pts.
bool PtmxPath(const GuestSetup* root, std::string* path, std::string* error) {
  if (root != nullptr) {
    *path = std::string(kSysroot) + "/dev/pts/ptmx";
    return true;
  }
  *path = "/dev/pts/ptmx";
  if (access(path->c_str(), F_OK) == 0) return true;
  if (mkdir("/dev/pts", 0755) != 0 && errno != EEXIST) return Fail(error, "mkdir /dev/pts");
  if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
            "newinstance,ptmxmode=0600,mode=0620") != 0) {
    return Fail(error, "mount devpts /dev/pts");
  }
  return true;
}

bool SetSize(int master, uint16_t rows, uint16_t cols) {
  struct winsize ws = {};
  ws.ws_row = rows;
  ws.ws_col = cols;
  return ioctl(master, TIOCSWINSZ, &ws) == 0;
}

}  // namespace

bool GuestPty::Start(const TerminalRequest& request, const GuestSetup* root, std::string* error) {
  std::string ptmx;
  if (!PtmxPath(root, &ptmx, error)) return false;
  master_ = ::open(ptmx.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  if (master_ < 0) return Fail(error, "open " + ptmx);
  int unlock = 0;
  // The slave through the master (TIOCGPTPEER): no path in /dev/pts to race for.
  const int slave = ioctl(master_, TIOCSPTLCK, &unlock) == 0
                        ? ioctl(master_, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)
                        : -1;
  if (slave < 0 || !SetSize(master_, request.rows, request.cols)) {
    Fail(error, "the PTY");
    if (slave >= 0) close(slave);
    Close();
    return false;
  }
  const pid_t pid = SpawnInGuest(
      request.exec, root,
      [&] {
        setsid();
        ioctl(slave, TIOCSCTTY, 0);
        dup2(slave, 0);
        dup2(slave, 1);
        dup2(slave, 2);
      },
      error);
  close(slave);
  if (pid < 0) {
    Close();
    return false;
  }
  pid_ = pid;
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd_ < 0) {
    // Without it the end cannot be seen: the shell is not left running unwatched.
    Fail(error, "pidfd_open");
    Kill();
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    Close();
    return false;
  }
  return true;
}

void GuestPty::Fill(std::vector<pollfd>* fds) const {
  if (pid_ <= 0) return;
  fds->push_back({pidfd_, POLLIN, 0});
  if (!master_done_) {
    fds->push_back({master_, static_cast<short>(POLLIN | (pending_.empty() ? 0 : POLLOUT)), 0});
  }
}

void GuestPty::Handle(const pollfd& p, const Send& send) {
  if (pid_ <= 0 || p.revents == 0 || (p.fd != master_ && p.fd != pidfd_)) return;
  if (p.fd == pidfd_) {
    Finish(send);
    return;
  }
  if (p.revents & POLLOUT) Flush();
  if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
    char buffer[65536];
    const ssize_t n = read(master_, buffer, sizeof(buffer));
    if (n > 0) {
      send(FrameType::kStdout, std::string(buffer, n));
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      master_done_ = true;  // EIO: no slave is open; the shell's end comes on its pidfd
    }
  }
}

void GuestPty::Input(const std::string& bytes) {
  if (pid_ <= 0) return;
  pending_.append(bytes, 0, kMaxPendingInput - std::min(kMaxPendingInput, pending_.size()));
  Flush();
}

void GuestPty::Flush() {
  while (!pending_.empty()) {
    const ssize_t n = write(master_, pending_.data(), pending_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // full (EAGAIN): POLLOUT says when; EIO: the end is near
    pending_.erase(0, n);
  }
}

void GuestPty::Resize(uint16_t rows, uint16_t cols) {
  // The kernel sends SIGWINCH to the foreground job when the size changes.
  if (pid_ > 0) SetSize(master_, rows, cols);
}

void GuestPty::Signal(int sig) {
  if (pid_ > 0) ioctl(master_, TIOCSIG, sig);
}

void GuestPty::Hangup() {
  if (pid_ <= 0) return;
  const pid_t foreground = tcgetpgrp(master_);
  for (const pid_t group : {pid_, foreground}) {
    if (group <= 1) continue;
    kill(-group, SIGHUP);
    kill(-group, SIGCONT);
  }
}

void GuestPty::Kill() {
  // PID 1's kill(-1) reaches every process but itself: the whole workload.
  if (pid_ > 0) kill(-1, SIGKILL);
}

void GuestPty::Finish(const Send& send) {
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  const int32_t code = WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
  // Nothing of the terminal outlives it; the dead are reaped (bounded: 2 s).
  kill(-1, SIGKILL);
  for (int waited_ms = 0; waited_ms < 2000;) {
    const pid_t reaped = waitpid(-1, nullptr, WNOHANG);
    if (reaped > 0) continue;
    if (reaped < 0 && errno != EINTR) break;  // ECHILD: none left
    usleep(5 * 1000);
    waited_ms += 5;
  }
  // Every slave is closed now: read until EIO, what the shell wrote last.
  size_t total = 0;
  while (!master_done_ && total < kMaxLastOutput) {
    pollfd more = {master_, POLLIN, 0};
    if (poll(&more, 1, 250) <= 0) break;
    char buffer[65536];
    const ssize_t n = read(master_, buffer, sizeof(buffer));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    total += n;
    send(FrameType::kStdout, std::string(buffer, n));
  }
  pid_ = -1;
  Close();
  send(FrameType::kExit, EncodeU32(static_cast<uint32_t>(code)));
}

void GuestPty::Close() {
  for (int* fd : {&master_, &pidfd_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  master_done_ = false;
  pending_.clear();
}

}  // namespace ccsandbox::broker::microvm
