// git and gh: the spec's commit, push, pull-request, review and tracker rules.
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "policy/command/program_util.h"

namespace ccsandbox::policy::programs {
namespace {

// ---------------------------------------------------------------------------------------------
// git.

// Configuration keys whose value git runs as a command.
bool IsGitCommandKey(absl::string_view key_in) {
  std::string key = absl::AsciiStrToLower(key_in);
  if (absl::StartsWith(key, "alias.")) return true;
  if (OneOf(key, {"core.pager",
                  "core.sshcommand",
                  "core.editor",
                  "core.fsmonitor",
                  "core.askpass",
                  "core.hookspath",
                  "sequence.editor",
                  "diff.external",
                  "gpg.program",
                  "gpg.ssh.program",
                  "gpg.x509.program",
                  "credential.helper",
                  "uploadpack.packobjectshook",
                  "sendemail.sendmailcmd",
                  "sendemail.smtpserver",
                  "merge.tool",
                  "diff.tool",
                  "web.browser",
                  "protocol.ext.allow",
                  "remote.origin.uploadpack",
                  "remote.origin.receivepack",
                  "core.gitproxy",
                  "ssh.variant",
                  "gpg.format",
                  "instaweb.httpd"})) {
    return true;
  }
  for (absl::string_view suffix :
       {".textconv", ".command", ".cmd", ".clean", ".smudge", ".process", ".driver", ".helper",
        ".uploadpack", ".receivepack", ".proxy", ".program", ".path"}) {
    if (absl::EndsWith(key, suffix)) return true;
  }
  return absl::StartsWith(key, "pager.") || absl::StartsWith(key, "hook.");
}

// `-c key=value` before the subcommand.
void GitConfigOverride(const Call& c, const ShellWord& w) {
  const size_t eq = w.text.find('=');
  absl::string_view key = absl::string_view(w.text).substr(0, eq);
  if (!IsGitCommandKey(key)) return;
  if (eq == std::string::npos || !w.literal()) {
    c.Add(R::kDynamicCode, absl::StrCat("-c ", key, " sets a command only known at run time"));
    return;
  }
  std::string value = w.text.substr(eq + 1);
  std::string lower_key = absl::AsciiStrToLower(key);
  if (lower_key == "core.hookspath" || absl::EndsWith(lower_key, ".path")) {
    c.Add(R::kOpaqueProgram, absl::StrCat("-c ", key, " runs programs from ", Quote(value)));
    return;
  }
  if (lower_key == "protocol.ext.allow") {
    c.Add(R::kOpaqueProgram, "-c protocol.ext.allow lets ext:: URLs run commands");
    return;
  }
  if (absl::StartsWith(lower_key, "alias.")) {
    if (!absl::StartsWith(value, "!")) return;  // an alias for other git subcommands
    value = value.substr(1);
  }
  c.sink.RunCode(value, absl::StrCat("git -c ", key));
}

struct GitSub {
  absl::string_view name;
  Args rest;  // the subcommand's arguments
};

bool GitRestHas(const GitSub& g, std::initializer_list<absl::string_view> set) {
  for (const ShellWord& w : g.rest) {
    if (OneOf(w.text, set)) return true;
    for (absl::string_view s : set) {
      if (absl::StartsWith(s, "--") && absl::StartsWith(w.text, s) && w.text.size() > s.size() &&
          w.text[s.size()] == '=') {
        return true;
      }
    }
  }
  return false;
}

size_t GitOperandCount(const GitSub& g, absl::string_view skip_values = "") {
  size_t n = 0;
  bool only = false;
  for (size_t i = 0; i < g.rest.size(); ++i) {
    const std::string& t = g.rest[i].text;
    if (!only && t == "--") {
      only = true;
      continue;
    }
    if (!only && t.size() > 1 && t[0] == '-') {
      if (t.find('=') == std::string::npos && InList(t, skip_values)) ++i;
      continue;
    }
    ++n;
  }
  return n;
}

void GitPush(const Call& c, const GitSub& g) {
  ArgScan s = ScanArgs(g.rest, 0, {"o", "push-option repo receive-pack exec"}, false);
  if (s.HasAny({"-n", "--dry-run"})) {
    c.Add(R::kNetworkAccess, "push --dry-run contacts the remote without pushing");
    return;
  }
  std::vector<std::string> refs;
  if (s.HasAny({"--all", "--mirror", "--branches"}) || s.dynamic) refs.push_back("*");
  if (s.Has("--tags") || s.Has("--follow-tags")) refs.push_back("refs/tags/*");
  std::vector<const ShellWord*> ops = Operands(g.rest, s);
  for (size_t i = 1; i < ops.size(); ++i) {
    const ShellWord& spec = *ops[i];
    if (!spec.literal()) {
      refs.push_back("*");
      continue;
    }
    absl::string_view ref = spec.text;
    absl::ConsumePrefix(&ref, "+");
    const size_t colon = ref.find(':');
    if (colon != absl::string_view::npos) {
      absl::string_view dst = ref.substr(colon + 1);
      ref = dst.empty() ? ref.substr(0, colon) : dst;
    }
    refs.emplace_back(ref == "HEAD" ? "" : ref);
  }
  if (refs.empty()) refs.push_back("");  // the current branch's upstream
  std::vector<std::string> unique;
  for (std::string& r : refs) {
    if (std::find(unique.begin(), unique.end(), r) == unique.end()) unique.push_back(std::move(r));
  }
  refs = std::move(unique);
  std::vector<std::string> shown;
  for (const std::string& r : refs) shown.push_back(r.empty() ? "the current branch" : r);
  c.sink.AddPush(refs, absl::StrCat("git push updates ", absl::StrJoin(shown, ", "),
                                    " on a remote repository"));
}

void GitCommitLike(const Call& c, const GitSub& g) {
  if (g.name == "rebase") {
    ArgScan s = ScanArgs(g.rest, 0, {"xsX", "exec onto strategy strategy-option"}, false);
    for (const Opt& o : s.opts) {
      if ((o.name == "-x" || o.name == "--exec") && o.has_value) {
        ShellWord code = OptWord(o);
        c.Code(code, "git rebase --exec");
      }
    }
  }
  if (GitRestHas(g, {"--abort", "--quit", "--skip"})) {
    c.Add(R::kMutating, absl::StrCat(g.name, " abandons an operation in progress"));
    return;
  }
  if (g.name == "commit" && GitRestHas(g, {"--dry-run"})) {
    c.Add(R::kReadOnly, "commit --dry-run only shows what would be committed");
    return;
  }
  if (g.name == "pull") {
    c.Add(R::kCreateCommit, "pull fetches and merges or rebases (creates commits)");
    return;
  }
  c.Add(R::kCreateCommit, absl::StrCat(g.name, " creates commits"));
}

void GitBranch(const Call& c, const GitSub& g) {
  if (GitRestHas(g, {"-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-u",
                     "--set-upstream-to", "--unset-upstream", "--edit-description", "-f", "--force",
                     "--track", "-t"})) {
    c.Add(R::kMutating, absl::StrCat(g.name, " changes branches"));
    return;
  }
  const bool list_mode =
      GitRestHas(g, {"-l", "--list", "-a", "--all", "-r", "--remotes", "--contains",
                     "--no-contains", "--merged", "--no-merged", "--points-at", "--show-current"});
  if (GitOperandCount(g, "--sort --format --color --column --abbrev") == 0 || list_mode) {
    c.Add(R::kReadOnly, absl::StrCat(g.name, " lists branches"));
    return;
  }
  c.Add(R::kMutating, absl::StrCat(g.name, " creates a branch"));
}

void GitTag(const Call& c, const GitSub& g) {
  if (GitRestHas(g, {"-d", "--delete", "-a", "--annotate", "-s", "--sign", "-u", "--local-user",
                     "-m", "--message", "-F", "--file", "-f", "--force", "-e", "--edit"})) {
    c.Add(R::kMutating, "tag creates or deletes tags");
    return;
  }
  const bool list_mode =
      GitRestHas(g, {"-l", "--list", "-n", "--contains", "--no-contains", "--points-at", "--merged",
                     "--no-merged", "-v", "--verify"});
  if (GitOperandCount(g, "--sort --format --color --column") == 0 || list_mode) {
    c.Add(R::kReadOnly, "tag lists tags");
    return;
  }
  c.Add(R::kMutating, "tag creates a tag");
}

void GitConfig(const Call& c, const GitSub& g) {
  if (GitRestHas(g, {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list",
                     "--get-color", "--get-colorbool"})) {
    c.Add(R::kReadOnly, "config reads configuration");
    return;
  }
  const bool writes = GitRestHas(g, {"--unset", "--unset-all", "--add", "--replace-all", "-e",
                                     "--edit", "--rename-section", "--remove-section"});
  std::vector<const ShellWord*> ops;
  ArgScan s = ScanArgs(g.rest, 0, {"f", "file blob type default comment value"}, false);
  ops = Operands(g.rest, s);
  if (!ops.empty() && OneOf(ops[0]->text, {"get", "list"})) {
    c.Add(R::kReadOnly, "config reads configuration");
    return;
  }
  if (!writes && ops.size() <= 1) {
    c.Add(R::kReadOnly, "config reads configuration");
    return;
  }
  size_t key = (!ops.empty() && OneOf(ops[0]->text, {"set", "unset"})) ? 1 : 0;
  if (key < ops.size() && IsGitCommandKey(ops[key]->text)) {
    c.Add(R::kOpaqueProgram,
          absl::StrCat("config sets ", ops[key]->text, ", a command later git invocations run"));
  }
  c.Add(R::kMutating, "config changes configuration");
}

// Subcommands with a read-only first word and mutating others.
void GitVerbs(const Call& c, const GitSub& g, std::initializer_list<absl::string_view> reads,
              bool no_verb_reads) {
  size_t i = FirstOperand(g.rest, 0);
  if (i >= g.rest.size()) {
    c.Add(no_verb_reads ? R::kReadOnly : R::kMutating,
          absl::StrCat(g.name, no_verb_reads ? " only shows state" : " changes the repository"));
    return;
  }
  if (OneOf(g.rest[i].text, reads)) {
    c.Add(R::kReadOnly, absl::StrCat(g.name, " ", g.rest[i].text, " only shows state"));
    return;
  }
  c.Add(R::kMutating, absl::StrCat(g.name, " ", g.rest[i].text, " changes the repository"));
}

void Git(const Call& c) {
  size_t i = 1;
  for (; i < c.argv.size(); ++i) {
    const ShellWord& w = c.argv[i];
    const std::string& t = w.text;
    if (!w.literal()) break;
    if (t == "-c" && i + 1 < c.argv.size()) {
      GitConfigOverride(c, c.argv[++i]);
      continue;
    }
    if (OneOf(t, {"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
                  "--attr-source", "--list-cmds"})) {
      ++i;
      continue;
    }
    if (t == "--config-env" || absl::StartsWith(t, "--config-env=")) {
      std::string spec = t == "--config-env" ? (i + 1 < c.argv.size() ? c.argv[++i].text : "")
                                             : t.substr(sizeof("--config-env=") - 1);
      absl::string_view key = absl::string_view(spec).substr(0, spec.find('='));
      if (IsGitCommandKey(key)) {
        c.Add(R::kDynamicCode, absl::StrCat("--config-env sets ", key,
                                            " from the environment, a command only "
                                            "known at run time"));
      }
      continue;
    }
    if (absl::StartsWith(t, "--exec-path=")) {
      c.Add(R::kOpaqueProgram, "--exec-path runs git subcommands from another directory");
      continue;
    }
    if (OneOf(t, {"--version", "-v", "--help", "-h", "--html-path", "--man-path", "--info-path",
                  "--exec-path"})) {
      c.Add(R::kReadOnly, "prints information about itself");
      return;
    }
    if (absl::StartsWith(t, "-")) continue;
    break;
  }
  if (i >= c.argv.size()) {
    c.Add(R::kReadOnly, "without a subcommand prints its usage");
    return;
  }
  if (!c.argv[i].literal()) {
    c.Add(R::kDynamicCode,
          absl::StrCat("runs a subcommand only known at run time (", c.argv[i].raw, ")"));
    return;
  }
  for (size_t k = i + 1; k < c.argv.size(); ++k) {
    const std::string& t = c.argv[k].text;
    if (absl::StartsWith(t, "ext::")) {
      c.Add(R::kOpaqueProgram, "an ext:: URL makes git run a command");
    }
    // Programs git runs locally for the transport: ls-remote --upload-pack='…' runs it.
    for (absl::string_view opt : {"--upload-pack", "--receive-pack", "--exec"}) {
      if (t == opt && k + 1 < c.argv.size()) {
        c.Code(c.argv[k + 1], absl::StrCat("git ", opt));
      } else if (absl::StartsWith(t, opt) && t.size() > opt.size() && t[opt.size()] == '=') {
        ShellWord value = c.argv[k];
        value.text = t.substr(opt.size() + 1);
        c.Code(value, absl::StrCat("git ", opt));
      }
    }
    if (c.argv[k].text == "-u" && k + 1 < c.argv.size() &&
        absl::AsciiStrToLower(c.argv[i].text) == "ls-remote") {
      c.Code(c.argv[k + 1], "git ls-remote -u");
    }
  }
  const std::string sub = absl::AsciiStrToLower(c.argv[i].text);
  GitSub g{sub, c.argv.subspan(i + 1)};
  if (sub == "push") return GitPush(c, g);
  if (OneOf(sub, {"commit", "merge", "rebase", "cherry-pick", "revert", "am", "pull"})) {
    return GitCommitLike(c, g);
  }
  if (OneOf(sub, {"status",        "log",          "show",          "blame",
                  "annotate",      "ls-files",     "ls-tree",       "rev-parse",
                  "rev-list",      "describe",     "shortlog",      "cat-file",
                  "show-ref",      "for-each-ref", "name-rev",      "merge-base",
                  "whatchanged",   "diff-tree",    "diff-index",    "diff-files",
                  "check-ignore",  "check-attr",   "check-mailmap", "check-ref-format",
                  "count-objects", "fsck",         "verify-commit", "verify-tag",
                  "verify-pack",   "var",          "help",          "version",
                  "range-diff",    "cherry",       "show-branch",   "get-tar-commit-id",
                  "column",        "patch-id",     "fmt-merge-msg", "diff",
                  "grep",          "request-pull", "show-index",    "unpack-file",
                  "ls-refs"})) {
    if (OneOf(sub, {"diff", "log", "show", "format-patch"}) && GitRestHas(g, {"--output"})) {
      c.Add(R::kMutating, absl::StrCat(sub, " --output writes a file"));
      return;
    }
    if (sub == "grep" &&
        (GitRestHas(g, {"--open-files-in-pager"}) || AnyWordStartsWith(g.rest, 0, "-O"))) {
      c.Add(R::kOpaqueProgram, "grep -O runs a pager command on the matches");
      return;
    }
    if (OneOf(sub, {"diff", "log", "show"}) && GitRestHas(g, {"--ext-diff"})) {
      c.Add(R::kOpaqueProgram, absl::StrCat(sub, " --ext-diff runs the configured diff program"));
      return;
    }
    c.Add(R::kReadOnly, absl::StrCat(sub, " only reads the repository"));
    return;
  }
  if (sub == "ls-remote") return c.Add(R::kNetworkAccess, "ls-remote reads a remote's refs");
  if (sub == "fetch") {
    if (GitRestHas(g, {"--dry-run"})) {
      return c.Add(R::kNetworkAccess, "fetch --dry-run only contacts the remote");
    }
    return c.Add(R::kMutating, "fetch updates remote-tracking refs and objects");
  }
  if (sub == "clone") return c.Add(R::kMutating, "clone writes a new repository");
  if (sub == "branch") return GitBranch(c, g);
  if (sub == "tag") return GitTag(c, g);
  if (sub == "config") return GitConfig(c, g);
  if (sub == "remote") {
    size_t v = FirstOperand(g.rest, 0);
    if (v >= g.rest.size() || OneOf(g.rest[v].text, {"show", "get-url"})) {
      return c.Add(R::kReadOnly, "remote lists remotes");
    }
    return c.Add(R::kMutating, absl::StrCat("remote ", g.rest[v].text, " changes remotes"));
  }
  if (sub == "stash") return GitVerbs(c, g, {"list", "show"}, false);
  if (sub == "worktree") return GitVerbs(c, g, {"list"}, false);
  if (sub == "notes") return GitVerbs(c, g, {"list", "show", "get-ref"}, true);
  if (sub == "reflog") return GitVerbs(c, g, {"show", "exists"}, true);
  if (sub == "sparse-checkout") return GitVerbs(c, g, {"list"}, false);
  if (sub == "submodule") {
    size_t v = FirstOperand(g.rest, 0);
    if (v < g.rest.size() && g.rest[v].text == "foreach") {
      size_t code = FirstOperand(g.rest, v + 1);
      if (code < g.rest.size()) {
        if (code + 1 == g.rest.size()) {
          c.Code(g.rest[code], "git submodule foreach");
        } else {
          c.sink.RunArgv(g.rest.subspan(code));
        }
      }
      return;
    }
    return GitVerbs(c, g, {"status", "summary"}, true);
  }
  if (sub == "bisect") {
    size_t v = FirstOperand(g.rest, 0);
    if (v < g.rest.size() && g.rest[v].text == "run") {
      c.Add(R::kMutating, "bisect run checks out commits");
      if (v + 1 < g.rest.size()) c.sink.RunArgv(g.rest.subspan(v + 1));
      return;
    }
    return GitVerbs(c, g, {"log", "view", "visualize", "terms"}, false);
  }
  if (sub == "lfs") {
    size_t v = FirstOperand(g.rest, 0);
    if (v < g.rest.size() && g.rest[v].text == "push") {
      c.sink.AddPush({"*"}, "git lfs push uploads objects to a remote");
      return;
    }
    return GitVerbs(c, g, {"ls-files", "status", "env", "version", "logs", "locks"}, true);
  }
  if (sub == "archive") {
    if (GitRestHas(g, {"-o", "--output"})) return c.Add(R::kMutating, "archive writes a file");
    if (GitRestHas(g, {"--remote"})) return c.Add(R::kNetworkAccess, "archive reads a remote");
    return c.Add(R::kReadOnly, "archive writes to standard output");
  }
  if (sub == "format-patch") {
    if (GitRestHas(g, {"--stdout"})) return c.Add(R::kReadOnly, "format-patch --stdout");
    return c.Add(R::kMutating, "format-patch writes patch files");
  }
  if (sub == "apply") {
    if (GitRestHas(g, {"--check", "--stat", "--numstat", "--summary"}) &&
        !GitRestHas(g, {"--apply"})) {
      return c.Add(R::kReadOnly, "apply only checks the patch");
    }
    return c.Add(R::kMutating, "apply changes files");
  }
  if (sub == "hash-object" && !GitRestHas(g, {"-w"})) {
    return c.Add(R::kReadOnly, "hash-object only computes a hash");
  }
  if (sub == "symbolic-ref" && GitOperandCount(g) <= 1 && !GitRestHas(g, {"-d", "--delete"})) {
    return c.Add(R::kReadOnly, "symbolic-ref reads a ref");
  }
  if (sub == "interpret-trailers" && !GitRestHas(g, {"--in-place"})) {
    return c.Add(R::kReadOnly, "interpret-trailers writes to standard output");
  }
  if (sub == "send-email") return c.Add(R::kNetworkWrite, "send-email sends patches by mail");
  if (sub == "svn" || sub == "p4") {
    size_t v = FirstOperand(g.rest, 0);
    if (v < g.rest.size() && OneOf(g.rest[v].text, {"dcommit", "submit", "set-tree"})) {
      c.sink.AddPush({"*"}, absl::StrCat("git ", sub, " ", g.rest[v].text,
                                         " sends commits to a remote repository"));
      return;
    }
    return c.Add(R::kMutating, absl::StrCat(sub, " changes the repository"));
  }
  if (OneOf(sub, {"difftool", "mergetool", "gui", "citool", "gitk", "instaweb", "daemon",
                  "filter-branch", "filter-repo", "shell", "upload-pack", "receive-pack",
                  "http-backend", "credential", "web--browse"})) {
    return c.Add(R::kOpaqueProgram, absl::StrCat(sub, " runs other programs"));
  }
  if (OneOf(sub, {"add",
                  "rm",
                  "mv",
                  "restore",
                  "checkout",
                  "switch",
                  "reset",
                  "clean",
                  "init",
                  "gc",
                  "prune",
                  "repack",
                  "update-ref",
                  "update-index",
                  "symbolic-ref",
                  "commit-tree",
                  "hash-object",
                  "write-tree",
                  "read-tree",
                  "mktag",
                  "mktree",
                  "fast-import",
                  "replace",
                  "maintenance",
                  "pack-refs",
                  "rerere",
                  "merge-file",
                  "merge-tree",
                  "checkout-index",
                  "bundle",
                  "prune-packed",
                  "pack-objects",
                  "unpack-objects",
                  "index-pack",
                  "quiltimport",
                  "cvsimport",
                  "archimport",
                  "stage",
                  "notes",
                  "bugreport",
                  "diagnose",
                  "interpret-trailers",
                  "backfill",
                  "replay",
                  "refs",
                  "multi-pack-index",
                  "commit-graph",
                  "fsmonitor--daemon",
                  "scalar",
                  "mailsplit",
                  "mailinfo"})) {
    return c.Add(R::kMutating, absl::StrCat(sub, " changes the repository or working tree"));
  }
  c.Add(R::kUnknownProgram, absl::StrCat(sub, " is not a known git subcommand (an alias or a git-",
                                         sub, " program would run)"));
}

// ---------------------------------------------------------------------------------------------
// gh.

void Gh(const Call& c) {
  std::vector<std::string> words;
  bool dynamic = false;
  for (size_t i = 1; i < c.argv.size() && words.size() < 2; ++i) {
    const ShellWord& w = c.argv[i];
    if (!w.literal()) {
      dynamic = true;
      break;
    }
    if (OneOf(w.text, {"-R", "--repo", "--hostname"})) {
      ++i;
      continue;
    }
    if (absl::StartsWith(w.text, "-")) {
      if (words.empty() && OneOf(w.text, {"--version", "--help", "-h"})) {
        c.Add(R::kReadOnly, "prints its version or help");
        return;
      }
      continue;
    }
    words.push_back(w.text);
  }
  if (dynamic) {
    c.Add(R::kDynamicCode, "runs a subcommand only known at run time");
    return;
  }
  if (words.empty()) {
    c.Add(R::kReadOnly, "without a subcommand prints its usage");
    return;
  }
  const std::string& group = words[0];
  const std::string verb = words.size() > 1 ? words[1] : "";
  const std::string what = absl::StrCat(group, verb.empty() ? "" : " ", verb);
  auto read = [&] { c.Add(R::kNetworkAccess, absl::StrCat(what, " reads from GitHub")); };
  auto remote = [&] { c.Add(R::kChangeRemoteState, absl::StrCat(what, " changes GitHub")); };
  auto tracker = [&] {
    c.Add(R::kWriteExternalTracker, absl::StrCat(what, " writes to GitHub's issue tracker"));
  };
  if (OneOf(group, {"search", "status", "browse", "completion", "version", "help", "attestation",
                    "ruleset"})) {
    return read();
  }
  if (group == "pr") {
    if (verb == "create" || verb == "new") {
      return c.Add(R::kOpenPullRequest, absl::StrCat(what, " opens a pull request"));
    }
    if (OneOf(verb, {"merge", "review", "comment", "close", "reopen"})) {
      return c.Add(R::kPublishReviewOrMerge,
                   absl::StrCat(what, " publishes a review or performs a merge"));
    }
    if (OneOf(verb, {"list", "ls", "view", "diff", "status", "checks"})) return read();
    if (verb == "checkout" || verb == "co") {
      return c.Add(R::kMutating, absl::StrCat(what, " checks a branch out locally"));
    }
    return remote();
  }
  if (group == "issue") {
    if (OneOf(verb, {"list", "ls", "view", "status"})) return read();
    return tracker();
  }
  if (group == "label" || group == "project") {
    if (OneOf(verb, {"list", "ls", "view", "field-list", "item-list"})) return read();
    return tracker();
  }
  if (group == "release") {
    if (OneOf(verb, {"list", "ls", "view"})) return read();
    if (verb == "download") return c.Add(R::kMutating, absl::StrCat(what, " writes files"));
    return c.Add(R::kPublishPackage, absl::StrCat(what, " publishes a release"));
  }
  if (group == "repo") {
    if (OneOf(verb, {"list", "ls", "view"})) return read();
    if (verb == "clone" || verb == "set-default") {
      return c.Add(R::kMutating, absl::StrCat(what, " changes local files"));
    }
    return remote();
  }
  if (group == "api") {
    ArgScan s = ScanArgs(c.argv, 2,
                         {"XfFHpqtj",
                          "method field raw-field header preview jq "
                          "template input hostname cache"},
                         false);
    std::string method = "GET";
    if (s.HasAny({"-f", "-F", "--field", "--raw-field", "--input"})) method = "POST";
    for (const Opt& o : s.opts) {
      if ((o.name == "-X" || o.name == "--method") && o.has_value) {
        method = absl::AsciiStrToUpper(o.value);
      }
    }
    if (method == "GET" || method == "HEAD") return read();
    return c.Add(R::kChangeRemoteState,
                 absl::StrCat("api sends a ", method, " request that can change GitHub"));
  }
  if (OneOf(group,
            {"workflow", "run", "secret", "variable", "cache", "gist", "codespace", "cs", "org"})) {
    if (OneOf(verb, {"list", "ls", "view", "watch"})) return read();
    if (verb == "download" || (group == "gist" && verb == "clone")) {
      return c.Add(R::kMutating, absl::StrCat(what, " writes files"));
    }
    return remote();
  }
  if (group == "auth") {
    if (OneOf(verb, {"status", "token"})) return read();
    return c.Add(R::kMutating, absl::StrCat(what, " changes gh's credentials"));
  }
  if (group == "extension" || group == "extensions" || group == "ext") {
    if (OneOf(verb, {"install", "upgrade"})) {
      return c.Add(R::kInstallPackage, absl::StrCat(what, " installs a gh extension"));
    }
    if (OneOf(verb, {"list", "ls", "search", "browse"})) return read();
    if (verb == "exec") return c.Add(R::kOpaqueProgram, absl::StrCat(what, " runs an extension"));
    return c.Add(R::kMutating, absl::StrCat(what, " changes gh's extensions"));
  }
  if (group == "alias" || group == "config") {
    if (OneOf(verb, {"list", "ls", "get"})) return c.Add(R::kReadOnly, "reads its configuration");
    return c.Add(R::kMutating, absl::StrCat(what, " changes gh's configuration"));
  }
  c.Add(R::kUnknownProgram,
        absl::StrCat(group, " is not a known gh command (an alias or extension would run)"));
}

}  // namespace

std::vector<ProgramGroup> GitPrograms() {
  return {
      // Source control and hosting.
      {"git", H(Git)},
      {"gh", H(Gh)},
  };
}

}  // namespace ccsandbox::policy::programs
