// Process plumbing shared by the benchmark programs (exec_bench, egress_bench): temporary
// directories, child processes (daemons that die with the bench, measured commands started the
// lean way), waiting for a daemon's socket, reading logs. Bench-only; asserts nothing.
#ifndef CCSANDBOX_TESTS_BENCH_BENCH_PROCESS_H_
#define CCSANDBOX_TESTS_BENCH_BENCH_PROCESS_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ccsandbox::bench {

using Clock = std::chrono::steady_clock;

// Set on SIGINT or SIGTERM once StopOnSignals has run: long loops and waits give up.
extern std::atomic<bool> g_stop;
// Installs the handler that sets g_stop for SIGINT and SIGTERM, and ignores SIGPIPE (a peer
// that went away is an error value, not the end of the bench).
void StopOnSignals();

double MsSince(Clock::time_point start);

// A directory from mkdtemp, removed with its contents when this goes away.
class TempDir {
 public:
  static absl::StatusOr<TempDir> Create(const std::string& prefix);
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

struct SpawnOptions {
  std::vector<std::string> argv;     // argv[0] is the executable's path
  std::vector<std::string> envp;     // empty: this process's environment
  std::string cwd;                   // empty: this process's
  std::string output = "/dev/null";  // stdout and stderr (truncated first)
  // Daemons: the kernel kills them if the bench dies, so nothing outlives it.
  // Needs fork; measured commands use posix_spawn (vfork-like, the lean way).
  bool die_with_parent = false;
};

// One child process; the destructor stops (SIGTERM, then SIGKILL) and reaps it.
class Child {
 public:
  static absl::StatusOr<Child> Spawn(const SpawnOptions& options);
  Child(Child&& other) noexcept;
  Child& operator=(Child&&) = delete;
  ~Child() { Stop(std::chrono::seconds(5)); }

  pid_t pid() const { return pid_; }
  // Blocks until the child exits; returns its wait status.
  absl::StatusOr<int> Wait();
  // True once the child has exited (it is reaped then).
  bool Exited();
  void Stop(std::chrono::milliseconds grace);

 private:
  explicit Child(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
};

std::string ReadFile(const std::string& path);
// The last 2,000 bytes of a file (a daemon's log, for error messages).
std::string Tail(const std::string& path);
// Waits (10 s at most) until `path` is a socket; fails early when `owner` exits.
absl::Status WaitForSocket(const std::string& path, Child& owner, const std::string& log);
// The real path of the executable a --`name` flag names, or INVALID_ARGUMENT.
absl::StatusOr<std::string> ExecutableFlag(const std::string& name, const std::string& path);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_BENCH_PROCESS_H_
