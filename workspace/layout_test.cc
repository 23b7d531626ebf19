#include "workspace/layout.h"

#include "gtest/gtest.h"

namespace ccsandbox::workspace {
namespace {

TEST(IsBindableBelowDataDir, Table) {
  struct Case {
    const char* relative;
    bool bindable;
  } cases[] = {
      {"workspaces/w/conversations/c/repos", true},
      {"workspaces/w/conversations/c/repos/app", true},
      {"workspaces/w/conversations/c/repos/app/src", true},
      {"workspaces/w/conversations/c/agents/a/work", true},
      {"workspaces/w/conversations/c/agents/a/work/x", true},
      {"workspaces/w/conversations/c/agents/a/config", true},
      {"", false},
      {"workspaces", false},
      {"workspaces/w", false},
      {"workspaces/w/workspace.json", false},
      {"workspaces/w/conversations", false},
      {"workspaces/w/conversations/c", false},  // every agent of c
      {"workspaces/w/conversations/c/agents", false},
      {"workspaces/w/conversations/c/agents/a", false},  // work and config together
      {"workspaces/w/conversations/c/agents/a/other", false},
      {"workspaces/w/conversations/.staging-c-0123/repos", false},
      {"workspaces/w/conversations/.trash-c-0123/agents/a/work", false},
      {"workspaces/w/conversations/c/agents/.x/work", false},
      {"workspaces/w/conversations/c/repos/../agents/b/work", false},
      {"workspaces/w/conversations/c//repos", false},
      {".lock", false},
      {"other/w/conversations/c/repos", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(IsBindableBelowDataDir(c.relative), c.bindable) << c.relative;
  }
}

}  // namespace
}  // namespace ccsandbox::workspace
