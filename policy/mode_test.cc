#include "policy/mode.h"

#include <cstddef>
#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

TEST(Mode, EveryModeByName) {
  struct Row {
    Mode mode;
    absl::string_view name;
    bool read_only;
  };
  const Row kTable[] = {
      {Mode::kChat, "chat", false},
      {Mode::kReview, "review", true},
      {Mode::kPlan, "plan", true},
      {Mode::kOrchestrate, "orchestrate", true},
  };
  ASSERT_EQ(std::size(kTable), static_cast<size_t>(kModeCount));
  for (int i = 0; i < kModeCount; ++i) {
    const Row& row = kTable[i];
    EXPECT_EQ(kAllModes[i], row.mode) << row.name;
    EXPECT_EQ(ModeName(row.mode), row.name);
    EXPECT_EQ(ModeIsReadOnly(row.mode), row.read_only) << row.name;
    absl::StatusOr<Mode> parsed = ParseMode(row.name);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, row.mode);
  }
}

TEST(ParseMode, EmptyIsChatAndNamesAreExact) {
  EXPECT_EQ(*ParseMode(""), Mode::kChat);
  for (absl::string_view bad : {"Chat", "yolo", " plan", "plan "}) {
    absl::StatusOr<Mode> mode = ParseMode(bad);
    ASSERT_FALSE(mode.ok()) << bad;
    EXPECT_EQ(mode.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(mode.status().message(), "mode: ")) << mode.status();
  }
}

}  // namespace
}  // namespace ccsandbox::policy
