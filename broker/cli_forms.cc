#include "broker/cli_forms.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace ccsandbox::broker {
namespace {

// The flags that fix a session when it starts: a run in an existing session cannot take them.
constexpr absl::string_view kLaunchFlags[] = {"spec", "backend", "no_filename_denies"};

bool IsSandboxctlFlag(absl::string_view name) {
  if (name == "broker") return true;
  for (const CliForm& form : CliForms()) {
    if (std::find(form.flags.begin(), form.flags.end(), name) != form.flags.end()) return true;
  }
  return false;
}

std::string Dashed(absl::string_view name) {
  return absl::StrCat("--", absl::StrReplaceAll(name, {{"_", "-"}}));
}

}  // namespace

const std::vector<CliForm>& CliForms() {
  static const std::vector<CliForm>* const forms = new std::vector<CliForm>{
      {"probe", {"json"}},
      {"run", {"spec", "workdir", "timeout", "backend", "stdin", "no_filename_denies", "json"}},
      {"run --session", {"session", "workdir", "timeout", "stdin", "json"}},
      {"session start", {"spec", "workdir", "backend", "no_filename_denies", "json"}},
      {"session ls", {"json"}},
      {"session show", {"json"}},
      {"session stop", {"json"}},
      {"session suspend", {"json"}},
      {"session resume", {"json"}},
      {"policy check", {"mode", "json"}},
  };
  return *forms;
}

std::vector<std::string> GivenFlags(const std::vector<std::string>& args) {
  std::vector<std::string> given;
  for (size_t i = 1; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    arg.remove_prefix(arg[1] == '-' ? 2 : 1);
    std::string name(arg.substr(0, arg.find('=')));
    if (!IsSandboxctlFlag(name) && absl::StartsWith(name, "no") &&
        IsSandboxctlFlag(name.substr(2))) {
      name = name.substr(2);
    }
    if (!IsSandboxctlFlag(name)) continue;
    if (std::find(given.begin(), given.end(), name) == given.end()) given.push_back(name);
  }
  return given;
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
          absl::StrCat("run --session: ", Dashed(name),
                       " cannot change an existing session (its spec and backend were fixed by "
                       "`sandboxctl session start`); drop it, or start another session with it"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(form, ": does not take ", Dashed(name), " (see sandboxctl --help)"));
  }
  return absl::OkStatus();
}

}  // namespace ccsandbox::broker
