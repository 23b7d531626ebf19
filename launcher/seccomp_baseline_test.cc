// The seccomp baseline's export: a sealed, close-on-exec memfd holding the compiled program at
// offset zero. What the program denies and allows is tested by call in seccomp_denied_calls_test,
// seccomp_allowed_calls_test, seccomp_setid_test, seccomp_arch_test and seccomp_bwrap_test.
#include "launcher/seccomp_baseline.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "launcher/seccomp_test_support.h"

namespace ccsandbox::launcher {
namespace {

using testing::ReadProgram;

TEST(SeccompBaselineExportTest, FdIsASealedCloseOnExecProgramAtOffsetZero) {
  absl::StatusOr<UniqueFd> fd = ExportSeccompBaseline();
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(fcntl(fd->get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  EXPECT_EQ(fcntl(fd->get(), F_GET_SEALS),
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  EXPECT_EQ(lseek(fd->get(), 0, SEEK_CUR), 0);
  EXPECT_EQ(write(fd->get(), "x", 1), -1);
  EXPECT_EQ(errno, EPERM);
  struct stat st;
  ASSERT_EQ(fstat(fd->get(), &st), 0);
  EXPECT_GT(st.st_size, 0);
  EXPECT_EQ(st.st_size % sizeof(sock_filter), 0u);
  EXPECT_EQ(ReadProgram(fd->get()).size() * sizeof(sock_filter), static_cast<size_t>(st.st_size));
}

TEST(SealedProgramFd, HoldsTheCompiledProgramSealed) {
  absl::StatusOr<std::string> program = SeccompBaselineProgram();
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<UniqueFd> fd = SealedProgramFd(*program);
  ASSERT_TRUE(fd.ok()) << fd.status();
  std::string read_back(program->size() + 1, '\0');
  EXPECT_EQ(pread(fd->get(), read_back.data(), read_back.size(), 0),
            static_cast<ssize_t>(program->size()));
  read_back.resize(program->size());
  EXPECT_EQ(read_back, *program);
  EXPECT_EQ(pwrite(fd->get(), "x", 1, 0), -1);  // sealed against writes
  EXPECT_FALSE(SealedProgramFd("").ok());
  EXPECT_FALSE(SealedProgramFd("1234567").ok());
}

}  // namespace
}  // namespace ccsandbox::launcher
