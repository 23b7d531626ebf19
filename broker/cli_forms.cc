#include "broker/cli_forms.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ccsandbox::broker {
namespace {

// The flags that fix a session when it starts: a run in an existing session cannot take them.
constexpr absl::string_view kLaunchFlags[] = {"spec", "backend", "no-filename-denies"};

std::string FlagUsage(absl::string_view name) {
  const CliFlag* flag = FindCliFlag(name);
  if (flag == nullptr || flag->value.empty()) return absl::StrCat("--", name);
  return absl::StrCat("--", name, "=", flag->value);
}

}  // namespace

const std::vector<CliFlag>& CliFlags() {
  static const std::vector<CliFlag>* const flags = new std::vector<CliFlag>{
      {"backend", "NAME",
       "run, session start, plan: none, native, docker or microvm (default: the host's); term: "
       "none (the host shell), native (the terminal profile) or microvm (default: the broker's "
       "--terminal-default-backend, none unless configured)"},
      {"broker", "ADDR",
       "broker address: unix:PATH or a socket's path (default: $CCSANDBOX_BROKER, else the "
       "installed service's unix:/run/ccsandbox-broker/broker.sock)"},
      {"json", "",
       "print one JSON object per line: handles, events, decisions on stdout; sandboxctl's own "
       "failures as {\"error\":{\"code\":...,\"message\":...}} on stderr"},
      {"mode", "MODE", "policy check: chat, review, plan or orchestrate"},
      {"no-filename-denies", "",
       "run, session start, plan: explicitly accept a policy WITHOUT the .env/*.key/*.pem create "
       "denies (writeDenyPatterns: []); Linux refuses writable runs that need them until "
       "create-time enforcement is available"},
      {"platform", "PLATFORM",
       "plan: linux (the default: the bwrap argv) or macos (the Seatbelt profile)"},
      {"session", "ID",
       "run: run in this session (from `session start`), which stays; without it, run starts a "
       "session of its own that ends with the run"},
      {"spec", "FILE.json", "run, session start, plan: SandboxSpec as proto3 JSON"},
      {"stdin", "", "run: send this process's stdin to the command"},
      {"timeout", "SECONDS", "run: kill the command after SECONDS (0 = never)"},
      {"workdir", "DIR",
       "run: working directory (default: the current one; with --session, the session's); "
       "session start: the directory bound when there is no --spec (default: the current one); "
       "term: the shell's working directory (default: the broker user's $HOME)"},
  };
  return *flags;
}

const CliFlag* FindCliFlag(absl::string_view name) {
  for (const CliFlag& flag : CliFlags()) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

const std::vector<CliForm>& CliForms() {
  static const std::vector<CliForm>* const forms = new std::vector<CliForm>{
      {"probe", {"json"}, {}, ""},
      {"run",
       {"spec", "workdir", "timeout", "backend", "stdin", "no-filename-denies", "json"},
       {},
       "-- CMD [ARGS...]"},
      {"run --session",
       {"session", "workdir", "timeout", "stdin", "json"},
       {"session"},
       "-- CMD [ARGS...]"},
      {"session start", {"spec", "workdir", "backend", "no-filename-denies", "json"}, {}, ""},
      {"session ls", {"json"}, {}, ""},
      {"session show", {"json"}, {}, "ID"},
      {"session stop", {"json"}, {}, "ID"},
      {"session suspend", {"json"}, {}, "ID"},
      {"session resume", {"json"}, {}, "ID"},
      {"policy check", {"mode", "json"}, {"mode"}, "-- 'COMMAND LINE'"},
      {"plan",
       {"spec", "platform", "backend", "no-filename-denies", "json"},
       {"spec"},
       "-- [CMD [ARGS...]]"},
      {"term", {"backend", "workdir", "json"}, {}, "-- [CMD [ARGS...]]"},
      {"doctor", {"json"}, {}, ""},
  };
  return *forms;
}

std::vector<std::string> FormPath(absl::string_view form) {
  std::vector<std::string> path;
  for (absl::string_view word : absl::StrSplit(form, ' ', absl::SkipEmpty())) {
    if (!absl::StartsWith(word, "-")) path.emplace_back(word);
  }
  return path;
}

std::string UsageLine(const CliForm& form) {
  std::string line = absl::StrCat("sandboxctl [", FlagUsage("broker"), "]");
  for (const std::string& word : FormPath(form.form)) absl::StrAppend(&line, " ", word);
  for (absl::string_view flag : form.required) absl::StrAppend(&line, " ", FlagUsage(flag));
  const bool after_flags = absl::StartsWith(form.operands, "--");
  if (!form.operands.empty() && !after_flags) absl::StrAppend(&line, " ", form.operands);
  for (absl::string_view flag : form.flags) {
    if (std::find(form.required.begin(), form.required.end(), flag) != form.required.end()) {
      continue;
    }
    absl::StrAppend(&line, " [", FlagUsage(flag), "]");
  }
  if (after_flags) absl::StrAppend(&line, " ", form.operands);
  return line;
}

absl::Status CheckFormFlags(absl::string_view form, const std::vector<std::string>& given) {
  auto entry = std::find_if(CliForms().begin(), CliForms().end(),
                            [form](const CliForm& f) { return f.form == form; });
  if (entry == CliForms().end()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown form '", form, "'"));
  }
  for (const std::string& name : given) {
    if (name == "broker" ||
        std::find(entry->flags.begin(), entry->flags.end(), name) != entry->flags.end()) {
      continue;
    }
    if (form == "run --session" && std::find(std::begin(kLaunchFlags), std::end(kLaunchFlags),
                                             name) != std::end(kLaunchFlags)) {
      return absl::InvalidArgumentError(
          absl::StrCat("run --session: --", name,
                       " cannot change an existing session (its spec and backend were fixed by "
                       "`sandboxctl session start`); drop it, or start another session with it"));
    }
    return absl::InvalidArgumentError(absl::StrCat(form, ": does not take --", name,
                                                   " (see sandboxctl ",
                                                   absl::StrJoin(FormPath(form), " "), " --help)"));
  }
  return absl::OkStatus();
}

}  // namespace ccsandbox::broker
