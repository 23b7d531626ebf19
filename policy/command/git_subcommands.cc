#include "policy/command/git_subcommands.h"

#include <cstddef>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "policy/command/name_list.h"

namespace ccsandbox::policy {
namespace {

using Args = absl::Span<const ShellWord>;
using R = CommandRule;

// A finding; SV names the verb after the subcommand when there is one.
constexpr GitOutcome S(CommandRule rule, absl::string_view what) {
  return GitOutcome{GitAction::kFinding, rule, what, false};
}
constexpr GitOutcome SV(CommandRule rule, absl::string_view what) {
  return GitOutcome{GitAction::kFinding, rule, what, true};
}
constexpr GitOutcome Do(GitAction action) {
  return GitOutcome{action, R::kUnknownProgram, "", false};
}

// --abort, --quit and --skip end a merge, rebase, cherry-pick, revert or am in progress.
constexpr GitCase kAbandons = {{.has = "--abort --quit --skip"},
                               S(R::kMutating, "abandons an operation in progress")};

std::vector<GitSubcommand> MakeTable() {
  return {
      // Remote writes.
      {"push", {}, Do(GitAction::kPush)},
      {"lfs",
       {{{.verbs = "push"}, SV(R::kPushToRemote, "uploads objects to a remote")},
        {{.no_verb = true}, SV(R::kReadOnly, "only shows state")},
        {{.verbs = "ls-files status env version logs locks"},
         SV(R::kReadOnly, "only shows state")}},
       SV(R::kMutating, "changes the repository")},
      {"svn p4",
       {{{.verbs = "dcommit submit set-tree"},
         SV(R::kPushToRemote, "sends commits to a remote repository")}},
       S(R::kMutating, "changes the repository")},
      {"send-email", {}, S(R::kNetworkWrite, "sends patches by mail")},
      // Commits.
      {"commit",
       {kAbandons,
        {{.has = "--dry-run"}, S(R::kReadOnly, "--dry-run only shows what would be committed")}},
       S(R::kCreateCommit, "creates commits")},
      {"merge rebase cherry-pick revert am", {kAbandons}, S(R::kCreateCommit, "creates commits")},
      {"pull", {kAbandons}, S(R::kCreateCommit, "fetches and merges or rebases (creates commits)")},
      // Reading the repository.
      {"diff log show",
       {{{.has = "--output"}, S(R::kMutating, "--output writes a file")},
        {{.has = "--ext-diff"},
         S(R::kOpaqueProgram, "--ext-diff runs the configured diff program")}},
       S(R::kReadOnly, "only reads the repository")},
      {"grep",
       {{{.has = "--open-files-in-pager -O*"},
         S(R::kOpaqueProgram, "-O runs a pager command on the matches")}},
       S(R::kReadOnly, "only reads the repository")},
      {"status blame annotate ls-files ls-tree rev-parse rev-list describe shortlog cat-file "
       "show-ref for-each-ref name-rev merge-base whatchanged diff-tree diff-index diff-files "
       "check-ignore check-attr check-mailmap check-ref-format count-objects fsck verify-commit "
       "verify-tag verify-pack var help version range-diff cherry show-branch "
       "get-tar-commit-id column patch-id fmt-merge-msg request-pull show-index unpack-file "
       "ls-refs",
       {},
       S(R::kReadOnly, "only reads the repository")},
      {"archive",
       {{{.has = "-o --output"}, S(R::kMutating, "writes a file")},
        {{.has = "--remote"}, S(R::kNetworkAccess, "reads a remote")}},
       S(R::kReadOnly, "writes to standard output")},
      {"format-patch",
       {{{.has = "--stdout"}, S(R::kReadOnly, "--stdout")}},
       S(R::kMutating, "writes patch files")},
      {"apply",
       {{{.has = "--check --stat --numstat --summary", .lacks = "--apply"},
         S(R::kReadOnly, "only checks the patch")}},
       S(R::kMutating, "changes files")},
      {"hash-object",
       {{{.lacks = "-w"}, S(R::kReadOnly, "only computes a hash")}},
       S(R::kMutating, "changes the repository or working tree")},
      {"symbolic-ref",
       {{{.lacks = "-d --delete", .max_operands = 1}, S(R::kReadOnly, "reads a ref")}},
       S(R::kMutating, "changes the repository or working tree")},
      {"interpret-trailers",
       {{{.lacks = "--in-place"}, S(R::kReadOnly, "writes to standard output")}},
       S(R::kMutating, "changes the repository or working tree")},
      // Talking to remotes.
      {"ls-remote", {}, S(R::kNetworkAccess, "reads a remote's refs")},
      {"fetch",
       {{{.has = "--dry-run"}, S(R::kNetworkAccess, "--dry-run only contacts the remote")}},
       S(R::kMutating, "updates remote-tracking refs and objects")},
      {"clone", {}, S(R::kMutating, "writes a new repository")},
      {"remote",
       {{{.no_verb = true}, S(R::kReadOnly, "lists remotes")},
        {{.verbs = "show get-url"}, S(R::kReadOnly, "lists remotes")}},
       SV(R::kMutating, "changes remotes")},
      // Refs and configuration: listing reads, anything else writes.
      {"branch",
       {{{.has = "-d -D --delete -m -M --move -c -C --copy -u --set-upstream-to "
                 "--unset-upstream --edit-description -f --force --track -t"},
         S(R::kMutating, "changes branches")},
        {{.has = "-l --list -a --all -r --remotes --contains --no-contains --merged "
                 "--no-merged --points-at --show-current"},
         S(R::kReadOnly, "lists branches")},
        {{.max_operands = 0, .skip = "--sort --format --color --column --abbrev"},
         S(R::kReadOnly, "lists branches")}},
       S(R::kMutating, "creates a branch")},
      {"tag",
       {{{.has = "-d --delete -a --annotate -s --sign -u --local-user -m --message -F --file "
                 "-f --force -e --edit"},
         S(R::kMutating, "creates or deletes tags")},
        {{.has = "-l --list -n --contains --no-contains --points-at --merged --no-merged -v "
                 "--verify"},
         S(R::kReadOnly, "lists tags")},
        {{.max_operands = 0, .skip = "--sort --format --color --column"},
         S(R::kReadOnly, "lists tags")}},
       S(R::kMutating, "creates a tag")},
      {"config", {}, Do(GitAction::kConfig)},
      // Subcommands with verbs: the listed verbs only show state, any other changes it.
      {"stash",
       {{{.verbs = "list show"}, SV(R::kReadOnly, "only shows state")}},
       SV(R::kMutating, "changes the repository")},
      {"worktree sparse-checkout",
       {{{.verbs = "list"}, SV(R::kReadOnly, "only shows state")}},
       SV(R::kMutating, "changes the repository")},
      {"notes",
       {{{.no_verb = true}, SV(R::kReadOnly, "only shows state")},
        {{.verbs = "list show get-ref"}, SV(R::kReadOnly, "only shows state")}},
       SV(R::kMutating, "changes the repository")},
      {"reflog",
       {{{.no_verb = true}, SV(R::kReadOnly, "only shows state")},
        {{.verbs = "show exists"}, SV(R::kReadOnly, "only shows state")}},
       SV(R::kMutating, "changes the repository")},
      {"submodule",
       {{{.verbs = "foreach"}, Do(GitAction::kSubmoduleForeach)},
        {{.no_verb = true}, SV(R::kReadOnly, "only shows state")},
        {{.verbs = "status summary"}, SV(R::kReadOnly, "only shows state")}},
       SV(R::kMutating, "changes the repository")},
      {"bisect",
       {{{.verbs = "run"}, Do(GitAction::kBisectRun)},
        {{.verbs = "log view visualize terms"}, SV(R::kReadOnly, "only shows state")}},
       SV(R::kMutating, "changes the repository")},
      // Programs git starts: configured tools, servers, history rewriters.
      {"difftool mergetool gui citool gitk instaweb daemon filter-branch filter-repo shell "
       "upload-pack receive-pack http-backend credential web--browse",
       {},
       S(R::kOpaqueProgram, "runs other programs")},
      // Local changes.
      {"add rm mv restore checkout switch reset clean init gc prune repack update-ref "
       "update-index commit-tree write-tree read-tree mktag mktree fast-import replace "
       "maintenance pack-refs rerere merge-file merge-tree checkout-index bundle prune-packed "
       "pack-objects unpack-objects index-pack quiltimport cvsimport archimport stage bugreport "
       "diagnose backfill replay refs multi-pack-index commit-graph fsmonitor--daemon scalar "
       "mailsplit mailinfo",
       {},
       S(R::kMutating, "changes the repository or working tree")},
  };
}

const std::vector<GitSubcommand>& Table() {
  static const auto* table = new std::vector<GitSubcommand>(MakeTable());
  return *table;
}

const absl::flat_hash_map<absl::string_view, const GitSubcommand*>& Index() {
  static const auto* index =
      new absl::flat_hash_map<absl::string_view, const GitSubcommand*>(IndexByNames(Table()));
  return *index;
}

// `word` is one of `options` (see GitTest::has).
bool IsOneOf(absl::string_view word, absl::string_view options) {
  for (absl::string_view o : absl::StrSplit(options, ' ', absl::SkipEmpty())) {
    if (word == o) return true;
    if (absl::EndsWith(o, "*") && absl::StartsWith(word, o.substr(0, o.size() - 1))) return true;
    if (absl::StartsWith(o, "--") && absl::StartsWith(word, o) && word.size() > o.size() &&
        word[o.size()] == '=') {
      return true;
    }
  }
  return false;
}

bool AnyWordIsOneOf(Args args, absl::string_view options) {
  for (const ShellWord& w : args) {
    if (IsOneOf(w.text, options)) return true;
  }
  return false;
}

// The indexes of the operands in `args`: words that are not options, and every word after
// `--`; the value of a `skip` option (the next word) is neither.
std::vector<size_t> Operands(Args args, absl::string_view skip) {
  std::vector<size_t> operands;
  bool only = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& t = args[i].text;
    if (!only && t == "--") {
      only = true;
      continue;
    }
    if (!only && t.size() > 1 && t[0] == '-') {
      if (t.find('=') == std::string::npos && InNameList(t, skip)) ++i;
      continue;
    }
    operands.push_back(i);
  }
  return operands;
}

// The verb: the first operand, counting no option values.
size_t VerbIndex(Args args) {
  std::vector<size_t> operands = Operands(args, "");
  return operands.empty() ? args.size() : operands[0];
}

}  // namespace

const std::vector<GitSubcommand>& GitSubcommands() { return Table(); }

bool GitTestHolds(const GitTest& test, Args args) {
  if (!test.has.empty() && !AnyWordIsOneOf(args, test.has)) return false;
  if (!test.lacks.empty() && AnyWordIsOneOf(args, test.lacks)) return false;
  const size_t verb = VerbIndex(args);
  if (test.no_verb && verb < args.size()) return false;
  if (!test.verbs.empty() && (verb >= args.size() || !InNameList(args[verb].text, test.verbs))) {
    return false;
  }
  if (test.max_operands >= 0 &&
      Operands(args, test.skip).size() > static_cast<size_t>(test.max_operands)) {
    return false;
  }
  return true;
}

GitDecision DecideGitSubcommand(absl::string_view sub, Args args) {
  GitDecision d;
  d.verb = VerbIndex(args);
  auto it = Index().find(sub);
  if (it == Index().end()) {
    d.reason = absl::StrCat(sub, " is not a known git subcommand (an alias or a git-", sub,
                            " program would run)");
    return d;
  }
  d.row = it->second;
  const GitOutcome* outcome = &d.row->otherwise;
  for (size_t i = 0; i < d.row->cases.size(); ++i) {
    if (GitTestHolds(d.row->cases[i].when, args)) {
      d.case_index = static_cast<int>(i);
      outcome = &d.row->cases[i].then;
      break;
    }
  }
  d.action = outcome->action;
  if (d.action != GitAction::kFinding) return d;
  d.rule = outcome->rule;
  const bool verb = outcome->names_verb && d.verb < args.size();
  d.reason = absl::StrCat(sub, verb ? " " : "", verb ? args[d.verb].text : "", " ", outcome->what);
  return d;
}

}  // namespace ccsandbox::policy
