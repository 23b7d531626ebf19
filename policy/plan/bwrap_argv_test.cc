#include "policy/plan/bwrap_argv.h"

#include <map>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/plan/egress_wiring.h"

namespace ccsandbox::policy {
namespace {

using Kind = HostView::Kind;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

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

// The shim's arguments as the launcher renders them (launcher/shim_plan_test.cc pins that
// it renders exactly these for the same plans).
const std::vector<std::string> kEgressShimArgs = {
    "--bridge=127.0.0.1:3128=/run/ccsandbox/http.sock",
    "--bridge=127.0.0.1:1080=/run/ccsandbox/socks.sock", "--"};
const std::vector<std::string> kGuardShimArgs = {"--create-guard=7", "--free-create=/tmp",
                                                 "--writable=/w", "--"};
const std::vector<std::string> kEgressAndGuardShimArgs = {
    "--bridge=127.0.0.1:3128=/run/ccsandbox/http.sock",
    "--bridge=127.0.0.1:1080=/run/ccsandbox/socks.sock",
    "--create-guard=7",
    "--free-create=/tmp",
    "--writable=/w",
    "--"};

v1::LaunchPlan Plan(std::vector<std::pair<std::string, bool>> mounts) {
  v1::LaunchPlan plan;
  plan.set_backend(v1::SANDBOX_BACKEND_NATIVE);
  plan.set_workdir(mounts.empty() ? "/" : mounts[0].first);
  for (const auto& [path, ro] : mounts) {
    v1::PlanMount* m = plan.add_mounts();
    m->set_host_path(path);
    m->set_guest_path(path);
    m->set_read_only(ro);
  }
  plan.add_argv("true");
  return plan;
}

// The operations between the fixed prefix (namespaces, system base, /proc /dev /tmp) and
// --chdir.
std::vector<std::string> MountOps(const v1::LaunchPlan& plan, const FakeHost& host) {
  BwrapConfig config;
  absl::StatusOr<std::vector<std::string>> argv = RenderBwrapArgv(plan, config, host);
  EXPECT_TRUE(argv.ok()) << argv.status();
  std::vector<std::string> ops;
  bool in = false;
  for (const std::string& a : *argv) {
    if (a == "--chdir") break;
    if (in) ops.push_back(a);
    if (a == "/tmp") in = true;
  }
  return ops;
}

TEST(RenderBwrapArgv, GoldenMergedUsrHost) {
  FakeHost host;
  host.kinds = {{"/usr", Kind::kDirectory},
                {"/bin", Kind::kSymlink},
                {"/lib64", Kind::kSymlink},
                {"/etc", Kind::kDirectory}};
  host.links = {{"/bin", "usr/bin"}, {"/lib64", "usr/lib64"}};
  BwrapConfig config;
  config.bwrap_path = "/usr/bin/bwrap";
  config.system_ro_dirs = {"/usr", "/bin", "/lib", "/lib64", "/etc"};
  config.seccomp_fd = 7;

  v1::LaunchPlan plan = Plan({{"/w/tree", false}, {"/w/cfg", true}});
  plan.clear_argv();
  for (const char* a : {"sh", "-c", "echo hi"}) plan.add_argv(a);

  absl::StatusOr<std::vector<std::string>> argv = RenderBwrapArgv(plan, config, host);
  ASSERT_TRUE(argv.ok()) << argv.status();
  const std::vector<std::string> want = {
      "/usr/bin/bwrap",
      "--unshare-all",
      "--die-with-parent",
      "--cap-drop",
      "ALL",
      "--seccomp",
      "7",
      "--ro-bind",
      "/usr",
      "/usr",
      "--symlink",
      "usr/bin",
      "/bin",
      "--symlink",
      "usr/lib64",
      "/lib64",
      "--ro-bind",
      "/etc",
      "/etc",
      "--proc",
      "/proc",
      "--ro-bind",
      "/proc/sys",
      "/proc/sys",
      "--ro-bind-try",
      "/proc/sysrq-trigger",
      "/proc/sysrq-trigger",
      "--dev",
      "/dev",
      "--tmpfs",
      "/tmp",
      "--bind",
      "/w/tree",
      "/w/tree",
      "--ro-bind",
      "/w/cfg",
      "/w/cfg",
      "--chdir",
      "/w/tree",
      "--",
      "sh",
      "-c",
      "echo hi",
  };
  EXPECT_EQ(*argv, want) << absl::StrJoin(*argv, " ");
}

// The launcher binds what it opened and checked: every source under a mount comes from that
// mount's staged clone, deny paths below nested mounts from the deepest one; a root caller
// runs as uid 0 of its own user namespace.
TEST(RenderBwrapArgv, StagedSourcesGolden) {
  FakeHost host;
  host.kinds = {{"/w", Kind::kDirectory},          {"/w/a", Kind::kDirectory},
                {"/w/a/.bashrc", Kind::kFile},     {"/w/sub", Kind::kDirectory},
                {"/w/sub/.git", Kind::kDirectory}, {"/w/sub/.git/hooks", Kind::kDirectory}};
  BwrapConfig config;
  config.bwrap_path = "bwrap";
  config.shim_path = "/opt/shim";
  config.sources.mounts = {"/stage/m0", "/stage/m1"};
  config.sources.shim = "/stage/shim";
  config.sources.http_socket = "/stage/http.sock";
  config.sources.socks_socket = "/stage/socks.sock";
  config.shim_args = kEgressShimArgs;
  config.inside_root = true;
  v1::LaunchPlan plan = Plan({{"/w", false}, {"/w/sub", false}});
  plan.add_deny_write_paths("/w/a/.bashrc");
  plan.add_deny_write_paths("/w/sub/.git/hooks");
  plan.mutable_egress()->set_http_socket("/run/b/http.sock");
  plan.mutable_egress()->set_socks_socket("/run/b/socks.sock");
  plan.clear_argv();
  plan.add_argv("true");
  absl::StatusOr<std::vector<std::string>> argv = RenderBwrapArgv(plan, config, host);
  ASSERT_TRUE(argv.ok()) << argv.status();
  const std::string got = absl::StrJoin(*argv, " ");
  EXPECT_THAT(got, HasSubstr("--cap-drop ALL --uid 0 --gid 0 "));
  EXPECT_THAT(got, HasSubstr("--bind /stage/m0 /w --bind /stage/m1 /w/sub "));
  EXPECT_THAT(got, HasSubstr("--bind /stage/m0/a /w/a "));
  EXPECT_THAT(got, HasSubstr("--ro-bind /stage/m0/a/.bashrc /w/a/.bashrc"));
  EXPECT_THAT(got, HasSubstr("--bind /stage/m1/.git /w/sub/.git "));
  EXPECT_THAT(got, HasSubstr("--ro-bind /stage/m1/.git/hooks /w/sub/.git/hooks"));
  EXPECT_THAT(got, HasSubstr("--ro-bind /stage/http.sock " + std::string(kSandboxHttpSocket)));
  EXPECT_THAT(got, HasSubstr("--ro-bind /stage/socks.sock " + std::string(kSandboxSocksSocket)));
  EXPECT_THAT(got, HasSubstr("--ro-bind /stage/shim " + std::string(kSandboxShimPath)));
  EXPECT_THAT(got, Not(HasSubstr("/run/b/")));
  EXPECT_THAT(got, Not(HasSubstr("/opt/shim")));
}

struct Case {
  const char* name;
  std::vector<std::pair<std::string, bool>> mounts;  // path, read-only
  std::map<std::string, Kind> kinds;
  std::vector<std::string> deny_read;
  std::vector<std::string> deny_write;
  std::vector<std::string> want;
};

TEST(RenderBwrapArgv, DenySetsTable) {
  const Case cases[] = {
      {"secret dir: empty read-only tmpfs, never a writable one",
       {{"/home/u", false}},
       {{"/home/u/.ssh", Kind::kDirectory}},
       {"/home/u/.ssh"},
       {},
       {"--bind", "/home/u", "/home/u", "--tmpfs", "/home/u/.ssh", "--remount-ro", "/home/u/.ssh"}},
      {"secret file: /dev/null read-only; missing and unbound secrets: nothing",
       {{"/home/u", true}},
       {{"/home/u/.netrc", Kind::kFile}, {"/other/.ssh", Kind::kDirectory}},
       {"/home/u/.netrc", "/home/u/.aws", "/other/.ssh", "/home/u/*.key"},
       {},
       {"--ro-bind", "/home/u", "/home/u", "--ro-bind", "/dev/null", "/home/u/.netrc"}},
      {"deny-write at depth: ancestors pinned writable, the path read-only",
       {{"/w", false}},
       {{"/w/a", Kind::kDirectory}, {"/w/a/b", Kind::kDirectory}, {"/w/a/b/.bashrc", Kind::kFile}},
       {},
       {"/w/a/b/.bashrc"},
       {"--bind", "/w", "/w", "--bind", "/w/a", "/w/a", "--bind", "/w/a/b", "/w/a/b", "--ro-bind",
        "/w/a/b/.bashrc", "/w/a/b/.bashrc"}},
      {"protected checkout and a deeper deny path: parents first, nothing re-opened",
       {{"/w", false}},
       {{"/w/repo", Kind::kDirectory},
        {"/w/repo/.git", Kind::kDirectory},
        {"/w/repo/.git/hooks", Kind::kDirectory}},
       {},
       {"/w/repo/.git/hooks", "/w/repo"},
       {"--bind", "/w", "/w", "--ro-bind", "/w/repo", "/w/repo"}},
      {"read-only binds need no deny-write; unbound and missing paths are skipped",
       {{"/w", true}},
       {{"/w/.bashrc", Kind::kFile}, {"/x/.bashrc", Kind::kFile}},
       {},
       {"/w/.bashrc", "/x/.bashrc", "/w/missing/.zshrc"},
       {"--ro-bind", "/w", "/w"}},
      {"a secret inside a pinned ancestor stays hidden (emitted after the pin)",
       {{"/w", false}},
       {{"/w/a", Kind::kDirectory},
        {"/w/a/.ssh", Kind::kDirectory},
        {"/w/a/sub", Kind::kDirectory},
        {"/w/a/sub/.zshrc", Kind::kFile}},
       {"/w/a/.ssh"},
       {"/w/a/sub/.zshrc"},
       {"--bind", "/w", "/w", "--bind", "/w/a", "/w/a", "--tmpfs", "/w/a/.ssh", "--remount-ro",
        "/w/a/.ssh", "--bind", "/w/a/sub", "/w/a/sub", "--ro-bind", "/w/a/sub/.zshrc",
        "/w/a/sub/.zshrc"}},
      {"a deny-write path under a hidden secret is not visible: skipped",
       {{"/w", false}},
       {{"/w/.ssh", Kind::kDirectory}, {"/w/.ssh/.bashrc", Kind::kFile}},
       {"/w/.ssh"},
       {"/w/.ssh/.bashrc"},
       {"--bind", "/w", "/w", "--tmpfs", "/w/.ssh", "--remount-ro", "/w/.ssh"}},
      {"a symlinked deny path is left to its resolved spelling",
       {{"/w", false}},
       {{"/w/.bashrc", Kind::kSymlink},
        {"/w/dot/bashrc", Kind::kFile},
        {"/w/dot", Kind::kDirectory}},
       {},
       {"/w/.bashrc", "/w/dot/bashrc"},
       {"--bind", "/w", "/w", "--bind", "/w/dot", "/w/dot", "--ro-bind", "/w/dot/bashrc",
        "/w/dot/bashrc"}},
      {"a spelling through a symlinked directory is left to its resolved twin",
       {{"/w", false}},
       {{"/w/link", Kind::kSymlink},
        {"/w/link/checkout", Kind::kDirectory},
        {"/w/real", Kind::kDirectory},
        {"/w/real/checkout", Kind::kDirectory}},
       {"/w/link/.ssh"},
       {"/w/link/checkout", "/w/real/checkout"},
       {"--bind", "/w", "/w", "--bind", "/w/real", "/w/real", "--ro-bind", "/w/real/checkout",
        "/w/real/checkout"}},
      {"a read-only bind nested below a pinned ancestor is bound again after the pin",
       {{"/w", false}, {"/w/a/vendor", true}},
       {{"/w/a", Kind::kDirectory},
        {"/w/a/vendor", Kind::kDirectory},
        {"/w/a/.bashrc", Kind::kFile}},
       {},
       {"/w/a/.bashrc"},
       {"--bind", "/w", "/w", "--ro-bind", "/w/a/vendor", "/w/a/vendor", "--bind", "/w/a", "/w/a",
        "--ro-bind", "/w/a/vendor", "/w/a/vendor", "--ro-bind", "/w/a/.bashrc", "/w/a/.bashrc"}},
      {"a runner state dir nested in a read-only bind stays writable; pins inside it",
       {{"/w", true}, {"/w/state", false}},
       {{"/w/state", Kind::kDirectory},
        {"/w/state/x", Kind::kDirectory},
        {"/w/state/x/.profile", Kind::kFile}},
       {},
       {"/w/state/x/.profile"},
       {"--ro-bind", "/w", "/w", "--bind", "/w/state", "/w/state", "--bind", "/w/state/x",
        "/w/state/x", "--ro-bind", "/w/state/x/.profile", "/w/state/x/.profile"}},
  };
  for (const Case& c : cases) {
    FakeHost host;
    host.kinds = c.kinds;
    v1::LaunchPlan plan = Plan(c.mounts);
    for (const std::string& p : c.deny_read) plan.add_deny_read_paths(p);
    for (const std::string& p : c.deny_write) plan.add_deny_write_paths(p);
    std::vector<std::string> got = MountOps(plan, host);
    EXPECT_EQ(got, c.want) << c.name << "\n  got: " << absl::StrJoin(got, " ");
  }
}

// The nested bind spelled through a symlink lands below the pin too (bwrap follows the link
// when it mounts): it is compared where it lands, and bound again after the pin.
TEST(RenderBwrapArgv, ANestedBindSpelledThroughASymlinkIsBoundAgainAfterThePin) {
  FakeHost host;
  host.kinds = {{"/w/a", Kind::kDirectory},
                {"/w/vlink", Kind::kSymlink},
                {"/w/a/vendor", Kind::kDirectory},
                {"/w/a/.bashrc", Kind::kFile}};
  host.links = {{"/w/vlink", "a/vendor"}};
  v1::LaunchPlan plan = Plan({{"/w", false}, {"/w/vlink", true}});
  plan.add_deny_write_paths("/w/a/.bashrc");
  EXPECT_THAT(MountOps(plan, host),
              ElementsAre("--bind", "/w", "/w", "--ro-bind", "/w/vlink", "/w/vlink", "--bind",
                          "/w/a", "/w/a", "--ro-bind", "/w/vlink", "/w/vlink", "--ro-bind",
                          "/w/a/.bashrc", "/w/a/.bashrc"));
}

TEST(RenderBwrapArgv, EgressBindsTheProxySocketsAndWrapsTheCommandInTheShim) {
  FakeHost host;
  v1::LaunchPlan plan = Plan({{"/w", false}});
  plan.mutable_egress()->set_http_socket("/run/b/s1/http.sock");
  plan.mutable_egress()->set_socks_socket("/run/b/s1/socks.sock");
  BwrapConfig config;
  config.shim_path = "/usr/lib/ccsandbox/sandbox_shim";
  config.shim_args = kEgressShimArgs;
  absl::StatusOr<std::vector<std::string>> argv = RenderBwrapArgv(plan, config, host);
  ASSERT_TRUE(argv.ok()) << argv.status();
  const std::string got = absl::StrJoin(*argv, " ");
  EXPECT_NE(got.find("--bind /w /w "
                     "--ro-bind /run/b/s1/http.sock /run/ccsandbox/http.sock "
                     "--ro-bind /run/b/s1/socks.sock /run/ccsandbox/socks.sock "
                     "--ro-bind /usr/lib/ccsandbox/sandbox_shim /run/ccsandbox/shim "
                     "--chdir /w -- /run/ccsandbox/shim "
                     "--bridge=127.0.0.1:3128=/run/ccsandbox/http.sock "
                     "--bridge=127.0.0.1:1080=/run/ccsandbox/socks.sock -- true"),
            std::string::npos)
      << got;
  config.shim_path.clear();
  EXPECT_EQ(RenderBwrapArgv(plan, config, host).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(RenderBwrapArgv, CreateGuardRunsTheCommandUnderTheShimWithItsChannel) {
  FakeHost host;
  v1::LaunchPlan plan = Plan({{"/w", false}, {"/ro", true}});
  plan.mutable_create_guard()->add_deny_patterns(".env");
  BwrapConfig config;
  config.shim_path = "/usr/lib/ccsandbox/sandbox_shim";
  config.shim_args = kGuardShimArgs;
  absl::StatusOr<std::vector<std::string>> argv = RenderBwrapArgv(plan, config, host);
  ASSERT_TRUE(argv.ok()) << argv.status();
  const std::string got = absl::StrJoin(*argv, " ");
  EXPECT_NE(got.find("--ro-bind /usr/lib/ccsandbox/sandbox_shim /run/ccsandbox/shim "
                     "--chdir /w -- /run/ccsandbox/shim "
                     "--create-guard=7 --free-create=/tmp --writable=/w -- true"),
            std::string::npos)
      << got;
  // With egress too: one shim does both.
  plan.mutable_egress()->set_http_socket("/run/b/s1/http.sock");
  plan.mutable_egress()->set_socks_socket("/run/b/s1/socks.sock");
  config.shim_args = kEgressAndGuardShimArgs;
  argv = RenderBwrapArgv(plan, config, host);
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_NE(absl::StrJoin(*argv, " ")
                .find("--bridge=127.0.0.1:1080=/run/ccsandbox/socks.sock "
                      "--create-guard=7 --free-create=/tmp --writable=/w -- true"),
            std::string::npos)
      << absl::StrJoin(*argv, " ");
  // No shim arguments (so no channel), or no shim: refused, never run unguarded.
  config.shim_args.clear();
  EXPECT_FALSE(RenderBwrapArgv(plan, config, host).ok());
  config.shim_args = kEgressAndGuardShimArgs;
  config.shim_path.clear();
  EXPECT_EQ(RenderBwrapArgv(plan, config, host).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// A secret nested in a writable tree has its ancestors pinned: renaming ~/.config away would
// carry ~/.config/gh out of the next sandbox's deny set. In a read-only tree nothing moves.
TEST(RenderBwrapArgv, ANestedSecretInAWritableTreeHasItsAncestorsPinned) {
  FakeHost host;
  host.kinds = {{"/h", Kind::kDirectory},
                {"/h/.config", Kind::kDirectory},
                {"/h/.config/gh", Kind::kDirectory},
                {"/h/.docker", Kind::kDirectory},
                {"/h/.docker/config.json", Kind::kFile}};
  v1::LaunchPlan plan = Plan({{"/h", false}});
  plan.add_deny_read_paths("/h/.config/gh");
  plan.add_deny_read_paths("/h/.docker/config.json");
  EXPECT_THAT(MountOps(plan, host),
              ElementsAre("--bind", "/h", "/h", "--bind", "/h/.config", "/h/.config", "--bind",
                          "/h/.docker", "/h/.docker", "--tmpfs", "/h/.config/gh", "--remount-ro",
                          "/h/.config/gh", "--ro-bind", "/dev/null", "/h/.docker/config.json"));
  v1::LaunchPlan read_only = Plan({{"/h", true}});
  read_only.add_deny_read_paths("/h/.config/gh");
  EXPECT_THAT(MountOps(read_only, host),
              ElementsAre("--ro-bind", "/h", "/h", "--tmpfs", "/h/.config/gh", "--remount-ro",
                          "/h/.config/gh"));
}

// The terminal profile's open network: the host's network namespace, nothing else changes.
TEST(RenderBwrapArgv, OpenNetworkSharesTheHostNetwork) {
  FakeHost host;
  host.kinds = {{"/w/tree", Kind::kDirectory}};
  BwrapConfig config;
  v1::LaunchPlan plan = Plan({{"/w/tree", false}});
  absl::StatusOr<std::vector<std::string>> closed = RenderBwrapArgv(plan, config, host);
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_THAT(absl::StrJoin(*closed, " "), Not(HasSubstr("--share-net")));
  plan.set_open_network(true);
  absl::StatusOr<std::vector<std::string>> open = RenderBwrapArgv(plan, config, host);
  ASSERT_TRUE(open.ok()) << open.status();
  EXPECT_THAT(absl::StrJoin(*open, " "),
              HasSubstr("--unshare-all --die-with-parent --cap-drop ALL --share-net "));
}

TEST(RenderBwrapArgv, RefusesNonNativePlans) {
  FakeHost host;
  v1::LaunchPlan plan;
  plan.set_backend(v1::SANDBOX_BACKEND_NONE);
  EXPECT_FALSE(RenderBwrapArgv(plan, BwrapConfig(), host).ok());
}

}  // namespace
}  // namespace ccsandbox::policy
