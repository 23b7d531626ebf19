// Spec in, ordered bwrap operations out, on a real tree with symlinks: the scan, both
// spellings and the renderer together.
#include "broker/deny_scan.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/str_join.h"
#include "base/real_host_view.h"
#include "gtest/gtest.h"
#include "policy/plan/bwrap_argv.h"
#include "policy/plan/launch_plan.h"

namespace ccsandbox::broker {
namespace {

class DenyScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/denyscan.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    char resolved[PATH_MAX];
    ASSERT_NE(realpath(tmpl, resolved), nullptr);
    r_ = resolved;
    for (const char* dir : {"/home", "/home/.ssh", "/home/.config", "/home/.config/gh", "/home/w",
                            "/home/w/a", "/home/w/a/b", "/home/w/repo", "/home/w/repo/.git",
                            "/home/w/repo/.git/hooks", "/home/w/state", "/home/w/state/.claude",
                            "/home/w/vendor", "/home/w/vendor/.aws", "/data", "/data/checkout"}) {
      ASSERT_EQ(mkdir((r_ + dir).c_str(), 0755), 0) << dir;
    }
    for (const char* file : {"/home/.bashrc", "/home/w/a/b/.zshrc", "/home/w/repo/.git/config",
                             "/home/w/.mcp.json", "/home/w/notes.txt", "/data/checkout/README"}) {
      std::ofstream(r_ + file) << "x";
    }
    // /home/w/link -> /data: the protected checkout is named through the symlink.
    ASSERT_EQ(symlink((r_ + "/data").c_str(), (r_ + "/home/w/link").c_str()), 0);
  }
  void TearDown() override { system(("rm -rf " + r_).c_str()); }
  std::string r_;
};

TEST_F(DenyScanTest, FindsEveryDenyPathAtAnyDepth) {
  v1::SandboxSpec spec;
  v1::SandboxBindMount* bind = spec.add_bind_mounts();
  bind->set_host_path(r_ + "/home");
  spec.add_runner_state_dirs(r_ + "/home/w/state");
  spec.add_protected_paths(r_ + "/home/w/link/checkout");
  spec.add_protected_paths(r_ + "/home/w/*.txt");

  ScanRequest request;
  request.mounts = policy::PlanMounts(spec, policy::Mode::kChat);
  request.runner_state_dirs = {r_ + "/home/w/state"};
  request.protected_paths.assign(spec.protected_paths().begin(), spec.protected_paths().end());
  request.home_dirs = {r_ + "/home"};
  absl::StatusOr<policy::DenyScan> scan = ScanForDenyPaths(request);
  ASSERT_TRUE(scan.ok()) << scan.status();

  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  // Home-relative secrets (.config/gh) are found wherever a bound tree holds them.
  EXPECT_EQ(sorted(scan->secrets),
            sorted({r_ + "/home/.ssh", r_ + "/home/w/vendor/.aws", r_ + "/home/.config/gh"}));
  // Nested rc files and git internals found; the runner state dir's .claude is exempt.
  EXPECT_EQ(sorted(scan->deny_write),
            sorted({r_ + "/home/.bashrc", r_ + "/home/w/a/b/.zshrc", r_ + "/home/w/.mcp.json",
                    r_ + "/home/w/repo/.git/hooks", r_ + "/home/w/repo/.git/config"}));
  // Globs expanded for bwrap; the symlinked spelling kept as written.
  EXPECT_EQ(sorted(scan->protected_paths),
            sorted({r_ + "/home/w/link/checkout", r_ + "/home/w/notes.txt"}));

  policy::DenyPaths deny = policy::ResolveDenyPaths(*scan, RealPathResolver());
  // The protected checkout in both spellings: literal and symlink-resolved.
  EXPECT_NE(std::find(deny.write.begin(), deny.write.end(), r_ + "/home/w/link/checkout"),
            deny.write.end());
  EXPECT_NE(std::find(deny.write.begin(), deny.write.end(), r_ + "/data/checkout"),
            deny.write.end());

  v1::ExecRequest exec;
  exec.add_argv("true");
  policy::PlanInputs inputs;
  inputs.spec = &spec;
  inputs.exec = &exec;
  inputs.backend = v1::SANDBOX_BACKEND_NATIVE;
  inputs.run_id = "r";
  inputs.deny = deny;
  absl::StatusOr<v1::LaunchPlan> plan = policy::BuildLaunchPlan(inputs);
  ASSERT_TRUE(plan.ok()) << plan.status();
  policy::BwrapConfig config;  // no system base: only the plan's own operations
  absl::StatusOr<std::vector<std::string>> argv =
      policy::RenderBwrapArgv(*plan, config, RealHostView());
  ASSERT_TRUE(argv.ok());
  const std::string got = absl::StrJoin(*argv, " ");
  const std::string h = r_ + "/home";
  // Parents first; each deny path once; secrets as empty read-only directories.
  const std::string want_ops = absl::StrJoin(
      {"--bind " + h + " " + h,                               // the bind
       "--bind " + h + "/w/state " + h + "/w/state",          // runner state, writable
       "--bind " + h + "/.config " + h + "/.config",          // a nested secret's ancestor pinned
       "--tmpfs " + h + "/.ssh --remount-ro " + h + "/.ssh",  // secret found in the tree
       "--bind " + h + "/w " + h + "/w",                      // ancestor pinned
       "--bind " + h + "/w/state " + h + "/w/state",     // the mount nested in the pin, bound again
       "--ro-bind " + h + "/.bashrc " + h + "/.bashrc",  // rc file
       "--tmpfs " + h + "/.config/gh --remount-ro " + h + "/.config/gh",  // home secret
       "--bind " + h + "/w/vendor " + h + "/w/vendor",           // pinned: w/vendor/.aws is hidden
       "--ro-bind " + h + "/w/notes.txt " + h + "/w/notes.txt",  // protected (glob match)
       "--ro-bind " + h + "/w/.mcp.json " + h + "/w/.mcp.json",  // agent config
       "--bind " + h + "/w/a " + h + "/w/a",
       "--bind " + h + "/w/repo " + h + "/w/repo",
       "--tmpfs " + h + "/w/vendor/.aws --remount-ro " + h + "/w/vendor/.aws",
       "--bind " + h + "/w/a/b " + h + "/w/a/b",
       "--bind " + h + "/w/repo/.git " + h + "/w/repo/.git",
       "--ro-bind " + h + "/w/a/b/.zshrc " + h + "/w/a/b/.zshrc",  // nested rc file
       "--ro-bind " + h + "/w/repo/.git/config " + h + "/w/repo/.git/config",
       "--ro-bind " + h + "/w/repo/.git/hooks " + h + "/w/repo/.git/hooks",
       std::string("--chdir")},
      " ");
  EXPECT_NE(got.find(want_ops), std::string::npos) << got;
  // The literal spelling of the protected checkout goes through the symlink: bwrap would
  // follow it, so only the resolved spelling is an operation (and /data is not bound).
  EXPECT_EQ(got.find("/home/w/link"), std::string::npos) << got;
}

TEST_F(DenyScanTest, ExistingFilesMatchingFilenamePatternsInWritableMountsAreDenied) {
  for (const char* file :
       {"/home/w/.env", "/home/w/a/b/server.PEM", "/home/w/a/.env.local", "/home/w/state/cache.key",
        "/data/checkout/ca.pem", "/home/w/environment"}) {
    std::ofstream(r_ + file) << "x";
  }
  ASSERT_EQ(mkdir((r_ + "/home/w/tls.key").c_str(), 0755), 0);  // a directory with such a name
  v1::PlanMount home, data;
  home.set_host_path(r_ + "/home");
  home.set_guest_path(r_ + "/home");
  data.set_host_path(r_ + "/data");
  data.set_guest_path(r_ + "/data");
  data.set_read_only(true);
  ScanRequest request;
  request.mounts = {home, data};
  request.runner_state_dirs = {r_ + "/home/w/state"};
  request.filename_deny_patterns = {".env", ".env.*", "*.key", "*.pem"};
  absl::StatusOr<policy::DenyScan> scan = ScanForDenyPaths(request);
  ASSERT_TRUE(scan.ok()) << scan.status();
  std::vector<std::string> found = scan->deny_write;
  std::sort(found.begin(), found.end());
  // Case-insensitive names, any depth, runner state dirs too (they are writable binds); the
  // read-only mount needs nothing; a name that merely starts alike is left alone.
  std::vector<std::string> want = {r_ + "/home/.bashrc",
                                   r_ + "/home/w/.env",
                                   r_ + "/home/w/.mcp.json",
                                   r_ + "/home/w/a/.env.local",
                                   r_ + "/home/w/a/b/.zshrc",
                                   r_ + "/home/w/a/b/server.PEM",
                                   r_ + "/home/w/repo/.git/config",
                                   r_ + "/home/w/repo/.git/hooks",
                                   r_ + "/home/w/state/cache.key",
                                   r_ + "/home/w/tls.key"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(found, want);

  request.filename_deny_patterns = {"a/b"};
  EXPECT_EQ(ScanForDenyPaths(request).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(DenyScanTest, ATreeTooLargeToScanIsRefused) {
  ScanRequest request;
  v1::PlanMount mount;
  mount.set_host_path(r_ + "/home");
  mount.set_guest_path(r_ + "/home");
  request.mounts = {mount};
  request.max_entries = 5;
  EXPECT_EQ(ScanForDenyPaths(request).status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace ccsandbox::broker
