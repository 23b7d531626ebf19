#include "gateway/pkt_line.h"

#include <cassert>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ccsandbox::gateway {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string PktLine::Encode() const {
  switch (kind) {
    case Kind::kFlush:
      return "0000";
    case Kind::kDelim:
      return "0001";
    case Kind::kResponseEnd:
      return "0002";
    case Kind::kData:
      break;
  }
  assert(data.size() <= kPktLineDataMax);
  return absl::StrCat(absl::StrFormat("%04x", data.size() + 4), data);
}

absl::StatusOr<std::optional<PktLine>> PktLineReader::Next() {
  if (failed_.has_value()) return *failed_;
  const absl::string_view rest = Rest();
  if (rest.size() < 4) return std::nullopt;
  size_t length = 0;
  for (int i = 0; i < 4; ++i) {
    const int digit = HexValue(rest[i]);
    if (digit < 0) {
      failed_ = absl::InvalidArgumentError(absl::StrCat(
          "pkt-line: length '", absl::CHexEscape(rest.substr(0, 4)), "' is not four hex digits"));
      return *failed_;
    }
    length = length * 16 + digit;
  }
  std::optional<PktLine> line;
  if (length == 0) {
    line = PktLine::Flush();
    length = 4;
  } else if (length == 1) {
    line = PktLine{PktLine::Kind::kDelim, ""};
    length = 4;
  } else if (length == 2) {
    line = PktLine{PktLine::Kind::kResponseEnd, ""};
    length = 4;
  } else if (length < 4 || length > kPktLineMax) {
    failed_ = absl::InvalidArgumentError(absl::StrCat(
        "pkt-line: length ", length, " is outside 4..", kPktLineMax, " (and not 0, 1 or 2)"));
    return *failed_;
  } else if (rest.size() < length) {
    return std::nullopt;
  } else {
    line = PktLine::Data(rest.substr(4, length - 4));
  }
  pos_ += length;
  consumed_ += length;
  // Keep the buffer from growing without bound: drop what was taken once it is most of it.
  if (pos_ > 64 * 1024 && pos_ * 2 > buffer_.size()) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
  return line;
}

}  // namespace ccsandbox::gateway
