// One end of the microVM's egress channel (egress_frame.h): the streams multiplexed on it,
// each relayed to a local socket (in the guest: a TCP connection a client made to the proxy
// port; on the host: a connection to the session's proxy socket), with per-stream flow
// control. Poll-driven and single-threaded: the owner polls the fds Fill adds and hands the
// results to Handle, so the guest's agent runs it in its one loop and the host's bridge in its
// thread.
//
//   EgressEndpoint end(EgressEndpoint::Role::kHost, std::move(channel), connect_to_proxy);
//   while (end.state() == EgressEndpoint::State::kOpen) {
//     std::vector<pollfd> fds;  end.Fill(&fds);  poll(...);  end.Handle(fds.data(), fds.size());
//   }
//
// Memory is bounded whatever the other side or the local sockets do: a side sends at most
// kEgressWindow bytes of a stream before the receiver credits them back (after writing them to
// its socket), so each stream holds at most a window toward its socket; local sockets are read
// only while the outbox toward the channel is below kEgressOutboxHigh, and the channel only while
// it is below kEgressControlHigh.
//
// Fails closed: a frame for a stream never opened, an open that reuses an id, data beyond the
// window or after a fin, credit beyond the window, or a bad frame (the decoder's table) breaks
// the channel for good (state kBroken, error() says why). Frames for a stream this side has
// already closed are dropped (they were in flight). Plain C++: the static agent links it.
#ifndef CCSANDBOX_BROKER_MICROVM_EGRESS_ENDPOINT_H_
#define CCSANDBOX_BROKER_MICROVM_EGRESS_ENDPOINT_H_

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "broker/microvm/egress_frame.h"

namespace ccsandbox::broker::microvm {

// The outbox toward the channel above which local sockets are not read.
inline constexpr size_t kEgressOutboxHigh = 256 * 1024;
// The outbox above which the channel itself is not read: the other side's frames make ours
// (credits, resets), so a peer that writes without reading is stalled, not buffered for.
inline constexpr size_t kEgressControlHigh = 4 * 1024 * 1024;

class EgressEndpoint {
 public:
  enum class Role { kGuest, kHost };
  // kClosed: the other end went away (EOF); kBroken: it broke the protocol.
  enum class State { kOpen, kClosed, kBroken };
  // Host: the socket a stream opened for `listener` is relayed to (connected, or connecting
  // without blocking), or an invalid fd: the stream is reset toward the guest.
  using Connect = std::function<UniqueFd(EgressListener listener)>;

  EgressEndpoint(Role role, UniqueFd channel, Connect connect = nullptr);
  EgressEndpoint(const EgressEndpoint&) = delete;
  EgressEndpoint& operator=(const EgressEndpoint&) = delete;

  // Guest: relays `local` as a new stream to `listener`'s proxy. False (and `local` closed)
  // at kEgressMaxStreams streams or when the channel is not open.
  bool Open(UniqueFd local, EgressListener listener);

  // Appends the fds to poll (the channel first, unless `with_channel` is false).
  void Fill(std::vector<pollfd>* fds, bool with_channel = true);
  // Handles the results for the fds the last Fill added. Returns state() == kOpen.
  bool Handle(const pollfd* fds, size_t count);

  // Closes every stream; toward the other end too (resets) while the channel is open.
  void ResetAll();
  // Guest: the channel came back after kClosed (the host reconnected): streams start afresh.
  void Reopen();

  State state() const { return state_; }
  const std::string& error() const { return error_; }
  size_t streams() const { return streams_.size(); }
  // Bytes held toward local sockets (received, not yet written), and in all (plus the outbox
  // toward the channel and a partly received frame).
  size_t toward_sockets() const { return toward_sockets_; }
  size_t peak_toward_sockets() const { return peak_toward_sockets_; }
  size_t peak_outbox() const { return peak_outbox_; }
  size_t buffered() const;

 private:
  struct Stream {
    UniqueFd fd;
    std::string to_local;  // received, not yet written to fd
    size_t to_local_at = 0;
    uint32_t send_credit = kEgressWindow;  // what we may still send
    uint32_t recv_left = kEgressWindow;    // what the other side may still send us
    uint32_t consumed = 0;                 // written to fd, not yet credited back
    bool local_eof = false;                // read EOF from fd; fin sent
    bool peer_fin = false;                 // the other side's fin arrived
    bool shut = false;                     // fd shut down for writing after peer_fin
  };

  void Queue(EgressFrameType type, uint32_t stream, const char* data = nullptr, size_t size = 0);
  void Fail(State state, std::string why);
  void ReadChannel();
  void WriteChannel();
  void OnFrame(const EgressFrame& frame);
  void OnOpen(uint32_t id, EgressListener listener);
  // Reads / writes a stream's socket; false when the stream was closed (and erased).
  bool ReadLocal(uint32_t id, Stream& stream);
  bool WriteLocal(uint32_t id, Stream& stream);
  void Reset(uint32_t id, bool tell_peer);
  // Erases a stream whose both directions are done.
  void MaybeDone(uint32_t id, const Stream& stream);

  Role role_;
  UniqueFd channel_;
  bool channel_is_socket_ = false;
  Connect connect_;
  State state_ = State::kOpen;
  std::string error_;
  EgressFrameDecoder decoder_;
  std::string outbox_;
  size_t outbox_at_ = 0;
  std::map<uint32_t, Stream> streams_;
  uint32_t highest_ = 0;  // the last stream id opened
  size_t toward_sockets_ = 0;
  size_t peak_toward_sockets_ = 0;
  size_t peak_outbox_ = 0;
  std::vector<uint32_t> polled_;  // the stream of each fd the last Fill added after the channel
  bool polled_channel_ = false;
  std::string read_buffer_;
};

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_EGRESS_ENDPOINT_H_
