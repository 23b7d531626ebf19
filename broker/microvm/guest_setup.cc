#include "broker/microvm/guest_setup.h"

#include "broker/microvm/agent_frame.h"

namespace ccsandbox::broker::microvm {

bool IsNormalAbsolutePath(const std::string& path) {
  if (path.empty() || path[0] != '/' || path.find('\0') != std::string::npos) return false;
  if (path == "/") return true;
  if (path.back() == '/') return false;
  size_t at = 1;
  while (at <= path.size()) {
    size_t end = path.find('/', at);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(at, end - at);
    if (part.empty() || part == "." || part == "..") return false;
    at = end + 1;
  }
  return true;
}

namespace {

bool ValidStep(const GuestStep& step, std::string* error) {
  const bool root = step.path == "/";
  switch (step.step) {
    case SetupStep::kBase:
      if (!root || !step.arg.empty()) *error = "the base step takes \"/\" and no argument";
      break;
    case SetupStep::kShare:
    case SetupStep::kShareReadOnly:
    case SetupStep::kShareCached:
      if (step.arg.empty() || step.arg.size() > kMaxMountTag ||
          step.arg.find('\0') != std::string::npos) {
        *error = "a share's mount tag must be 1 to 31 bytes";
      }
      break;
    case SetupStep::kSymlink:
      if (root || step.arg.empty() || step.arg.find('\0') != std::string::npos) {
        *error = "a symlink needs a path below / and a target";
      }
      break;
    case SetupStep::kMaskDir:
    case SetupStep::kMaskFile:
    case SetupStep::kPin:
    case SetupStep::kReadOnly:
      if (root || !step.arg.empty()) *error = "a guard takes a path below / and no argument";
      break;
    default:
      *error = "unknown setup step " + std::to_string(static_cast<int>(step.step));
      return false;
  }
  if (error->empty() && !IsNormalAbsolutePath(step.path)) {
    *error = "setup path is not absolute and normalised: " + step.path;
  }
  return error->empty();
}

}  // namespace

std::string EncodeSetup(const GuestSetup& setup) {
  std::string out = EncodeU32(static_cast<uint32_t>(setup.steps.size()));
  for (const GuestStep& step : setup.steps) {
    out.push_back(static_cast<char>(step.step));
    AppendFrameString(&out, step.path);
    AppendFrameString(&out, step.arg);
  }
  AppendFrameString(&out, setup.workdir);
  return out;
}

bool DecodeSetup(const std::string& payload, GuestSetup* setup, std::string* error) {
  *setup = GuestSetup{};
  error->clear();
  size_t at = 0;
  if (payload.size() < 4) {
    *error = "setup truncated";
    return false;
  }
  const uint32_t n = DecodeU32(payload.substr(0, 4));
  at = 4;
  // Each step takes at least 9 bytes: a count larger than that is a lie.
  if (n > (payload.size() - at) / 9) {
    *error = "setup truncated";
    return false;
  }
  int bases = 0;
  for (uint32_t i = 0; i < n; ++i) {
    GuestStep step;
    step.step = static_cast<SetupStep>(payload[at++]);
    if (!ReadFrameString(payload, &at, &step.path) || !ReadFrameString(payload, &at, &step.arg)) {
      *error = "setup truncated";
      return false;
    }
    if (!ValidStep(step, error)) return false;
    if (step.step == SetupStep::kBase) ++bases;
    setup->steps.push_back(std::move(step));
  }
  if (!ReadFrameString(payload, &at, &setup->workdir)) {
    *error = "setup truncated";
    return false;
  }
  if (at != payload.size()) {
    *error = "setup has trailing bytes";
    return false;
  }
  if (bases != 1) {
    *error = "setup must have exactly one base step";
    return false;
  }
  if (!setup->workdir.empty() && !IsNormalAbsolutePath(setup->workdir)) {
    *error = "setup workdir is not absolute and normalised";
    return false;
  }
  return true;
}

}  // namespace ccsandbox::broker::microvm
