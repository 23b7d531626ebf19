#include "base/peer_check.h"

#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "base/unique_fd.h"
#include "gtest/gtest.h"

namespace ccsandbox {
namespace {

TEST(StatusShowsNestedPidNamespace, Table) {
  struct Case {
    const char* status;
    bool nested;
  } cases[] = {
      {"Name:\tsh\nNSpid:\t4242\nNSpgid:\t4242\n", false},
      {"Name:\tsh\nNSpid:\t4242\t3\n", true},     // one level down: a sandbox
      {"Name:\tsh\nNSpid:\t4242\t7\t1\n", true},  // two levels
      {"Name:\tsh\nPid:\t4242\n", true},          // no NSpid line: fail closed
      {"", true},
  };
  for (const Case& c : cases)
    EXPECT_EQ(StatusShowsNestedPidNamespace(c.status), c.nested) << c.status;
}

TEST(CheckPeerOutsideSandboxes, OurselvesAndInvisiblePids) {
  EXPECT_TRUE(CheckPeerOutsideSandboxes(ucred{getpid(), getuid(), getgid()}).ok());
  EXPECT_EQ(CheckPeerOutsideSandboxes(ucred{0, 0, 0}).code(), absl::StatusCode::kPermissionDenied);
}

// A real peer in a new pid namespace, as a sandboxed process would be, seen through
// SO_PEERCRED on a connection it made to our listening socket (abstract name: no file).
TEST(CheckPeerOutsideSandboxes, PeerInNestedPidNamespaceIsRefused) {
  ASSERT_EQ(geteuid(), 0u) << "needs root for CLONE_NEWPID (CI runs as root)";
  UniqueFd listener(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(listener.valid());
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = "ccsandbox-peer-check-test-" + std::to_string(getpid());
  memcpy(addr.sun_path + 1, name.data(), name.size());  // sun_path[0] = 0: abstract
  const socklen_t addr_len = offsetof(sockaddr_un, sun_path) + 1 + name.size();
  ASSERT_EQ(bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), addr_len), 0);
  ASSERT_EQ(listen(listener.get(), 1), 0);
  int done[2];
  ASSERT_EQ(pipe(done), 0);
  const pid_t outer = fork();
  ASSERT_GE(outer, 0);
  if (outer == 0) {
    close(done[1]);
    if (unshare(CLONE_NEWPID) != 0) _exit(2);
    const pid_t inner = fork();  // pid 1 of the new namespace
    if (inner == 0) {
      // SO_PEERCRED records the process that connects.
      const int s = socket(AF_UNIX, SOCK_STREAM, 0);
      if (s < 0 || connect(s, reinterpret_cast<sockaddr*>(&addr), addr_len) != 0) _exit(3);
      char byte;
      (void)!read(done[0], &byte, 1);  // stay alive until the parent has looked
      _exit(0);
    }
    int status = 0;
    waitpid(inner, &status, 0);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 5);
  }
  close(done[0]);
  UniqueFd theirs(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  ASSERT_TRUE(theirs.valid()) << strerror(errno);
  ucred cred{};
  socklen_t len = sizeof(cred);
  ASSERT_EQ(getsockopt(theirs.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len), 0);
  EXPECT_GT(cred.pid, 1);  // translated into our namespace
  absl::Status checked = CheckPeerOutsideSandboxes(cred);
  EXPECT_EQ(checked.code(), absl::StatusCode::kPermissionDenied) << checked;
  close(done[1]);  // lets the inner process finish
  int status = 0;
  waitpid(outer, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace ccsandbox
