// End-to-end test support: the real launcher and broker as separate processes on private
// sockets under /tmp (socket paths must stay under 108 bytes), plus a way to run any
// program (sandboxctl, python3) and collect its output and exit code.
#ifndef CCSANDBOX_TESTS_DAEMON_FIXTURE_H_
#define CCSANDBOX_TESTS_DAEMON_FIXTURE_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "launcher/sandbox_process.h"

namespace ccsandbox::testing {

// Path of a runfile of this workspace, e.g. "broker/sandboxctl".
std::string Runfile(const std::string& relative);

struct ProgramResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `argv` to completion (PATH-searched), optionally as another identity. A sanitizer's report
// on the stderr of a program of this build (sandboxctl) fails the test.
ProgramResult RunProgram(const std::vector<std::string>& argv,
                         std::optional<launcher::Identity> identity = std::nullopt,
                         const std::string& stdin_data = "", const std::string& cwd = "");

// A daemon as a child of this process: `argv` (argv[0] a path) with this environment plus
// `extra_env`, stdout and stderr to the file `log`. Returns its pid (or -1). Once StopDaemon (or
// Daemons) has reaped it, a sanitizer's report in `log` fails the test (tests/sanitizer_report.h).
pid_t SpawnDaemon(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                  const std::string& log);
// Waits (30 s at most: a loaded machine, a probe boot) until something accepts connections on the
// Unix socket `path`; fails at once when the daemon `pid` has exited.
absl::Status WaitUntilListening(const std::string& path, pid_t pid, const std::string& daemon);
// SIGTERM, then SIGKILL after 5 s; reaps it and returns the wait status.
int StopDaemon(pid_t pid);

struct DaemonOptions {
  std::string sandbox_flag;             // "" = not given
  std::vector<std::string> broker_env;  // extra NAME=value for the broker
  std::string allowed_uids = "0";
  std::vector<std::string> broker_flags;    // extra --flags for the broker
  std::vector<std::string> launcher_flags;  // extra --flags for the launcher
  // Runs the broker as the unprivileged user `ccsandbox-test` (created when missing), the
  // launcher allowing only that uid and giving it its socket's group: the production shape.
  bool unprivileged_broker = false;
  // The test bounds the daemons' resident memory: under ASan they keep only 1 MiB of freed blocks
  // from reuse (quarantine_size_mb) instead of 256 MiB, which would count as their growth.
  // ASan finds use-after-free in the other tests' daemons, which keep the default.
  bool measures_daemon_memory = false;
};

// The unprivileged test user's identity, creating the user when it is missing (as root).
absl::StatusOr<launcher::Identity> UnprivilegedTestUser();

// Suites that must hold with the broker as root AND as the unprivileged test user are
// parametrised over a bool (true: unprivileged), named by this: "RootBroker",
// "UnprivilegedBroker".
std::string BrokerIdentityName(const ::testing::TestParamInfo<bool>& info);

class Daemons {
 public:
  static absl::StatusOr<std::unique_ptr<Daemons>> Start(const DaemonOptions& options = {});
  ~Daemons();  // SIGTERM both, wait, remove the temp dir

  const std::string& dir() const { return dir_; }
  std::string broker_address() const { return "unix:" + dir_ + "/broker.sock"; }
  // The broker's --runtime-dir (session proxy sockets); gone once the broker has stopped.
  std::string runtime_dir() const { return dir_ + ".run"; }
  std::string launcher_socket() const { return dir_ + "/launcher.sock"; }
  std::string BrokerLog() const;
  std::string LauncherLog() const;
  // A fresh directory to bind as a work tree (outside the socket directory), owned by the
  // broker's uid when it is unprivileged.
  std::string MakeWorkdir();
  // With an unprivileged broker, chowns `path` (recursively) to its uid and gid: what the test made
  // on the host as root becomes the caller's own, as a user's tree is. Nothing for a root broker (a
  // root caller's files stay root's through the idmapped binds).
  void GiveToCaller(const std::string& path);
  pid_t launcher_pid() const { return launcher_pid_; }
  pid_t broker_pid() const { return broker_pid_; }
  // The uid the broker runs as.
  uid_t broker_uid() const { return broker_uid_; }
  // SIGTERMs the broker (an orderly stop) and returns its wait status.
  int StopBroker();
  // SIGKILLs the broker (a crash, as the launcher sees it).
  void CrashBroker();
  // SIGTERMs the launcher (an orderly stop) and returns its wait status.
  int StopLauncher();
  // Stops the launcher (SIGTERM) and starts a new one on the same socket.
  absl::Status RestartLauncher();
  // `sandboxctl --broker=... args...`
  ProgramResult Sandboxctl(const std::vector<std::string>& args, const std::string& cwd = "");

 private:
  Daemons() = default;
  std::string dir_;
  std::string work_root_;
  std::string allowed_uids_;
  std::vector<std::string> launcher_flags_;
  std::vector<std::string> daemon_env_;  // extra environment of both daemons
  pid_t launcher_pid_ = -1;
  pid_t broker_pid_ = -1;
  uid_t broker_uid_ = 0;
  gid_t broker_gid_ = 0;
};

// Daemons::Start, the failure recorded as a test failure (nullptr then).
std::unique_ptr<Daemons> MustStart(const DaemonOptions& options = {});

// The whole content of a file ("" when it cannot be read), and whether a path exists (lstat).
std::string ReadFile(const std::string& path);
bool PathExists(const std::string& path);

// The command's stdout (stderr) from `sandboxctl run --json` output (its base64 "stdout"
// ("stderr") fields).
std::string JsonStdout(const std::string& json);
std::string JsonStderr(const std::string& json);
// How often `needle` occurs in `text`.
int CountOf(const std::string& text, const std::string& needle);

// True while any process's command line contains `marker`. A sandboxed command is no child
// of the test: /proc is the only place to see it, so the waits below poll (and fail, saying
// what they waited for, after `seconds`).
bool AnyProcessMatches(const std::string& marker);
::testing::AssertionResult WaitForProcessMatching(const std::string& marker, double seconds);
::testing::AssertionResult WaitNoProcessMatches(const std::string& marker, double seconds);

// Where a launcher on `socket` (process `launcher`) makes its cgroup directory in each hierarchy
// (below its own cgroup, named after its socket); the candidates, whether they exist or not.
std::vector<std::string> LauncherCgroupDirs(const std::string& socket, pid_t launcher);

// True when something accepts a connection on the Unix socket `path` now.
bool AcceptsConnections(const std::string& path);

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_TESTS_DAEMON_FIXTURE_H_
