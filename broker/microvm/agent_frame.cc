#include "broker/microvm/agent_frame.h"

#include <csignal>
#include <cstring>

namespace ccsandbox::broker::microvm {
namespace {

// What each type's payload must be: any bytes, empty, or exactly 4 bytes.
enum class Shape { kBytes, kEmpty, kFour, kNone };

Shape ShapeOf(uint8_t type, FrameSide from) {
  const bool host = from == FrameSide::kFromHost;
  switch (static_cast<FrameType>(type)) {
    case FrameType::kHello:
    case FrameType::kStdinEof:
    case FrameType::kKill:
    case FrameType::kHangup:
      return host ? Shape::kEmpty : Shape::kNone;
    case FrameType::kExec:
    case FrameType::kStdin:
    case FrameType::kSetup:
    case FrameType::kTerminal:
      return host ? Shape::kBytes : Shape::kNone;
    case FrameType::kWindow:
    case FrameType::kSignal:
      return host ? Shape::kFour : Shape::kNone;
    case FrameType::kHelloReply:
    case FrameType::kStdout:
    case FrameType::kStderr:
    case FrameType::kFailed:
      return host ? Shape::kNone : Shape::kBytes;
    case FrameType::kSetupDone:
      return host ? Shape::kNone : Shape::kEmpty;
    case FrameType::kStarted:
    case FrameType::kExit:
      return host ? Shape::kNone : Shape::kFour;
  }
  return Shape::kNone;
}

bool ReadList(const std::string& in, size_t* at, std::vector<std::string>* out) {
  if (in.size() - *at < 4) return false;
  const uint32_t n = DecodeU32(in.substr(*at, 4));
  *at += 4;
  // Each entry takes at least its 4-byte length: a count larger than that is a lie.
  if (n > (in.size() - *at) / 4) return false;
  for (uint32_t i = 0; i < n; ++i) {
    out->emplace_back();
    if (!ReadFrameString(in, at, &out->back())) return false;
  }
  return true;
}

}  // namespace

bool ReadFrameString(const std::string& in, size_t* at, std::string* out) {
  if (in.size() - *at < 4) return false;
  const uint32_t size = DecodeU32(in.substr(*at, 4));
  *at += 4;
  if (in.size() - *at < size) return false;
  out->assign(in, *at, size);
  *at += size;
  return true;
}

void AppendFrameString(std::string* out, const std::string& value) {
  out->append(EncodeU32(static_cast<uint32_t>(value.size())));
  out->append(value);
}

std::string EncodeU32(uint32_t value) {
  const char bytes[4] = {static_cast<char>(value >> 24), static_cast<char>(value >> 16),
                         static_cast<char>(value >> 8), static_cast<char>(value)};
  return std::string(bytes, 4);
}

uint32_t DecodeU32(const std::string& payload) {
  uint32_t value = 0;
  for (size_t i = 0; i < 4 && i < payload.size(); ++i) {
    value = (value << 8) | static_cast<uint8_t>(payload[i]);
  }
  return value;
}

std::string EncodeFrame(FrameType type, const std::string& payload) {
  std::string out(1, static_cast<char>(type));
  out.append(EncodeU32(static_cast<uint32_t>(payload.size())));
  out.append(payload);
  return out;
}

std::string EncodeExec(const ExecRequest& request) {
  std::string out = EncodeU32(static_cast<uint32_t>(request.argv.size()));
  for (const std::string& arg : request.argv) AppendFrameString(&out, arg);
  out.append(EncodeU32(static_cast<uint32_t>(request.env.size())));
  for (const std::string& entry : request.env) AppendFrameString(&out, entry);
  AppendFrameString(&out, request.workdir);
  return out;
}

bool DecodeExec(const std::string& payload, ExecRequest* request, std::string* error) {
  *request = ExecRequest{};
  size_t at = 0;
  if (!ReadList(payload, &at, &request->argv) || !ReadList(payload, &at, &request->env) ||
      !ReadFrameString(payload, &at, &request->workdir)) {
    *error = "exec request truncated";
    return false;
  }
  if (at != payload.size()) {
    *error = "exec request has trailing bytes";
    return false;
  }
  if (request->argv.empty()) {
    *error = "exec request has no argv";
    return false;
  }
  auto has_nul = [](const std::string& s) { return s.find('\0') != std::string::npos; };
  for (const std::string& arg : request->argv) {
    if (has_nul(arg)) {
      *error = "exec argv has a NUL byte";
      return false;
    }
  }
  for (const std::string& entry : request->env) {
    const size_t eq = entry.find('=');
    if (has_nul(entry) || eq == std::string::npos || eq == 0) {
      *error = "exec env entry is not NAME=value";
      return false;
    }
  }
  if (has_nul(request->workdir)) {
    *error = "exec workdir has a NUL byte";
    return false;
  }
  return true;
}

std::string EncodeWindow(uint16_t rows, uint16_t cols) {
  return EncodeU32((static_cast<uint32_t>(rows) << 16) | cols);
}

std::string EncodeTerminal(const TerminalRequest& request) {
  return EncodeWindow(request.rows, request.cols) + EncodeExec(request.exec);
}

bool IsTerminalFrameSignal(int sig) {
  for (int allowed : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGKILL, SIGTSTP, SIGCONT, SIGWINCH}) {
    if (sig == allowed) return true;
  }
  return false;
}

bool DecodeWindow(const std::string& payload, uint16_t* rows, uint16_t* cols, std::string* error) {
  if (payload.size() != 4) {
    *error = "window size is not 4 bytes";
    return false;
  }
  const uint32_t value = DecodeU32(payload);
  *rows = static_cast<uint16_t>(value >> 16);
  *cols = static_cast<uint16_t>(value & 0xffff);
  if (*rows < 1 || *rows > kMaxTerminalSide || *cols < 1 || *cols > kMaxTerminalSide) {
    *error = "window size " + std::to_string(*rows) + "x" + std::to_string(*cols) +
             " is not 1..1000 each way";
    return false;
  }
  return true;
}

bool DecodeTerminal(const std::string& payload, TerminalRequest* request, std::string* error) {
  *request = TerminalRequest{};
  if (payload.size() < 4) {
    *error = "terminal request truncated";
    return false;
  }
  return DecodeWindow(payload.substr(0, 4), &request->rows, &request->cols, error) &&
         DecodeExec(payload.substr(4), &request->exec, error);
}

bool DecodeSignal(const std::string& payload, int* sig, std::string* error) {
  const uint32_t value = DecodeU32(payload);
  if (payload.size() != 4 || value > 64 || !IsTerminalFrameSignal(static_cast<int>(value))) {
    *error = "signal " + std::to_string(value) + " is not one a terminal sends";
    return false;
  }
  *sig = static_cast<int>(value);
  return true;
}

void FrameDecoder::Feed(const char* data, size_t size) {
  if (!bad_.empty()) return;
  buffer_.append(data, size);
}

FrameDecoder::Result FrameDecoder::Next(Frame* frame, std::string* error) {
  if (!bad_.empty()) {
    *error = bad_;
    return Result::kBad;
  }
  if (buffer_.size() - offset_ < kFrameHeader) return Result::kNeedMore;
  const uint8_t type = static_cast<uint8_t>(buffer_[offset_]);
  const uint32_t size = DecodeU32(buffer_.substr(offset_ + 1, 4));
  const Shape shape = ShapeOf(type, from_);
  if (shape == Shape::kNone) {
    bad_ = "unexpected frame type " + std::to_string(type);
  } else if (size > kMaxFramePayload) {
    bad_ = "frame payload of " + std::to_string(size) + " bytes is over the limit";
  } else if ((shape == Shape::kEmpty && size != 0) || (shape == Shape::kFour && size != 4)) {
    bad_ = "frame type " + std::to_string(type) + " with a payload of " + std::to_string(size) +
           " bytes";
  }
  if (!bad_.empty()) {
    buffer_.clear();
    offset_ = 0;
    *error = bad_;
    return Result::kBad;
  }
  if (buffer_.size() - offset_ - kFrameHeader < size) return Result::kNeedMore;
  frame->type = static_cast<FrameType>(type);
  frame->payload.assign(buffer_, offset_ + kFrameHeader, size);
  offset_ += kFrameHeader + size;
  if (offset_ == buffer_.size() || offset_ > (1u << 16)) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  return Result::kFrame;
}

}  // namespace ccsandbox::broker::microvm
