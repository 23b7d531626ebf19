// The systemd units as shipped (packaging/systemd): `systemd-analyze verify` accepts them with
// nothing to say, and both daemons started with the units' ExecStart lines AS WRITTEN — only
// the install prefix, /run and the user names mapped onto this test's — run a sandboxed command:
// the launcher as root, allowing the broker's user BY NAME on a 0660 socket of its group, the
// broker as that unprivileged user. A bad --socket-mode is refused.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/daemon_fixture.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::testing {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The value of `key=` in the unit text.
std::string UnitValue(const std::string& unit, const std::string& key) {
  for (absl::string_view line : absl::StrSplit(unit, '\n')) {
    if (absl::ConsumePrefix(&line, key + "=")) return std::string(line);
  }
  return "";
}

class ServiceUnitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) CCSANDBOX_SKIP_OR_FAIL_IN_CI("needs root");
    absl::StatusOr<launcher::Identity> user = UnprivilegedTestUser();
    ASSERT_TRUE(user.ok()) << user.status();
    user_ = *user;
    char tmpl[] = "/tmp/ccs-units.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    chmod(root_.c_str(), 0755);
    // The install layout: root-owned binaries in libexec (the unprivileged broker must be able
    // to execute its own; the build tree under /root is not readable to it).
    libexec_ = root_ + "/libexec";
    ASSERT_EQ(mkdir(libexec_.c_str(), 0755), 0);
    for (const char* binary : {"launcher/sandbox_launcherd", "launcher/sandbox_shim",
                               "broker/sandbox_brokerd", "broker/sandboxctl"}) {
      ASSERT_EQ(RunProgram({"install", "-m", "0755", Runfile(binary), libexec_ + "/"}).exit_code,
                0);
    }
    // RuntimeDirectory= of each unit: /run/ccsandbox (root, 0755), /run/ccsandbox-broker (the
    // broker's user, 0750).
    ASSERT_EQ(mkdir((root_ + "/run").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((root_ + "/run/ccsandbox").c_str(), 0755), 0);
    const std::string broker_run = root_ + "/run/ccsandbox-broker";
    ASSERT_EQ(mkdir(broker_run.c_str(), 0750), 0);
    ASSERT_EQ(chown(broker_run.c_str(), user_.uid, user_.gid), 0);
  }

  void TearDown() override {
    if (broker_ > 0) StopDaemon(broker_);
    if (launcher_ > 0) StopDaemon(launcher_);
    if (!root_.empty()) RunProgram({"rm", "-rf", root_});
  }

  // The unit's text with this test's prefix, /run and users in place of the installed ones.
  std::string Mapped(const std::string& unit_name) {
    const std::string unit = Slurp(Runfile("packaging/systemd/" + unit_name));
    EXPECT_FALSE(unit.empty()) << unit_name;
    return absl::StrReplaceAll(
        unit, {{"/usr/local/libexec/ccsandbox/", libexec_ + "/"},
               {"/run/", root_ + "/run/"},
               {"--socket-group=ccsandbox", absl::StrCat("--socket-group=", user_.gid)},
               {"--allowed-uids=ccsandbox", "--allowed-uids=ccsandbox-test"},
               {"User=ccsandbox", "User=ccsandbox-test"},
               {"Group=ccsandbox", "Group=ccsandbox-test"},
               {" $LAUNCHER_FLAGS", ""},
               {" $BROKER_FLAGS", ""}});
  }

  std::vector<std::string> ExecStart(const std::string& unit) {
    std::vector<std::string> argv = absl::StrSplit(UnitValue(unit, "ExecStart"), ' ');
    EXPECT_GE(argv.size(), 2u);
    return argv;
  }

  launcher::Identity user_;
  std::string root_, libexec_;
  pid_t launcher_ = -1, broker_ = -1;
};

TEST_F(ServiceUnitsTest, SystemdAnalyzeVerifyHasNothingToSay) {
  for (const char* name : {"ccsandbox-launcher.service", "ccsandbox-broker.service"}) {
    const std::string path = root_ + "/" + name;
    std::ofstream(path) << Mapped(name);
    ProgramResult r = RunProgram({"systemd-analyze", "verify", "--man=no", path});
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.out << r.err;
    EXPECT_EQ(r.out + r.err, "") << name;
  }
}

TEST_F(ServiceUnitsTest, DaemonsStartedAsTheUnitsSayRunASandboxedCommand) {
  const std::string launcher_unit = Mapped("ccsandbox-launcher.service");
  const std::string broker_unit = Mapped("ccsandbox-broker.service");
  EXPECT_EQ(UnitValue(broker_unit, "User"), "ccsandbox-test");
  launcher_ = SpawnDaemon(ExecStart(launcher_unit), {}, root_ + "/launcher.log");
  const std::string launcher_socket = root_ + "/run/ccsandbox/launcher.sock";
  ASSERT_TRUE(WaitUntilListening(launcher_socket, launcher_, "launcher").ok())
      << Slurp(root_ + "/launcher.log");
  struct stat st;
  ASSERT_EQ(stat(launcher_socket.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(st.st_gid, user_.gid);
  // User= and Group= of the unit, as systemd would apply them.
  std::vector<std::string> broker_argv = {"/usr/bin/setpriv", absl::StrCat("--reuid=", user_.uid),
                                          absl::StrCat("--regid=", user_.gid), "--clear-groups",
                                          "--"};
  for (const std::string& arg : ExecStart(broker_unit)) broker_argv.push_back(arg);
  broker_ = SpawnDaemon(broker_argv, {}, root_ + "/broker.log");
  const std::string broker_socket = root_ + "/run/ccsandbox-broker/broker.sock";
  ASSERT_TRUE(WaitUntilListening(broker_socket, broker_, "broker").ok())
      << Slurp(root_ + "/broker.log") << Slurp(root_ + "/launcher.log");
  const std::string work = root_ + "/work";
  ASSERT_EQ(mkdir(work.c_str(), 0755), 0);
  ASSERT_EQ(chown(work.c_str(), user_.uid, user_.gid), 0);
  // A bare socket path is accepted by sandboxctl.
  ProgramResult run = RunProgram({libexec_ + "/sandboxctl", "--broker=" + broker_socket, "run",
                                  "--workdir=" + work, "--", "sh", "-c", "echo hello; id -u"});
  EXPECT_EQ(run.exit_code, 0) << run.err << Slurp(root_ + "/broker.log");
  EXPECT_EQ(run.out, absl::StrCat("hello\n", user_.uid, "\n")) << run.err;
}

TEST_F(ServiceUnitsTest, ASocketModeOpenToOthersIsRefused) {
  std::vector<std::string> argv = ExecStart(Mapped("ccsandbox-launcher.service"));
  for (std::string& arg : argv) {
    if (absl::StartsWith(arg, "--socket-mode=")) arg = "--socket-mode=0666";
  }
  ProgramResult r = RunProgram(argv);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out + r.err, "--socket-mode")) << r.out << r.err;
}

}  // namespace
}  // namespace ccsandbox::testing
