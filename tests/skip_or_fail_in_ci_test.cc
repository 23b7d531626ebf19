#include "tests/skip_or_fail_in_ci.h"

#include <stdlib.h>

#include <optional>
#include <string>

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

namespace ccsandbox::testing {
namespace {

// Sets CI (or unsets it) for one scope, restoring what was there.
class ScopedCi {
 public:
  explicit ScopedCi(std::optional<std::string> value) {
    if (const char* old = getenv("CI")) old_ = old;
    if (value) {
      setenv("CI", value->c_str(), 1);
    } else {
      unsetenv("CI");
    }
  }
  ~ScopedCi() {
    if (old_) {
      setenv("CI", old_->c_str(), 1);
    } else {
      unsetenv("CI");
    }
  }

 private:
  std::optional<std::string> old_;
};

TEST(InCi, ReadsTheEnvironment) {
  const struct {
    std::optional<std::string> value;
    bool in_ci;
  } cases[] = {
      {std::nullopt, false}, {"", false},    {"0", false},
      {"false", false},      {"true", true}, {"1", true},
  };
  for (const auto& c : cases) {
    ScopedCi ci(c.value);
    EXPECT_EQ(InCi(), c.in_ci) << c.value.value_or("(unset)");
  }
}

void NeedsAWidget() { CCSANDBOX_SKIP_OR_FAIL_IN_CI("no widget here"); }

TEST(SkipOrFailInCi, FailsUnderCi) {
  ScopedCi ci("true");
  EXPECT_FATAL_FAILURE(NeedsAWidget(), "CI must have what this test needs, yet: no widget here");
}

TEST(SkipOrFailInCi, SkipsElsewhere) {
  ScopedCi ci(std::nullopt);
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    NeedsAWidget();
  }
  ASSERT_EQ(results.size(), 1);
  EXPECT_TRUE(results.GetTestPartResult(0).skipped());
  EXPECT_STREQ(results.GetTestPartResult(0).message(), "no widget here");
}

}  // namespace
}  // namespace ccsandbox::testing
