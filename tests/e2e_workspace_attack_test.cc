// Attacks on conversations' copy-on-write worktrees through the real daemons, on a real XFS
// (reflink=1) volume: the agent inside an overlay-dispatched sandbox (repos/ and its work/ are
// its to write) tries to reach what is not its own, and to steer what the broker does later
// on the host — a harness-bash Launch, a teardown, a provisioning, a restart.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "proto/workspace.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/exec_events.h"
#include "tests/poll_until.h"
#include "tests/skip_or_fail_in_ci.h"
#include "tests/workspace_fixture.h"

namespace ccsandbox::testing {
namespace {

namespace fs = std::filesystem;

class WorkspaceAttackTest : public WorkspaceFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(SetUpWorkspace());
    grpc::Status registered = Register({{"app", repo_}});
    ASSERT_TRUE(registered.ok()) << registered.error_message();
    for (const auto& [conv, agents] :
         {std::pair<std::string, std::vector<std::string>>{"c", {"a1", "a2"}},
          std::pair<std::string, std::vector<std::string>>{"c2", {"b1"}}}) {
      v1::Conversation out;
      grpc::Status provisioned = Provision(conv, agents, &out);
      ASSERT_TRUE(provisioned.ok()) << provisioned.error_message() << "\n" << d_->BrokerLog();
    }
    conv_ = data_ + "/workspaces/w/conversations/c";
    conv2_ = data_ + "/workspaces/w/conversations/c2";
    std::ofstream(conv_ + "/agents/a2/work/secret") << "a2's notes\n";
    std::ofstream(conv2_ + "/agents/b1/work/secret") << "b1's notes\n";
    d_->GiveToCaller(conv_ + "/agents/a2/work/secret");
    d_->GiveToCaller(conv2_ + "/agents/b1/work/secret");
  }

  grpc::Status Teardown(const std::string& conv, v1::TeardownResponse* out) {
    return WorkspaceFixture::Teardown(conv, "", out);
  }

  std::string conv_, conv2_;
};

// The agent swaps repos/app/sub between a directory and a symlink (to the registered checkout)
// with renameat2(RENAME_EXCHANGE), from inside its overlay sandbox, while the server launches
// harness bash in repos/app/sub again and again (or launches its own spec binding it): between
// the broker's check of the path and the launcher's bind, the name may lead elsewhere. No
// launched run may see anything but sub.
TEST_P(WorkspaceAttackTest, HarnessWorkdirSwappedDuringLaunchNeverBindsWhatItLeadsTo) {
  ASSERT_TRUE(Launch("agent", Overlay("a1")).ok());
  const std::string app = conv_ + "/repos/app";
  const std::string swapper = absl::StrReplaceAll(
      R"(import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
os.chdir('APP')
os.mkdir('sub')
open('sub/inside-sub', 'w').close()
os.symlink('TARGET', 'evil')
n = 0
end = time.time() + 60
while not os.path.exists('stop') and time.time() < end:
    libc.renameat2(-100, b'sub', -100, b'evil', 2)
    n += 1
if os.path.islink('sub'):
    libc.renameat2(-100, b'sub', -100, b'evil', 2)
print('swaps', n)
)",
      {{"APP", app}, {"TARGET", repo_}});
  std::string swap_out;
  std::thread swap([&] { swap_out = Run("agent", {"/usr/bin/python3", "-c", swapper}); });
  absl::Cleanup stop = [&] {
    std::ofstream(app + "/stop") << "";
    swap.join();
  };
  ASSERT_TRUE(PollUntil([&] { return PathExists(app + "/evil"); }, absl::Seconds(30),
                        "the agent's swapper to start"));
  int launched = 0, refused = 0, breached = 0;
  std::string breach;
  for (int i = 0; i < 40 && breached == 0; ++i) {
    const std::string id = absl::StrCat("h", i);
    // Every other one without a dispatch: the server's own spec binding the same directory.
    if (!(i % 2 == 0 ? Launch(id, Harness("a1", app + "/sub")) : LaunchBinding(id, app + "/sub"))
             .ok()) {
      ++refused;
      continue;
    }
    ++launched;
    // Only the registered checkout has a .git and a README in it.
    const std::string out =
        Sh(id, "ls -a; test -d .git && cat README && (echo pwned >> README) 2>&1; true");
    if (absl::StrContains(out, "original")) {
      ++breached;
      breach = out;
    }
    (void)Destroy(id);
  }
  std::move(stop).Invoke();
  EXPECT_TRUE(absl::StrContains(swap_out, "swaps")) << swap_out;
  EXPECT_EQ(breached, 0) << "a harness run was given the registered checkout:\n" << breach;
  EXPECT_EQ(ReadFile(repo_ + "/README"), "original\n");
  std::cout << "harness launches: " << launched << " launched, " << refused << " refused, "
            << breached << " breached; " << swap_out;
}

// From inside its overlay sandbox the agent reaches for what is not its own: another
// conversation, the data directory's lock and registry, the daemons' sockets, its config through
// a symlink or a hard link, any file of the volume by handle (open_by_handle_at).
TEST_P(WorkspaceAttackTest, FromInsideTheOverlaySandboxNothingElseIsReachable) {
  ASSERT_TRUE(Launch("agent", Overlay("a1")).ok());
  const std::string work = conv_ + "/agents/a1/work";
  const std::string script = absl::StrCat(
      "cd ", work, "; for p in ", conv2_, " ", data_, "/.lock ", data_,
      "/workspaces/w/workspace.json ", conv_, "/agents/a2 ", d_->dir(), "/broker.sock ",
      d_->launcher_socket(), " ", repo_, "; do test -e $p && echo REACHED $p; done; ",
      "echo data: $(ls -a ", data_, "); ",
      "ln -s ../config cfg && (echo x > cfg/planted) 2>/dev/null && echo CONFIG-WRITTEN; ", "ln ",
      conv_, "/repos/app/README hard 2>/dev/null && echo HARD-LINK-ACROSS-BINDS; ",
      "/usr/bin/python3 -c \"", R"(
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
h = ctypes.create_string_buffer(8 + 128)
struct.pack_into('I', h, 0, 128)
mount_id = ctypes.c_int()
named = libc.name_to_handle_at(-100, b')",
      conv_, R"(/repos/app/README', h, ctypes.byref(mount_id), 0)
fd = libc.open_by_handle_at(os.open('.', os.O_RDONLY), h, 0)
print('by-handle', named, fd, ctypes.get_errno())
)",
      "\"; echo done");
  int exit = -1;
  const std::string out = Sh("agent", script, &exit);
  EXPECT_FALSE(absl::StrContains(out, "REACHED")) << out;
  EXPECT_TRUE(absl::StrContains(out, "data: . .. workspaces\n")) << out;
  EXPECT_FALSE(absl::StrContains(out, "CONFIG-WRITTEN")) << out;
  EXPECT_FALSE(absl::StrContains(out, "HARD-LINK")) << out;
  // The handle is named, never opened (EPERM): the volume's other files stay out of reach.
  EXPECT_TRUE(absl::StrContains(out, "by-handle 0 -1 1\n") ||
              absl::StrContains(out, "by-handle -1 -1 "))
      << out;
  EXPECT_TRUE(absl::StrContains(out, "done")) << out;
  EXPECT_FALSE(PathExists(conv_ + "/agents/a1/config/planted"));
}

// The agent plants repos/lib, a symlink to lib's checkout, before the server registers lib and
// provisions the conversation again: the symlink is never taken for lib's clone (a host-side
// tool following the reported path would work in the registered checkout), provisioning says
// what is in the way, and once it is gone lib is cloned.
TEST_P(WorkspaceAttackTest, APlantedNameOfANewRepositoryIsNeverTakenForItsClone) {
  ASSERT_TRUE(Launch("agent", Overlay("a1")).ok());
  int exit = -1;
  const std::string planted =
      Sh("agent", absl::StrCat("ln -s ", lib_, " ", conv_, "/repos/lib"), &exit);
  ASSERT_EQ(exit, 0) << planted;
  ASSERT_NO_FATAL_FAILURE(Register({{"app", repo_}, {"lib", lib_}}));
  v1::Conversation conversation;
  grpc::Status blocked = Provision("c", {"a1", "a3"}, &conversation);
  EXPECT_EQ(blocked.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << blocked.error_message();
  EXPECT_TRUE(absl::StrContains(blocked.error_message(), conv_ + "/repos/lib"))
      << blocked.error_message();
  EXPECT_FALSE(PathExists(conv_ + "/agents/a3"));  // all or nothing
  v1::ConversationRequest get;
  get.set_workspace_id("w");
  get.set_conversation_id("c");
  grpc::ClientContext ctx;
  ASSERT_TRUE(workspaces_->GetConversation(&ctx, get, &conversation).ok());
  for (const v1::ProvisionedRepository& repo : conversation.repositories()) {
    EXPECT_NE(repo.name(), "lib") << repo.path();
  }
  EXPECT_EQ(Launch("h1", Harness("a1", conv_ + "/repos/lib")).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(ReadFile(lib_ + "/README"), "original\n");
  // The agent takes it away: lib is cloned.
  ASSERT_EQ(Sh("agent", absl::StrCat("rm ", conv_, "/repos/lib && echo gone")), "gone\n");
  grpc::Status provisioned = Provision("c", {"a1", "a3"}, &conversation);
  ASSERT_TRUE(provisioned.ok()) << provisioned.error_message();
  bool cloned = false;
  for (const v1::ProvisionedRepository& repo : conversation.repositories()) {
    if (repo.name() == "lib") cloned = repo.cloned_now();
  }
  EXPECT_TRUE(cloned);
  EXPECT_TRUE(PathExists(conv_ + "/repos/lib/.git/HEAD"));
}

// What an agent leaves for teardown: a tree deeper than any cap, directories it made
// unreadable and unwritable, symlinks out of the conversation (named like what teardown
// handles). Teardown removes all of it and nothing else; a broker restarted on the data
// directory starts (it sweeps leftovers at boot, and a leftover it cannot remove must not keep
// it from starting).
TEST_P(WorkspaceAttackTest, TeardownRemovesWhatTheAgentBuiltAndTheBrokerRestarts) {
  ASSERT_TRUE(Launch("agent", Overlay("a1")).ok());
  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "d/";
  const std::string script = absl::StrCat(
      "set -e; for top in ", conv_, "/agents/a1/work ", conv_, "/repos; do cd $top; ", "mkdir -p ",
      deep, "; mkdir -p locked/inner; touch locked/inner/f; ",
      "chmod 0 locked/inner; chmod 0 locked; touch pinned; (chattr +i pinned || chattr +a pinned) ",
      "2>/dev/null && echo IMMUTABLE-SET; ln -s ", repo_, " out; ln -s ", conv2_,
      " .trash-c-0; mkfifo pipe; done; echo built");
  int exit = -1;
  const std::string out = Sh("agent", script, &exit);
  ASSERT_EQ(exit, 0) << out;
  EXPECT_FALSE(absl::StrContains(out, "IMMUTABLE-SET")) << out;
  ASSERT_TRUE(Destroy("agent").ok());
  v1::TeardownResponse removed;
  grpc::Status torn = Teardown("c", &removed);
  EXPECT_TRUE(torn.ok()) << torn.error_message();
  EXPECT_FALSE(PathExists(conv_));
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(data_ + "/workspaces/w/conversations")) {
    left.push_back(e.path().filename());
  }
  EXPECT_EQ(left, std::vector<std::string>{"c2"});
  EXPECT_EQ(ReadFile(repo_ + "/README"), "original\n");
  EXPECT_EQ(ReadFile(conv2_ + "/agents/b1/work/secret"), "b1's notes\n");
  // A broker that died mid-teardown left the same tree as trash: the next one still starts.
  ASSERT_EQ(::mkdir((data_ + "/workspaces/w/conversations/.trash-c-1").c_str(), 0755), 0);
  ASSERT_TRUE(fs::create_directories(data_ + "/workspaces/w/conversations/.trash-c-1/" + deep));
  d_->GiveToCaller(data_ + "/workspaces/w/conversations/.trash-c-1");
  d_.reset();
  ASSERT_NO_FATAL_FAILURE(StartDaemons());
  EXPECT_FALSE(PathExists(data_ + "/workspaces/w/conversations/.trash-c-1"));
  v1::Conversation again;
  grpc::Status provisioned = Provision("c", {"a1"}, &again);
  EXPECT_TRUE(provisioned.ok()) << provisioned.error_message();
}

// The server provisions and tears down a conversation while launching its agent into it, over and
// over: a run gets that conversation's directories or none, never another's; teardown waits for
// the runs that bind it, and nothing is left behind.
TEST_P(WorkspaceAttackTest, ProvisionAndTeardownRacingLaunchesNeverMixConversations) {
  const std::string conv3 = data_ + "/workspaces/w/conversations/c3";
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    while (!stop.load()) {
      v1::Conversation out;
      (void)Provision("c3", {"x"}, &out);
      v1::TeardownResponse removed;
      (void)Teardown("c3", &removed);
    }
  });
  const absl::Time end = absl::Now() + absl::Seconds(2);
  int launched = 0;
  for (int i = 0; absl::Now() < end; ++i) {
    const std::string id = absl::StrCat("r", i);
    v1::WorkspaceDispatch d = Overlay("x");
    d.set_conversation_id("c3");
    if (!Launch(id, d).ok()) continue;
    ++launched;
    const std::string out = Sh(id, absl::StrCat("ls ", data_, "/workspaces/w/conversations ", conv3,
                                                "/agents; cat ", conv_, "/agents/a2/work/secret ",
                                                conv2_, "/agents/b1/work/secret 2>&1; true"));
    EXPECT_FALSE(absl::StrContains(out, "notes")) << out;
    EXPECT_TRUE(absl::StrContains(out, "/conversations:\nc3\n\n")) << out;
    EXPECT_TRUE(absl::StrContains(out, "/agents:\nx\n")) << out;
    (void)Destroy(id);
  }
  stop = true;
  churn.join();
  v1::TeardownResponse removed;
  grpc::Status torn = Teardown("c3", &removed);
  EXPECT_TRUE(torn.ok()) << torn.error_message();
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(data_ + "/workspaces/w/conversations")) {
    left.push_back(e.path().filename());
  }
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"c", "c2"}));
  std::cout << "racing launches: " << launched << " launched\n";
}

INSTANTIATE_TEST_SUITE_P(Brokers, WorkspaceAttackTest, ::testing::Bool(), BrokerIdentityName);

}  // namespace
}  // namespace ccsandbox::testing
