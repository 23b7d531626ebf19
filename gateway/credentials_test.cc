#include "gateway/credentials.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ccsandbox::gateway {
namespace {

std::string Read(const std::string& path) {
  std::string text;
  if (FILE* f = fopen(path.c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof(buf), f)) > 0;) text.append(buf, n);
    fclose(f);
  }
  return text;
}

class LocalCredentialBrokerTest : public ::testing::Test {
 protected:
  void SetUp() override { mkdir(dir_.c_str(), 0700); }
  std::string File(const std::string& name) { return dir_ + "/" + name; }
  std::string dir_ = absl::StrCat(getenv("TEST_TMPDIR"), "/tokens");
  LocalCredentialBroker broker_{dir_};
};

TEST(LocalCredentialKeys, ARepositorysKeyIsItsUrlPath) {
  EXPECT_EQ(LocalCredentialBroker::KeyFor("http://127.0.0.1:8080/git/r.git"), "git_r.git");
  EXPECT_EQ(LocalCredentialBroker::KeyFor("https://h/o/r/"), "o_r");
  EXPECT_EQ(LocalCredentialBroker::KeyFor("https://h/a b/../c"), "a_b_.._c");
  EXPECT_EQ(LocalCredentialBroker::KeyFor("https://h"), "_");
}

// Each token its own user, in its repository's files only: several sessions' and pushes'
// tokens live side by side (an htpasswd-style upstream honours a user's first line only), and a
// token opens only its repository; write tokens are in both files, read tokens in .read only.
TEST_F(LocalCredentialBrokerTest, EachTokenIsAUserOfItsOwnInItsRepositorysFiles) {
  absl::StatusOr<Credential> w = broker_.Mint("a", "http://u/r.git", CredentialScope::kWrite);
  absl::StatusOr<Credential> r = broker_.Mint("a", "http://u/r.git", CredentialScope::kRead);
  absl::StatusOr<Credential> r2 = broker_.Mint("b", "http://u/r.git", CredentialScope::kRead);
  absl::StatusOr<Credential> o = broker_.Mint("b", "http://u/o.git", CredentialScope::kRead);
  ASSERT_TRUE(w.ok() && r.ok() && r2.ok() && o.ok());
  EXPECT_NE(w->username, r->username);
  EXPECT_NE(r->username, r2->username);
  EXPECT_NE(r->password, r2->password);
  const std::string read = Read(File("r.git.read")), write = Read(File("r.git.write"));
  for (const Credential* c : {&*w, &*r, &*r2}) {
    EXPECT_TRUE(absl::StrContains(read, c->username + ":" + c->password + "\n")) << read;
  }
  EXPECT_EQ(write, absl::StrCat(w->username, ":", w->password, "\n"));
  EXPECT_EQ(Read(File("o.git.read")), absl::StrCat(o->username, ":", o->password, "\n"));
  EXPECT_FALSE(absl::StrContains(read, o->password)) << "another repository's token";

  broker_.Revoke("a", *w);
  EXPECT_EQ(Read(File("r.git.write")), "");
  EXPECT_FALSE(absl::StrContains(Read(File("r.git.read")), w->password));
  broker_.RevokeSession("b");
  EXPECT_EQ(Read(File("r.git.read")), absl::StrCat(r->username, ":", r->password, "\n"));
  EXPECT_EQ(Read(File("o.git.read")), "");
}

// A broker killed mid-push leaves live tokens; the next empties every token file at boot.
TEST_F(LocalCredentialBrokerTest, LeftoversAreRevokedAtBoot) {
  {
    LocalCredentialBroker crashed(dir_);
    ASSERT_TRUE(crashed.Mint("a", "http://u/r.git", CredentialScope::kWrite).ok());
  }
  ASSERT_NE(Read(File("r.git.write")), "");
  ASSERT_TRUE(broker_.RevokeLeftovers().ok());
  EXPECT_EQ(Read(File("r.git.write")), "");
  EXPECT_EQ(Read(File("r.git.read")), "");
}

}  // namespace
}  // namespace ccsandbox::gateway
