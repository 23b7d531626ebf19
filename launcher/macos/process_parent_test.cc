// ParentOf on Linux (/proc/PID/stat), with a process whose name is built to be misread: the
// kernel's "PID (COMM) STATE PPID" line with ") 1 1 (" inside COMM.
#include "launcher/macos/process_parent.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "launcher/macos/spawned_process.h"

namespace ccsandbox::launcher::macos {
namespace {

TEST(ParentOf, ReadsTheParentPastAHostileProcessName) {
  const std::string hostile = absl::StrCat(std::getenv("TEST_TMPDIR"), "/x) S 1 (y");
  std::filesystem::copy_file("/bin/sleep", hostile,
                             std::filesystem::copy_options::overwrite_existing);
  ASSERT_EQ(chmod(hostile.c_str(), 0755), 0);
  absl::StatusOr<std::unique_ptr<SpawnedProcess>> child =
      SpawnedProcess::Spawn({.executable = hostile, .argv = {"x", "1000"}});
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ(ParentOf((*child)->pid()), getpid());
  EXPECT_EQ(ParentOf(getpid()), getppid());
}

TEST(ParentOf, NoSuchProcessHasNone) {
  EXPECT_EQ(ParentOf(0), std::nullopt);
  EXPECT_EQ(ParentOf(-5), std::nullopt);
  EXPECT_EQ(ParentOf(1 << 30), std::nullopt);  // above pid_max
}

}  // namespace
}  // namespace ccsandbox::launcher::macos
