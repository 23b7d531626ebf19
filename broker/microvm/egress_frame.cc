#include "broker/microvm/egress_frame.h"

namespace ccsandbox::broker::microvm {
namespace {

// Why a frame of `type` with `size` payload bytes from `from` is bad; "" when its shape is right.
std::string ShapeError(uint8_t type, uint32_t stream, uint32_t size, FrameSide from) {
  const std::string name = std::to_string(type);
  if (stream == 0) return "egress frame type " + name + " for stream 0";
  switch (static_cast<EgressFrameType>(type)) {
    case EgressFrameType::kOpen:
      if (from != FrameSide::kFromGuest) return "egress open from the host";
      return size == 1 ? "" : "egress open with a payload of " + std::to_string(size) + " bytes";
    case EgressFrameType::kData:
      if (size == 0 || size > kEgressMaxData) {
        return "egress data frame of " + std::to_string(size) + " bytes";
      }
      return "";
    case EgressFrameType::kFin:
    case EgressFrameType::kReset:
      return size == 0 ? "" : "egress frame type " + name + " with a payload";
    case EgressFrameType::kWindow:
      return size == 4 ? "" : "egress window frame of " + std::to_string(size) + " bytes";
  }
  return "unexpected egress frame type " + name;
}

}  // namespace

void AppendEgressFrame(std::string* out, EgressFrameType type, uint32_t stream, const char* data,
                       size_t size) {
  out->push_back(static_cast<char>(type));
  out->append(EncodeU32(stream));
  out->append(EncodeU32(static_cast<uint32_t>(size)));
  out->append(data, size);
}

std::string EncodeEgressFrame(EgressFrameType type, uint32_t stream, const std::string& payload) {
  std::string out;
  AppendEgressFrame(&out, type, stream, payload.data(), payload.size());
  return out;
}

void EgressFrameDecoder::Feed(const char* data, size_t size) {
  if (!bad_.empty()) return;
  buffer_.append(data, size);
}

EgressFrameDecoder::Result EgressFrameDecoder::Next(EgressFrame* frame, std::string* error) {
  if (!bad_.empty()) {
    *error = bad_;
    return Result::kBad;
  }
  if (buffer_.size() - offset_ < kEgressFrameHeader) return Result::kNeedMore;
  const uint8_t type = static_cast<uint8_t>(buffer_[offset_]);
  const uint32_t stream = DecodeU32(buffer_.substr(offset_ + 1, 4));
  const uint32_t size = DecodeU32(buffer_.substr(offset_ + 5, 4));
  bad_ = ShapeError(type, stream, size, from_);
  if (bad_.empty() && static_cast<EgressFrameType>(type) == EgressFrameType::kOpen &&
      buffer_.size() - offset_ > kEgressFrameHeader &&
      static_cast<uint8_t>(buffer_[offset_ + kEgressFrameHeader]) >= kEgressListeners) {
    bad_ = "egress open for an unknown listener";
  }
  if (!bad_.empty()) {
    buffer_.clear();
    offset_ = 0;
    *error = bad_;
    return Result::kBad;
  }
  if (buffer_.size() - offset_ - kEgressFrameHeader < size) return Result::kNeedMore;
  if (static_cast<EgressFrameType>(type) == EgressFrameType::kWindow &&
      DecodeU32(buffer_.substr(offset_ + kEgressFrameHeader, 4)) == 0) {
    bad_ = "egress window frame of 0 bytes of credit";
    buffer_.clear();
    offset_ = 0;
    *error = bad_;
    return Result::kBad;
  }
  frame->type = static_cast<EgressFrameType>(type);
  frame->stream = stream;
  frame->payload.assign(buffer_, offset_ + kEgressFrameHeader, size);
  offset_ += kEgressFrameHeader + size;
  if (offset_ == buffer_.size() || offset_ > (1u << 16)) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  return Result::kFrame;
}

}  // namespace ccsandbox::broker::microvm
