#include "base/paths.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ccsandbox {
namespace {

TEST(CheckNormalizedAbsolute, AcceptsNormalisedAbsolutePaths) {
  for (const char* ok : {"/", "/a", "/a/b.c", "/home/u/.ssh"}) {
    EXPECT_TRUE(CheckNormalizedAbsolute("f", ok).ok()) << ok;
  }
}

TEST(CheckNormalizedAbsolute, RefusesAndNamesTheField) {
  for (const char* bad : {"", "a/b", "./a", "/a/", "/a//b", "/a/./b", "/a/../b", "/.."}) {
    absl::Status s = CheckNormalizedAbsolute("bindMounts[0].hostPath", bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("bindMounts[0].hostPath"), std::string::npos) << s;
  }
  EXPECT_FALSE(CheckNormalizedAbsolute("f", std::string("/a\0b", 4)).ok());
}

TEST(CheckPathComponent, Table) {
  for (const char* ok : {"c1", "conv-2024.01_a", "A", "x..y"}) {
    EXPECT_TRUE(CheckPathComponent("conversationId", ok).ok()) << ok;
  }
  for (std::string bad :
       {std::string(""), std::string("."), std::string(".."), std::string(".x"), std::string("a/b"),
        std::string("/a"), std::string("a b"), std::string("a\nb"), std::string("a\0b", 3),
        std::string(129, 'a'), std::string("caf\xc3\xa9")}) {
    absl::Status s = CheckPathComponent("conversationId", bad);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad;
    EXPECT_TRUE(absl::StartsWith(s.message(), "conversationId: ")) << s.message();
  }
}

TEST(IsUnderOrEqual, ComparesWholeComponents) {
  EXPECT_TRUE(IsUnderOrEqual("/a/b", "/a"));
  EXPECT_TRUE(IsUnderOrEqual("/a", "/a"));
  EXPECT_TRUE(IsUnderOrEqual("/a", "/"));
  EXPECT_FALSE(IsUnderOrEqual("/ab", "/a"));
  EXPECT_FALSE(IsUnderOrEqual("/a", "/a/b"));
}

TEST(PathDepth, CountsComponents) {
  EXPECT_EQ(PathDepth("/"), 0);
  EXPECT_EQ(PathDepth("/a"), 1);
  EXPECT_EQ(PathDepth("/a/b/c"), 3);
}

TEST(IsGlob, SeesStarAndQuestionMark) {
  EXPECT_TRUE(IsGlob("/a/*.pem"));
  EXPECT_TRUE(IsGlob("/a/?"));
  EXPECT_FALSE(IsGlob("/a/b"));
}

TEST(ParentPath, Table) {
  EXPECT_EQ(ParentPath("/a/b"), "/a");
  EXPECT_EQ(ParentPath("/a"), "/");
  EXPECT_EQ(ParentPath("/"), "/");
  EXPECT_EQ(ParentPath("relative"), "/");
}

}  // namespace
}  // namespace ccsandbox
