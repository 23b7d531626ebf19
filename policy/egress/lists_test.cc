#include "policy/egress/lists.h"

#include <set>
#include <string>

#include "gtest/gtest.h"
#include "policy/egress/pattern.h"

namespace ccsandbox::policy {
namespace {

void ExpectWellFormed(absl::Span<const EgressListEntry> list, bool deny) {
  std::set<std::string> seen;
  for (const EgressListEntry& entry : list) {
    absl::StatusOr<EgressPattern> pattern = EgressPattern::Parse(entry.pattern);
    ASSERT_TRUE(pattern.ok()) << entry.pattern << ": " << pattern.status();
    EXPECT_EQ(pattern->text(), entry.pattern) << "write entries in canonical form";
    EXPECT_FALSE(entry.reason.empty()) << entry.pattern << " needs a reason";
    EXPECT_TRUE(seen.insert(std::string(entry.pattern)).second) << "duplicate " << entry.pattern;
    if (deny) {
      EXPECT_FALSE(pattern->port().has_value()) << "deny entries cover every port";
    }
  }
}

TEST(EgressLists, EveryEntryParsesInCanonicalFormWithAReason) {
  ExpectWellFormed(BaselineAllowedDomains(), false);
  ExpectWellFormed(GithubDomains(), false);
  ExpectWellFormed(BaselineDeniedDestinations(), true);
}

TEST(EgressLists, TheBaselineHasNoBroadCloudWildcards) {
  // *.amazonaws.com or *.googleapis.com would make every bucket on those clouds an upload target.
  for (const EgressListEntry& entry : BaselineAllowedDomains()) {
    EXPECT_NE(entry.pattern, "*.amazonaws.com");
    EXPECT_NE(entry.pattern, "*.googleapis.com");
    EXPECT_NE(entry.pattern, "*.azure.com");
  }
}

TEST(EgressLists, AllowListsHoldNoAddresses) {
  for (auto list : {BaselineAllowedDomains(), GithubDomains()}) {
    for (const EgressListEntry& entry : list) {
      EXPECT_NE(EgressPattern::Parse(entry.pattern)->kind(), EgressPattern::Kind::kAddress)
          << entry.pattern;
    }
  }
}

TEST(EgressLists, DenyListCoversTheKnownMetadataEndpoints) {
  std::set<std::string> deny;
  for (const EgressListEntry& entry : BaselineDeniedDestinations()) {
    deny.insert(std::string(entry.pattern));
  }
  for (const char* required :
       {"169.254.169.254", "fd00:ec2::254", "100.100.100.200", "metadata.google.internal",
        "169.254.170.2", "statsig.anthropic.com"}) {
    EXPECT_TRUE(deny.count(required)) << required;
  }
}

}  // namespace
}  // namespace ccsandbox::policy
