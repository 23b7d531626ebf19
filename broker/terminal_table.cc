#include "broker/terminal_table.h"

namespace ccsandbox::broker {

TerminalTable::Entry TerminalTable::Add(const v1::SandboxHandle& handle,
                                        std::function<void()> hang_up) {
  absl::MutexLock lock(&mu_);
  open_[handle.session_id()] = Open{handle, std::move(hang_up)};
  return Entry(*this, handle.session_id());
}

void TerminalTable::Remove(const std::string& id) {
  absl::MutexLock lock(&mu_);
  open_.erase(id);
}

bool TerminalTable::Contains(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  return open_.count(id) > 0;
}

std::optional<v1::SandboxHandle> TerminalTable::Get(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  auto it = open_.find(id);
  if (it == open_.end()) return std::nullopt;
  return it->second.handle;
}

std::vector<v1::SandboxHandle> TerminalTable::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<v1::SandboxHandle> handles;
  for (const auto& [id, open] : open_) handles.push_back(open.handle);
  return handles;
}

bool TerminalTable::HangUp(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  auto it = open_.find(id);
  if (it == open_.end()) return false;
  it->second.hang_up();
  return true;
}

bool TerminalTable::AwaitGone(const std::string& id, absl::Duration limit) const {
  absl::MutexLock lock(&mu_);
  auto gone = [this, &id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return open_.count(id) == 0; };
  return mu_.AwaitWithTimeout(absl::Condition(&gone), limit);
}

std::vector<std::string> TerminalTable::Ids() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> ids;
  for (const auto& [id, open] : open_) ids.push_back(id);
  return ids;
}

bool TerminalTable::Reserve(size_t limit) {
  absl::MutexLock lock(&mu_);
  if (reserved_ >= limit) return false;
  ++reserved_;
  return true;
}

void TerminalTable::Unreserve() {
  absl::MutexLock lock(&mu_);
  if (reserved_ > 0) --reserved_;
}

}  // namespace ccsandbox::broker
