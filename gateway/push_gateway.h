// One session's push gateway: a git smart-HTTP endpoint (on the listening socket it is given: a
// Unix socket bridged into the sandbox, or loopback TCP in tests) that serves exactly two
// requests for each of the session's repositories —
//   GET  /<repo>/info/refs?service=git-receive-pack   the upstream's advertisement, fetched with
//                                                     a write credential the gateway holds
//   POST /<repo>/git-receive-pack                     read to the end of its ref updates, the
//                                                     push rule asked for each ref; refused: the
//                                                     body is drained and git gets a
//                                                     report-status of `ng` lines; allowed: the
//                                                     request is streamed to the upstream with a
//                                                     write credential minted for this push
//   POST /-/credential                                the run's git credential helper asking for a
//                                                     read credential for one of the repositories
//                                                     (minted once, revoked with the session)
// — and refuses everything else with a reason (fetches go to the upstream directly, with that
// read credential). No credential ever reaches the client: not in a header, a body or a
// message; an upstream that refuses the gateway's credential is a 502, never a 401 that would
// make git ask the sandbox for one.
//
//   absl::StatusOr<std::unique_ptr<PushGateway>> gw = PushGateway::Start(std::move(listener), o);
//   gw->reset();  // stops accepting, ends every connection, joins
#ifndef CCSANDBOX_GATEWAY_PUSH_GATEWAY_H_
#define CCSANDBOX_GATEWAY_PUSH_GATEWAY_H_

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/unique_fd.h"
#include "gateway/credentials.h"
#include "policy/guardrails/guardrails.h"

namespace ccsandbox::gateway {

struct GatewayRepository {
  std::string path;          // where git reaches it at the gateway: "/owner/repo.git"
  std::string upstream_url;  // where pushes go: "https://github.com/owner/repo.git"
};

struct PushGatewayOptions {
  std::string session_id;
  std::vector<GatewayRepository> repositories;
  policy::GuardrailRuleSet rules;
  std::function<bool()> approver_connected;  // unset: nobody can answer a prompt
  CredentialBroker* credentials = nullptr;   // outlives the gateway
  // The address an upstream host name resolves to when it must not come from DNS (the broker's
  // --egress-hosts-file), or ""; unset: DNS.
  std::function<std::string(const std::string& host)> upstream_address;
  // One line per push decision and per refusal of a request, for the log and the session.
  std::function<void(const std::string&)> on_decision;
  int max_connections = 8;
  absl::Duration io_timeout = absl::Seconds(120);
};

class ReadCredentials;

class PushGateway {
 public:
  static absl::StatusOr<std::unique_ptr<PushGateway>> Start(UniqueFd listener,
                                                            PushGatewayOptions options);
  ~PushGateway();
  PushGateway(const PushGateway&) = delete;
  PushGateway& operator=(const PushGateway&) = delete;

 private:
  explicit PushGateway(UniqueFd listener, PushGatewayOptions options);
  void Accept();
  void Serve(int fd);

  const PushGatewayOptions options_;
  UniqueFd listener_;
  std::unique_ptr<ReadCredentials> reads_;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  absl::Mutex mu_;
  struct Connection {
    UniqueFd fd;
    std::thread thread;
    bool done = false;
  };
  std::list<Connection> connections_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccsandbox::gateway

#endif  // CCSANDBOX_GATEWAY_PUSH_GATEWAY_H_
