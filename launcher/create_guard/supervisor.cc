#include "launcher/create_guard/supervisor.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>

#include "absl/strings/str_cat.h"
#include "launcher/create_guard/handle_call.h"
#include "launcher/create_guard/notify_channel.h"
#include "launcher/create_guard/proc_tracee_access.h"
#include "launcher/create_guard/seccomp_notify.h"
#include "launcher/create_guard/tracee_fs_context.h"

namespace ccsandbox::launcher {
namespace {

enum class Ready { kFd, kStop, kHangUp };

// Waits until `fd` is readable or `stop` fires.
absl::StatusOr<Ready> Wait(int fd, int stop) {
  pollfd fds[2] = {{fd, POLLIN, 0}, {stop, POLLIN, 0}};
  for (;;) {
    int n = poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return absl::InternalError(absl::StrCat("create supervisor: poll: ", strerror(errno)));
    if (fds[1].revents != 0) return Ready::kStop;
    if (fds[0].revents & POLLIN) return Ready::kFd;
    if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) return Ready::kHangUp;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<CreateSupervisor>> CreateSupervisor::Start(
    Options options, UniqueFd channel, ViolationCallback on_violation, FailureCallback on_failure) {
  absl::StatusOr<CreateRules> rules = CreateRules::Create(
      options.deny_patterns, options.trusted_names, options.protected_paths, options.mounts);
  if (!rules.ok()) return rules.status();
  if (!channel.valid()) return absl::InvalidArgumentError("create supervisor: no channel");
  auto supervisor = std::unique_ptr<CreateSupervisor>(new CreateSupervisor());
  supervisor->options_ = std::move(options);
  supervisor->rules_.emplace(std::move(*rules));
  supervisor->on_violation_ = std::move(on_violation);
  supervisor->on_failure_ = std::move(on_failure);
  supervisor->stop_.Reset(eventfd(0, EFD_CLOEXEC));
  if (!supervisor->stop_.valid()) {
    return absl::InternalError(absl::StrCat("create supervisor: eventfd: ", strerror(errno)));
  }
  CreateSupervisor* self = supervisor.get();
  supervisor->thread_ =
      std::thread([self, ch = std::move(channel)]() mutable { self->Run(std::move(ch)); });
  return supervisor;
}

CreateSupervisor::~CreateSupervisor() { Join(); }

void CreateSupervisor::Join() {
  Stop();
  if (thread_.joinable()) thread_.join();
}

void CreateSupervisor::Stop() {
  const uint64_t one = 1;
  (void)!write(stop_.get(), &one, sizeof(one));
}

absl::Status CreateSupervisor::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

CreateSupervisor::Stats CreateSupervisor::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

bool CreateSupervisor::AwaitTrapped(uint64_t count, absl::Duration timeout) const {
  struct Wanted {
    const Stats* stats;
    uint64_t count;
  } wanted{&stats_, count};
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(
      absl::Condition(
          +[](Wanted* w) { return w->stats->trapped >= w->count; }, &wanted),
      timeout);
}

void CreateSupervisor::Count(CallOutcome outcome) {
  absl::MutexLock lock(&mu_);
  if (outcome == CallOutcome::kWithdrawn) return;
  ++stats_.trapped;
  switch (outcome) {
    case CallOutcome::kWithdrawn:
    case CallOutcome::kDropped:
      break;
    case CallOutcome::kContinued:
      ++stats_.continued;
      break;
    case CallOutcome::kPerformed:
      ++stats_.performed;
      break;
    case CallOutcome::kFailed:
      ++stats_.failed;
      break;
    case CallOutcome::kRefused:
      ++stats_.refused;
      break;
  }
}

void CreateSupervisor::Run(UniqueFd channel) {
  // Serve returns only after the notify fd is closed: every trapped call fails
  // from then on.
  absl::Status status = Serve(std::move(channel));
  {
    absl::MutexLock lock(&mu_);
    status_ = status;
  }
  running_.store(false);
  if (!status.ok() && on_failure_) on_failure_(status);
}

absl::Status CreateSupervisor::Serve(UniqueFd channel) {
  absl::StatusOr<std::unique_ptr<TraceeFsContext>> fs =
      TraceeFsContext::ForThisThread(options_.free_dirs);
  if (!fs.ok()) return fs.status();

  absl::StatusOr<Ready> ready = Wait(channel.get(), stop_.get());
  if (!ready.ok()) return ready.status();
  if (*ready == Ready::kStop) {
    // Stopped once the sandbox was gone: whatever the shim left on the channel (its fd, or
    // nothing before it closed) says whether the command ever started.
    pollfd pending = {channel.get(), POLLIN, 0};
    if (poll(&pending, 1, 0) != 1) return absl::OkStatus();
  }
  absl::StatusOr<UniqueFd> fd = ReceiveNotifyFd(channel.get());
  channel.Reset();
  if (absl::IsUnavailable(fd.status())) {
    never_started_.store(true);  // the run reports it; not the supervisor's death
    return absl::OkStatus();
  }
  if (!fd.ok()) return fd.status();
  if (*ready == Ready::kStop) return absl::OkStatus();
  absl::StatusOr<SeccompNotify> notify = SeccompNotify::Create(std::move(*fd));
  if (!notify.ok()) return notify.status();

  ProcTraceeAccess tracee(**fs);
  CreateEmulator emulator(tracee, std::move(*rules_));
  rules_.reset();
  for (;;) {
    ready = Wait(notify->fd(), stop_.get());
    if (!ready.ok()) return ready.status();
    // kHangUp: no process is left under the filter — the sandbox is gone.
    if (*ready != Ready::kFd) return absl::OkStatus();
    const absl::Time seen = absl::Now();
    absl::StatusOr<CallOutcome> outcome = HandleNextCall(*notify, emulator, on_violation_);
    if (!outcome.ok()) return outcome.status();
    if (options_.on_call) options_.on_call(*outcome, absl::Now() - seen);
    Count(*outcome);
  }
}

}  // namespace ccsandbox::launcher
