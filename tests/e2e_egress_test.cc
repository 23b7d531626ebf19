// Egress end to end: the real broker (per-session proxies on Unix sockets), the real launcher,
// bwrap with its own network namespace, the shim's bridge, and curl / socat inside the
// sandbox. Names resolve from a hosts file given to the broker (--egress-hosts-file), so every
// upstream is a server of this test on the host's 127.0.0.1 and nothing leaves the machine.
#include <dirent.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "launcher/sandbox_process.h"
#include "proxy/proxy_test_support.h"
#include "tests/daemon_fixture.h"
#include "tests/poll_until.h"

namespace ccsandbox::testing {
namespace {

using proxy::testing::HttpOrigin;
using proxy::testing::TestServer;

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::vector<std::string> DirEntries(const std::string& path) {
  std::vector<std::string> names;
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
  }
  return names;
}

class EgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(echo_.ok());
    hosts_ = absl::StrCat("/tmp/egress-hosts-", getpid());
    WriteFile(hosts_,
              "127.0.0.1 allowed.test other.test metadata.google.internal\n"
              "127.0.0.1 echo.test git.test\n");
    DaemonOptions options;
    options.broker_flags = {"--egress-hosts-file=" + hosts_};
    auto daemons = Daemons::Start(options);
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    d_ = std::move(*daemons);
    work_ = d_->MakeWorkdir();
  }
  void TearDown() override {
    d_.reset();
    unlink(hosts_.c_str());
  }

  // A read-only session over the work tree with these egress settings.
  std::string Spec(const std::string& name, const std::vector<std::string>& allow,
                   bool network_enabled = true) {
    std::string list;
    for (const std::string& entry : allow) {
      absl::StrAppend(&list, list.empty() ? "" : ", ", "\"", entry, "\"");
    }
    const std::string path = work_ + "/" + name + ".json";
    WriteFile(path, absl::StrCat(R"({"mode": "review", "bindMounts": [{"hostPath": ")", work_,
                                 R"("}], "egressAllowlist": [)", list, "], \"networkEnabled\": ",
                                 network_enabled ? "true" : "false", "}"));
    return path;
  }

  ProgramResult Run(const std::string& spec, const std::string& script, bool json = false) {
    std::vector<std::string> args = {"run", "--spec=" + spec, "--timeout=60"};
    if (json) args.push_back("--json");
    args.insert(args.end(), {"--", "bash", "-c", script});
    return d_->Sandboxctl(args, work_);
  }

  std::string Allowed() const { return absl::StrCat("allowed.test:", origin_.port()); }

  HttpOrigin origin_;
  TestServer echo_{proxy::testing::EchoHandler};
  std::string hosts_;
  std::unique_ptr<Daemons> d_;
  std::string work_;
};

TEST_F(EgressTest, AllowedHostIsReachedThroughHttpConnectAndSocks) {
  const std::string spec = Spec("allow", {Allowed()});
  const std::string url = absl::StrCat("http://", Allowed());
  ProgramResult r =
      Run(spec,
          absl::StrCat("set -e; echo proxy=$HTTP_PROXY all=$ALL_PROXY;"
                       "curl -sS --max-time 20 ",
                       url, "/plain; echo;", "curl -sS --max-time 20 --proxytunnel ", url,
                       "/tunnel; echo;", "curl -sS --max-time 20 --socks5-hostname 127.0.0.1:1080 ",
                       url, "/socks; echo"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << d_->BrokerLog();
  EXPECT_TRUE(absl::StrContains(r.out, "proxy=http://127.0.0.1:3128 all=socks5h://127.0.0.1:1080"))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "GET /plain|")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "GET /tunnel|")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "GET /socks|")) << r.out;
  EXPECT_FALSE(absl::StrContains(r.err, "violation")) << r.err;
  EXPECT_EQ(origin_.accepted(), 3);
}

TEST_F(EgressTest, RefusedHostGets403AndAViolationEventInTheRunsStream) {
  const std::string spec = Spec("refuse", {Allowed()});
  ProgramResult r =
      Run(spec,
          absl::StrCat("curl -sS -o /dev/null -w 'code=%{http_code}\\n' --max-time 20 "
                       "http://other.test:",
                       origin_.port(),
                       "/x;"
                       "curl -sS --max-time 20 --socks5-hostname 127.0.0.1:1080 "
                       "http://other.test:",
                       origin_.port(), "/y; echo socks=$?"),
          /*json=*/true);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(JsonStdout(r.out), "code=403")) << r.out;
  EXPECT_TRUE(absl::StrContains(JsonStdout(r.out), "socks=97")) << r.out;  // SOCKS5 refused
  const std::string target = absl::StrCat("other.test:", origin_.port());
  EXPECT_EQ(CountOf(r.out, absl::StrCat(R"("action":"network-outbound","target":")", target)), 2)
      << r.out;
  // Every violation is inside the run: before its exit event.
  EXPECT_LT(r.out.rfind("network-outbound"), r.out.find("\"exit\"")) << r.out;
  EXPECT_EQ(origin_.accepted(), 0);
}

TEST_F(EgressTest, MetadataIsRefusedEvenWhenAWildcardAllowsIt) {
  const std::string spec = Spec("meta", {"*.google.internal", "169.254.169.254"});
  ProgramResult r = Run(spec,
                        "curl -sS -o /dev/null -w 'name=%{http_code}\\n' --max-time 20 "
                        "http://metadata.google.internal/computeMetadata/v1/;"
                        "curl -sS -o /dev/null -w 'ip=%{http_code}\\n' --max-time 20 "
                        "http://169.254.169.254/latest/meta-data/",
                        /*json=*/true);
  EXPECT_TRUE(absl::StrContains(JsonStdout(r.out), "name=403")) << r.out;
  EXPECT_TRUE(absl::StrContains(JsonStdout(r.out), "ip=403")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "metadata.google.internal:80")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "169.254.169.254:80")) << r.out;
}

TEST_F(EgressTest, NetworkDisabledRefusesEverything) {
  const std::string spec = Spec("off", {Allowed()}, /*network_enabled=*/false);
  ProgramResult r = Run(spec, absl::StrCat("curl -sS -o /dev/null -w 'code=%{http_code}\\n' "
                                           "--max-time 20 http://",
                                           Allowed(), "/"));
  EXPECT_TRUE(absl::StrContains(r.out, "code=403")) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "sandbox: violation network-outbound " + Allowed()))
      << r.err;
  EXPECT_EQ(origin_.accepted(), 0);
}

TEST_F(EgressTest, NothingButTheProxiesLeadsOut) {
  const std::string spec = Spec("direct", {Allowed()});
  ProgramResult r = Run(
      spec, absl::StrCat("curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:", origin_.port(),
                         "/ ; echo loopback=$?;"
                         "curl -sS --noproxy '*' --max-time 5 http://10.255.255.1/ ; echo ten=$?;"
                         "(exec 3<>/dev/tcp/127.0.0.1/",
                         echo_.port(),
                         ") 2>/dev/null;"
                         "echo devtcp=$?"));
  EXPECT_TRUE(absl::StrContains(r.out, "loopback=7")) << r.out << r.err;  // refused: not ours
  EXPECT_FALSE(absl::StrContains(r.out, "ten=0")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "devtcp=1")) << r.out;
  EXPECT_EQ(origin_.accepted(), 0);
  EXPECT_EQ(echo_.accepted(), 0);
}

TEST_F(EgressTest, GitSshCommandTunnelsThroughTheProxyWithSocat) {
  // GIT_SSH_COMMAND's ProxyCommand is `socat - PROXY:127.0.0.1:%h:%p,proxyport=3128`: the same
  // tunnel ssh would get, here to an echo server standing in for an ssh server.
  const std::string spec = Spec("ssh", {absl::StrCat("echo.test:", echo_.port())});
  ProgramResult r =
      Run(spec, absl::StrCat("echo \"$GIT_SSH_COMMAND\";"
                             "proxy=$(echo \"$GIT_SSH_COMMAND\" | sed -e \"s/.*ProxyCommand='//\" "
                             "-e \"s/'$//\" -e 's/%h/echo.test/' -e 's/%p/",
                             echo_.port(), "/');", "echo ping-through-proxy | timeout 20 $proxy"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "ProxyCommand='socat - PROXY:127.0.0.1:%h:%p")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "\nping-through-proxy")) << r.out;
  EXPECT_EQ(echo_.accepted(), 1);
}

TEST_F(EgressTest, ConcurrentSessionsKeepTheirOwnAllowlists) {
  const std::string open_spec = Spec("open", {Allowed()});
  const std::string closed_spec = Spec("closed", {});
  const std::string loop = absl::StrCat(
      "for i in $(seq 10); do curl -s -o /dev/null -w '%{http_code} ' --max-time 20 http://",
      Allowed(), "/$i; done");
  ProgramResult open_result, closed_result;
  std::thread a([&] { open_result = Run(open_spec, loop, /*json=*/true); });
  std::thread b([&] { closed_result = Run(closed_spec, loop, /*json=*/true); });
  a.join();
  b.join();
  EXPECT_EQ(CountOf(JsonStdout(open_result.out), "200 "), 10) << open_result.out;
  EXPECT_EQ(CountOf(open_result.out, "network-outbound"), 0) << open_result.out;
  EXPECT_EQ(CountOf(JsonStdout(closed_result.out), "403 "), 10) << closed_result.out;
  EXPECT_EQ(CountOf(closed_result.out, "network-outbound"), 10) << closed_result.out;
  EXPECT_EQ(origin_.accepted(), 10);
}

// A line of a child's stdout ("" after `seconds` or at EOF).
std::string ReadLine(launcher::SandboxProcess& process, double seconds) {
  std::string line;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (line.empty() || line.back() != '\n') {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    pollfd fd{process.stdout_fd(), POLLIN, 0};
    if (left.count() <= 0 || poll(&fd, 1, static_cast<int>(left.count())) <= 0) return "";
    char c;
    if (read(process.stdout_fd(), &c, 1) != 1) return "";
    line += c;
  }
  return line;
}

// Ordinary git work with an egress allowlist: `git fetch` over smart HTTP from a server on the
// host (git http-backend), through the sandbox's proxy, into a repository bound writable; and
// a commit in a linked worktree made on the host before Launch, the main repository bound too.
TEST_F(EgressTest, GitFetchesThroughTheProxyAndCommitsInALinkedWorktree) {
  const std::string served = d_->MakeWorkdir();  // not bound
  launcher::ProcessSpec server_spec;
  server_spec.executable = "/usr/bin/python3";
  server_spec.argv = {"python3", Runfile("tests/python/git_http_server.py"), served};
  server_spec.envp = {"PATH=/usr/bin:/bin"};
  absl::StatusOr<std::unique_ptr<launcher::SandboxProcess>> server =
      launcher::SandboxProcess::Spawn(server_spec);  // its process group dies with the test
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string port_line = ReadLine(**server, 30);
  ASSERT_TRUE(absl::StartsWith(port_line, "port ")) << port_line;
  const std::string port(absl::StripSuffix(port_line.substr(5), "\n"));
  const std::string remote = absl::StrCat("http://git.test:", port, "/upstream.git");
  const std::string git = "git -c user.email=h@example.com -c user.name=h";
  ProgramResult made = RunProgram(
      {"bash", "-c",
       absl::StrCat("set -e; cd ", served, "; git init -q --bare -b main upstream.git;",
                    "git init -q -b main seed; cd seed; ", git, " commit -q --allow-empty -m one;",
                    "git push -q ../upstream.git main; cd ", work_, "; git clone -q ", served,
                    "/upstream.git repo; git -C repo remote set-url origin ", remote, "; cd ",
                    served, "/seed; ", git, " commit -q --allow-empty -m two;",
                    "git push -q ../upstream.git main; cd ", work_,
                    "; git -C repo worktree add -q -b feature ../wt")});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string spec = work_ + "/git.json";
  WriteFile(spec, absl::StrCat(R"({"mode": "chat", "bindMounts": [{"hostPath": ")", work_,
                               R"("}], "egressAllowlist": ["git.test:)", port, R"("]})"));
  ProgramResult r = Run(spec,
                        "set -e; export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com "
                        "GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com;"
                        "cd repo; git fetch -q origin; git merge -q --ff-only origin/main;"
                        "echo main=$(git log --format=%s | tr '\\n' ,);"
                        "cd ../wt; echo w > w.txt; git add w.txt; git commit -q -m 'in worktree';"
                        "echo feature=$(git log -1 --format=%s)",
                        /*json=*/true);
  const std::string out = JsonStdout(r.out);
  EXPECT_EQ(r.exit_code, 0) << out << JsonStderr(r.out) << r.err;
  EXPECT_TRUE(absl::StrContains(out, "main=two,one,\n")) << out << JsonStderr(r.out);
  EXPECT_TRUE(absl::StrContains(out, "feature=in worktree\n")) << out << JsonStderr(r.out);
  EXPECT_EQ(CountOf(r.out, "\"violation\""), 0) << r.out;
  // On the host: the fetched commit, and the worktree's commit on its branch.
  ProgramResult log = RunProgram({"git", "-C", work_ + "/repo", "log", "--format=%s", "feature"});
  EXPECT_EQ(log.out, "in worktree\none\n") << log.err;
  EXPECT_EQ(RunProgram({"git", "-C", work_ + "/repo", "rev-parse", "main"}).out,
            RunProgram({"git", "-C", served + "/upstream.git", "rev-parse", "main"}).out);
  // Without the allowlist entry the proxy refuses the same fetch: it went through the proxy.
  const std::string closed = work_ + "/closed.json";
  WriteFile(closed, absl::StrCat(R"({"mode": "chat", "bindMounts": [{"hostPath": ")", work_,
                                 R"("}], "egressAllowlist": []})"));
  ProgramResult refused = Run(closed, "cd repo; git fetch -q origin; echo fetch=$?", true);
  EXPECT_TRUE(absl::StrContains(JsonStdout(refused.out), "fetch=128")) << refused.out;
  EXPECT_TRUE(absl::StrContains(
      refused.out, absl::StrCat(R"("action":"network-outbound","target":"git.test:)", port)))
      << refused.out;
}

TEST_F(EgressTest, NoSocketFileOutlivesItsSession) {
  const std::string spec = Spec("gone", {Allowed()});
  // Mid-run the session's sockets exist; after the run (sandboxctl destroys the session), or
  // after a timeout kill, nothing is left under the broker's runtime directory.
  ProgramResult r = Run(spec, "ls /run/ccsandbox");
  EXPECT_TRUE(absl::StrContains(r.out, "http.sock")) << r.out << r.err;
  EXPECT_TRUE(DirEntries(d_->runtime_dir() + "/s").empty());
  ProgramResult killed =
      d_->Sandboxctl({"run", "--spec=" + spec, "--timeout=1", "--", "sleep", "30"}, work_);
  EXPECT_EQ(killed.exit_code, 137) << killed.err;
  EXPECT_TRUE(DirEntries(d_->runtime_dir() + "/s").empty());
  // A bad allowlist is refused at Launch, naming the entry, and leaves nothing either.
  ProgramResult bad = Run(Spec("bad", {"*.*.example.com"}), "true");
  EXPECT_EQ(bad.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(bad.err, "*.*.example.com")) << bad.err;
  EXPECT_TRUE(DirEntries(d_->runtime_dir() + "/s").empty());
}

TEST_F(EgressTest, AnOrderlyBrokerStopRemovesEverySocket) {
  // A run in the background keeps a session (and its sockets) alive while the broker stops.
  std::thread run([&] {
    d_->Sandboxctl({"run", "--spec=" + Spec("long", {}), "--", "sleep", "30"}, work_);
  });
  // Not ASSERT: the broker must still stop below, or `run` would never end.
  EXPECT_TRUE(PollUntil([&] { return !DirEntries(d_->runtime_dir() + "/s").empty(); },
                        absl::Seconds(30), "the session's sockets"));
  const int status = d_->StopBroker();
  run.join();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << d_->BrokerLog();
  EXPECT_TRUE(absl::StrContains(d_->BrokerLog(), "daemon=broker msg=\"stopped\""))
      << d_->BrokerLog();
  EXPECT_TRUE(DirEntries(d_->runtime_dir()).empty());
  EXPECT_NE(access(d_->runtime_dir().c_str(), F_OK), 0);
  EXPECT_NE(access((d_->dir() + "/broker.sock").c_str(), F_OK), 0);
}

TEST(EgressHostsFileTest, ABadHostsFileStopsTheBrokerFromStartingNamingEachBadLine) {
  char dir[] = "/tmp/egress-hosts-bad.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string hosts = std::string(dir) + "/hosts";
  WriteFile(hosts, "127.0.0.1 allowed.test\nallowed.test 127.0.0.1\n10.0.0.1\n");
  const ProgramResult broker = RunProgram(
      {Runfile("broker/sandbox_brokerd"), absl::StrCat("--listen=unix:", dir, "/broker.sock"),
       absl::StrCat("--launcher=unix:", dir, "/no-launcher.sock"), "--egress-hosts-file=" + hosts});
  RunProgram({"rm", "-rf", dir});
  EXPECT_EQ(broker.exit_code, 2) << broker.out << broker.err;
  EXPECT_TRUE(
      absl::StrContains(broker.out + broker.err,
                        absl::StrCat("--egress-hosts-file: ", hosts,
                                     ":2: 'allowed.test' is not an IPv4 or IPv6 address; ", hosts,
                                     ":3: expected 'ADDRESS NAME [NAME...]', got no name")))
      << broker.out << broker.err;
}

}  // namespace
}  // namespace ccsandbox::testing
