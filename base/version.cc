#include "base/version.h"

#include "absl/flags/usage_config.h"
#include "absl/strings/str_cat.h"
#include "base/build_commit.h"

namespace ccsandbox {

const char* BuildCommit() { return kBuildCommit; }

std::string VersionLine(const std::string& program) {
  return absl::StrCat(program, " ", kVersion, " (commit ", BuildCommit(), ")\n");
}

void SetVersionFlag(const std::string& program) {
  absl::FlagsUsageConfig config;
  config.version_string = [program] { return VersionLine(program); };
  absl::SetFlagsUsageConfig(config);
}

}  // namespace ccsandbox
