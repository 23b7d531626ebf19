#include "gateway/http_body.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ccsandbox::gateway {
namespace {

constexpr size_t kMaxSizeLine = 1024;
constexpr size_t kMaxTrailerBytes = 16 * 1024;

}  // namespace

BodyDecoder BodyDecoder::Length(uint64_t length) {
  return BodyDecoder(length == 0 ? Stage::kDone : Stage::kLength, length);
}

BodyDecoder BodyDecoder::Chunked() { return BodyDecoder(Stage::kSizeLine, 0); }

absl::Status BodyDecoder::Fail(absl::string_view why) {
  stage_ = Stage::kFailed;
  failure_ = absl::InvalidArgumentError(absl::StrCat("request body: ", why));
  return failure_;
}

absl::Status BodyDecoder::Feed(absl::string_view bytes, std::string& out) {
  while (!bytes.empty()) {
    switch (stage_) {
      case Stage::kFailed:
        return failure_;
      case Stage::kDone:
        leftover_.append(bytes.data(), bytes.size());
        return absl::OkStatus();
      case Stage::kLength:
      case Stage::kData: {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(remaining_, bytes.size()));
        out.append(bytes.data(), n);
        decoded_ += n;
        remaining_ -= n;
        bytes.remove_prefix(n);
        if (remaining_ == 0) stage_ = stage_ == Stage::kLength ? Stage::kDone : Stage::kDataEnd;
        break;
      }
      case Stage::kSizeLine:
      case Stage::kDataEnd:
      case Stage::kTrailers: {
        const size_t lf = bytes.find('\n');
        const absl::string_view part = bytes.substr(0, lf);
        const size_t bound = stage_ == Stage::kTrailers ? kMaxTrailerBytes : kMaxSizeLine;
        if (line_.size() + part.size() > bound) return Fail("a chunk line is too long");
        line_.append(part.data(), part.size());
        if (lf == absl::string_view::npos) return absl::OkStatus();
        bytes.remove_prefix(lf + 1);
        if (line_.empty() || line_.back() != '\r') return Fail("a chunk line not ended by CRLF");
        line_.pop_back();
        std::string line = std::exchange(line_, "");
        if (stage_ == Stage::kDataEnd) {
          if (!line.empty()) return Fail("chunk data longer than its size");
          stage_ = Stage::kSizeLine;
        } else if (stage_ == Stage::kTrailers) {
          trailer_bytes_ += line.size() + 2;
          if (trailer_bytes_ > kMaxTrailerBytes) return Fail("trailers are too long");
          if (line.empty()) stage_ = Stage::kDone;
        } else {
          // size [; extensions]: hex digits, at most 15 of them (below 2^60).
          const absl::string_view size =
              absl::StripAsciiWhitespace(absl::string_view(line).substr(0, line.find(';')));
          if (size.empty() || size.size() > 15) return Fail("a bad chunk size");
          uint64_t value = 0;
          for (char c : size) {
            const int d = absl::ascii_isdigit(c)   ? c - '0'
                          : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                          : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                                   : -1;
            if (d < 0) return Fail("a bad chunk size");
            value = value * 16 + d;
          }
          remaining_ = value;
          stage_ = value == 0 ? Stage::kTrailers : Stage::kData;
        }
        break;
      }
    }
  }
  return stage_ == Stage::kFailed ? failure_ : absl::OkStatus();
}

}  // namespace ccsandbox::gateway
