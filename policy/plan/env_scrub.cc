#include "policy/plan/env_scrub.h"

#include <array>

#include "absl/strings/match.h"

namespace ccsandbox::policy {
namespace {

// Prefixes: whole families of loader and shell injection.
constexpr std::array<absl::string_view, 4> kScrubbedPrefixes = {
    "LD_",          // glibc loader: LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH, LD_DEBUG_OUTPUT...
    "DYLD_",        // macOS loader: DYLD_INSERT_LIBRARIES, DYLD_LIBRARY_PATH...
    "BASH_FUNC_",   // exported bash functions run as code in every bash child
    "GIT_CONFIG_",  // GIT_CONFIG_COUNT/KEY_n/VALUE_n set core.sshCommand, core.hooksPath...
};

// Exact names, each an interpreter or tool hook that runs attacker-chosen code.
constexpr std::array<absl::string_view, 42> kScrubbedNames = {
    // Shells: startup files, prompts and options that execute code.
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "IFS",
    "CDPATH",
    // Node.js and Electron.
    "NODE_OPTIONS",
    "NODE_PATH",
    "NODE_REPL_EXTERNAL_MODULE",
    "ELECTRON_RUN_AS_NODE",
    "npm_config_node_options",
    "npm_config_script_shell",
    // Git: commands run on fetch/push and alternate helper paths.
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EXEC_PATH",
    "GIT_CONFIG_PARAMETERS",
    "GIT_ASKPASS",
    "GIT_TEMPLATE_DIR",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    // Perl, Ruby, Python, Java: option and module-path injection.
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "PERL5DB",
    "RUBYOPT",
    "RUBYLIB",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONBREAKPOINT",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    // glibc: module and tunable loading outside LD_*.
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "LOCPATH",
    "HOSTALIASES",
    // Pagers and openers that run commands on their input.
    "LESSOPEN",
    "LESSCLOSE",
};

}  // namespace

bool IsScrubbedEnvName(absl::string_view name) {
  for (absl::string_view prefix : kScrubbedPrefixes) {
    if (absl::StartsWith(name, prefix)) return true;
  }
  for (absl::string_view exact : kScrubbedNames) {
    if (name == exact) return true;
  }
  return false;
}

std::vector<std::string> ScrubEnvironment(std::map<std::string, std::string>& env) {
  std::vector<std::string> removed;
  for (auto it = env.begin(); it != env.end();) {
    const std::string& name = it->first;
    const bool malformed = name.empty() || name.find('=') != std::string::npos ||
                           name.find('\0') != std::string::npos ||
                           it->second.find('\0') != std::string::npos;
    if (malformed || IsScrubbedEnvName(name)) {
      removed.push_back(name);
      it = env.erase(it);
    } else {
      ++it;
    }
  }
  return removed;
}

}  // namespace ccsandbox::policy
