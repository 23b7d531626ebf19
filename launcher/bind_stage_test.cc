#include "launcher/bind_stage.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "launcher/idmap_userns.h"

namespace ccsandbox::launcher {
namespace {

class BindStageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "open_tree and idmapped mounts need root (CI runs as root)";
    char tmpl[] = "/var/tmp/bindstage.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ASSERT_EQ(mkdir((root_ + "/w").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((root_ + "/w/a").c_str(), 0755), 0);
    std::ofstream(root_ + "/w/a/.bashrc") << "rc";
    ASSERT_EQ(mkdir((root_ + "/sockets").c_str(), 0700), 0);
    options_.stage_dir = "/stage";
    options_.forbidden = policy::ControlPlaneDirs();
    options_.forbidden.push_back({root_ + "/sockets", "the launcher's socket directory"});
  }
  void TearDown() override { system(("rm -rf " + root_).c_str()); }

  v1::LaunchPlan Plan(const std::string& host) {
    v1::LaunchPlan plan;
    v1::PlanMount* m = plan.add_mounts();
    m->set_host_path(host);
    m->set_guest_path(host);
    return plan;
  }

  std::string root_;
  StageOptions options_;
};

TEST_F(BindStageTest, StagesTheMountsAndWhatLiesBeneathThem) {
  absl::StatusOr<BindStage> stage = BindStage::Build(Plan(root_ + "/w"), "", options_);
  ASSERT_TRUE(stage.ok()) << stage.status();
  policy::BindSources sources = stage->sources();
  EXPECT_EQ(sources.mounts, std::vector<std::string>{"/stage/m0"});
  absl::StatusOr<std::string> rc = sources.stage_beneath(root_ + "/w/a/.bashrc");
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, "/stage/d0");
  EXPECT_EQ(*sources.stage_beneath(root_ + "/w/a/.bashrc"), "/stage/d0");  // once
  EXPECT_EQ(*sources.stage_beneath(root_ + "/w"), "/stage/m0");
  EXPECT_EQ(stage->staged().size(), 2u);
}

// Another session sharing the tree swaps a directory for a symlink to / after the renderer
// looked: bwrap would have bound the host's / as a "pinned ancestor". The stage refuses.
TEST_F(BindStageTest, ADirectorySwappedForASymlinkIsRefusedNotFollowed) {
  absl::StatusOr<BindStage> stage = BindStage::Build(Plan(root_ + "/w"), "", options_);
  ASSERT_TRUE(stage.ok()) << stage.status();
  ASSERT_EQ(rename((root_ + "/w/a").c_str(), (root_ + "/w/moved").c_str()), 0);
  ASSERT_EQ(symlink("/", (root_ + "/w/a").c_str()), 0);
  policy::BindSources sources = stage->sources();
  for (const char* path : {"/w/a", "/w/a/.bashrc", "/w/a/etc"}) {
    absl::StatusOr<std::string> staged = sources.stage_beneath(root_ + path);
    ASSERT_FALSE(staged.ok()) << path;
    EXPECT_EQ(staged.status().code(), absl::StatusCode::kFailedPrecondition) << staged.status();
    EXPECT_TRUE(absl::StrContains(staged.status().message(), "changed since")) << staged.status();
  }
  // ".." cannot climb out of the mount either.
  EXPECT_FALSE(sources.stage_beneath(root_ + "/w/../sockets").ok());
}

// A host mount inside the bound tree is not in the sandbox (the tree is cloned without it):
// nothing beneath it is staged — staging it would bind the host's mount in after all.
TEST_F(BindStageTest, NothingIsStagedFromAMountInsideTheTree) {
  ASSERT_EQ(mkdir((root_ + "/w/sub").c_str(), 0755), 0);
  ASSERT_EQ(system(("mount -t tmpfs none " + root_ + "/w/sub").c_str()), 0);
  ASSERT_EQ(mkdir((root_ + "/w/sub/d").c_str(), 0755), 0);
  absl::StatusOr<BindStage> stage = BindStage::Build(Plan(root_ + "/w"), "", options_);
  ASSERT_TRUE(stage.ok()) << stage.status();
  policy::BindSources sources = stage->sources();
  for (const char* path : {"/w/sub", "/w/sub/d"}) {
    absl::StatusOr<std::string> staged = sources.stage_beneath(root_ + path);
    EXPECT_EQ(staged.status().code(), absl::StatusCode::kOutOfRange) << path << staged.status();
  }
  EXPECT_TRUE(sources.stage_beneath(root_ + "/w/a").ok());
  ASSERT_EQ(system(("umount " + root_ + "/w/sub").c_str()), 0);
}

TEST_F(BindStageTest, SourcesAreCheckedOnWhatTheyResolveTo) {
  ASSERT_EQ(symlink((root_ + "/sockets").c_str(), (root_ + "/w/link").c_str()), 0);
  ASSERT_EQ(symlink("/proc/self", (root_ + "/w/proc").c_str()), 0);
  for (const std::string& bind : {root_ + "/w/link", root_ + "/w/proc", root_ + "/sockets"}) {
    absl::StatusOr<BindStage> stage = BindStage::Build(Plan(bind), "", options_);
    ASSERT_FALSE(stage.ok()) << bind;
    EXPECT_EQ(stage.status().code(), absl::StatusCode::kInvalidArgument) << stage.status();
    EXPECT_TRUE(absl::StrContains(stage.status().message(), "mounts[0].hostPath"));
  }
  absl::StatusOr<BindStage> missing = BindStage::Build(Plan(root_ + "/nope"), "", options_);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "does not exist"));
}

// A path the caller cannot reach stays unreachable: the launcher opens it as the caller.
TEST_F(BindStageTest, SourcesAreOpenedAsTheCaller) {
  ASSERT_EQ(mkdir((root_ + "/private").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((root_ + "/private/inner").c_str(), 0755), 0);
  options_.open_as = Identity{65534, 65534, {65534}};
  absl::StatusOr<BindStage> stage = BindStage::Build(Plan(root_ + "/private/inner"), "", options_);
  ASSERT_FALSE(stage.ok());
  EXPECT_TRUE(absl::StrContains(stage.status().message(), "Permission denied")) << stage.status();
  // The launcher's own identity is back afterwards.
  EXPECT_EQ(access((root_ + "/private/inner").c_str(), F_OK), 0);
}

TEST_F(BindStageTest, RootCallersClonesAreIdmapped) {
  absl::StatusOr<UniqueFd> userns = MakeIdmapUserns(65530, 65530);
  ASSERT_TRUE(userns.ok()) << userns.status();
  options_.idmap_userns_fd = userns->get();
  absl::StatusOr<BindStage> stage = BindStage::Build(Plan(root_ + "/w"), "", options_);
  ASSERT_TRUE(stage.ok()) << stage.status();
  ASSERT_TRUE(stage->sources().stage_beneath(root_ + "/w/a/.bashrc").ok());
  // The detached clone shows root's files as owned by the sandbox uid.
  for (const StagedMount& m : stage->staged()) {
    struct stat st;
    ASSERT_EQ(fstatat(m.tree_fd, "", &st, AT_EMPTY_PATH), 0);
    EXPECT_EQ(st.st_uid, 65530u) << m.target;
  }
  EXPECT_FALSE(MakeIdmapUserns(0, 0).ok());
}

}  // namespace
}  // namespace ccsandbox::launcher
