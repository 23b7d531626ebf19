#include "policy/plan/terminal_profile.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Pair;

TerminalInputs Inputs(v1::SandboxBackend backend, std::string workdir) {
  TerminalInputs in;
  in.backend = backend;
  in.run_id = "term-1";
  in.session_id = "term-1";
  in.home = "/home/ann";
  in.workdir = std::move(workdir);
  in.argv = {"/bin/bash"};
  in.base_env = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/tmp"}};
  in.deny.read = {"/home/ann/.ssh", "/home/ann/.config/gh", "/home/ann/.ssh"};
  in.deny.write = {"/home/ann/.bashrc"};
  in.create_guard.emplace().add_trusted_names(".bashrc");
  in.forbidden_dirs = {"/run/ccsandbox"};
  in.bind_ids = {{"/home/ann", {7, 70}}, {"/srv/work", {8, 80}}};
  return in;
}

std::vector<std::pair<std::string, bool>> Mounts(const v1::LaunchPlan& plan) {
  std::vector<std::pair<std::string, bool>> mounts;
  for (const v1::PlanMount& m : plan.mounts()) {
    EXPECT_EQ(m.host_path(), m.guest_path());
    mounts.emplace_back(m.host_path(), m.read_only());
  }
  return mounts;
}

TEST(TerminalSecretPaths, TheSpecsListUnderHomeFromTheOneSource) {
  const std::vector<std::string> paths = TerminalSecretPaths("/home/ann");
  for (const char* spec : {"/home/ann/.ssh", "/home/ann/.aws", "/home/ann/.gnupg",
                           "/home/ann/.config/gh", "/home/ann/Library/Keychains"}) {
    EXPECT_THAT(paths, Contains(spec));
  }
}

TEST(BuildTerminalPlan, NativeIsTheFixedProfile) {
  absl::StatusOr<v1::LaunchPlan> plan =
      BuildTerminalPlan(Inputs(v1::SANDBOX_BACKEND_NATIVE, "/srv/work"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(Mounts(*plan), ElementsAre(Pair("/home/ann", false), Pair("/srv/work", false)));
  // Each bind is pinned to what was checked: a path swapped since then fails the launch.
  EXPECT_EQ(plan->mounts(0).ino(), 70u);
  EXPECT_EQ(plan->mounts(1).dev(), 8u);
  EXPECT_TRUE(plan->open_network());
  EXPECT_FALSE(plan->has_egress());
  EXPECT_THAT(plan->deny_read_paths(), ElementsAre("/home/ann/.ssh", "/home/ann/.config/gh"));
  EXPECT_THAT(plan->deny_write_paths(), ElementsAre("/home/ann/.bashrc"));
  EXPECT_THAT(plan->create_guard().trusted_names(), ElementsAre(".bashrc"));
  EXPECT_THAT(plan->forbidden_dirs(), ElementsAre("/run/ccsandbox"));
  EXPECT_EQ(plan->workdir(), "/srv/work");
  EXPECT_EQ(plan->env().at("HOME"), "/home/ann");
  EXPECT_EQ(plan->env().at("TERM"), "xterm-256color");
  EXPECT_EQ(plan->env().at("SHELL"), "/bin/bash");
}

TEST(BuildTerminalPlan, OneMountWhenOneHoldsTheOther) {
  absl::StatusOr<v1::LaunchPlan> inside =
      BuildTerminalPlan(Inputs(v1::SANDBOX_BACKEND_NATIVE, "/home/ann/src"));
  ASSERT_TRUE(inside.ok()) << inside.status();
  EXPECT_THAT(Mounts(*inside), ElementsAre(Pair("/home/ann", false)));
  absl::StatusOr<v1::LaunchPlan> around =
      BuildTerminalPlan(Inputs(v1::SANDBOX_BACKEND_NATIVE, "/home"));
  ASSERT_TRUE(around.ok()) << around.status();
  EXPECT_THAT(Mounts(*around), ElementsAre(Pair("/home", false)));
}

TEST(BuildTerminalPlan, NoneIsTheHostShellWithNothingAround) {
  absl::StatusOr<v1::LaunchPlan> plan =
      BuildTerminalPlan(Inputs(v1::SANDBOX_BACKEND_NONE, "/srv/work"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->mounts().empty());
  EXPECT_TRUE(plan->deny_read_paths().empty());
  EXPECT_FALSE(plan->open_network());
  EXPECT_EQ(plan->env().at("HOME"), "/home/ann");
}

TEST(BuildTerminalPlan, RefusesWhatIsNotATerminal) {
  TerminalInputs microvm = Inputs(v1::SANDBOX_BACKEND_MICROVM, "/w");
  EXPECT_EQ(BuildTerminalPlan(microvm).status().code(), absl::StatusCode::kInvalidArgument);
  TerminalInputs relative = Inputs(v1::SANDBOX_BACKEND_NATIVE, "w");
  EXPECT_EQ(BuildTerminalPlan(relative).status().code(), absl::StatusCode::kInvalidArgument);
  TerminalInputs empty = Inputs(v1::SANDBOX_BACKEND_NATIVE, "/w");
  empty.argv.clear();
  EXPECT_EQ(BuildTerminalPlan(empty).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CheckTerminalOpen, RefusesBadInputNamingTheField) {
  struct Case {
    const char* name;
    void (*mutate)(v1::TerminalOpen&);
    const char* field;  // "" = accepted
  };
  const Case cases[] = {
      {"good", [](v1::TerminalOpen&) {}, ""},
      {"relative", [](v1::TerminalOpen& o) { o.set_working_directory("w"); }, "workingDirectory"},
      {"dotdot", [](v1::TerminalOpen& o) { o.set_working_directory("/a/../b"); },
       "workingDirectory"},
      {"empty program", [](v1::TerminalOpen& o) { o.add_argv(""); }, "argv[0]"},
      {"term space", [](v1::TerminalOpen& o) { o.set_term("xterm 256"); }, "term"},
      {"term escape", [](v1::TerminalOpen& o) { o.set_term("xterm\x1b"); }, "term"},
      {"term long", [](v1::TerminalOpen& o) { o.set_term(std::string(65, 'x')); }, "term"},
      {"no rows", [](v1::TerminalOpen& o) { o.mutable_size()->set_rows(0); }, "size"},
      {"huge cols", [](v1::TerminalOpen& o) { o.mutable_size()->set_cols(1001); }, "size"},
  };
  for (const Case& c : cases) {
    v1::TerminalOpen open;
    open.mutable_size()->set_rows(24);
    open.mutable_size()->set_cols(80);
    c.mutate(open);
    const absl::Status s = CheckTerminalOpen(open);
    if (std::string(c.field).empty()) {
      EXPECT_TRUE(s.ok()) << c.name << ": " << s;
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name;
      EXPECT_EQ(s.message().rfind(c.field, 0), 0u) << c.name << ": " << s;
    }
  }
}

}  // namespace
}  // namespace ccsandbox::policy
