// The push gateway with real git on one side and a real smart-HTTP upstream (lighttpd +
// git-http-backend, tokens from the gateway's credential broker) on the other: allowed pushes
// land, refused ones print git's own `! [remote rejected]` line and change nothing, no token
// is ever seen by the client, and every write token is revoked once its push is done.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gateway/credentials.h"
#include "gateway/push_gateway.h"
#include "gtest/gtest.h"
#include "tests/daemon_fixture.h"
#include "tests/git_upstream.h"

namespace ccsandbox::testing {
namespace {

class GatewayPushTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<GitUpstream>> up = GitUpstream::Start();
    ASSERT_TRUE(up.ok()) << up.status();
    upstream_ = *std::move(up);
    ASSERT_TRUE(upstream_->CreateRepository("r.git").ok());
    ASSERT_TRUE(upstream_->CreateRepository("other.git").ok());
    credentials_ = std::make_unique<gateway::LocalCredentialBroker>(upstream_->token_dir());
    StartGateway({"allow push_to_remote", "deny push_to_remote main"});
    work_ = upstream_->dir() + "/work";
    ASSERT_EQ(Git({"init", "-q", work_}).exit_code, 0);
    ASSERT_EQ(Git({"-C", work_, "commit", "-q", "--allow-empty", "-m", "one"}).exit_code, 0);
  }

  void StartGateway(const std::vector<std::string>& rule_lines) {
    gateway_.reset();
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ASSERT_EQ(listen(fd, 16), 0);
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
    absl::StatusOr<policy::GuardrailRuleSet> rules = policy::ParseGuardrailRules(rule_lines);
    ASSERT_TRUE(rules.ok()) << rules.status();
    gateway::PushGatewayOptions options;
    options.session_id = "s1";
    options.repositories = {{"/o/r.git", upstream_->Url("r.git")}};
    options.rules = *rules;
    options.credentials = credentials_.get();
    options.on_decision = [this](const std::string& line) {
      absl::MutexLock lock(&mu_);
      decisions_.push_back(line);
    };
    absl::StatusOr<std::unique_ptr<gateway::PushGateway>> started =
        gateway::PushGateway::Start(UniqueFd(fd), std::move(options));
    ASSERT_TRUE(started.ok()) << started.status();
    gateway_ = *std::move(started);
  }

  ProgramResult Git(std::vector<std::string> args) {
    std::vector<std::string> argv = {"env",
                                     "GIT_TERMINAL_PROMPT=0",
                                     "GIT_ASKPASS=/bin/false",
                                     "git",
                                     "-c",
                                     "user.email=t@example.com",
                                     "-c",
                                     "user.name=t",
                                     "-c",
                                     "credential.helper="};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv);
  }

  std::string GatewayUrl(const std::string& path = "/o/r.git") const {
    return absl::StrCat("http://127.0.0.1:", port_, path);
  }

  std::string Local(const std::string& ref) {
    return std::string(absl::StripAsciiWhitespace(Git({"-C", work_, "rev-parse", ref}).out));
  }

  // No token of the broker's in `text`; and no writer token left live.
  void ExpectNoTokenIn(const std::string& text) {
    EXPECT_FALSE(absl::StrContains(text, "ccs_")) << text;
  }
  void ExpectNoWriteTokenLive() {
    EXPECT_FALSE(upstream_->WriteTokensLive()) << upstream_->AllTokens();
  }

  std::unique_ptr<GitUpstream> upstream_;
  std::unique_ptr<gateway::LocalCredentialBroker> credentials_;
  std::unique_ptr<gateway::PushGateway> gateway_;
  int port_ = 0;
  std::string work_;
  absl::Mutex mu_;
  std::vector<std::string> decisions_;
};

TEST_F(GatewayPushTest, AnAllowedPushLandsUpstream) {
  ProgramResult push = Git({"-C", work_, "push", GatewayUrl(), "HEAD:refs/heads/feature/x"});
  EXPECT_EQ(push.exit_code, 0) << push.err;
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/feature/x"), Local("HEAD"));
  ExpectNoTokenIn(push.out + push.err);
  ExpectNoWriteTokenLive();
}

TEST_F(GatewayPushTest, ARefusedPushShowsGitsOwnRejectionAndChangesNothing) {
  ProgramResult push = Git({"-C", work_, "push", GatewayUrl(), "HEAD:main"});
  EXPECT_NE(push.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(push.err,
                                " ! [remote rejected] HEAD -> main (Control Center "
                                "policy: "))
      << push.err;
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/main"), "");
  ExpectNoTokenIn(push.out + push.err);
  ExpectNoWriteTokenLive();
  absl::MutexLock lock(&mu_);
  ASSERT_FALSE(decisions_.empty());
  EXPECT_TRUE(absl::StrContains(decisions_.back(), "refused")) << decisions_.back();
}

TEST_F(GatewayPushTest, OneRefusedRefStopsTheWholePush) {
  ProgramResult push =
      Git({"-C", work_, "push", GatewayUrl(), "HEAD:refs/heads/feature/y", "HEAD:main"});
  EXPECT_NE(push.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(push.err, "HEAD -> feature/y (Control Center policy: not pushed"))
      << push.err;
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/feature/y"), "");
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/main"), "");
}

TEST_F(GatewayPushTest, APromptWithNoApproverIsRefused) {
  StartGateway({"prompt push_to_remote"});
  ProgramResult push = Git({"-C", work_, "push", GatewayUrl(), "HEAD:refs/heads/feature/z"});
  EXPECT_NE(push.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(push.err, "no approver is connected")) << push.err;
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/feature/z"), "");
}

TEST_F(GatewayPushTest, OnlyTheSessionsRepositoriesAndNoFetches) {
  ProgramResult other =
      Git({"-C", work_, "push", GatewayUrl("/o/other.git"), "HEAD:refs/heads/feature/x"});
  EXPECT_NE(other.exit_code, 0);
  EXPECT_EQ(upstream_->Head("other.git", "refs/heads/feature/x"), "");
  ProgramResult fetch = Git({"-C", work_, "fetch", GatewayUrl()});
  EXPECT_NE(fetch.exit_code, 0);
  absl::MutexLock lock(&mu_);
  bool named_repo = false, named_fetch = false;
  for (const std::string& d : decisions_) {
    named_repo |= absl::StrContains(d, "/o/other.git is not a repository of this session");
    named_fetch |= absl::StrContains(d, "fetches go to the upstream directly");
  }
  EXPECT_TRUE(named_repo) << absl::StrJoin(decisions_, "\n");
  EXPECT_TRUE(named_fetch) << absl::StrJoin(decisions_, "\n") << fetch.err;
}

// A push larger than git's post buffer comes chunked; it is streamed, not refused or cut.
TEST_F(GatewayPushTest, ALargeChunkedPushLands) {
  ASSERT_EQ(RunProgram({"sh", "-c", "head -c 8000000 /dev/urandom > " + work_ + "/blob"}).exit_code,
            0);
  ASSERT_EQ(Git({"-C", work_, "add", "blob"}).exit_code, 0);
  ASSERT_EQ(Git({"-C", work_, "commit", "-q", "-m", "blob"}).exit_code, 0);
  ProgramResult push = Git({"-C", work_, "push", GatewayUrl(), "HEAD:refs/heads/feature/big"});
  EXPECT_EQ(push.exit_code, 0) << push.err;
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/feature/big"), Local("HEAD"));
}

TEST_F(GatewayPushTest, TheUpstreamRefusesRevokedAndReadTokens) {
  absl::StatusOr<gateway::Credential> read =
      credentials_->Mint("s1", upstream_->Url("r.git"), gateway::CredentialScope::kRead);
  ASSERT_TRUE(read.ok());
  auto url_with = [&](const gateway::Credential& c) {
    return absl::StrCat("http://", c.username, ":", c.password, "@",
                        upstream_->Url("r.git").substr(7));
  };
  // A read token fetches and cannot push.
  ASSERT_EQ(Git({"-C", work_, "push", GatewayUrl(), "HEAD:refs/heads/feature/r"}).exit_code, 0);
  EXPECT_EQ(Git({"-C", work_, "fetch", url_with(*read), "feature/r"}).exit_code, 0);
  EXPECT_NE(Git({"-C", work_, "push", url_with(*read), "HEAD:refs/heads/direct"}).exit_code, 0);
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/direct"), "");
  // Revoked with its session: refused from then on.
  credentials_->RevokeSession("s1");
  EXPECT_NE(Git({"-C", work_, "fetch", url_with(*read), "feature/r"}).exit_code, 0);
}

// Hostile bytes at the endpoint: a clear 400, never forwarded, and the gateway goes on.
TEST_F(GatewayPushTest, AMalformedPushRequestIsRefusedBounded) {
  const std::string body = "zzzz not a pkt-line";
  ProgramResult r =
      RunProgram({"curl", "-s", "-o", "/dev/stdout", "-w", "\n%{http_code}", "-X", "POST", "-H",
                  "Content-Type: application/x-git-receive-pack-request", "--data-binary", body,
                  GatewayUrl() + "/git-receive-pack"});
  EXPECT_TRUE(absl::EndsWith(r.out, "\n400")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "pkt-line")) << r.out;
  EXPECT_LT(r.out.size(), 1000u);
  ProgramResult push = Git({"-C", work_, "push", GatewayUrl(), "HEAD:refs/heads/feature/after"});
  EXPECT_EQ(push.exit_code, 0) << push.err;
}

// A client's path is quoted in the refusal and the log only so far: a 10 KB path is not echoed.
TEST_F(GatewayPushTest, ARefusalQuotesALongPathBounded) {
  const std::string path = "/" + std::string(10000, 'p') + "/info/refs";
  ProgramResult r = RunProgram({"curl", "-s", "-w", "\n%{http_code}", GatewayUrl(path)});
  EXPECT_TRUE(absl::EndsWith(r.out, "\n404")) << r.out.substr(0, 300);
  EXPECT_LT(r.out.size(), 1000u);
  absl::MutexLock lock(&mu_);
  ASSERT_FALSE(decisions_.empty());
  EXPECT_LT(decisions_.back().size(), 1000u);
}

}  // namespace
}  // namespace ccsandbox::testing
