#include "broker/host_probe.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ccsandbox::broker {
namespace {

bool OnPath(const std::string& name, const std::string& path_env) {
  for (absl::string_view dir : absl::StrSplit(path_env, ':', absl::SkipEmpty())) {
    if (access(absl::StrCat(dir, "/", name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

}  // namespace

policy::HostFacts GatherHostFacts(const std::string& path_env) {
  policy::HostFacts facts;
  utsname uts;
  if (uname(&uts) != 0) return facts;
  const std::string sysname = uts.sysname;
  if (sysname == "Linux") {
    facts.os = policy::HostFacts::Os::kLinux;
    std::ifstream version("/proc/version");
    std::stringstream text;
    text << version.rdbuf();
    facts.wsl2 = absl::StrContains(absl::AsciiStrToLower(text.str()), "microsoft");
    facts.has_bwrap = OnPath("bwrap", path_env);
    facts.has_socat = OnPath("socat", path_env);
  } else if (sysname == "Darwin") {
    facts.os = policy::HostFacts::Os::kMacOs;
    facts.has_sandbox_exec = access("/usr/bin/sandbox-exec", X_OK) == 0;
  }
  return facts;
}

}  // namespace ccsandbox::broker
