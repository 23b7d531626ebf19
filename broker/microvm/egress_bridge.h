// The host's end of a microVM's egress channel (docs/microvm.md, "Egress"): a thread relaying
// each stream the guest opens to the session's HTTP or SOCKS5 proxy socket (EgressPlan's
// http_socket / socks_socket), with the flow control of egress_endpoint.h. The proxies apply
// the session's allowlist and report its violations, as for a native sandbox; the bridge only
// carries bytes. A stream whose proxy cannot be connected is reset toward the guest.
//
// A guest that breaks the protocol is misbehaving: every stream is closed, the channel is no
// longer read, the bridge logs why and failure() says it. The bridge never reconnects.
//
//   absl::StatusOr<std::unique_ptr<EgressBridge>> bridge =
//       EgressBridge::Start(std::move(chardev_socket), {.http_socket = ..., .socks_socket = ...});
//   ...
//   (*bridge)->Stop();  // or its destructor: closes every fd and joins the thread
#ifndef CCSANDBOX_BROKER_MICROVM_EGRESS_BRIDGE_H_
#define CCSANDBOX_BROKER_MICROVM_EGRESS_BRIDGE_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace ccsandbox::broker::microvm {

struct EgressBridgeConfig {
  std::string http_socket;   // the session's HTTP CONNECT proxy (EgressListener::kHttp)
  std::string socks_socket;  // the session's SOCKS5 proxy (EgressListener::kSocks)
  std::string name;          // for the log: whose guest
};

class EgressBridge {
 public:
  // Relays the streams of `channel` (the connected egress chardev socket) until Stop.
  static absl::StatusOr<std::unique_ptr<EgressBridge>> Start(UniqueFd channel,
                                                             EgressBridgeConfig config);
  ~EgressBridge() { Stop(); }
  EgressBridge(const EgressBridge&) = delete;
  EgressBridge& operator=(const EgressBridge&) = delete;

  // Closes every stream and the channel and joins the thread. Idempotent.
  void Stop();

  // Why the bridge stopped relaying by itself: the guest broke the protocol, or the channel
  // closed. Empty while it relays.
  std::string failure() const;
  // Whether the guest broke the protocol (failure() says how).
  bool guest_misbehaved() const { return misbehaved_; }
  size_t streams() const { return streams_; }
  // Bytes held toward the proxy sockets now, and the most ever held at once (all streams).
  size_t toward_proxies() const { return toward_proxies_; }
  size_t peak_toward_proxies() const { return peak_toward_proxies_; }
  // The most bytes ever queued toward the guest at once.
  size_t peak_toward_guest() const { return peak_toward_guest_; }

 private:
  EgressBridge(UniqueFd wake_read, UniqueFd wake_write)
      : wake_read_(std::move(wake_read)), wake_write_(std::move(wake_write)) {}
  void Run(UniqueFd channel, EgressBridgeConfig config);

  UniqueFd wake_read_, wake_write_;
  std::thread thread_;
  mutable std::mutex mu_;
  std::string failure_;
  std::atomic<bool> misbehaved_ = false;
  std::atomic<size_t> streams_ = 0;
  std::atomic<size_t> toward_proxies_ = 0;
  std::atomic<size_t> peak_toward_proxies_ = 0;
  std::atomic<size_t> peak_toward_guest_ = 0;
};

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_EGRESS_BRIDGE_H_
