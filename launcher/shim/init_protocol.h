// The one format between the launcher and the init of a warm sandbox (sandbox_shim --init=FD):
// length-prefixed frames over a Unix stream socket pair, file descriptors passed with the frame
// that needs them (SCM_RIGHTS).
//
//   launcher -> init   kExec    {exec_id, argv, env, workdir} + fds: stdin, stdout, stderr
//                                [, the create guard's channel] [, the Exec cgroup's
//                                cgroup.procs files, opened by the launcher: one per hierarchy]
//                      kSignal  {exec_id, value = signal}
//   init -> launcher   kReady   {}                          the bridges listen; Execs may come
//                      kStarted {exec_id, value = pid}      the Exec's reaper, in the sandbox
//                      kEnded   {exec_id, value = code}     exit code, or 128 + signal
//
//   SendInitMessage(fd, message, {stdin_r, stdout_w, stderr_w});
//   InitFrameReader reader(/*accept_fds=*/true);
//   reader.ReadAvailable(fd);                       // non-blocking fd, after poll says readable
//   while (auto frame = reader.Next()) { if (!frame->ok()) fail; use (*frame)->message ... }
//
// A frame is a u32 payload length (little-endian), then the payload: u32 kind, u64 exec_id,
// i32 value, u32 fd count, u32 argv count and each argv string, u32 env count and each env
// string, then the workdir string; each string a u32 length and its bytes. Decoding fails
// closed on anything else: an unknown kind, a count or length past the end, trailing bytes, a
// frame above kMaxInitFrameBytes, a fd count that does not match the descriptors that came
// with the frame. The launcher reads the init's frames with accept_fds=false: any descriptor
// from inside the sandbox is closed and the frame refused.
#ifndef CCSANDBOX_LAUNCHER_SHIM_INIT_PROTOCOL_H_
#define CCSANDBOX_LAUNCHER_SHIM_INIT_PROTOCOL_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/unique_fd.h"

namespace ccsandbox::launcher {

// Room for the largest argv + environment a plan may carry (1 MiB), with margin.
inline constexpr size_t kMaxInitFrameBytes = 4 << 20;
// Descriptors one frame may carry: stdio, the guard's channel, a cgroup.procs per hierarchy.
inline constexpr size_t kMaxInitFrameFds = 10;

enum class InitKind : uint32_t {
  kExec = 1,
  kSignal = 2,
  kReady = 3,
  kStarted = 4,
  kEnded = 5,
};

struct InitMessage {
  InitKind kind = InitKind::kReady;
  uint64_t exec_id = 0;
  int32_t value = 0;
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value"
  std::string workdir;
  bool operator==(const InitMessage&) const = default;
};

struct InitFrame {
  InitMessage message;
  std::vector<UniqueFd> fds;
};

// The frame (length prefix included) that carries `message` declaring `fd_count` descriptors.
std::string EncodeInitFrame(const InitMessage& message, size_t fd_count);
// The message in one frame's payload (no length prefix); `fd_count` is set to its declared
// descriptor count.
absl::StatusOr<InitMessage> DecodeInitPayload(std::string_view payload, size_t& fd_count);

// Writes one whole frame to the stream socket `fd`, the descriptors going with its first byte.
// `timeout_ms` >= 0 bounds the wait for room (a peer that stopped reading): DEADLINE_EXCEEDED
// after it, the frame perhaps half sent (the channel is then unusable). Not thread-safe per
// fd: callers serialise.
absl::Status SendInitMessage(int fd, const InitMessage& message, absl::Span<const int> fds = {},
                             int timeout_ms = -1);

class InitFrameReader {
 public:
  explicit InitFrameReader(bool accept_fds) : accept_fds_(accept_fds) {}

  // Reads what the non-blocking socket `fd` holds now. UNAVAILABLE once the peer has closed
  // (after every complete frame has been handed out by Next); an error for a broken stream.
  absl::Status ReadAvailable(int fd);
  // The next complete frame, an error when the stream is malformed (stop reading it), or
  // nullopt until more bytes come.
  std::optional<absl::StatusOr<InitFrame>> Next();
  bool closed() const { return closed_; }

 private:
  const bool accept_fds_;
  std::string buffer_;
  std::deque<UniqueFd> fds_;
  bool closed_ = false;
  bool broken_ = false;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_SHIM_INIT_PROTOCOL_H_
