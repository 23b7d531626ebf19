// Each sandboxed session's egress: its own HTTP and SOCKS5 proxies (proxy/session_proxies.h)
// enforcing the session's allowlist, listening where the host's launch can reach them
// (EgressListeners):
// - Linux (kUnixSockets): two Unix sockets in the session's private runtime directory, and with
//   spec.push its push gateway on a third (broker/session_push.h). The launcher binds those
//   sockets into the sandbox, where the shim bridges 127.0.0.1:3128 / :1080 onto them; the
//   sandbox's own network namespace has no other way out.
// - macOS (kLoopbackPorts): the sandbox shares the host's loopback, so the proxies listen on
//   127.0.0.1 ephemeral ports (the plan's http_port / socks_port), which the Seatbelt profile is
//   the only loopback it may reach, and require the session's own random proxy credentials
//   (in the plan's proxy URLs): any other local process can connect to a loopback port.
//
//   SessionEgress egress(loop, resolver, runtime_dir, events);
//   absl::StatusOr<v1::EgressPlan> plan = egress.Start(spec);   // at Launch
//   std::optional<v1::EgressPlan> p = egress.PlanFor(session);  // per Exec
//   egress.Stop(session);                                       // at Destroy
//
// Refusals become network-outbound violation events on every open Exec stream of the session
// (SessionEvents). They are handed off the proxies' event loop to one relay thread, so a slow
// client never stalls any session's traffic.
#ifndef CCSANDBOX_BROKER_SESSION_EGRESS_H_
#define CCSANDBOX_BROKER_SESSION_EGRESS_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "broker/broker_metrics.h"
#include "broker/runtime_dir.h"
#include "broker/session_events.h"
#include "gateway/credentials.h"
#include "gateway/push_gateway.h"
#include "policy/plan/probe.h"
#include "proto/launcher.pb.h"
#include "proto/sandbox.pb.h"
#include "proxy/connection_budget.h"
#include "proxy/event_loop.h"
#include "proxy/resolver.h"
#include "proxy/session_proxies.h"

namespace ccsandbox::broker {

struct EgressSummary {
  v1::EgressPlan plan;
  bool network_enabled = false;
  size_t allow_entries = 0;
  int push_repositories = 0;  // served by the session's push gateway (0: none)
};

// Where a session's proxies listen (see the top of this file).
enum class EgressListeners { kUnixSockets, kLoopbackPorts };

// The listeners a host's native launch reaches: loopback ports on macOS, Unix sockets elsewhere.
EgressListeners EgressListenersFor(policy::HostFacts::Os os);

// Connection caps of the proxies (see proxy::SessionProxiesOptions): per session, and the total
// of every session's (0: none).
struct EgressLimits {
  size_t per_session = 512;
  size_t total = 0;
};

class SessionEgress {
 public:
  // Every argument outlives this object.
  SessionEgress(proxy::EventLoop& loop, std::shared_ptr<proxy::Resolver> resolver,
                RuntimeDir& runtime_dir, SessionEvents& events, EgressLimits limits = {},
                gateway::CredentialBroker* push_credentials = nullptr,
                std::function<std::string(const std::string&)> upstream_address = nullptr,
                BrokerMetrics metrics = {},
                EgressListeners listeners = EgressListeners::kUnixSockets);
  ~SessionEgress();  // stops every session's proxies and the relay
  SessionEgress(const SessionEgress&) = delete;
  SessionEgress& operator=(const SessionEgress&) = delete;

  // Resolves the spec's allowlist (INVALID_ARGUMENT naming a bad entry), creates the session's
  // socket directory (Unix sockets) and starts its proxies. ALREADY_EXISTS when the session has
  // proxies; FAILED_PRECONDITION for spec.push on loopback ports (its gateway is a Unix socket).
  absl::StatusOr<EgressSummary> Start(const v1::SandboxSpec& spec);
  // The plan of a session whose proxies run; nullopt otherwise.
  std::optional<v1::EgressPlan> PlanFor(const std::string& session_id) const;
  // Stops the session's proxies (every tunnel is closed) and removes its sockets. Idempotent.
  void Stop(const std::string& session_id);

  // Waits (at most `timeout`) until every refusal reported before this call has been published.
  // A proxy reports a refusal before the client sees it, so flushing before a run's exit event
  // keeps each violation inside the stream of the run that caused it.
  void Flush(absl::Duration timeout);

  // Violations the relay dropped because its queue was full (each drop is also logged).
  uint64_t dropped_violations() const;

 private:
  struct Session {
    std::string dir;                                     // empty on loopback ports
    std::optional<proxy::ProxyCredentials> credentials;  // loopback ports only
    v1::EgressPlan plan;
    std::unique_ptr<proxy::SessionProxies> proxies;
    std::unique_ptr<gateway::PushGateway> push;  // with spec.push
  };
  struct Pending {
    std::string session_id;
    v1::SandboxEvent event;
  };

  void Enqueue(Pending pending);  // on the loop thread: never blocks
  // Stops a session's gateway (if any) and revokes its credentials.
  void StopPush(const std::string& session_id, Session& session);
  void Relay();  // the relay thread
  // Binds the session's listeners: its socket directory and two Unix sockets, or (loopback
  // ports) nothing here, the proxies binding 127.0.0.1:0 behind fresh credentials.
  absl::Status PrepareListeners(Session& session, proxy::SessionProxiesOptions& options);
  void Release(const Session& session);  // removes the session's directory, if any

  proxy::EventLoop& loop_;
  const std::shared_ptr<proxy::Resolver> resolver_;
  RuntimeDir& runtime_dir_;
  SessionEvents& events_;
  const EgressLimits limits_;
  gateway::CredentialBroker* const push_credentials_;  // null: spec.push is refused
  const std::function<std::string(const std::string&)> upstream_address_;
  const BrokerMetrics metrics_;  // connections, refusals and violations of the proxies
  const std::shared_ptr<proxy::ConnectionBudget> budget_;  // null without a total cap
  const EgressListeners listeners_;

  mutable absl::Mutex mu_;
  std::map<std::string, Session> sessions_ ABSL_GUARDED_BY(mu_);

  mutable absl::Mutex queue_mu_;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(queue_mu_);
  bool stopping_ ABSL_GUARDED_BY(queue_mu_) = false;
  uint64_t dropped_ ABSL_GUARDED_BY(queue_mu_) = 0;
  uint64_t enqueued_ ABSL_GUARDED_BY(queue_mu_) = 0;   // ever queued (or dropped)
  uint64_t published_ ABSL_GUARDED_BY(queue_mu_) = 0;  // ever published (or dropped)
  std::thread relay_;
};

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_SESSION_EGRESS_H_
