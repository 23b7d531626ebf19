#include "launcher/run_registry.h"

#include <signal.h>

#include "absl/strings/str_cat.h"

namespace ccsandbox::launcher {

RegisteredRun::~RegisteredRun() {
  if (registry_ != nullptr) registry_->Remove(run_id_);
}

absl::StatusOr<RegisteredRun> RunRegistry::Register(const std::string& run_id, uid_t owner) {
  absl::StatusOr<std::unique_ptr<RunControl>> control = RunControl::Create();
  if (!control.ok()) return control.status();
  if (absl::Status added = Add(run_id, owner, control->get()); !added.ok()) return added;
  return RegisteredRun(*this, run_id, *std::move(control));
}

absl::Status RunRegistry::Add(const std::string& run_id, uid_t owner, RunControl* control) {
  absl::MutexLock lock(&mu_);
  if (!runs_.emplace(run_id, Entry{owner, control}).second) {
    return absl::AlreadyExistsError(absl::StrCat("runId: '", run_id, "' is already running"));
  }
  return absl::OkStatus();
}

void RunRegistry::Remove(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  runs_.erase(run_id);
}

absl::Status RunRegistry::Signal(const std::string& run_id, uid_t caller, int signal,
                                 KillCause cause) {
  absl::MutexLock lock(&mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end() || it->second.owner != caller) {
    return absl::NotFoundError(absl::StrCat("runId: no running command '", run_id, "'"));
  }
  it->second.control->RequestSignal(signal, std::move(cause));
  return absl::OkStatus();
}

void RunRegistry::KillAll(const KillCause& cause) {
  absl::MutexLock lock(&mu_);
  for (auto& [id, entry] : runs_) entry.control->RequestSignal(SIGKILL, cause);
}

}  // namespace ccsandbox::launcher
