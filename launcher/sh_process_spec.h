// Test support: a ProcessSpec that runs a shell script (/bin/sh -c SCRIPT) with only
// PATH=/usr/bin:/bin in its environment, for the tests of SandboxProcess and Supervise.
//
//   auto process = SandboxProcess::Spawn(Sh("echo out; exit 7"));
#ifndef CCSANDBOX_LAUNCHER_SH_PROCESS_SPEC_H_
#define CCSANDBOX_LAUNCHER_SH_PROCESS_SPEC_H_

#include <string>

#include "launcher/sandbox_process.h"

namespace ccsandbox::launcher {

inline ProcessSpec Sh(const std::string& script) {
  ProcessSpec spec;
  spec.executable = "/bin/sh";
  spec.argv = {"sh", "-c", script};
  spec.envp = {"PATH=/usr/bin:/bin"};
  return spec;
}

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_SH_PROCESS_SPEC_H_
