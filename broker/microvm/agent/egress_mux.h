// The guest's end of the microVM's egress channel (docs/microvm.md, "Egress"): listens on the
// loopback ports the native sandbox's bridge uses (policy/plan/egress_ports.h), so the same
// proxy environment works in the guest, and carries each accepted connection as a stream over
// the egress virtio-serial port to the host's EgressBridge. Runs inside the agent's one poll
// loop (the agent is PID 1 and has no threads): Fill adds its fds, Handle takes the results.
//
// A connection is closed at once when kEgressMaxStreams are open or the host is not on the
// channel. While the host is away (the port reads EOF), every stream is closed and the port is
// looked at again every 50 ms. A host that breaks the protocol ends egress for good (the agent
// logs it and keeps serving runs).
#ifndef CCSANDBOX_BROKER_MICROVM_AGENT_EGRESS_MUX_H_
#define CCSANDBOX_BROKER_MICROVM_AGENT_EGRESS_MUX_H_

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "broker/microvm/egress_endpoint.h"

namespace ccsandbox::broker::microvm {

struct EgressMuxListen {
  std::string address;  // an IPv4 literal
  uint16_t port = 0;    // 0: any (tests)
  EgressListener listener;
};

// The proxies' loopback ports of a sandbox (egress_ports.h): HTTP and SOCKS5.
std::vector<EgressMuxListen> SandboxEgressListens();

// Sets `lo` up (a fresh network namespace, or a guest's kernel, has it down).
bool BringUpLoopback(std::string* error);

class EgressMux {
 public:
  // Binds and listens on every address now; nullptr and why when one cannot be bound.
  static std::unique_ptr<EgressMux> Create(UniqueFd channel,
                                           const std::vector<EgressMuxListen>& listens,
                                           std::string* error);

  void Fill(std::vector<pollfd>* fds);
  void Handle(const pollfd* fds, size_t count);
  // The poll timeout this mux needs: -1, or ms until it looks at an absent host's port again.
  int TimeoutMs() const;

  std::vector<uint16_t> ports() const;
  const EgressEndpoint& endpoint() const { return endpoint_; }

 private:
  struct Listening {
    UniqueFd fd;
    EgressListener listener;
  };
  explicit EgressMux(UniqueFd channel)
      : endpoint_(EgressEndpoint::Role::kGuest, std::move(channel)) {}

  EgressEndpoint endpoint_;
  std::vector<Listening> listening_;
  bool host_away_ = false;
  bool reported_ = false;
  std::chrono::steady_clock::time_point retry_at_;
};

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_AGENT_EGRESS_MUX_H_
