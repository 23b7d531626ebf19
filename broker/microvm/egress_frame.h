// The wire of the microVM's egress channel (docs/microvm.md, "Egress"): a second virtio-serial
// port carrying the guest's TCP connections to the session's proxies, many streams multiplexed
// on one byte stream each way, cut into frames of
//   1 byte type | 4 bytes stream id, big-endian | 4 bytes payload length, big-endian | payload
// The guest opens streams (ids 1, 2, 3, ... in order); both sides send data, a half-close (fin),
// a reset and window credits. The decoder checks each frame's shape and side and fails closed:
// an unknown type, a type from the wrong side, stream id 0 or a payload of the wrong size ends
// the stream for good. Which stream ids are live, and each stream's window, is the endpoint's
// check (egress_endpoint.h). Plain C++ (no absl): the static agent is built from it.
#ifndef CCSANDBOX_BROKER_MICROVM_EGRESS_FRAME_H_
#define CCSANDBOX_BROKER_MICROVM_EGRESS_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "broker/microvm/agent_frame.h"

namespace ccsandbox::broker::microvm {

inline constexpr size_t kEgressFrameHeader = 9;
// The most bytes one data frame carries.
inline constexpr uint32_t kEgressMaxData = 64 * 1024;
// Each stream's window in each direction: the most bytes a side may send before the other
// credits them back (so each side buffers at most this much per stream toward its socket).
inline constexpr uint32_t kEgressWindow = 256 * 1024;
// The most streams open at once; a guest connection beyond it is closed.
inline constexpr size_t kEgressMaxStreams = 256;
// The egress virtio-serial port's name, and the kernel argument telling the agent to serve it.
inline constexpr char kEgressPortName[] = "org.ccsandbox.egress";
inline constexpr char kEgressKernelArgument[] = "ccsandbox.egress=1";

enum class EgressFrameType : uint8_t {
  kOpen = 'O',    // guest -> host: 1 byte, the listener (EgressListener)
  kData = 'D',    // both: 1..kEgressMaxData bytes, within the receiver's window
  kFin = 'F',     // both: empty; the sender sends no more data on the stream (half-close)
  kReset = 'R',   // both: empty; the stream is gone (connect failed, error, over the cap)
  kWindow = 'W',  // both: 4 bytes, non-zero: the receiver took that many more bytes
};

// Which proxy a stream goes to.
enum class EgressListener : uint8_t { kHttp = 0, kSocks = 1 };
inline constexpr uint8_t kEgressListeners = 2;

struct EgressFrame {
  EgressFrameType type;
  uint32_t stream = 0;
  std::string payload;
};

std::string EncodeEgressFrame(EgressFrameType type, uint32_t stream, const std::string& payload);
// Appends a frame to `out` with the payload copied from `data` (no temporary string).
void AppendEgressFrame(std::string* out, EgressFrameType type, uint32_t stream, const char* data,
                       size_t size);

// Cuts a stream into frames sent by `from`. Feed bytes as they come; Next returns them.
class EgressFrameDecoder {
 public:
  enum class Result { kFrame, kNeedMore, kBad };
  explicit EgressFrameDecoder(FrameSide from) : from_(from) {}
  void Feed(const char* data, size_t size);
  // kFrame: `frame` is the next one. kBad: the stream is broken (`error` says how) and stays so.
  Result Next(EgressFrame* frame, std::string* error);
  size_t buffered() const { return buffer_.size() - offset_; }

 private:
  FrameSide from_;
  std::string buffer_;
  size_t offset_ = 0;
  std::string bad_;
};

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_EGRESS_FRAME_H_
