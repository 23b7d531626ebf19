// sandboxctl plan against the real broker and launcher: what a spec becomes, with nothing run.
#include <sys/stat.h>

#include <fstream>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "policy/seatbelt/sexpr_reader.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {
namespace {

std::unique_ptr<Daemons> MustStart() {
  auto daemons = Daemons::Start({});
  EXPECT_TRUE(daemons.ok()) << daemons.status();
  return daemons.ok() ? std::move(*daemons) : nullptr;
}

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(SandboxctlPlan, ShowsTheArgvAndDenySetsAndRunsNothing) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  const std::string work = d->MakeWorkdir();
  const std::string hooks = work + "/.git/hooks", kept = work + "/kept";
  ASSERT_EQ(mkdir((work + "/.git").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(hooks.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(kept.c_str(), 0755), 0);
  WriteFile(work + "/.env", "TOKEN=x\n");
  const std::string spec = work + "/spec.json";
  WriteFile(spec, absl::StrCat(R"({"sessionId": "plan-e2e", "bindMounts": [{"hostPath": ")", work,
                               R"("}], "protectedPaths": [")", kept,
                               R"("], "egressAllowlist": ["example.com:8443"]})"));

  ProgramResult plan = d->Sandboxctl(
      {"plan", "--spec=" + spec, "--platform=linux", "--", "touch", work + "/ran"}, work);
  ASSERT_EQ(plan.exit_code, 0) << plan.err << d->BrokerLog();
  // The protected path read-only over the writable bind, the hooks too, the .env listed.
  EXPECT_TRUE(absl::StrContains(plan.out, absl::StrCat("--bind\n  ", work, "\n  ", work, "\n")))
      << plan.out;
  EXPECT_TRUE(absl::StrContains(plan.out, absl::StrCat("--ro-bind\n  ", kept, "\n  ", kept, "\n")))
      << plan.out;
  EXPECT_TRUE(absl::StrContains(plan.out, absl::StrCat("--ro-bind\n  ", hooks, "\n  ", hooks)))
      << plan.out;
  EXPECT_TRUE(absl::StrContains(plan.out, "  " + work + "/.env\n")) << plan.out;
  EXPECT_TRUE(absl::StrContains(plan.out, "egress allowlist (as parsed):\n")) << plan.out;
  EXPECT_TRUE(absl::StrContains(plan.out, "  example.com:8443\n")) << plan.out;
  EXPECT_TRUE(absl::StrContains(plan.out, "what the launcher would render")) << plan.out;
  EXPECT_TRUE(absl::StrContains(plan.out, "  touch\n  " + work + "/ran\n")) << plan.out;

  ProgramResult json = d->Sandboxctl({"plan", "--spec=" + spec, "--json"}, work);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(absl::StartsWith(json.out, "{")) << json.out;
  EXPECT_TRUE(absl::StrContains(json.out, R"("bwrapArgv":[")")) << json.out;
  EXPECT_TRUE(absl::StrContains(json.out, R"("\u003cCOMMAND\u003e"])")) << json.out;

  // Nothing ran, nothing stayed: no file, no session.
  EXPECT_NE(access((work + "/ran").c_str(), F_OK), 0);
  ProgramResult sessions = d->Sandboxctl({"session", "ls"}, work);
  EXPECT_EQ(sessions.exit_code, 0) << sessions.err;
  EXPECT_FALSE(absl::StrContains(sessions.out, "plan-e2e")) << sessions.out;
  EXPECT_FALSE(absl::StrContains(d->BrokerLog(), "plan-e2e launched")) << d->BrokerLog();
}

TEST(SandboxctlPlan, RefusesWhatLaunchRefusesAndAnUnknownPlatform) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  const std::string work = d->MakeWorkdir();
  const std::string spec = work + "/spec.json";
  WriteFile(spec, R"({"mode": "bogus", "bindMounts": [{"hostPath": "/tmp"}]})");
  ProgramResult bad = d->Sandboxctl({"plan", "--spec=" + spec}, work);
  EXPECT_EQ(bad.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(bad.err, "sandboxctl: plan: mode")) << bad.err;

  ProgramResult bad_mac = d->Sandboxctl({"plan", "--spec=" + spec, "--platform=macos"}, work);
  EXPECT_EQ(bad_mac.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(bad_mac.err, "sandboxctl: plan: mode")) << bad_mac.err;

  WriteFile(spec, absl::StrCat(R"({"bindMounts": [{"hostPath": ")", work, R"("}]})"));
  ProgramResult beos = d->Sandboxctl({"plan", "--spec=" + spec, "--platform=beos", "--json"});
  EXPECT_EQ(beos.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(beos.err, R"({"error":{"code":"usage")")) << beos.err;
  EXPECT_TRUE(absl::StrContains(beos.err, "is not a platform")) << beos.err;
  EXPECT_TRUE(beos.out.empty()) << beos.out;
}

// --platform=macos: the Seatbelt profile the spec becomes, printed whole, on a Linux host.
TEST(SandboxctlPlan, MacosPrintsTheSeatbeltProfile) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  const std::string work = d->MakeWorkdir();
  const std::string kept = work + "/kept \"(x)\"";
  ASSERT_EQ(mkdir(kept.c_str(), 0755), 0);
  const std::string spec = work + "/spec.json";
  WriteFile(spec,
            absl::StrCat(R"({"sessionId": "mac-plan", "bindMounts": [{"hostPath": ")", work,
                         R"("}], "protectedPaths": [")", absl::CEscape(kept),
                         R"("], "execGrantRoots": ["/tmp/approved"], "networkEnabled": false})"));

  ProgramResult plan = d->Sandboxctl({"plan", "--spec=" + spec, "--platform=macos"}, work);
  ASSERT_EQ(plan.exit_code, 0) << plan.err << d->BrokerLog();
  const std::string heading = "seatbelt profile (sandbox-exec -p):\n";
  const size_t start = plan.out.find(heading), end = plan.out.find("notes:\n");
  ASSERT_NE(start, std::string::npos) << plan.out;
  ASSERT_NE(end, std::string::npos) << plan.out;
  const std::string profile = plan.out.substr(start + heading.size(), end - start - heading.size());
  EXPECT_TRUE(absl::StartsWith(profile, "(version 1)\n")) << profile;
  EXPECT_TRUE(absl::StrContains(plan.out, "platform: macos\n")) << plan.out;
  EXPECT_TRUE(absl::StrContains(plan.out, "network: disabled\n")) << plan.out;
  EXPECT_TRUE(absl::StrContains(plan.out, "NOT yet run on a Mac")) << plan.out;
  // The writable bind, the protected path escaped over it, the grant, the proxies.
  const std::string allow = "(allow file-write* (subpath \"" + work + "\"))";
  const std::string deny = "(deny file-write* (subpath \"" + work + "/kept \\\"(x)\\\"\"))";
  EXPECT_TRUE(absl::StrContains(profile, allow)) << allow << "\n" << profile;
  EXPECT_TRUE(absl::StrContains(profile, deny)) << deny << "\n" << profile;
  EXPECT_TRUE(
      absl::StrContains(profile, R"((allow process-exec (subpath "/private/tmp/approved")))"))
      << profile;
  EXPECT_TRUE(absl::StrContains(profile, R"((deny network-outbound))")) << profile;
  absl::StatusOr<std::vector<policy::seatbelt::Sexpr>> forms =
      policy::seatbelt::ReadSexprs(profile);
  ASSERT_TRUE(forms.ok()) << forms.status() << profile;
  EXPECT_EQ((*forms)[0].Shape(), "(version 1)");
  EXPECT_EQ((*forms)[1].Shape(), "(allow default)");

  ProgramResult json = d->Sandboxctl({"plan", "--spec=" + spec, "--platform=macos", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(absl::StrContains(json.out, R"("seatbeltProfile":"(version 1)\n)")) << json.out;
  EXPECT_TRUE(absl::StrContains(json.out, R"("bwrapArgv":[])")) << json.out;
  EXPECT_FALSE(absl::StrContains(d->BrokerLog(), "mac-plan launched")) << d->BrokerLog();
}

}  // namespace
}  // namespace ccsandbox::testing
