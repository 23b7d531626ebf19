#include "broker/session_events.h"

namespace ccsandbox::broker {

uint64_t SessionEvents::Subscribe(const std::string& session_id, Sink sink) {
  absl::MutexLock lock(&mu_);
  const uint64_t token = next_++;
  sinks_[session_id][token] = std::move(sink);
  return token;
}

void SessionEvents::Unsubscribe(const std::string& session_id, uint64_t token) {
  absl::MutexLock lock(&mu_);
  auto it = sinks_.find(session_id);
  if (it == sinks_.end()) return;
  it->second.erase(token);
  if (it->second.empty()) sinks_.erase(it);
}

int SessionEvents::Publish(const std::string& session_id, const v1::SandboxEvent& event) {
  absl::MutexLock lock(&mu_);
  auto it = sinks_.find(session_id);
  if (it == sinks_.end()) return 0;
  for (auto& [token, sink] : it->second) sink(event);
  return static_cast<int>(it->second.size());
}

}  // namespace ccsandbox::broker
