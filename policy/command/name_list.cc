#include "policy/command/name_list.h"

namespace ccsandbox::policy {

bool InNameList(absl::string_view s, absl::string_view list) {
  for (absl::string_view x : absl::StrSplit(list, ' ', absl::SkipEmpty())) {
    if (s == x) return true;
  }
  return false;
}

}  // namespace ccsandbox::policy
