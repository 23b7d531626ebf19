// libFuzzer target: the push gateway's request body decoder (gateway/http_body.h), Content-Length
// and chunked, on a client's bytes. Input: byte 0 picks the framing (bit 0: chunked) and how the
// rest arrives in chunks, bytes 1-2 a Content-Length, the rest the bytes after the head.
// Invariants: never crash; the same body, state, error and leftover however the bytes are cut;
// decoded() counts the body bytes given out; the leftover is the input's tail; a length body is
// exactly the first bytes of the input; a chunked body, once done, re-encoded in chunks of any
// size decodes to the same bytes with nothing left over; after an error it stays failed.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "gateway/http_body.h"
#include "tests/fuzz/fuzz_check.h"

using ccsandbox::gateway::BodyDecoder;

namespace {

struct Decoded {
  bool ok = true;
  std::string error;
  std::string body;
  bool done = false;
  std::string leftover;
  uint64_t count = 0;
};

Decoded Decode(BodyDecoder decoder, absl::string_view bytes, size_t chunk) {
  Decoded d;
  for (size_t at = 0; at < bytes.size() && d.ok; at += chunk) {
    absl::Status fed = decoder.Feed(bytes.substr(at, chunk), d.body);
    if (!fed.ok()) {
      FUZZ_CHECK(fed.code() == absl::StatusCode::kInvalidArgument);
      d.ok = false;
      d.error = std::string(fed.message());
      std::string more;
      FUZZ_CHECK(!decoder.Feed("0\r\n\r\n", more).ok() && more.empty());
    }
  }
  d.done = decoder.done();
  d.leftover = std::string(decoder.Leftover());
  d.count = decoder.decoded();
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const bool chunked = data[0] & 1;
  const size_t chunk = 1 + (data[0] >> 1) % 67;
  const uint64_t length = (uint64_t{data[1]} << 8) | data[2];
  const absl::string_view input(reinterpret_cast<const char*>(data) + 3, size - 3);
  auto make = [&] { return chunked ? BodyDecoder::Chunked() : BodyDecoder::Length(length); };

  const Decoded whole = Decode(make(), input, input.size() + 1);
  const Decoded pieces = Decode(make(), input, chunk);
  FUZZ_CHECK(whole.ok == pieces.ok && whole.error == pieces.error);
  if (whole.ok) {
    FUZZ_CHECK(whole.body == pieces.body && whole.done == pieces.done);
    FUZZ_CHECK(whole.leftover == pieces.leftover);
  }
  FUZZ_CHECK(whole.count == whole.body.size() && pieces.count == pieces.body.size());
  if (!whole.ok) return 0;
  FUZZ_CHECK(whole.leftover.empty() || whole.done);
  FUZZ_CHECK(absl::EndsWith(input, whole.leftover));

  if (!chunked) {
    FUZZ_CHECK(whole.body == input.substr(0, length));
    FUZZ_CHECK(whole.done == (input.size() >= length));
    if (whole.done) FUZZ_CHECK(whole.leftover == input.substr(length));
    return 0;
  }
  if (!whole.done) return 0;
  std::string encoded;
  for (size_t at = 0; at < whole.body.size(); at += chunk) {
    const absl::string_view part = absl::string_view(whole.body).substr(at, chunk);
    absl::StrAppend(&encoded, absl::StrFormat("%x\r\n", part.size()), part, "\r\n");
  }
  encoded += "0\r\n\r\n";
  const Decoded again = Decode(BodyDecoder::Chunked(), encoded, encoded.size() + 1);
  FUZZ_CHECK(again.ok && again.done && again.body == whole.body && again.leftover.empty());
  return 0;
}
