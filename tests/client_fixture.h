// End-to-end support for the client-independence tests (DESIGN.md "Threat model": enforcement
// never depends on the client): `ClientTest` starts the real daemons with a hosts file that
// answers allowed.test → 127.0.0.1, launches native review sessions over a work tree, runs
// Exec calls to their end, and starts `PythonClient`, an Exec client in a separate process
// (tests/python/exec_client.py) that reads its stream only when told to.
//
//   StartDaemons();
//   ASSERT_TRUE(Launch("s", {"allowed.test:8080"}).ok());
//   auto client = StalledClient("s", /*timeout_ms=*/3000, {"sh", "-c", Flood(Marker("s"))});
//   ...
//   client->Tell("read");
//   const std::string out = client->Finish(60);
#ifndef CCSANDBOX_TESTS_CLIENT_FIXTURE_H_
#define CCSANDBOX_TESTS_CLIENT_FIXTURE_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "launcher/sandbox_process.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {

// A field of /proc/PID/status in KiB (VmRSS, VmHWM), or -1.
long StatusKb(pid_t pid, const std::string& field);

// Waits up to `seconds` for `read()` (a daemon's log, which only polling can watch) to contain
// `needle`.
::testing::AssertionResult WaitForText(const std::function<std::string()>& read,
                                       const std::string& needle, double seconds);

// tests/python/exec_client.py as a child process with pipes on its stdin and stdout: it makes
// one Exec call and reads nothing of it until told to.
class PythonClient {
 public:
  // nullptr when python3 cannot be started.
  static std::unique_ptr<PythonClient> Start(const std::string& broker, const std::string& session,
                                             uint64_t timeout_ms,
                                             const std::vector<std::string>& argv);

  // Waits for "opened": the Exec call has been made, and nothing of it is read.
  bool WaitOpened();
  // Sends one command line ("read", "cancel").
  void Tell(const std::string& command);
  // Everything it prints until it exits (at most `seconds`).
  std::string Finish(double seconds);

 private:
  PythonClient() = default;
  bool ReadUntil(const std::string& needle, double seconds, bool to_eof = false);

  std::unique_ptr<launcher::SandboxProcess> process_;
  std::string out_;
};

class ClientTest : public ::testing::Test {
 protected:
  // Starts both daemons, the broker resolving egress names from a hosts file of its own.
  void StartDaemons(DaemonOptions options = {});
  void TearDown() override;

  // A native, read-only session over the work tree whose proxies allow `allow`.
  grpc::Status Launch(const std::string& id, const std::vector<std::string>& allow = {});

  // A PythonClient whose Exec call of `argv` in `session` is open and unread.
  std::unique_ptr<PythonClient> StalledClient(const std::string& session, uint64_t timeout_ms,
                                              const std::vector<std::string>& argv);

  // Runs `argv` in `session` and reads its whole stream.
  std::vector<v1::SandboxEvent> Exec(const std::string& session, std::vector<std::string> argv,
                                     grpc::Status* status);

  long BrokerKb(const std::string& field) { return StatusKb(daemons_->broker_pid(), field); }
  long LauncherKb(const std::string& field) { return StatusKb(daemons_->launcher_pid(), field); }

  // A command line (for `sh -c`) that floods stdout and whose process carries `marker` — built
  // so the marker never appears literally in any other process's command line.
  static std::string Flood(const std::string& marker);
  // A marker for `what`, unique to this test process.
  static std::string Marker(const std::string& what);

  std::string hosts_;
  std::unique_ptr<Daemons> daemons_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
  std::string work_;
};

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_TESTS_CLIENT_FIXTURE_H_
