#include "gateway/receive_pack.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gateway/pkt_line.h"
#include "gtest/gtest.h"

namespace ccsandbox::gateway {
namespace {

const std::string kZero(40, '0');
const std::string kA(40, 'a');
const std::string kB(40, 'b');

std::string Line(const std::string& text) { return PktLine::Data(text).Encode(); }
std::string Flush() { return PktLine::Flush().Encode(); }

// What git sends for `git push origin feature/x` (capabilities after the NUL), then a pack.
std::string Push(const std::vector<std::string>& commands, const std::string& caps,
                 const std::string& after = "PACK....") {
  std::string body;
  for (size_t i = 0; i < commands.size(); ++i) {
    body += Line(i == 0 ? absl::StrCat(commands[i], std::string(1, '\0'), caps) : commands[i]);
  }
  return body + Flush() + after;
}

// Fed whole and byte by byte: the same head, the same rest.
void ExpectParsesAlike(const std::string& body, ReceivePackHead* head, std::string* rest) {
  ReceivePackHeadParser whole;
  ASSERT_TRUE(whole.Feed(body).ok()) << whole.Feed("").message();
  ASSERT_TRUE(whole.done());
  ReceivePackHeadParser bytes;
  for (char c : body) ASSERT_TRUE(bytes.Feed(std::string(1, c)).ok());
  ASSERT_TRUE(bytes.done());
  EXPECT_EQ(whole.head_bytes(), bytes.head_bytes());
  EXPECT_EQ(whole.Rest(), bytes.Rest());
  *head = whole.head();
  *rest = std::string(whole.Rest());
}

TEST(ReceivePack, ReadsTheCommandsCapabilitiesAndWhereThePackStarts) {
  const std::string body =
      Push({absl::StrCat(kA, " ", kB, " refs/heads/feature/x"),
            absl::StrCat(kZero, " ", kB, " refs/tags/v1")},
           "report-status side-band-64k quiet object-format=sha1 agent=git/2.39.5");
  ReceivePackHead head;
  std::string rest;
  ExpectParsesAlike(body, &head, &rest);
  ASSERT_EQ(head.updates.size(), 2u);
  EXPECT_EQ(head.updates[0].ref, "refs/heads/feature/x");
  EXPECT_EQ(head.updates[0].old_id, kA);
  EXPECT_EQ(head.updates[0].new_id, kB);
  EXPECT_TRUE(head.updates[1].IsCreate());
  EXPECT_TRUE(head.Has("report-status"));
  EXPECT_TRUE(head.Has("side-band-64k"));
  EXPECT_TRUE(head.Has("agent=git/2.39.5"));
  EXPECT_FALSE(head.Has("atomic"));
  EXPECT_TRUE(head.ExpectsPack());
  EXPECT_EQ(rest, "PACK....");
}

TEST(ReceivePack, CommandsMayEndWithANewlineAndDeletesNeedNoPack) {
  ReceivePackHead head;
  std::string rest;
  ExpectParsesAlike(Push({absl::StrCat(kA, " ", kZero, " refs/heads/old"),
                          absl::StrCat(kB, " ", kZero, " refs/heads/older\n")},
                         "report-status\n", ""),
                    &head, &rest);
  ASSERT_EQ(head.updates.size(), 2u);
  EXPECT_EQ(head.updates[1].ref, "refs/heads/older");
  EXPECT_TRUE(head.updates[0].IsDelete());
  EXPECT_TRUE(head.Has("report-status"));
  EXPECT_FALSE(head.ExpectsPack());
}

TEST(ReceivePack, ShallowLinesAndPushOptions) {
  const std::string body = Line("shallow " + kA) +
                           Line(absl::StrCat(kA, " ", kB, " refs/heads/x", std::string(1, '\0'),
                                             "report-status push-options")) +
                           Flush() + Line("ci.skip\n") + Line("merge_request.create") + Flush() +
                           "PACK";
  ReceivePackHead head;
  std::string rest;
  ExpectParsesAlike(body, &head, &rest);
  EXPECT_EQ(head.shallow, std::vector<std::string>{kA});
  EXPECT_EQ(head.push_options, (std::vector<std::string>{"ci.skip", "merge_request.create"}));
  EXPECT_EQ(rest, "PACK");
}

TEST(ReceivePack, Sha256Ids) {
  const std::string a(64, 'a'), b(64, 'b');
  ReceivePackHead head;
  std::string rest;
  ExpectParsesAlike(Push({absl::StrCat(a, " ", b, " refs/heads/x")}, "object-format=sha256"), &head,
                    &rest);
  EXPECT_EQ(head.updates[0].new_id, b);
}

TEST(ReceivePack, ALoneFlushIsGitsProbe) {
  ReceivePackHead head;
  std::string rest;
  ExpectParsesAlike(Flush(), &head, &rest);
  EXPECT_TRUE(head.updates.empty());
  EXPECT_FALSE(head.ExpectsPack());
  EXPECT_EQ(rest, "");
}

TEST(ReceivePack, WaitsForTheWholeHead) {
  ReceivePackHeadParser parser;
  const std::string body = Push({absl::StrCat(kA, " ", kB, " refs/heads/x")}, "report-status");
  ASSERT_TRUE(parser.Feed(body.substr(0, body.size() - 12)).ok());  // before the flush
  EXPECT_FALSE(parser.done());
}

struct Bad {
  std::string name;
  std::string body;
  std::string says;
};

class ReceivePackRefuses : public ::testing::TestWithParam<Bad> {};

TEST_P(ReceivePackRefuses, WithAReason) {
  ReceivePackHeadParser parser;
  absl::Status fed = parser.Feed(GetParam().body);
  ASSERT_FALSE(fed.ok());
  EXPECT_EQ(fed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(fed.message().find(GetParam().says), std::string::npos) << fed.message();
  EXPECT_LT(fed.message().size(), 400u) << "bounded";
  EXPECT_FALSE(parser.done());
  EXPECT_FALSE(parser.Feed("0000").ok()) << "stays failed";
}

std::string ManyCommands(size_t n) {
  std::vector<std::string> commands;
  for (size_t i = 0; i < n; ++i) commands.push_back(absl::StrCat(kA, " ", kB, " refs/heads/b", i));
  return Push(commands, "report-status");
}

INSTANTIATE_TEST_SUITE_P(
    Heads, ReceivePackRefuses,
    ::testing::Values(
        Bad{"Delimiter", Line(absl::StrCat(kA, " ", kB, " refs/heads/x")) + "0001", "delimiter"},
        Bad{"ShortId", Push({absl::StrCat("abc", " ", kB, " refs/heads/x")}, ""), "bad command"},
        Bad{"UpperCaseId", Push({absl::StrCat(std::string(40, 'A'), " ", kB, " refs/heads/x")}, ""),
            "bad command"},
        Bad{"MixedIdLengths",
            Push({absl::StrCat(kA, " ", std::string(64, 'b'), " refs/heads/x")}, ""),
            "bad command"},
        Bad{"TwoFields", Push({absl::StrCat(kA, " ", kB)}, ""), "bad command"},
        Bad{"NotBelowRefs", Push({absl::StrCat(kA, " ", kB, " HEAD")}, ""), "bad command"},
        Bad{"DotDot", Push({absl::StrCat(kA, " ", kB, " refs/heads/a..b")}, ""), "bad command"},
        Bad{"NulInALaterCommand",
            Push({absl::StrCat(kA, " ", kB, " refs/heads/a"),
                  absl::StrCat(kA, " ", kB, " refs/heads/b", std::string(1, '\0'), "x")},
                 ""),
            "bad command"},
        Bad{"PushCertificate",
            Line("push-cert\0report-status\n") + Line("certificate version 0.1\n"),
            "push certificates"},
        Bad{"ShallowAfterCommands",
            Line(absl::StrCat(kA, " ", kB, " refs/heads/x")) + Line("shallow " + kA), "shallow"},
        Bad{"TooManyCommands", ManyCommands(kMaxRefUpdates + 1), "more than 1000"},
        Bad{"MalformedLength", "zzzz", "pkt-line"},
        Bad{"MalformedLengthAfterACommand",
            Line(absl::StrCat(kA, " ", kB, " refs/heads/x")) + "00zz", "pkt-line"}),
    [](const ::testing::TestParamInfo<Bad>& info) { return info.param.name; });

TEST(ReceivePack, AHeadThatNeverEndsIsRefusedAtTheBound) {
  // Valid commands, no flush, beyond the bound: refused, not buffered forever.
  ReceivePackHeadParser parser;
  absl::Status fed;
  for (size_t i = 0; fed.ok() && i < 2 * kMaxHeadBytes / 40; ++i) {
    fed = parser.Feed(Line(absl::StrCat("shallow ", kA)));
  }
  ASSERT_FALSE(fed.ok());
  EXPECT_NE(fed.message().find("longer than"), std::string::npos) << fed.message();
}

struct RefCase {
  std::string ref;
  bool valid;
};

class RefNames : public ::testing::TestWithParam<RefCase> {};

TEST_P(RefNames, AsCheckRefFormatSays) {
  EXPECT_EQ(IsValidRefName(GetParam().ref), GetParam().valid) << GetParam().ref;
}

INSTANTIATE_TEST_SUITE_P(
    Table, RefNames,
    ::testing::Values(RefCase{"refs/heads/main", true}, RefCase{"refs/heads/feature/x", true},
                      RefCase{"refs/tags/v1.0", true}, RefCase{"refs/heads/a-b_c+d", true},
                      RefCase{"HEAD", false}, RefCase{"heads/main", false},
                      RefCase{"refs/heads/", false}, RefCase{"refs/heads/a.", false},
                      RefCase{"refs/heads/a.lock", false}, RefCase{"refs/heads/a.lock/b", false},
                      RefCase{"refs/heads/.hidden", false}, RefCase{"refs/heads/a..b", false},
                      RefCase{"refs/heads/a@{1}", false}, RefCase{"refs/heads//a", false},
                      RefCase{"refs/heads/a b", false}, RefCase{"refs/heads/a~1", false},
                      RefCase{"refs/heads/a^", false}, RefCase{"refs/heads/a:b", false},
                      RefCase{"refs/heads/a?", false}, RefCase{"refs/heads/a*", false},
                      RefCase{"refs/heads/a[", false}, RefCase{"refs/heads/a\\b", false},
                      RefCase{"refs/heads/a\x7f", false}, RefCase{"refs/heads/\x01", false}));

}  // namespace
}  // namespace ccsandbox::gateway
