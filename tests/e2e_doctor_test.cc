// sandboxctl doctor against the real broker and launcher: on this host every required check
// passes and the live self-test shows its three denials; --json parses; without a broker, or
// with a launcher that refuses the broker, it exits 1 naming what is wrong.
#include <stdlib.h>

#include <algorithm>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {
namespace {

// The self-test's work tree, as its line names it ("" when none is named).
std::string SelfTestWorkdir(const std::string& out) {
  const std::string kRan = "ok    self-test: ran a native session in ";
  const size_t at = out.find(kRan);
  if (at == std::string::npos) return "";
  const size_t begin = at + kRan.size();
  return out.substr(begin, out.find('\n', begin) - begin);
}

// With the broker as root and as the unprivileged test user (the production shape: the
// sandboxed command runs as the broker's uid, so the self-test's tree must be theirs).
class DoctorOnThisHost : public ::testing::TestWithParam<bool> {};

TEST_P(DoctorOnThisHost, EveryRequiredCheckPassesAndTheSelfTestShowsThreeDenials) {
  auto d = MustStart({.unprivileged_broker = GetParam()});
  ASSERT_NE(d, nullptr);
  ProgramResult r = d->Sandboxctl({"doctor"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << d->BrokerLog();
  EXPECT_FALSE(absl::StrContains(r.out, "FAIL")) << r.out;
  for (const std::string& line :
       {absl::StrCat("ok    broker: answered at ", d->broker_address(), "\n"),
        std::string("ok    probe: agent sandbox ON (bubblewrap"), std::string("ok    bwrap: /"),
        std::string("ok    socat: /"), std::string("ok    user namespaces: "),
        std::string("ok    landlock: ABI "), std::string("ok    seccomp user notification: "),
        absl::StrCat("ok    launcher: answered at unix:", d->launcher_socket(),
                     " (peer check passed)\n"),
        std::string("ok    filename-pattern enforcement: "), std::string("  cgroups: host "),
        std::string("  microvm: "), std::string("ok    sessions: 0 open\n")}) {
    EXPECT_TRUE(absl::StrContains(r.out, line)) << line << "\n" << r.out;
  }
  const std::string work = SelfTestWorkdir(r.out);
  ASSERT_FALSE(work.empty()) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("ok    self-test: denied write: violation "
                                                    "file-write* ",
                                                    work, "/protected.txt")))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("ok    self-test: denied .env create: "
                                                    "violation file-write-create ",
                                                    work, "/.env")))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out,
                                "ok    self-test: denied connection: violation network-outbound "
                                "doctor-self-test.invalid:443\n"))
      << r.out;
  // Nothing stays: the tree is removed and the session destroyed.
  EXPECT_FALSE(PathExists(work)) << work;
  EXPECT_EQ(d->Sandboxctl({"session", "ls"}).out, "");
}

INSTANTIATE_TEST_SUITE_P(Brokers, DoctorOnThisHost, ::testing::Bool(), BrokerIdentityName);

TEST(Doctor, JsonIsOneObjectWithEveryCheck) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  ProgramResult r = d->Sandboxctl({"doctor", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  google::protobuf::Struct doc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &doc).ok()) << r.out;
  EXPECT_TRUE(doc.fields().at("ok").bool_value());
  std::vector<std::string> names;
  for (const google::protobuf::Value& check : doc.fields().at("checks").list_value().values()) {
    const auto& fields = check.struct_value().fields();
    names.push_back(fields.at("name").string_value());
    const std::string status = fields.at("status").string_value();
    EXPECT_TRUE(status == "ok" || status == "warn") << names.back() << ": " << status;
    EXPECT_FALSE(fields.at("detail").string_value().empty()) << names.back();
    EXPECT_EQ(fields.count("fix"), 1u) << names.back();
  }
  for (const char* name : {"broker", "probe", "bwrap", "socat", "user namespaces", "landlock",
                           "seccomp user notification", "launcher", "filename-pattern enforcement",
                           "cgroups", "microvm", "sessions", "self-test: denied write",
                           "self-test: denied .env create", "self-test: denied connection"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST(Doctor, ListsTheBrokersSessionsAndLeavesThemAlone) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  const std::string work = d->MakeWorkdir();
  ProgramResult started = d->Sandboxctl({"session", "start", "--workdir=" + work});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const std::string id(absl::StripSuffix(started.out, "\n"));
  ProgramResult r = d->Sandboxctl({"doctor"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(absl::StrContains(
      r.out, absl::StrCat("ok    sessions: 1 open: ", id, " (native, warm, egress proxies on, ")))
      << r.out;
  // Still there, still warm: the self-test ran in a session of its own.
  EXPECT_TRUE(absl::StrContains(d->Sandboxctl({"session", "show", id}).out, "warm"));
}

TEST(Doctor, WithoutABrokerItChecksTheHostAndFailsNamingTheSocket) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  d->StopBroker();
  ProgramResult r = d->Sandboxctl({"doctor"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(
      r.out, absl::StrCat("FAIL  broker: no broker at ", d->broker_address(), " (socket missing)")))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "ok    bwrap: /")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "FAIL  self-test: not run")) << r.out;
  ProgramResult json = d->Sandboxctl({"doctor", "--json"});
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_TRUE(absl::StartsWith(json.out, R"({"ok":false,"checks":[{"name":"broker","status":)"
                                         R"("fail","detail":"no broker at )"))
      << json.out;
}

TEST(Doctor, ALauncherThatRefusesTheBrokerFailsThePeerCheckLine) {
  // The launcher allows another uid only: its peer check refuses the broker.
  auto d = MustStart({.allowed_uids = "54321"});
  ASSERT_NE(d, nullptr);
  ProgramResult r = d->Sandboxctl({"doctor"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "FAIL  launcher: ")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "--allowed-uids")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "FAIL  self-test: a native session could not run")) << r.out;
}

TEST(Doctor, WithoutANativeBackendTheSelfTestFailsWithTheProbesHint) {
  // A broker that finds neither bwrap nor socat on its PATH (this host has both: the doctor's
  // own lines still say so).
  char dir[] = "/tmp/ccs-doctor.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string socket = absl::StrCat(dir, "/broker.sock");
  const std::string path = getenv("PATH");
  setenv("PATH", "/nonexistent", 1);
  const pid_t broker = SpawnDaemon({Runfile("broker/sandbox_brokerd"), "--listen=unix:" + socket,
                                    absl::StrCat("--launcher=unix:", dir, "/launcher.sock"),
                                    absl::StrCat("--runtime-dir=", dir, ".run")},
                                   {}, absl::StrCat(dir, "/broker.log"));
  setenv("PATH", path.c_str(), 1);
  ASSERT_GT(broker, 0);
  absl::Cleanup stop = [broker, &dir] {
    StopDaemon(broker);
    RunProgram({"rm", "-rf", dir, absl::StrCat(dir, ".run")});
  };
  ASSERT_TRUE(WaitUntilListening(socket, broker, "broker").ok());

  ProgramResult r = RunProgram({Runfile("broker/sandboxctl"), "--broker=unix:" + socket, "doctor"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(
      absl::StrContains(r.out,
                        "FAIL  probe: no OS-native agent sandbox on this host (install: "
                        "sudo apt-get install bubblewrap socat): Linux host missing "
                        "bubblewrap and socat; fix: sudo apt-get install bubblewrap socat\n"))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "FAIL  self-test: a native session could not run: Launch: "))
      << r.out;
  const size_t self_test = r.out.find("FAIL  self-test: ");
  ASSERT_NE(self_test, std::string::npos) << r.out;
  EXPECT_TRUE(
      absl::StrContains(r.out.substr(self_test), "; fix: sudo apt-get install bubblewrap socat\n"))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "ok    bwrap: /")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "warn  launcher: not asked")) << r.out;
}

}  // namespace
}  // namespace ccsandbox::testing
