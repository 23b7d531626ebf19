// sandboxctl's flags and command forms, as tables: cli_parse.cc builds the CLI11 subcommands and
// their usage lines from them, and refuses a flag a form does not take (a flag silently ignored
// is a run the user did not ask for: `run --session=ID --spec=...` cannot change the session).
//
//   if (absl::Status s = CheckFormFlags("session ls", {"json", "spec"}); !s.ok()) ...
//
// --broker is taken by every form, and --json too. Flag names are dashed (no-filename-denies).
// A new subcommand (term, doctor, plan, ...) is a CliForms() entry, its line in cli_parse.cc's
// Descriptions() and its case in sandboxctl.cc's dispatch; --help and the checks follow.
#ifndef CCSANDBOX_BROKER_CLI_FORMS_H_
#define CCSANDBOX_BROKER_CLI_FORMS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::broker {

struct CliFlag {
  absl::string_view name;   // "no-filename-denies"
  absl::string_view value;  // "FILE.json" in --spec=FILE.json; "" for a switch
  absl::string_view help;   // as --help and docs/flags.md say it
};

struct CliForm {
  // The words that name the form: its subcommands, then the flag that selects it among the
  // forms of the same subcommands ("run --session").
  absl::string_view form;
  std::vector<absl::string_view> flags;     // every flag it takes but --broker
  std::vector<absl::string_view> required;  // shown without brackets in its usage line
  absl::string_view operands;               // "-- CMD [ARGS...]", "ID", ""
};

// Every flag of sandboxctl but --help and --version, in name order.
const std::vector<CliFlag>& CliFlags();

// The flag named `name` (dashed), or null.
const CliFlag* FindCliFlag(absl::string_view name);

// Every form of sandboxctl, in --help order.
const std::vector<CliForm>& CliForms();

// The subcommand words of `form` ("run --session" -> {"run"}).
std::vector<std::string> FormPath(absl::string_view form);

// "sandboxctl [--broker=ADDR] run --session=ID [--workdir=DIR] ... -- CMD [ARGS...]"
std::string UsageLine(const CliForm& form);

// INVALID_ARGUMENT naming the first flag in `given` (dashed names) that `form` does not take.
absl::Status CheckFormFlags(absl::string_view form, const std::vector<std::string>& given);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_FORMS_H_
