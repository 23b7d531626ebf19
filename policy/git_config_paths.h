// The files and directories a repository's existing git config makes git run or read as more
// config, so the deny scan can make them read-only too: `core.hooksPath` (husky's
// `.husky/_`, a `.githooks` directory), `include.path` and `includeIf.*.path`, and a
// `core.fsmonitor` that names a script. Pure: text in, paths out.
//
//   for (const std::string& p : GitConfigProgramPaths(text, "/w/repo", "/w/repo/.git")) ...
//
// A minimal reader of git's INI syntax: `[section]`, `[section "sub"]`, `key = value`,
// comments (`#`, `;`), double quotes; names are case-insensitive. Relative values resolve as
// git resolves them: hooksPath and fsmonitor against the worktree, include paths against the
// directory of the config file. `~/` values and values that are commands, not paths, are
// skipped. The results are lexically normalised absolute paths (the caller checks they exist).
#ifndef CCSANDBOX_POLICY_GIT_CONFIG_PATHS_H_
#define CCSANDBOX_POLICY_GIT_CONFIG_PATHS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ccsandbox::policy {

std::vector<std::string> GitConfigProgramPaths(absl::string_view config_text,
                                               absl::string_view worktree,
                                               absl::string_view config_dir);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_GIT_CONFIG_PATHS_H_
