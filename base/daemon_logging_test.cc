#include "base/daemon_logging.h"

#include <chrono>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "spdlog/details/log_msg.h"

namespace ccsandbox {
namespace {

std::string Line(LogFormat format, spdlog::level::level_enum level, absl::string_view message) {
  spdlog::details::log_msg msg("broker-log", level,
                               spdlog::string_view_t(message.data(), message.size()));
  msg.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1764677134123));
  spdlog::memory_buf_t out;
  DaemonLogFormatter("broker", format)->format(msg, out);
  return std::string(out.data(), out.size());
}

struct Case {
  std::string message;
  std::string quoted;  // what msg= carries in both formats
};

// Threat: messages carry paths and names a sandbox chose; none may end the line, close the
// quotes or leave bytes a JSON reader rejects.
const Case kCases[] = {
    {"session s1 launched", R"("session s1 launched")"},
    {"", R"("")"},
    {R"(quote " and \ backslash)", R"("quote \" and \\ backslash")"},
    {"two\nlines\ttab\rcr", R"("two\nlines\ttab\u000dcr")"},
    {std::string("nul\0bell\x07 del\x7f", 14), R"("nul\u0000bell\u0007 del\u007f")"},
    {"ünïcödé ✓ 😀", R"("ünïcödé ✓ 😀")"},
    {"bad \xff byte, cut \xe2\x9c, overlong \xc0\xaf, surrogate \xed\xa0\x80.",
     R"("bad \ufffd byte, cut \ufffd\ufffd, overlong \ufffd\ufffd, surrogate \ufffd\ufffd\ufffd.")"},
    {"fake\" level=error msg=\"forged", R"("fake\" level=error msg=\"forged")"},
};

TEST(DaemonLoggingTest, KeyValueLines) {
  for (const Case& c : kCases) {
    EXPECT_EQ(Line(LogFormat::kKeyValue, spdlog::level::info, c.message),
              "ts=2025-12-02T12:05:34.123+00:00 level=info daemon=broker msg=" + c.quoted + "\n")
        << c.message;
  }
}

TEST(DaemonLoggingTest, JsonLines) {
  for (const Case& c : kCases) {
    EXPECT_EQ(
        Line(LogFormat::kJson, spdlog::level::warn, c.message),
        R"({"ts":"2025-12-02T12:05:34.123+00:00","level":"warning","daemon":"broker","msg":)" +
            c.quoted + "}\n")
        << c.message;
  }
}

TEST(DaemonLoggingTest, FormatFlagValues) {
  EXPECT_EQ(*ParseLogFormat("text"), LogFormat::kKeyValue);
  EXPECT_EQ(*ParseLogFormat("json"), LogFormat::kJson);
  for (const char* bad : {"", "JSON", "logfmt", "json "}) {
    const absl::StatusOr<LogFormat> parsed = ParseLogFormat(bad);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(parsed.status().message().find("--log-format"), std::string::npos);
  }
}

}  // namespace
}  // namespace ccsandbox
