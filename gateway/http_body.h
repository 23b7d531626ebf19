// A request body as it arrives on the gateway's socket, decoded: `Content-Length` bytes, or
// `Transfer-Encoding: chunked` (git sends a push larger than its http.postBuffer chunked). Pure
// and incremental: framing in, body bytes out; bounded (a chunk-size line of at most 1 KiB,
// trailers of at most 16 KiB); anything malformed is an error, never guessed at.
//
//   BodyDecoder body = BodyDecoder::Chunked();
//   std::string out;
//   absl::Status fed = body.Feed(bytes, out);  // out += what the bytes decode to
//   if (body.done()) ...;                       // body.Leftover(): bytes after the body
#ifndef CCSANDBOX_GATEWAY_HTTP_BODY_H_
#define CCSANDBOX_GATEWAY_HTTP_BODY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::gateway {

class BodyDecoder {
 public:
  static BodyDecoder Length(uint64_t length);
  static BodyDecoder Chunked();

  // Decodes `bytes`, appending the body's bytes to `out`. INVALID_ARGUMENT for bad framing;
  // bytes after the body's end are kept (Leftover), not decoded.
  absl::Status Feed(absl::string_view bytes, std::string& out);
  bool done() const { return stage_ == Stage::kDone; }
  absl::string_view Leftover() const { return leftover_; }
  uint64_t decoded() const { return decoded_; }

 private:
  enum class Stage { kLength, kSizeLine, kData, kDataEnd, kTrailers, kDone, kFailed };
  explicit BodyDecoder(Stage stage, uint64_t remaining) : stage_(stage), remaining_(remaining) {}
  absl::Status Fail(absl::string_view why);

  Stage stage_;
  uint64_t remaining_;  // kLength / kData: body bytes still to come in this part
  uint64_t decoded_ = 0;
  std::string line_;  // the chunk-size line or trailer line being read
  size_t trailer_bytes_ = 0;
  std::string leftover_;
  absl::Status failure_;
};

}  // namespace ccsandbox::gateway

#endif  // CCSANDBOX_GATEWAY_HTTP_BODY_H_
