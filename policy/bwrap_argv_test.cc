#include "policy/bwrap_argv.h"

#include <map>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

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

TEST(RenderBwrapArgv, GoldenMergedUsrHost) {
  FakeHost host;
  host.kinds = {{"/usr", HostView::Kind::kDirectory},
                {"/bin", HostView::Kind::kSymlink},
                {"/lib64", HostView::Kind::kSymlink},
                {"/etc", HostView::Kind::kDirectory}};
  host.links = {{"/bin", "usr/bin"}, {"/lib64", "usr/lib64"}};
  BwrapConfig config;
  config.bwrap_path = "/usr/bin/bwrap";
  config.system_ro_dirs = {"/usr", "/bin", "/lib", "/lib64", "/etc"};

  v1::LaunchPlan plan;
  plan.set_backend(v1::SANDBOX_BACKEND_NATIVE);
  plan.set_workdir("/w/tree");
  auto mount = [&](const char* p, bool ro) {
    v1::PlanMount* m = plan.add_mounts();
    m->set_host_path(p);
    m->set_guest_path(p);
    m->set_read_only(ro);
  };
  mount("/w/tree", false);
  mount("/w/cfg", true);
  plan.add_protected_paths("/w/tree/main-checkout");
  plan.add_protected_paths("/elsewhere/checkout");  // not under a bind: stays invisible
  plan.add_protected_paths("/w/*/glob");            // globs are not bwrap operations
  plan.add_argv("sh");
  plan.add_argv("-c");
  plan.add_argv("echo hi");

  absl::StatusOr<std::vector<std::string>> argv = RenderBwrapArgv(plan, config, host);
  ASSERT_TRUE(argv.ok()) << argv.status();
  const std::vector<std::string> want = {
      "/usr/bin/bwrap",
      "--unshare-all", "--die-with-parent", "--new-session",
      "--cap-drop", "ALL",
      "--ro-bind", "/usr", "/usr",
      "--symlink", "usr/bin", "/bin",
      "--symlink", "usr/lib64", "/lib64",
      "--ro-bind", "/etc", "/etc",
      "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
      "--bind", "/w/tree", "/w/tree",
      "--ro-bind", "/w/cfg", "/w/cfg",
      "--ro-bind-try", "/w/tree/main-checkout", "/w/tree/main-checkout",
      "--chdir", "/w/tree", "--",
      "sh", "-c", "echo hi",
  };
  EXPECT_EQ(*argv, want) << absl::StrJoin(*argv, " ");
}

TEST(RenderBwrapArgv, RefusesNonNativePlans) {
  FakeHost host;
  v1::LaunchPlan plan;
  plan.set_backend(v1::SANDBOX_BACKEND_NONE);
  EXPECT_FALSE(RenderBwrapArgv(plan, BwrapConfig(), host).ok());
}

}  // namespace
}  // namespace ccsandbox::policy
