#include "policy/violations/dedup.h"

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

v1::SandboxViolation V(const std::string& action, const std::string& target) {
  v1::SandboxViolation v;
  v.set_action(action);
  v.set_target(target);
  return v;
}

TEST(ViolationDedup, DropsStderrEchoesOfARefusalOnly) {
  ViolationDedup dedup;
  EXPECT_FALSE(dedup.IsEcho(V("file-write*", ".env")));  // nothing refused yet
  dedup.RecordRefusal("/work/tree/sub/.env");
  EXPECT_TRUE(dedup.IsEcho(V("file-write*", ".env")));
  EXPECT_TRUE(dedup.IsEcho(V("file-write*", "sub/.env")));
  EXPECT_TRUE(dedup.IsEcho(V("file-access*", "/work/tree/sub/.env")));
  // Other names, and denials of another kind, are real and stay.
  EXPECT_FALSE(dedup.IsEcho(V("file-write*", "sub/.envrc")));
  EXPECT_FALSE(dedup.IsEcho(V("file-read*", ".env")));
  EXPECT_FALSE(dedup.IsEcho(V("process-exec", ".env")));
  EXPECT_FALSE(dedup.IsEcho(V("file-write-create", "/work/tree/sub/.env")));
}

// A refused set-id mode: chmod's "changing permissions of 'x'", Python's "[Errno 1] ...: 'x'".
TEST(ViolationDedup, DropsStderrEchoesOfARefusedSetIdMode) {
  ViolationDedup dedup;
  dedup.RecordRefusal("/work/tree/x");
  EXPECT_TRUE(dedup.IsEcho(V("file-write*", "x")));
  EXPECT_TRUE(dedup.IsEcho(V("file-access*", "./x")));
  EXPECT_FALSE(dedup.IsEcho(V("file-write-setid", "/work/tree/x")));
  EXPECT_FALSE(dedup.IsEcho(V("file-write*", "y")));
}

}  // namespace
}  // namespace ccsandbox::policy
