// What --version prints on every binary: the release and the commit it was built from.
//
//   absl::FlagsUsageConfig config;
//   config.version_string = [] { return VersionLine("sandbox_brokerd"); };
#ifndef CCSANDBOX_BASE_VERSION_H_
#define CCSANDBOX_BASE_VERSION_H_

#include <string>

namespace ccsandbox {

inline constexpr char kVersion[] = "0.6.0";

// The commit (12 hex digits, "-dirty" when built from a modified tree, "unknown" outside git).
const char* BuildCommit();

// "PROGRAM 0.6.0 (commit 0123456789ab)\n"
std::string VersionLine(const std::string& program);

// Makes --version print VersionLine(program) and exit 0 (Abseil's flag parser).
void SetVersionFlag(const std::string& program);

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_VERSION_H_
