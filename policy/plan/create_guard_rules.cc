#include "policy/plan/create_guard_rules.h"

#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "policy/plan/trusted_names.h"

namespace ccsandbox::policy {

std::optional<v1::CreateGuardPlan> GuardPlanFor(const v1::SandboxSpec& spec,
                                                const FilenamePolicyDecision& filenames,
                                                const std::vector<std::string>& home_dirs,
                                                const DenyPaths& deny) {
  if (!filenames.create_guard) return std::nullopt;
  v1::CreateGuardPlan plan;
  for (const std::string& pattern : filenames.create_guard_patterns) {
    plan.add_deny_patterns(pattern);
  }
  for (const std::string& rule : spec.deny_write_names()) plan.add_trusted_names(rule);
  // A protected path that does not exist yet may not be created either; one with glob
  // characters protects every new match of the glob and its literal name ("co*py") at creation
  // (existing matches: the deny scan expands it). A glob written unnormalised names no path
  // the guard could compare.
  for (const std::string& path : spec.protected_paths()) {
    if (CheckNormalizedAbsolute("protectedPaths", path).ok()) plan.add_protected_paths(path);
  }
  for (const std::string& home : home_dirs) {
    for (const TrustedName& name : HomeTrustedPaths()) {
      plan.add_protected_paths(absl::StrCat(home, "/", name.rule));
    }
  }
  // What the bound repositories' git configs name (a core.hooksPath that git clean removed).
  for (const std::string& path : deny.creation_denied) plan.add_protected_paths(path);
  return plan;
}

}  // namespace ccsandbox::policy
