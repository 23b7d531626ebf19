#include "policy/violations/parser.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/violations/corpus_file.h"

namespace ccsandbox::policy {
namespace {

struct CorpusCase {
  int line_number = 0;
  std::string action;  // "-": not a violation
  std::string target;
  std::string raw;
};

std::vector<CorpusCase> LoadCorpus() {
  std::vector<CorpusCase> cases;
  for (testing::CorpusRow& row :
       testing::ReadCorpus("policy/violations/testdata/violation_corpus.tsv", 3)) {
    cases.push_back({row.line_number, row.fields[0], row.fields[1], row.fields[2]});
  }
  return cases;
}

TEST(ParseViolationLine, Corpus) {
  const std::vector<CorpusCase> cases = LoadCorpus();
  int positives = 0;
  for (const CorpusCase& c : cases) {
    SCOPED_TRACE("corpus line " + std::to_string(c.line_number) + ": " + c.raw);
    const std::optional<v1::SandboxViolation> v = ParseViolationLine(c.raw);
    if (c.action == "-") {
      EXPECT_FALSE(v.has_value()) << "action " << v->action() << " target " << v->target();
      continue;
    }
    ++positives;
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->action(), c.action);
    EXPECT_EQ(v->target(), c.target);
    EXPECT_EQ(v->raw(), c.raw);
  }
  EXPECT_GE(positives, 40);
  EXPECT_GE(cases.size() - positives, 20u);
}

TEST(ParseViolationLine, IgnoresTheLineTerminator) {
  for (absl::string_view line : {"cat: /x: Permission denied\n", "cat: /x: Permission denied\r\n",
                                 "cat: /x: Permission denied\r"}) {
    std::optional<v1::SandboxViolation> v = ParseViolationLine(line);
    ASSERT_TRUE(v.has_value()) << line;
    EXPECT_EQ(v->raw(), "cat: /x: Permission denied");
    EXPECT_EQ(v->target(), "/x");
  }
}

TEST(ParseViolationLine, ShellEscapedQuotesAreUndone) {
  std::optional<v1::SandboxViolation> v =
      ParseViolationLine(R"(rm: cannot remove '/ro/a'\''b c': Permission denied)");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->target(), "/ro/a'b c");
}

TEST(ParseViolationLine, GoAndZshShapes) {
  std::optional<v1::SandboxViolation> v = ParseViolationLine("open /etc/x: permission denied");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->action(), kActionFileAccess);
  EXPECT_EQ(v->target(), "/etc/x");
  v = ParseViolationLine("Error: mkdir /usr/d: read-only file system");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->action(), kActionFileWrite);
  EXPECT_EQ(v->target(), "/usr/d");
  v = ParseViolationLine("fork/exec /tmp/x: permission denied");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->action(), kActionProcessExec);
  EXPECT_EQ(v->target(), "/tmp/x");
  v = ParseViolationLine("zsh: permission denied: ./build.sh");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->action(), kActionProcessExec);
  EXPECT_EQ(v->target(), "./build.sh");
}

TEST(ParseViolationLine, MoreShapes) {
  struct Case {
    absl::string_view line;
    absl::string_view action;
    absl::string_view target;
  };
  const Case cases[] = {
      {"bwrap: Can't mount proc on /newroot/proc: Operation not permitted", kActionFileMount,
       "/newroot/proc"},
      {"bwrap: Creating new namespace failed: Operation not permitted", kActionSyscall, "unshare"},
      {"Error: connect EACCES 10.0.0.1:443", kActionNetworkOutbound, "10.0.0.1:443"},
      {"bash: line 1: ulimit: open files: cannot modify limit: Operation not "
       "permitted",
       kActionSyscall, "setrlimit"},
      {"ping: socket: Operation not permitted", kActionSyscall, "socket"},
      {"npm ERR! Error: EACCES: permission denied, mkdir "
       "'/usr/lib/node_modules'",
       kActionFileWrite, "/usr/lib/node_modules"},
      {"ERROR: Could not install packages due to an OSError: [Errno 13] "
       "Permission denied: '/usr/lib/python3/dist-packages/x'",
       kActionFileAccess, "/usr/lib/python3/dist-packages/x"},
      {"  Permission denied (os error 13)", kActionFileAccess, ""},
      {"Permission denied", kActionFileAccess, ""},
      // Prose is not an operand.
      {"tool: the final step: Permission denied", kActionFileAccess, ""},
  };
  for (const Case& c : cases) {
    std::optional<v1::SandboxViolation> v = ParseViolationLine(c.line);
    ASSERT_TRUE(v.has_value()) << c.line;
    EXPECT_EQ(v->action(), c.action) << c.line;
    EXPECT_EQ(v->target(), c.target) << c.line;
  }
}

TEST(ParseViolationLine, OutputIsValidUtf8) {
  std::optional<v1::SandboxViolation> v =
      ParseViolationLine("cat: /tmp/caf\xE9: Permission denied");  // Latin-1 file name
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->target(), "/tmp/caf\xEF\xBF\xBD");
  EXPECT_EQ(v->raw(), "cat: /tmp/caf\xEF\xBF\xBD: Permission denied");
  v = ParseViolationLine(
      "mkdir: cannot create directory "
      "\xE2\x80\x98/ro/\xC3\xA9t\xC3\xA9\xE2\x80\x99: "
      "Permission denied");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->target(), "/ro/\xC3\xA9t\xC3\xA9");
}

std::vector<std::string> Targets(const std::vector<v1::SandboxViolation>& vs) {
  std::vector<std::string> out;
  for (const v1::SandboxViolation& v : vs) out.push_back(v.target());
  return out;
}

TEST(ViolationScanner, JoinsLinesSplitAcrossChunks) {
  ViolationScanner scanner;
  EXPECT_TRUE(scanner.Feed("hello\ncat: /a: Perm").empty());
  EXPECT_TRUE(scanner.Feed("ission den").empty());
  EXPECT_EQ(Targets(scanner.Feed("ied\ntouch: cannot touch '/b': Read-only file system\nok\n")),
            (std::vector<std::string>{"/a", "/b"}));
  EXPECT_TRUE(scanner.Finish().empty());
}

TEST(ViolationScanner, HandlesCrLfAndBareCr) {
  ViolationScanner scanner;
  std::vector<v1::SandboxViolation> vs =
      scanner.Feed("cat: /a: Permission denied\r\n10%\r50%\rcat: /b: Permission denied\r");
  ASSERT_EQ(vs.size(), 2u);
  EXPECT_EQ(vs[0].raw(), "cat: /a: Permission denied");
  EXPECT_EQ(vs[1].raw(), "cat: /b: Permission denied");
  EXPECT_TRUE(scanner.Feed("\n").empty());
}

TEST(ViolationScanner, FinishFlushesTheLastLine) {
  ViolationScanner scanner;
  EXPECT_TRUE(scanner.Feed("rm: cannot remove '/c': Operation not permitted").empty());
  std::vector<v1::SandboxViolation> vs = scanner.Finish();
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].target(), "/c");
  EXPECT_EQ(vs[0].action(), kActionFileWrite);
  EXPECT_TRUE(scanner.Finish().empty());
  EXPECT_EQ(Targets(scanner.Feed("cat: /d: Permission denied\n")),
            (std::vector<std::string>{"/d"}));  // reusable after Finish
}

TEST(ViolationScanner, CutsLongLinesAndDropsTheirRest) {
  ViolationScanner scanner;
  // A marker past the cap is lost; the next line is still parsed.
  const std::string long_path = "/" + std::string(kMaxViolationLineBytes, 'a');
  EXPECT_TRUE(scanner.Feed("cat: " + long_path).empty());
  EXPECT_TRUE(scanner.Feed(": Permission denied").empty());
  EXPECT_EQ(Targets(scanner.Feed("\ncat: /e: Permission denied\n")),
            (std::vector<std::string>{"/e"}));
  // A kept prefix that reports is parsed as soon as the cap is reached.
  std::vector<v1::SandboxViolation> vs =
      scanner.Feed("cat: /f: Permission denied" + std::string(kMaxViolationLineBytes, ' '));
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].target(), "/f");
  EXPECT_EQ(vs[0].raw().size(), kMaxViolationLineBytes);
  EXPECT_TRUE(scanner.Feed(std::string(3 * kMaxViolationLineBytes, 'y')).empty());
  EXPECT_TRUE(scanner.Feed(": Permission denied\n").empty());
  EXPECT_EQ(Targets(scanner.Feed("cat: /g: Permission denied\n")),
            (std::vector<std::string>{"/g"}));
  EXPECT_TRUE(scanner.Finish().empty());
}

TEST(ViolationScanner, AtTheCapTheLineIsWhole) {
  const std::string prefix = "cat: /";
  const std::string suffix = ": Permission denied";
  const std::string line =
      prefix + std::string(kMaxViolationLineBytes - prefix.size() - suffix.size(), 'p') + suffix;
  ASSERT_EQ(line.size(), kMaxViolationLineBytes);
  ViolationScanner scanner;
  std::vector<v1::SandboxViolation> vs = scanner.Feed(line + "\n");
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].raw(), line);
  // One byte more: the line is cut to `line`, which reports at once.
  vs = scanner.Feed(line + "!");
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].raw(), line);
  EXPECT_TRUE(scanner.Feed("\n").empty());
}

TEST(ViolationScanner, CutsOnACharacterBoundary) {
  ViolationScanner scanner;
  // "é" (2 bytes) straddles the cap.
  const std::string head = "cat: /x: Permission denied";
  std::string line = head + std::string(kMaxViolationLineBytes - head.size() - 1, ' ');
  line += "\xC3\xA9 more";
  // The marker must end the kept text for the line to match: pad with spaces,
  // which are stripped before the marker's follow check.
  std::vector<v1::SandboxViolation> vs = scanner.Feed(line + "\n");
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].raw().size(), kMaxViolationLineBytes - 1);
  EXPECT_EQ(vs[0].raw().find("\xEF\xBF\xBD"), std::string::npos);
}

std::string Describe(const std::vector<v1::SandboxViolation>& vs) {
  std::string out;
  for (const v1::SandboxViolation& v : vs) {
    out += v.action() + " " + v.target() + " " + v.raw() + "\n";
  }
  return out;
}

TEST(ViolationScanner, AnyChunkingMatchesLineByLine) {
  std::string stream;
  std::vector<v1::SandboxViolation> expected;
  for (const CorpusCase& c : LoadCorpus()) {
    stream += c.raw + "\n";
    if (std::optional<v1::SandboxViolation> v = ParseViolationLine(c.raw)) {
      expected.push_back(*v);
    }
  }
  for (size_t chunk_size : {size_t{1}, size_t{7}, size_t{64}, stream.size()}) {
    SCOPED_TRACE("chunk size " + std::to_string(chunk_size));
    ViolationScanner scanner;
    std::vector<v1::SandboxViolation> all;
    for (size_t i = 0; i < stream.size(); i += chunk_size) {
      for (v1::SandboxViolation& v :
           scanner.Feed(absl::string_view(stream).substr(i, chunk_size))) {
        all.push_back(std::move(v));
      }
    }
    for (v1::SandboxViolation& v : scanner.Finish()) all.push_back(std::move(v));
    EXPECT_EQ(Describe(all), Describe(expected));
  }
}

}  // namespace
}  // namespace ccsandbox::policy
