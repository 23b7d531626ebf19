// Rows of the program tables name themselves with a space-separated list ("add rm mv"). Pure.
//
//   bool hit = InNameList("rm", "add rm mv");                       // true
//   static const auto index = IndexByNames(Table());                // name -> its row
//   auto it = index.find("mv");
#ifndef CCSANDBOX_POLICY_COMMAND_NAME_LIST_H_
#define CCSANDBOX_POLICY_COMMAND_NAME_LIST_H_

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::policy {

// True when `s` is one of the space-separated words of `list`.
bool InNameList(absl::string_view s, absl::string_view list);

// Every name in each row's `names` -> that row (the first row naming it). `rows` must outlive
// the index.
template <typename Row>
absl::flat_hash_map<absl::string_view, const Row*> IndexByNames(const std::vector<Row>& rows) {
  absl::flat_hash_map<absl::string_view, const Row*> by_name;
  for (const Row& row : rows) {
    for (absl::string_view name : absl::StrSplit(row.names, ' ', absl::SkipEmpty())) {
      by_name.emplace(name, &row);
    }
  }
  return by_name;
}

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_COMMAND_NAME_LIST_H_
