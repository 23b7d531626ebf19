#include "policy/plan/filename_patterns.h"

#include "gtest/gtest.h"
#include "policy/plan/deny_sets.h"

namespace ccsandbox::policy {
namespace {

struct Case {
  const char* name;
  const char* expected;  // the matching pattern, or nullptr
};

TEST(FilenamePatterns, StandardSetMatchesFinalNames) {
  absl::StatusOr<FilenamePatterns> patterns =
      FilenamePatterns::Create(StandardFilenameDenyPatterns());
  ASSERT_TRUE(patterns.ok()) << patterns.status();
  const Case cases[] = {
      {".env", ".env"},        {".env.local", ".env.*"},
      {".env.", ".env.*"},     {".ENV", ".env"},
      {"server.key", "*.key"}, {".key", "*.key"},
      {"a.b.key", "*.key"},    {"cert.pem", "*.pem"},
      {"CERT.PEM", "*.pem"},   {"keys.pem", "*.pem"},  // a directory name matches just the same
      {"env", nullptr},        {".envrc", nullptr},
      {"x.env", nullptr},      {"server.key.bak", nullptr},
      {"pem", nullptr},        {"ok.txt", nullptr},
      {"keyring", nullptr},    {".", nullptr},
      {"..", nullptr},         {"", nullptr},
  };
  for (const Case& c : cases) {
    std::optional<std::string> hit = patterns->Match(c.name);
    if (c.expected == nullptr) {
      EXPECT_FALSE(hit.has_value()) << c.name << " matched " << hit.value_or("");
    } else {
      EXPECT_EQ(hit.value_or("<none>"), c.expected) << c.name;
    }
  }
}

TEST(FilenamePatterns, GlobSyntax) {
  absl::StatusOr<FilenamePatterns> patterns =
      FilenamePatterns::Create({"id_?sa", "*.p[0-9][0-9]", "[!a-z]*.crt", "lit\\*", "*"});
  ASSERT_TRUE(patterns.ok()) << patterns.status();
  EXPECT_EQ(patterns->Match("id_rsa").value_or(""), "id_?sa");
  EXPECT_EQ(patterns->Match("ID_DSA").value_or(""), "id_?sa");
  EXPECT_EQ(patterns->Match("store.p12").value_or(""), "*.p[0-9][0-9]");
  EXPECT_EQ(patterns->Match("9root.crt").value_or(""), "[!a-z]*.crt");
  EXPECT_EQ(patterns->Match("lit*").value_or(""), "lit\\*");
  EXPECT_EQ(patterns->Match("anything").value_or(""),
            "*");  // "*" denies every new name
  EXPECT_FALSE(FilenamePatterns::Create({"*.p[0-9][0-9]"})->Match("store.pxx").has_value());
  EXPECT_FALSE(FilenamePatterns::Create({"[!a-z]*.crt"})->Match("root.crt").has_value());
  EXPECT_FALSE(FilenamePatterns::Create({"lit\\*"})->Match("literal").has_value());
}

// A range that crosses the letters matches a name whatever its case (found by
// filename_rules_fuzz: "[*-a]" took 'Y' but not 'y'); bytes above 0x7f compare unsigned.
TEST(FilenamePatterns, RangesIgnoreCaseAndCompareBytesUnsigned) {
  for (const char* name : {"Y.pem", "y.pem", "z.pem", "Z.pem"}) {
    EXPECT_TRUE(NameGlobMatches("[*-a].pem", name)) << name;
  }
  EXPECT_FALSE(NameGlobMatches("[*-a].pem", "~.pem"));
  for (const char* name : {"z.pem", "Z.pem", "a.pem", "A.pem", "_.pem"}) {
    EXPECT_TRUE(NameGlobMatches("[Z-a].pem", name)) << name;
  }
  for (const char* name : {"y.pem", "Y.pem", "b.pem"}) {
    EXPECT_FALSE(NameGlobMatches("[Z-a].pem", name)) << name;
  }
  EXPECT_TRUE(NameGlobMatches("[\x80-\xff]*", "\xc3\xa9t\xc3\xa9"));
  EXPECT_FALSE(NameGlobMatches("[\x80-\xff]*", "ete"));
}

TEST(FilenamePatterns, StarBacktracks) {
  absl::StatusOr<FilenamePatterns> patterns = FilenamePatterns::Create({"*a*b*c"});
  ASSERT_TRUE(patterns.ok());
  EXPECT_TRUE(patterns->Match("xxaxxbxxbxc").has_value());
  EXPECT_FALSE(patterns->Match("xxaxxbxxbx").has_value());
  EXPECT_TRUE(FilenamePatterns::Create({"a*"})->Match("a").has_value());
}

TEST(FilenamePatterns, RejectsPatternsThatAreNotOneName) {
  for (const char* bad : {"", "dir/*.pem", "[abc", "x\\"}) {
    absl::StatusOr<FilenamePatterns> patterns = FilenamePatterns::Create({"*.pem", bad});
    EXPECT_EQ(patterns.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(FilenamePatterns::Create({}).ok());
  EXPECT_FALSE(FilenamePatterns::Create({})->Match(".env").has_value());
}

}  // namespace
}  // namespace ccsandbox::policy
