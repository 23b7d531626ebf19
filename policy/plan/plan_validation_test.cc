#include "policy/plan/plan_validation.h"

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

v1::LaunchPlan GoodPlan() {
  v1::LaunchPlan plan;
  plan.set_run_id("r1");
  plan.set_backend(v1::SANDBOX_BACKEND_NATIVE);
  plan.add_argv("true");
  plan.set_workdir("/work/tree");
  v1::PlanMount* m = plan.add_mounts();
  m->set_host_path("/work/tree");
  m->set_guest_path("/work/tree");
  return plan;
}

const PlanLimits kLimits = {{"/run/ccsandbox"}};

TEST(ValidatePlan, AcceptsAGoodPlan) { EXPECT_TRUE(ValidatePlan(GoodPlan(), kLimits).ok()); }

// Where a native command may start: in a mount (a warm run: in its sandbox's), /tmp or /; a
// run on the none backend starts where it says.
TEST(ValidatePlan, AcceptsAWorkdirTheSandboxHas) {
  const v1::LaunchPlan sandbox = GoodPlan();
  for (const char* workdir : {"/work/tree/src", "/tmp/x", "/"}) {
    v1::LaunchPlan plan = GoodPlan();
    plan.set_workdir(workdir);
    EXPECT_TRUE(ValidatePlan(plan, kLimits).ok()) << workdir;
    plan.clear_mounts();
    plan.set_sandbox_id("s1");
    PlanLimits in_sandbox;
    in_sandbox.sandbox_mounts = &sandbox.mounts();
    EXPECT_TRUE(ValidatePlan(plan, in_sandbox).ok()) << workdir;
  }
  v1::LaunchPlan none = GoodPlan();
  none.set_backend(v1::SANDBOX_BACKEND_NONE);
  none.clear_mounts();
  none.set_workdir("/etc");
  EXPECT_TRUE(ValidatePlan(none, kLimits).ok());
}

// A spec may give a bind another guestPath on any backend but the native one (ValidateSpec); the
// none backend mounts nothing, so its plans carry such mounts as they are.
TEST(ValidatePlan, AcceptsANonePlanWhoseMountsMoveTheirGuestPath) {
  v1::LaunchPlan none = GoodPlan();
  none.set_backend(v1::SANDBOX_BACKEND_NONE);
  none.mutable_mounts(0)->set_guest_path("/elsewhere");
  EXPECT_TRUE(ValidatePlan(none, kLimits).ok());
  none.set_backend(v1::SANDBOX_BACKEND_NATIVE);
  EXPECT_EQ(ValidatePlan(none, kLimits).message().rfind("mounts[0].guestPath", 0), 0u);
}

TEST(ValidatePlan, RefusesBadPlansNamingTheField) {
  struct Case {
    const char* name;
    void (*mutate)(v1::LaunchPlan&);
    const char* field;
  };
  const Case cases[] = {
      {"run id", [](v1::LaunchPlan& p) { p.clear_run_id(); }, "runId"},
      {"backend", [](v1::LaunchPlan& p) { p.set_backend(v1::SANDBOX_BACKEND_MICROVM); }, "backend"},
      {"argv", [](v1::LaunchPlan& p) { p.clear_argv(); }, "argv"},
      {"relative", [](v1::LaunchPlan& p) { p.mutable_mounts(0)->set_host_path("work"); },
       "mounts[0].hostPath"},
      {"root",
       [](v1::LaunchPlan& p) {
         p.mutable_mounts(0)->set_host_path("/");
         p.mutable_mounts(0)->set_guest_path("/");
       },
       "mounts[0].hostPath"},
      {"guest", [](v1::LaunchPlan& p) { p.mutable_mounts(0)->set_guest_path("/x"); },
       "mounts[0].guestPath"},
      {"socket dir parent",
       [](v1::LaunchPlan& p) {
         p.mutable_mounts(0)->set_host_path("/run");
         p.mutable_mounts(0)->set_guest_path("/run");
       },
       "mounts[0].hostPath"},
      {"socket dir child",
       [](v1::LaunchPlan& p) {
         p.mutable_mounts(0)->set_host_path("/run/ccsandbox/x");
         p.mutable_mounts(0)->set_guest_path("/run/ccsandbox/x");
       },
       "mounts[0].hostPath"},
      {"a parent after its child",
       [](v1::LaunchPlan& p) {
         v1::PlanMount* child = p.mutable_mounts(0);
         child->set_host_path("/work/tree/sub");
         child->set_guest_path("/work/tree/sub");
         child->set_read_only(true);
         v1::PlanMount* parent = p.add_mounts();
         parent->set_host_path("/work/tree");
         parent->set_guest_path("/work/tree");
       },
       "mounts[1].guestPath"},
      {"deny read", [](v1::LaunchPlan& p) { p.add_deny_read_paths("rel"); }, "denyReadPaths[0]"},
      {"deny write", [](v1::LaunchPlan& p) { p.add_deny_write_paths("/a/./b"); },
       "denyWritePaths[0]"},
      {"workdir", [](v1::LaunchPlan& p) { p.set_workdir("rel"); }, "workdir"},
      {"workdir outside every mount", [](v1::LaunchPlan& p) { p.set_workdir("/etc"); }, "workdir"},
      {"workdir beside a mount", [](v1::LaunchPlan& p) { p.set_workdir("/work/treehouse"); },
       "workdir"},
      {"warm run's workdir outside the sandbox's mounts",
       [](v1::LaunchPlan& p) {
         p.clear_mounts();
         p.set_sandbox_id("s1");
         p.set_workdir("/work/other");
       },
       "workdir"},
      {"input limits first", [](v1::LaunchPlan& p) { p.add_argv(std::string("a\0b", 3)); },
       "argv[1]"},
      {"egress socket",
       [](v1::LaunchPlan& p) {
         p.mutable_egress()->set_http_socket("http.sock");
         p.mutable_egress()->set_socks_socket("/s/socks.sock");
       },
       "egress.httpSocket"},
      {"egress socket in the launcher's directory",
       [](v1::LaunchPlan& p) {
         p.mutable_egress()->set_http_socket("/s/http.sock");
         p.mutable_egress()->set_socks_socket("/run/ccsandbox/launcher.sock");
       },
       "egress.socksSocket"},
      {"loopback-port egress (the macOS launch's) on Linux",
       [](v1::LaunchPlan& p) {
         p.mutable_egress()->set_http_socket("/s/http.sock");
         p.mutable_egress()->set_socks_socket("/s/socks.sock");
         p.mutable_egress()->set_http_port(3128);
       },
       "egress.httpPort"},
      {"create guard with an absolute trusted-name rule",
       [](v1::LaunchPlan& p) { p.mutable_create_guard()->add_trusted_names("/etc/x"); },
       "createGuard.trustedNames"},
      {"create guard with a path pattern",
       [](v1::LaunchPlan& p) { p.mutable_create_guard()->add_deny_patterns("a/.env"); },
       "createGuard.denyPatterns"},
      {"create guard on none",
       [](v1::LaunchPlan& p) {
         p.set_backend(v1::SANDBOX_BACKEND_NONE);
         p.mutable_create_guard()->add_deny_patterns(".env");
       },
       "createGuard"},
      {"egress on none",
       [](v1::LaunchPlan& p) {
         p.set_backend(v1::SANDBOX_BACKEND_NONE);
         p.mutable_egress()->set_http_socket("/s/http.sock");
         p.mutable_egress()->set_socks_socket("/s/socks.sock");
       },
       "egress"},
  };
  for (const Case& c : cases) {
    v1::LaunchPlan plan = GoodPlan();
    c.mutate(plan);
    absl::Status s = ValidatePlan(plan, kLimits);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_EQ(s.message().rfind(c.field, 0), 0u) << c.name << ": " << s;
  }
}

// The host's network belongs to the terminal profile only: a dispatch plan (Run, a warm
// sandbox's start) that asks for it is refused, and a terminal plan has no egress or warm
// sandbox to go with it.
TEST(ValidatePlan, OpenNetworkOnlyOnATerminal) {
  v1::LaunchPlan plan = GoodPlan();
  plan.set_open_network(true);
  EXPECT_EQ(ValidatePlan(plan, kLimits).message().rfind("openNetwork", 0), 0u);
  PlanLimits start = kLimits;
  start.sandbox_start = true;
  v1::LaunchPlan sandbox = plan;
  sandbox.clear_argv();
  EXPECT_EQ(ValidatePlan(sandbox, start).message().rfind("openNetwork", 0), 0u);

  PlanLimits terminal = kLimits;
  terminal.terminal = true;
  EXPECT_TRUE(ValidatePlan(plan, terminal).ok()) << ValidatePlan(plan, terminal);
  v1::LaunchPlan with_egress = plan;
  with_egress.mutable_egress()->set_http_socket("/s/http.sock");
  EXPECT_EQ(ValidatePlan(with_egress, terminal).message().rfind("egress:", 0), 0u);
  v1::LaunchPlan guarded = plan;  // the trusted-name rules hold in a terminal too
  guarded.mutable_create_guard()->add_trusted_names(".bashrc");
  EXPECT_TRUE(ValidatePlan(guarded, terminal).ok());
  v1::LaunchPlan warm = plan;
  warm.clear_mounts();
  warm.set_sandbox_id("s1");
  EXPECT_FALSE(ValidatePlan(warm, terminal).ok());
}

}  // namespace
}  // namespace ccsandbox::policy
