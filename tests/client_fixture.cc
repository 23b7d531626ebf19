#include "tests/client_fixture.h"

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "tests/poll_until.h"

extern char** environ;

namespace ccsandbox::testing {

using Clock = std::chrono::steady_clock;

long StatusKb(pid_t pid, const std::string& field) {
  std::istringstream status(ReadFile(absl::StrCat("/proc/", pid, "/status")));
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

::testing::AssertionResult WaitForText(const std::function<std::string()>& read,
                                       const std::string& needle, double seconds) {
  return PollUntil([&] { return absl::StrContains(read(), needle); }, absl::Seconds(seconds),
                   absl::StrCat("'", needle, "'"));
}

std::unique_ptr<PythonClient> PythonClient::Start(const std::string& broker,
                                                  const std::string& session, uint64_t timeout_ms,
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

bool PythonClient::WaitOpened() { return ReadUntil("opened\n", 60); }

void PythonClient::Tell(const std::string& command) {
  const std::string line = command + "\n";
  (void)!write(process_->stdin_fd(), line.data(), line.size());
}

std::string PythonClient::Finish(double seconds) {
  ReadUntil("", seconds, /*to_eof=*/true);
  return out_;
}

bool PythonClient::ReadUntil(const std::string& needle, double seconds, bool to_eof) {
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

void ClientTest::StartDaemons(DaemonOptions options) {
  hosts_ = absl::StrCat("/tmp/client-hosts-", getpid());
  std::ofstream(hosts_) << "127.0.0.1 allowed.test\n";
  options.broker_flags.push_back("--egress-hosts-file=" + hosts_);
  auto daemons = Daemons::Start(options);
  ASSERT_TRUE(daemons.ok()) << daemons.status();
  daemons_ = std::move(*daemons);
  stub_ = v1::SandboxBroker::NewStub(
      grpc::CreateChannel(daemons_->broker_address(), grpc::InsecureChannelCredentials()));
  work_ = daemons_->MakeWorkdir();
}

void ClientTest::TearDown() {
  daemons_.reset();
  if (!hosts_.empty()) unlink(hosts_.c_str());
}

grpc::Status ClientTest::Launch(const std::string& id, const std::vector<std::string>& allow) {
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

std::unique_ptr<PythonClient> ClientTest::StalledClient(const std::string& session,
                                                        uint64_t timeout_ms,
                                                        const std::vector<std::string>& argv) {
  auto client = PythonClient::Start(daemons_->broker_address(), session, timeout_ms, argv);
  EXPECT_NE(client, nullptr);
  if (client != nullptr) {
    EXPECT_TRUE(client->WaitOpened());
  }
  return client;
}

std::vector<v1::SandboxEvent> ClientTest::Exec(const std::string& session,
                                               std::vector<std::string> argv,
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

std::string ClientTest::Flood(const std::string& marker) {
  const size_t dash = marker.rfind('-');
  return absl::StrCat("exec yes ", marker.substr(0, dash + 1), "$((", marker.substr(dash + 1),
                      "+0))");
}

std::string ClientTest::Marker(const std::string& what) {
  return absl::StrCat("ccs-", what, "-", getpid() % 10000 + 20000);
}

}  // namespace ccsandbox::testing
