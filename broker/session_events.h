// Events that arise outside a run's own stream (a proxy refusing a connection) reach every
// Exec stream of the session that is open at that moment. Each Exec subscribes a sink for
// its lifetime.
//
// Sinks run under the registry's lock, on the publisher's thread (the egress relay, shared by
// every session): a sink must never wait — not on its client, not on a lock that a stream
// write holds — or one stalled client would hold up every session's events and every Exec's
// Subscribe/Unsubscribe. Queue without waiting and drop when full (ExecRelay::Offer). Because
// the lock is held, no sink call is in flight once Unsubscribe has returned.
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
  // Hands `event` to every sink of the session; returns how many sinks it reached.
  int Publish(const std::string& session_id, const v1::SandboxEvent& event);

 private:
  absl::Mutex mu_;
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<std::string, std::map<uint64_t, Sink>> sinks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_SESSION_EVENTS_H_
