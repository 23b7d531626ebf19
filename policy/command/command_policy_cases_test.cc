// The real-world table: tests/testdata/command_policy_cases.tsv, one command line per row with
// the expected decision in every mode (the file's header explains the columns).
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "policy/command/command_policy.h"

namespace ccsandbox::policy {
namespace {

struct Row {
  int line = 0;
  std::string command;
  std::string verdicts[4];  // chat, review, plan, orchestrate
  std::string rule;
  std::string note;
};

std::vector<Row> LoadRows() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  std::string path = "tests/testdata/command_policy_cases.tsv";
  if (srcdir != nullptr) path = std::string(srcdir) + "/ccsandbox/" + path;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::vector<Row> rows;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols = absl::StrSplit(line, '\t');
    EXPECT_EQ(cols.size(), 7u) << "line " << number << ": " << line;
    if (cols.size() != 7) continue;
    Row r;
    r.line = number;
    r.command = absl::StrReplaceAll(cols[0], {{"↵", "\n"}});
    for (int i = 0; i < 4; ++i) r.verdicts[i] = cols[1 + i];
    r.rule = cols[5];
    r.note = cols[6];
    rows.push_back(std::move(r));
  }
  return rows;
}

constexpr Mode kModes[] = {Mode::kChat, Mode::kReview, Mode::kPlan, Mode::kOrchestrate};

TEST(CommandPolicyCases, EveryRowDecidesAsListed) {
  std::vector<Row> rows = LoadRows();
  ASSERT_GE(rows.size(), 300u);
  std::map<std::string, int> counts;
  int limitations = 0;
  for (const Row& r : rows) {
    for (int m = 0; m < 4; ++m) {
      CommandDecision d = EvaluateCommand(kModes[m], r.command);
      EXPECT_EQ(PolicyVerdictName(d.verdict), r.verdicts[m])
          << "line " << r.line << " (" << ModeName(kModes[m]) << "): " << r.command << "\n"
          << d.reason;
      ++counts[std::string(ModeName(kModes[m])) + " " + r.verdicts[m]];
      if (m == 0) {
        EXPECT_EQ(CommandRuleId(d.rule), r.rule) << "line " << r.line << ": " << r.command;
        EXPECT_FALSE(d.reason.empty());
        EXPECT_FALSE(d.subcommand.empty()) << "line " << r.line;
      }
    }
    if (r.note.rfind("limitation:", 0) == 0) ++limitations;
  }
  EXPECT_GT(limitations, 0);
  for (const auto& [key, n] : counts) std::cout << key << ": " << n << "\n";
  std::cout << "rows: " << rows.size() << ", known limitations: " << limitations << "\n";
}

// Whatever the table says, these properties hold for every row.
TEST(CommandPolicyCases, ReadOnlyModesNeverPromptAndAgree) {
  for (const Row& r : LoadRows()) {
    EXPECT_NE(r.verdicts[1], "prompt") << "line " << r.line;
    EXPECT_EQ(r.verdicts[1], r.verdicts[2]) << "line " << r.line;
    EXPECT_EQ(r.verdicts[2], r.verdicts[3]) << "line " << r.line;
    // A read-only mode is never more permissive than chat.
    if (r.verdicts[0] == "deny") {
      EXPECT_EQ(r.verdicts[1], "deny") << "line " << r.line;
    }
  }
}

}  // namespace
}  // namespace ccsandbox::policy
