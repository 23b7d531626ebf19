#include "workspace/workspaces.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/reflink_volumes.h"
#include "tests/skip_or_fail_in_ci.h"
#include "workspace/sample_repository.h"

namespace ccsandbox::workspace {
namespace {

namespace fs = std::filesystem;
using ::ccsandbox::testing::InCi;
using ::ccsandbox::testing::TestVolume;

std::unique_ptr<TestVolume> MakeVolume(TestVolume::Kind kind) {
  absl::StatusOr<std::unique_ptr<TestVolume>> volume = TestVolume::Make(kind);
  if (!volume.ok()) {
    if (InCi() || !absl::IsFailedPrecondition(volume.status())) {
      ADD_FAILURE() << volume.status();
    }
    return nullptr;
  }
  return *std::move(volume);
}

#define VOLUME_OR_SKIP(var, kind)                                       \
  std::unique_ptr<TestVolume> var = MakeVolume(kind);                   \
  if (var == nullptr) {                                                 \
    if (InCi()) FAIL() << "CI needs real reflink volumes (root, loop)"; \
    GTEST_SKIP() << "needs root and loop devices";                      \
  }

std::string Sh(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(absl::StrCat("set -e; ", command, " 2>&1").c_str(), "r");
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  const int status = ::pclose(pipe);
  EXPECT_EQ(status, 0) << command << "\n" << out;
  return out;
}

void Write(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << content;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A committed repository at `dir` with a few files.
void MakeRepo(const std::string& dir, const std::string& marker) {
  Write(dir + "/README", marker + "\n");
  Write(dir + "/src/main.c", "int main() { return 0; }\n");
  Sh(absl::StrCat("cd ", dir, " && git init -q -b main && git -c user.email=t@t -c user.name=t ",
                  "add -A && git -c user.email=t@t -c user.name=t commit -q -m init"));
}

v1::Workspace Registration(const std::string& id,
                           std::vector<std::pair<std::string, std::string>> repos,
                           const std::string& attachments = "") {
  v1::Workspace w;
  w.set_workspace_id(id);
  for (const auto& [name, path] : repos) {
    v1::WorkspaceRepository* r = w.add_repositories();
    r->set_name(name);
    r->set_path(path);
  }
  w.set_attachments_dir(attachments);
  return w;
}

v1::ProvisionRequest Provision(const std::string& ws, const std::string& conv,
                               std::vector<std::string> agents) {
  v1::ProvisionRequest r;
  r.set_workspace_id(ws);
  r.set_conversation_id(conv);
  for (const std::string& a : agents) r.add_agent_ids(a);
  return r;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

const auto kNoSessions = [](const std::string&) { return std::vector<std::string>(); };

class WorkspacesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      if (InCi()) FAIL() << "CI runs as root";
      GTEST_SKIP() << "needs root (loop-mounted volumes)";
    }
  }
};

TEST_F(WorkspacesTest, RegistrationRefusesBadInputNamingTheField) {
  VOLUME_OR_SKIP(xfs, TestVolume::Kind::kXfsReflink);
  const std::string root = xfs->path();
  MakeRepo(root + "/repo", "r");
  fs::create_directories(root + "/plain");
  Sh(absl::StrCat("git init -q --bare ", root, "/bare.git"));
  auto ws = Workspaces::Open(root + "/data");
  ASSERT_TRUE(ws.ok()) << ws.status();
  // A checkout holding the data directory.
  MakeRepo(root + "/outer", "o");
  auto inner = Workspaces::Open(root + "/outer/data");
  ASSERT_TRUE(inner.ok()) << inner.status();
  struct Case {
    v1::Workspace w;
    const char* field;
  };
  const std::string repo = root + "/repo";
  // A checkout inside the data directory, and an attachments directory leading into it, each
  // spelled through a symlink; more repositories than a workspace takes.
  MakeRepo(root + "/data/inner", "inner");
  fs::create_directory_symlink(root + "/data/inner", root + "/sneaky");
  fs::create_directory_symlink(root + "/data", root + "/att-link");
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i <= 64; ++i) many.emplace_back(absl::StrCat("r", i), repo);
  std::vector<Case> cases = {
      {Registration("../w", {{"app", repo}}), "workspaceId: "},
      {Registration(".w", {{"app", repo}}), "workspaceId: "},
      {Registration("w", {{"a/b", repo}}), "repositories[0].name: "},
      {Registration("w", {{"app", repo}, {"app", repo}}), "repositories[1].name: "},
      {Registration("w", {{"app", repo}, {"app2", repo}}), "repositories[1].path: "},
      {Registration("w", {{"app", "repo"}}), "repositories[0].path: "},
      {Registration("w", {{"app", repo + "/../repo"}}), "repositories[0].path: "},
      {Registration("w", {{"app", repo + "/"}}), "repositories[0].path: "},
      {Registration("w", {{"app", root + "/plain"}}), "repositories[0].path: "},
      {Registration("w", {{"app", root + "/bare.git"}}), "repositories[0].path: "},
      {Registration("w", {{"app", root + "/missing"}}), "repositories[0].path: "},
      {Registration("w", {{"app", repo}}, "attachments"), "attachmentsDir: "},
      {Registration("w", {{"app", repo}}, root), "attachmentsDir: "},  // holds the data dir
      {Registration("w", {{"app", repo}}, root + "/data/workspaces"), "attachmentsDir: "},
      {Registration(std::string("w\0x", 3), {{"app", repo}}), "workspaceId: "},
      {Registration("w", {{"\xc3\xa1pp", repo}}), "repositories[0].name: "},
      {Registration("w", {{"app", root + "/sneaky"}}), "repositories[0].path: "},  // into data
      {Registration("w", {{"app", repo}}, root + "/att-link"), "attachmentsDir: "},
      {Registration("w", many), "repositories: "},
  };
  for (const Case& c : cases) {
    absl::StatusOr<v1::Workspace> r = (*ws)->registry().Register(c.w);
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << c.field << " " << r.status();
    EXPECT_TRUE(absl::StartsWith(r.status().message(), c.field)) << r.status();
  }
  absl::StatusOr<v1::Workspace> holding =
      (*inner)->registry().Register(Registration("w", {{"outer", root + "/outer"}}));
  EXPECT_TRUE(absl::IsInvalidArgument(holding.status())) << holding.status();
  EXPECT_TRUE(absl::StrContains(holding.status().message(), "holds the broker's data directory"))
      << holding.status();
  EXPECT_TRUE(absl::IsNotFound((*ws)->registry().Get("w").status()));
  // Provisioning's ids: the same rules, and a bounded number of agents.
  ASSERT_TRUE((*ws)->registry().Register(Registration("w", {{"app", repo}})).ok());
  std::vector<std::string> agents;
  for (int i = 0; i <= 64; ++i) agents.push_back(absl::StrCat("a", i));
  const std::pair<v1::ProvisionRequest, const char*> provisions[] = {
      {Provision("w", std::string("c\0", 2), {"a"}), "conversationId: "},
      {Provision("w", "c\n", {"a"}), "conversationId: "},
      {Provision("w", "c", {"a", "a"}), "agentIds[1]: "},
      {Provision("w", "c", {"\xe2\x80\xae"}), "agentIds[0]: "},
      {Provision("w", "c", agents), "agentIds: "},
  };
  for (const auto& [request, field] : provisions) {
    auto c = (*ws)->conversations().Provision(request);
    EXPECT_TRUE(absl::IsInvalidArgument(c.status())) << field << " " << c.status();
    EXPECT_TRUE(absl::StartsWith(c.status().message(), field)) << c.status();
  }
  EXPECT_EQ(Entries(root + "/data/workspaces/w/conversations"), std::vector<std::string>{});
}

TEST_F(WorkspacesTest, ProvisionsClonesAndAgentsIdempotentlyAndTearsDown) {
  VOLUME_OR_SKIP(xfs, TestVolume::Kind::kXfsReflink);
  const std::string root = xfs->path();
  MakeRepo(root + "/app", "app");
  MakeRepo(root + "/lib", "lib");
  fs::create_symlink(root + "/app", root + "/app-link");
  auto ws = Workspaces::Open(root + "/data");
  ASSERT_TRUE(ws.ok()) << ws.status();
  auto registered = (*ws)->registry().Register(
      Registration("w1", {{"app", root + "/app-link"}, {"lib", root + "/lib"}}));
  ASSERT_TRUE(registered.ok()) << registered.status();
  EXPECT_EQ(registered->repositories(0).resolved_path(), root + "/app");
  auto protected_paths = (*ws)->registry().ProtectedPaths("w1");
  ASSERT_TRUE(protected_paths.ok());
  EXPECT_EQ(*protected_paths,
            (std::vector<std::string>{root + "/app-link", root + "/app", root + "/lib"}));

  auto c = (*ws)->conversations().Provision(Provision("w1", "c1", {"a1", "a2"}));
  ASSERT_TRUE(c.ok()) << c.status();
  const std::string conv = root + "/data/workspaces/w1/conversations/c1";
  EXPECT_EQ(c->path(), conv);
  ASSERT_EQ(c->repositories_size(), 2);
  EXPECT_TRUE(c->repositories(0).cloned_now());
  EXPECT_GE(c->repositories(0).files(), 2u);
  EXPECT_EQ(c->repositories(0).source(), root + "/app");
  EXPECT_EQ(Read(conv + "/repos/app/README"), "app\n");
  EXPECT_EQ(Sh("git -C " + conv + "/repos/app status --porcelain"), "");
  ASSERT_EQ(c->agents_size(), 2);
  EXPECT_EQ(c->agents(1).workdir(), conv + "/agents/a2/work");
  EXPECT_TRUE(fs::is_directory(conv + "/agents/a1/config"));
  EXPECT_EQ(Entries(root + "/data/workspaces/w1/conversations"), std::vector<std::string>{"c1"});

  // Again, after an edit and with one more agent: nothing re-cloned, the edit kept.
  Write(conv + "/repos/app/README", "edited\n");
  auto again = (*ws)->conversations().Provision(Provision("w1", "c1", {"a1", "a3"}));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->repositories(0).cloned_now());
  EXPECT_EQ(again->agents_size(), 3);
  EXPECT_EQ(Read(conv + "/repos/app/README"), "edited\n");
  EXPECT_EQ(Read(root + "/app/README"), "app\n");  // the registered checkout is untouched
  // Another conversation does not see the edit.
  auto other = (*ws)->conversations().Provision(Provision("w1", "c2", {"a1"}));
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(Read(other->repos_dir() + "/app/README"), "app\n");

  // A repository registered later joins existing conversations on their next Provision.
  MakeRepo(root + "/docs", "docs");
  ASSERT_TRUE(
      (*ws)
          ->registry()
          .Register(Registration(
              "w1", {{"app", root + "/app"}, {"lib", root + "/lib"}, {"docs", root + "/docs"}}))
          .ok());
  auto grown = (*ws)->conversations().Provision(Provision("w1", "c1", {}));
  ASSERT_TRUE(grown.ok()) << grown.status();
  int cloned_now = 0;
  for (const auto& r : grown->repositories()) cloned_now += r.cloned_now() ? 1 : 0;
  EXPECT_EQ(cloned_now, 1);
  EXPECT_EQ(Read(conv + "/repos/docs/README"), "docs\n");

  // Teardown: refused while a session binds it; one agent; then the whole conversation.
  auto busy = (*ws)->conversations().Teardown(
      [] {
        v1::ConversationRequest r;
        r.set_workspace_id("w1");
        r.set_conversation_id("c1");
        return r;
      }(),
      [&](const std::string& dir) {
        return dir == conv ? std::vector<std::string>{"s1"} : std::vector<std::string>{};
      });
  EXPECT_TRUE(absl::IsFailedPrecondition(busy.status())) << busy.status();
  EXPECT_TRUE(absl::StrContains(busy.status().message(), "s1"));
  EXPECT_TRUE(fs::exists(conv));
  v1::ConversationRequest agent;
  agent.set_workspace_id("w1");
  agent.set_conversation_id("c1");
  agent.set_agent_id("a2");
  auto removed = (*ws)->conversations().Teardown(agent, kNoSessions);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(removed->removed(0), conv + "/agents/a2");
  EXPECT_EQ(Entries(conv + "/agents"), (std::vector<std::string>{"a1", "a3"}));
  agent.clear_agent_id();
  removed = (*ws)->conversations().Teardown(agent, kNoSessions);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(Entries(root + "/data/workspaces/w1/conversations"), std::vector<std::string>{"c2"});
  // Nothing there: OK, nothing removed.
  removed = (*ws)->conversations().Teardown(agent, kNoSessions);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed->removed_size(), 0);
  EXPECT_TRUE(absl::IsNotFound((*ws)->conversations().Get("w1", "c1").status()));
  EXPECT_EQ(Sh("git -C " + root + "/app status --porcelain"), "");
}

TEST_F(WorkspacesTest, NoReflinkOrAnotherVolumeFailsAndLeavesNothing) {
  VOLUME_OR_SKIP(ext4, TestVolume::Kind::kExt4);
  VOLUME_OR_SKIP(tmpfs, TestVolume::Kind::kTmpfs);
  VOLUME_OR_SKIP(xfs, TestVolume::Kind::kXfsReflink);
  VOLUME_OR_SKIP(xfs2, TestVolume::Kind::kXfsReflink);
  struct Case {
    std::string repo, data;
    const char* says;
  } cases[] = {
      {ext4->path() + "/repo", ext4->path() + "/data", "reflink"},
      {tmpfs->path() + "/repo", tmpfs->path() + "/data", "reflink"},
      {xfs->path() + "/repo", xfs2->path() + "/data", "different volume"},
  };
  for (const Case& c : cases) {
    MakeRepo(c.repo, "r");
    auto ws = Workspaces::Open(c.data);
    ASSERT_TRUE(ws.ok()) << ws.status();
    ASSERT_TRUE((*ws)->registry().Register(Registration("w", {{"r", c.repo}})).ok());
    auto conv = (*ws)->conversations().Provision(Provision("w", "c", {"a"}));
    EXPECT_TRUE(absl::IsFailedPrecondition(conv.status())) << conv.status();
    EXPECT_TRUE(absl::StrContains(conv.status().message(), c.says)) << conv.status();
    EXPECT_TRUE(Entries(c.data + "/workspaces/w/conversations").empty());
  }
  // Adding a repository on another volume to a provisioned conversation: all or nothing, the
  // new agent of the same call is not made either.
  MakeRepo(xfs2->path() + "/near", "near");
  auto ws = Workspaces::Open(xfs2->path() + "/data2");
  ASSERT_TRUE(ws.ok()) << ws.status();
  ASSERT_TRUE(
      (*ws)->registry().Register(Registration("w", {{"near", xfs2->path() + "/near"}})).ok());
  ASSERT_TRUE((*ws)->conversations().Provision(Provision("w", "c", {"a"})).ok());
  ASSERT_TRUE((*ws)
                  ->registry()
                  .Register(Registration(
                      "w", {{"near", xfs2->path() + "/near"}, {"far", xfs->path() + "/repo"}}))
                  .ok());
  auto grown = (*ws)->conversations().Provision(Provision("w", "c", {"a", "b"}));
  EXPECT_TRUE(absl::IsFailedPrecondition(grown.status())) << grown.status();
  const std::string conv = xfs2->path() + "/data2/workspaces/w/conversations";
  EXPECT_EQ(Entries(conv), std::vector<std::string>{"c"});
  EXPECT_EQ(Entries(conv + "/c/agents"), std::vector<std::string>{"a"});
  EXPECT_EQ(Entries(conv + "/c/repos"), std::vector<std::string>{"near"});
}

// The figure: a 10,000-file repository provisions copy-on-write, costing metadata, not a
// copy (the benchmark prints the times; this pins the disk use well below a byte copy's).
TEST_F(WorkspacesTest, TenThousandFilesProvisionWithNearZeroExtraDisk) {
  // XFS here; btrfs in the benchmark (tests/bench/worktree_bench.cc), which measures both.
  for (TestVolume::Kind kind : {TestVolume::Kind::kXfsReflink}) {
    VOLUME_OR_SKIP(volume, kind);
    const std::string root = volume->path();
    workspace::testing::SampleShape shape;
    shape.files = 10000;
    shape.log_uniform = false;
    shape.pack = true;
    absl::StatusOr<workspace::testing::SampleRepository> repo =
        workspace::testing::MakeSampleRepository(root + "/repo", shape);
    ASSERT_TRUE(repo.ok()) << repo.status();
    auto ws = Workspaces::Open(root + "/data");
    ASSERT_TRUE(ws.ok()) << ws.status();
    ASSERT_TRUE((*ws)->registry().Register(Registration("w", {{"repo", root + "/repo"}})).ok());
    absl::StatusOr<uint64_t> before = volume->UsedBytes();
    ASSERT_TRUE(before.ok()) << before.status();
    auto c = (*ws)->conversations().Provision(Provision("w", "c", {"a1", "a2"}));
    ASSERT_TRUE(c.ok()) << c.status();
    absl::StatusOr<uint64_t> after = volume->UsedBytes();
    ASSERT_TRUE(after.ok()) << after.status();
    EXPECT_GE(c->repositories(0).files(), 10000u);
    const double extra = static_cast<double>(*after - *before);
    const double share = extra / static_cast<double>(repo->bytes);
    std::printf("%s: %llu files, %.1f MiB of file data; provisioning used %.2f MiB more (%.2f%%)\n",
                TestVolume::KindName(kind), static_cast<unsigned long long>(repo->files),
                repo->bytes / 1048576.0, extra / 1048576.0, 100 * share);
    // Per-file metadata only (an inode, extent records): a few percent at most for files this
    // small, against 100% for a copy.
    EXPECT_LT(share, 0.05);
    EXPECT_EQ(Sh("git -C " + c->repositories(0).path() + " status --porcelain"), "");
  }
}

TEST_F(WorkspacesTest, ConcurrentConversationsAndTheSameOneTwice) {
  VOLUME_OR_SKIP(btrfs, TestVolume::Kind::kBtrfs);
  const std::string root = btrfs->path();
  MakeRepo(root + "/repo", "r");
  for (int i = 0; i < 200; ++i) Write(absl::StrCat(root, "/repo/f/", i), std::string(4096, 'x'));
  Sh("cd " + root + "/repo && git add -A && git -c user.email=t@t -c user.name=t commit -qm f");
  auto ws = Workspaces::Open(root + "/data");
  ASSERT_TRUE(ws.ok()) << ws.status();
  ASSERT_TRUE((*ws)->registry().Register(Registration("w", {{"r", root + "/repo"}})).ok());
  std::vector<std::thread> threads;
  std::vector<absl::Status> results(6);
  for (int i = 0; i < 6; ++i) {
    // Conversations c0..c3, and c0 twice more.
    const std::string conv = absl::StrCat("c", i < 4 ? i : 0);
    threads.emplace_back([&, i, conv] {
      results[i] = (*ws)->conversations().Provision(Provision("w", conv, {"a"})).status();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : results) EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(Entries(root + "/data/workspaces/w/conversations"),
            (std::vector<std::string>{"c0", "c1", "c2", "c3"}));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Sh(absl::StrCat("git -C ", root, "/data/workspaces/w/conversations/c", i,
                              "/repos/r status --porcelain")),
              "");
  }
}

TEST_F(WorkspacesTest, DispatchPlansAndSymlinksPlantedByAnAgent) {
  VOLUME_OR_SKIP(xfs, TestVolume::Kind::kXfsReflink);
  const std::string root = xfs->path();
  MakeRepo(root + "/app", "app");
  fs::create_directories(root + "/attachments");
  auto ws = Workspaces::Open(root + "/data");
  ASSERT_TRUE(ws.ok()) << ws.status();
  ASSERT_TRUE((*ws)
                  ->registry()
                  .Register(Registration("w", {{"app", root + "/app"}}, root + "/attachments"))
                  .ok());
  ASSERT_TRUE((*ws)->conversations().Provision(Provision("w", "c", {"a1", "a2"})).ok());
  const std::string conv = root + "/data/workspaces/w/conversations/c";
  v1::WorkspaceDispatch d;
  d.set_workspace_id("w");
  d.set_conversation_id("c");
  d.set_agent_id("a1");
  auto plan = (*ws)->PlanDispatch(d);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->bind_mounts_size(), 4);
  EXPECT_EQ(plan->bind_mounts(0).host_path(), conv + "/agents/a1/work");
  EXPECT_EQ(plan->bind_mounts(1).host_path(), conv + "/agents/a1/config");
  EXPECT_TRUE(plan->bind_mounts(1).read_only());
  EXPECT_EQ(plan->bind_mounts(2).host_path(), conv + "/repos");
  EXPECT_EQ(plan->bind_mounts(3).host_path(), root + "/attachments");
  EXPECT_TRUE(plan->bind_mounts(3).read_only());
  EXPECT_EQ(plan->confinement_roots_size(), 4);
  EXPECT_EQ(plan->workdir(), conv + "/agents/a1/work");
  EXPECT_EQ(plan->protected_paths(0), root + "/app");

  // Harness bash in a clone: only it is bound.
  d.set_kind(v1::WorkspaceDispatch::KIND_HARNESS_BASH);
  d.set_workdir(conv + "/repos/app");
  plan = (*ws)->PlanDispatch(d);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->bind_mounts_size(), 1);
  EXPECT_EQ(plan->bind_mounts(0).host_path(), conv + "/repos/app");
  // An agent planted symlinks in repos/ (which it can write): to a sibling, to the checkout.
  fs::create_directory_symlink(conv + "/agents/a2/work", conv + "/repos/sibling");
  fs::create_directory_symlink(root + "/app", conv + "/repos/original");
  for (const char* planted : {"/repos/sibling", "/repos/original"}) {
    d.set_workdir(conv + planted);
    plan = (*ws)->PlanDispatch(d);
    EXPECT_TRUE(absl::IsInvalidArgument(plan.status())) << planted << " " << plan.status();
    EXPECT_TRUE(absl::StartsWith(plan.status().message(), "workdir: ")) << plan.status();
  }
  // Not provisioned.
  d.set_kind(v1::WorkspaceDispatch::KIND_OVERLAY);
  d.clear_workdir();
  d.set_agent_id("a9");
  EXPECT_TRUE(absl::IsNotFound((*ws)->PlanDispatch(d).status()));
  d.set_agent_id("../a2");
  EXPECT_TRUE(absl::IsInvalidArgument((*ws)->PlanDispatch(d).status()));
  // The attachments directory swapped for a symlink to the data directory: refused.
  fs::rename(root + "/attachments", root + "/attachments.old");
  fs::create_directory_symlink(root + "/data", root + "/attachments");
  d.set_agent_id("a1");
  EXPECT_TRUE(absl::IsFailedPrecondition((*ws)->PlanDispatch(d).status()));
}

// The registered checkout swapped, after registration, for a symlink into the data directory
// (another conversation's clone, which that conversation's agent wrote): never cloned. Nor is a
// linked worktree whose private git directory lies in the data directory registered.
TEST_F(WorkspacesTest, ACheckoutLeadingIntoTheDataDirectoryIsNeverCloned) {
  VOLUME_OR_SKIP(xfs, TestVolume::Kind::kXfsReflink);
  const std::string root = xfs->path();
  MakeRepo(root + "/app", "app");
  auto ws = Workspaces::Open(root + "/data");
  ASSERT_TRUE(ws.ok()) << ws.status();
  ASSERT_TRUE((*ws)->registry().Register(Registration("w", {{"app", root + "/app"}})).ok());
  ASSERT_TRUE((*ws)->conversations().Provision(Provision("w", "c", {"a"})).ok());
  const std::string clone = root + "/data/workspaces/w/conversations/c/repos/app";
  Write(clone + "/README", "c's secret\n");
  fs::rename(root + "/app", root + "/app.old");
  fs::create_directory_symlink(clone, root + "/app");
  auto c2 = (*ws)->conversations().Provision(Provision("w", "c2", {"b"}));
  EXPECT_TRUE(absl::IsFailedPrecondition(c2.status())) << c2.status();
  EXPECT_TRUE(absl::StrContains(c2.status().message(), "data directory")) << c2.status();
  EXPECT_FALSE(fs::exists(root + "/data/workspaces/w/conversations/c2"));
  // A worktree outside whose .git leads to c's clone's git directory (its commondir outside).
  fs::create_directories(root + "/wt");
  Write(root + "/wt/.git", "gitdir: " + clone + "/.git\n");
  Write(clone + "/.git/commondir", root + "/app.old/.git\n");
  auto registered = (*ws)->registry().Register(Registration("w", {{"wt", root + "/wt"}}));
  EXPECT_TRUE(absl::IsInvalidArgument(registered.status())) << registered.status();
  EXPECT_TRUE(absl::StrContains(registered.status().message(), "data directory"))
      << registered.status();
}

// The registered path swapped after registration for a symlink to another repository (another
// user's, which a root broker can read and the checkout's owner cannot): never cloned.
TEST_F(WorkspacesTest, ACheckoutThatNowResolvesElsewhereIsNeverCloned) {
  VOLUME_OR_SKIP(xfs, TestVolume::Kind::kXfsReflink);
  const std::string root = xfs->path();
  MakeRepo(root + "/app", "app");
  MakeRepo(root + "/other", "someone else's secret");
  auto ws = Workspaces::Open(root + "/data");
  ASSERT_TRUE(ws.ok()) << ws.status();
  ASSERT_TRUE((*ws)->registry().Register(Registration("w", {{"app", root + "/app"}})).ok());
  ASSERT_TRUE((*ws)->conversations().Provision(Provision("w", "c", {"a"})).ok());
  fs::rename(root + "/app", root + "/app.old");
  fs::create_directory_symlink(root + "/other", root + "/app");
  auto c2 = (*ws)->conversations().Provision(Provision("w", "c2", {"b"}));
  EXPECT_TRUE(absl::IsFailedPrecondition(c2.status())) << c2.status();
  EXPECT_TRUE(absl::StrContains(c2.status().message(), "register the workspace again"))
      << c2.status();
  EXPECT_FALSE(fs::exists(root + "/data/workspaces/w/conversations/c2"));
}

// What a Launch pinned must be what lies at the path without a symlink, now: a harness workdir
// inside repos/ is the agent's to swap (the e2e attack races it; here each step is taken by hand).
TEST_F(WorkspacesTest, ConfirmPinnedRefusesASymlinkAndAnotherObject) {
  VOLUME_OR_SKIP(xfs, TestVolume::Kind::kXfsReflink);
  const std::string root = xfs->path();
  MakeRepo(root + "/app", "app");
  auto ws = Workspaces::Open(root + "/data");
  ASSERT_TRUE(ws.ok()) << ws.status();
  ASSERT_TRUE((*ws)->registry().Register(Registration("w", {{"app", root + "/app"}})).ok());
  ASSERT_TRUE((*ws)->conversations().Provision(Provision("w", "c", {"a1"})).ok());
  const std::string app = root + "/data/workspaces/w/conversations/c/repos/app";
  fs::create_directory(app + "/sub");
  auto id = [](const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return std::pair<uint64_t, uint64_t>(st.st_dev, st.st_ino);
  };
  const auto sub = id(app + "/sub");
  const auto checkout = id(root + "/app");
  EXPECT_TRUE((*ws)->ConfirmPinned(app + "/sub", sub.first, sub.second).ok());
  // Pinned through the symlink (the checkout), the name a directory again: another object.
  absl::Status other = (*ws)->ConfirmPinned(app + "/sub", checkout.first, checkout.second);
  EXPECT_TRUE(absl::IsFailedPrecondition(other)) << other;
  // The name a symlink now: never followed, whatever it leads to.
  fs::rename(app + "/sub", app + "/sub.dir");
  fs::create_directory_symlink(app + "/sub.dir", app + "/sub");
  absl::Status link = (*ws)->ConfirmPinned(app + "/sub", sub.first, sub.second);
  EXPECT_TRUE(absl::IsFailedPrecondition(link)) << link;
  EXPECT_TRUE(absl::StrContains(link.message(), "symlink")) << link;
  // A component above it a symlink: the same.
  fs::rename(app, app + ".moved");
  fs::create_directory_symlink(app + ".moved", app);
  EXPECT_TRUE(
      absl::IsFailedPrecondition((*ws)->ConfirmPinned(app + "/sub.dir", sub.first, sub.second)));
  // Outside the data directory (the attachments): not the data directory's to confirm.
  EXPECT_TRUE((*ws)->ConfirmPinned(root + "/app", 0, 0).ok());
}

// Another local user who could rename a directory above the data directory (or plant a symlink
// where it is configured) could swap the whole tree under the paths binds, clones and removals
// use: refused at start, before anything is created.
TEST_F(WorkspacesTest, ADataDirAnotherUserCouldSwapIsRefused) {
  VOLUME_OR_SKIP(xfs, TestVolume::Kind::kXfsReflink);
  const std::string root = xfs->path();
  struct Case {
    std::string dir;
    mode_t mode;
    uid_t owner;
    const char* says;  // nullptr: accepted
  };
  const Case kCases[] = {
      {root + "/world", 0777, 0, "writable by group or others"},
      {root + "/group", 0775, 0, "writable by group or others"},
      {root + "/alice", 0755, 65534, "uid 65534"},
      {root + "/sticky", 01777, 0, nullptr},
      {root + "/mine", 0755, 0, nullptr},
  };
  for (const Case& c : kCases) {
    ASSERT_EQ(::mkdir(c.dir.c_str(), c.mode), 0) << c.dir;
    ASSERT_EQ(::chmod(c.dir.c_str(), c.mode), 0);
    ASSERT_EQ(::chown(c.dir.c_str(), c.owner, c.owner), 0);
    auto ws = Workspaces::Open(c.dir + "/data");
    if (c.says == nullptr) {
      EXPECT_TRUE(ws.ok()) << c.dir << ": " << ws.status();
      continue;
    }
    EXPECT_TRUE(absl::IsFailedPrecondition(ws.status())) << c.dir << ": " << ws.status();
    EXPECT_TRUE(absl::StrContains(ws.status().message(), c.says)) << ws.status();
    EXPECT_FALSE(fs::exists(c.dir + "/data")) << c.dir;
  }
  // A symlink where the data directory is configured, to a private directory of ours.
  ASSERT_EQ(::mkdir((root + "/real").c_str(), 0700), 0);
  fs::create_directory_symlink(root + "/real", root + "/sticky/data-link");
  auto linked = Workspaces::Open(root + "/sticky/data-link");
  EXPECT_TRUE(absl::IsFailedPrecondition(linked.status())) << linked.status();
  EXPECT_TRUE(absl::StrContains(linked.status().message(), "symlink")) << linked.status();
  EXPECT_TRUE(Entries(root + "/real").empty());
}

TEST_F(WorkspacesTest, DataDirIsLockedPrivateAndNeverFollowsSymlinks) {
  VOLUME_OR_SKIP(xfs, TestVolume::Kind::kXfsReflink);
  const std::string root = xfs->path();
  MakeRepo(root + "/app", "app");
  {
    auto first = Workspaces::Open(root + "/data");
    ASSERT_TRUE(first.ok()) << first.status();
    auto second = Workspaces::Open(root + "/data");
    EXPECT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
    EXPECT_TRUE(absl::StrContains(second.status().message(), "another broker"));
    struct stat st;
    ASSERT_EQ(::stat((root + "/data").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    ASSERT_TRUE((*first)->registry().Register(Registration("w", {{"app", root + "/app"}})).ok());
    ASSERT_TRUE((*first)->conversations().Provision(Provision("w", "c", {"a"})).ok());
    // A broker that died mid-way left a staging and a trash directory.
    fs::create_directories(root + "/data/workspaces/w/conversations/.staging-c-1/repos");
    fs::create_directories(root + "/data/workspaces/w/conversations/.trash-c-2/agents");
    // One it cannot remove (a mount inside): reported, and the broker starts all the same.
    fs::create_directories(root + "/data/workspaces/w/conversations/.trash-c-3/m");
    ASSERT_EQ(::mount("none", (root + "/data/workspaces/w/conversations/.trash-c-3/m").c_str(),
                      "tmpfs", 0, nullptr),
              0);
  }
  {
    auto reopened = Workspaces::Open(root + "/data");
    ASSERT_TRUE(reopened.ok()) << reopened.status();
    EXPECT_EQ(Entries(root + "/data/workspaces/w/conversations"),
              (std::vector<std::string>{".trash-c-3", "c"}));
    ASSERT_EQ(::umount2((root + "/data/workspaces/w/conversations/.trash-c-3/m").c_str(), 0), 0);
    // The registration survived the restart.
    EXPECT_TRUE((*reopened)->registry().Get("w").ok());
    // conversations/ swapped for a symlink elsewhere: never followed.
    fs::create_directories(root + "/elsewhere");
    fs::rename(root + "/data/workspaces/w/conversations", root + "/data/workspaces/w/moved");
    fs::create_directory_symlink(root + "/elsewhere", root + "/data/workspaces/w/conversations");
    auto c = (*reopened)->conversations().Provision(Provision("w", "c2", {"a"}));
    EXPECT_TRUE(absl::IsFailedPrecondition(c.status())) << c.status();
    EXPECT_TRUE(Entries(root + "/elsewhere").empty());
  }
  ::chmod((root + "/data").c_str(), 0770);
  auto open = Workspaces::Open(root + "/data");
  EXPECT_TRUE(absl::IsFailedPrecondition(open.status())) << open.status();
  EXPECT_TRUE(absl::StrContains(open.status().message(), "writable by group or others"));
}

}  // namespace
}  // namespace ccsandbox::workspace
