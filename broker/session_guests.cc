#include "broker/session_guests.h"

#include <utility>

namespace ccsandbox::broker {

bool SessionGuests::Add(const std::string& session_id, Entry entry) {
  absl::MutexLock lock(&mu_);
  return guests_.emplace(session_id, std::move(entry)).second;
}

std::shared_ptr<microvm::Guest> SessionGuests::Get(const std::string& session_id) const {
  absl::MutexLock lock(&mu_);
  auto it = guests_.find(session_id);
  return it == guests_.end() ? nullptr : it->second.guest;
}

std::optional<SessionGuests::Entry> SessionGuests::Remove(const std::string& session_id) {
  absl::MutexLock lock(&mu_);
  auto it = guests_.find(session_id);
  if (it == guests_.end()) return std::nullopt;
  Entry entry = std::move(it->second);
  guests_.erase(it);
  return entry;
}

void SessionGuests::BeginRun(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  runs_.emplace(run_id, "");
}

void SessionGuests::EndRun(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  runs_.erase(run_id);
}

bool SessionGuests::RequestStop(const std::string& run_id, const std::string& detail) {
  absl::MutexLock lock(&mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return false;
  if (it->second.empty()) it->second = detail.empty() ? "stopped" : detail;
  return true;
}

std::string SessionGuests::StopRequested(const std::string& run_id) const {
  absl::MutexLock lock(&mu_);
  auto it = runs_.find(run_id);
  return it == runs_.end() ? std::string() : it->second;
}

}  // namespace ccsandbox::broker
