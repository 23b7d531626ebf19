// sandboxctl's command line, parsed with CLI11 into the form it names (cli_forms.h) and its
// values, or into what to print and exit with when no broker is needed: --help and --version
// (exit 0), a usage error (exit 125, one line naming the problem). CLI11 reports through
// exceptions; they are caught here, at the parse boundary, and never leave ParseCommandLine.
//
//   std::variant<CliCommand, CliExit> parsed =
//       ParseCommandLine({argv, argv + argc}, VersionLine("sandboxctl"));
//
// Flags may come before or after the subcommand words, up to a bare "--"; the words after it
// are operands (the command to run, the policy's command line). Flag names are dashed; the
// underscored spelling (--no_filename_denies) and Abseil's single-dash one (-json) are accepted.
#ifndef CCSANDBOX_BROKER_CLI_PARSE_H_
#define CCSANDBOX_BROKER_CLI_PARSE_H_

#include <string>
#include <variant>
#include <vector>

namespace ccsandbox::broker {

// What the command line asks the broker for.
struct CliCommand {
  std::string form;                   // a CliForms() entry: "run --session", "session show", ...
  std::vector<std::string> operands;  // the session id; the command and its arguments; the line
  std::string broker;                 // --broker as given ("" = not given: BrokerAddress)
  bool json = false;
  std::string session, spec, workdir, backend, mode, platform;
  double timeout_seconds = 0;
  bool read_stdin = false;  // --stdin
  bool no_filename_denies = false;
};

// What sandboxctl prints and exits with before any call.
struct CliExit {
  int code = 0;       // 0 for --help and --version; 125 (kToolError) for a usage error
  std::string out;    // for stdout: the help text or the version line
  std::string error;  // the usage error, one line without the "sandboxctl: " prefix
  bool json = false;  // --json was on the command line: the error is to be printed as JSON
};

// `argv` as main() gets it (argv[0] first). `version_line` is what --version prints.
std::variant<CliCommand, CliExit> ParseCommandLine(const std::vector<std::string>& argv,
                                                   const std::string& version_line);

// The broker's address: `flag`, else `env` ($CCSANDBOX_BROKER, may be null), else the installed
// service's socket; a bare path ("/run/x.sock") is a Unix socket's.
std::string BrokerAddress(const std::string& flag, const char* env);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_PARSE_H_
