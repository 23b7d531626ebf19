// ParseShell: the input checks that come before any parsing, then the parser
// (shell_parser_internal.h) over the whole line.
#include "policy/command/shell_parser.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/command/shell_parser_internal.h"

namespace ccsandbox::policy {

absl::StatusOr<ShellScript> ParseShell(absl::string_view input, const ShellParseLimits& limits) {
  if (input.size() > limits.max_input_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("the command line is ", input.size(),
                                                     " bytes; the policy analyses at most ",
                                                     limits.max_input_bytes));
  }
  if (input.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("the command line contains a NUL byte");
  }
  ShellScript script;
  shell_internal::SharedState st;
  st.script = &script;
  st.limits = &limits;
  shell_internal::Parser parser(input, &st);
  if (!parser.ParseAll()) {
    if (st.error.ok()) st.error = absl::InternalError("shell parser failed without a reason");
    return st.error;
  }
  return script;
}

}  // namespace ccsandbox::policy
