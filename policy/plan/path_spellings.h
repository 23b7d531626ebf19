// Every deny path in both spellings (spec): the literal one and the symlink-resolved one,
// because the kernel matches the resolved path. Globs ('*', '?') are left untouched and a
// path that does not resolve is kept as written.
#ifndef CCSANDBOX_POLICY_PLAN_PATH_SPELLINGS_H_
#define CCSANDBOX_POLICY_PLAN_PATH_SPELLINGS_H_

#include <optional>
#include <string>
#include <vector>

#include "base/host_view.h"

namespace ccsandbox::policy {

// {literal} or {literal, resolved}.
std::vector<std::string> Spellings(const std::string& path, const PathResolver& resolver);

// Spellings of every path, de-duplicated, in first-seen order.
std::vector<std::string> AllSpellings(const std::vector<std::string>& paths,
                                      const PathResolver& resolver);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_PATH_SPELLINGS_H_
