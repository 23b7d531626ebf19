#include "gateway/credentials.h"

#include <stdlib.h>

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
  std::string file_ = absl::StrCat(getenv("TEST_TMPDIR"), "/tokens");
  LocalCredentialBroker broker_{file_};
};

// An htpasswd-style upstream checks only the first "writer:" line: two live lines would make
// every push but one fail, and let an agent that holds its push open stop every other session's.
TEST_F(LocalCredentialBrokerTest, PushesLiveAtOneTimeShareOneWriteLine) {
  absl::StatusOr<Credential> a = broker_.Mint("a", "http://u/r.git", CredentialScope::kWrite);
  absl::StatusOr<Credential> b = broker_.Mint("b", "http://u/r.git", CredentialScope::kWrite);
  absl::StatusOr<Credential> a2 = broker_.Mint("a", "http://u/r.git", CredentialScope::kWrite);
  ASSERT_TRUE(a.ok() && b.ok() && a2.ok());
  EXPECT_EQ(a->password, b->password);
  EXPECT_EQ(a->password, a2->password);
  EXPECT_EQ(Read(file_), absl::StrCat("writer:", a->password, "\n"));

  broker_.Revoke("a", *a);  // a's other push and b's still hold it
  EXPECT_EQ(Read(file_), absl::StrCat("writer:", a->password, "\n"));
  broker_.RevokeSession("b");
  EXPECT_EQ(Read(file_), absl::StrCat("writer:", a->password, "\n"));
  broker_.Revoke("a", *a2);
  EXPECT_EQ(Read(file_), "");

  absl::StatusOr<Credential> next = broker_.Mint("a", "http://u/r.git", CredentialScope::kWrite);
  ASSERT_TRUE(next.ok());
  EXPECT_NE(next->password, a->password) << "a revoked token came back";
}

TEST_F(LocalCredentialBrokerTest, ReadTokensAreNeverShared) {
  absl::StatusOr<Credential> w = broker_.Mint("a", "http://u/r.git", CredentialScope::kWrite);
  absl::StatusOr<Credential> r = broker_.Mint("a", "http://u/r.git", CredentialScope::kRead);
  absl::StatusOr<Credential> r2 = broker_.Mint("b", "http://u/r.git", CredentialScope::kRead);
  ASSERT_TRUE(w.ok() && r.ok() && r2.ok());
  EXPECT_EQ(r->username, "reader");
  EXPECT_NE(r->password, w->password);
  EXPECT_NE(r->password, r2->password);
  broker_.RevokeSession("a");
  EXPECT_EQ(Read(file_), absl::StrCat("reader:", r2->password, "\n"));
}

TEST_F(LocalCredentialBrokerTest, LeftoversOfAPreviousBrokerAreRevokedAtBoot) {
  {
    FILE* f = fopen(file_.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fputs("writer:ccs_left_by_a_crashed_broker\n", f);
    fclose(f);
  }
  ASSERT_TRUE(broker_.RevokeLeftovers().ok());
  EXPECT_EQ(Read(file_), "");
}

}  // namespace
}  // namespace ccsandbox::gateway
