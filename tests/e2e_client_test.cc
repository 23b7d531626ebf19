// Enforcement never depends on the client (DESIGN.md "Threat model"): with the real daemons, an
// Exec client that stops reading (tests/python/exec_client.py, a separate process that reads
// only when told to) does not keep a timeout, Kill or Destroy from ending its command, does not
// make either daemon buffer without bound, and still gets the rest of its stream when it reads
// again; a session at its egress connection cap does not keep other sessions from launching or
// from reaching the network, and a stalled client does not hold up other sessions' events.
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "launcher/sandbox_process.h"
#include "proto/sandbox.grpc.pb.h"
#include "proxy/proxy_test_support.h"
#include "tests/daemon_fixture.h"
#include "tests/poll_until.h"

extern char** environ;

namespace ccsandbox::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The pid of the (first) process whose command line contains `needle`, or -1.
pid_t FindProcess(const std::string& needle) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return -1;
  pid_t found = -1;
  while (dirent* entry = readdir(proc)) {
    pid_t pid;
    if (!absl::SimpleAtoi(entry->d_name, &pid) || pid == getpid()) continue;
    std::string cmdline = ReadText(absl::StrCat("/proc/", pid, "/cmdline"));
    absl::StrReplaceAll({{std::string(1, '\0'), " "}}, &cmdline);
    if (absl::StrContains(cmdline, needle)) {
      found = pid;
      break;
    }
  }
  closedir(proc);
  return found;
}

// A field of /proc/PID/status in KiB (VmRSS, VmHWM), or -1.
long StatusKb(pid_t pid, const std::string& field) {
  std::istringstream status(ReadText(absl::StrCat("/proc/", pid, "/status")));
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, field + ":")) {
      long kb = -1;
      std::istringstream(line.substr(field.size() + 1)) >> kb;
      return kb;
    }
  }
  return -1;
}

// Waits up to `seconds` for `read()` (a daemon's log, which only polling can watch) to contain
// `needle`.
template <typename Read>
::testing::AssertionResult WaitForText(Read read, const std::string& needle, double seconds) {
  return PollUntil([&] { return absl::StrContains(read(), needle); }, absl::Seconds(seconds),
                   absl::StrCat("'", needle, "'"));
}

// tests/python/exec_client.py as a child process with pipes on its stdin and stdout.
class PythonClient {
 public:
  static std::unique_ptr<PythonClient> Start(const std::string& broker, const std::string& session,
                                             uint64_t timeout_ms,
                                             const std::vector<std::string>& argv) {
    launcher::ProcessSpec spec;
    spec.executable = "/usr/bin/python3";
    spec.argv = {"python3",   Runfile("tests/python/exec_client.py"),
                 Runfile(""), broker,
                 session,     std::to_string(timeout_ms)};
    spec.argv.insert(spec.argv.end(), argv.begin(), argv.end());
    for (char** e = environ; *e != nullptr; ++e) spec.envp.push_back(*e);
    auto process = launcher::SandboxProcess::Spawn(spec);
    if (!process.ok()) return nullptr;
    auto client = std::unique_ptr<PythonClient>(new PythonClient());
    client->process_ = *std::move(process);
    return client;
  }

  // Waits for "opened": the Exec call has been made, and nothing of it is read.
  bool WaitOpened() { return ReadUntil("opened\n", 60); }
  void Tell(const std::string& command) {
    const std::string line = command + "\n";
    (void)!write(process_->stdin_fd(), line.data(), line.size());
  }
  // Everything it prints until it exits (at most `seconds`).
  std::string Finish(double seconds) {
    ReadUntil("", seconds, /*to_eof=*/true);
    return out_;
  }

 private:
  PythonClient() = default;

  bool ReadUntil(const std::string& needle, double seconds, bool to_eof = false) {
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (to_eof || !absl::StrContains(out_, needle)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
      if (left.count() <= 0 || process_->stdout_fd() < 0) return false;
      pollfd fd{process_->stdout_fd(), POLLIN, 0};
      if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) continue;
      char buffer[4096];
      const ssize_t got = read(process_->stdout_fd(), buffer, sizeof(buffer));
      if (got <= 0) {
        process_->CloseStdout();
        return !to_eof ? false : true;
      }
      out_.append(buffer, got);
    }
    return true;
  }

  std::unique_ptr<launcher::SandboxProcess> process_;
  std::string out_;
};

class ClientTest : public ::testing::Test {
 protected:
  void StartDaemons(DaemonOptions options = {}) {
    hosts_ = absl::StrCat("/tmp/client-hosts-", getpid());
    std::ofstream(hosts_) << "127.0.0.1 allowed.test\n";
    options.broker_flags.push_back("--egress-hosts-file=" + hosts_);
    auto daemons = Daemons::Start(options);
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    daemons_ = std::move(*daemons);
    stub_ = v1::SandboxBroker::NewStub(
        grpc::CreateChannel(daemons_->broker_address(), grpc::InsecureChannelCredentials()));
    work_ = daemons_->MakeWorkdir();
    broker_pid_ = FindProcess("--listen=" + daemons_->broker_address());
    ASSERT_GT(broker_pid_, 0);
  }
  void TearDown() override {
    daemons_.reset();
    if (!hosts_.empty()) unlink(hosts_.c_str());
  }

  // A native, read-only session over the work tree whose proxies allow `allow`.
  grpc::Status Launch(const std::string& id, const std::vector<std::string>& allow = {}) {
    v1::LaunchRequest request;
    request.mutable_spec()->set_session_id(id);
    request.mutable_spec()->set_mode("review");
    request.mutable_spec()->mutable_write_deny_patterns();
    v1::SandboxBindMount* bind = request.mutable_spec()->add_bind_mounts();
    bind->set_host_path(work_);
    bind->set_guest_path(work_);
    for (const std::string& entry : allow) request.mutable_spec()->add_egress_allowlist(entry);
    grpc::ClientContext ctx;
    v1::SandboxHandle handle;
    return stub_->Launch(&ctx, request, &handle);
  }

  std::unique_ptr<PythonClient> StalledClient(const std::string& session, uint64_t timeout_ms,
                                              const std::vector<std::string>& argv) {
    auto client = PythonClient::Start(daemons_->broker_address(), session, timeout_ms, argv);
    EXPECT_NE(client, nullptr);
    if (client != nullptr) {
      EXPECT_TRUE(client->WaitOpened());
    }
    return client;
  }

  // Runs `argv` in `session` and reads its whole stream.
  std::vector<v1::SandboxEvent> Exec(const std::string& session, std::vector<std::string> argv,
                                     grpc::Status* status) {
    v1::ExecRequest request;
    request.set_session_id(session);
    for (const std::string& a : argv) request.add_argv(a);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    auto reader = stub_->Exec(&ctx, request);
    std::vector<v1::SandboxEvent> events;
    v1::SandboxEvent event;
    while (reader->Read(&event)) events.push_back(event);
    *status = reader->Finish();
    return events;
  }

  long BrokerKb(const std::string& field) { return StatusKb(broker_pid_, field); }
  long LauncherKb(const std::string& field) { return StatusKb(daemons_->launcher_pid(), field); }

  // A command line (for `sh -c`) that floods stdout and whose process carries `marker` — built
  // so the marker never appears literally in any other process's command line.
  static std::string Flood(const std::string& marker) {
    const size_t dash = marker.rfind('-');
    return absl::StrCat("exec yes ", marker.substr(0, dash + 1), "$((", marker.substr(dash + 1),
                        "+0))");
  }
  static std::string Marker(const std::string& what) {
    return absl::StrCat("ccs-", what, "-", getpid() % 10000 + 20000);
  }

  std::string hosts_;
  std::unique_ptr<Daemons> daemons_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
  std::string work_;
  pid_t broker_pid_ = -1;
};

// The cases that end runs whatever the client does run with the broker as root and as an
// unprivileged user (whose runs the launcher ends as another uid's). The others pin stall limits
// and stream resumption, which do not depend on the broker's identity: root broker only.
class ClientTestByBroker : public ClientTest, public ::testing::WithParamInterface<bool> {
 protected:
  void StartDaemons() { ClientTest::StartDaemons({.unprivileged_broker = GetParam()}); }
};

constexpr long kMaxGrowthKb = 64 * 1024;

TEST_P(ClientTestByBroker, AStalledClientsTimeoutEndsTheRunAndNeitherDaemonBuffersItsOutput) {
  StartDaemons();
  ASSERT_TRUE(Launch("timeout").ok());
  const long broker_before = BrokerKb("VmHWM");
  const long launcher_before = LauncherKb("VmHWM");
  const std::string marker = Marker("timeout");
  auto client = StalledClient("timeout", 3000, {"sh", "-c", Flood(marker)});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30)) << daemons_->LauncherLog();
  const auto appeared = Clock::now();
  EXPECT_TRUE(WaitNoProcessMatches(marker, 20)) << "the timeout did not end the stalled run";
  const double lived = std::chrono::duration<double>(Clock::now() - appeared).count();
  EXPECT_LT(lived, 15) << "timeout 3 s, yet the command ran " << lived << " s";
  // Peak resident memory of both daemons while `yes` wrote as fast as it could for 3 s.
  const long broker_growth = BrokerKb("VmHWM") - broker_before;
  const long launcher_growth = LauncherKb("VmHWM") - launcher_before;
  EXPECT_LT(broker_growth, kMaxGrowthKb) << "broker grew by " << broker_growth << " KiB";
  EXPECT_LT(launcher_growth, kMaxGrowthKb) << "launcher grew by " << launcher_growth << " KiB";
  std::cerr << "stalled timeout: command lived " << lived << " s; peak RSS growth broker "
            << broker_growth << " KiB, launcher " << launcher_growth << " KiB\n";
  client->Tell("cancel");
}

TEST_P(ClientTestByBroker, KillEndsTheRunOfAStalledClient) {
  StartDaemons();
  ASSERT_TRUE(Launch("kill").ok());
  const std::string marker = Marker("kill");
  auto client = StalledClient("kill", 0, {"sh", "-c", Flood(marker)});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::KillRequest request;
  request.set_session_id("kill");
  request.set_reason("operator stop");
  v1::KillResponse response;
  const auto asked = Clock::now();
  ASSERT_TRUE(stub_->Kill(&ctx, request, &response).ok());
  EXPECT_EQ(response.runs_signalled(), 1);
  EXPECT_TRUE(WaitNoProcessMatches(marker, 10)) << "Kill did not end the stalled run";
  std::cerr << "stalled Kill: gone after "
            << std::chrono::duration<double>(Clock::now() - asked).count() << " s\n";
  client->Tell("cancel");
}

TEST_P(ClientTestByBroker, DestroyEndsTheRunOfAStalledClientAndTheSession) {
  StartDaemons();
  ASSERT_TRUE(Launch("destroy").ok());
  const std::string marker = Marker("destroy");
  auto client = StalledClient("destroy", 0, {"sh", "-c", Flood(marker)});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30));
  v1::SessionRequest request;
  request.set_session_id("destroy");
  v1::SandboxHandle handle;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    ASSERT_TRUE(stub_->Destroy(&ctx, request, &handle).ok());
  }
  EXPECT_EQ(handle.state(), v1::SANDBOX_STATE_DESTROYED);
  EXPECT_TRUE(WaitNoProcessMatches(marker, 10)) << "the session said DESTROYED; its command ran on";
  grpc::ClientContext ctx;
  EXPECT_EQ(stub_->GetSession(&ctx, request, &handle).error_code(), grpc::StatusCode::NOT_FOUND);
  client->Tell("cancel");
}

TEST_F(ClientTest, AStalledClientThatReadsAgainGetsTheRestAndTheLastEvent) {
  StartDaemons();
  ASSERT_TRUE(Launch("resume").ok());
  const std::string marker = Marker("resume");
  auto client = StalledClient("resume", 2000, {"sh", "-c", Flood(marker)});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30));
  ASSERT_TRUE(WaitNoProcessMatches(marker, 20));
  client->Tell("read");
  const std::string out = client->Finish(60);
  EXPECT_TRUE(absl::StrContains(out, "\"status\": \"OK\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"last\": \"killed\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"killedReason\": \"timeout\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"killedDetail\": \"timeout after 2000 ms\"")) << out;
  EXPECT_FALSE(absl::StrContains(out, "\"stdoutBytes\": 0")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"starting\": 1")) << out;
}

TEST_F(ClientTest, AClientThatTakesNothingForTheStallLimitIsDroppedAndItsRunKilled) {
  DaemonOptions options;
  options.broker_flags = {"--exec-stall-timeout=2s"};
  StartDaemons(options);
  ASSERT_TRUE(Launch("drop").ok());
  const std::string marker = Marker("drop");
  auto client = StalledClient("drop", 0, {"sh", "-c", Flood(marker)});  // no timeout
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30));
  EXPECT_TRUE(WaitNoProcessMatches(marker, 30)) << "a dropped client's run went on";
  EXPECT_TRUE(WaitForText([&] { return daemons_->BrokerLog(); }, "it is dropped and the run", 30))
      << daemons_->BrokerLog();
  client->Tell("read");
  const std::string out = client->Finish(60);
  EXPECT_TRUE(absl::StrContains(out, "\"status\": \"CANCELLED\"")) << out;
  grpc::ClientContext ctx;
  v1::SessionRequest request;
  request.set_session_id("drop");
  v1::SandboxHandle handle;
  ASSERT_TRUE(stub_->GetSession(&ctx, request, &handle).ok());
  EXPECT_EQ(handle.state(), v1::SANDBOX_STATE_WARM);
}

TEST_F(ClientTest, TheLauncherDropsAStreamNobodyReadsOnceItsRunHasEnded) {
  // The broker's own limit set far away: the launcher's bound is what is seen here (it guards
  // against a broker that stops reading).
  DaemonOptions options;
  options.broker_flags = {"--exec-stall-timeout=600s"};
  options.launcher_flags = {"--stream-stall-timeout=2s"};
  StartDaemons(options);
  ASSERT_TRUE(Launch("launcher-drop").ok());
  const std::string marker = Marker("ldrop");
  auto client = StalledClient("launcher-drop", 1000, {"sh", "-c", Flood(marker)});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30));
  ASSERT_TRUE(WaitNoProcessMatches(marker, 20));
  EXPECT_TRUE(WaitForText([&] { return daemons_->LauncherLog(); }, "the broker took no event", 60))
      << daemons_->LauncherLog();
  client->Tell("read");
  const std::string out = client->Finish(60);
  // What was in flight still arrives, and the run ends as killed either way.
  EXPECT_TRUE(absl::StrContains(out, "\"status\": \"OK\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"last\": \"killed\"")) << out;
}

// Seconds between the first log line containing `from` and the next containing `to` (their
// "YYYY-MM-DDTHH:MM:SS.mmm" stamps), or -1.
double SecondsBetween(const std::string& log, const std::string& from, const std::string& to) {
  auto stamp = [&](size_t line_start) {
    const std::string hms = log.substr(line_start + 11, 12);  // HH:MM:SS.mmm
    return std::stoi(hms.substr(0, 2)) * 3600.0 + std::stoi(hms.substr(3, 2)) * 60.0 +
           std::stod(hms.substr(6));
  };
  const size_t a = log.find(from);
  if (a == std::string::npos) return -1;
  const size_t b = log.find(to, a);
  if (b == std::string::npos) return -1;
  const size_t a_line = log.rfind('\n', a), b_line = log.rfind('\n', b);
  return stamp(b_line == std::string::npos ? 0 : b_line + 1) -
         stamp(a_line == std::string::npos ? 0 : a_line + 1);
}

TEST_P(ClientTestByBroker, StoppingEitherDaemonEndsAStalledClientsRunPromptly) {
  // Measured from each daemon's own log ("signal 15" to "stopped"): after that, gRPC's own
  // library shutdown can take seconds more at exit, with or without a stalled client.
  StartDaemons();
  ASSERT_TRUE(Launch("stop-launcher").ok());
  const std::string first = Marker("stopl");
  auto a = StalledClient("stop-launcher", 0, {"sh", "-c", Flood(first)});
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(first, 30));
  ASSERT_TRUE(daemons_->RestartLauncher().ok());
  EXPECT_TRUE(WaitNoProcessMatches(first, 10));
  const double launcher_stop =
      SecondsBetween(daemons_->LauncherLog(), "signal 15: stopping", "launcher: stopped");
  EXPECT_GE(launcher_stop, 0) << daemons_->LauncherLog();
  EXPECT_LT(launcher_stop, 4) << daemons_->LauncherLog();

  ASSERT_TRUE(Launch("stop-broker").ok());
  const std::string second = Marker("stopb");
  auto b = StalledClient("stop-broker", 0, {"sh", "-c", Flood(second)});
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(second, 30));
  daemons_->StopBroker();
  EXPECT_TRUE(WaitNoProcessMatches(second, 10));
  const double broker_stop =
      SecondsBetween(daemons_->BrokerLog(), "signal 15: stopping", "broker: stopped");
  EXPECT_GE(broker_stop, 0) << daemons_->BrokerLog();
  EXPECT_LT(broker_stop, 4) << daemons_->BrokerLog();
  std::cerr << "stalled client: launcher stopped in " << launcher_stop << " s, broker in "
            << broker_stop << " s\n";
}

TEST_F(ClientTest, AStalledClientDoesNotHoldUpOtherSessionsEvents) {
  StartDaemons();
  proxy::testing::HttpOrigin origin;
  const std::string allowed = absl::StrCat("allowed.test:", origin.port());
  ASSERT_TRUE(Launch("stuck", {allowed}).ok());
  ASSERT_TRUE(Launch("other", {allowed}).ok());
  // The stuck session floods its stream and keeps making refused connections (violation events
  // for a stream that is full).
  const std::string marker = Marker("stuck");
  const std::string refusals =
      "import socket\n"
      "while True:\n"
      "    s = socket.create_connection(('127.0.0.1', 3128))\n"
      "    s.sendall(b'CONNECT refused.test:443 HTTP/1.1\\r\\n\\r\\n')\n"
      "    s.recv(4096)\n"
      "    s.close()\n";
  auto client = StalledClient(
      "stuck", 0, {"sh", "-c", absl::StrCat("python3 -c \"", refusals, "\" & ", Flood(marker))});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30));
  ASSERT_TRUE(WaitForText([&] { return daemons_->BrokerLog(); }, "target=refused.test:443", 30));
  grpc::Status status;
  std::vector<v1::SandboxEvent> events =
      Exec("other",
           {"sh", "-c",
            absl::StrCat("curl -sS -o /dev/null -w 'code=%{http_code}\\n' "
                         "--max-time 20 http://elsewhere.test/; curl -sS -o /dev/null "
                         "-w 'code=%{http_code}\\n' --max-time 20 http://",
                         allowed, "/")},
           &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  std::string out;
  int violations = 0;
  for (const v1::SandboxEvent& e : events) {
    out += e.stdout();
    if (e.has_violation() && e.violation().target() == "elsewhere.test:80") ++violations;
  }
  EXPECT_EQ(out, "code=403\ncode=200\n");
  EXPECT_EQ(violations, 1);
  ASSERT_TRUE(events.back().has_exit());
  grpc::ClientContext ctx;
  v1::SessionRequest request;
  request.set_session_id("stuck");
  v1::SandboxHandle handle;
  ASSERT_TRUE(stub_->Destroy(&ctx, request, &handle).ok());
  EXPECT_TRUE(WaitNoProcessMatches(marker, 10));
  client->Tell("cancel");
}

// A sandboxed python that opens 2,000 CONNECT tunnels to `host` through its proxy, keeps those
// that are established, prints "holding ok=N refused=N other=N" and waits. Its stream is read
// on a thread of its own.
class GreedySession {
 public:
  GreedySession(v1::SandboxBroker::Stub& stub, const std::string& session, const std::string& host)
      : reader_(stub.Exec(&ctx_, Request(session, host))), thread_([this] { Read(); }) {}
  ~GreedySession() {
    if (joined_) return;
    ctx_.TryCancel();
    thread_.join();
    reader_->Finish();
  }

  std::string out() {
    absl::MutexLock lock(&mu_);
    return out_;
  }
  // Waits for the "holding" line (or the end of the stream); returns it (or all output).
  std::string WaitHolding() {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(this, &GreedySession::HoldingOrEnded), absl::Seconds(240));
    const size_t at = out_.find("holding");
    return at == std::string::npos ? out_ : out_.substr(at, out_.find('\n', at) - at);
  }
  // Waits for the stream to end (after a Kill).
  void Join() {
    thread_.join();
    reader_->Finish();
    joined_ = true;
  }
  // Its last event and how many refusals it was told about.
  v1::SandboxEvent last() {
    absl::MutexLock lock(&mu_);
    return last_;
  }
  int limit_violations() {
    absl::MutexLock lock(&mu_);
    return limit_violations_;
  }

 private:
  static v1::ExecRequest Request(const std::string& session, const std::string& host) {
    v1::ExecRequest request;
    request.set_session_id(session);
    request.add_argv("python3");
    request.add_argv("-c");
    request.add_argv(absl::StrCat(
        "import resource, socket, time\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))\n"
        "ok = refused = other = 0\n"
        "held = []\n"
        "for i in range(2000):\n"
        "    try:\n"
        "        s = socket.create_connection(('127.0.0.1', 3128), timeout=30)\n"
        "        s.sendall(b'CONNECT ",
        host,
        " HTTP/1.1\\r\\n\\r\\n')\n"
        "        head = b''\n"
        "        while b'\\r\\n\\r\\n' not in head:\n"
        "            chunk = s.recv(4096)\n"
        "            if not chunk: break\n"
        "            head += chunk\n"
        "    except OSError:\n"
        "        other += 1\n"
        "        continue\n"
        "    if head.startswith(b'HTTP/1.1 200'):\n"
        "        ok += 1\n"
        "        held.append(s)\n"
        "    elif head.startswith(b'HTTP/1.1 503'):\n"
        "        refused += 1\n"
        "        s.close()\n"
        "    else:\n"
        "        other += 1\n"
        "        s.close()\n"
        "print('holding ok=%d refused=%d other=%d' % (ok, refused, other), flush=True)\n"
        "time.sleep(600)\n"));
    return request;
  }

  void Read() {
    v1::SandboxEvent event;
    while (reader_->Read(&event)) {
      absl::MutexLock lock(&mu_);
      out_ += event.stdout();
      if (event.has_violation() && absl::StrContains(event.violation().raw(), "connection limit")) {
        ++limit_violations_;
      }
      last_ = event;
    }
    absl::MutexLock lock(&mu_);
    ended_ = true;
  }
  bool HoldingOrEnded() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return ended_ || absl::StrContains(out_, "holding");
  }

  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReader<v1::SandboxEvent>> reader_;
  absl::Mutex mu_;
  std::string out_ ABSL_GUARDED_BY(mu_);
  int limit_violations_ ABSL_GUARDED_BY(mu_) = 0;
  v1::SandboxEvent last_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  bool joined_ = false;
  std::thread thread_;
};

class ConnectionCapTest : public ClientTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(echo_.ok());
    echo_host_ = absl::StrCat("allowed.test:", echo_.port());
    web_host_ = absl::StrCat("allowed.test:", origin_.port());
  }

  // A session that allows the web origin fetches from it through its own proxy.
  std::string Fetch(const std::string& session) {
    grpc::Status status;
    std::vector<v1::SandboxEvent> events =
        Exec(session,
             {"sh", "-c",
              absl::StrCat("curl -sS -o /dev/null -w 'code=%{http_code}' --max-time 20 http://",
                           web_host_, "/")},
             &status);
    std::string out;
    for (const v1::SandboxEvent& e : events) out += e.stdout() + e.stderr();
    return status.ok() ? out : status.error_message();
  }
  void Kill(const std::string& session) {
    grpc::ClientContext ctx;
    v1::KillRequest kill;
    kill.set_session_id(session);
    v1::KillResponse response;
    EXPECT_TRUE(stub_->Kill(&ctx, kill, &response).ok());
  }

  proxy::testing::TestServer echo_{proxy::testing::EchoHandler};
  proxy::testing::HttpOrigin origin_;
  std::string echo_host_;
  std::string web_host_;
};

// An unprivileged broker raises its descriptor limit only as far as its hard limit goes.
class ConnectionCapTestByBroker : public ConnectionCapTest,
                                  public ::testing::WithParamInterface<bool> {};

TEST_P(ConnectionCapTestByBroker, ASessionAtItsCapIsRefusedButDoesNotStopOthers) {
  StartDaemons({.unprivileged_broker = GetParam()});
  ASSERT_TRUE(Launch("greedy", {echo_host_}).ok());
  ASSERT_TRUE(Launch("neighbour", {web_host_}).ok());
  GreedySession greedy(*stub_, "greedy", echo_host_);
  EXPECT_EQ(greedy.WaitHolding(), "holding ok=512 refused=1488 other=0") << daemons_->BrokerLog();
  EXPECT_TRUE(absl::StrContains(daemons_->BrokerLog(), "connection limit"))
      << daemons_->BrokerLog();
  // Meanwhile: a new session launches, and another reaches the network through its proxy.
  EXPECT_TRUE(Launch("late").ok());
  EXPECT_EQ(Fetch("neighbour"), "code=200");
  EXPECT_EQ(origin_.accepted(), 1);
  EXPECT_EQ(echo_.accepted(), 512);
  Kill("greedy");
  greedy.Join();
  EXPECT_TRUE(greedy.last().has_killed()) << greedy.last().DebugString();
  // Every refusal was a violation in the greedy session's own stream (none dropped: it reads).
  EXPECT_EQ(greedy.limit_violations(), 1488);
}

TEST_F(ConnectionCapTest, TheTotalCapStillLeavesALightSessionItsConnections) {
  DaemonOptions options;
  options.broker_flags = {"--egress-max-connections=600"};
  StartDaemons(options);
  ASSERT_TRUE(Launch("greedy-1", {echo_host_}).ok());
  ASSERT_TRUE(Launch("greedy-2", {echo_host_}).ok());
  ASSERT_TRUE(Launch("light", {web_host_}).ok());
  GreedySession first(*stub_, "greedy-1", echo_host_);
  EXPECT_EQ(first.WaitHolding(), "holding ok=512 refused=1488 other=0");
  GreedySession second(*stub_, "greedy-2", echo_host_);
  EXPECT_EQ(second.WaitHolding(), "holding ok=88 refused=1912 other=0");  // 600 in all
  EXPECT_TRUE(absl::StrContains(daemons_->BrokerLog(), "the egress proxies of all sessions"))
      << daemons_->BrokerLog();
  EXPECT_TRUE(Launch("late").ok());
  EXPECT_EQ(Fetch("light"), "code=200");  // below its guaranteed connections
  Kill("greedy-1");
  Kill("greedy-2");
  first.Join();
  second.Join();
}

INSTANTIATE_TEST_SUITE_P(Brokers, ClientTestByBroker, ::testing::Bool(), BrokerIdentityName);
INSTANTIATE_TEST_SUITE_P(Brokers, ConnectionCapTestByBroker, ::testing::Bool(), BrokerIdentityName);

}  // namespace
}  // namespace ccsandbox::testing
