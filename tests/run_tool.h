// Test support: runs a host tool (git, mkfs.xfs, cp) to completion and hands back what it
// printed. Lighter than daemon_fixture's RunProgram (no launcher code): posix_spawnp, stdout and
// stderr into memory files, so a chatty tool never blocks on a pipe.
//
//   absl::StatusOr<std::string> out = RunTool({"git", "status", "--porcelain"}, repo);
#ifndef CCSANDBOX_TESTS_RUN_TOOL_H_
#define CCSANDBOX_TESTS_RUN_TOOL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ccsandbox::testing {

struct ToolRun {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
};

// Runs `argv` (PATH-searched) in `cwd` ("" = this process's) with this process's environment.
// NOT_FOUND when the tool is not installed; other spawn failures are INTERNAL.
absl::StatusOr<ToolRun> RunToolResult(const std::vector<std::string>& argv,
                                      const std::string& cwd = "");

// The same, for a run that must succeed: its stdout, or an error quoting the command, the exit
// code and stderr (NOT_FOUND when the tool is not installed).
absl::StatusOr<std::string> RunTool(const std::vector<std::string>& argv,
                                    const std::string& cwd = "");

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_TESTS_RUN_TOOL_H_
