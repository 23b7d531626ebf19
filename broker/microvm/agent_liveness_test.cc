#include "broker/microvm/agent_liveness.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker::microvm {
namespace {

using ::testing::HasSubstr;

Frame Answer() { return {FrameType::kHelloReply, kAgentVersion}; }

TEST(AgentLivenessTest, AsksEveryThirdOfTheTimeoutAndOnlyOnceAtATime) {
  AgentLiveness liveness(absl::Seconds(30));
  const absl::Time t0 = absl::UnixEpoch() + absl::Hours(1);
  EXPECT_TRUE(liveness.AskNow(t0));
  EXPECT_FALSE(liveness.AskNow(t0 + absl::Seconds(20)));  // one outstanding
  std::vector<Frame> frames = {Answer()};
  std::string error;
  ASSERT_TRUE(liveness.Heard(absl::Milliseconds(5), &frames, t0, &error));
  EXPECT_TRUE(frames.empty());
  EXPECT_FALSE(liveness.AskNow(t0 + absl::Seconds(9)));
  EXPECT_TRUE(liveness.AskNow(t0 + absl::Seconds(10)));
}

TEST(AgentLivenessTest, AQuestionUnansweredForTheTimeoutOfWaitingIsAHang) {
  AgentLiveness liveness(absl::Seconds(3));
  const absl::Time t0 = absl::UnixEpoch();
  ASSERT_TRUE(liveness.AskNow(t0));
  std::vector<Frame> frames;
  std::string error;
  for (int i = 0; i < 29; ++i) {
    ASSERT_TRUE(liveness.Heard(absl::Milliseconds(100), &frames, t0, &error)) << i;
  }
  EXPECT_FALSE(liveness.Heard(absl::Milliseconds(100), &frames, t0, &error));
  EXPECT_THAT(error, HasSubstr("the guest stopped answering"));
  EXPECT_THAT(error, HasSubstr("3s"));
}

// Wall time the host spent elsewhere (a slow client) does not count; only its waits do.
TEST(AgentLivenessTest, OnlyTheHostsWaitingCounts) {
  AgentLiveness liveness(absl::Seconds(3));
  const absl::Time t0 = absl::UnixEpoch();
  ASSERT_TRUE(liveness.AskNow(t0));
  std::vector<Frame> frames;
  std::string error;
  EXPECT_TRUE(liveness.Heard(absl::Seconds(1), &frames, t0 + absl::Hours(1), &error));
  frames = {{FrameType::kStdout, "output"}, Answer(), {FrameType::kExit, "...."}};
  EXPECT_TRUE(liveness.Heard(absl::Seconds(1), &frames, t0 + absl::Hours(2), &error));
  ASSERT_EQ(frames.size(), 2u);  // the run's frames stay, in order
  EXPECT_EQ(frames[0].type, FrameType::kStdout);
  EXPECT_EQ(frames[1].type, FrameType::kExit);
  // Answered: the next question starts a fresh count.
  ASSERT_TRUE(liveness.AskNow(t0 + absl::Hours(3)));
  frames.clear();
  EXPECT_TRUE(liveness.Heard(absl::Seconds(2), &frames, t0 + absl::Hours(3), &error));
}

TEST(AgentLivenessTest, AReplyThatIsNotTheAgentsVersionIsNoAnswer) {
  AgentLiveness liveness(absl::Seconds(1));
  ASSERT_TRUE(liveness.AskNow(absl::UnixEpoch()));
  std::vector<Frame> frames = {{FrameType::kHelloReply, "someone else"}};
  std::string error;
  EXPECT_FALSE(liveness.Heard(absl::Seconds(1), &frames, absl::UnixEpoch(), &error));
  EXPECT_EQ(frames.size(), 1u);
}

TEST(AgentLivenessTest, NoTimeoutNeverAsksNorConcludes) {
  AgentLiveness liveness(absl::ZeroDuration());
  EXPECT_FALSE(liveness.AskNow(absl::UnixEpoch()));
  std::vector<Frame> frames;
  std::string error;
  EXPECT_TRUE(liveness.Heard(absl::Hours(100), &frames, absl::UnixEpoch(), &error));
}

}  // namespace
}  // namespace ccsandbox::broker::microvm
