#include "policy/plan/workdir_visible.h"

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

TEST(CheckWorkdirVisible, InsideABindTheTmpOrRootOnly) {
  std::vector<v1::PlanMount> mounts(2);
  mounts[0].set_host_path("/work/tree");
  mounts[0].set_guest_path("/work/tree");
  mounts[1].set_host_path("/srv/state");
  mounts[1].set_guest_path("/srv/state");
  struct Case {
    const char* workdir;
    bool visible;
  } cases[] = {
      {"/work/tree", true}, {"/work/tree/src", true}, {"/srv/state/x", true},
      {"/tmp", true},       {"/tmp/scratch", true},   {"/", true},
      {"/etc", false},      {"/work", false},         {"/work/treehouse", false},
      {"/tmpx", false},     {"/srv", false},
  };
  for (const Case& c : cases) {
    absl::Status s = CheckWorkdirVisible("workdir", c.workdir, mounts);
    EXPECT_EQ(s.ok(), c.visible) << c.workdir << ": " << s;
    if (!c.visible) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_EQ(s.message().rfind("workdir: '", 0), 0u) << s;
      EXPECT_NE(s.message().find("outside every bind mount"), absl::string_view::npos) << s;
    }
  }
}

TEST(CheckWorkdirVisible, QuotesAtMostABoundedPart) {
  const std::string long_dir = "/" + std::string(4000, 'd');
  absl::Status s = CheckWorkdirVisible("workdir", long_dir, {});
  EXPECT_LT(s.message().size(), 600u) << s.message().size();
}

}  // namespace
}  // namespace ccsandbox::policy
