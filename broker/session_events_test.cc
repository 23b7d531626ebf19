#include "broker/session_events.h"

#include "gtest/gtest.h"

namespace ccsandbox::broker {
namespace {

TEST(SessionEvents, ReachesOnlyTheSessionsOpenStreams) {
  SessionEvents events;
  std::vector<std::string> a, b;
  const uint64_t ta = events.Subscribe(
      "s1", [&](const v1::SandboxEvent& e) { a.push_back(e.violation().target()); });
  events.Subscribe("s2", [&](const v1::SandboxEvent& e) { b.push_back(e.violation().target()); });
  v1::SandboxEvent e;
  e.mutable_violation()->set_target("evil.test:443");
  EXPECT_EQ(events.Publish("s1", e), 1);
  events.Unsubscribe("s1", ta);
  EXPECT_EQ(events.Publish("s1", e), 0);
  EXPECT_EQ(events.Publish("nobody", e), 0);
  EXPECT_EQ(a, std::vector<std::string>{"evil.test:443"});
  EXPECT_TRUE(b.empty());
}

}  // namespace
}  // namespace ccsandbox::broker
