// Who may reach the daemons, in the production shape (the broker as the unprivileged test user,
// the launcher allowing only that uid): both sockets have the modes and owners docs/service.md
// and docs/flags.md give (0660; the launcher's root:<broker's group>, the broker's its own user's),
// the broker's runtime directory is 0700 and its own, a uid outside the broker's group cannot
// even connect to either socket, and root — not in --allowed-uids — gets PERMISSION_DENIED from
// the launcher. (Another uid refused by the launcher with its socket opened up by mistake is
// e2e_grpc_test's TheLauncherRefusesAPeerWithAnotherUid.)
#include <sys/stat.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {
namespace {

// Calls `method` on `address` with an empty request; prints "OK" or the status code's name.
std::string Call(const std::string& address, const std::string& method,
                 std::optional<launcher::Identity> as = std::nullopt) {
  const std::string script =
      "import grpc, sys\n"
      "try:\n"
      "    grpc.insecure_channel(sys.argv[1]).unary_unary(sys.argv[2])(b'', timeout=10)\n"
      "    print('OK')\n"
      "except grpc.RpcError as e:\n"
      "    print(e.code().name, e.details())\n";
  ProgramResult r = RunProgram({"/usr/bin/python3", "-c", script, address, method}, as, "", "/");
  return r.exit_code == 0 ? r.out.substr(0, r.out.find('\n')) : "error: " + r.err;
}

TEST(SocketPermissions, ModesOwnersAndWhoIsRefusedAreWhatTheDocsSay) {
  auto started = Daemons::Start({.unprivileged_broker = true});
  ASSERT_TRUE(started.ok()) << started.status();
  Daemons& d = **started;
  absl::StatusOr<launcher::Identity> user = UnprivilegedTestUser();
  ASSERT_TRUE(user.ok()) << user.status();

  struct stat st;
  ASSERT_EQ(lstat(d.launcher_socket().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_gid, user->gid);
  const std::string broker_socket = d.broker_address().substr(sizeof("unix:") - 1);
  ASSERT_EQ(lstat(broker_socket.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_EQ(st.st_uid, user->uid);
  EXPECT_EQ(st.st_gid, user->gid);
  ASSERT_EQ(lstat(d.runtime_dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, user->uid);

  // The broker's user is served by both.
  EXPECT_EQ(Call("unix:" + d.launcher_socket(), "/ccsandbox.v1.SandboxLauncher/Probe", *user),
            "OK");
  EXPECT_EQ(Call(d.broker_address(), "/ccsandbox.v1.SandboxBroker/Probe", *user), "OK");
  // Root is not in --allowed-uids: the launcher refuses it, whatever the file mode lets through.
  const std::string root =
      Call("unix:" + d.launcher_socket(), "/ccsandbox.v1.SandboxLauncher/Probe");
  EXPECT_TRUE(absl::StartsWith(root, "PERMISSION_DENIED")) << root;
  EXPECT_TRUE(absl::StrContains(d.LauncherLog(), "refused connection from uid 0 "))
      << d.LauncherLog();
  // A uid outside the broker's group cannot connect to either socket at all.
  const launcher::Identity nobody{65534, 65534, {}};
  for (const std::string& address : {"unix:" + d.launcher_socket(), d.broker_address()}) {
    const std::string other = Call(address, "/grpc.health.v1.Health/Check", nobody);
    EXPECT_TRUE(absl::StartsWith(other, "UNAVAILABLE")) << address << ": " << other;
  }
}

}  // namespace
}  // namespace ccsandbox::testing
