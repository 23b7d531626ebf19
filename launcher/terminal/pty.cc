#include "launcher/terminal/pty.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "policy/plan/terminal_profile.h"

namespace ccsandbox::launcher {
namespace {

absl::Status Errno(const char* what) {
  return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
}

// The session id of /proc/<pid>/stat (the 6th field; the name in parentheses may hold anything).
std::optional<pid_t> SessionOf(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::stringstream text;
  text << in.rdbuf();
  const std::string stat = text.str();
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(close + 1));
  std::string state, ppid, pgrp, session;
  rest >> state >> ppid >> pgrp >> session;
  int sid = 0;
  if (!absl::SimpleAtoi(session, &sid)) return std::nullopt;
  return sid;
}

}  // namespace

absl::StatusOr<Pty> OpenPty(unsigned rows, unsigned cols) {
  // The size rule is the broker's (one source): rows and cols each 1..1000.
  if (absl::Status size = policy::CheckTerminalSize(rows, cols); !size.ok()) return size;
  Pty pty;
  pty.master.Reset(posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (pty.master.get() < 0) return Errno("posix_openpt");
  if (grantpt(pty.master.get()) != 0) return Errno("grantpt");
  if (unlockpt(pty.master.get()) != 0) return Errno("unlockpt");
  // The slave through the master (TIOCGPTPEER): no path lookup in /dev/pts to race.
  pty.slave.Reset(ioctl(pty.master.get(), TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (pty.slave.get() < 0) return Errno("ioctl(TIOCGPTPEER)");
  if (fcntl(pty.master.get(), F_SETFL, O_NONBLOCK) != 0) return Errno("fcntl(O_NONBLOCK)");
  if (absl::Status size = SetWindowSize(pty.master.get(), rows, cols); !size.ok()) return size;
  return pty;
}

absl::Status SetWindowSize(int master, unsigned rows, unsigned cols) {
  if (absl::Status size = policy::CheckTerminalSize(rows, cols); !size.ok()) return size;
  struct winsize ws = {};
  ws.ws_row = static_cast<unsigned short>(rows);
  ws.ws_col = static_cast<unsigned short>(cols);
  if (ioctl(master, TIOCSWINSZ, &ws) != 0) return Errno("ioctl(TIOCSWINSZ)");
  return absl::OkStatus();
}

absl::Status SignalForeground(int master, int sig) {
  if (absl::Status allowed = policy::CheckTerminalSignal(sig); !allowed.ok()) return allowed;
  if (ioctl(master, TIOCSIG, sig) != 0) return Errno("ioctl(TIOCSIG)");
  return absl::OkStatus();
}

void KillSession(pid_t sid) {
  if (sid <= 1) return;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return;
  while (struct dirent* entry = readdir(proc)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid) || pid <= 1) continue;
    if (SessionOf(entry->d_name) == sid) kill(pid, SIGKILL);
  }
  closedir(proc);
}

}  // namespace ccsandbox::launcher
