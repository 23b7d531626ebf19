#include "policy/violations/seatbelt_log.h"

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "policy/violations/corpus_file.h"
#include "policy/violations/parser.h"

namespace ccsandbox::policy {
namespace {

struct CorpusCase {
  int line_number = 0;
  std::string verdict;  // denial, noise, -
  std::string action;
  std::string target;
  int64_t pid = 0;
  std::string raw;
};

std::vector<CorpusCase> LoadCorpus() {
  std::vector<CorpusCase> cases;
  for (testing::CorpusRow& row :
       testing::ReadCorpus("policy/violations/testdata/seatbelt_log_corpus.tsv", 5)) {
    std::vector<std::string>& f = row.fields;
    CorpusCase c{row.line_number, f[0], f[1], f[2], 0, f[4]};
    if (c.verdict != "-") {
      EXPECT_TRUE(absl::SimpleAtoi(f[3], &c.pid)) << "corpus line " << row.line_number;
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

// Apple's ndjson shape around one eventMessage (already JSON-escaped).
std::string LogLine(absl::string_view escaped_message) {
  return absl::StrCat(
      R"({"traceID":1,"eventMessage":")", escaped_message,
      R"(","eventType":"logEvent","subsystem":"","category":"","processImagePath":"/kernel",)",
      R"("timestamp":"2026-12-02 21:07:35.123456+0000","messageType":"Error","processID":0})");
}

TEST(ParseSeatbeltLogLine, Corpus) {
  const std::vector<CorpusCase> cases = LoadCorpus();
  int denials = 0, noise = 0, others = 0;
  for (const CorpusCase& c : cases) {
    SCOPED_TRACE(absl::StrCat("corpus line ", c.line_number, ": ", c.raw));
    const std::optional<SeatbeltDenial> d = ParseSeatbeltLogLine(c.raw);
    if (c.verdict == "-") {
      ++others;
      EXPECT_FALSE(d.has_value()) << d->violation.action() << " " << d->violation.target();
      continue;
    }
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->violation.action(), c.action);
    EXPECT_EQ(d->violation.target(), c.target);
    EXPECT_EQ(d->violation.raw(), c.raw);
    EXPECT_EQ(d->pid, c.pid);
    EXPECT_EQ(IsSeatbeltNoise(d->violation), c.verdict == "noise");
    (c.verdict == "noise" ? noise : denials)++;
  }
  EXPECT_GE(denials, 20);
  EXPECT_GE(noise, 3);
  EXPECT_GE(others, 20);
}

TEST(ParseSeatbeltLogLine, KeepsProcessNameAndIgnoresTerminator) {
  const std::string line =
      LogLine("Sandbox: Google Chrome Helper (GPU)(85) deny(1) file-read-data /Users/dev/.ssh/x");
  for (const std::string& l : {line, line + "\n", line + "\r\n"}) {
    const std::optional<SeatbeltDenial> d = ParseSeatbeltLogLine(l);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->process, "Google Chrome Helper (GPU)");
    EXPECT_EQ(d->pid, 85);
    EXPECT_EQ(d->violation.raw(), line);
  }
}

TEST(ParseSeatbeltLogLine, InvalidUtf8BecomesReplacementCharacter) {
  const std::string line =
      LogLine("Sandbox: touch(9) deny(1) file-write-create /tmp/a\xff\xfe.env");
  const std::optional<SeatbeltDenial> d = ParseSeatbeltLogLine(line);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->violation.target(), "/tmp/a\xEF\xBF\xBD\xEF\xBF\xBD.env");
  EXPECT_EQ(d->violation.raw(), SanitizeUtf8(line));
  v1::SandboxViolation back;
  ASSERT_TRUE(back.ParseFromString(d->violation.SerializeAsString()));
  EXPECT_EQ(back.target(), d->violation.target());
}

TEST(ParseSeatbeltLogLine, HugeLinesAreIgnoredWhole) {
  const std::string at_cap_target(kMaxSeatbeltTargetBytes - 1, 'a');
  const std::string ok = LogLine("Sandbox: cat(3) deny(1) file-read-data /" + at_cap_target);
  ASSERT_LE(ok.size(), kMaxSeatbeltLogLineBytes);
  ASSERT_TRUE(ParseSeatbeltLogLine(ok).has_value());
  EXPECT_EQ(ParseSeatbeltLogLine(ok)->violation.target().size(), kMaxSeatbeltTargetBytes);

  const std::string long_target = LogLine("Sandbox: cat(3) deny(1) file-read-data /a" +
                                          at_cap_target);  // one byte over the target cap
  EXPECT_FALSE(ParseSeatbeltLogLine(long_target).has_value());
  const std::string huge = LogLine("Sandbox: cat(3) deny(1) file-read-data /" +
                                   std::string(kMaxSeatbeltLogLineBytes, 'a'));
  EXPECT_FALSE(ParseSeatbeltLogLine(huge).has_value());
  EXPECT_FALSE(ParseSeatbeltLogLine(std::string(1 << 20, '{')).has_value());
  EXPECT_FALSE(ParseSeatbeltLogLine(std::string(1 << 20, '[')).has_value());
}

TEST(ParseSeatbeltLogLine, DeepNestingIsRefusedNotACrash) {
  std::string nested;
  for (int i = 0; i < 5000; ++i) nested += R"({"a":)";
  nested += "1";
  for (int i = 0; i < 5000; ++i) nested += "}";
  EXPECT_FALSE(ParseSeatbeltLogLine(nested).has_value());
}

TEST(ParseSeatbeltDenialMessage, Shapes) {
  struct Case {
    absl::string_view message;
    absl::string_view action;  // "" = none
    absl::string_view target;
    int64_t pid;
  };
  const std::string long_action = "Sandbox: bash(1) deny(1) " + std::string(65, 'a');
  const Case cases[] = {
      {"Sandbox: bash(1) deny(1) file-read-data /x", "file-read-data", "/x", 1},
      {"bash(1) deny(1) file-read-data /x", "file-read-data", "/x", 1},
      {"Sandbox: bash(1) deny(1) file-read-data /x  \n", "file-read-data", "/x", 1},
      {"Sandbox: bash(1) deny(1) file-read*", "file-read*", "", 1},
      {"Sandbox: (1) deny(1) file-read-data /x", "", "", 0},  // no name
      {"Sandbox: bash() deny(1) file-read-data /x", "", "", 0},
      {"Sandbox: bash(+1) deny(1) file-read-data /x", "", "", 0},
      {"Sandbox: bash(99999999999999999999) deny(1) file-read-data /x", "", "", 0},
      {"Sandbox: bash(1) deny(1)file-read-data /x", "", "", 0},
      {"Sandbox: bash(1) deny(1) 1file /x", "", "", 0},
      {"Sandbox: bash(1) deny(1) file**", "", "", 0},
      {long_action, "", "", 0},
      {"", "", "", 0},
      {") deny(", "", "", 0},
      {"(1) deny(1) a", "", "", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    const std::optional<SeatbeltDenial> d = ParseSeatbeltDenialMessage(c.message);
    if (c.action.empty()) {
      EXPECT_FALSE(d.has_value());
      continue;
    }
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->violation.action(), c.action);
    EXPECT_EQ(d->violation.target(), c.target);
    EXPECT_EQ(d->pid, c.pid);
  }
}

}  // namespace
}  // namespace ccsandbox::policy
