#include "broker/launcher_hypervisor.h"

#include <signal.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker {
namespace {

constexpr absl::Duration kReadyWithin = absl::Seconds(15);
constexpr absl::Duration kGoneWithin = absl::Seconds(5);

class LauncherHypervisor : public microvm::Hypervisor {
 public:
  using EndFn = std::function<void(const std::string&, const std::string&)>;
  LauncherHypervisor(v1::SandboxLauncher::StubInterface& launcher, v1::LaunchPlan plan,
                     std::function<void(const v1::SandboxEvent&)> on_violation, EndFn on_end)
      : launcher_(launcher),
        plan_(std::move(plan)),
        on_violation_(std::move(on_violation)),
        on_end_(std::move(on_end)) {}
  ~LauncherHypervisor() override { Kill(); }

  // Starts the call and waits for the run's `ready` (its pid) or its end.
  absl::Status Start() {
    reader_thread_ = std::thread([this] { Read(); });
    absl::MutexLock lock(&mu_);
    auto started = [this]()
                       ABSL_SHARED_LOCKS_REQUIRED(mu_) { return pid_ > 0 || ended_.has_value(); };
    if (!mu_.AwaitWithTimeout(absl::Condition(&started), kReadyWithin)) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the launcher did not start the hypervisor within ", absl::FormatDuration(kReadyWithin)));
    }
    if (pid_ <= 0) {
      return absl::UnavailableError(absl::StrCat(
          "the launcher did not run the hypervisor: ", *ended_, " ('", TailLocked(), "')"));
    }
    return absl::OkStatus();
  }

  int pid() const override {
    absl::MutexLock lock(&mu_);
    return pid_;
  }
  std::optional<std::string> WaitUntil(absl::Time deadline) override {
    absl::MutexLock lock(&mu_);
    auto ended = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return ended_.has_value(); };
    mu_.AwaitWithDeadline(absl::Condition(&ended), deadline);
    return ended_;
  }
  void PowerOff() override {
    {
      absl::MutexLock lock(&mu_);
      powered_off_ = true;
    }
    Signal(SIGTERM, "the microVM is powered off");
  }
  void Kill() override {
    {
      absl::MutexLock lock(&mu_);
      if (killed_) return;
      killed_ = true;
    }
    if (!WaitUntil(absl::InfinitePast()).has_value()) {
      Signal(SIGKILL, "the microVM is stopped");
      if (!WaitUntil(absl::Now() + kGoneWithin).has_value()) {
        // The launcher did not answer: ending its call makes it kill the run.
        context_.TryCancel();
      }
    }
    if (reader_thread_.joinable()) reader_thread_.join();
  }
  uint64_t ConsoleSize() const override {
    absl::MutexLock lock(&mu_);
    return console_size_;
  }
  std::string ConsoleTail() const override {
    absl::MutexLock lock(&mu_);
    return TailLocked();
  }

 private:
  std::string TailLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_) { return console_; }

  void Signal(int signal, const std::string& detail) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::SignalRequest request;
    request.set_run_id(plan_.run_id());
    request.set_signal(signal);
    request.set_reason("stopped");
    request.set_detail(detail);
    v1::SignalResponse response;
    if (grpc::Status status = launcher_.Signal(&ctx, request, &response); !status.ok()) {
      spdlog::warn("microVM {}: signal {} not delivered: {}", plan_.run_id(), signal,
                   status.error_message());
    }
  }

  void Read() {
    std::unique_ptr<grpc::ClientReaderInterface<v1::SandboxEvent>> reader =
        launcher_.Run(&context_, plan_);
    v1::SandboxEvent event;
    std::optional<std::string> end;
    while (reader->Read(&event)) {
      if (event.has_violation()) {
        if (on_violation_) on_violation_(event);
        continue;
      }
      absl::MutexLock lock(&mu_);
      if (event.has_ready()) pid_ = static_cast<int>(event.ready().pid());
      for (const std::string* bytes : {&event.stdout(), &event.stderr()}) {
        if (bytes->empty()) continue;
        console_ += *bytes;
        console_size_ += bytes->size();
        if (console_.size() > microvm::kConsoleTail) {
          console_.erase(0, console_.size() - microvm::kConsoleTail);
        }
      }
      if (event.has_exit()) end = absl::StrCat("exited with status ", event.exit().exit_code());
      if (event.has_killed()) {
        end =
            absl::StrCat("was killed (", event.killed().reason(),
                         event.killed().detail().empty() ? "" : ": ", event.killed().detail(), ")");
      }
    }
    const grpc::Status status = reader->Finish();
    std::string how, console;
    bool by_itself = false;
    {
      absl::MutexLock lock(&mu_);
      ended_ = end.has_value()
                   ? *end
                   : absl::StrCat("ended with the launcher's call (", status.error_message(), ")");
      how = *ended_;
      console = console_;
      by_itself = !killed_ && !powered_off_ && pid_ > 0;
    }
    if (by_itself && on_end_) on_end_(how, console);
  }

  v1::SandboxLauncher::StubInterface& launcher_;
  const v1::LaunchPlan plan_;
  const std::function<void(const v1::SandboxEvent&)> on_violation_;
  const EndFn on_end_;
  grpc::ClientContext context_;
  mutable absl::Mutex mu_;
  int pid_ ABSL_GUARDED_BY(mu_) = 0;
  std::string console_ ABSL_GUARDED_BY(mu_);
  uint64_t console_size_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<std::string> ended_ ABSL_GUARDED_BY(mu_);
  bool killed_ ABSL_GUARDED_BY(mu_) = false;
  bool powered_off_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reader_thread_;
};

}  // namespace

microvm::HypervisorStarter LauncherHypervisorStarter(
    v1::SandboxLauncher::StubInterface& launcher, v1::LaunchPlan plan,
    std::function<void(const v1::SandboxEvent&)> on_violation,
    std::function<void(const std::string& how, const std::string& console)> on_end) {
  return [&launcher, plan = std::move(plan), on_violation = std::move(on_violation),
          on_end = std::move(on_end)](
             const std::vector<std::string>& argv,
             const std::string&) -> absl::StatusOr<std::unique_ptr<microvm::Hypervisor>> {
    v1::LaunchPlan run = plan;
    run.clear_argv();
    for (const std::string& arg : argv) run.add_argv(arg);
    auto hypervisor =
        std::make_unique<LauncherHypervisor>(launcher, std::move(run), on_violation, on_end);
    if (absl::Status started = hypervisor->Start(); !started.ok()) return started;
    return std::unique_ptr<microvm::Hypervisor>(std::move(hypervisor));
  };
}

}  // namespace ccsandbox::broker
