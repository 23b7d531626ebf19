#include "broker/runtime_dir.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "gtest/gtest.h"

namespace ccsandbox::broker {
namespace {

bool Exists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

TEST(RuntimeDir, CleansLeftoversOwnsSessionsAndRemovesEverything) {
  char tmpl[] = "/tmp/rtdir.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string root = std::string(tmpl) + "/rt";
  ASSERT_EQ(mkdir(root.c_str(), 0755), 0);
  std::ofstream(root + "/stale.sock") << "";  // a crashed broker's leftover
  {
    auto dir = RuntimeDir::Open(root);
    ASSERT_TRUE(dir.ok()) << dir.status();
    EXPECT_FALSE(Exists(root + "/stale.sock"));
    struct stat st;
    ASSERT_EQ(stat(root.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    auto a = (*dir)->CreateSessionDir();
    auto b = (*dir)->CreateSessionDir();
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NE(*a, *b);
    std::ofstream(*a + "/http.sock") << "";
    (*dir)->RemoveSessionDir(*a);
    EXPECT_FALSE(Exists(*a));
    EXPECT_TRUE(Exists(*b));
    (*dir)->RemoveSessionDir("/etc");  // never outside its own tree
    EXPECT_TRUE(Exists("/etc"));
  }
  EXPECT_FALSE(Exists(root));
  rmdir(tmpl);
}

// A second broker on the same directory is refused and wipes nothing of the first's.
TEST(RuntimeDir, HeldByOneBrokerAtATime) {
  char tmpl[] = "/tmp/rtdir.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string root = std::string(tmpl) + "/rt";
  {
    auto first = RuntimeDir::Open(root);
    ASSERT_TRUE(first.ok()) << first.status();
    auto session = (*first)->CreateSessionDir();
    ASSERT_TRUE(session.ok());
    std::ofstream(*session + "/http.sock") << "";
    auto second = RuntimeDir::Open(root);
    EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition) << second.status();
    EXPECT_NE(second.status().message().find("in use by another broker"), std::string::npos);
    EXPECT_TRUE(Exists(*session + "/http.sock"));
  }
  // Released with the first: the next one opens it.
  EXPECT_TRUE(RuntimeDir::Open(root).ok());
  rmdir(tmpl);
}

TEST(RuntimeDir, RefusesBadRoots) {
  EXPECT_FALSE(RuntimeDir::Open("relative").ok());
  EXPECT_FALSE(RuntimeDir::Open("/tmp/" + std::string(100, 'x')).ok());
  EXPECT_FALSE(RuntimeDir::Open("/etc/passwd").ok());
}

}  // namespace
}  // namespace ccsandbox::broker
