// The macOS launch as data: a run's exec and profile against testdata/*.golden (reviewed by eye
// once), the ports of the profile and of the proxy variables being the same ones, and every
// malformed input refused. Regenerate after a reviewed change with
//   CCSANDBOX_UPDATE_GOLDENS=$PWD/launcher/macos/testdata bazel run
//   //launcher/macos:seatbelt_exec_test
#include "launcher/macos/seatbelt_exec.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "policy/seatbelt/macos_spellings.h"

namespace ccsandbox::launcher::macos {
namespace {

v1::EgressPlan Egress() {
  v1::EgressPlan egress;
  egress.set_http_port(50001);
  egress.set_socks_port(50002);
  egress.set_http_proxy_url("http://ccsandbox:00112233445566778899aabbccddeeff@127.0.0.1:50001");
  egress.set_socks_proxy_url(
      "socks5h://ccsandbox:00112233445566778899aabbccddeeff@127.0.0.1:50002");
  return egress;
}

v1::SandboxSpec ChatSpec() {
  v1::SandboxSpec spec;
  spec.set_session_id("s1");
  spec.set_mode("chat");
  v1::SandboxBindMount* work = spec.add_bind_mounts();
  work->set_host_path("/Users/a/work");
  work->set_guest_path("/Users/a/work");
  spec.add_runner_state_dirs("/Users/a/.runner");
  spec.add_exec_grant_roots("/Users/a/work/node_modules/.bin");
  return spec;
}

SeatbeltRun ARun() {
  SeatbeltRun run;
  run.profile_path = "/var/run/ccsandbox/profiles/run-1.sb";
  // A command named like an option, and an argument with a space: both passed through as is.
  run.argv = {"-p", "(allow default)", "a b"};
  run.env = {{"PATH", "/usr/bin:/bin"},
             {"HOME", "/Users/a"},
             {"HTTP_PROXY", "http://attacker.example:8080"},  // replaced: the session's own only
             {"TMPDIR", "/private/var/folders/xy/T/run-1"}};
  run.workdir = "/Users/a/work";
  run.egress = Egress();
  return run;
}

std::string Golden(const std::string& name, const std::string& actual) {
  const std::string file = name + ".golden";
  if (const char* update = std::getenv("CCSANDBOX_UPDATE_GOLDENS"); update != nullptr) {
    std::ofstream(absl::StrCat(update, "/", file), std::ios::binary) << actual;
  }
  std::ifstream in(absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                                "/launcher/macos/testdata/", file),
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << "no golden " << file;
  std::stringstream golden;
  golden << in.rdbuf();
  return golden.str();
}

std::string Describe(const SeatbeltExec& exec) {
  return absl::StrCat("executable ", exec.executable, "\ncwd ", exec.cwd, "\n# argv\n",
                      absl::StrJoin(exec.argv, "\n"), "\n# envp\n", absl::StrJoin(exec.envp, "\n"),
                      "\n");
}

TEST(SeatbeltExec, ARunRendersItsGoldenExecAndProfile) {
  absl::StatusOr<SeatbeltExec> exec = RenderSeatbeltExec(ARun());
  ASSERT_TRUE(exec.ok()) << exec.status();
  const std::string described = Describe(*exec);
  EXPECT_EQ(Golden("chat_run_exec", described), described);

  absl::StatusOr<std::string> profile =
      RunDispatchProfile(ChatSpec(), {"/Users/a"}, {"/var/folders/xy/T/run-1"}, Egress(),
                         policy::seatbelt::MacosSpellings());
  ASSERT_TRUE(profile.ok()) << profile.status();
  EXPECT_EQ(Golden("chat_run_profile", *profile), *profile);
}

// Every loopback port the profile opens is one a proxy variable names, and the other way round.
TEST(SeatbeltExec, TheProfileOpensExactlyThePortsTheProxyVariablesName) {
  absl::StatusOr<SeatbeltExec> exec = RenderSeatbeltExec(ARun());
  absl::StatusOr<std::string> profile = RunDispatchProfile(
      ChatSpec(), {"/Users/a"}, {"/tmp/run-1"}, Egress(), policy::seatbelt::MacosSpellings());
  ASSERT_TRUE(exec.ok() && profile.ok());
  std::set<std::string> opened, named;
  const std::regex open_rule(R"re(\(allow network-outbound \(remote ip "localhost:(\d+)"\)\))re");
  for (std::sregex_iterator it(profile->begin(), profile->end(), open_rule), end; it != end; ++it) {
    opened.insert((*it)[1]);
  }
  const std::regex proxy_var(
      R"(^(HTTP_PROXY|HTTPS_PROXY|ALL_PROXY|http_proxy|https_proxy|all_proxy)=[a-z0-9]+://[^@]+@127\.0\.0\.1:(\d+)$)");
  int proxy_vars = 0;
  for (const std::string& entry : exec->envp) {
    std::smatch m;
    if (std::regex_match(entry, m, proxy_var)) {
      named.insert(m[2]);
      ++proxy_vars;
    }
  }
  EXPECT_EQ(proxy_vars, 6);
  EXPECT_EQ(opened, (std::set<std::string>{"50001", "50002"}));
  EXPECT_EQ(named, opened);
}

TEST(SeatbeltExec, TheTerminalHasNoProxyVariables) {
  SeatbeltRun run = ARun();
  run.egress.reset();
  run.env.erase("HTTP_PROXY");
  absl::StatusOr<SeatbeltExec> exec = RenderSeatbeltExec(run);
  ASSERT_TRUE(exec.ok()) << exec.status();
  for (const std::string& entry : exec->envp) {
    EXPECT_EQ(entry.find("PROXY"), std::string::npos) << entry;
  }
}

TEST(SeatbeltExec, MalformedRunsAreRefusedNamingTheField) {
  struct Case {
    std::string name;
    std::function<void(SeatbeltRun&)> mutate;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"no argv", [](SeatbeltRun& r) { r.argv.clear(); }, "argv"},
      {"empty command", [](SeatbeltRun& r) { r.argv = {""}; }, "argv"},
      {"NUL in an argument", [](SeatbeltRun& r) { r.argv.push_back(std::string("a\0b", 3)); },
       "argv[3]"},
      {"relative profile", [](SeatbeltRun& r) { r.profile_path = "run-1.sb"; }, "profilePath"},
      {"relative workdir", [](SeatbeltRun& r) { r.workdir = "work"; }, "workdir"},
      {"'=' in a name", [](SeatbeltRun& r) { r.env["A=B"] = "c"; }, "env"},
      {"empty name", [](SeatbeltRun& r) { r.env[""] = "c"; }, "env"},
      {"NUL in a value", [](SeatbeltRun& r) { r.env["A"] = std::string("x\0y", 3); }, "env"},
      {"Linux's Unix-socket egress",
       [](SeatbeltRun& r) { r.egress->set_http_socket("/run/x/http.sock"); }, "egress.httpSocket"},
      {"no SOCKS port", [](SeatbeltRun& r) { r.egress->set_socks_port(0); }, "egress.httpPort"},
      {"a port out of range", [](SeatbeltRun& r) { r.egress->set_http_port(70000); },
       "egress.httpPort"},
      {"a URL naming another port",
       [](SeatbeltRun& r) { r.egress->set_http_proxy_url("http://ccsandbox:x@127.0.0.1:50009"); },
       "egress.httpProxyUrl"},
      {"a URL naming another host",
       [](SeatbeltRun& r) {
         r.egress->set_socks_proxy_url("socks5h://ccsandbox:x@10.0.0.1:50002");
       },
       "egress.socksProxyUrl"},
  };
  for (const Case& c : cases) {
    SeatbeltRun run = ARun();
    c.mutate(run);
    absl::StatusOr<SeatbeltExec> exec = RenderSeatbeltExec(run);
    EXPECT_EQ(exec.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_EQ(exec.status().message().rfind(c.field, 0), 0u) << c.name << ": " << exec.status();
  }
}

TEST(SeatbeltExec, AProfileNeedsTheRealProxyPorts) {
  v1::EgressPlan none;
  absl::StatusOr<std::string> profile = RunDispatchProfile(
      ChatSpec(), {"/Users/a"}, {"/tmp/run-1"}, none, policy::seatbelt::MacosSpellings());
  EXPECT_EQ(profile.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ccsandbox::launcher::macos
