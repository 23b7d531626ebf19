#include "policy/plan/launch_plan.h"

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

v1::SandboxSpec Spec(const char* mode) {
  v1::SandboxSpec spec;
  spec.set_session_id("s");
  spec.set_mode(mode);
  auto add = [&](const char* path, bool ro) {
    v1::SandboxBindMount* b = spec.add_bind_mounts();
    b->set_host_path(path);
    b->set_read_only(ro);
  };
  add("/work/tree/sub", false);
  add("/work/tree", false);
  add("/work/config", true);
  spec.add_runner_state_dirs("/work/state");
  return spec;
}

v1::LaunchPlan Build(const v1::SandboxSpec& spec, const v1::ExecRequest& exec) {
  PlanInputs in;
  in.spec = &spec;
  in.exec = &exec;
  in.backend = v1::SANDBOX_BACKEND_NATIVE;
  in.run_id = "r1";
  in.base_env = {{"PATH", "/usr/bin"}, {"A", "base"}};
  absl::StatusOr<v1::LaunchPlan> plan = BuildLaunchPlan(in);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.value_or(v1::LaunchPlan());
}

v1::ExecRequest Exec() {
  v1::ExecRequest exec;
  exec.add_argv("true");
  (*exec.mutable_env())["A"] = "request";
  return exec;
}

struct Expected {
  const char* path;
  bool read_only;
};

TEST(BuildLaunchPlan, ChatKeepsBindsWritableParentsFirst) {
  v1::LaunchPlan plan = Build(Spec("chat"), Exec());
  const Expected want[] = {{"/work/tree", false},
                           {"/work/config", true},
                           {"/work/state", false},
                           {"/work/tree/sub", false}};
  ASSERT_EQ(plan.mounts_size(), 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(plan.mounts(i).host_path(), want[i].path) << i;
    EXPECT_EQ(plan.mounts(i).guest_path(), want[i].path) << i;
    EXPECT_EQ(plan.mounts(i).read_only(), want[i].read_only) << i;
  }
  EXPECT_EQ(plan.workdir(), "/work/tree/sub");
  EXPECT_EQ(plan.env().at("A"), "request");
  EXPECT_EQ(plan.run_id(), "r1");
}

TEST(BuildLaunchPlan, ReadOnlyModesKeepOnlyRunnerStateWritable) {
  for (const char* mode : {"review", "plan", "orchestrate"}) {
    v1::LaunchPlan plan = Build(Spec(mode), Exec());
    for (const v1::PlanMount& m : plan.mounts()) {
      EXPECT_EQ(m.read_only(), m.host_path() != "/work/state") << mode << " " << m.host_path();
    }
  }
}

TEST(BuildLaunchPlan, WorkdirPrecedence) {
  v1::SandboxSpec spec = Spec("chat");
  spec.set_guest_workdir("/work/tree");
  EXPECT_EQ(Build(spec, Exec()).workdir(), "/work/tree");
  v1::ExecRequest exec = Exec();
  exec.set_guest_workdir("/work/config");
  EXPECT_EQ(Build(spec, exec).workdir(), "/work/config");
  v1::SandboxSpec bare;
  bare.set_session_id("s");
  EXPECT_EQ(Build(bare, Exec()).workdir(), "/");
}

TEST(BuildLaunchPlan, RefusesAnEmptyCommandAndABadWorkdir) {
  v1::SandboxSpec spec = Spec("chat");
  v1::ExecRequest exec;
  PlanInputs in;
  in.spec = &spec;
  in.exec = &exec;
  EXPECT_EQ(BuildLaunchPlan(in).status().code(), absl::StatusCode::kInvalidArgument);
  exec.add_argv("true");
  exec.set_guest_workdir("../x");
  EXPECT_EQ(BuildLaunchPlan(in).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DefaultEnvironment, CopiesOnlyIdentityAndLocale) {
  std::map<std::string, std::string> host = {{"HOME", "/root"},
                                             {"LC_ALL", "C"},
                                             {"SECRET_TOKEN", "x"},
                                             {"USER", "root"},
                                             {"PATH", "/evil"}};
  auto native = DefaultEnvironment(v1::SANDBOX_BACKEND_NATIVE, host);
  EXPECT_EQ(native.count("SECRET_TOKEN"), 0u);
  EXPECT_EQ(native.at("HOME"), "/tmp");
  EXPECT_EQ(native.at("TMPDIR"), "/tmp");
  EXPECT_EQ(native.at("LC_ALL"), "C");
  EXPECT_EQ(native.at("PATH"), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  auto none = DefaultEnvironment(v1::SANDBOX_BACKEND_NONE, host);
  EXPECT_EQ(none.at("HOME"), "/root");
  EXPECT_EQ(none.count("TMPDIR"), 0u);
}

}  // namespace
}  // namespace ccsandbox::policy
