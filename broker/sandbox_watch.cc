#include "broker/sandbox_watch.h"

#include <signal.h>

#include <chrono>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "base/kill_cause.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker {

struct SandboxWatch::Watched {
  grpc::ClientContext context;
  std::thread thread;
  absl::Notification ended;  // the call is over
  absl::Mutex mu;
  std::optional<absl::StatusOr<v1::SandboxLifecycle::Warm>> warm ABSL_GUARDED_BY(mu);
  bool stopping ABSL_GUARDED_BY(mu) = false;
};

SandboxWatch::~SandboxWatch() {
  std::map<std::string, std::shared_ptr<Watched>> all;
  {
    absl::MutexLock lock(&mu_);
    all.swap(watched_);
  }
  for (auto& [id, watched] : all) {
    {
      absl::MutexLock lock(&watched->mu);
      watched->stopping = true;
    }
    watched->context.TryCancel();
  }
  for (auto& [id, watched] : all) watched->thread.join();
}

absl::StatusOr<v1::SandboxLifecycle::Warm> SandboxWatch::Start(
    v1::SandboxLauncher::StubInterface& launcher, const v1::LaunchPlan& plan,
    std::function<void(const std::string&)> on_end,
    std::function<void(const v1::SandboxUsage&)> on_usage) {
  auto watched = std::make_shared<Watched>();
  {
    absl::MutexLock lock(&mu_);
    if (!watched_.emplace(plan.run_id(), watched).second) {
      return absl::AlreadyExistsError(absl::StrCat("sandbox '", plan.run_id(), "' is watched"));
    }
  }
  watched->thread = std::thread(
      [&launcher, plan, watched, on_end = std::move(on_end), on_usage = std::move(on_usage)] {
        std::unique_ptr<grpc::ClientReaderInterface<v1::SandboxLifecycle>> reader =
            launcher.StartSandbox(&watched->context, plan);
        v1::SandboxLifecycle message;
        std::string reason;
        while (reader->Read(&message)) {
          if (message.has_warm()) {
            absl::MutexLock lock(&watched->mu);
            if (!watched->warm.has_value()) watched->warm = message.warm();
          } else if (message.has_ended()) {
            reason = message.ended().reason();
          } else if (message.has_usage() && on_usage) {
            on_usage(message.usage());
          }
        }
        const grpc::Status status = reader->Finish();
        if (reason.empty()) {
          reason = status.ok() ? "the launcher ended the sandbox"
                               : absl::StrCat("launcher connection lost: ", status.error_message());
        }
        bool was_warm, stopping;
        {
          absl::MutexLock lock(&watched->mu);
          was_warm = watched->warm.has_value();
          if (!was_warm) {
            watched->warm = absl::StatusOr<v1::SandboxLifecycle::Warm>(
                status.ok() ? absl::UnavailableError(reason)
                            : absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                                           status.error_message()));
          }
          stopping = watched->stopping;
        }
        watched->ended.Notify();
        if (was_warm && !stopping) on_end(reason);
      });
  absl::StatusOr<v1::SandboxLifecycle::Warm> warm = absl::UnavailableError("");
  {
    absl::MutexLock lock(&watched->mu);
    auto known = [&watched]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(watched->mu) {
      return watched->warm.has_value();
    };
    watched->mu.Await(absl::Condition(&known));  // the launcher bounds the start itself
    warm = *watched->warm;
    if (!warm.ok()) watched->stopping = true;
  }
  if (!warm.ok()) {
    watched->context.TryCancel();
    watched->thread.join();
    absl::MutexLock lock(&mu_);
    watched_.erase(plan.run_id());
  }
  return warm;
}

void SandboxWatch::Stop(v1::SandboxLauncher::StubInterface& launcher, const std::string& id,
                        const std::string& reason, absl::Duration limit) {
  std::shared_ptr<Watched> watched;
  {
    absl::MutexLock lock(&mu_);
    auto found = watched_.find(id);
    if (found == watched_.end()) return;
    watched = found->second;
    watched_.erase(found);
  }
  {
    absl::MutexLock lock(&watched->mu);
    watched->stopping = true;
  }
  if (!watched->ended.HasBeenNotified()) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::SignalRequest request;
    request.set_run_id(id);
    request.set_signal(SIGKILL);
    request.set_reason(std::string(kKilledStopped));
    request.set_detail(reason);
    v1::SignalResponse response;
    const grpc::Status sent = launcher.Signal(&context, request, &response);
    if (!sent.ok() || !watched->ended.WaitForNotificationWithTimeout(limit)) {
      // Not reached, or not ended in time: cancelling the call ends it in the launcher too.
      spdlog::warn("sandbox {}: stop {}; cancelling its call", id,
                   sent.ok() ? "took too long" : sent.error_message());
      watched->context.TryCancel();
    }
  }
  watched->thread.join();
}

}  // namespace ccsandbox::broker
