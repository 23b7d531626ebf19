#include "policy/plan/dispatch_binds.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

constexpr char kConv[] = "/data/workspaces/w/conversations/c";

ConversationDirs Dirs(bool repos, bool attachments) {
  ConversationDirs dirs;
  dirs.agent_workdir = absl::StrCat(kConv, "/agents/a1/work");
  dirs.agent_config_dir = absl::StrCat(kConv, "/agents/a1/config");
  dirs.repos_dir = absl::StrCat(kConv, "/repos");
  dirs.repos_present = repos;
  dirs.attachments_dir = "/spaces/s/attachments";
  dirs.attachments_present = attachments;
  return dirs;
}

// "rw PATH" / "ro PATH" per bind, with the conversation's prefix as "C".
std::string Binds(const DispatchBinds& b) {
  std::vector<std::string> out;
  for (const v1::SandboxBindMount& m : b.bind_mounts) {
    EXPECT_EQ(m.host_path(), m.guest_path());
    std::string path = m.host_path();
    if (absl::StartsWith(path, kConv)) path = "C" + path.substr(sizeof(kConv) - 1);
    out.push_back(absl::StrCat(m.read_only() ? "ro " : "rw ", path));
  }
  return absl::StrJoin(out, ", ");
}

std::string Roots(const DispatchBinds& b) {
  std::vector<std::string> out;
  for (const v1::ConfinementRoot& r : b.confinement_roots) {
    std::string path = r.path();
    if (absl::StartsWith(path, kConv)) path = "C" + path.substr(sizeof(kConv) - 1);
    out.push_back(absl::StrCat(r.writable() ? "rw " : "ro ", path));
  }
  return absl::StrJoin(out, ", ");
}

struct Case {
  const char* name;
  v1::WorkspaceDispatch::Kind kind;
  bool repos;
  bool attachments;
  std::string run_workdir;
  std::string binds;  // expected, or the error's start
  std::string roots;
};

TEST(PlanDispatchBinds, Table) {
  const std::string agent = absl::StrCat(kConv, "/agents/a1/work");
  const std::string repo = absl::StrCat(kConv, "/repos/app");
  const std::vector<Case> cases = {
      {"overlay, all four", v1::WorkspaceDispatch::KIND_OVERLAY, true, true, "",
       "rw C/agents/a1/work, ro C/agents/a1/config, rw C/repos, ro /spaces/s/attachments",
       "rw C/agents/a1/work, ro C/agents/a1/config, rw C/repos, ro /spaces/s/attachments"},
      {"overlay is the default kind", v1::WorkspaceDispatch::KIND_UNSPECIFIED, true, false, "",
       "rw C/agents/a1/work, ro C/agents/a1/config, rw C/repos",
       "rw C/agents/a1/work, ro C/agents/a1/config, rw C/repos"},
      {"overlay without repos/ nor attachments", v1::WorkspaceDispatch::KIND_OVERLAY, false, false,
       "", "rw C/agents/a1/work, ro C/agents/a1/config",
       "rw C/agents/a1/work, ro C/agents/a1/config"},
      {"overlay refuses a workdir", v1::WorkspaceDispatch::KIND_OVERLAY, true, true, agent,
       "workdir: only for harness bash", ""},
      {"harness bash in a clone binds only it", v1::WorkspaceDispatch::KIND_HARNESS_BASH, true,
       true, repo, "rw C/repos/app", "rw C/repos/app, rw C/repos, ro /spaces/s/attachments"},
      {"harness bash in the agent's directory", v1::WorkspaceDispatch::KIND_HARNESS_BASH, true,
       false, agent + "/sub", "rw C/agents/a1/work/sub", "rw C/agents/a1/work/sub, rw C/repos"},
      {"harness bash in a sibling's directory", v1::WorkspaceDispatch::KIND_HARNESS_BASH, true,
       false, absl::StrCat(kConv, "/agents/a2/work"), "workdir: '", ""},
      {"harness bash in the agent's config", v1::WorkspaceDispatch::KIND_HARNESS_BASH, true, false,
       absl::StrCat(kConv, "/agents/a1/config"), "workdir: '", ""},
      {"harness bash in repos/ when absent", v1::WorkspaceDispatch::KIND_HARNESS_BASH, false, false,
       repo, "workdir: '", ""},
      {"harness bash, prefix is not a parent", v1::WorkspaceDispatch::KIND_HARNESS_BASH, true,
       false, agent + "2", "workdir: '", ""},
      {"harness bash, not normalised", v1::WorkspaceDispatch::KIND_HARNESS_BASH, true, false,
       repo + "/../../agents/a2/work", "workdir: '", ""},
      {"harness bash, relative", v1::WorkspaceDispatch::KIND_HARNESS_BASH, true, false, "repos/app",
       "workdir: '", ""},
      {"harness bash, empty", v1::WorkspaceDispatch::KIND_HARNESS_BASH, true, false, "",
       "workdir: '", ""},
  };
  for (const Case& c : cases) {
    absl::StatusOr<DispatchBinds> b =
        PlanDispatchBinds(Dirs(c.repos, c.attachments), c.kind, c.run_workdir);
    if (c.roots.empty()) {
      ASSERT_FALSE(b.ok()) << c.name;
      EXPECT_TRUE(absl::IsInvalidArgument(b.status())) << c.name;
      EXPECT_TRUE(absl::StartsWith(b.status().message(), c.binds))
          << c.name << ": " << b.status().message();
      continue;
    }
    ASSERT_TRUE(b.ok()) << c.name << ": " << b.status();
    EXPECT_EQ(Binds(*b), c.binds) << c.name;
    EXPECT_EQ(Roots(*b), c.roots) << c.name;
    EXPECT_EQ(b->workdir, c.run_workdir.empty() ? agent : c.run_workdir) << c.name;
  }
}

// Whatever the kind and layout, no bind or root reaches another agent's directory.
TEST(PlanDispatchBinds, NeverASibling) {
  for (auto kind :
       {v1::WorkspaceDispatch::KIND_OVERLAY, v1::WorkspaceDispatch::KIND_HARNESS_BASH}) {
    for (bool repos : {false, true}) {
      const std::string workdir =
          kind == v1::WorkspaceDispatch::KIND_OVERLAY ? "" : absl::StrCat(kConv, "/agents/a1/work");
      absl::StatusOr<DispatchBinds> b = PlanDispatchBinds(Dirs(repos, true), kind, workdir);
      ASSERT_TRUE(b.ok()) << b.status();
      for (const auto& m : b->bind_mounts) {
        EXPECT_FALSE(absl::StrContains(m.host_path(), "/agents/a2")) << m.host_path();
        EXPECT_NE(m.host_path(), absl::StrCat(kConv, "/agents"));
        EXPECT_NE(m.host_path(), kConv);
      }
    }
  }
}

}  // namespace
}  // namespace ccsandbox::policy
