#include "policy/plan/deny_sets.h"

#include <map>

#include "gtest/gtest.h"
#include "policy/plan/path_spellings.h"
#include "policy/plan/trusted_names.h"

namespace ccsandbox::policy {
namespace {

class MapResolver : public PathResolver {
 public:
  std::map<std::string, std::string> map;
  std::optional<std::string> Resolve(const std::string& path) const override {
    auto it = map.find(path);
    if (it == map.end()) return std::nullopt;
    return it->second;
  }
};

TEST(EndsWithComponents, MatchesWholeComponents) {
  EXPECT_TRUE(EndsWithComponents("/w/a/.git/hooks", ".git/hooks"));
  EXPECT_TRUE(EndsWithComponents("/w/.bashrc", ".bashrc"));
  EXPECT_FALSE(EndsWithComponents("/w/a/x.git/hooks", ".git/hooks"));
  EXPECT_FALSE(EndsWithComponents("/w/my.bashrc", ".bashrc"));
}

TEST(EffectiveFilenameDenyPatterns, StandardSetPlusExtrasAndEmptyMeansNone) {
  v1::SandboxSpec spec;
  EXPECT_EQ(EffectiveFilenameDenyPatterns(spec),
            (std::vector<std::string>{".env", ".env.*", "*.key", "*.pem"}));
  spec.mutable_write_deny_patterns();
  EXPECT_TRUE(EffectiveFilenameDenyPatterns(spec).empty());
  spec.mutable_write_deny_patterns()->add_patterns("*.p12");
  spec.mutable_write_deny_patterns()->add_patterns("*.pem");  // already there: once
  EXPECT_EQ(EffectiveFilenameDenyPatterns(spec),
            (std::vector<std::string>{".env", ".env.*", "*.key", "*.pem", "*.p12"}));
}

TEST(ResolveDenyPaths, CombinesEverySourceInBothSpellings) {
  MapResolver resolver;
  resolver.map = {{"/home/u/.ssh", "/data/u/.ssh"}, {"/repo/main", "/repo/main"}};
  DenyScan scan;
  scan.secrets = {"/w/proj/.aws"};
  scan.home_dirs = {"/home/u"};
  scan.system_secrets = {"/etc/shadow"};
  scan.protected_paths = {"/repo/main"};
  scan.deny_write = {"/w/proj/sub/.bashrc"};
  DenyPaths paths = ResolveDenyPaths(scan, resolver);
  auto has = [](const std::vector<std::string>& v, const std::string& p) {
    return std::find(v.begin(), v.end(), p) != v.end();
  };
  EXPECT_TRUE(has(paths.read, "/w/proj/.aws"));
  EXPECT_TRUE(has(paths.read, "/home/u/.ssh"));
  EXPECT_TRUE(has(paths.read, "/data/u/.ssh"));  // resolved spelling
  EXPECT_TRUE(has(paths.read, "/home/u/.config/gh"));
  EXPECT_TRUE(has(paths.read, "/home/u/.gnupg"));
  EXPECT_TRUE(has(paths.read, "/etc/shadow"));
  EXPECT_EQ(paths.write, (std::vector<std::string>{"/repo/main", "/w/proj/sub/.bashrc"}));
}

TEST(DenySets, ListsCoverTheSpec) {
  auto has = [](const std::vector<std::string>& v, const std::string& p) {
    return std::find(v.begin(), v.end(), p) != v.end();
  };
  for (const char* s : {".ssh", ".aws", ".gnupg"}) EXPECT_TRUE(has(SecretNames(), s)) << s;
  EXPECT_TRUE(has(HomeSecretPaths(), ".config/gh"));
  EXPECT_TRUE(has(HomeSecretPaths(), "Library/Keychains"));
  // The spec's mandatory deny-write set: shell rc files, .git/hooks, agent configuration.
  const TrustedNameRules trusted = *TrustedNameRules::Create(StandardTrustedNameRules());
  for (const char* s : {"/h/.bashrc", "/h/.bash_profile", "/h/.zshrc", "/h/.zprofile",
                        "/h/.profile", "/r/.git/hooks", "/r/.claude", "/r/.mcp.json"}) {
    EXPECT_TRUE(trusted.Match(s).has_value()) << s;
  }
}

}  // namespace
}  // namespace ccsandbox::policy
