#include "launcher/peer_check.h"

#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "gtest/gtest.h"
#include "launcher/notify_channel.h"

namespace ccsandbox::launcher {
namespace {

TEST(StatusShowsNestedPidNamespace, Table) {
  struct Case {
    const char* status;
    bool nested;
  } cases[] = {
      {"Name:\tsh\nNSpid:\t4242\nNSpgid:\t4242\n", false},
      {"Name:\tsh\nNSpid:\t4242\t3\n", true},      // one level down: a sandbox
      {"Name:\tsh\nNSpid:\t4242\t7\t1\n", true},   // two levels
      {"Name:\tsh\nPid:\t4242\n", true},           // no NSpid line: fail closed
      {"", true},
  };
  for (const Case& c : cases) EXPECT_EQ(StatusShowsNestedPidNamespace(c.status), c.nested) << c.status;
}

TEST(CheckPeerOutsideSandboxes, OurselvesAndInvisiblePids) {
  EXPECT_TRUE(CheckPeerOutsideSandboxes(ucred{getpid(), getuid(), getgid()}).ok());
  EXPECT_EQ(CheckPeerOutsideSandboxes(ucred{0, 0, 0}).code(), absl::StatusCode::kPermissionDenied);
}

// A real peer in a new pid namespace, as a sandboxed process would be, seen through
// SO_PEERCRED on a socketpair.
TEST(CheckPeerOutsideSandboxes, PeerInNestedPidNamespaceIsRefused) {
  ASSERT_EQ(geteuid(), 0u) << "needs root for CLONE_NEWPID (CI runs as root)";
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const pid_t outer = fork();
  ASSERT_GE(outer, 0);
  if (outer == 0) {
    close(sv[0]);
    if (unshare(CLONE_NEWPID) != 0) _exit(2);
    const pid_t inner = fork();  // pid 1 of the new namespace
    if (inner == 0) {
      // A fresh socket from inside: SO_PEERCRED records the process that made it.
      int again[2];
      if (socketpair(AF_UNIX, SOCK_STREAM, 0, again) != 0) _exit(3);
      if (!SendNotifyFd(sv[1], again[0]).ok()) _exit(4);
      close(again[0]);
      char done;
      (void)!read(again[1], &done, 1);  // stay alive until the parent has looked
      _exit(0);
    }
    int status = 0;
    waitpid(inner, &status, 0);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 5);
  }
  close(sv[1]);
  absl::StatusOr<UniqueFd> theirs = ReceiveNotifyFd(sv[0]);
  ASSERT_TRUE(theirs.ok()) << theirs.status();
  ucred cred{};
  socklen_t len = sizeof(cred);
  ASSERT_EQ(getsockopt(theirs->get(), SOL_SOCKET, SO_PEERCRED, &cred, &len), 0);
  EXPECT_GT(cred.pid, 1);  // translated into our namespace
  absl::Status checked = CheckPeerOutsideSandboxes(cred);
  EXPECT_EQ(checked.code(), absl::StatusCode::kPermissionDenied) << checked;
  theirs->Reset();  // lets the inner process finish
  int status = 0;
  waitpid(outer, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace ccsandbox::launcher
