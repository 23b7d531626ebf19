#include "tests/bench/bench_process.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace ccsandbox::bench {
namespace {

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::atomic<bool> g_stop{false};

void StopOnSignals() {
  signal(SIGPIPE, SIG_IGN);
  struct sigaction stop = {};
  stop.sa_handler = [](int) { g_stop = true; };
  sigaction(SIGINT, &stop, nullptr);
  sigaction(SIGTERM, &stop, nullptr);
}

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

absl::StatusOr<TempDir> TempDir::Create(const std::string& prefix) {
  std::string path = prefix + "XXXXXX";
  if (mkdtemp(path.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", path, ": ", strerror(errno)));
  }
  return TempDir(std::move(path));
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, "")) {}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

Child::Child(Child&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}

absl::StatusOr<int> Child::Wait() {
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  pid_ = -1;
  if (r < 0) return absl::InternalError(absl::StrCat("waitpid: ", strerror(errno)));
  return status;
}

bool Child::Exited() {
  int status = 0;
  if (pid_ <= 0) return true;
  if (waitpid(pid_, &status, WNOHANG) == pid_) pid_ = -1;
  return pid_ <= 0;
}

void Child::Stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  const Clock::time_point deadline = Clock::now() + grace;
  while (!Exited() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    Wait().IgnoreError();
  }
}

absl::StatusOr<Child> Child::Spawn(const SpawnOptions& options) {
  std::vector<char*> argv = CStrings(options.argv);
  std::vector<char*> envp = CStrings(options.envp);
  char** env = options.envp.empty() ? environ : envp.data();
  const char* exe = argv[0];

  if (options.die_with_parent) {
    const char* output = options.output.c_str();
    const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
    if (pid == 0) {
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      for (int sig : {SIGINT, SIGTERM, SIGPIPE}) signal(sig, SIG_DFL);
      if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent) _exit(127);
      const int in = open("/dev/null", O_RDONLY);
      const int out = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) {
        _exit(127);
      }
      if (cwd != nullptr && chdir(cwd) != 0) _exit(127);
      execve(exe, argv.data(), env);
      _exit(127);
    }
    return Child(pid);
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, options.output.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, exe, &actions, &attr, argv.data(), env);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return absl::InternalError(absl::StrCat("posix_spawn ", exe, ": ", strerror(err)));
  return Child(pid);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Tail(const std::string& path) {
  const std::string all = ReadFile(path);
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

absl::Status WaitForSocket(const std::string& path, Child& owner, const std::string& log) {
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
  struct stat st;
  while (stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
    if (owner.Exited() || Clock::now() > deadline || g_stop) {
      return absl::UnavailableError(
          absl::StrCat("no socket at ", path, "; daemon log:\n", Tail(log)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ExecutableFlag(const std::string& name, const std::string& path) {
  char resolved[PATH_MAX];
  if (path.empty() || realpath(path.c_str(), resolved) == nullptr || access(resolved, X_OK) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": '", path, "' is not an executable file"));
  }
  return std::string(resolved);
}

}  // namespace ccsandbox::bench
