#include "policy/violations/seatbelt_log.h"

#include <array>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "policy/violations/parser.h"

namespace ccsandbox::policy {
namespace {

// Known noise: denials macOS logs for nearly every process under any Seatbelt profile.
struct Noise {
  absl::string_view action_prefix;  // "" matches every action
  absl::string_view target;
  absl::string_view why;
};
inline constexpr std::array<Noise, 3> kSeatbeltNoise = {{
    // dyld registers DTrace USDT probes of every binary that has them; harmless when refused.
    {"", "/dev/dtracehelper", "dtrace probe registration"},
    // libinfo retries its resolver socket; the profile's DNS rule decides, the retries are noise.
    {"network-outbound", "/private/var/run/mDNSResponder", "mDNSResponder lookups"},
    {"network-outbound", "/var/run/mDNSResponder", "mDNSResponder lookups"},
}};

bool IsActionChar(char c) { return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-'; }

bool IsSeatbeltAction(absl::string_view a) {
  if (a.empty() || a.size() > kMaxSeatbeltActionBytes || !absl::ascii_islower(a[0])) return false;
  if (a.back() == '*') a.remove_suffix(1);
  for (char c : a) {
    if (!IsActionChar(c)) return false;
  }
  return true;
}

}  // namespace

std::optional<SeatbeltDenial> ParseSeatbeltDenialMessage(absl::string_view message) {
  message = absl::StripTrailingAsciiWhitespace(message);
  absl::ConsumePrefix(&message, "Sandbox: ");
  // NAME(PID) deny(N) ACTION[ TARGET]: the first "(PID) deny(" whose PID is a number. The target
  // (a path the command chose, unbounded) may spell "(123) deny(1) ..." too, the name only within
  // its 32 bytes (MAXCOMLEN * 2), so the first match is the logged one unless the process named
  // itself so. Such a process can state another pid: its denial is then attributed to that pid's
  // run or dropped as unattributed (residual; the text alone cannot tell the two apart).
  size_t deny = message.find(") deny(");
  while (deny != absl::string_view::npos) {
    const size_t open = message.rfind('(', deny);
    int64_t pid = 0;
    if (open != absl::string_view::npos && open > 0 &&
        absl::SimpleAtoi(message.substr(open + 1, deny - open - 1), &pid) && pid > 0 &&
        absl::ascii_isdigit(message[open + 1])) {
      absl::string_view rest = message.substr(deny + 7);  // after ") deny("
      const size_t close = rest.find(") ");
      int count = 0;
      if (close != absl::string_view::npos && absl::SimpleAtoi(rest.substr(0, close), &count) &&
          count >= 0) {
        rest.remove_prefix(close + 2);
        const size_t space = rest.find(' ');
        const absl::string_view action = rest.substr(0, space);
        absl::string_view target =
            space == absl::string_view::npos ? absl::string_view() : rest.substr(space + 1);
        target = absl::StripAsciiWhitespace(target);
        if (IsSeatbeltAction(action) && target.size() <= kMaxSeatbeltTargetBytes) {
          SeatbeltDenial d;
          d.pid = pid;
          d.process = SanitizeUtf8(message.substr(0, open));
          d.violation.set_action(std::string(action));
          d.violation.set_target(SanitizeUtf8(target));
          return d;
        }
      }
      return std::nullopt;
    }
    deny = message.find(") deny(", deny + 1);
  }
  return std::nullopt;
}

std::optional<SeatbeltDenial> ParseSeatbeltLogLine(absl::string_view line) {
  absl::ConsumeSuffix(&line, "\n");
  absl::ConsumeSuffix(&line, "\r");
  if (line.empty() || line.size() > kMaxSeatbeltLogLineBytes) return std::nullopt;
  if (line.find_first_of("\r\n") != absl::string_view::npos) return std::nullopt;  // not one line
  const std::string text = SanitizeUtf8(line);
  if (text.empty() || text[0] != '{') return std::nullopt;
  google::protobuf::Struct object;
  if (!google::protobuf::util::JsonStringToMessage(text, &object).ok()) return std::nullopt;
  const auto it = object.fields().find("eventMessage");
  if (it == object.fields().end() || !it->second.has_string_value()) return std::nullopt;
  std::optional<SeatbeltDenial> d = ParseSeatbeltDenialMessage(it->second.string_value());
  if (!d.has_value()) return std::nullopt;
  // An eventMessage spanning lines (escaped "\n" in the JSON) is not a denial's shape.
  if (d->violation.target().find_first_of("\r\n") != std::string::npos ||
      d->process.find_first_of("\r\n") != std::string::npos) {
    return std::nullopt;
  }
  d->violation.set_raw(text);
  return d;
}

bool IsSeatbeltNoise(const v1::SandboxViolation& violation) {
  for (const Noise& n : kSeatbeltNoise) {
    if (absl::StartsWith(violation.action(), n.action_prefix) && violation.target() == n.target) {
      return true;
    }
  }
  return false;
}

}  // namespace ccsandbox::policy
