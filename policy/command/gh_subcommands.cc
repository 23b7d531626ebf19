#include "policy/command/gh_subcommands.h"

#include <cstddef>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "policy/command/name_list.h"

namespace ccsandbox::policy {
namespace {

using R = CommandRule;

constexpr GhOutcome S(CommandRule rule, absl::string_view what) {
  return GhOutcome{GhAction::kFinding, rule, what, true};
}

// The outcomes most rows share.
constexpr GhOutcome kReads = S(R::kNetworkAccess, "reads from GitHub");
constexpr GhOutcome kChangesGitHub = S(R::kChangeRemoteState, "changes GitHub");
constexpr GhOutcome kWritesTracker =
    S(R::kWriteExternalTracker, "writes to GitHub's issue tracker");

std::vector<GhCommand> MakeTable() {
  return {
      {"search status browse completion version help attestation ruleset", {}, kReads},
      // Pull requests: opening one, and publishing a review or a merge, are the spec's own rules.
      {"pr",
       {{"create new", S(R::kOpenPullRequest, "opens a pull request")},
        {"merge review comment close reopen",
         S(R::kPublishReviewOrMerge, "publishes a review or performs a merge")},
        {"list ls view diff status checks", kReads},
        {"checkout co", S(R::kMutating, "checks a branch out locally")}},
       kChangesGitHub},
      // The tracker.
      {"issue", {{"list ls view status", kReads}}, kWritesTracker},
      {"label project", {{"list ls view field-list item-list", kReads}}, kWritesTracker},
      // Releases publish what others download.
      {"release",
       {{"list ls view", kReads}, {"download", S(R::kMutating, "writes files")}},
       S(R::kPublishPackage, "publishes a release")},
      {"repo",
       {{"list ls view", kReads}, {"clone set-default", S(R::kMutating, "changes local files")}},
       kChangesGitHub},
      {"api", {}, GhOutcome{GhAction::kApi, R::kNetworkAccess, "reads from GitHub", true}},
      // Other GitHub state.
      {"workflow run secret variable cache codespace cs org",
       {{"list ls view watch", kReads}, {"download", S(R::kMutating, "writes files")}},
       kChangesGitHub},
      {"gist",
       {{"list ls view watch", kReads}, {"download clone", S(R::kMutating, "writes files")}},
       kChangesGitHub},
      // gh itself: its credentials, extensions and configuration.
      {"auth", {{"status token", kReads}}, S(R::kMutating, "changes gh's credentials")},
      {"extension extensions ext",
       {{"install upgrade", S(R::kInstallPackage, "installs a gh extension")},
        {"list ls search browse", kReads},
        {"exec", S(R::kOpaqueProgram, "runs an extension")}},
       S(R::kMutating, "changes gh's extensions")},
      {"alias config",
       {{"list ls get",
         GhOutcome{GhAction::kFinding, R::kReadOnly, "reads its configuration", false}}},
       S(R::kMutating, "changes gh's configuration")},
  };
}

const std::vector<GhCommand>& Table() {
  static const auto* table = new std::vector<GhCommand>(MakeTable());
  return *table;
}

const absl::flat_hash_map<absl::string_view, const GhCommand*>& Index() {
  static const auto* index =
      new absl::flat_hash_map<absl::string_view, const GhCommand*>(IndexByNames(Table()));
  return *index;
}

}  // namespace

const std::vector<GhCommand>& GhCommands() { return Table(); }

GhDecision DecideGhCommand(absl::string_view command, absl::string_view verb) {
  GhDecision d;
  auto it = Index().find(command);
  if (it == Index().end()) {
    d.reason =
        absl::StrCat(command, " is not a known gh command (an alias or extension would run)");
    return d;
  }
  d.row = it->second;
  const GhOutcome* outcome = &d.row->otherwise;
  for (size_t i = 0; i < d.row->cases.size(); ++i) {
    if (InNameList(verb, d.row->cases[i].verbs)) {
      d.case_index = static_cast<int>(i);
      outcome = &d.row->cases[i].then;
      break;
    }
  }
  d.action = outcome->action;
  d.rule = outcome->rule;
  d.reason = outcome->names_command
                 ? absl::StrCat(command, verb.empty() ? "" : " ", verb, " ", outcome->what)
                 : std::string(outcome->what);
  return d;
}

}  // namespace ccsandbox::policy
