// Internal: what one session's proxies share on the loop thread (options, the registry of open
// connections and tunnels, the stop barrier). Every member function runs on the loop thread.
#ifndef CCSANDBOX_PROXY_SESSION_STATE_H_
#define CCSANDBOX_PROXY_SESSION_STATE_H_

#include <cstddef>
#include <future>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "asio/io_context.hpp"
#include "proxy/proxy_options.h"

namespace ccsandbox::proxy {

class SessionState;

// A connection or tunnel of a session: Close() releases its sockets; the session's Stop waits
// until every child is destroyed.
class SessionChild : public std::enable_shared_from_this<SessionChild> {
 public:
  explicit SessionChild(std::shared_ptr<SessionState> state);
  virtual ~SessionChild();
  SessionChild(const SessionChild&) = delete;
  SessionChild& operator=(const SessionChild&) = delete;

  virtual void Close() = 0;

 protected:
  SessionState& state() const { return *state_; }
  const std::shared_ptr<SessionState>& state_ptr() const { return state_; }

 private:
  std::shared_ptr<SessionState> state_;
};

class SessionState {
 public:
  SessionState(asio::io_context& context, SessionProxiesOptions options);

  asio::io_context& context() { return context_; }
  const SessionProxiesOptions& options() const { return options_; }
  const policy::EgressAllowlist& allowlist() const { return *options_.allowlist; }
  Resolver& resolver() const { return *options_.resolver; }

  // Adds a child; closes it at once when the session is stopping. A `refusing` child (a
  // connection over the limit, answered with a refusal) counts against max_refusing instead
  // of max_connections and the shared budget.
  void Register(const std::shared_ptr<SessionChild>& child, bool refusing = false);
  void Unregister(SessionChild* child);
  size_t open_children() const { return children_.size(); }
  // Whether a new connection may be served, or else refused (with a reply), or else closed.
  bool CanAdmit() const;
  bool CanRefuse() const { return refusing_ < options_.max_refusing; }
  // Why CanAdmit is false, for the refusal and the log.
  std::string LimitReason() const;

  // Work that must finish before Stop returns (pending accepts, retry timers).
  void AddPending() { ++pending_; }
  void RemovePending();

  // Logs the refusal (unless `log` is false: the caller rate-limits its own) and calls the
  // session's violation callback.
  void ReportViolation(absl::string_view protocol, const std::string& target,
                       const std::string& reason, bool log = true);

  bool stopping() const { return stopping_; }
  // Marks the session stopping and closes every child; `drained` is fulfilled once every
  // child and pending operation is gone.
  void BeginStop(std::promise<void> drained);

 private:
  void MaybeDrained();

  asio::io_context& context_;
  const SessionProxiesOptions options_;
  struct Child {
    std::weak_ptr<SessionChild> child;
    bool refusing;
  };
  absl::flat_hash_map<SessionChild*, Child> children_;
  size_t admitted_ = 0;  // children that count against max_connections and the budget
  size_t refusing_ = 0;
  size_t pending_ = 0;
  bool stopping_ = false;
  bool drained_signalled_ = false;
  std::promise<void> drained_;
};

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_SESSION_STATE_H_
