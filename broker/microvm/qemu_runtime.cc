#include "broker/microvm/qemu_runtime.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/unique_fd.h"
#include "broker/microvm/agent_frame.h"
#include "broker/microvm/agent_liveness.h"
#include "broker/microvm/boot_image.h"
#include "broker/microvm/egress_bridge.h"
#include "broker/microvm/egress_frame.h"
#include "broker/microvm/guest_setup.h"
#include "broker/microvm/guest_terminal.h"
#include "broker/microvm/hypervisor.h"
#include "broker/microvm/hypervisor_process.h"
#include "broker/microvm/probe_result.h"
#include "policy/plan/egress_wiring.h"

namespace ccsandbox::broker::microvm {
namespace {

constexpr size_t kStdinChunk = 64 * 1024;

// A guest's state directory (boot image, console log, agent socket), removed with all it holds
// when this goes, after the hypervisor that used it (declare it first) — unless the caller made
// it (GuestStart::state_dir): then the caller removes it, once whatever else could write there
// (the sandbox qemu ran in) is gone too.
class StateDir {
 public:
  StateDir(std::string path, bool owned) : path_(std::move(path)), owned_(owned) {}
  StateDir(const StateDir&) = delete;
  StateDir& operator=(const StateDir&) = delete;
  ~StateDir() { Remove(); }
  void Remove() {
    if (path_.empty()) return;
    if (owned_) {
      std::error_code ignored;
      std::filesystem::remove_all(path_, ignored);
    }
    path_.clear();
  }
  const std::string& path() const { return path_; }
  std::string File(absl::string_view name) const { return absl::StrCat(path_, "/", name); }

 private:
  std::string path_;
  bool owned_;
};

// One of the runtime's max_guests places, held from Start to the guest's Stop (or a failed
// Start's return).
class GuestSlot {
 public:
  explicit GuestSlot(std::shared_ptr<std::atomic<int>> live) : live_(std::move(live)) {}
  GuestSlot(const GuestSlot&) = delete;
  GuestSlot& operator=(const GuestSlot&) = delete;
  ~GuestSlot() { Release(); }
  void Release() {
    if (live_ != nullptr) live_->fetch_sub(1);
    live_ = nullptr;
  }

 private:
  std::shared_ptr<std::atomic<int>> live_;
};

// Why a guest ended, from its console and (when known) how its hypervisor ended.
std::string EndCause(const Hypervisor& hypervisor, const std::optional<std::string>& ended) {
  const std::string console = hypervisor.ConsoleTail();
  const size_t panic = console.find("Kernel panic");
  if (panic != std::string::npos) {
    return absl::StrCat("the guest panicked ('", QuotableLine(console.substr(panic)), "')");
  }
  return absl::StrCat("the hypervisor ", ended.value_or("has not exited"), " ('",
                      QuotableLine(console), "')");
}

// A run's environment in the guest ("NAME=value"): the command's, and with egress a native
// run's proxy variables over it (launcher/run_environment.cc), so clients reach the proxy ports.
std::vector<std::string> GuestEnvironment(std::map<std::string, std::string> env, bool egress) {
  if (egress) {
    for (const auto& [name, value] : policy::EgressEnvironment()) env[name] = value;
    env.emplace("PATH", "/bin");  // what the agent gives a run without an environment
  }
  std::vector<std::string> out;
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

v1::SandboxEvent Event() {
  v1::SandboxEvent event;
  event.set_backend(v1::SANDBOX_BACKEND_MICROVM);
  return event;
}

std::vector<std::string> QemuArgv(const QemuRuntimeConfig& config, const StateDir& dir,
                                  const GuestLayout* layout, bool egress) {
  // No -netdev / -nic: the guest has no network device at all.
  std::vector<std::string> argv = {
      config.hypervisor, "-M", "microvm", "-accel", config.accel, "-m",
      absl::StrCat(config.memory_mib), "-smp", "1", "-nodefaults", "-no-user-config", "-nic",
      "none", "-display", "none", "-serial", "stdio", "-no-reboot", "-kernel", config.kernel,
      "-initrd", dir.File("boot.img"), "-append",
      // reboot=t: a panicked guest reboots by triple fault, which -no-reboot turns into
      // qemu's exit (the default reboot method sometimes spun instead).
      GuestKernelLine(egress ? absl::StrCat("reboot=t ", kEgressKernelArgument)
                             : std::string("reboot=t")),
      "-device", "virtio-serial-device", "-chardev",
      absl::StrCat("socket,id=agent,server=on,wait=off,path=", dir.File("agent.sock")), "-device",
      absl::StrCat("virtserialport,chardev=agent,name=", kAgentPortName)};
  if (layout != nullptr) {
    const std::vector<std::string> shares = ShareQemuArgs(*layout);
    argv.insert(argv.end(), shares.begin(), shares.end());
  }
  if (egress) {
    // The guest's only way out: streams to the session's proxies (egress_bridge.h).
    for (std::string arg :
         {std::string("-chardev"),
          absl::StrCat("socket,id=egress,server=on,wait=off,path=", dir.File("egress.sock")),
          std::string("-device"),
          absl::StrCat("virtserialport,chardev=egress,name=", kEgressPortName)}) {
      argv.push_back(std::move(arg));
    }
  }
  return argv;
}

// With a layout, each of the spec's binds must be one of its shares, at least as read-only.
absl::Status CheckBindsShared(const v1::SandboxSpec& spec, const GuestLayout* layout) {
  for (const v1::SandboxBindMount& bind : spec.bind_mounts()) {
    const std::string guest = bind.guest_path().empty() ? bind.host_path() : bind.guest_path();
    const bool shared =
        layout != nullptr &&
        std::any_of(layout->shares.begin(), layout->shares.end(), [&](const GuestShare& s) {
          return s.host_path == bind.host_path() && s.guest_path == guest &&
                 (s.read_only || !bind.read_only());
        });
    if (!shared) {
      return absl::FailedPreconditionError(absl::StrCat(
          "backend: microvm: the bind mount ", bind.host_path(), " -> ", guest,
          layout == nullptr ? " cannot be shared: sharing needs the session's guest layout"
                            : " is not among the guest layout's shares"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<UniqueFd> ConnectUnix(const std::string& path) {
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  sockaddr_un address{.sun_family = AF_UNIX};
  if (path.size() >= sizeof(address.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("socket path too long: ", path));
  }
  memcpy(address.sun_path, path.c_str(), path.size() + 1);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    return absl::UnavailableError(absl::StrCat("connect ", path, ": ", strerror(errno)));
  }
  return fd;
}

// The agent's socket: frames out (non-blocking, so a guest that writes while the host
// writes never deadlocks the two) and frames in.
class AgentChannel {
 public:
  explicit AgentChannel(UniqueFd fd) : fd_(std::move(fd)) {
    fcntl(fd_.get(), F_SETFL, fcntl(fd_.get(), F_GETFL) | O_NONBLOCK);
  }
  void Queue(FrameType type, const std::string& payload) { outbox_ += EncodeFrame(type, payload); }
  // Waits up to `wait` for the socket, writes what it can, reads what is there. An error
  // (and false) once the channel is broken: closed by the guest or a bad frame.
  // A readable `wake_fd` ends the wait early (it is not read).
  bool Pump(absl::Duration wait, std::vector<Frame>* frames, std::string* error, int wake_fd = -1) {
    pollfd fds[2] = {
        {.fd = fd_.get(), .events = static_cast<short>(POLLIN | (outbox_.empty() ? 0 : POLLOUT))},
        {.fd = wake_fd, .events = POLLIN}};
    const pollfd& p = fds[0];
    const int ready = poll(fds, 2, static_cast<int>(absl::ToInt64Milliseconds(wait)));
    if (ready < 0 && errno != EINTR) {
      *error = absl::StrCat("poll: ", strerror(errno));
      return false;
    }
    if (ready <= 0) return true;
    if ((p.revents & POLLOUT) && !outbox_.empty()) {
      const ssize_t n = send(fd_.get(), outbox_.data(), outbox_.size(), MSG_NOSIGNAL);
      if (n > 0) outbox_.erase(0, n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        *error = absl::StrCat("the agent's channel: ", strerror(errno));
        return false;
      }
    }
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      char buffer[65536];
      const ssize_t n = read(fd_.get(), buffer, sizeof(buffer));
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        *error = "the agent's channel closed";
        return false;
      }
      if (n > 0) decoder_.Feed(buffer, n);
    }
    Frame frame;
    FrameDecoder::Result result;
    while ((result = decoder_.Next(&frame, error)) == FrameDecoder::Result::kFrame) {
      frames->push_back(std::move(frame));
    }
    if (result == FrameDecoder::Result::kBad) {
      *error = absl::StrCat("a bad frame from the guest agent: ", *error);
      return false;
    }
    return true;
  }

 private:
  UniqueFd fd_;
  FrameDecoder decoder_{FrameSide::kFromGuest};
  std::string outbox_;
};

class QemuGuest : public Guest, private TerminalAgent {
 public:
  QemuGuest(std::unique_ptr<GuestSlot> slot, std::unique_ptr<StateDir> dir,
            std::unique_ptr<Hypervisor> process, std::unique_ptr<AgentChannel> channel,
            std::unique_ptr<EgressBridge> egress, absl::Duration answer_timeout,
            std::function<void(const std::string&)> lost)
      : slot_(std::move(slot)),
        dir_(std::move(dir)),
        process_(std::move(process)),
        channel_(std::move(channel)),
        egress_(std::move(egress)),
        liveness_(answer_timeout),
        lost_(std::move(lost)),
        watchdog_([this] { Watch(); }) {}
  ~QemuGuest() override { Stop(absl::ZeroDuration()).IgnoreError(); }

  absl::Status Exec(const GuestCommand& command,
                    const std::function<bool(const v1::SandboxEvent&)>& emit) override;

  absl::StatusOr<std::unique_ptr<GuestTerminal>> Terminal(const GuestCommand& command,
                                                          uint16_t rows, uint16_t cols,
                                                          TerminalCallbacks callbacks) override {
    return OpenGuestTerminal(this, command, rows, cols, std::move(callbacks));
  }

  absl::Status Stop(absl::Duration grace) override;

  v1::SandboxState State(std::string* cause) const override {
    std::lock_guard<std::mutex> lock(mu_);
    NoticeEndLocked();
    if (cause != nullptr) *cause = cause_;
    return state_;
  }

 private:
  // Whether the guest's console says it panicked; rereads the console only when it grew.
  bool PanickedLocked() const {
    const uint64_t size = process_->ConsoleSize();
    if (size == console_size_) return panicked_;
    console_size_ = size;
    panicked_ = absl::StrContains(process_->ConsoleTail(), "Kernel panic");
    return panicked_;
  }
  // A guest whose hypervisor has gone while it was meant to run is in error (held: mu_); so
  // is one that panicked (killed now: a panicked guest may spin rather than exit).
  void NoticeEndLocked() const {
    if (state_ != v1::SANDBOX_STATE_WARM && state_ != v1::SANDBOX_STATE_ACTIVE) return;
    if (PanickedLocked()) process_->Kill();
    // A guest that broke the egress protocol is not trusted any more: powered off.
    if (egress_ != nullptr && egress_->guest_misbehaved()) {
      process_->Kill();
      state_ = v1::SANDBOX_STATE_ERROR;
      cause_ = absl::StrCat("the guest broke the egress channel: ", egress_->failure());
      return;
    }
    if (const std::optional<std::string> ended = process_->Ended(); ended.has_value()) {
      state_ = v1::SANDBOX_STATE_ERROR;
      cause_ = EndCause(*process_, ended);
    }
  }
  // The channel pumped for up to `wait`, and the guest asked whether it still answers
  // (AgentLiveness; held: exec_mu_): false, and why, when the channel broke or the guest hung.
  bool PumpAgent(absl::Duration wait, std::vector<Frame>* frames, std::string* error,
                 int wake_fd = -1);
  // While no run is open (a run's loop asks itself), asks the idle guest whether it answers; a
  // guest that hung is powered off, in error, and `lost_` told.
  void Watch();
  // Ends a run whose guest went away: `killed` (`reason`, else sandbox-ended), and the guest in
  // error unless it was stopped.
  void GuestLost(const std::string& why, const std::function<bool(const v1::SandboxEvent&)>& emit,
                 const std::string& reason = "");
  // Powers off a guest that went away mid-run (unless it is already down) and puts it in error
  // unless it was being stopped; what the run's end says.
  std::string MarkLost(const std::string& why);

  // TerminalAgent (guest_terminal.h): the terminal's thread holds exec_mu_ until Release.
  absl::Status Acquire() override;
  void Queue(FrameType type, const std::string& payload) override {
    channel_->Queue(type, payload);
  }
  bool Pump(absl::Duration wait, int wake_fd, std::vector<Frame>* frames,
            std::string* error) override;
  std::string Lost(const std::string& why) override { return MarkLost(why); }
  void Release() override;

  // One run at a time (and the watchdog between runs); Stop waits for it.
  std::timed_mutex exec_mu_;
  mutable std::mutex mu_;
  std::unique_ptr<GuestSlot> slot_;  // released by Stop
  std::unique_ptr<StateDir> dir_;
  std::unique_ptr<Hypervisor> process_;    // guarded by mu_ while a run may be open
  std::unique_ptr<AgentChannel> channel_;  // guarded by exec_mu_
  std::unique_ptr<EgressBridge> egress_;   // null without egress; reset by Stop (mu_)
  std::atomic<bool> stopping_ = false;
  mutable uint64_t console_size_ = 0;
  mutable bool panicked_ = false;
  mutable v1::SandboxState state_ = v1::SANDBOX_STATE_WARM;
  mutable std::string cause_;
  AgentLiveness liveness_;  // guarded by exec_mu_
  std::function<void(const std::string&)> lost_;
  std::mutex watch_mu_;
  std::condition_variable watch_cv_;
  std::thread watchdog_;  // last: started once the rest is built
};

// How long a run waits for the watchdog's moment on the channel before it is refused as a
// second run.
constexpr std::chrono::milliseconds kRunLockWait{500};

bool QemuGuest::PumpAgent(absl::Duration wait, std::vector<Frame>* frames, std::string* error,
                          int wake_fd) {
  if (liveness_.AskNow(absl::Now())) channel_->Queue(FrameType::kHello, "");
  const absl::Time before = absl::Now();
  if (!channel_->Pump(wait, frames, error, wake_fd)) return false;
  const absl::Time after = absl::Now();
  return liveness_.Heard(after - before, frames, after, error);
}

void QemuGuest::Watch() {
  absl::Time last = absl::Now();
  std::unique_lock<std::mutex> watch_lock(watch_mu_);
  while (!watch_cv_.wait_for(watch_lock, std::chrono::milliseconds(500),
                             [this] { return stopping_.load(); })) {
    std::unique_lock<std::timed_mutex> run_lock(exec_mu_, std::try_to_lock);
    const absl::Time now = absl::Now();
    // An idle guest's answer waits in the socket until read: all the time since counts.
    const absl::Duration waited = now - last;
    last = now;
    if (!run_lock.owns_lock()) continue;  // a run or terminal asks while it goes
    {
      std::lock_guard<std::mutex> lock(mu_);
      NoticeEndLocked();
      if (state_ != v1::SANDBOX_STATE_WARM) {
        if (state_ == v1::SANDBOX_STATE_ERROR) return;  // nothing left to watch
        continue;
      }
    }
    if (liveness_.AskNow(now)) channel_->Queue(FrameType::kHello, "");
    std::vector<Frame> frames;
    std::string error;
    if (channel_->Pump(absl::ZeroDuration(), &frames, &error) &&
        liveness_.Heard(waited, &frames, now, &error)) {
      continue;
    }
    if (stopping_) return;
    const std::string cause = MarkLost(error);
    run_lock.unlock();
    watch_lock.unlock();
    if (lost_) lost_(cause);
    return;
  }
}

std::string QemuGuest::MarkLost(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ == v1::SANDBOX_STATE_ERROR) return cause_;  // seen already (NoticeEndLocked)
  // A broken channel with the hypervisor still up (a bad frame, the agent died): the guest
  // is not trusted any more, so it is powered off now.
  const std::optional<std::string> ended = process_->WaitUntil(absl::Now() + absl::Seconds(1));
  if (!ended.has_value()) process_->Kill();
  const std::string detail = stopping_ ? std::string("the microVM was stopped")
                                       : absl::StrCat(why, "; ", EndCause(*process_, ended));
  if (!stopping_) {
    state_ = v1::SANDBOX_STATE_ERROR;
    cause_ = detail;
  }
  return detail;
}

absl::Status QemuGuest::Acquire() {
  if (!exec_mu_.try_lock_for(kRunLockWait)) {
    return absl::FailedPreconditionError(
        "backend: microvm: one run at a time in a microVM session, and another is in progress");
  }
  std::lock_guard<std::mutex> lock(mu_);
  NoticeEndLocked();
  if (stopping_ || state_ != v1::SANDBOX_STATE_WARM) {
    exec_mu_.unlock();
    return absl::FailedPreconditionError(
        absl::StrCat("the microVM is ", v1::SandboxState_Name(state_),
                     cause_.empty() ? "" : absl::StrCat(": ", cause_)));
  }
  state_ = v1::SANDBOX_STATE_ACTIVE;
  return absl::OkStatus();
}

bool QemuGuest::Pump(absl::Duration wait, int wake_fd, std::vector<Frame>* frames,
                     std::string* error) {
  if (stopping_) {
    *error = "stopped";
    return false;
  }
  if (!PumpAgent(wait, frames, error, wake_fd)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  NoticeEndLocked();  // a panic or the hypervisor's end
  if (state_ != v1::SANDBOX_STATE_ERROR) return true;
  *error = cause_;
  return false;
}

void QemuGuest::Release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == v1::SANDBOX_STATE_ACTIVE) state_ = v1::SANDBOX_STATE_WARM;
  }
  exec_mu_.unlock();
}

void QemuGuest::GuestLost(const std::string& why,
                          const std::function<bool(const v1::SandboxEvent&)>& emit,
                          const std::string& reason) {
  const std::string detail = MarkLost(why);
  v1::SandboxEvent event = Event();
  event.mutable_killed()->set_reason(stopping_        ? "stopped"
                                     : reason.empty() ? "sandbox-ended"
                                                      : reason);
  event.mutable_killed()->set_signal(SIGKILL);
  event.mutable_killed()->set_detail(detail);
  emit(event);
}

absl::Status QemuGuest::Exec(const GuestCommand& command,
                             const std::function<bool(const v1::SandboxEvent&)>& emit) {
  if (command.argv.empty()) return absl::InvalidArgumentError("empty argv");
  std::unique_lock<std::timed_mutex> run_lock(exec_mu_, kRunLockWait);
  if (!run_lock.owns_lock()) {
    return absl::FailedPreconditionError(
        "backend: microvm: one run at a time in a microVM session, and another is in progress");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    NoticeEndLocked();
    if (state_ != v1::SANDBOX_STATE_WARM) {
      return absl::FailedPreconditionError(
          absl::StrCat("the microVM is ", v1::SandboxState_Name(state_),
                       cause_.empty() ? "" : absl::StrCat(": ", cause_)));
    }
    state_ = v1::SANDBOX_STATE_ACTIVE;
  }
  ExecRequest request{.argv = command.argv, .workdir = command.workdir};
  request.env = GuestEnvironment(command.env, egress_ != nullptr);
  channel_->Queue(FrameType::kExec, EncodeExec(request));
  for (size_t at = 0; at < command.stdin_data.size(); at += kStdinChunk) {
    channel_->Queue(FrameType::kStdin, command.stdin_data.substr(at, kStdinChunk));
  }
  channel_->Queue(FrameType::kStdinEof, "");
  v1::SandboxEvent starting = Event();
  starting.mutable_starting();
  bool wanted = emit(starting);

  const absl::Time deadline = command.timeout > absl::ZeroDuration() ? absl::Now() + command.timeout
                                                                     : absl::InfiniteFuture();
  std::string kill_reason, kill_detail;
  // Threat: a hung guest never answers the kill; the run (and the session) must end anyway.
  absl::Time lost_at = absl::InfiniteFuture();
  auto kill_run = [&](std::string reason, std::string detail) {
    if (!kill_reason.empty()) return;
    kill_reason = std::move(reason);
    kill_detail = std::move(detail);
    channel_->Queue(FrameType::kKill, "");
    lost_at = absl::Now() + kKillAnswer;
  };
  auto back_to_warm = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == v1::SANDBOX_STATE_ACTIVE) state_ = v1::SANDBOX_STATE_WARM;
  };
  while (true) {
    if (!wanted) kill_run("stopped", "the client cancelled the run");
    if (command.stop_requested) {
      if (std::string why = command.stop_requested(); !why.empty()) kill_run("stopped", why);
    }
    if (absl::Now() >= deadline) {
      kill_run("timeout", absl::StrCat("timeout after ", absl::FormatDuration(command.timeout)));
    }
    std::vector<Frame> frames;
    std::string error;
    if (stopping_ || !PumpAgent(absl::Milliseconds(100), &frames, &error)) {
      GuestLost(stopping_ ? "stopped" : error, emit);
      return absl::OkStatus();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (PanickedLocked()) {
        error = "the guest panicked";
        process_->Kill();
      } else if (process_->Ended().has_value()) {
        error = "the hypervisor exited";
      } else if (egress_ != nullptr && egress_->guest_misbehaved()) {
        error = absl::StrCat("the guest broke the egress channel: ", egress_->failure());
        process_->Kill();
      }
    }
    if (!error.empty()) {
      GuestLost(error, emit);
      return absl::OkStatus();
    }
    for (const Frame& frame : frames) {
      v1::SandboxEvent event = Event();
      switch (frame.type) {
        case FrameType::kStarted:
          // The sandbox's outermost host process: the hypervisor.
          event.mutable_ready()->set_pid(process_->pid());
          break;
        case FrameType::kStdout:
          event.set_stdout(frame.payload);
          break;
        case FrameType::kStderr:
          event.set_stderr(frame.payload);
          break;
        case FrameType::kFailed: {
          // As a shell reports a command it cannot run: the reason on stderr, status 127.
          event.set_stderr(absl::StrCat("ccsandbox-agent: ", frame.payload, "\n"));
          if (wanted) emit(event);
          v1::SandboxEvent exit = Event();
          exit.mutable_exit()->set_exit_code(127);
          back_to_warm();
          if (wanted) emit(exit);
          return absl::OkStatus();
        }
        case FrameType::kExit: {
          const int32_t code = static_cast<int32_t>(DecodeU32(frame.payload));
          if (!kill_reason.empty()) {
            event.mutable_killed()->set_reason(kill_reason);
            event.mutable_killed()->set_signal(code < 0 ? -code : SIGKILL);
            event.mutable_killed()->set_detail(kill_detail);
          } else {
            event.mutable_exit()->set_exit_code(code);
          }
          back_to_warm();
          if (wanted) emit(event);
          return absl::OkStatus();
        }
        default:
          continue;  // nothing else is a run's
      }
      if (wanted) wanted = emit(event);
    }
    if (absl::Now() >= lost_at) {
      GuestLost(absl::StrCat("the guest hung: it did not end the run within ",
                             absl::FormatDuration(kKillAnswer), " of its SIGKILL"),
                emit, kill_reason);
      return absl::OkStatus();
    }
  }
}

absl::Status QemuGuest::Stop(absl::Duration grace) {
  {
    std::lock_guard<std::mutex> watch_lock(watch_mu_);
    stopping_ = true;
  }
  watch_cv_.notify_all();
  if (watchdog_.joinable() && watchdog_.get_id() != std::this_thread::get_id()) watchdog_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == v1::SANDBOX_STATE_DESTROYED) return absl::OkStatus();
    // SIGTERM: qemu powers the VM off and exits; a run in progress sees its channel close.
    process_->PowerOff();
  }
  std::lock_guard<std::timed_mutex> run_lock(exec_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ == v1::SANDBOX_STATE_DESTROYED) return absl::OkStatus();
  process_->WaitUntil(absl::Now() + grace);
  process_->Kill();
  channel_.reset();
  egress_.reset();
  dir_->Remove();
  slot_->Release();
  state_ = v1::SANDBOX_STATE_DESTROYED;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Guest>> QemuRuntime::Start(const GuestStart& start) {
  const v1::SandboxSpec& spec = start.spec;
  const GuestLayout* layout = start.layout.has_value() ? &*start.layout : nullptr;
  // What the guest would not really have is refused, never pretended.
  if (absl::Status shared = CheckBindsShared(spec, layout); !shared.ok()) return shared;
  if (layout != nullptr && layout->shares.size() > static_cast<size_t>(kMaxGuestShares)) {
    return absl::FailedPreconditionError(absl::StrCat("backend: microvm: ", layout->shares.size(),
                                                      " shares; a microVM has room for ",
                                                      kMaxGuestShares));
  }
  // Threat: a caller's Launch (or terminal) storm booting guests until the host runs out of
  // memory; each guest's cgroup bounds only that guest.
  auto slot = std::make_unique<GuestSlot>(live_);
  if (const int live = live_->fetch_add(1) + 1;
      config_.max_guests > 0 && live > config_.max_guests) {
    return absl::ResourceExhaustedError(
        absl::StrCat("backend: microvm: ", config_.max_guests,
                     " microVMs are booting or running, the most this broker runs at once "
                     "(--microvm-max-guests)"));
  }
  std::string path = start.state_dir;
  const bool owned = path.empty();
  if (owned) {
    path = absl::StrCat(config_.state_root, "/ccsandbox-microvm-XXXXXX");
    if (mkdtemp(path.data()) == nullptr) {
      return absl::InternalError(absl::StrCat("mkdtemp ", path, ": ", strerror(errno)));
    }
  }
  if (absl::StrContains(path, ",")) {
    return absl::InvalidArgumentError("the microVM state directory may not contain a comma");
  }
  // Declared before the process: a failed Start kills the hypervisor, then removes its files.
  auto dir = std::make_unique<StateDir>(path, owned);
  if (dir->File("agent.sock").size() >= sizeof(sockaddr_un::sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the microVM state directory is too long for a socket path: ", path));
  }
  if (absl::Status written = WriteBootImage(config_.image, config_.agent, dir->File("boot.img"));
      !written.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("backend: microvm: the session image: ", written.message()));
  }
  const HypervisorStarter& starter =
      start.hypervisor ? start.hypervisor : HypervisorStarter(StartHostHypervisor);
  absl::StatusOr<std::unique_ptr<Hypervisor>> started =
      starter(QemuArgv(config_, *dir, layout, start.egress.has_value()), dir->path());
  if (!started.ok()) {
    return absl::UnavailableError(absl::StrCat("backend: microvm: ", started.status().message()));
  }
  std::unique_ptr<Hypervisor> process = *std::move(started);
  const absl::Time deadline = absl::Now() + config_.boot_timeout;
  auto failed = [&](const std::string& what) {
    return absl::UnavailableError(absl::StrCat("backend: microvm: the boot failed: ", what, "; ",
                                               EndCause(*process, process->Ended())));
  };
  // qemu creates the sockets once it is up; the agent answers once the guest has booted.
  std::unique_ptr<AgentChannel> channel;
  UniqueFd egress_channel;
  while (channel == nullptr || (start.egress && !egress_channel.valid())) {
    if (process->Ended().has_value()) return failed("the hypervisor ended before its socket");
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("backend: microvm: no agent socket within ",
                                                      absl::FormatDuration(config_.boot_timeout)));
    }
    absl::StatusOr<UniqueFd> fd =
        ConnectUnix(dir->File(channel == nullptr ? "agent.sock" : "egress.sock"));
    if (!fd.ok()) {
      absl::SleepFor(absl::Milliseconds(20));
    } else if (channel == nullptr) {
      channel = std::make_unique<AgentChannel>(std::move(*fd));
    } else {
      egress_channel = std::move(*fd);
    }
  }
  std::unique_ptr<EgressBridge> egress;
  if (start.egress) {
    absl::StatusOr<std::unique_ptr<EgressBridge>> bridge =
        EgressBridge::Start(std::move(egress_channel), {.http_socket = start.egress->http_socket,
                                                        .socks_socket = start.egress->socks_socket,
                                                        .name = spec.session_id()});
    if (!bridge.ok()) return bridge.status();
    egress = std::move(*bridge);
  }
  channel->Queue(FrameType::kHello, "");
  // With a layout the agent builds the guest's root right after its hello; warm once it has.
  if (layout != nullptr) channel->Queue(FrameType::kSetup, EncodeSetup(SetupOf(*layout)));
  bool hello = false;
  while (true) {
    std::vector<Frame> frames;
    std::string error;
    if (!channel->Pump(absl::Milliseconds(100), &frames, &error)) return failed(error);
    for (const Frame& frame : frames) {
      if (!hello) {
        if (frame.type != FrameType::kHelloReply || frame.payload != kAgentVersion) {
          return failed(absl::StrCat("the agent did not answer as ", kAgentVersion));
        }
        hello = true;
      } else if (frame.type == FrameType::kFailed) {
        return absl::UnavailableError(
            absl::StrCat("backend: microvm: the guest could not build its root from the shares: ",
                         frame.payload));
      } else if (frame.type != FrameType::kSetupDone) {
        return failed("the agent did not answer the setup");
      }
      if (hello && (layout == nullptr || frame.type == FrameType::kSetupDone)) {
        return std::unique_ptr<Guest>(std::make_unique<QemuGuest>(
            std::move(slot), std::move(dir), std::move(process), std::move(channel),
            std::move(egress), config_.answer_timeout, start.lost));
      }
    }
    if (process->Ended().has_value()) return failed("the hypervisor ended before the agent");
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("backend: microvm: the guest's agent did not answer within ",
                       absl::FormatDuration(config_.boot_timeout), " ('",
                       QuotableLine(process->ConsoleTail()), "')"));
    }
  }
}

}  // namespace ccsandbox::broker::microvm
