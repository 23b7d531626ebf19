#include "broker/session_table.h"

#include "gtest/gtest.h"

namespace ccsandbox::broker {
namespace {

v1::SandboxSpec Spec(const std::string& id) {
  v1::SandboxSpec spec;
  spec.set_session_id(id);
  return spec;
}

v1::SandboxHandle Handle(const std::string& id) {
  v1::SandboxHandle handle;
  handle.set_session_id(id);
  handle.set_backend(v1::SANDBOX_BACKEND_NATIVE);
  handle.set_state(v1::SANDBOX_STATE_WARM);
  return handle;
}

TEST(SessionTable, LifecycleWarmActiveWarmDestroyed) {
  SessionTable table;
  ASSERT_TRUE(table.Create(Spec("s"), Handle("s")).ok());
  EXPECT_EQ(table.Create(Spec("s"), Handle("s")).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(table.Get("s")->state(), v1::SANDBOX_STATE_WARM);

  auto start = table.BeginRun("s", "r1");
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(start->backend, v1::SANDBOX_BACKEND_NATIVE);
  ASSERT_TRUE(table.BeginRun("s", "r2").ok());
  EXPECT_EQ(table.Get("s")->state(), v1::SANDBOX_STATE_ACTIVE);
  table.EndRun("s", "r1");
  EXPECT_EQ(table.Get("s")->state(), v1::SANDBOX_STATE_ACTIVE);
  EXPECT_EQ(*table.Runs("s"), std::vector<std::string>{"r2"});

  auto destroyed = table.Destroy("s");
  ASSERT_TRUE(destroyed.ok());
  EXPECT_EQ(destroyed->first.state(), v1::SANDBOX_STATE_DESTROYED);
  EXPECT_EQ(destroyed->second, std::vector<std::string>{"r2"});
  table.EndRun("s", "r2");  // a run finishing after Destroy is harmless
  EXPECT_EQ(table.Get("s").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(table.List().empty());
}

// A native session: created until its sandbox is warm, runs refused meanwhile; an ended
// sandbox puts it in error, where runs are refused naming the cause and it stays so.
TEST(SessionTable, CreatedWarmThenErrorWhenItsSandboxEnds) {
  SessionTable table;
  v1::SandboxHandle handle = Handle("n");
  handle.set_state(v1::SANDBOX_STATE_CREATED);
  ASSERT_TRUE(table.Create(Spec("n"), handle).ok());
  EXPECT_EQ(table.BeginRun("n", "r0").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(table.MarkWarm("n", "sbx"));
  EXPECT_FALSE(table.MarkWarm("n", "other")) << "only a created session turns warm";
  EXPECT_FALSE(table.MarkWarm("gone", "sbx"));
  EXPECT_EQ(table.Get("n")->state(), v1::SANDBOX_STATE_WARM);
  auto start = table.BeginRun("n", "r1");
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(start->sandbox_id, "sbx");
  EXPECT_EQ(table.Plan("n")->sandbox_id, "sbx");
  table.Fail("n", "its init was killed");
  table.Fail("n", "its sandbox's run ended");  // a consequence: the first cause stays
  table.EndRun("n", "r1");                     // the run's end does not make it warm again
  EXPECT_EQ(table.Get("n")->state(), v1::SANDBOX_STATE_ERROR);
  EXPECT_EQ(table.Get("n")->error().message(), "the session's sandbox ended: its init was killed");
  auto refused = table.BeginRun("n", "r2");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("its init was killed"), absl::string_view::npos);
  auto destroyed = table.Destroy("n");
  ASSERT_TRUE(destroyed.ok());
  EXPECT_EQ(destroyed->first.state(), v1::SANDBOX_STATE_DESTROYED);
}

// Between BeginDestroy and EndDestroy the session is gone for every call, yet its id is still
// taken: a Launch racing the Destroy cannot create a session whose sandbox and proxies the
// Destroy is still stopping.
TEST(SessionTable, ADestroyingSessionIsGoneButItsIdStaysTakenUntilTheEnd) {
  SessionTable table;
  ASSERT_TRUE(table.Create(Spec("d"), Handle("d")).ok());
  ASSERT_TRUE(table.BeginRun("d", "r1").ok());
  std::string sandbox_id;
  auto destroying = table.BeginDestroy("d", &sandbox_id);
  ASSERT_TRUE(destroying.ok());
  EXPECT_EQ(destroying->second, std::vector<std::string>{"r1"});
  EXPECT_EQ(table.Get("d").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(table.BeginRun("d", "r2").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(table.Runs("d").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(table.BeginDestroy("d").status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(table.MarkWarm("d", "late"));
  EXPECT_TRUE(table.List().empty());
  EXPECT_EQ(table.Create(Spec("d"), Handle("d")).code(), absl::StatusCode::kAlreadyExists);
  table.EndDestroy("d");
  EXPECT_TRUE(table.Create(Spec("d"), Handle("d")).ok());
  table.EndDestroy("d");  // only a destroying session is removed
  EXPECT_TRUE(table.Get("d").ok());
}

TEST(SessionTable, BeginDestroyReturnsTheWarmSandbox) {
  SessionTable table;
  v1::SandboxHandle handle = Handle("w");
  handle.set_state(v1::SANDBOX_STATE_CREATED);
  ASSERT_TRUE(table.Create(Spec("w"), handle).ok());
  ASSERT_TRUE(table.MarkWarm("w", "sbx"));
  std::string sandbox_id;
  ASSERT_TRUE(table.BeginDestroy("w", &sandbox_id).ok());
  EXPECT_EQ(sandbox_id, "sbx");
}

TEST(SessionTable, UnknownSessionsAreNotFound) {
  SessionTable table;
  EXPECT_EQ(table.Get("x").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(table.BeginRun("x", "r").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(table.Runs("x").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(table.Destroy("x").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ccsandbox::broker
