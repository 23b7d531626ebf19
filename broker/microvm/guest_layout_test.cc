#include "broker/microvm/guest_layout.h"

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker::microvm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Kind = HostView::Kind;

class FakeHost : public HostView {
 public:
  std::map<std::string, Kind> kinds;
  std::map<std::string, std::string> links;
  Kind KindOf(const std::string& path) const override {
    auto it = kinds.find(path);
    return it == kinds.end() ? Kind::kMissing : it->second;
  }
  std::string LinkTarget(const std::string& path) const override {
    auto it = links.find(path);
    return it == links.end() ? "" : it->second;
  }
};

// A merged-/usr Debian host with a project directory.
FakeHost Debian() {
  FakeHost host;
  host.kinds = {{"/usr", Kind::kDirectory},
                {"/etc", Kind::kDirectory},
                {"/bin", Kind::kSymlink},
                {"/lib", Kind::kSymlink},
                {"/home/u/p", Kind::kDirectory},
                {"/home/u/p/.env", Kind::kFile},
                {"/home/u/p/a", Kind::kDirectory},
                {"/home/u/p/a/b", Kind::kDirectory},
                {"/home/u/p/a/b/.ssh", Kind::kDirectory},
                {"/home/u/p/.git", Kind::kDirectory},
                {"/home/u/p/.git/hooks", Kind::kDirectory},
                {"/data", Kind::kDirectory},
                {"/data/secret", Kind::kFile},
                {"/home/u/p/link", Kind::kSymlink},
                {"/home/u/p/f.txt", Kind::kFile}};
  host.links = {{"/bin", "usr/bin"}, {"/lib", "usr/lib"}, {"/home/u/p/link", "/etc"}};
  return host;
}

const std::vector<std::string> kSystem = {"/usr", "/bin", "/sbin", "/lib", "/etc"};

v1::LaunchPlan Plan() {
  v1::LaunchPlan plan;
  auto* p = plan.add_mounts();
  p->set_host_path("/home/u/p");
  p->set_guest_path("/home/u/p");
  auto* d = plan.add_mounts();
  d->set_host_path("/data");
  d->set_guest_path("/data");
  d->set_read_only(true);
  plan.set_workdir("/home/u/p");
  return plan;
}

std::vector<std::string> Guards(const GuestLayout& layout) {
  std::vector<std::string> out;
  for (const GuestGuard& g : layout.guards) {
    out.push_back(std::string(1, static_cast<char>(g.step)) + " " + g.guest_path);
  }
  return out;
}

TEST(GuestLayoutTest, SystemDirsReadOnlySymlinksKeptMountsShared) {
  const FakeHost host = Debian();
  absl::StatusOr<GuestLayout> layout = GuestLayoutFromPlan(Plan(), kSystem, host);
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->shares.size(), 4u);
  EXPECT_EQ(layout->system_shares, 2u);
  EXPECT_EQ(layout->shares[0].guest_path, "/usr");
  EXPECT_TRUE(layout->shares[0].read_only);
  EXPECT_EQ(layout->shares[1].guest_path, "/etc");
  EXPECT_TRUE(layout->shares[1].read_only);
  EXPECT_EQ(layout->shares[2].guest_path, "/data");  // shallower first
  EXPECT_TRUE(layout->shares[2].read_only);
  EXPECT_EQ(layout->shares[3].guest_path, "/home/u/p");
  EXPECT_FALSE(layout->shares[3].read_only);
  ASSERT_EQ(layout->symlinks.size(), 2u);
  EXPECT_EQ(layout->symlinks[0].guest_path, "/bin");
  EXPECT_EQ(layout->symlinks[0].target, "usr/bin");
  EXPECT_EQ(layout->workdir, "/home/u/p");
  EXPECT_TRUE(layout->guards.empty());
}

TEST(GuestLayoutTest, DenySetsBecomeGuardsParentsFirst) {
  const FakeHost host = Debian();
  v1::LaunchPlan plan = Plan();
  plan.add_deny_read_paths("/home/u/p/a/b/.ssh");
  plan.add_deny_read_paths("/home/u/p/.env");
  plan.add_deny_read_paths("/data/secret");  // read-only share: masked, nothing to pin
  plan.add_deny_read_paths("/home/u/p/missing");
  plan.add_deny_read_paths("/elsewhere/.ssh");        // not in the guest
  plan.add_deny_read_paths("/home/u/p/link/passwd");  // through a symlink: its twin is listed
  plan.add_deny_read_paths("/home/u/p/*.pem");        // an unexpanded glob names nothing
  plan.add_deny_write_paths("/home/u/p/.git/hooks");
  plan.add_deny_write_paths("/home/u/p/.git");
  plan.add_deny_write_paths("/home/u/p/a/b/.ssh/config");  // hidden already
  plan.add_deny_write_paths("/data");                      // read-only already
  absl::StatusOr<GuestLayout> layout = GuestLayoutFromPlan(plan, kSystem, host);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_THAT(Guards(*layout),
              ElementsAre("f /data/secret", "p /home/u/p/a", "f /home/u/p/.env", "w /home/u/p/.git",
                          "p /home/u/p/a/b", "d /home/u/p/a/b/.ssh"));
}

TEST(GuestLayoutTest, FileMountsAndTooManySharesAreRefused) {
  FakeHost host = Debian();
  v1::LaunchPlan plan = Plan();
  auto* file = plan.add_mounts();
  file->set_host_path("/home/u/p/f.txt");
  file->set_guest_path("/f.txt");
  absl::StatusOr<GuestLayout> layout = GuestLayoutFromPlan(plan, kSystem, host);
  EXPECT_EQ(layout.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(layout.status().message(), HasSubstr("/home/u/p/f.txt"));

  plan = Plan();
  for (int i = 0; i < kMaxGuestShares; ++i) {  // with /usr and /etc: two too many
    const std::string dir = "/many/" + std::to_string(i);
    host.kinds[dir] = Kind::kDirectory;
    auto* m = plan.add_mounts();
    m->set_host_path(dir);
    m->set_guest_path(dir);
  }
  layout = GuestLayoutFromPlan(plan, kSystem, host);
  EXPECT_EQ(layout.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(layout.status().message(), HasSubstr("room for 22"));
  plan.mutable_mounts()->DeleteSubrange(0, 4);  // 2 + 2 + 18 = 22: fits
  EXPECT_TRUE(GuestLayoutFromPlan(plan, kSystem, host).ok());

  plan = Plan();
  plan.mutable_mounts(0)->set_guest_path("/home/u/../p");
  EXPECT_EQ(GuestLayoutFromPlan(plan, kSystem, host).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GuestLayoutTest, QemuArgsEscapeCommasSoAPathNeverAddsAnOption) {
  GuestLayout layout;
  layout.shares = {{"/usr", "/usr", true}, {"/w/a,readonly=off,x=y", "/w", false}};
  EXPECT_THAT(ShareQemuArgs(layout),
              ElementsAre("-fsdev", "local,id=fs0,path=/usr,security_model=none,readonly=on",
                          "-device", "virtio-9p-device,fsdev=fs0,mount_tag=s0", "-fsdev",
                          "local,id=fs1,path=/w/a,,readonly=off,,x=y,security_model=none",
                          "-device", "virtio-9p-device,fsdev=fs1,mount_tag=s1"));
}

TEST(GuestLayoutTest, SetupPutsTheBaseBetweenSystemAndPlanShares) {
  const FakeHost host = Debian();
  v1::LaunchPlan plan = Plan();
  plan.add_deny_read_paths("/home/u/p/.env");
  absl::StatusOr<GuestLayout> layout = GuestLayoutFromPlan(plan, kSystem, host);
  ASSERT_TRUE(layout.ok()) << layout.status();
  const GuestSetup setup = SetupOf(*layout);
  std::vector<std::string> steps;
  for (const GuestStep& s : setup.steps) {
    steps.push_back(std::string(1, static_cast<char>(s.step)) + " " + s.path + " " + s.arg);
  }
  EXPECT_THAT(steps, ElementsAre("c /usr s0", "c /etc s1", "l /bin usr/bin", "l /lib usr/lib",
                                 "b / ", "r /data s2", "s /home/u/p s3", "f /home/u/p/.env "));
  EXPECT_EQ(setup.workdir, "/home/u/p");
  GuestSetup decoded;
  std::string error;
  EXPECT_TRUE(DecodeSetup(EncodeSetup(setup), &decoded, &error)) << error;
}

}  // namespace
}  // namespace ccsandbox::broker::microvm
