#include "base/daemon_logging.h"

#include <memory>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, log_format, "text",
          "log line shape on stderr: text (key=value: ts= level= daemon= msg=\"...\") or json "
          "(one JSON object per line)");

namespace ccsandbox {
namespace {

// Length of the well-formed UTF-8 sequence at s[i], 0 when the bytes there are not one.
size_t Utf8SequenceLength(absl::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  size_t n = 0;
  unsigned min = 0;
  unsigned code = 0;
  if (b >= 0xC2 && b <= 0xDF)
    n = 2, code = b & 0x1F, min = 0x80;
  else if (b >= 0xE0 && b <= 0xEF)
    n = 3, code = b & 0x0F, min = 0x800;
  else if (b >= 0xF0 && b <= 0xF4)
    n = 4, code = b & 0x07, min = 0x10000;
  else
    return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

// `text` as a double-quoted string both logfmt readers and JSON accept: quotes, backslashes and
// control characters escaped, bytes that are not UTF-8 replaced by U+FFFD.
void AppendQuoted(absl::string_view text, spdlog::memory_buf_t& out) {
  out.push_back('"');
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out.append(absl::string_view("\\n"));
    } else if (c == '\t') {
      out.append(absl::string_view("\\t"));
    } else if (c < 0x20 || c == 0x7F) {
      out.append(absl::string_view(absl::StrFormat("\\u%04x", c)));
    } else if (c >= 0x80) {
      const size_t n = Utf8SequenceLength(text, i);
      if (n == 0) {
        out.append(absl::string_view("\\ufffd"));
        ++i;
        continue;
      }
      out.append(text.substr(i, n));
      i += n;
      continue;
    } else {
      out.push_back(static_cast<char>(c));
    }
    ++i;
  }
  out.push_back('"');
}

// %Q: the message, quoted and escaped.
class QuotedMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    AppendQuoted(absl::string_view(msg.payload.data(), msg.payload.size()), dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<QuotedMessage>();
  }
};

constexpr char kTime[] = "%Y-%m-%dT%H:%M:%S.%e%z";

}  // namespace

absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view flag_value) {
  if (flag_value == "text") return LogFormat::kKeyValue;
  if (flag_value == "json") return LogFormat::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("--log-format: expected text or json, got '", flag_value.substr(0, 64), "'"));
}

std::unique_ptr<spdlog::formatter> DaemonLogFormatter(const std::string& daemon, LogFormat format) {
  const std::string pattern =
      format == LogFormat::kJson
          ? absl::StrCat("{\"ts\":\"", kTime, "\",\"level\":\"%l\",\"daemon\":\"", daemon,
                         "\",\"msg\":%Q}")
          : absl::StrCat("ts=", kTime, " level=%^%l%$ daemon=", daemon, " msg=%Q");
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  formatter->add_flag<QuotedMessage>('Q').set_pattern(pattern);
  return formatter;
}

absl::Status SetUpDaemonLogging(const std::string& daemon) {
  absl::StatusOr<LogFormat> format = ParseLogFormat(absl::GetFlag(FLAGS_log_format));
  // JSON lines are read by programs: no colour codes inside the level's quotes.
  const spdlog::color_mode colour = format.ok() && *format == LogFormat::kJson
                                        ? spdlog::color_mode::never
                                        : spdlog::color_mode::automatic;
  auto logger = spdlog::stderr_color_mt(daemon + "-log", colour);
  logger->set_formatter(DaemonLogFormatter(daemon, format.value_or(LogFormat::kKeyValue)));
  spdlog::set_default_logger(std::move(logger));
  return format.status();
}

}  // namespace ccsandbox
