#include "policy/plan/bind_checks.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

using ::testing::HasSubstr;

struct Case {
  const char* resolved;
  bool ok;
  const char* exposes;  // substring of the refusal
};

TEST(CheckResolvedBind, ControlPlaneAndDaemonDirs) {
  ForbiddenDirs forbidden = ControlPlaneDirs();
  forbidden.push_back({"/run/ccsandbox", "the launcher's socket directory"});
  forbidden.push_back({"/tmp/ccsandbox-broker-0", "the broker's runtime directory"});
  const Case cases[] = {
      {"/", false, "the whole host"},
      {"/proc", false, "kernel tunables"},
      {"/proc/sys/kernel", false, "kernel tunables"},
      {"/dev", false, "devices"},
      {"/dev/shm", false, "devices"},
      {"/sys/fs/cgroup", false, "kernel objects"},
      {"/run", false, "socket directory"},              // contains it
      {"/run/ccsandbox", false, "socket directory"},    // is it
      {"/run/ccsandbox/x", false, "socket directory"},  // lies inside it
      {"/tmp", false, "runtime directory"},
      {"/tmp/ccsandbox-broker-0/s1", false, "runtime directory"},
      {"/tmp/ccsandbox-broker-00", true, ""},  // a sibling, not inside
      {"/procfs", true, ""},
      {"/work/tree", true, ""},
      {"/run2", true, ""},
  };
  for (const Case& c : cases) {
    absl::Status s = CheckResolvedBind("bindMounts[0].hostPath", "/w/link", c.resolved, forbidden);
    EXPECT_EQ(s.ok(), c.ok) << c.resolved << ": " << s;
    if (!c.ok) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(s.message(), HasSubstr("bindMounts[0].hostPath: '/w/link'"));
      EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("resolves to '", c.resolved, "'")));
      EXPECT_THAT(s.message(), HasSubstr(c.exposes));
    }
  }
}

TEST(CheckResolvedBind, BindableBelowAllowsOnlyWhatItSays) {
  ForbiddenDirs forbidden = ControlPlaneDirs();
  forbidden.push_back({"/var/lib/cc", "the broker's data directory",
                       [](absl::string_view relative) { return relative.substr(0, 4) == "ok/x"; }});
  const Case cases[] = {
      {"/var/lib/cc/ok/x", true, ""},
      {"/var/lib/cc/ok/x/deeper", true, ""},
      {"/var/lib/cc", false, "data directory"},     // is it
      {"/var/lib", false, "data directory"},        // holds it
      {"/var/lib/cc/ok", false, "data directory"},  // inside, not allowed
      {"/var/lib/cc/other", false, "data directory"},
      {"/var/lib/ccx/ok/x", true, ""},
  };
  for (const Case& c : cases) {
    absl::Status s = CheckResolvedBind("bindMounts[0].hostPath", c.resolved, c.resolved, forbidden);
    EXPECT_EQ(s.ok(), c.ok) << c.resolved << ": " << s;
    if (!c.ok) {
      EXPECT_THAT(s.message(), HasSubstr(c.exposes));
    }
  }
}

TEST(CheckResolvedBind, DeletedOrUnresolvable) {
  EXPECT_FALSE(CheckResolvedBind("f", "/a", "/a (deleted)", ControlPlaneDirs()).ok());
  EXPECT_FALSE(CheckResolvedBind("f", "/a", "", ControlPlaneDirs()).ok());
  EXPECT_FALSE(CheckResolvedBind("f", "/a", "anon_inode:[x]", ControlPlaneDirs()).ok());
}

TEST(CheckResolvedBind, SameSpellingIsNotRepeated) {
  absl::Status s = CheckResolvedBind("f", "/proc", "/proc", ControlPlaneDirs());
  EXPECT_THAT(s.message(), ::testing::Not(HasSubstr("resolves to")));
}

}  // namespace
}  // namespace ccsandbox::policy
