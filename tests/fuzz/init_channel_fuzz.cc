// libFuzzer target: the warm init's channel format (launcher/shim/init_protocol.h), read by the
// launcher from inside a sandbox and by the init from the launcher. Input: the byte stream of
// one channel. Invariants: never crash or allocate beyond the input; a payload that decodes is
// the canonical encoding of what it decoded to (re-encoding gives the same bytes); the reader,
// fed the stream through a real socket pair, hands out exactly the frames the stream holds, in
// order, then either waits for more, or fails and stays failed; it never accepts a frame whose
// descriptors did not come with it.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/unique_fd.h"
#include "launcher/shim/init_protocol.h"
#include "tests/fuzz/fuzz_check.h"

using ccsandbox::UniqueFd;
using ccsandbox::launcher::DecodeInitPayload;
using ccsandbox::launcher::EncodeInitFrame;
using ccsandbox::launcher::InitFrame;
using ccsandbox::launcher::InitFrameReader;
using ccsandbox::launcher::InitMessage;

namespace {

uint32_t U32At(std::string_view s, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view stream(reinterpret_cast<const char*>(data), size);

  // The payload decoder alone, on the whole input.
  size_t fd_count = 0;
  absl::StatusOr<InitMessage> alone = DecodeInitPayload(stream, fd_count);
  if (alone.ok()) {
    FUZZ_CHECK(fd_count <= ccsandbox::launcher::kMaxInitFrameFds);
    FUZZ_CHECK(EncodeInitFrame(*alone, fd_count).substr(4) == stream);
  } else {
    FUZZ_CHECK(alone.status().code() == absl::StatusCode::kInvalidArgument);
  }

  // The reader, through a socket pair, the writer closed after the stream (the peer went away).
  int pair[2];
  FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair) == 0);
  UniqueFd reader_end(pair[0]);
  {
    UniqueFd writer_end(pair[1]);
    FUZZ_CHECK(write(writer_end.get(), stream.data(), stream.size()) ==
               static_cast<ssize_t>(stream.size()));
  }
  InitFrameReader reader(/*accept_fds=*/true);
  FUZZ_CHECK(reader.ReadAvailable(reader_end.get()).ok());
  FUZZ_CHECK(reader.closed());
  size_t at = 0;  // where the next frame starts in the stream
  for (;;) {
    std::optional<absl::StatusOr<InitFrame>> frame = reader.Next();
    FUZZ_CHECK(frame.has_value());  // the peer closed: a frame, or why not, never "wait"
    if (!frame->ok()) {
      // What a frame that failed looked like: past the maximum, cut short, undecodable, or
      // declaring descriptors (none came).
      const absl::StatusCode code = frame->status().code();
      FUZZ_CHECK(code == absl::StatusCode::kDataLoss || code == absl::StatusCode::kUnavailable);
      if (code == absl::StatusCode::kUnavailable) {
        FUZZ_CHECK(stream.size() - at < 4 || stream.size() - at - 4 < U32At(stream, at));
      }
      std::optional<absl::StatusOr<InitFrame>> after = reader.Next();
      FUZZ_CHECK(after.has_value() && !after->ok());
      break;
    }
    FUZZ_CHECK(stream.size() - at >= 4);
    const uint32_t length = U32At(stream, at);
    FUZZ_CHECK(length <= ccsandbox::launcher::kMaxInitFrameBytes);
    FUZZ_CHECK(stream.size() - at - 4 >= length);
    size_t declared = 0;
    absl::StatusOr<InitMessage> decoded =
        DecodeInitPayload(stream.substr(at + 4, length), declared);
    FUZZ_CHECK(decoded.ok() && *decoded == (*frame)->message);
    FUZZ_CHECK(declared == 0 && (*frame)->fds.empty());
    at += 4 + length;
  }
  return 0;
}
