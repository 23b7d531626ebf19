// git's pkt-line framing (gitprotocol-common: "pkt-line Format"): four hex digits giving the
// length of the line including themselves, then the data; "0000" is a flush, "0001" a delimiter,
// "0002" a response end. A line is at most 65520 bytes (65516 of data).
//
// The reader is incremental and bounded: bytes come as they arrive, packets come out whole, and
// anything malformed (a non-hex length, 0003, a length above the maximum) is an error, never
// skipped.
//
//   PktLineReader reader;
//   reader.Feed(bytes);
//   while (absl::StatusOr<std::optional<PktLine>> line = reader.Next(); line.ok() && *line) ...
//   std::string out = PktLine::Data("ok refs/heads/x\n").Encode();
#ifndef CCSANDBOX_GATEWAY_PKT_LINE_H_
#define CCSANDBOX_GATEWAY_PKT_LINE_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::gateway {

inline constexpr size_t kPktLineMax = 65520;  // header included
inline constexpr size_t kPktLineDataMax = kPktLineMax - 4;

struct PktLine {
  enum class Kind { kData, kFlush, kDelim, kResponseEnd };
  Kind kind = Kind::kData;
  std::string data;  // kData only

  static PktLine Data(absl::string_view data) { return {Kind::kData, std::string(data)}; }
  static PktLine Flush() { return {Kind::kFlush, ""}; }
  // The wire form; data longer than kPktLineDataMax is the caller's error (checked in debug).
  std::string Encode() const;
};

class PktLineReader {
 public:
  // Appends bytes that arrived; nothing is parsed until Next.
  void Feed(absl::string_view bytes) { buffer_.append(bytes.data(), bytes.size()); }
  // The next whole packet, nullopt when more bytes are needed, INVALID_ARGUMENT (saying what)
  // for a malformed one. After an error the reader stays failed.
  absl::StatusOr<std::optional<PktLine>> Next();
  // Bytes fed and not yet taken as packets (the pack that follows the commands, say).
  absl::string_view Rest() const { return absl::string_view(buffer_).substr(pos_); }
  // How many bytes Next has taken so far.
  size_t consumed() const { return consumed_; }

 private:
  std::string buffer_;
  size_t pos_ = 0;
  size_t consumed_ = 0;
  std::optional<absl::Status> failed_;
};

}  // namespace ccsandbox::gateway

#endif  // CCSANDBOX_GATEWAY_PKT_LINE_H_
