#include "policy/plan/input_limits.h"

#include <functional>
#include <string>

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

// A path of exactly `bytes` bytes, in components of at most 200.
std::string PathOf(size_t bytes) {
  std::string path;
  while (path.size() < bytes) {
    path += path.size() % 201 == 0 ? '/' : 'a';
  }
  return path;
}

v1::SandboxSpec GoodSpec() {
  v1::SandboxSpec spec;
  spec.set_session_id("s1");
  v1::SandboxBindMount* bind = spec.add_bind_mounts();
  bind->set_host_path("/work/tree");
  bind->set_guest_path("/work/tree");
  return spec;
}

v1::ExecRequest GoodExec() {
  v1::ExecRequest exec;
  exec.set_session_id("s1");
  exec.add_argv("sh");
  exec.add_argv("-c");
  exec.add_argv("true");
  (*exec.mutable_env())["LANG"] = "C.UTF-8";
  return exec;
}

v1::LaunchPlan GoodPlan() {
  v1::LaunchPlan plan;
  plan.set_run_id("s1-1-0123456789abcdef");
  plan.set_session_id("s1");
  plan.set_backend(v1::SANDBOX_BACKEND_NATIVE);
  plan.add_argv("true");
  plan.set_workdir("/work/tree");
  v1::PlanMount* m = plan.add_mounts();
  m->set_host_path("/work/tree");
  m->set_guest_path("/work/tree");
  plan.add_deny_write_paths("/work/tree/.git/hooks");
  return plan;
}

// Every refusal starts with the field, and no message quotes more than a bounded slice.
void ExpectRefused(const absl::Status& s, absl::StatusCode code, const std::string& field,
                   const std::string& name) {
  EXPECT_EQ(s.code(), code) << name << ": " << s;
  EXPECT_EQ(s.message().rfind(field, 0), 0u) << name << ": " << s;
  EXPECT_LT(s.message().size(), 1024u) << name;
}

struct SpecCase {
  const char* name;
  std::function<void(v1::SandboxSpec&)> mutate;
  const char* field;  // "" = accepted
};

TEST(CheckSpecLimits, TableOfLimits) {
  const SpecCase cases[] = {
      {"good", [](v1::SandboxSpec&) {}, ""},
      {"256 binds",
       [](v1::SandboxSpec& s) {
         for (int i = 1; i < kMaxBindMounts; ++i) s.add_bind_mounts()->set_host_path("/w");
       },
       ""},
      {"257 binds",
       [](v1::SandboxSpec& s) {
         for (int i = 0; i < kMaxBindMounts; ++i) s.add_bind_mounts()->set_host_path("/w");
       },
       "bindMounts:"},
      {"20000 binds",
       [](v1::SandboxSpec& s) {
         for (int i = 0; i < 20000; ++i) s.add_bind_mounts()->set_host_path("/w");
       },
       "bindMounts:"},
      {"host path at PATH_MAX",
       [](v1::SandboxSpec& s) { s.mutable_bind_mounts(0)->set_host_path(PathOf(kMaxPathBytes)); },
       ""},
      {"host path over PATH_MAX",
       [](v1::SandboxSpec& s) {
         s.mutable_bind_mounts(0)->set_host_path(PathOf(kMaxPathBytes + 1));
       },
       "bindMounts[0].hostPath"},
      {"10 MB host path",
       [](v1::SandboxSpec& s) { s.mutable_bind_mounts(0)->set_host_path(PathOf(10 << 20)); },
       "bindMounts[0].hostPath"},
      {"component at NAME_MAX",
       [](v1::SandboxSpec& s) {
         s.mutable_bind_mounts(0)->set_host_path("/w/" + std::string(255, 'c'));
       },
       ""},
      {"component over NAME_MAX",
       [](v1::SandboxSpec& s) {
         s.mutable_bind_mounts(0)->set_guest_path("/w/" + std::string(256, 'c'));
       },
       "bindMounts[0].guestPath"},
      {"NUL in host path",
       [](v1::SandboxSpec& s) {
         s.mutable_bind_mounts(0)->set_host_path(std::string("/work\0/etc", 10));
       },
       "bindMounts[0].hostPath"},
      {"invalid UTF-8 host path",
       [](v1::SandboxSpec& s) { s.mutable_bind_mounts(0)->set_host_path("/work/\xff\xfe"); },
       "bindMounts[0].hostPath"},
      {"overlong UTF-8", [](v1::SandboxSpec& s) { s.set_guest_workdir("/w/\xc0\xaf"); },
       "guestWorkdir"},
      {"UTF-8 is fine", [](v1::SandboxSpec& s) { s.set_guest_workdir("/w/Übung/日本"); }, ""},
      {"long mode", [](v1::SandboxSpec& s) { s.set_mode(std::string(1 << 20, 'r')); }, "mode"},
      {"protected paths",
       [](v1::SandboxSpec& s) {
         for (int i = 0; i <= kMaxProtectedPaths; ++i) s.add_protected_paths("/p");
       },
       "protectedPaths:"},
      {"protected glob too long",
       [](v1::SandboxSpec& s) { s.add_protected_paths("/p/*" + PathOf(kMaxPathBytes)); },
       "protectedPaths[0]"},
      {"runner state dirs",
       [](v1::SandboxSpec& s) {
         for (int i = 0; i <= kMaxRunnerStateDirs; ++i) s.add_runner_state_dirs("/r");
       },
       "runnerStateDirs:"},
      {"runner state NUL",
       [](v1::SandboxSpec& s) { s.add_runner_state_dirs(std::string("/r\0", 3)); },
       "runnerStateDirs[0]"},
      {"exec grant roots",
       [](v1::SandboxSpec& s) {
         for (int i = 0; i <= kMaxExecGrantRoots; ++i) s.add_exec_grant_roots("/g");
       },
       "execGrantRoots:"},
      {"egress entries",
       [](v1::SandboxSpec& s) {
         for (int i = 0; i <= kMaxEgressAllowlistEntries; ++i) s.add_egress_allowlist("a.com");
       },
       "egressAllowlist:"},
      {"egress entry too long",
       [](v1::SandboxSpec& s) { s.add_egress_allowlist(std::string(300, 'a') + ".com"); },
       "egressAllowlist[0]"},
      {"deny patterns",
       [](v1::SandboxSpec& s) {
         for (int i = 0; i <= kMaxWriteDenyPatterns; ++i) {
           s.mutable_write_deny_patterns()->add_patterns("*.x");
         }
       },
       "writeDenyPatterns.patterns:"},
      {"deny pattern too long",
       [](v1::SandboxSpec& s) {
         s.mutable_write_deny_patterns()->add_patterns(std::string(256, 'x'));
       },
       "writeDenyPatterns.patterns[0]"},
      {"deny-write names",
       [](v1::SandboxSpec& s) {
         for (int i = 0; i <= kMaxDenyWriteNames; ++i) s.add_deny_write_names("tools/*.sh");
       },
       "denyWriteNames:"},
      {"deny-write name too long",
       [](v1::SandboxSpec& s) { s.add_deny_write_names(std::string(5000, 'x')); },
       "denyWriteNames[0]"},
      {"connectable sockets",
       [](v1::SandboxSpec& s) {
         for (int i = 0; i <= kMaxConnectableSockets; ++i) s.add_connectable_sockets("/w/s.sock");
       },
       "connectableSockets:"},
      {"connectable socket path too long",
       [](v1::SandboxSpec& s) { s.add_connectable_sockets(PathOf(kMaxPathBytes + 1)); },
       "connectableSockets[0]"},
  };
  for (const SpecCase& c : cases) {
    v1::SandboxSpec spec = GoodSpec();
    c.mutate(spec);
    absl::Status s = CheckSpecLimits(spec);
    if (std::string(c.field).empty()) {
      EXPECT_TRUE(s.ok()) << c.name << ": " << s;
    } else {
      ExpectRefused(s, absl::StatusCode::kInvalidArgument, c.field, c.name);
    }
  }
}

struct ExecCase {
  const char* name;
  std::function<void(v1::ExecRequest&)> mutate;
  const char* field;  // "" = accepted
};

TEST(CheckExecLimits, TableOfLimits) {
  const ExecCase cases[] = {
      {"good", [](v1::ExecRequest&) {}, ""},
      {"4096 argv entries",
       [](v1::ExecRequest& e) {
         while (e.argv_size() < kMaxArgvEntries) e.add_argv("x");
       },
       ""},
      {"4097 argv entries",
       [](v1::ExecRequest& e) {
         while (e.argv_size() <= kMaxArgvEntries) e.add_argv("x");
       },
       "argv:"},
      {"100000 argv entries",
       [](v1::ExecRequest& e) {
         for (int i = 0; i < 100000; ++i) e.add_argv("x");
       },
       "argv:"},
      {"argument at MAX_ARG_STRLEN",
       [](v1::ExecRequest& e) { e.add_argv(std::string(kMaxArgBytes, 'a')); }, ""},
      {"argument over MAX_ARG_STRLEN",
       [](v1::ExecRequest& e) { e.add_argv(std::string(kMaxArgBytes + 1, 'a')); }, "argv[3]"},
      {"command name over PATH_MAX",
       [](v1::ExecRequest& e) { e.set_argv(0, std::string(kMaxPathBytes + 1, 'a')); }, "argv[0]"},
      {"NUL in argv", [](v1::ExecRequest& e) { e.set_argv(2, std::string("tr\0ue", 5)); },
       "argv[2]"},
      {"invalid UTF-8 argv", [](v1::ExecRequest& e) { e.add_argv("\xed\xa0\x80"); }, "argv[3]"},
      {"argv + env over 1 MiB",
       [](v1::ExecRequest& e) {
         for (int i = 0; i < 9; ++i) e.add_argv(std::string(120000, 'a'));
       },
       "argv:"},
      {"env entries",
       [](v1::ExecRequest& e) {
         for (int i = 0; i <= kMaxEnvEntries; ++i) (*e.mutable_env())["V" + std::to_string(i)];
       },
       "env:"},
      {"empty env name", [](v1::ExecRequest& e) { (*e.mutable_env())[""] = "x"; }, "env[''"},
      {"= in env name", [](v1::ExecRequest& e) { (*e.mutable_env())["A=B"] = "x"; }, "env['A=B']"},
      {"NUL in env name",
       [](v1::ExecRequest& e) { (*e.mutable_env())[std::string("A\0B", 3)] = "x"; },
       "env['A\\x00B']"},
      {"NUL in env value",
       [](v1::ExecRequest& e) { (*e.mutable_env())["A"] = std::string("x\0y", 3); }, "env['A']"},
      {"env entry over MAX_ARG_STRLEN",
       [](v1::ExecRequest& e) { (*e.mutable_env())["BIG"] = std::string(kMaxArgBytes, 'v'); },
       "env['BIG']"},
      {"huge env name",
       [](v1::ExecRequest& e) { (*e.mutable_env())[std::string(1 << 20, 'N')] = "v"; }, "env['"},
      {"stdin at the limit",
       [](v1::ExecRequest& e) { e.set_stdin(std::string(kMaxStdinBytes, 's')); }, ""},
      {"stdin over the limit",
       [](v1::ExecRequest& e) { e.set_stdin(std::string(kMaxStdinBytes + 1, 's')); }, "stdin"},
      {"timeout at the limit", [](v1::ExecRequest& e) { e.set_timeout_ms(kMaxTimeoutMs); }, ""},
      {"timeout over the limit", [](v1::ExecRequest& e) { e.set_timeout_ms(kMaxTimeoutMs + 1); },
       "timeoutMs"},
      {"timeout that overflows", [](v1::ExecRequest& e) { e.set_timeout_ms(~uint64_t{0}); },
       "timeoutMs"},
      {"long session id", [](v1::ExecRequest& e) { e.set_session_id(std::string(10 << 20, 's')); },
       "sessionId"},
      {"workdir", [](v1::ExecRequest& e) { e.set_guest_workdir(PathOf(kMaxPathBytes + 1)); },
       "guestWorkdir"},
  };
  for (const ExecCase& c : cases) {
    v1::ExecRequest exec = GoodExec();
    c.mutate(exec);
    absl::Status s = CheckExecLimits(exec);
    if (std::string(c.field).empty()) {
      EXPECT_TRUE(s.ok()) << c.name << ": " << s;
    } else {
      ExpectRefused(s, absl::StatusCode::kInvalidArgument, c.field, c.name);
    }
  }
}

struct PlanCase {
  const char* name;
  std::function<void(v1::LaunchPlan&)> mutate;
  absl::StatusCode code;
  const char* field;
};

TEST(CheckPlanLimits, TableOfLimits) {
  const PlanCase cases[] = {
      {"good", [](v1::LaunchPlan&) {}, absl::StatusCode::kOk, ""},
      {"mounts",
       [](v1::LaunchPlan& p) {
         while (p.mounts_size() <= kMaxBindMounts + kMaxRunnerStateDirs)
           *p.add_mounts() = p.mounts(0);
       },
       absl::StatusCode::kInvalidArgument, "mounts:"},
      {"mount path", [](v1::LaunchPlan& p) { p.mutable_mounts(0)->set_guest_path(PathOf(5000)); },
       absl::StatusCode::kInvalidArgument, "mounts[0].guestPath"},
      {"argv", [](v1::LaunchPlan& p) { p.add_argv(std::string("\0", 1)); },
       absl::StatusCode::kInvalidArgument, "argv[1]"},
      {"env", [](v1::LaunchPlan& p) { (*p.mutable_env())["X"] = std::string("\0", 1); },
       absl::StatusCode::kInvalidArgument, "env['X']"},
      {"stdin", [](v1::LaunchPlan& p) { p.set_stdin(std::string(kMaxStdinBytes + 1, 's')); },
       absl::StatusCode::kInvalidArgument, "stdin"},
      {"workdir", [](v1::LaunchPlan& p) { p.set_workdir(std::string("/w\0", 3)); },
       absl::StatusCode::kInvalidArgument, "workdir"},
      {"egress socket",
       [](v1::LaunchPlan& p) { p.mutable_egress()->set_socks_socket(PathOf(kMaxPathBytes + 1)); },
       absl::StatusCode::kInvalidArgument, "egress.socksSocket"},
      // Deny paths are the host's file names: not the caller's mistake.
      {"deny path not UTF-8",
       [](v1::LaunchPlan& p) { p.add_deny_write_paths("/work/tree/\xff.pem"); },
       absl::StatusCode::kFailedPrecondition, "denyWritePaths[1]"},
      {"deny path too long", [](v1::LaunchPlan& p) { p.add_deny_read_paths(PathOf(8000)); },
       absl::StatusCode::kFailedPrecondition, "denyReadPaths[0]"},
      {"guard patterns",
       [](v1::LaunchPlan& p) {
         for (int i = 0; i <= 2 * kMaxWriteDenyPatterns; ++i) {
           p.mutable_create_guard()->add_deny_patterns("*.x");
         }
       },
       absl::StatusCode::kInvalidArgument, "createGuard.denyPatterns:"},
      {"trusted-name rules",
       [](v1::LaunchPlan& p) {
         for (int i = 0; i <= kMaxDenyWriteNames; ++i) {
           p.mutable_create_guard()->add_trusted_names("tools/*.sh");
         }
       },
       absl::StatusCode::kInvalidArgument, "createGuard.trustedNames:"},
      {"run id", [](v1::LaunchPlan& p) { p.set_run_id(std::string(1000, 'r')); },
       absl::StatusCode::kInvalidArgument, "runId"},
      {"plan bigger than a message",
       [](v1::LaunchPlan& p) {
         for (int i = 0; i < 5000; ++i) p.add_deny_read_paths(PathOf(kMaxPathBytes));
       },
       absl::StatusCode::kInvalidArgument, "LaunchPlan"},
  };
  for (const PlanCase& c : cases) {
    v1::LaunchPlan plan = GoodPlan();
    c.mutate(plan);
    absl::Status s = CheckPlanLimits(plan);
    if (c.code == absl::StatusCode::kOk) {
      EXPECT_TRUE(s.ok()) << c.name << ": " << s;
    } else {
      ExpectRefused(s, c.code, c.field, c.name);
    }
  }
}

TEST(CheckHostPaths, SaysWhatToDoAboutABadFileName) {
  absl::Status s = CheckHostPaths("denyWritePaths", {"/ok", "/w/\xff.pem"});
  ExpectRefused(s, absl::StatusCode::kFailedPrecondition, "denyWritePaths[1]", "bad name");
  EXPECT_NE(s.message().find("'/w/\\xff.pem'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("rename it"), std::string::npos) << s;
  EXPECT_TRUE(CheckHostPaths("denyReadPaths", {"/home/u/.ssh", "/w/é.key"}).ok());
}

TEST(CheckBwrapArgv, CountsArgumentsAfterTheProgramName) {
  std::vector<std::string> argv(kBwrapMaxArgs + 1, "x");  // bwrap + 9000
  EXPECT_TRUE(CheckBwrapArgv(argv, {"PATH=/bin"}, 2 << 20).ok());
  argv.push_back("x");
  absl::Status s = CheckBwrapArgv(argv, {"PATH=/bin"}, 2 << 20);
  ExpectRefused(s, absl::StatusCode::kInvalidArgument, "bindMounts, deny paths and argv", "9001");
  EXPECT_NE(s.message().find("9001 bwrap arguments"), std::string::npos) << s;
}

TEST(CheckBwrapArgv, KeepsTheCommandLineWithinArgMax) {
  const std::vector<std::string> argv = {"bwrap", std::string(100000, 'a'),
                                         std::string(100000, 'b')};
  EXPECT_TRUE(CheckBwrapArgv(argv, {"A=1"}, 2 << 20).ok());
  ExpectRefused(CheckBwrapArgv(argv, {"A=1"}, 150000), absl::StatusCode::kInvalidArgument,
                "bindMounts, deny paths, argv and env", "arg max");
  ExpectRefused(CheckBwrapArgv({"bwrap", std::string(kMaxArgBytes + 1, 'a')}, {}, 8 << 20),
                absl::StatusCode::kInvalidArgument, "bwrap argument 1", "one argument");
}

struct QuoteCase {
  std::string input;
  std::string quoted;
};

TEST(QuoteInput, BoundsAndEscapes) {
  const QuoteCase cases[] = {
      {"abc", "'abc'"},
      {"", "''"},
      {"tab\there", "'tab\\x09here'"},
      {"\xff", "'\\xff'"},
      {"é", "'é'"},
      {std::string(kMaxQuotedBytes, 'a'), "'" + std::string(kMaxQuotedBytes, 'a') + "'"},
      {std::string(kMaxQuotedBytes + 1, 'a'), "'" + std::string(kMaxQuotedBytes, 'a') + "…'"},
      // Never cut inside a character: 199 bytes of 'a' then a 2-byte character does not fit.
      {std::string(kMaxQuotedBytes - 1, 'a') + "é",
       "'" + std::string(kMaxQuotedBytes - 1, 'a') + "…'"},
  };
  for (const QuoteCase& c : cases) {
    EXPECT_EQ(QuoteInput(c.input), c.quoted);
    EXPECT_EQ(CutInput(c.input), c.quoted.substr(1, c.quoted.size() - 2));
  }
  EXPECT_LE(QuoteInput(std::string(10 << 20, '\xff')).size(), kMaxQuotedBytes + 6);
}

}  // namespace
}  // namespace ccsandbox::policy
