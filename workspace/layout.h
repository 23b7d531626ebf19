// The names of the data directory's tree (proto/workspace.proto shows it), and which parts of
// it a sandbox may be given: a conversation's repos/ and an agent's work/ and config/, never
// what holds several conversations or agents.
#ifndef CCSANDBOX_WORKSPACE_LAYOUT_H_
#define CCSANDBOX_WORKSPACE_LAYOUT_H_

#include "absl/strings/string_view.h"

namespace ccsandbox::workspace {

inline constexpr char kWorkspaces[] = "workspaces";
inline constexpr char kConversations[] = "conversations";
inline constexpr char kRepos[] = "repos";
inline constexpr char kAgents[] = "agents";
inline constexpr char kWork[] = "work";
inline constexpr char kConfig[] = "config";

// True when `relative` (below the data directory, normalised, no leading '/') is at or below
// workspaces/W/conversations/C/repos or workspaces/W/conversations/C/agents/A/{work,config},
// with W, C and A not hidden (staging and trash names start with '.'). Anything else — the data
// directory's root, a workspace, all conversations, one whole conversation, agents/ — holds
// another conversation's or another agent's files.
bool IsBindableBelowDataDir(absl::string_view relative);

}  // namespace ccsandbox::workspace

#endif  // CCSANDBOX_WORKSPACE_LAYOUT_H_
