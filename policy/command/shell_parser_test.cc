#include "policy/command/shell_parser.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

// Each command as its words joined by '|' (assignments first, prefixed with '='), in the
// parser's order.
std::vector<std::string> Flatten(const ShellScript& script) {
  std::vector<std::string> out;
  for (const ShellCommand& c : script.commands) {
    std::vector<std::string> parts;
    for (const ShellWord& a : c.assignments) parts.push_back("=" + a.text);
    for (const ShellWord& w : c.words) parts.push_back(w.text);
    if (c.compound) parts.push_back("<compound>");
    out.push_back(absl::StrJoin(parts, "|"));
  }
  return out;
}

struct ParseCase {
  std::string input;
  std::vector<std::string> commands;
};

class ParsesInto : public testing::TestWithParam<ParseCase> {};

TEST_P(ParsesInto, Commands) {
  absl::StatusOr<ShellScript> script = ParseShell(GetParam().input);
  ASSERT_TRUE(script.ok()) << GetParam().input << ": " << script.status();
  EXPECT_EQ(Flatten(*script), GetParam().commands) << GetParam().input;
}

INSTANTIATE_TEST_SUITE_P(
    ShellParser, ParsesInto,
    testing::ValuesIn(std::vector<ParseCase>{
        {"", {}},
        {"   # only a comment", {}},
        {"ls", {"ls"}},
        {"ls -la /tmp", {"ls|-la|/tmp"}},
        {"echo 'a b' \"c d\" e\\ f", {"echo|a b|c d|e f"}},
        {"echo 'it'\\''s'", {"echo|it's"}},
        {"echo \"a\\\"b\\$c\\d\"", {"echo|a\"b$c\\d"}},
        {"echo $'a\\tb\\x41\\u00e9'", {"echo|a\tbA\xc3\xa9"}},
        {"ec\"ho\" x", {"echo|x"}},
        {"\\rm -rf x", {"rm|-rf|x"}},
        {"a; b && c || d | e & f", {"a", "b", "c", "d", "e", "f"}},
        {"a;b&&c||d|e&f", {"a", "b", "c", "d", "e", "f"}},
        {"a\nb\n\nc", {"a", "b", "c"}},
        {"a |& b", {"a", "b"}},
        {"! a | b", {"a", "b"}},
        {"time -p make", {"make"}},
        {"(cd x && make)", {"cd|x", "make"}},
        {"{ a; b; }", {"a", "b"}},
        {"{ a; b; } > out", {"a", "b", "<compound>"}},
        {"echo $(git push)", {"git|push", "echo|$(git push)"}},
        {"echo \"$(git push)\"", {"git|push", "echo|$(git push)"}},
        {"echo `git push`", {"git|push", "echo|`git push`"}},
        {"echo \"`git push`\"", {"git|push", "echo|`git push`"}},
        {"echo `echo \\`rm x\\``", {"rm|x", "echo|`rm x`", "echo|`echo \\`rm x\\``"}},
        {"echo $(echo $(rm x))", {"rm|x", "echo|$(rm x)", "echo|$(echo $(rm x))"}},
        {"echo ${X:-$(rm x)}", {"rm|x", "echo|${X:-$(rm x)}"}},
        {"echo $((1 + $(rm x)))", {"rm|x", "echo|$((1 + $(rm x)))"}},
        {"echo $( (rm x) )", {"rm|x", "echo|$( (rm x) )"}},
        {"diff <(ls a) <(ls b)", {"ls|a", "ls|b", "diff|<(ls a)|<(ls b)"}},
        {"FOO=1 BAR='x y' make all", {"=FOO=1|=BAR=x y|make|all"}},
        {"FOO=1", {"=FOO=1"}},
        {"arr=(a b $(rm x))", {"rm|x", "=arr=(a b $(rm x))"}},
        {"make FOO=1", {"make|FOO=1"}},
        {"make >log 2>&1", {"make"}},
        {"if git diff --quiet; then echo clean; else git commit -am x; fi",
         {"git|diff|--quiet", "echo|clean", "git|commit|-am|x"}},
        {"if a; then b; elif c; then d; fi", {"a", "b", "c", "d"}},
        {"while read l; do echo $l; done < f", {"read|l", "echo|$l", "<compound>"}},
        {"until a; do b; done", {"a", "b"}},
        {"for f in *.c $(ls); do gcc $f; done", {"ls", "gcc|$f"}},
        {"for ((i=0;i<3;i++)); do echo $i; done", {"echo|$i"}},
        {"for f in a b; { echo $f; }", {"echo|$f"}},
        {"case $x in a|b) echo a;; *) rm x;; esac", {"echo|a", "rm|x"}},
        {"case x in (a) ;; esac", {}},
        {"f() { rm -rf x; }", {"rm|-rf|x"}},
        {"function f { rm -rf x; }; f", {"rm|-rf|x", "f"}},
        {"[[ -f x && $(rm y) ]]", {"rm|y", "[[|-f|x|&&|$(rm y)|]]"}},
        {"((i++))", {"(("}},
        {"((((ls))))", {"(("}},  // arithmetic, as in bash: nothing runs
        {"cat <<EOF\nhello $(rm x)\nEOF\necho done", {"cat", "rm|x", "echo|done"}},
        {"cat <<'EOF'\nhello $(rm x)\nEOF", {"cat"}},
        {"cat <<-EOF\n\thi\n\tEOF\nls", {"cat", "ls"}},
        {"cat <<< 'here string'", {"cat"}},
        {"cat <<A; cat <<B\na\nA\n$(rm x)\nB", {"cat", "cat", "rm|x"}},
        {"echo $(case x in x) rm y;; esac)", {"rm|y", "echo|$(case x in x) rm y;; esac)"}},
        {"echo \"${x:-'}'$(rm y)}\"", {"rm|y", "echo|${x:-'}'$(rm y)}"}},
        {"echo a\\\nb", {"echo|ab"}},
        {"echo a # comment ; rm x", {"echo|a"}},
        {"echo a#b", {"echo|a#b"}},
        {"echo {a,b} ~/x *.c", {"echo|{a,b}|~/x|*.c"}},
        {"sudo -u ci bash -c 'git push'", {"sudo|-u|ci|bash|-c|git push"}},
    }));

TEST(ShellParser, AnsiCStringsDecodeAsBashDoes) {
  struct Row {
    std::string quoted;
    std::string decoded;
  };
  const Row kTable[] = {
      // Every one-character escape.
      {"$'\\a'", "\a"},
      {"$'\\b'", "\b"},
      {"$'\\e'", "\x1b"},
      {"$'\\E'", "\x1b"},
      {"$'\\f'", "\f"},
      {"$'\\n'", "\n"},
      {"$'\\r'", "\r"},
      {"$'\\t'", "\t"},
      {"$'\\v'", "\v"},
      {"$'\\\\'", "\\"},
      {"$'\\''", "'"},
      {"$'\\\"'", "\""},
      {"$'\\?'", "?"},
      // Control characters, hex, code points, octal; unknown escapes stay as written.
      {"$'\\cA'", "\x01"},
      {"$'\\x41\\x4'", "A\x04"},
      {"$'\\u00e9'", "\xc3\xa9"},
      {"$'\\U0001F600'", "\xf0\x9f\x98\x80"},
      {"$'\\101\\7'", "A\x07"},
      {"$'\\x'", "\\x"},
      {"$'\\q'", "\\q"},
      // A decoded NUL ends the string.
      {"$'a\\0b'", "a"},
      {"$'a\\x00b'", "a"},
      {"$'a\\c@b'", "a"},
      {"$'a\\u0000b'", "a"},
  };
  for (const Row& row : kTable) {
    absl::StatusOr<ShellScript> script = ParseShell("echo " + row.quoted);
    ASSERT_TRUE(script.ok()) << row.quoted << ": " << script.status();
    ASSERT_EQ(script->commands.size(), 1u);
    ASSERT_EQ(script->commands[0].words.size(), 2u);
    EXPECT_EQ(script->commands[0].words[1].text, row.decoded) << row.quoted;
  }
}

TEST(ShellParser, RecordsRedirections) {
  absl::StatusOr<ShellScript> s =
      ParseShell("make >out 2>>err <in 2>&1 &>both &>>both2 <>rw 3<&0 >&file >|clobber");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->commands.size(), 1u);
  const std::vector<ShellRedirect>& r = s->commands[0].redirects;
  ASSERT_EQ(r.size(), 10u);
  EXPECT_EQ(r[0].op, RedirectOp::kWrite);
  EXPECT_EQ(r[0].target.text, "out");
  EXPECT_EQ(r[1].op, RedirectOp::kAppend);
  EXPECT_EQ(r[1].fd, 2);
  EXPECT_EQ(r[2].op, RedirectOp::kRead);
  EXPECT_EQ(r[3].op, RedirectOp::kDupWrite);
  EXPECT_EQ(r[3].fd, 2);
  EXPECT_EQ(r[3].target.text, "1");
  EXPECT_EQ(r[4].op, RedirectOp::kWriteBoth);
  EXPECT_EQ(r[5].op, RedirectOp::kAppendBoth);
  EXPECT_EQ(r[6].op, RedirectOp::kReadWrite);
  EXPECT_EQ(r[7].op, RedirectOp::kDupRead);
  EXPECT_EQ(r[8].op, RedirectOp::kWriteBoth);  // >&file writes stdout and stderr
  EXPECT_EQ(r[8].target.text, "file");
  EXPECT_EQ(r[9].op, RedirectOp::kWrite);
}

TEST(ShellParser, HereDocBodiesAndFlags) {
  absl::StatusOr<ShellScript> s = ParseShell("bash <<'EOF'\ngit push\nEOF\ncat <<X\n$HOME\nX");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->commands.size(), 2u);
  ASSERT_EQ(s->commands[0].redirects.size(), 1u);
  EXPECT_EQ(s->commands[0].redirects[0].op, RedirectOp::kHereDoc);
  EXPECT_EQ(s->commands[0].redirects[0].heredoc_body, "git push\n");
  EXPECT_FALSE(s->commands[0].redirects[0].heredoc_expands);
  EXPECT_TRUE(s->commands[1].redirects[0].heredoc_expands);
}

TEST(ShellParser, WordFlags) {
  absl::StatusOr<ShellScript> s =
      ParseShell("x $A \"${B}\" $(c) `d` $((1)) <(e) * [ab] {a,b} ~ 'q' lit");
  ASSERT_TRUE(s.ok()) << s.status();
  const std::vector<ShellWord>& w = s->commands.back().words;
  ASSERT_EQ(w.size(), 13u);
  EXPECT_TRUE(w[0].literal());
  EXPECT_EQ(w[1].flags & kWordParameter, kWordParameter);
  EXPECT_EQ(w[2].flags & (kWordParameter | kWordQuoted), kWordParameter | kWordQuoted);
  EXPECT_EQ(w[3].flags & kWordCommandSubst, kWordCommandSubst);
  EXPECT_EQ(w[4].flags & kWordCommandSubst, kWordCommandSubst);
  EXPECT_EQ(w[5].flags & kWordArithmetic, kWordArithmetic);
  EXPECT_EQ(w[6].flags & kWordProcessSubst, kWordProcessSubst);
  EXPECT_EQ(w[7].flags & kWordGlob, kWordGlob);
  EXPECT_EQ(w[8].flags & kWordGlob, kWordGlob);
  EXPECT_EQ(w[9].flags & kWordBrace, kWordBrace);
  EXPECT_EQ(w[10].flags & kWordTilde, kWordTilde);
  EXPECT_TRUE(w[10].literal());
  EXPECT_TRUE(w[11].literal());
  EXPECT_EQ(w[11].flags & kWordQuoted, kWordQuoted);
  EXPECT_TRUE(w[12].literal());
  for (int i = 1; i <= 9; ++i) EXPECT_FALSE(w[i].literal()) << i;
}

TEST(ShellParser, MarksPipelinesBackgroundDepthAndText) {
  absl::StatusOr<ShellScript> s = ParseShell("a | b; c & (d)");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->commands.size(), 4u);
  EXPECT_TRUE(s->commands[0].in_pipeline);
  EXPECT_TRUE(s->commands[1].in_pipeline);
  EXPECT_FALSE(s->commands[2].in_pipeline);
  EXPECT_TRUE(s->commands[2].background);
  EXPECT_EQ(s->commands[3].depth, 1);
  EXPECT_EQ(s->commands[0].text, "a");
  EXPECT_EQ(s->commands[2].text, "c");
}

TEST(ShellParser, RecordsFunctions) {
  absl::StatusOr<ShellScript> s = ParseShell("deploy() { git push; }; deploy");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->functions.size(), 1u);
  EXPECT_EQ(s->functions[0].name, "deploy");
  EXPECT_EQ(s->functions[0].body_end - s->functions[0].body_begin, 1u);
}

struct ErrorCase {
  std::string input;
  absl::StatusCode code;
  std::string message_part;
};

class RejectsInput : public testing::TestWithParam<ErrorCase> {};

TEST_P(RejectsInput, WithReason) {
  absl::StatusOr<ShellScript> script = ParseShell(GetParam().input);
  ASSERT_FALSE(script.ok()) << GetParam().input;
  EXPECT_EQ(script.status().code(), GetParam().code) << script.status();
  EXPECT_NE(script.status().message().find(GetParam().message_part), std::string::npos)
      << script.status();
}

INSTANTIATE_TEST_SUITE_P(
    ShellParser, RejectsInput,
    testing::ValuesIn(std::vector<ErrorCase>{
        {"echo 'abc", absl::StatusCode::kInvalidArgument, "unterminated single quote"},
        {"echo \"abc", absl::StatusCode::kInvalidArgument, "unterminated double quote"},
        {"echo `abc", absl::StatusCode::kInvalidArgument, "unterminated backquote"},
        {"echo $(abc", absl::StatusCode::kInvalidArgument, "expected ')'"},
        {"echo ${abc", absl::StatusCode::kInvalidArgument, "unterminated '${'"},
        {"echo $'abc", absl::StatusCode::kInvalidArgument, "unterminated $'"},
        {"echo abc\\", absl::StatusCode::kInvalidArgument, "backslash at the end"},
        {"ls &&", absl::StatusCode::kInvalidArgument, "after '&&'"},
        {"ls ||", absl::StatusCode::kInvalidArgument, "after '||'"},
        {"ls |", absl::StatusCode::kInvalidArgument, "expected a command"},
        {"&& ls", absl::StatusCode::kInvalidArgument, "expected a command"},
        {"; ls", absl::StatusCode::kInvalidArgument, "expected a command"},
        {"ls ;;", absl::StatusCode::kInvalidArgument, "unexpected ';;'"},
        {"(ls", absl::StatusCode::kInvalidArgument, "expected ')'"},
        {"ls)", absl::StatusCode::kInvalidArgument, "unexpected ')'"},
        {"()", absl::StatusCode::kInvalidArgument, "expected a command"},
        {"{ ls; ", absl::StatusCode::kInvalidArgument, "expected '}'"},
        {"if true; then ls", absl::StatusCode::kInvalidArgument, "expected 'fi'"},
        {"if true; ls; fi", absl::StatusCode::kInvalidArgument, "expected 'then'"},
        {"while true; do ls", absl::StatusCode::kInvalidArgument, "expected 'done'"},
        {"fi", absl::StatusCode::kInvalidArgument, "unexpected 'fi'"},
        {"case x in a) ls", absl::StatusCode::kInvalidArgument, "esac"},
        {"ls >", absl::StatusCode::kInvalidArgument, "has no target"},
        {"ls > ;", absl::StatusCode::kInvalidArgument, "has no target"},
        {"(ls) foo", absl::StatusCode::kInvalidArgument, "unexpected 'foo'"},
        {"[[ -f x ", absl::StatusCode::kInvalidArgument, "expected ']]'"},
        {"echo \"$(echo 'x)\"", absl::StatusCode::kInvalidArgument, "unterminated"},
        {std::string("ls\0rm", 5), absl::StatusCode::kInvalidArgument, "NUL"},
        {std::string(70000, 'a'), absl::StatusCode::kResourceExhausted, "bytes"},
    }));

TEST(ShellParser, BoundsNesting) {
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "$(";
  deep += "ls";
  for (int i = 0; i < 40; ++i) deep += ")";
  absl::StatusOr<ShellScript> s = ParseShell("echo " + deep);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted);

  std::string subshells;
  for (int i = 0; i < 40; ++i) subshells += "( ";
  subshells += "ls" + std::string(40, ')');
  EXPECT_EQ(ParseShell(subshells).status().code(), absl::StatusCode::kResourceExhausted);

  std::string params;
  for (int i = 0; i < 5000; ++i) params += "\"${x:-";
  EXPECT_FALSE(ParseShell("echo " + params).ok());
}

TEST(ShellParser, BoundsCommandsAndWork) {
  ShellParseLimits limits;
  limits.max_commands = 10;
  std::string many;
  for (int i = 0; i < 11; ++i) many += "ls;";
  EXPECT_EQ(ParseShell(many, limits).status().code(), absl::StatusCode::kResourceExhausted);

  limits = ShellParseLimits();
  limits.max_work = 1000;
  EXPECT_EQ(ParseShell("echo " + std::string(2000, 'a'), limits).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace ccsandbox::policy
