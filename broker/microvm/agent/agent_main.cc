// The in-guest agent (docs/microvm.md): PID 1's last act is to exec it. It opens the
// virtio-serial port named argv[1] and serves the host's frames (agent_frame.h): one run
// (guest_run.h) or terminal (guest_pty.h) at a time, its stdio relayed as frames, its exit
// reported. A bad frame ends the agent, and with it the guest (it is PID 1): a broken stream is
// never guessed at. When the kernel line asks for it, the same loop serves the egress port
// (egress_mux.h): the guest's only way out.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "broker/microvm/agent/egress_mux.h"
#include "broker/microvm/agent/guest_pty.h"
#include "broker/microvm/agent/guest_root.h"
#include "broker/microvm/agent/guest_run.h"
#include "broker/microvm/agent/guest_spawn.h"
#include "broker/microvm/agent_frame.h"
#include "broker/microvm/guest_setup.h"

namespace ccsandbox::broker::microvm {
namespace {

// /dev/vportNpM of the port whose name is `name`, once the driver has it; "" if it never comes.
std::string FindPort(const std::string& name) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (DIR* dir = opendir("/sys/class/virtio-ports")) {
      while (dirent* entry = readdir(dir)) {
        if (entry->d_name[0] == '.') continue;
        std::ifstream file(std::string("/sys/class/virtio-ports/") + entry->d_name + "/name");
        std::string line;
        if (std::getline(file, line) && line == name) {
          std::string dev = std::string("/dev/") + entry->d_name;
          closedir(dir);
          return dev;
        }
      }
      closedir(dir);
    }
    usleep(50 * 1000);
  }
  return "";
}

void Send(int port, FrameType type, const std::string& payload) {
  WriteAll(port, EncodeFrame(type, payload));
}

// The egress mux when the host gave the guest an egress port (the kernel line says so);
// nullptr (and why on stderr) otherwise: the guest then has no way out at all.
std::unique_ptr<EgressMux> StartEgress() {
  std::ifstream cmdline("/proc/cmdline");
  std::string line;
  std::getline(cmdline, line);
  if (line.find(kEgressKernelArgument) == std::string::npos) return nullptr;
  std::string error;
  const std::string device = FindPort(kEgressPortName);
  const int fd = device.empty() ? -1 : open(device.c_str(), O_RDWR | O_CLOEXEC);
  std::unique_ptr<EgressMux> mux;
  if (fd < 0) {
    error = "no egress port " + std::string(kEgressPortName);
  } else if (BringUpLoopback(&error)) {
    mux = EgressMux::Create(UniqueFd(fd), SandboxEgressListens(), &error);
  }
  if (mux == nullptr) fprintf(stderr, "ccsandbox-agent: no egress: %s\n", error.c_str());
  return mux;
}

int Serve(int port, EgressMux* egress) {
  FrameDecoder decoder(FrameSide::kFromHost);
  GuestRun run;
  GuestPty pty;
  const GuestPty::Send send = [port](FrameType type, const std::string& payload) {
    Send(port, type, payload);
  };
  bool setup_tried = false, set_up = false;
  GuestSetup root;
  char buffer[65536];
  while (true) {
    std::vector<pollfd> fds = {{port, POLLIN, 0}};
    run.Fill(&fds);
    const size_t pty_at = fds.size();
    pty.Fill(&fds);
    const size_t egress_at = fds.size();
    if (egress != nullptr) egress->Fill(&fds);
    int timeout = run.PollTimeoutMs();
    const int egress_timeout = egress != nullptr ? egress->TimeoutMs() : -1;
    if (egress_timeout >= 0 && (timeout < 0 || egress_timeout < timeout)) timeout = egress_timeout;
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return 1;
    for (size_t i = 1; i < pty_at; ++i) run.Handle(fds[i], port);
    for (size_t i = pty_at; i < egress_at; ++i) pty.Handle(fds[i], send);
    if (egress != nullptr) egress->Handle(fds.data() + egress_at, fds.size() - egress_at);
    run.MaybeFinish(port);
    if (fds[0].revents == 0) continue;
    const ssize_t n = read(port, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // no host on the other end (yet, or any more): its run is not wanted
      run.Kill();
      pty.Kill();
      usleep(50 * 1000);
      continue;
    }
    decoder.Feed(buffer, n);
    Frame frame;
    std::string error;
    FrameDecoder::Result result;
    bool broken = false;  // a frame that decoded but is not acceptable
    while (!broken && (result = decoder.Next(&frame, &error)) == FrameDecoder::Result::kFrame) {
      switch (frame.type) {
        case FrameType::kHello:
          Send(port, FrameType::kHelloReply, kAgentVersion);
          break;
        case FrameType::kExec: {
          ExecRequest request;
          if (run.running() || pty.open()) {
            Send(port, FrameType::kFailed, "a run is already in progress");
          } else if (!DecodeExec(frame.payload, &request, &error) ||
                     !run.Start(request, set_up ? &root : nullptr, &error)) {
            Send(port, FrameType::kFailed, error);
          } else {
            Send(port, FrameType::kStarted, EncodeU32(static_cast<uint32_t>(run.pid())));
          }
          break;
        }
        case FrameType::kTerminal: {
          TerminalRequest request;
          if (!DecodeTerminal(frame.payload, &request, &error)) {
            broken = true;
          } else if (run.running() || pty.open()) {
            Send(port, FrameType::kFailed, "a run is already in progress");
          } else if (!pty.Start(request, set_up ? &root : nullptr, &error)) {
            Send(port, FrameType::kFailed, error);
          } else {
            Send(port, FrameType::kStarted, EncodeU32(static_cast<uint32_t>(pty.pid())));
          }
          break;
        }
        case FrameType::kWindow: {
          uint16_t rows = 0, cols = 0;
          if (!DecodeWindow(frame.payload, &rows, &cols, &error)) broken = true;
          if (!broken) pty.Resize(rows, cols);  // a terminal that has just ended ignores it
          break;
        }
        case FrameType::kSignal: {
          int sig = 0;
          if (!DecodeSignal(frame.payload, &sig, &error)) broken = true;
          if (!broken) pty.Signal(sig);
          break;
        }
        case FrameType::kHangup:
          pty.Hangup();
          break;
        case FrameType::kSetup:
          // Once: a second setup, or one during a run, is a broken host.
          if (setup_tried || run.running() || pty.open()) {
            error = "a second setup";
            broken = true;
          } else if (!DecodeSetup(frame.payload, &root, &error)) {
            broken = true;
          } else if (setup_tried = true; !BuildGuestRoot(root, &error)) {
            Send(port, FrameType::kFailed, error);
          } else {
            set_up = true;
            Send(port, FrameType::kSetupDone, "");
          }
          break;
        case FrameType::kStdin:
          run.AddStdin(frame.payload);
          pty.Input(frame.payload);
          break;
        case FrameType::kStdinEof:
          run.CloseStdin();
          break;
        case FrameType::kKill:
          run.Kill();
          pty.Kill();
          break;
        default:
          break;  // the decoder only lets host frames through
      }
    }
    if (broken || result == FrameDecoder::Result::kBad) {
      fprintf(stderr, "ccsandbox-agent: %s\n", error.c_str());
      run.Kill();
      pty.Kill();
      return 1;
    }
  }
}

}  // namespace
}  // namespace ccsandbox::broker::microvm

int main(int argc, char** argv) {
  using namespace ccsandbox::broker::microvm;
  signal(SIGPIPE, SIG_IGN);
  if (argc != 2) {
    fprintf(stderr, "usage: ccsandbox-agent PORT-NAME\n");
    return 2;
  }
  const std::string device = FindPort(argv[1]);
  if (device.empty()) {
    fprintf(stderr, "ccsandbox-agent: no virtio-serial port named %s\n", argv[1]);
    return 1;
  }
  const int port = open(device.c_str(), O_RDWR | O_CLOEXEC);
  if (port < 0) {
    fprintf(stderr, "ccsandbox-agent: %s: %s\n", device.c_str(), strerror(errno));
    return 1;
  }
  const std::unique_ptr<EgressMux> egress = StartEgress();
  return Serve(port, egress.get());
}
