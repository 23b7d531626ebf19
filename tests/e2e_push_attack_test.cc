// Red-team tests of the push gateway, against the real daemons and a real smart-HTTP upstream
// (lighttpd + git-http-backend reading the broker's token file): what an agent inside the
// sandbox (git with any ref spelling, any configuration) and a hostile client of the session's
// push.sock (what the agent reaches at 127.0.0.1:3130: hand-made HTTP and pkt-lines) can try to
// get a denied branch updated upstream, to get a token, or to stop other pushes.
//
// Every test ends by asking the upstream itself: main is where it was, no token was seen.
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "base/unique_fd.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/exec_events.h"
#include "tests/git_upstream.h"
#include "tests/poll_until.h"

namespace ccsandbox::testing {
namespace {

constexpr char kZero[] = "0000000000000000000000000000000000000000";

std::string Pkt(const std::string& data) {
  return absl::StrCat(absl::StrFormat("%04x", data.size() + 4), data);
}

std::string Chunk(const std::string& data) {
  return absl::StrCat(absl::StrFormat("%x", data.size()), "\r\n", data, "\r\n");
}

// A hostile client of a session's push.sock: raw bytes in, whatever comes back.
class RawClient {
 public:
  static std::unique_ptr<RawClient> Connect(const std::string& socket_path) {
    UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof(addr.sun_path)) return nullptr;
    memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
    if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return nullptr;
    auto client = std::make_unique<RawClient>();
    client->fd_ = std::move(fd);
    return client;
  }

  // False when the gateway stops taking bytes (it refused the request and stopped reading).
  bool Send(absl::string_view bytes) {
    while (!bytes.empty()) {
      pollfd p{fd_.get(), POLLOUT, 0};
      if (poll(&p, 1, 10000) <= 0) return false;
      const ssize_t put = send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (put < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (put <= 0) return false;
      bytes.remove_prefix(put);
    }
    return true;
  }

  void EndWrites() { shutdown(fd_.get(), SHUT_WR); }

  // Everything until the gateway closes (or `limit` passes with nothing more).
  std::string ReadAll(absl::Duration limit = absl::Seconds(30)) {
    std::string got;
    char buf[64 * 1024];
    for (;;) {
      pollfd p{fd_.get(), POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(limit))) <= 0) break;
      const ssize_t n = read(fd_.get(), buf, sizeof(buf));
      if (n <= 0) break;
      got.append(buf, n);
    }
    return got;
  }

 private:
  UniqueFd fd_;
};

// A loopback HTTP server that plays a hostile upstream: every request's head is recorded and
// answered with `answer` (by the request's path).
class FakeUpstream {
 public:
  explicit FakeUpstream(std::map<std::string, std::string> answers) : answers_(std::move(answers)) {
    listener_.Reset(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    bind(listener_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    listen(listener_.get(), 16);
    getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeUpstream() {
    shutdown(listener_.get(), SHUT_RDWR);
    thread_.join();
  }
  int port() const { return port_; }
  std::vector<std::string> heads() {
    absl::MutexLock lock(&mu_);
    return heads_;
  }

 private:
  void Serve() {
    for (;;) {
      UniqueFd fd(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!fd.valid()) return;
      std::string head;
      char buf[4096];
      while (!absl::StrContains(head, "\r\n\r\n")) {
        pollfd p{fd.get(), POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0) break;
        const ssize_t n = read(fd.get(), buf, sizeof(buf));
        if (n <= 0) break;
        head.append(buf, n);
      }
      std::string answer = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
      for (const auto& [path, a] : answers_) {
        if (absl::StrContains(head.substr(0, head.find('\n')), path)) answer = a;
      }
      {
        absl::MutexLock lock(&mu_);
        heads_.push_back(head);
      }
      (void)!write(fd.get(), answer.data(), answer.size());
    }
  }

  const std::map<std::string, std::string> answers_;
  UniqueFd listener_;
  int port_ = 0;
  std::thread thread_;
  absl::Mutex mu_;
  std::vector<std::string> heads_ ABSL_GUARDED_BY(mu_);
};

class PushAttackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<GitUpstream>> up = GitUpstream::Start();
    ASSERT_TRUE(up.ok()) << up.status();
    upstream_ = *std::move(up);
    ASSERT_TRUE(upstream_->CreateRepository("r.git").ok());
    absl::StatusOr<std::unique_ptr<Daemons>> d =
        Daemons::Start({.broker_flags = {"--push-credentials=local:" + upstream_->token_dir()},
                        .measures_daemon_memory = measures_daemon_memory_});
    ASSERT_TRUE(d.ok()) << d.status();
    d_ = *std::move(d);
    stub_ = v1::SandboxBroker::NewStub(
        grpc::CreateChannel(d_->broker_address(), grpc::InsecureChannelCredentials()));
    work_ = d_->MakeWorkdir() + "/repo";
    bare_ = upstream_->dir() + "/repos/r.git";
    for (const std::vector<std::string>& argv :
         {std::vector<std::string>{"git", "init", "-q", "-b", "main", work_},
          {"git", "-C", work_, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit",
           "-q", "--allow-empty", "-m", "base"},
          {"git", "-C", work_, "push", "-q", bare_, "main"},
          {"git", "-C", work_, "remote", "add", "origin", upstream_->Url("r.git")}}) {
      ProgramResult r = RunProgram(argv);
      ASSERT_EQ(r.exit_code, 0) << argv[1] << ": " << r.err;
    }
    base_ = upstream_->Head("r.git", "refs/heads/main");
    ASSERT_FALSE(base_.empty());
    gateway_repo_ = "/" + upstream_->Url("r.git").substr(strlen("http://"));
  }

  void TearDown() override {
    if (upstream_ == nullptr || base_.empty()) return;
    // Whatever a test tried: main is where it was, and no write token outlived its push.
    EXPECT_EQ(upstream_->Head("r.git", "refs/heads/main"), base_) << "main changed upstream";
  }

  // Launches `id` with push to the upstream's r.git (and `more` repositories) under `rules`;
  // returns its push.sock on the host (the socket the sandbox reaches at 127.0.0.1:3130).
  std::string Launch(const std::string& id, const std::vector<std::string>& rules,
                     const std::vector<std::string>& more = {}) {
    const std::set<std::string> before = PushSockets();
    v1::LaunchRequest request;
    v1::SandboxSpec* spec = request.mutable_spec();
    spec->set_session_id(id);
    v1::SandboxBindMount* bind = spec->add_bind_mounts();
    bind->set_host_path(work_);
    bind->set_guest_path(work_);
    spec->set_guest_workdir(work_);
    spec->mutable_push()->add_repositories(upstream_->Url("r.git"));
    for (const std::string& url : more) spec->mutable_push()->add_repositories(url);
    for (const std::string& rule : rules) spec->mutable_push()->add_rules(rule);
    grpc::ClientContext ctx;
    v1::SandboxHandle handle;
    grpc::Status launched = stub_->Launch(&ctx, request, &handle);
    EXPECT_TRUE(launched.ok()) << launched.error_message();
    for (const std::string& s : PushSockets()) {
      if (!before.contains(s)) return s;
    }
    ADD_FAILURE() << "no push.sock appeared for " << id;
    return "";
  }

  std::set<std::string> PushSockets() const {
    std::set<std::string> found;
    const std::string root = d_->runtime_dir() + "/s";
    DIR* dir = opendir(root.c_str());
    if (dir == nullptr) return found;
    while (dirent* e = readdir(dir)) {
      const std::string sock = absl::StrCat(root, "/", e->d_name, "/push.sock");
      if (e->d_name[0] != '.' && PathExists(sock)) found.insert(sock);
    }
    closedir(dir);
    return found;
  }

  std::vector<v1::SandboxEvent> Sh(const std::string& id, const std::string& script,
                                   const std::map<std::string, std::string>& env = {}) {
    v1::ExecRequest request = ShExec(id,
                                     "git config --global user.email t@example.com; git config "
                                     "--global user.name t; " +
                                         script);
    for (const auto& [name, value] : env) (*request.mutable_env())[name] = value;
    return ExecEvents(*stub_, request, nullptr, absl::Seconds(120));
  }

  // The read token the run's credential helper gets for `path` of the upstream ("" if none).
  std::string Fill(const std::string& session, const std::string& path) {
    const std::string url = upstream_->Url("r.git");
    const std::string host = url.substr(7, url.find('/', 7) - 7);
    const std::string out =
        StdoutOf(Sh(session, absl::StrCat("printf 'protocol=http\\nhost=", host, "\\npath=", path,
                                          "\\n\\n' | git credential fill 2>&1; true")));
    // "user:token", the credential as it goes in a URL.
    const size_t user = out.find("username="), at = out.find("password=");
    if (user == std::string::npos || at == std::string::npos) return "";
    return absl::StrCat(out.substr(user + 9, out.find('\n', user) - user - 9), ":",
                        out.substr(at + 9, out.find('\n', at) - at - 9));
  }

  // A commit on top of main made on the host, and the pack that carries it.
  struct Commit {
    std::string id;
    std::string pack;
  };
  Commit NewCommit(const std::string& message) {
    ProgramResult made =
        RunProgram({"git", "-C", work_, "-c", "user.email=t@example.com", "-c", "user.name=t",
                    "commit-tree", "-p", base_, "-m", message, base_ + "^{tree}"});
    EXPECT_EQ(made.exit_code, 0) << made.err;
    Commit c{std::string(absl::StripAsciiWhitespace(made.out)), ""};
    const std::string file = work_ + "/../pack-" + c.id;
    ProgramResult packed =
        RunProgram({"sh", "-c",
                    absl::StrCat("printf '", c.id, "\\n^", base_, "\\n' | git -C ", work_,
                                 " pack-objects -q --stdout --revs > ", file)});
    EXPECT_EQ(packed.exit_code, 0) << packed.err;
    c.pack = ReadFile(file);
    EXPECT_TRUE(absl::StartsWith(c.pack, "PACK"));
    return c;
  }

  std::string Post(const std::string& target, const std::string& extra_headers) {
    return absl::StrCat("POST ", target,
                        " HTTP/1.1\r\nHost: 127.0.0.1:3130\r\n"
                        "Content-Type: application/x-git-receive-pack-request\r\n",
                        extra_headers, "\r\n");
  }

  // One request on a fresh connection to `sock`; the whole answer.
  std::string Exchange(const std::string& sock, const std::string& bytes) {
    std::unique_ptr<RawClient> c = RawClient::Connect(sock);
    if (c == nullptr) return "(no connection)";
    c->Send(bytes);
    std::string answer = c->ReadAll();
    EXPECT_FALSE(absl::StrContains(answer, "ccs_")) << "a token reached the client: " << answer;
    EXPECT_FALSE(absl::StrContains(answer, "WWW-Authenticate")) << answer;
    return answer;
  }

  std::unique_ptr<GitUpstream> upstream_;
  std::unique_ptr<Daemons> d_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
  std::string work_;
  std::string bare_;
  std::string base_;
  std::string gateway_repo_;             // "/127.0.0.1:PORT/git/r.git"
  bool measures_daemon_memory_ = false;  // DaemonOptions::measures_daemon_memory
};

// The tests that bound the broker's resident memory.
class PushAttackMemoryTest : public PushAttackTest {
 protected:
  PushAttackMemoryTest() { measures_daemon_memory_ = true; }
};

// git itself, inside the sandbox, with every spelling of main an agent would try.
TEST_F(PushAttackTest, NoGitSpellingOfMainUpdatesIt) {
  Launch("spell", {"allow push_to_remote", "deny push_to_remote main"});
  std::vector<v1::SandboxEvent> tries =
      Sh("spell",
         "git commit -q --allow-empty -m evil; U=origin; "
         "for spec in HEAD:main HEAD:refs/heads/main +HEAD:main +HEAD:refs/heads/main "
         "  :main :refs/heads/main HEAD:refs/heads//main HEAD:refs/heads/./main "
         "  HEAD:refs/heads/main.lock HEAD:refs/heads/main/ 'HEAD:refs/heads/main ' "
         "  HEAD:refs/heads/ma%69n; do git push -q $U \"$spec\" 2>&1; done; "
         "git push -q --delete $U main 2>&1; "
         "git push -q --atomic $U HEAD:refs/heads/feature/a1 HEAD:main 2>&1; "
         "git push -q --no-atomic $U HEAD:refs/heads/feature/a2 HEAD:main 2>&1; "
         "git push -q -o ci.skip $U HEAD:main 2>&1; "
         "git push -q --force-with-lease=main:" +
             base_ +
             " $U HEAD:main 2>&1; "
             "git push -q $U HEAD:refs/heads/feature/a3 HEAD:refs/heads/feature/a4 "
             "HEAD:refs/heads/main HEAD:refs/heads/feature/a5 2>&1; "
             "git push -q --mirror $U 2>&1; git push -q --all --force $U 2>&1; "
             // Lookalikes make other refs, never main: allowed, and harmless.
             "git push -q $U HEAD:refs/heads/MAIN HEAD:refs/heads/ma\xd1\x96n 2>&1; "
             "echo tried");
  EXPECT_TRUE(absl::StrContains(StdoutOf(tries), "tried")) << StderrOf(tries);
  for (const char* ref : {"feature/a1", "feature/a2", "feature/a3", "feature/a4", "feature/a5"}) {
    EXPECT_EQ(upstream_->Head("r.git", absl::StrCat("refs/heads/", ref)), "")
        << ref << " landed with a push that also named main";
  }
}

// A tag (or a ref straight under refs/) named like a denied branch leaves refs/heads/main alone
// but is what `git fetch origin main` and `git pull origin main` take (git resolves a short
// name as refs/<name>, then refs/tags/<name>, then refs/heads/<name>): the agent's commit
// would reach everyone who pulls main.
TEST_F(PushAttackTest, ATagNamedLikeADeniedBranchIsRefusedToo) {
  Launch("shadow",
         {"allow push_to_remote", "deny push_to_remote main", "deny push_to_remote release/*"});
  std::vector<v1::SandboxEvent> push =
      Sh("shadow",
         "git commit -q --allow-empty -m evil; git push origin HEAD:refs/tags/main 2>&1; "
         "git push origin HEAD:refs/release/1.0 2>&1; git push origin HEAD:refs/tags/v1 2>&1");
  EXPECT_EQ(upstream_->Head("r.git", "refs/tags/main"), "") << StdoutOf(push);
  EXPECT_EQ(upstream_->Head("r.git", "refs/release/1.0"), "") << StdoutOf(push);
  EXPECT_FALSE(upstream_->Head("r.git", "refs/tags/v1").empty()) << StdoutOf(push);
  // What a consumer pulling main gets.
  ProgramResult fetched = RunProgram({"git", "-C", work_, "fetch", "-q", bare_, "main"});
  EXPECT_EQ(fetched.exit_code, 0) << fetched.err;
  EXPECT_EQ(std::string(absl::StripAsciiWhitespace(
                RunProgram({"git", "-C", work_, "rev-parse", "FETCH_HEAD"}).out)),
            base_);
}

// Hand-made receive-pack requests that try to make the gateway and the upstream read a push
// differently: capabilities on a later line, an empty or delimiter packet among the commands,
// push options that are really commands, ids the gateway does not parse like git.
TEST_F(PushAttackTest, HandMadeReceivePackBodiesNeverUpdateMain) {
  const std::string sock = Launch("raw", {"allow push_to_remote", "deny push_to_remote main"});
  const Commit c = NewCommit("raw");
  const std::string target = gateway_repo_ + "/git-receive-pack";
  auto cmd = [&](const std::string& ref, const std::string& caps = "") {
    return Pkt(absl::StrCat(base_, " ", c.id, " ", ref, caps.empty() ? "" : std::string(1, '\0'),
                            caps, "\n"));
  };
  const std::string caps = "report-status side-band-64k agent=git/2.39.5";
  const std::vector<std::pair<std::string, std::string>> bodies = {
      {"main, plainly", cmd("refs/heads/main", caps) + "0000" + c.pack},
      {"main created with a lying old id",
       Pkt(absl::StrCat(kZero, " ", c.id, " refs/heads/main", std::string(1, '\0'), caps, "\n")) +
           "0000" + c.pack},
      {"capabilities on the second line",
       cmd("refs/heads/feature/r1", caps) +
           Pkt(absl::StrCat(base_, " ", c.id, " refs/heads/main", std::string(1, '\0'),
                            "report-status\n")) +
           "0000" + c.pack},
      {"an empty packet among the commands",
       cmd("refs/heads/feature/r2", caps) + "0004" + cmd("refs/heads/main") + "0000" + c.pack},
      {"a delimiter among the commands",
       cmd("refs/heads/feature/r3", caps) + "0001" + cmd("refs/heads/main") + "0000" + c.pack},
      {"push options that are commands", cmd("refs/heads/feature/r4", caps + " push-options") +
                                             "0000" + cmd("refs/heads/main") + "0000" + c.pack},
      {"upper-case ids",
       Pkt(absl::StrCat(absl::AsciiStrToUpper(base_), " ", absl::AsciiStrToUpper(c.id),
                        " refs/heads/main", std::string(1, '\0'), caps, "\n")) +
           "0000" + c.pack},
      {"a push certificate", Pkt(absl::StrCat("push-cert", std::string(1, '\0'), caps, "\n")) +
                                 Pkt("certificate version 0.1\n") + cmd("refs/heads/main") +
                                 "0000" + c.pack},
      {"shallow after a command", cmd("refs/heads/feature/r6", caps) +
                                      Pkt("shallow " + base_ + "\n") + cmd("refs/heads/main") +
                                      "0000" + c.pack},
  };
  for (const auto& [what, body] : bodies) {
    for (bool chunked : {false, true}) {
      const std::string request =
          chunked ? Post(target, "Transfer-Encoding: chunked\r\n") + Chunk(body) + "0\r\n\r\n"
                  : Post(target, absl::StrCat("Content-Length: ", body.size(), "\r\n")) + body;
      const std::string answer = Exchange(sock, request);
      EXPECT_FALSE(absl::StrContains(answer, "ok refs/heads/main")) << what << ": " << answer;
      EXPECT_EQ(upstream_->Head("r.git", "refs/heads/main"), base_) << what;
    }
  }
}

// HTTP framing and path tricks: the gateway decodes the body itself and forwards only what it
// decided, so smuggling, pipelining and other paths reach nothing.
TEST_F(PushAttackTest, HttpTricksNeverUpdateMain) {
  const std::string sock = Launch("http", {"allow push_to_remote", "deny push_to_remote main"});
  const Commit c = NewCommit("http");
  const std::string target = gateway_repo_ + "/git-receive-pack";
  const std::string caps = "report-status agent=git/2.39.5";
  // main is updated from where it is; the features are created.
  auto push = [&](const std::string& ref) {
    return Pkt(absl::StrCat(ref == "refs/heads/main" ? base_ : kZero, " ", c.id, " ", ref,
                            std::string(1, '\0'), caps, "\n")) +
           "0000" + c.pack;
  };
  const std::string feature = push("refs/heads/feature/h1");
  const std::string main = push("refs/heads/main");
  const std::string repo_name = gateway_repo_.substr(gateway_repo_.rfind('/') + 1);
  const std::vector<std::pair<std::string, std::string>> requests = {
      // Length says the allowed push, chunked framing says main (and the other way round).
      {"chunked + length (chunked is main)",
       Post(target, absl::StrCat("Content-Length: ", feature.size(),
                                 "\r\nTransfer-Encoding: chunked\r\n")) +
           Chunk(main) + "0\r\n\r\n"},
      {"length + chunked (length is main)",
       Post(target,
            absl::StrCat("Transfer-Encoding: chunked\r\nContent-Length: ", main.size(), "\r\n")) +
           main},
      {"two lengths", Post(target, absl::StrCat("Content-Length: ", feature.size(),
                                                "\r\nContent-Length: ", main.size(), "\r\n")) +
                          main},
      // An allowed push, then a second request on the same connection pushing main.
      {"pipelined", Post(target, absl::StrCat("Content-Length: ", feature.size(), "\r\n")) +
                        feature +
                        Post(target, absl::StrCat("Content-Length: ", main.size(), "\r\n")) + main},
      {"a body after the chunked end",
       Post(target, "Transfer-Encoding: chunked\r\n") + Chunk(push("refs/heads/feature/h2")) +
           "0\r\n\r\n" + Post(target, absl::StrCat("Content-Length: ", main.size(), "\r\n")) +
           main},
      {"dot-dot", Post(gateway_repo_ + "/../" + repo_name + "/git-receive-pack",
                       absl::StrCat("Content-Length: ", main.size(), "\r\n")) +
                      main},
      {"%2e%2e", Post(gateway_repo_ + "/%2e%2e/" + repo_name + "/git-receive-pack",
                      absl::StrCat("Content-Length: ", main.size(), "\r\n")) +
                     main},
      {"double slash", Post("/" + gateway_repo_ + "/git-receive-pack",
                            absl::StrCat("Content-Length: ", main.size(), "\r\n")) +
                           main},
      {"a query", Post(target + "?ref=refs/heads/feature/h3",
                       absl::StrCat("Content-Length: ", main.size(), "\r\n")) +
                      main},
      {"upper-case service", Post(gateway_repo_ + "/GIT-RECEIVE-PACK",
                                  absl::StrCat("Content-Length: ", main.size(), "\r\n")) +
                                 main},
      {"POST to info/refs", Post(gateway_repo_ + "/info/refs?service=git-receive-pack",
                                 absl::StrCat("Content-Length: ", main.size(), "\r\n")) +
                                main},
      {"absolute-form target", Post("http://127.0.0.1:3130" + target,
                                    absl::StrCat("Content-Length: ", main.size(), "\r\n")) +
                                   main},
      {"gzip", Post(target, absl::StrCat("Content-Encoding: gzip\r\nContent-Length: ", main.size(),
                                         "\r\n")) +
                   main},
      {"a body that ends early",
       Post(target, absl::StrCat("Content-Length: ", main.size() + 100, "\r\n")) + main},
  };
  for (const auto& [what, request] : requests) {
    std::unique_ptr<RawClient> client = RawClient::Connect(sock);
    ASSERT_NE(client, nullptr);
    client->Send(request);
    if (what == "a body that ends early") client->EndWrites();
    const std::string answer = client->ReadAll(absl::Seconds(5));
    EXPECT_FALSE(absl::StrContains(answer, "ccs_")) << what << ": " << answer;
    EXPECT_FALSE(absl::StrContains(answer, "ok refs/heads/main")) << what << ": " << answer;
    EXPECT_EQ(upstream_->Head("r.git", "refs/heads/main"), base_) << what;
  }
  // The allowed request before each smuggled one did land: the gateway served it, and only it.
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/feature/h1"), c.id);
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/feature/h2"), c.id);
}

// Oversized heads, commands and bodies are refused bounded, and a refused push of 256 MiB is
// read and dropped without the broker growing by it.
TEST_F(PushAttackMemoryTest, OversizedRequestsAreBoundedAndDrainingDoesNotGrowTheBroker) {
  const std::string sock = Launch("big", {"allow push_to_remote", "deny push_to_remote main"});
  const std::string target = gateway_repo_ + "/git-receive-pack";
  const std::string huge_header = Post(target, "X-Pad: " + std::string(1 << 20, 'a') + "\r\n");
  std::string answer = Exchange(sock, huge_header);
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 4")) << answer.substr(0, 200);
  EXPECT_LT(answer.size(), 4096u);

  std::string many;
  for (int i = 0; i < 1001; ++i) {
    many += Pkt(absl::StrCat(kZero, " ", base_, " refs/heads/f/", i, "\n"));
  }
  answer =
      Exchange(sock, Post(target, "Transfer-Encoding: chunked\r\n") + Chunk(many) + "0\r\n\r\n");
  EXPECT_TRUE(absl::StrContains(answer, "400")) << answer.substr(0, 200);

  std::string long_commands;
  while (long_commands.size() <= (1u << 20) + 65536) {
    long_commands += Pkt(absl::StrCat(kZero, " ", base_, " refs/heads/", std::string(900, 'x'),
                                      long_commands.size(), "\n"));
  }
  answer = Exchange(
      sock, Post(target, "Transfer-Encoding: chunked\r\n") + Chunk(long_commands) + "0\r\n\r\n");
  EXPECT_TRUE(absl::StrContains(answer, "400")) << answer.substr(0, 200);

  auto rss_kib = [&] {
    const std::string status = ReadFile(absl::StrCat("/proc/", d_->broker_pid(), "/status"));
    const size_t at = status.find("VmRSS:");
    int64_t kib = 0;
    if (at != std::string::npos) {
      (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::StripSuffix(
                                 status.substr(at + 6, status.find('\n', at) - at - 6), "kB")),
                             &kib);
    }
    return kib;
  };
  const int64_t before = rss_kib();
  std::unique_ptr<RawClient> client = RawClient::Connect(sock);
  ASSERT_NE(client, nullptr);
  constexpr size_t kBody = 256u << 20;
  const std::string head = Pkt(absl::StrCat(base_, " ", base_, " refs/heads/main",
                                            std::string(1, '\0'), "report-status\n")) +
                           "0000";
  ASSERT_TRUE(client->Send(Post(target, absl::StrCat("Content-Length: ", kBody, "\r\n")) + head));
  const std::string mib(1 << 20, 'P');
  size_t sent = head.size();
  int64_t peak = before;
  while (sent < kBody) {
    const size_t n = std::min(mib.size(), kBody - sent);
    ASSERT_TRUE(client->Send(absl::string_view(mib).substr(0, n))) << "at " << sent;
    sent += n;
    if (sent % (32u << 20) < (1u << 20)) peak = std::max(peak, rss_kib());
  }
  answer = client->ReadAll();
  EXPECT_TRUE(absl::StrContains(answer, "ng refs/heads/main")) << answer.substr(0, 300);
  EXPECT_LT(std::max(peak, rss_kib()) - before, 32 * 1024) << "the broker grew draining a push";
}

// The gateway's connection cap is per session: idle connections that hold one session's
// gateway leave another session's pushes alone, and the held session answers a refusal, not a
// hang.
TEST_F(PushAttackTest, IdleConnectionsHoldOnlyTheirOwnSessionsGateway) {
  const std::string held = Launch("a-idle", {"allow push_to_remote"});
  Launch("b-busy", {"allow push_to_remote"});
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 8; ++i) {
    idle.push_back(RawClient::Connect(held));
    ASSERT_NE(idle.back(), nullptr);
    idle.back()->Send("POST ");  // a head that never ends
  }
  std::unique_ptr<RawClient> ninth;
  // The acceptor may not have taken all eight yet: the ninth is refused once it has.
  ASSERT_TRUE(PollUntil(
      [&] {
        ninth = RawClient::Connect(held);
        if (ninth == nullptr) return false;
        ninth->Send("GET / HTTP/1.1\r\n\r\n");
        return absl::StrContains(ninth->ReadAll(absl::Seconds(2)), "503");
      },
      absl::Seconds(20), "the ninth connection to be refused"));
  std::vector<v1::SandboxEvent> push = Sh(
      "b-busy", "git commit -q --allow-empty -m b && git push -q origin HEAD:refs/heads/feature/b");
  EXPECT_EQ(ExitOf(push), 0) << StderrOf(push);
  EXPECT_FALSE(upstream_->Head("r.git", "refs/heads/feature/b").empty());
}

// One session's agent holds an allowed push open (it controls the pace of its own body), so
// its write token stays live; every other session's push must still work. With the local
// credential broker every write token was once a line "writer:<token>" of the upstream's basic-auth
// file, and an htpasswd-style upstream (lighttpd's plain backend, the one docs/push-gateway.md
// names) checks only the FIRST line of a user: the held token shadows every other session's.
TEST_F(PushAttackTest, AHeldPushOfOneSessionDoesNotBreakAnotherSessionsPushes) {
  const std::string holder_sock = Launch("a-holder", {"allow push_to_remote"});
  Launch("b-victim", {"allow push_to_remote"});
  const Commit c = NewCommit("held");
  std::unique_ptr<RawClient> holder = RawClient::Connect(holder_sock);
  ASSERT_NE(holder, nullptr);
  ASSERT_TRUE(
      holder->Send(Post(gateway_repo_ + "/git-receive-pack", "Transfer-Encoding: chunked\r\n") +
                   Chunk(Pkt(absl::StrCat(kZero, " ", c.id, " refs/heads/feature/held",
                                          std::string(1, '\0'), "report-status\n")) +
                         "0000")));
  // The push was allowed and is streaming: its write token is live until the body ends.
  ASSERT_TRUE(PollUntil([&] { return upstream_->WriteTokensLive(); }, absl::Seconds(20),
                        "the held push's write token"));
  std::vector<v1::SandboxEvent> push =
      Sh("b-victim",
         "git commit -q --allow-empty -m v && git push origin HEAD:refs/heads/feature/victim");
  EXPECT_EQ(ExitOf(push), 0) << StderrOf(push);
  EXPECT_FALSE(upstream_->Head("r.git", "refs/heads/feature/victim").empty())
      << "another session's held push blocked this one: " << StderrOf(push);
  holder.reset();
}

// An allowed push the client cuts short (half its pack, then its end) lands nothing, and its
// write token goes; a push held open ends with its session's Destroy, token and all.
TEST_F(PushAttackTest, APushCutShortOrHeldPastDestroyLeavesNothing) {
  const std::string sock = Launch("cut", {"allow push_to_remote"});
  const Commit c = NewCommit("cut");
  const std::string body = Pkt(absl::StrCat(kZero, " ", c.id, " refs/heads/feature/cut",
                                            std::string(1, '\0'), "report-status\n")) +
                           "0000" + c.pack.substr(0, c.pack.size() / 2);
  std::unique_ptr<RawClient> cut = RawClient::Connect(sock);
  ASSERT_NE(cut, nullptr);
  ASSERT_TRUE(
      cut->Send(Post(gateway_repo_ + "/git-receive-pack",
                     absl::StrCat("Content-Length: ", body.size() + c.pack.size(), "\r\n")) +
                body));
  cut->EndWrites();
  cut->ReadAll();
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/feature/cut"), "");
  EXPECT_TRUE(PollUntil([&] { return !upstream_->WriteTokensLive(); }, absl::Seconds(20),
                        "the cut push's token to go"));

  std::unique_ptr<RawClient> held = RawClient::Connect(sock);
  ASSERT_NE(held, nullptr);
  ASSERT_TRUE(
      held->Send(Post(gateway_repo_ + "/git-receive-pack", "Transfer-Encoding: chunked\r\n") +
                 Chunk(Pkt(absl::StrCat(kZero, " ", c.id, " refs/heads/feature/held",
                                        std::string(1, '\0'), "report-status\n")) +
                       "0000")));
  ASSERT_TRUE(PollUntil([&] { return upstream_->WriteTokensLive(); }, absl::Seconds(20),
                        "the held push's write token"));
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  v1::SessionRequest request;
  request.set_session_id("cut");
  v1::SandboxHandle handle;
  grpc::Status destroyed = stub_->Destroy(&ctx, request, &handle);
  EXPECT_TRUE(destroyed.ok()) << destroyed.error_message();
  EXPECT_FALSE(upstream_->WriteTokensLive());
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/feature/held"), "");
}

// A broker that dies mid-push (SIGKILL, OOM) cannot revoke the push's write token; the next
// broker on the same token file must, before anything else, so no token outlives the broker
// that minted it.
TEST_F(PushAttackTest, ATokenLeftByACrashedBrokerIsRevokedByTheNext) {
  const std::string sock = Launch("crash", {"allow push_to_remote"});
  const Commit c = NewCommit("crash");
  std::unique_ptr<RawClient> holder = RawClient::Connect(sock);
  ASSERT_NE(holder, nullptr);
  ASSERT_TRUE(
      holder->Send(Post(gateway_repo_ + "/git-receive-pack", "Transfer-Encoding: chunked\r\n") +
                   Chunk(Pkt(absl::StrCat(kZero, " ", c.id, " refs/heads/feature/crash",
                                          std::string(1, '\0'), "report-status\n")) +
                         "0000")));
  ASSERT_TRUE(PollUntil([&] { return upstream_->WriteTokensLive(); }, absl::Seconds(20),
                        "the held push's write token"));
  const std::string left = upstream_->AllTokens();
  d_->CrashBroker();
  holder.reset();
  d_.reset();
  absl::StatusOr<std::unique_ptr<Daemons>> next =
      Daemons::Start({.broker_flags = {"--push-credentials=local:" + upstream_->token_dir()}});
  ASSERT_TRUE(next.ok()) << next.status();
  d_ = *std::move(next);
  EXPECT_FALSE(upstream_->WriteTokensLive())
      << "the crashed broker's write token is still live: " << left;
}

// An upstream that redirects or asks for credentials: the gateway follows nothing, sends its
// credential nowhere else, and the client sees a 502 with no token and no WWW-Authenticate (so
// git never asks the sandbox for one).
TEST_F(PushAttackTest, RedirectsAndAuthChallengesGetNothing) {
  FakeUpstream elsewhere({});
  FakeUpstream fake({
      {"/moved.git/", absl::StrCat("HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:",
                                   elsewhere.port(), "/steal\r\nContent-Length: 0\r\n\r\n")},
      {"/auth.git/",
       "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\nContent-Length: "
       "0\r\n\r\n"},
  });
  const std::string host = absl::StrCat("127.0.0.1:", fake.port());
  const std::string sock = Launch(
      "fake", {"allow push_to_remote"},
      {absl::StrCat("http://", host, "/moved.git"), absl::StrCat("http://", host, "/auth.git")});
  for (const char* repo : {"/moved.git", "/auth.git"}) {
    const std::string answer = Exchange(
        sock, absl::StrCat("GET /", host, repo,
                           "/info/refs?service=git-receive-pack HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 502")) << repo << ": " << answer;
    EXPECT_FALSE(absl::StrContains(answer, "Location")) << answer;
  }
  EXPECT_TRUE(elsewhere.heads().empty())
      << "the gateway followed a redirect: " << absl::StrJoin(elsewhere.heads(), "\n");
  // Inside, git gets the 502 and never a prompt.
  std::vector<v1::SandboxEvent> push =
      Sh("fake", absl::StrCat("git commit -q --allow-empty -m f; git push http://", host,
                              "/auth.git HEAD:refs/heads/f 2>&1 </dev/null; echo rc=$?"));
  EXPECT_TRUE(absl::StrContains(StdoutOf(push), "rc=128")) << StdoutOf(push);
  EXPECT_FALSE(absl::StrContains(StdoutOf(push), "Username")) << StdoutOf(push);
  EXPECT_FALSE(upstream_->WriteTokensLive());
}

// The caller's own GIT_CONFIG_* (in the Exec request) are scrubbed: only the gateway's routing is
// in the run's environment, and nothing inside can reach a push credential: not the token file,
// not the broker's /proc, not the upstream with what the run holds.
TEST_F(PushAttackTest, NoRouteToACredentialFromInside) {
  Launch("inside", {"allow push_to_remote", "deny push_to_remote main"});
  std::vector<v1::SandboxEvent> look =
      Sh("inside",
         absl::StrCat("env | grep ^GIT_CONFIG_ | sort; "
                      "cat ",
                      upstream_->token_dir(), "/* 2>&1 | head -c 200; ls -d ", upstream_->dir(),
                      " 2>&1; "
                      "cat /proc/",
                      d_->broker_pid(),
                      "/environ 2>&1 | head -c 100; echo; "
                      "ls /proc | grep -c '^[0-9]'; "
                      // The upstream straight, through the egress proxy, asking to push.
                      "curl -s -o /dev/null -w 'direct=%{http_code}\\n' '",
                      upstream_->Url("r.git"), "/info/refs?service=git-receive-pack'; echo done"),
         {{"GIT_CONFIG_COUNT", "1"},
          {"GIT_CONFIG_KEY_0", "url.http://127.0.0.1:1/x.pushInsteadOf"},
          {"GIT_CONFIG_VALUE_0", upstream_->Url("r.git")},
          {"GIT_CONFIG_PARAMETERS", "'credential.helper'='!echo password=ccs_caller'"}});
  const std::string out = StdoutOf(look);
  EXPECT_TRUE(absl::StrContains(out, "done")) << out << StderrOf(look);
  EXPECT_FALSE(absl::StrContains(out, "127.0.0.1:1/")) << "the caller's git config survived";
  EXPECT_FALSE(absl::StrContains(out, "GIT_CONFIG_PARAMETERS")) << out;
  EXPECT_FALSE(absl::StrContains(out, "ccs_")) << out;
  EXPECT_FALSE(absl::StrContains(out, "direct=200")) << out;
}

// The run's read credential (the shim's credential helper asks the gateway for it): what it
// opens on the upstream, and whether one session's leaves another's working.
// A read credential is handed to the run (git's credential helper): it must read its session's
// repository only — another repository on the same upstream (another team's, another
// session's) stays closed to it.
TEST_F(PushAttackTest, AReadTokenReadsOnlyItsSessionsRepository) {
  ASSERT_TRUE(upstream_->CreateRepository("other.git").ok());
  Launch("reader", {"allow push_to_remote"});
  const std::string token = Fill("reader", "git/r.git");
  ASSERT_FALSE(token.empty());
  const std::string other = upstream_->Url("other.git");
  EXPECT_NE(RunProgram({"env", "GIT_TERMINAL_PROMPT=0", "git", "ls-remote",
                        absl::StrCat("http://", token, "@", other.substr(7))})
                .exit_code,
            0)
      << "the read token of r.git reads other.git";
}

// Two sessions' read credentials live at once: each must work (an htpasswd-style upstream
// checks only the first "reader:" line, so the first session's token shadows every other's).
TEST_F(PushAttackTest, ReadTokensOfTwoSessionsBothWork) {
  Launch("a-reads", {"allow push_to_remote"});
  Launch("b-reads", {"allow push_to_remote"});
  const std::string first = Fill("a-reads", "git/r.git");
  const std::string second = Fill("b-reads", "git/r.git");
  ASSERT_FALSE(first.empty());
  ASSERT_FALSE(second.empty());
  const std::string url = upstream_->Url("r.git").substr(7);
  for (const std::string& token : {first, second}) {
    EXPECT_EQ(RunProgram({"env", "GIT_TERMINAL_PROMPT=0", "git", "ls-remote",
                          absl::StrCat("http://", token, "@", url)})
                  .exit_code,
              0)
        << (token == first ? "the first" : "the second") << " session's read token is refused";
  }
}

// An upstream symbolic ref that aliases main (refs/heads/master -> refs/heads/main, kept by
// many self-hosted upstreams after a rename) is updated through: receive-pack dereferences it.
// The rule judges ref names, so "deny push_to_remote main" does not hold there.
TEST_F(PushAttackTest, AnUpstreamAliasOfMainIsNotAWayAround) {
  ASSERT_EQ(RunProgram({"git", "-C", bare_, "symbolic-ref", "refs/heads/master", "refs/heads/main"})
                .exit_code,
            0);
  Launch("alias", {"allow push_to_remote", "deny push_to_remote main"});
  std::vector<v1::SandboxEvent> push = Sh(
      "alias", "git commit -q --allow-empty -m alias; git push origin HEAD:refs/heads/master 2>&1");
  // TearDown checks main.
  EXPECT_EQ(upstream_->Head("r.git", "refs/heads/main"), base_) << StdoutOf(push);
}

// With only a personal token the rule is advisory "because code holding the token could push
// around it" — and the run's credential helper hands that very token to the run: the agent
// carries a credential that pushes main. What the run is given must never be able to push.
TEST(PushAttackPersonalTokenTest, TheRunIsNeverHandedACredentialThatCanPush) {
  char dir[] = "/tmp/ccsandbox-pat.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string token_file = std::string(dir) + "/token";
  {
    FILE* f = fopen(token_file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fputs("ghp_rtpush_example\n", f);
    fclose(f);
  }
  absl::StatusOr<std::unique_ptr<Daemons>> d =
      Daemons::Start({.broker_flags = {"--push-credentials=personal-token:" + token_file}});
  ASSERT_TRUE(d.ok()) << d.status();
  auto stub = v1::SandboxBroker::NewStub(
      grpc::CreateChannel((*d)->broker_address(), grpc::InsecureChannelCredentials()));
  v1::LaunchRequest request;
  request.mutable_spec()->set_session_id("pat");
  request.mutable_spec()->mutable_push()->add_repositories("https://github.com/o/r.git");
  request.mutable_spec()->mutable_push()->add_rules("deny push_to_remote main");
  grpc::ClientContext ctx;
  v1::SandboxHandle handle;
  ASSERT_TRUE(stub->Launch(&ctx, request, &handle).ok());
  std::vector<v1::SandboxEvent> fill =
      ExecEvents(*stub,
                 ShExec("pat",
                        "printf 'protocol=https\\nhost=github.com\\npath=o/r.git\\n\\n' | "
                        "git credential fill 2>&1; echo asked"),
                 nullptr, absl::Seconds(60));
  EXPECT_TRUE(absl::StrContains(StdoutOf(fill), "asked")) << StderrOf(fill);
  EXPECT_FALSE(absl::StrContains(StdoutOf(fill), "ghp_rtpush_example"))
      << "the run holds the personal token, which pushes main: " << StdoutOf(fill);
  d->reset();
  RunProgram({"rm", "-rf", dir});
}

}  // namespace
}  // namespace ccsandbox::testing
