#include "broker/session_table.h"

#include <limits.h>
#include <stdlib.h>

#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "google/protobuf/util/message_differencer.h"
#include "policy/plan/input_limits.h"

namespace ccsandbox::broker {
namespace {

absl::Status NotFound(const std::string& id) {
  return absl::NotFoundError(absl::StrCat("sessionId: no session ", policy::QuoteInput(id)));
}

}  // namespace

absl::Status SessionTable::Create(const v1::SandboxSpec& spec, const v1::SandboxHandle& handle,
                                  policy::DenyPaths deny,
                                  std::optional<v1::CreateGuardPlan> create_guard) {
  absl::MutexLock lock(&mu_);
  if (!sessions_
           .emplace(spec.session_id(),
                    Session{spec, handle, {}, std::move(deny), std::move(create_guard)})
           .second) {
    return absl::AlreadyExistsError(
        absl::StrCat("sessionId: session '", spec.session_id(), "' already exists"));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::SandboxHandle> SessionTable::SameLaunch(const v1::SandboxSpec& spec,
                                                           v1::SandboxBackend requested) const {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(spec.session_id());
  if (it == sessions_.end()) return NotFound(spec.session_id());
  if (it->second.handle.requested_backend() != requested ||
      !google::protobuf::util::MessageDifferencer::Equals(it->second.spec, spec)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "sessionId: session '", spec.session_id(),
        "' already exists with another spec or backend (a Launch is idempotent only for the "
        "identical request)"));
  }
  return it->second.handle;
}

absl::StatusOr<v1::SandboxHandle> SessionTable::Get(const std::string& session_id) const {
  absl::MutexLock lock(&mu_);
  auto it = Live(session_id);
  if (it == sessions_.end()) return NotFound(session_id);
  return it->second.handle;
}

std::vector<v1::SandboxHandle> SessionTable::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<v1::SandboxHandle> handles;
  for (const auto& [id, session] : sessions_) {
    if (!session.destroying) handles.push_back(session.handle);
  }
  return handles;
}

std::vector<std::string> SessionTable::SessionsBinding(const std::string& dir) const {
  std::vector<std::pair<std::string, std::string>> binds;  // (session, host path)
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, session] : sessions_) {
      for (const v1::SandboxBindMount& bind : session.spec.bind_mounts()) {
        binds.emplace_back(id, bind.host_path());
      }
    }
  }
  std::vector<std::string> users;
  for (const auto& [id, path] : binds) {
    char resolved[PATH_MAX];
    const std::string spelled = ::realpath(path.c_str(), resolved) != nullptr ? resolved : path;
    const bool overlaps = IsUnderOrEqual(spelled, dir) || IsUnderOrEqual(dir, spelled) ||
                          IsUnderOrEqual(path, dir) || IsUnderOrEqual(dir, path);
    if (overlaps && (users.empty() || users.back() != id)) users.push_back(id);
  }
  return users;
}

absl::StatusOr<SessionTable::RunStart> SessionTable::Plan(const std::string& session_id) const {
  absl::MutexLock lock(&mu_);
  auto it = Live(session_id);
  if (it == sessions_.end()) return NotFound(session_id);
  return RunStart{it->second.spec, it->second.handle.backend(), it->second.deny,
                  it->second.create_guard, it->second.sandbox_id};
}

bool SessionTable::MarkWarm(const std::string& session_id, const std::string& sandbox_id,
                            const std::string& limits) {
  absl::MutexLock lock(&mu_);
  auto it = Live(session_id);
  if (it == sessions_.end() || it->second.handle.state() != v1::SANDBOX_STATE_CREATED) {
    return false;
  }
  it->second.sandbox_id = sandbox_id;
  it->second.handle.set_state(v1::SANDBOX_STATE_WARM);
  if (!limits.empty()) {
    (*it->second.handle.mutable_details()->mutable_fields())["resourceLimits"].set_string_value(
        limits);
  }
  return true;
}

void SessionTable::SetUsage(const std::string& session_id, const v1::SandboxUsage& usage) {
  google::protobuf::Struct counters;
  auto& fields = *counters.mutable_fields();
  // Numbers as JSON gives them (doubles): exact up to 2^53, far above any counter here.
  fields["memoryPeakBytes"].set_number_value(static_cast<double>(usage.memory_peak_bytes()));
  fields["cpuUsageUs"].set_number_value(static_cast<double>(usage.cpu_usage_us()));
  fields["pidsPeak"].set_number_value(static_cast<double>(usage.pids_peak()));
  fields["oomKills"].set_number_value(static_cast<double>(usage.oom_kills()));
  fields["pidsMaxHits"].set_number_value(static_cast<double>(usage.pids_max_hits()));
  absl::MutexLock lock(&mu_);
  auto it = Live(session_id);
  if (it == sessions_.end()) return;
  *(*it->second.handle.mutable_details()->mutable_fields())["usage"].mutable_struct_value() =
      std::move(counters);
  *it->second.handle.mutable_usage() = usage;
}

void SessionTable::SetSuspended(const std::string& session_id, bool suspended) {
  absl::MutexLock lock(&mu_);
  auto it = Live(session_id);
  if (it == sessions_.end() || it->second.handle.state() == v1::SANDBOX_STATE_ERROR) return;
  it->second.handle.set_state(suspended                 ? v1::SANDBOX_STATE_SUSPENDED
                              : it->second.runs.empty() ? v1::SANDBOX_STATE_WARM
                                                        : v1::SANDBOX_STATE_ACTIVE);
}

void SessionTable::Fail(const std::string& session_id, const std::string& reason) {
  absl::MutexLock lock(&mu_);
  auto it = Live(session_id);
  if (it == sessions_.end()) return;
  v1::SandboxHandle& handle = it->second.handle;
  if (handle.state() == v1::SANDBOX_STATE_ERROR) return;
  handle.set_state(v1::SANDBOX_STATE_ERROR);
  handle.mutable_error()->set_code("UNAVAILABLE");
  handle.mutable_error()->set_message(absl::StrCat("the session's sandbox ended: ", reason));
}

absl::StatusOr<SessionTable::RunStart> SessionTable::BeginRun(const std::string& session_id,
                                                              const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  auto it = Live(session_id);
  if (it == sessions_.end()) return NotFound(session_id);
  const v1::SandboxHandle& handle = it->second.handle;
  if (handle.state() == v1::SANDBOX_STATE_ERROR) {
    return absl::FailedPreconditionError(absl::StrCat(
        "sessionId: session '", session_id, "' is in error: ", handle.error().message(),
        " (it is never relaunched silently: destroy it and launch a new one)"));
  }
  if (handle.state() == v1::SANDBOX_STATE_SUSPENDED) {
    return absl::FailedPreconditionError(absl::StrCat(
        "sessionId: session '", session_id, "' is suspended: Resume it before running in it"));
  }
  if (handle.state() == v1::SANDBOX_STATE_CREATED) {
    return absl::FailedPreconditionError(
        absl::StrCat("sessionId: session '", session_id, "' is not warm yet"));
  }
  it->second.runs.insert(run_id);
  it->second.handle.set_state(v1::SANDBOX_STATE_ACTIVE);
  return RunStart{it->second.spec, it->second.handle.backend(), it->second.deny,
                  it->second.create_guard, it->second.sandbox_id};
}

void SessionTable::EndRun(const std::string& session_id, const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  auto it = Live(session_id);
  if (it == sessions_.end()) return;
  it->second.runs.erase(run_id);
  if (it->second.runs.empty() && it->second.handle.state() == v1::SANDBOX_STATE_ACTIVE) {
    it->second.handle.set_state(v1::SANDBOX_STATE_WARM);
  }
}

absl::StatusOr<std::vector<std::string>> SessionTable::Runs(const std::string& session_id) const {
  absl::MutexLock lock(&mu_);
  auto it = Live(session_id);
  if (it == sessions_.end()) return NotFound(session_id);
  return std::vector<std::string>(it->second.runs.begin(), it->second.runs.end());
}

absl::StatusOr<std::pair<v1::SandboxHandle, std::vector<std::string>>> SessionTable::BeginDestroy(
    const std::string& session_id, std::string* sandbox_id) {
  absl::MutexLock lock(&mu_);
  auto it = Live(session_id);
  if (it == sessions_.end()) return NotFound(session_id);
  it->second.destroying = true;
  if (sandbox_id != nullptr) *sandbox_id = it->second.sandbox_id;
  v1::SandboxHandle handle = it->second.handle;
  handle.set_state(v1::SANDBOX_STATE_DESTROYED);
  return std::make_pair(handle,
                        std::vector<std::string>(it->second.runs.begin(), it->second.runs.end()));
}

void SessionTable::EndDestroy(const std::string& session_id) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(session_id);
  if (it != sessions_.end() && it->second.destroying) sessions_.erase(it);
}

absl::StatusOr<std::pair<v1::SandboxHandle, std::vector<std::string>>> SessionTable::Destroy(
    const std::string& session_id) {
  auto destroyed = BeginDestroy(session_id);
  if (destroyed.ok()) EndDestroy(session_id);
  return destroyed;
}

std::map<std::string, SessionTable::Session>::iterator SessionTable::Live(
    const std::string& session_id) {
  auto it = sessions_.find(session_id);
  return it != sessions_.end() && it->second.destroying ? sessions_.end() : it;
}

std::map<std::string, SessionTable::Session>::const_iterator SessionTable::Live(
    const std::string& session_id) const {
  auto it = sessions_.find(session_id);
  return it != sessions_.end() && it->second.destroying ? sessions_.end() : it;
}

}  // namespace ccsandbox::broker
