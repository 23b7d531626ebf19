// The files and directories a git config makes git run or read as more config, so the deny
// scan can make them read-only too (and the create guard refuse them while missing):
// `core.hooksPath` (husky's `.husky/_`, a `.githooks` directory), `include.path` and
// `includeIf.*.path`, and every key whose value is a program git runs — fsmonitor,
// sshCommand, editor, pager, askpass, filter clean/smudge/process, diff textconv/command/
// external, merge drivers, credential helpers, gpg programs, `!` aliases — when that
// program is named by a path (contains '/'). Pure: text in, paths out.
//
//   GitConfigPaths found = GitConfigProgramPaths(text, "/w/repo", "/w/repo/.git", "/home/u");
//
// git's config syntax as git's config.c reads it — `[section]`, `[section "sub"]`,
// `[section.sub]`, `key = value`, comments (`#`, `;`), double quotes, the escapes \t \b \n \\ \"
// and a '\' that continues a value on the next line; names are case-insensitive; reading stops at
// a line git refuses (git then refuses to run) — checked against `git config --list` by
// tests/fuzz/git_config_fuzz.cc: a value this reader reads otherwise than git is a hooks
// directory or program left writable. Relative values resolve as
// git resolves them: hooksPath and fsmonitor against the worktree, include paths against the
// directory of the config file. `~/` values and values that are commands, not paths, are
// skipped. The results are lexically normalised absolute paths (the caller checks they exist).
#ifndef CCSANDBOX_POLICY_PLAN_GIT_CONFIG_PATHS_H_
#define CCSANDBOX_POLICY_PLAN_GIT_CONFIG_PATHS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ccsandbox::policy {

struct GitConfigPaths {
  std::vector<std::string> programs;  // what git runs or reads as hooks: make read-only
  std::vector<std::string> includes;  // more config to read, and to make read-only
};

// `home` expands a leading "~/" (empty: such values are skipped); `worktree` resolves
// relative program paths (empty: relative ones are skipped, e.g. in a user-level config,
// where they depend on the repository git runs in).
GitConfigPaths GitConfigProgramPaths(absl::string_view config_text, absl::string_view worktree,
                                     absl::string_view config_dir, absl::string_view home = "");

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_GIT_CONFIG_PATHS_H_
