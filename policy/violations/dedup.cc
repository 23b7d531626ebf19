#include "policy/violations/dedup.h"

namespace ccsandbox::policy {
namespace {

absl::string_view FinalName(absl::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

void ViolationDedup::RecordRefusal(absl::string_view host_path) {
  refused_names_.emplace(FinalName(host_path));
}

bool ViolationDedup::IsEcho(const v1::SandboxViolation& violation) const {
  const std::string& action = violation.action();
  if (action != "file-write*" && action != "file-access*") return false;
  return refused_names_.count(FinalName(violation.target())) > 0;
}

}  // namespace ccsandbox::policy
