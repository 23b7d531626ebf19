// Events that arise outside a run's own stream (a proxy refusing a connection) reach every
// Exec stream of the session that is open at that moment. Each Exec subscribes a sink for
// its lifetime; sinks must be thread-safe with respect to the stream's own writes.
#ifndef CCSANDBOX_BROKER_SESSION_EVENTS_H_
#define CCSANDBOX_BROKER_SESSION_EVENTS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker {

class SessionEvents {
 public:
  using Sink = std::function<void(const v1::SandboxEvent&)>;

  // Returns a token for Unsubscribe.
  uint64_t Subscribe(const std::string& session_id, Sink sink);
  void Unsubscribe(const std::string& session_id, uint64_t token);
  // Delivers `event` to every sink of the session; returns how many received it.
  int Publish(const std::string& session_id, const v1::SandboxEvent& event);

 private:
  absl::Mutex mu_;
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<std::string, std::map<uint64_t, Sink>> sinks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_SESSION_EVENTS_H_
