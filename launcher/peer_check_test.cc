#include "launcher/peer_check.h"

#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "gtest/gtest.h"

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
  if (geteuid() != 0) GTEST_SKIP() << "needs root for CLONE_NEWPID";
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const pid_t outer = fork();
  ASSERT_GE(outer, 0);
  if (outer == 0) {
    close(sv[0]);
    if (unshare(CLONE_NEWPID) != 0) _exit(2);
    const pid_t inner = fork();  // pid 1 of the new namespace
    if (inner == 0) {
      // A fresh socket from inside: SO_PEERCRED records the connecting process.
      int again[2];
      if (socketpair(AF_UNIX, SOCK_STREAM, 0, again) != 0) _exit(3);
      char byte = 'x';
      struct msghdr msg {};
      struct iovec iov {&byte, 1};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      char control[CMSG_SPACE(sizeof(int))] = {};
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
      cmsg->cmsg_level = SOL_SOCKET;
      cmsg->cmsg_type = SCM_RIGHTS;
      cmsg->cmsg_len = CMSG_LEN(sizeof(int));
      memcpy(CMSG_DATA(cmsg), &again[0], sizeof(int));
      if (sendmsg(sv[1], &msg, 0) != 1) _exit(4);
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
  char byte;
  struct msghdr msg {};
  struct iovec iov {&byte, 1};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ASSERT_EQ(recvmsg(sv[0], &msg, 0), 1);
  int theirs = -1;
  memcpy(&theirs, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
  ucred cred{};
  socklen_t len = sizeof(cred);
  ASSERT_EQ(getsockopt(theirs, SOL_SOCKET, SO_PEERCRED, &cred, &len), 0);
  EXPECT_GT(cred.pid, 1);  // translated into our namespace
  absl::Status checked = CheckPeerOutsideSandboxes(cred);
  EXPECT_EQ(checked.code(), absl::StatusCode::kPermissionDenied) << checked;
  close(theirs);  // lets the inner process finish
  int status = 0;
  waitpid(outer, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace ccsandbox::launcher
