#include "broker/session_egress.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "broker/session_push.h"
#include "broker/unix_listener.h"
#include "policy/egress/allowlist.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker {
namespace {

// More queued refusals than this means nobody reads them fast enough; the rest are counted
// and logged, never allowed to grow the broker without bound.
constexpr size_t kMaxQueuedViolations = 10000;

// A session's proxy credentials on loopback ports: 128 random bits, hex (safe in a URL).
absl::StatusOr<proxy::ProxyCredentials> FreshCredentials() {
  char bytes[16];
  if (getentropy(bytes, sizeof(bytes)) != 0) {
    return absl::InternalError("egress: no randomness for the proxies' credentials (getentropy)");
  }
  return proxy::ProxyCredentials{
      .username = "ccsandbox",
      .password = absl::BytesToHexString(absl::string_view(bytes, sizeof(bytes)))};
}

}  // namespace

EgressListeners EgressListenersFor(policy::HostFacts::Os os) {
  return os == policy::HostFacts::Os::kMacOs ? EgressListeners::kLoopbackPorts
                                             : EgressListeners::kUnixSockets;
}

SessionEgress::SessionEgress(proxy::EventLoop& loop, std::shared_ptr<proxy::Resolver> resolver,
                             RuntimeDir& runtime_dir, SessionEvents& events, EgressLimits limits,
                             gateway::CredentialBroker* push_credentials,
                             std::function<std::string(const std::string&)> upstream_address,
                             BrokerMetrics metrics, EgressListeners listeners)
    : loop_(loop),
      resolver_(std::move(resolver)),
      runtime_dir_(runtime_dir),
      events_(events),
      limits_(limits),
      push_credentials_(push_credentials),
      upstream_address_(std::move(upstream_address)),
      metrics_(std::move(metrics)),
      budget_(limits.total > 0 ? std::make_shared<proxy::ConnectionBudget>(limits.total) : nullptr),
      listeners_(listeners),
      relay_([this] { Relay(); }) {}

SessionEgress::~SessionEgress() {
  std::map<std::string, Session> sessions;
  {
    absl::MutexLock lock(&mu_);
    sessions.swap(sessions_);
  }
  for (auto& [id, session] : sessions) {
    session.proxies->Stop();
    StopPush(id, session);
    Release(session);
  }
  {
    absl::MutexLock lock(&queue_mu_);
    stopping_ = true;
  }
  relay_.join();
}

absl::StatusOr<EgressSummary> SessionEgress::Start(const v1::SandboxSpec& spec) {
  const std::string& session_id = spec.session_id();
  if (absl::Status valid = policy::ValidateEgressAllowlist(spec.egress_allowlist()); !valid.ok()) {
    return valid;
  }
  const bool network = !spec.has_network_enabled() || spec.network_enabled();
  absl::StatusOr<policy::EgressAllowlist> allowlist =
      policy::EgressAllowlist::Resolve(network, spec.egress_allowlist());
  if (!allowlist.ok()) return allowlist.status();
  EgressSummary summary;
  summary.network_enabled = network;
  summary.allow_entries = allowlist->AllowEntries().size();

  absl::MutexLock lock(&mu_);
  if (sessions_.count(session_id) != 0) {
    return absl::AlreadyExistsError(absl::StrCat("session '", session_id, "' has proxies"));
  }
  if (spec.has_push() && listeners_ == EgressListeners::kLoopbackPorts) {
    return absl::FailedPreconditionError(
        "push: the push gateway listens on a Unix socket, which a sandbox on this host (loopback "
        "ports: macOS) cannot reach; launch without push");
  }
  Session session;
  proxy::SessionProxiesOptions options;
  if (absl::Status listening = PrepareListeners(session, options); !listening.ok()) {
    return listening;
  }
  options.session_id = session_id;
  options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(allowlist));
  options.resolver = resolver_;
  options.max_connections = limits_.per_session;
  options.budget = budget_;
  options.on_connection = [this](absl::string_view proxy) { metrics_.ProxyConnection(proxy); };
  options.on_violation = [this, session_id](const proxy::EgressViolation& violation) {
    metrics_.ProxyRefusal();
    metrics_.Violation(violation.action);
    Pending pending;
    pending.session_id = session_id;
    v1::SandboxViolation* v = pending.event.mutable_violation();
    v->set_action(violation.action);
    v->set_target(violation.target);
    v->set_raw(violation.raw);
    Enqueue(std::move(pending));
  };
  absl::StatusOr<std::unique_ptr<proxy::SessionProxies>> proxies =
      proxy::SessionProxies::Start(loop_, std::move(options));
  if (!proxies.ok()) {
    Release(session);
    return proxies.status();
  }
  session.proxies = *std::move(proxies);
  if (listeners_ == EgressListeners::kLoopbackPorts) {
    // The credentials (chosen in PrepareListeners) go into the URLs, in the userinfo part.
    const proxy::ProxyCredentials& c = *session.credentials;
    const std::string userinfo = absl::StrCat(c.username, ":", c.password, "@");
    session.plan.set_http_port(session.proxies->http_port());
    session.plan.set_socks_port(session.proxies->socks_port());
    session.plan.set_http_proxy_url(
        absl::StrCat("http://", userinfo, "127.0.0.1:", session.proxies->http_port()));
    session.plan.set_socks_proxy_url(
        absl::StrCat("socks5h://", userinfo, "127.0.0.1:", session.proxies->socks_port()));
  }
  if (spec.has_push()) {
    absl::StatusOr<std::unique_ptr<gateway::PushGateway>> push = StartSessionPush(
        spec, session.dir, push_credentials_,
        [this, session_id](const v1::SandboxViolation& violation) {
          metrics_.Violation(violation.action());
          Pending pending;
          pending.session_id = session_id;
          *pending.event.mutable_violation() = violation;
          Enqueue(std::move(pending));
        },
        session.plan, upstream_address_);
    if (!push.ok()) {
      session.proxies->Stop();
      Release(session);
      return push.status();
    }
    session.push = *std::move(push);
    summary.push_repositories = spec.push().repositories_size();
  }
  summary.plan = session.plan;
  sessions_.emplace(session_id, std::move(session));
  return summary;
}

std::optional<v1::EgressPlan> SessionEgress::PlanFor(const std::string& session_id) const {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(session_id);
  if (it == sessions_.end()) return std::nullopt;
  return it->second.plan;
}

void SessionEgress::Stop(const std::string& session_id) {
  Session session;
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(session_id);
    if (it == sessions_.end()) return;
    session = std::move(it->second);
    sessions_.erase(it);
  }
  session.proxies->Stop();
  StopPush(session_id, session);
  Release(session);
}

absl::Status SessionEgress::PrepareListeners(Session& session,
                                             proxy::SessionProxiesOptions& options) {
  if (listeners_ == EgressListeners::kLoopbackPorts) {
    absl::StatusOr<proxy::ProxyCredentials> credentials = FreshCredentials();
    if (!credentials.ok()) return credentials.status();
    session.credentials = *credentials;
    options.credentials = *std::move(credentials);
    return absl::OkStatus();  // SessionProxies binds 127.0.0.1:0 itself
  }
  absl::StatusOr<std::string> dir = runtime_dir_.CreateSessionDir();
  if (!dir.ok()) return dir.status();
  session.dir = *dir;
  session.plan.set_http_socket(*dir + "/http.sock");
  session.plan.set_socks_socket(*dir + "/socks.sock");
  absl::StatusOr<UniqueFd> http_fd = UnixListener(session.plan.http_socket());
  absl::StatusOr<UniqueFd> socks_fd = http_fd.ok() ? UnixListener(session.plan.socks_socket())
                                                   : absl::StatusOr<UniqueFd>(http_fd.status());
  if (!socks_fd.ok()) {
    Release(session);
    return socks_fd.status();
  }
  options.http_listen_fd = *std::move(http_fd);  // the proxies' from here on
  options.socks_listen_fd = *std::move(socks_fd);
  return absl::OkStatus();
}

void SessionEgress::Release(const Session& session) {
  if (!session.dir.empty()) runtime_dir_.RemoveSessionDir(session.dir);
}

void SessionEgress::StopPush(const std::string& session_id, Session& session) {
  if (session.push == nullptr) return;
  session.push.reset();  // ends every connection: no push is in flight after this
  push_credentials_->RevokeSession(session_id);
  spdlog::info("session {}: push gateway stopped, its credentials revoked", session_id);
}

uint64_t SessionEgress::dropped_violations() const {
  absl::MutexLock lock(&queue_mu_);
  return dropped_;
}

void SessionEgress::Enqueue(Pending pending) {
  // The proxy has logged the refusal already; this only delivers it.
  absl::MutexLock lock(&queue_mu_);
  ++enqueued_;
  if (queue_.size() >= kMaxQueuedViolations) {
    ++dropped_;
    ++published_;
    spdlog::warn("session {}: violation event for {} dropped: {} events queued already",
                 pending.session_id, pending.event.violation().target(), queue_.size());
    return;
  }
  queue_.push_back(std::move(pending));
}

void SessionEgress::Relay() {
  for (;;) {
    Pending pending;
    {
      absl::MutexLock lock(&queue_mu_);
      queue_mu_.Await(absl::Condition(
          +[](SessionEgress* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->queue_mu_) {
            return self->stopping_ || !self->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // stopping, and everything queued was delivered
      pending = std::move(queue_.front());
      queue_.pop_front();
    }
    events_.Publish(pending.session_id, pending.event);
    absl::MutexLock lock(&queue_mu_);
    ++published_;
  }
}

void SessionEgress::Flush(absl::Duration timeout) {
  absl::MutexLock lock(&queue_mu_);
  const uint64_t target = enqueued_;
  struct Args {
    SessionEgress* self;
    uint64_t target;
  } args{this, target};
  queue_mu_.AwaitWithTimeout(
      absl::Condition(
          +[](Args* a) ABSL_NO_THREAD_SAFETY_ANALYSIS { return a->self->published_ >= a->target; },
          &args),
      timeout);
}

}  // namespace ccsandbox::broker
