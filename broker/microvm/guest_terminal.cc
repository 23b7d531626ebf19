#include "broker/microvm/guest_terminal.h"

#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/unique_fd.h"
#include "policy/plan/terminal_profile.h"

namespace ccsandbox::broker::microvm {
namespace {

constexpr size_t kInputChunk = 64 * 1024;

class AgentTerminal : public GuestTerminal {
 public:
  AgentTerminal(TerminalAgent* agent, TerminalCallbacks callbacks)
      : agent_(agent),
        callbacks_(std::move(callbacks)),
        wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~AgentTerminal() override {
    Close(absl::ZeroDuration());
    if (thread_.joinable()) thread_.join();
  }

  // Starts the terminal's thread; Acquire's answer.
  absl::Status Begin(TerminalRequest request) {
    if (!wake_.valid()) return absl::InternalError("eventfd failed");
    std::promise<absl::Status> acquired;
    std::future<absl::Status> answer = acquired.get_future();
    thread_ =
        std::thread([this, request = std::move(request), acquired = std::move(acquired)]() mutable {
          absl::Status taken = agent_->Acquire();
          const bool ok = taken.ok();
          if (!ok) MarkEnded();
          acquired.set_value(std::move(taken));
          if (ok) Serve(request);
        });
    return answer.get();
  }

  absl::Status Input(const std::string& bytes) override {
    if (bytes.size() > kMaxTerminalInput) {
      return absl::InvalidArgumentError(
          absl::StrCat("input of ", bytes.size(), " bytes; at most ", kMaxTerminalInput));
    }
    return Request([&] { input_ += bytes; });
  }
  absl::Status Resize(uint16_t rows, uint16_t cols) override {
    if (absl::Status size = policy::CheckTerminalSize(rows, cols); !size.ok()) return size;
    return Request([&] { size_ = std::pair{rows, cols}; });
  }
  absl::Status Signal(int sig) override {
    if (absl::Status allowed = policy::CheckTerminalSignal(sig); !allowed.ok()) return allowed;
    return Request([&] { signals_.push_back(sig); });
  }
  void Close(absl::Duration grace) override {
    Request([&] {
      if (!close_.has_value()) close_ = grace;
    }).IgnoreError();
  }

 private:
  template <typename F>
  absl::Status Request(F change) {
    {
      absl::MutexLock lock(&mu_);
      if (ended_) return absl::FailedPreconditionError("the terminal has ended");
      change();
    }
    const uint64_t one = 1;
    (void)!write(wake_.get(), &one, sizeof(one));
    return absl::OkStatus();
  }
  void MarkEnded() {
    absl::MutexLock lock(&mu_);
    ended_ = true;
  }

  // The requests made since the last look, as frames; a close starts the hang-up.
  void SendRequests(std::optional<absl::Time>* kill_at) {
    uint64_t count;
    (void)!read(wake_.get(), &count, sizeof(count));
    absl::MutexLock lock(&mu_);
    for (size_t at = 0; at < input_.size(); at += kInputChunk) {
      agent_->Queue(FrameType::kStdin, input_.substr(at, kInputChunk));
    }
    input_.clear();
    if (size_.has_value())
      agent_->Queue(FrameType::kWindow, EncodeWindow(size_->first, size_->second));
    size_.reset();
    for (int sig : signals_) agent_->Queue(FrameType::kSignal, EncodeU32(sig));
    signals_.clear();
    if (close_.has_value() && !hung_up_) {
      hung_up_ = true;
      agent_->Queue(FrameType::kHangup, "");
      *kill_at = absl::Now() + *close_;
    }
  }

  void Serve(const TerminalRequest& request) {
    agent_->Queue(FrameType::kTerminal, EncodeTerminal(request));
    std::optional<absl::Time> kill_at, lost_at;
    int code = -SIGKILL;
    std::string cause;
    bool done = false;
    while (!done) {
      SendRequests(&kill_at);
      const absl::Time now = absl::Now();
      if (kill_at.has_value() && now >= *kill_at) {
        agent_->Queue(FrameType::kKill, "");
        kill_at.reset();
        lost_at = now + kKillAnswer;
      }
      if (lost_at.has_value() && now >= *lost_at) {
        cause = agent_->Lost(absl::StrCat("the guest did not end the terminal within ",
                                          absl::FormatDuration(kKillAnswer), " of its SIGKILL"));
        break;
      }
      absl::Duration wait = absl::Milliseconds(100);
      for (const auto& at : {kill_at, lost_at}) {
        if (at.has_value()) wait = std::min(wait, std::max(absl::ZeroDuration(), *at - now));
      }
      std::vector<Frame> frames;
      std::string error;
      if (!agent_->Pump(wait, wake_.get(), &frames, &error)) {
        cause = agent_->Lost(error);
        break;
      }
      for (const Frame& frame : frames) {
        if (frame.type == FrameType::kStdout) {
          callbacks_.output(frame.payload);
        } else if (frame.type == FrameType::kFailed) {
          // As a shell reports a command it cannot run.
          callbacks_.output(absl::StrCat("ccsandbox-agent: ", frame.payload, "\r\n"));
          code = 127;
          done = true;
          break;
        } else if (frame.type == FrameType::kExit) {
          code = static_cast<int32_t>(DecodeU32(frame.payload));
          done = true;
          break;
        }
      }
    }
    MarkEnded();
    callbacks_.exited(code, cause);
    agent_->Release();
  }

  TerminalAgent* const agent_;
  const TerminalCallbacks callbacks_;
  UniqueFd wake_;  // eventfd: a request is waiting
  absl::Mutex mu_;
  std::string input_ ABSL_GUARDED_BY(mu_);
  std::optional<std::pair<uint16_t, uint16_t>> size_ ABSL_GUARDED_BY(mu_);
  std::vector<int> signals_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Duration> close_ ABSL_GUARDED_BY(mu_);
  bool hung_up_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace

std::vector<std::string> TerminalArgv(const GuestCommand& command) {
  if (!command.argv.empty()) return command.argv;
  const auto shell = command.env.find("SHELL");
  if (shell != command.env.end() && !shell->second.empty() && shell->second[0] == '/') {
    return {shell->second, "-i"};
  }
  return {"/bin/sh", "-i"};
}

absl::StatusOr<std::unique_ptr<GuestTerminal>> OpenGuestTerminal(TerminalAgent* agent,
                                                                 const GuestCommand& command,
                                                                 uint16_t rows, uint16_t cols,
                                                                 TerminalCallbacks callbacks) {
  if (absl::Status size = policy::CheckTerminalSize(rows, cols); !size.ok()) return size;
  if (!callbacks.output || !callbacks.exited) {
    return absl::InvalidArgumentError("a terminal needs its output and exited callbacks");
  }
  TerminalRequest request{.exec = {.argv = TerminalArgv(command), .workdir = command.workdir},
                          .rows = rows,
                          .cols = cols};
  for (const auto& [name, value] : command.env) request.exec.env.push_back(name + "=" + value);
  auto terminal = std::make_unique<AgentTerminal>(agent, std::move(callbacks));
  if (absl::Status begun = terminal->Begin(std::move(request)); !begun.ok()) return begun;
  return std::unique_ptr<GuestTerminal>(std::move(terminal));
}

}  // namespace ccsandbox::broker::microvm
