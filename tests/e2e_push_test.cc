// Pushes from a real sandbox through the session's push gateway to a real smart-HTTP upstream
// (lighttpd + git-http-backend, accepting only the tokens the broker's credential broker mints):
// plain `git push` of an allowed branch lands; a refused one prints git's own
// `! [remote rejected]` line, exits non-zero and changes nothing upstream, with a violation
// event; ways around the gateway push nothing; no token is ever inside; Destroy revokes all.
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/exec_events.h"
#include "tests/git_upstream.h"

namespace ccsandbox::testing {
namespace {

class PushTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<GitUpstream>> up = GitUpstream::Start();
    ASSERT_TRUE(up.ok()) << up.status();
    upstream_ = *std::move(up);
    ASSERT_TRUE(upstream_->CreateRepository("r.git").ok());
    // The egress (and the gateway's upstream) resolve git.test from a hosts file: the upstream
    // by a name the sandbox's proxy may reach.
    hosts_ = upstream_->dir() + "/egress-hosts";
    std::ofstream(hosts_) << "127.0.0.1 git.test\n";
    absl::StatusOr<std::unique_ptr<Daemons>> d =
        Daemons::Start({.broker_flags = {"--push-credentials=local:" + upstream_->token_dir(),
                                         "--egress-hosts-file=" + hosts_}});
    ASSERT_TRUE(d.ok()) << d.status();
    d_ = *std::move(d);
    stub_ = v1::SandboxBroker::NewStub(
        grpc::CreateChannel(d_->broker_address(), grpc::InsecureChannelCredentials()));
    // A checkout whose origin is the upstream, with one commit on main (pushed on the host,
    // straight into the bare repository).
    work_ = d_->MakeWorkdir() + "/repo";
    const std::string bare = upstream_->dir() + "/repos/r.git";
    for (const std::vector<std::string>& argv :
         {std::vector<std::string>{"git", "init", "-q", "-b", "main", work_},
          {"git", "-C", work_, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit",
           "-q", "--allow-empty", "-m", "base"},
          {"git", "-C", work_, "push", "-q", bare, "main"},
          {"git", "-C", work_, "remote", "add", "origin", upstream_->Url("r.git")}}) {
      ProgramResult r = RunProgram(argv);
      ASSERT_EQ(r.exit_code, 0) << argv[1] << ": " << r.err;
    }
    base_ = upstream_->Head("r.git", "refs/heads/main");
    ASSERT_FALSE(base_.empty());
  }

  grpc::Status Launch(const std::string& id, const std::vector<std::string>& rules,
                      const std::string& repository = "",
                      const std::vector<std::string>& allow = {}) {
    v1::LaunchRequest request;
    v1::SandboxSpec* spec = request.mutable_spec();
    for (const std::string& entry : allow) spec->add_egress_allowlist(entry);
    spec->set_session_id(id);
    v1::SandboxBindMount* bind = spec->add_bind_mounts();
    bind->set_host_path(work_);
    bind->set_guest_path(work_);
    spec->set_guest_workdir(work_);
    spec->mutable_push()->add_repositories(repository.empty() ? upstream_->Url("r.git")
                                                              : repository);
    for (const std::string& rule : rules) spec->mutable_push()->add_rules(rule);
    grpc::ClientContext ctx;
    return stub_->Launch(&ctx, request, &handle_);
  }

  std::vector<v1::SandboxEvent> Sh(const std::string& id, const std::string& script) {
    return ExecEvents(*stub_,
                      ShExec(id,
                             "git config --global user.email t@example.com; git config "
                             "--global user.name t; " +
                                 script),
                      nullptr, absl::Seconds(60));
  }

  std::unique_ptr<GitUpstream> upstream_;
  std::unique_ptr<Daemons> d_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
  std::string work_;
  std::string hosts_;
  std::string base_;
  v1::SandboxHandle handle_;
};

TEST_F(PushTest, AllowedPushesLandAndRefusedOnesAreRejectedInGitsOwnWords) {
  ASSERT_TRUE(Launch("p", {"allow push_to_remote", "deny push_to_remote main"}).ok());
  EXPECT_TRUE(absl::StrContains(handle_.details().fields().at("push").string_value(),
                                "through the push gateway"))
      << handle_.DebugString();
  std::vector<v1::SandboxEvent> feature = Sh(
      "p", "git commit -q --allow-empty -m feature && git push origin HEAD:refs/heads/feature/x");
  EXPECT_EQ(ExitOf(feature), 0) << StderrOf(feature);
  const std::string pushed = upstream_->Head("r.git", "refs/heads/feature/x");
  EXPECT_FALSE(pushed.empty()) << StderrOf(feature);

  std::vector<v1::SandboxEvent> main = Sh("p", "git push origin HEAD:main");
  EXPECT_NE(ExitOf(main), 0);
  EXPECT_TRUE(absl::StrContains(StderrOf(main),
                                " ! [remote rejected] HEAD -> main (Control Center policy: "))
      << StderrOf(main);
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/main"), base_) << "main changed upstream";
  bool reported = false;
  for (const v1::SandboxEvent& e : main) {
    reported |= e.has_violation() && e.violation().action() == "git-push";
  }
  EXPECT_TRUE(reported) << "no violation event for the refused push";
}

TEST_F(PushTest, WaysAroundTheGatewayPushNothing) {
  ASSERT_TRUE(Launch("around", {"deny push_to_remote"}).ok());
  const std::string url = upstream_->Url("r.git");
  std::vector<v1::SandboxEvent> tries =
      Sh("around",
         absl::StrCat("git commit -q --allow-empty -m sneaky; "
                      // The configuration undone, and the URL spelled so no rewrite matches.
                      "GIT_CONFIG_COUNT=0 git push ",
                      url,
                      " HEAD:refs/heads/direct1; "
                      "git -c url.",
                      url, ".pushInsteadOf=", url, " push ", url,
                      " HEAD:refs/heads/direct2; "
                      "git push ",
                      url,
                      "/ HEAD:refs/heads/direct3; "
                      "git push --repo=",
                      url,
                      " origin HEAD:refs/heads/direct4; "
                      // The gateway itself, at another repository's path.
                      "git push http://127.0.0.1:3130/elsewhere/x.git HEAD:refs/heads/direct5; "
                      "echo tried"));
  EXPECT_TRUE(absl::StrContains(StdoutOf(tries), "tried"));
  for (const char* ref : {"direct1", "direct2", "direct3", "direct4", "direct5"}) {
    EXPECT_EQ(upstream_->Head("r.git", absl::StrCat("refs/heads/", ref)), "") << ref;
  }
}

TEST_F(PushTest, NoTokenIsEverInsideAndDestroyRevokesThemAll) {
  ASSERT_TRUE(Launch("t", {"allow push_to_remote"}).ok());
  std::vector<v1::SandboxEvent> push =
      Sh("t",
         "git commit -q --allow-empty -m t && git push origin HEAD:refs/heads/feature/t && "
         "env; git config --list --show-origin; cat /proc/self/environ | tr '\\0' '\\n'; "
         "grep -rs ccs_ /run /tmp \"$HOME\" .git 2>/dev/null | head -5");
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/feature/t").empty(), false) << StderrOf(push);
  std::string everything;
  for (const v1::SandboxEvent& e : push) everything += e.SerializeAsString();
  EXPECT_FALSE(absl::StrContains(everything, "ccs_")) << StdoutOf(push) << StderrOf(push);
  EXPECT_FALSE(upstream_->WriteTokensLive()) << "a write token outlived its push";
  grpc::ClientContext ctx;
  v1::SessionRequest request;
  request.set_session_id("t");
  v1::SandboxHandle handle;
  ASSERT_TRUE(stub_->Destroy(&ctx, request, &handle).ok());
  EXPECT_EQ(upstream_->AllTokens(), "") << "tokens outlived the session";
}

TEST_F(PushTest, PushSpecsAreCheckedAtLaunch) {
  grpc::Status bad_rule = Launch("bad", {"allow install_package"});
  EXPECT_EQ(bad_rule.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(bad_rule.error_message(), "push.rules[0]"))
      << bad_rule.error_message();
  v1::LaunchRequest request;
  request.mutable_spec()->set_session_id("bad-url");
  request.mutable_spec()->mutable_push()->add_repositories("https://user:pw@github.com/o/r.git");
  grpc::ClientContext ctx;
  v1::SandboxHandle handle;
  grpc::Status bad_url = stub_->Launch(&ctx, request, &handle);
  EXPECT_EQ(bad_url.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(bad_url.error_message(), "push.repositories"))
      << bad_url.error_message();
  EXPECT_FALSE(absl::StrContains(bad_url.error_message(), "pw@")) << "a credential echoed";
}

// The run's git credential helper (the shim, asking the gateway) gets a read credential for the
// session's repository and nothing for another; that credential fetches and cannot push, and
// Destroy revokes it.
TEST_F(PushTest, TheCredentialHelperGetsAReadOnlyTokenForTheSessionsRepositoryOnly) {
  ASSERT_TRUE(Launch("cred", {"allow push_to_remote"}).ok());
  const std::string url = upstream_->Url("r.git");  // http://127.0.0.1:PORT/git/r.git
  const std::string host = url.substr(7, url.find('/', 7) - 7);
  auto fill = [&](const std::string& path) {
    return StdoutOf(Sh("cred", absl::StrCat("printf 'protocol=http\\nhost=", host, "\\npath=", path,
                                            "\\n\\n' | git credential fill 2>&1 "
                                            "</dev/stdin; true")));
  };
  const std::string mine = fill("git/r.git");
  const size_t user = mine.find("username=");
  ASSERT_NE(user, std::string::npos) << mine;
  const std::string username = mine.substr(user + 9, mine.find('\n', user) - user - 9);
  const size_t at = mine.find("password=");
  ASSERT_NE(at, std::string::npos) << mine;
  const std::string token = mine.substr(at + 9, mine.find('\n', at) - at - 9);
  EXPECT_FALSE(absl::StrContains(fill("git/other.git"), "password=")) << "another repository";
  // On the host: the token reads and cannot write.
  const std::string with_token = absl::StrCat("http://", username, ":", token, "@", url.substr(7));
  EXPECT_EQ(RunProgram({"git", "ls-remote", with_token}).exit_code, 0);
  EXPECT_NE(RunProgram({"env", "GIT_TERMINAL_PROMPT=0", "git", "-C", work_, "push", with_token,
                        "HEAD:refs/heads/direct"})
                .exit_code,
            0);
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/direct"), "");
  grpc::ClientContext ctx;
  v1::SessionRequest request;
  request.set_session_id("cred");
  v1::SandboxHandle handle;
  ASSERT_TRUE(stub_->Destroy(&ctx, request, &handle).ok());
  EXPECT_NE(RunProgram({"env", "GIT_TERMINAL_PROMPT=0", "git", "ls-remote", with_token}).exit_code,
            0)
      << "the read token outlived the session";
}

// A private fetch from inside, end to end: git fetches through the session's egress proxy and,
// asked for credentials by the upstream, gets the session's read credential from its helper;
// then pushes through the gateway to the same upstream by the same name.
TEST_F(PushTest, TheRunFetchesThroughTheProxyWithItsReadCredentialAndPushesThroughTheGateway) {
  const std::string url = upstream_->Url("r.git");  // http://127.0.0.1:PORT/git/r.git
  const std::string port = url.substr(17, url.find('/', 17) - 17);
  const std::string by_name = absl::StrCat("http://git.test:", port, "/git/r.git");
  ASSERT_TRUE(Launch("named", {"allow push_to_remote"}, by_name, {"git.test:" + port}).ok());
  // A commit upstream the checkout does not have yet.
  const std::string clone = upstream_->dir() + "/other-clone";
  ASSERT_EQ(
      RunProgram({"git", "clone", "-q", "-b", "main", upstream_->dir() + "/repos/r.git", clone})
          .exit_code,
      0);
  ASSERT_EQ(RunProgram({"git", "-C", clone, "-c", "user.email=t@example.com", "-c", "user.name=t",
                        "commit", "-q", "--allow-empty", "-m", "upstream"})
                .exit_code,
            0);
  ASSERT_EQ(
      RunProgram({"git", "-C", clone, "push", "-q", upstream_->dir() + "/repos/r.git", "HEAD:main"})
          .exit_code,
      0);
  const std::string upstream_main = upstream_->Head("r.git", "refs/heads/main");
  std::vector<v1::SandboxEvent> fetch = Sh(
      "named",
      // By URL: .git/config is read-only inside (the checkout's origin stays what the host set).
      absl::StrCat("GIT_TERMINAL_PROMPT=0 git fetch -q ", by_name,
                   " main && git rev-parse FETCH_HEAD && git commit -q --allow-empty -m named && "
                   "git push -q ",
                   by_name, " HEAD:refs/heads/feature/named"));
  EXPECT_EQ(ExitOf(fetch), 0) << StderrOf(fetch);
  EXPECT_TRUE(absl::StrContains(StdoutOf(fetch), upstream_main)) << StdoutOf(fetch);
  EXPECT_FALSE(upstream_->Head("r.git", "refs/heads/feature/named").empty()) << StderrOf(fetch);
  EXPECT_FALSE(absl::StrContains(StdoutOf(fetch) + StderrOf(fetch), "ccs_"));
}

// The credentials' directory is never bound into a sandbox, however it is spelled: itself, a
// directory that holds it, a symlink to it. And nothing created in a writable bind after Launch
// reaches it from inside (the sandbox's mounts hold no path to it).
TEST_F(PushTest, TheCredentialsDirectoryIsOutOfReachHoweverSpelled) {
  const std::string link = d_->MakeWorkdir() + "/tokens-link";
  ASSERT_EQ(symlink(upstream_->token_dir().c_str(), link.c_str()), 0);
  for (const std::string& spelling : {upstream_->token_dir(), upstream_->dir(), link}) {
    v1::LaunchRequest request;
    request.mutable_spec()->set_session_id("bind-tokens");
    v1::SandboxBindMount* bind = request.mutable_spec()->add_bind_mounts();
    bind->set_host_path(spelling);
    bind->set_guest_path(spelling);
    grpc::ClientContext ctx;
    v1::SandboxHandle handle;
    const grpc::Status refused = stub_->Launch(&ctx, request, &handle);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << spelling;
    EXPECT_TRUE(absl::StrContains(refused.error_message(), "push credentials"))
        << spelling << ": " << refused.error_message();
  }
  ASSERT_TRUE(Launch("late", {"allow push_to_remote"}).ok());
  // A live read token in the files first (the helper's), so reading them would show something.
  const std::string url = upstream_->Url("r.git");
  const std::string host = url.substr(7, url.find('/', 7) - 7);
  Sh("late", absl::StrCat("printf 'protocol=http\\nhost=", host,
                          "\\npath=git/r.git\\n\\n' | git credential fill >/dev/null 2>&1"));
  ASSERT_NE(upstream_->AllTokens(), "") << "no live token to look for";
  std::vector<v1::SandboxEvent> look =
      Sh("late", absl::StrCat("ln -s ", upstream_->token_dir(), " late-link; cat late-link/* ",
                              upstream_->token_dir(), "/* 2>/dev/null; echo done"));
  EXPECT_EQ(StdoutOf(look), "done\n") << StderrOf(look);
}

// With only a personal token (it can push, and cannot be revoked per session), the gateway still
// asks the rule for every push, but the boot line and the handle say the rule is advisory.
TEST(PushAdvisoryTest, APersonalTokenMakesThePushRuleAdvisoryAndSaysSo) {
  char dir[] = "/tmp/ccsandbox-pat.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string token_file = std::string(dir) + "/token";
  std::ofstream(token_file) << "ghp_example\n";
  absl::StatusOr<std::unique_ptr<Daemons>> d =
      Daemons::Start({.broker_flags = {"--push-credentials=personal-token:" + token_file}});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(absl::StrContains((*d)->BrokerLog(), "push rule is ADVISORY")) << (*d)->BrokerLog();
  auto stub = v1::SandboxBroker::NewStub(
      grpc::CreateChannel((*d)->broker_address(), grpc::InsecureChannelCredentials()));
  v1::LaunchRequest request;
  request.mutable_spec()->set_session_id("advisory");
  request.mutable_spec()->mutable_push()->add_repositories("https://github.com/o/r.git");
  request.mutable_spec()->mutable_push()->add_rules("deny push_to_remote main");
  grpc::ClientContext ctx;
  v1::SandboxHandle handle;
  ASSERT_TRUE(stub->Launch(&ctx, request, &handle).ok());
  EXPECT_TRUE(absl::StrContains(handle.details().fields().at("push").string_value(),
                                "push rule is ADVISORY"))
      << handle.DebugString();
  EXPECT_FALSE(absl::StrContains(handle.DebugString(), "ghp_example")) << "the token echoed";
  d->reset();
  RunProgram({"rm", "-rf", dir});
}

}  // namespace
}  // namespace ccsandbox::testing
