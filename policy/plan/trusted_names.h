// What the host runs or trusts automatically, so that a sandbox may never plant it: shell
// start-up files, git metadata that names programs or other repositories, keys and secret
// stores, desktop autostart and user services, PATH directories, direnv, editor tasks and
// agent configuration. ONE list for Linux and macOS, extendable per launch
// (SandboxSpec.denyWriteNames). Pure.
//
// A rule is a relative path pattern matched against the END of a path, at any depth:
// components separated by '/', each a one-name glob (filename_patterns.h: `*`, `?`, `[...]`,
// ASCII case folded), and `**` for any number of components, none included.
//   ".bashrc"                 anything named .bashrc
//   ".git/hooks/**"           .git/hooks itself and everything beneath it
//   ".git/modules/**/config"  a submodule's config, at any depth of nesting
//
// How the rules apply (docs/linux-native.md):
//   - existing at Launch: read-only (the deny scan), unless the rule is creation-only;
//   - a new name that matches: refused at creation by the create guard (EACCES + violation);
//   - a directory renamed, or a symlink created, at a path where a rule could match something
//     beneath it (".config" for ".config/git/**"): refused too, since what it holds or points
//     to would become trusted under its new name (MatchBeneath).
//
//   absl::StatusOr<TrustedNameRules> rules = TrustedNameRules::Create(StandardTrustedNameRules());
//   rules->Match("/w/repo/.git/hooks/pre-commit");  // ".git/hooks/**"
#ifndef CCSANDBOX_POLICY_PLAN_TRUSTED_NAMES_H_
#define CCSANDBOX_POLICY_PLAN_TRUSTED_NAMES_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::policy {

struct TrustedName {
  const char* rule;
  const char* why;
  // Existing matches are made read-only at Launch. False: creation-only.
  bool existing = true;
  // With `existing`: also when the match is a directory (false: files and links only).
  bool existing_dirs = true;
  // The rule does not apply to paths this rule matches (e.g. "HEAD" inside ".git/**").
  const char* unless = nullptr;
};

// The standard list, each with the reason it is there.
const std::vector<TrustedName>& StandardTrustedNames();
std::vector<std::string> StandardTrustedNameRules();

// Trusted paths relative to the user's HOME only (a `bin/` in a project is not on anyone's
// PATH; `~/bin` is): the broker anchors them to each home directory and hands them to the
// create guard as absolute protected paths; existing ones are read-only.
const std::vector<TrustedName>& HomeTrustedPaths();

class TrustedNameRules {
 public:
  // INVALID_ARGUMENT naming `field` and the rule when one is empty, absolute, has an empty,
  // "." or ".." component, or a malformed glob.
  static absl::StatusOr<TrustedNameRules> Create(const std::vector<std::string>& rules,
                                                 absl::string_view field = "denyWriteNames");

  // The first rule an absolute, normalised `path` ends in, or nullopt.
  std::optional<std::string> Match(absl::string_view path) const;
  // The first rule that could match something strictly beneath `dir` through `dir`'s own
  // name (a match that starts at or above `dir`'s last component), or nullopt.
  std::optional<std::string> MatchBeneath(absl::string_view dir) const;

  const std::vector<std::string>& rules() const { return rules_; }

 private:
  TrustedNameRules(std::vector<std::string> rules, std::vector<std::vector<std::string>> components,
                   std::vector<std::vector<std::string>> unless);
  std::vector<std::string> rules_;
  std::vector<std::vector<std::string>> components_;  // each prefixed with "**"
  std::vector<std::vector<std::string>> unless_;      // empty: no exception
  // The deny scan matches every entry of a tree: a rule whose first component is a literal
  // name can only match a path that has a component of that name (ASCII case folded), so
  // only those rules are tried. Rules starting with a glob are always tried.
  std::map<std::string, std::vector<size_t>> by_first_name_;
  // Rules whose first component is a glob: tried when a component ends with the literal
  // text after its last '*' ("*.git" -> ".git"; "" = always).
  std::vector<std::pair<std::string, size_t>> by_suffix_;
};

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_TRUSTED_NAMES_H_
