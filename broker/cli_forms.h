// sandboxctl's command forms and the flags each one takes, as a table, and the check that
// refuses a flag a form does not take (a flag silently ignored is a run the user did not ask
// for: `run --session=ID --spec=...` cannot change the session's spec).
//
//   std::vector<std::string> given = GivenFlags(UnderscoreFlagNames(argc, argv));
//   if (absl::Status s = CheckFormFlags("session ls", given); !s.ok()) return Fail(...);
//
// --broker is taken by every form. Flags that are not sandboxctl's (Abseil's --flagfile, ...)
// are not checked here.
#ifndef CCSANDBOX_BROKER_CLI_FORMS_H_
#define CCSANDBOX_BROKER_CLI_FORMS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::broker {

struct CliForm {
  absl::string_view form;                // "probe", "run", "run --session", "session ls", ...
  std::vector<absl::string_view> flags;  // flag names as Abseil spells them (no_filename_denies)
};

// Every form of sandboxctl, in --help order.
const std::vector<CliForm>& CliForms();

// The sandboxctl flags named in `args` (argv with underscored flag names, argv[0] first), up to
// a bare "--", each once, in order: "--spec=x", "-spec x", "--nojson" (Abseil's negation of a
// boolean) give "spec", "spec", "json".
std::vector<std::string> GivenFlags(const std::vector<std::string>& args);

// INVALID_ARGUMENT naming the first flag in `given` that `form` does not take.
absl::Status CheckFormFlags(absl::string_view form, const std::vector<std::string>& given);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_FORMS_H_
