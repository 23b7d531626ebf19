#include "broker/cli_term.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "broker/cli_exit.h"
#include "broker/cli_signals.h"

namespace ccsandbox::broker {
namespace {

// Raw mode on stdin while alive (when stdin is a terminal); the saved mode comes back in the
// destructor, on every way out of RunTerm.
class RawMode {
 public:
  RawMode() {
    if (!isatty(0) || tcgetattr(0, &saved_) != 0) return;
    struct termios raw = saved_;
    cfmakeraw(&raw);
    if (tcsetattr(0, TCSANOW, &raw) == 0) active_ = true;
  }
  ~RawMode() {
    if (active_) tcsetattr(0, TCSANOW, &saved_);
  }
  RawMode(const RawMode&) = delete;
  RawMode& operator=(const RawMode&) = delete;

 private:
  struct termios saved_ = {};
  bool active_ = false;
};

// SIGWINCH -> a byte on a pipe, whatever thread the kernel picks for the handler.
std::atomic<int> winch_fd{-1};

void OnWinch(int) {
  const int saved = errno;
  const int fd = winch_fd.load();
  if (fd >= 0) (void)!write(fd, "w", 1);
  errno = saved;
}

v1::TerminalSize CurrentSize() {
  v1::TerminalSize size;
  struct winsize ws = {};
  if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
    size.set_rows(ws.ws_row);
    size.set_cols(ws.ws_col);
  } else {
    size.set_rows(24);
    size.set_cols(80);
  }
  return size;
}

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string BackendLabel(const v1::SandboxHandle& handle) {
  switch (handle.backend()) {
    case v1::SANDBOX_BACKEND_NATIVE:
      return "native (the terminal profile: $HOME and the working directory writable, secrets "
             "unreadable, network open)";
    case v1::SANDBOX_BACKEND_MICROVM:
      return "microvm";
    default:
      return "none (the host shell, NOT sandboxed)";
  }
}

}  // namespace

int RunTerm(v1::SandboxBroker::Stub& stub, const TermFlags& flags) {
  grpc::ClientContext context;
  CancelOnStopSignal cancel_on_stop([&context] { context.TryCancel(); });
  std::unique_ptr<grpc::ClientReaderWriter<v1::TerminalInput, v1::TerminalOutput>> call =
      stub.Terminal(&context);
  v1::TerminalInput first;
  v1::TerminalOpen* open = first.mutable_open();
  open->set_backend(flags.backend);
  open->set_working_directory(flags.workdir);
  for (const std::string& arg : flags.argv) open->add_argv(arg);
  const char* term = getenv("TERM");
  if (term != nullptr) open->set_term(term);
  *open->mutable_size() = CurrentSize();
  call->Write(first);

  v1::TerminalOutput out;
  if (!call->Read(&out) || !out.has_opened()) {
    const grpc::Status status = call->Finish();
    if (cancel_on_stop.signal() != 0) return 128 + cancel_on_stop.signal();
    return Fail(status.ok() ? std::string("the broker opened no terminal")
                            : absl::StrCat(status.error_message()));
  }
  std::cerr << "sandboxctl: terminal " << out.opened().session_id() << ", backend "
            << BackendLabel(out.opened()) << "\r\n"
            << std::flush;

  int pipe_ends[2];
  if (pipe2(pipe_ends, O_CLOEXEC | O_NONBLOCK) != 0) return Fail("pipe2 failed");
  UniqueFd winch_r(pipe_ends[0]), winch_w(pipe_ends[1]);
  if (pipe2(pipe_ends, O_CLOEXEC) != 0) return Fail("pipe2 failed");
  UniqueFd stop_r(pipe_ends[0]), stop_w(pipe_ends[1]);
  winch_fd.store(winch_w.get());
  struct sigaction action = {};
  action.sa_handler = OnWinch;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGWINCH, &action, nullptr);

  std::optional<int> code;
  {
    RawMode raw;
    // Keystrokes and window sizes go out on this thread; output comes in on ours.
    std::thread input([&] {
      bool stdin_open = true;
      char buffer[4096];
      while (true) {
        struct pollfd fds[3] = {{stop_r.get(), POLLIN, 0},
                                {winch_r.get(), POLLIN, 0},
                                {stdin_open ? 0 : -1, POLLIN, 0}};
        if (poll(fds, 3, -1) < 0 && errno != EINTR) break;
        if (fds[0].revents != 0) break;
        v1::TerminalInput in;
        if (fds[1].revents != 0) {
          while (read(winch_r.get(), buffer, sizeof(buffer)) > 0) {
          }
          *in.mutable_resize() = CurrentSize();
          if (!call->Write(in)) break;
        }
        if (fds[2].revents != 0) {
          const ssize_t n = read(0, buffer, sizeof(buffer));
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) {
            stdin_open = false;  // the shell goes on: `exit` ends it, not our end of input
            continue;
          }
          in.set_data(std::string(buffer, static_cast<size_t>(n)));
          if (!call->Write(in)) break;
        }
      }
    });
    bool input_stopped = false;
    auto stop_input = [&] {
      if (input_stopped) return;
      input_stopped = true;
      (void)!write(stop_w.get(), "s", 1);
      input.join();
      call->WritesDone();  // the broker, then the launcher, close their sides in turn
    };
    while (call->Read(&out)) {
      if (out.has_data() && !WriteAll(1, out.data())) context.TryCancel();
      if (out.has_event() && out.event().has_violation()) {
        // A denial says so, on its own line, whatever the shell was printing.
        std::cerr << "\r\nsandboxctl: denied " << out.event().violation().action() << " "
                  << out.event().violation().target() << "\r\n"
                  << std::flush;
      }
      if (out.has_ended()) {
        stop_input();
        const v1::SandboxEvent& ended = out.ended();
        code = ended.has_exit() ? ended.exit().exit_code() : 128 + ended.killed().signal();
        if (ended.has_killed()) {
          std::cerr << "\r\nsandboxctl: the terminal was killed (" << ended.killed().reason()
                    << (ended.killed().detail().empty() ? "" : ": ") << ended.killed().detail()
                    << ")\r\n";
        }
      }
    }
    stop_input();
  }  // the terminal's mode is restored here, before anything more is printed
  winch_fd.store(-1);
  const grpc::Status status = call->Finish();
  if (cancel_on_stop.signal() != 0) return 128 + cancel_on_stop.signal();
  if (code.has_value()) return *code;
  return Fail(status.ok() ? std::string("the terminal ended without saying how")
                          : absl::StrCat("the terminal was lost: ", status.error_message()));
}

}  // namespace ccsandbox::broker
