#include "tests/daemon_fixture.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "base/unique_fd.h"
#include "launcher/run_supervisor.h"
#include "tests/poll_until.h"
#include "tests/process_exit.h"
#include "tests/sanitizer_report.h"

extern char** environ;

namespace ccsandbox::testing {
namespace {

class CollectingSink : public launcher::EventSink {
 public:
  ProgramResult* result;
  bool Emit(const v1::SandboxEvent& e) override {
    if (e.has_stdout()) result->out += e.stdout();
    if (e.has_stderr()) result->err += e.stderr();
    if (e.has_exit()) result->exit_code = e.exit().exit_code();
    if (e.has_killed()) result->exit_code = 128 + e.killed().signal();
    return true;
  }
  bool Cancelled() override { return false; }
};

// Each running daemon's program and log, by pid: once it has ended, its log is checked for a
// sanitizer's report (its stderr, which no one else reads).
struct DaemonLog {
  std::string program;
  std::string path;
};
std::mutex daemon_logs_mutex;
std::map<pid_t, DaemonLog>& DaemonLogs() {
  static auto* logs = new std::map<pid_t, DaemonLog>();
  return *logs;
}

// Fails the test when the log of the daemon `pid` (ended) holds a sanitizer's report, under
// --config=asan-ubsan: a memory error, a leak (at an orderly exit) or undefined behaviour.
void ExpectNoSanitizerReport(pid_t pid) {
  DaemonLog log;
  {
    std::lock_guard<std::mutex> lock(daemon_logs_mutex);
    auto it = DaemonLogs().find(pid);
    if (it == DaemonLogs().end()) return;
    log = it->second;
    DaemonLogs().erase(it);
  }
  const std::string report = SanitizerReport(ReadFile(log.path));
  if (!report.empty()) {
    ADD_FAILURE() << "a sanitizer report in " << log.path << ", the log of " << log.program
                  << " (pid " << pid << "):\n"
                  << report;
  }
}

// ASAN_OPTIONS as this test's, but with a 1 MiB quarantine ({} when this build has no ASan). ASan
// keeps freed blocks resident until 256 MiB of them wait (quarantine_size_mb), so a daemon that
// copies a flood through short-lived buffers grows by that much without holding anything.
std::vector<std::string> SmallAsanQuarantine() {
#ifdef __SANITIZE_ADDRESS__
  const char* options = getenv("ASAN_OPTIONS");
  return {absl::StrCat("ASAN_OPTIONS=", options ? options : "", options ? ":" : "",
                       "quarantine_size_mb=1")};
#else
  return {};
#endif
}

}  // namespace

pid_t SpawnDaemon(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                  const std::string& log) {
  // A variable of `extra_env` replaces the inherited one (getenv would find the first).
  auto named_in_extra = [&](absl::string_view entry) {
    const absl::string_view name = entry.substr(0, entry.find('=') + 1);
    for (const std::string& e : extra_env) {
      if (absl::StartsWith(e, name)) return true;
    }
    return false;
  };
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!absl::StartsWith(*e, "CC_SERVER_SANDBOX=") && !named_in_extra(*e)) env.push_back(*e);
  }
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> argv_p, env_p;
  for (const auto& a : argv) argv_p.push_back(const_cast<char*>(a.c_str()));
  argv_p.push_back(nullptr);
  for (const auto& e : env) env_p.push_back(const_cast<char*>(e.c_str()));
  env_p.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, argv_p.data(), env_p.data());
  posix_spawn_file_actions_destroy(&actions);
  if (pid > 0) {
    std::lock_guard<std::mutex> lock(daemon_logs_mutex);
    DaemonLogs()[pid] = DaemonLog{argv[0], log};
  }
  return pid;
}

// True once `pid`, a child of ours, has exited; reaps nothing (StopDaemon still waits for it).
bool HasExited(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

// Waits until something accepts connections on the Unix socket `path` (the file appears at
// bind(), slightly before listen(), so only a connection shows it listens), failing at once if
// the daemon `pid` that should listen there has exited.
absl::Status WaitUntilListening(const std::string& path, pid_t pid, const std::string& daemon) {
  bool exited = false;
  ::testing::AssertionResult listening = PollUntil(
      [&] {
        exited = HasExited(pid);
        return exited || AcceptsConnections(path);
      },
      absl::Seconds(30), absl::StrCat("the ", daemon, " to listen on ", path));
  if (exited) return absl::UnavailableError(absl::StrCat("the ", daemon, " exited at start-up"));
  if (!listening) return absl::DeadlineExceededError(listening.message());
  return absl::OkStatus();
}

// SIGTERM, then SIGKILL after 5 s; returns the wait status.
int StopDaemon(pid_t pid) {
  if (pid <= 0) return -1;
  kill(pid, SIGTERM);
  if (!ExitsWithin(pid, absl::Seconds(5))) kill(pid, SIGKILL);
  int status = -1;
  waitpid(pid, &status, 0);
  ExpectNoSanitizerReport(pid);
  return status;
}

// The directories a launcher on `socket` makes in each cgroup hierarchy: below the cgroup of
// the process that starts it (this test's, which it inherits), named after its socket.
std::vector<std::string> LauncherCgroupDirs(const std::string& socket, pid_t launcher) {
  const std::string name =
      absl::StrFormat("ccsandbox-%012x", std::hash<std::string>()(socket) & 0xffffffffffffULL);
  std::vector<std::string> dirs;
  for (absl::string_view line : absl::StrSplit(
           ReadFile(absl::StrCat("/proc/", launcher, "/cgroup")), '\n', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() != 3 || absl::StartsWith(f[1], "name=")) continue;
    const std::string path = f[2] == "/" ? "" : f[2];
    // v1: "ID:controllers:path" below the controllers' mount; v2: "0::path" below the root.
    dirs.push_back(f[1].empty() ? absl::StrCat("/sys/fs/cgroup", path, "/", name)
                                : absl::StrCat("/sys/fs/cgroup/", f[1], path, "/", name));
  }
  return dirs;
}

bool AcceptsConnections(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  return connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool PathExists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string Runfile(const std::string& relative) {
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* workspace = getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir ? srcdir : ".", "/", workspace ? workspace : "ccsandbox", "/",
                      relative);
}

ProgramResult RunProgram(const std::vector<std::string>& argv,
                         std::optional<launcher::Identity> identity, const std::string& stdin_data,
                         const std::string& cwd) {
  ProgramResult result;
  launcher::ProcessSpec spec;
  const char* path = getenv("PATH");
  spec.executable =
      launcher::FindExecutable(argv[0], path ? path : "/usr/bin:/bin").value_or(argv[0]);
  spec.argv = argv;
  for (char** e = environ; *e != nullptr; ++e) spec.envp.push_back(*e);
  spec.identity = identity;
  spec.cwd = cwd;
  auto process = launcher::SandboxProcess::Spawn(spec);
  if (!process.ok()) {
    result.err = std::string(process.status().message());
    return result;
  }
  auto control = launcher::RunControl::Create();
  CollectingSink sink;
  sink.result = &result;
  launcher::SuperviseOptions options;
  options.stdin_data = stdin_data;
  options.timeout = std::chrono::seconds(60);
  launcher::Supervise(**process, **control, options, sink);
  // A program of this build (sandboxctl, a daemon run once) reports on its stderr.
  const char* srcdir = getenv("TEST_SRCDIR");
  if (srcdir != nullptr && absl::StartsWith(spec.executable, srcdir)) {
    const std::string report = SanitizerReport(result.err);
    if (!report.empty()) ADD_FAILURE() << "a sanitizer report from " << argv[0] << ":\n" << report;
  }
  return result;
}

absl::StatusOr<launcher::Identity> UnprivilegedTestUser() {
  constexpr const char* kUser = "ccsandbox-test";
  if (getpwnam(kUser) == nullptr) {
    ProgramResult made = RunProgram(
        {"useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", kUser});
    if (made.exit_code != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create the test user ", kUser, " (run as root): ", made.err));
    }
  }
  const passwd* pw = getpwnam(kUser);
  if (pw == nullptr) return absl::FailedPreconditionError("the test user vanished");
  return launcher::Identity{pw->pw_uid, pw->pw_gid, {pw->pw_gid}};
}

std::string BrokerIdentityName(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "UnprivilegedBroker" : "RootBroker";
}

absl::StatusOr<std::unique_ptr<Daemons>> Daemons::Start(const DaemonOptions& options) {
  auto daemons = std::unique_ptr<Daemons>(new Daemons());
  char tmpl[] = "/tmp/ccs-e2e.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return absl::InternalError("mkdtemp failed");
  daemons->dir_ = tmpl;
  std::vector<std::string> broker_prefix;
  std::string broker_binary = Runfile("broker/sandbox_brokerd");
  DaemonOptions opts = options;
  if (options.unprivileged_broker) {
    absl::StatusOr<launcher::Identity> user = UnprivilegedTestUser();
    if (!user.ok()) return user.status();
    daemons->broker_uid_ = user->uid;
    daemons->broker_gid_ = user->gid;
    opts.allowed_uids = absl::StrCat(user->uid);
    opts.launcher_flags.push_back(absl::StrCat("--socket-group=", user->gid));
    // The broker creates its socket here, and runs from a copy it can read (the build tree
    // under /root is not).
    if (chown(tmpl, user->uid, user->gid) != 0 || chmod(tmpl, 0755) != 0) {
      return absl::InternalError("cannot hand the daemon directory to the test user");
    }
    const std::string copy = daemons->dir_ + "/sandbox_brokerd";
    if (RunProgram({"cp", broker_binary, copy}).exit_code != 0 || chmod(copy.c_str(), 0755) != 0) {
      return absl::InternalError("cannot copy the broker for the test user");
    }
    broker_binary = copy;
    broker_prefix = {"/usr/bin/setpriv", absl::StrCat("--reuid=", user->uid),
                     absl::StrCat("--regid=", user->gid), "--clear-groups", "--"};
  }
  char work[] = "/var/tmp/ccs-work.XXXXXX";
  if (mkdtemp(work) == nullptr) return absl::InternalError("mkdtemp failed");
  daemons->work_root_ = work;
  chmod(work, 0755);

  daemons->allowed_uids_ = opts.allowed_uids;
  daemons->launcher_flags_ = opts.launcher_flags;
  std::vector<std::string> launcher_argv = {Runfile("launcher/sandbox_launcherd"),
                                            "--socket=" + daemons->launcher_socket(),
                                            "--allowed-uids=" + opts.allowed_uids};
  for (const std::string& flag : opts.launcher_flags) launcher_argv.push_back(flag);
  std::vector<std::string> daemon_env;
  std::vector<std::string> broker_env = options.broker_env;
  if (options.measures_daemon_memory) {
    daemon_env = SmallAsanQuarantine();
    broker_env.insert(broker_env.end(), daemon_env.begin(), daemon_env.end());
  }
  daemons->daemon_env_ = daemon_env;
  daemons->launcher_pid_ = SpawnDaemon(launcher_argv, daemon_env, daemons->dir_ + "/launcher.log");
  std::vector<std::string> broker_argv = broker_prefix;
  for (const std::string& arg : {broker_binary, "--listen=" + daemons->broker_address(),
                                 "--launcher=unix:" + daemons->launcher_socket()}) {
    broker_argv.push_back(arg);
  }
  broker_argv.push_back("--runtime-dir=" + daemons->runtime_dir());
  if (!options.sandbox_flag.empty()) broker_argv.push_back("--sandbox=" + options.sandbox_flag);
  for (const std::string& flag : options.broker_flags) broker_argv.push_back(flag);
  daemons->broker_pid_ = SpawnDaemon(broker_argv, broker_env, daemons->dir_ + "/broker.log");
  absl::Status started =
      WaitUntilListening(daemons->launcher_socket(), daemons->launcher_pid_, "launcher");
  if (started.ok()) {
    started = WaitUntilListening(daemons->dir_ + "/broker.sock", daemons->broker_pid_, "broker");
  }
  if (!started.ok()) {
    return absl::Status(started.code(), absl::StrCat("daemons did not start: ", started.message(),
                                                     "; launcher log:\n", daemons->LauncherLog(),
                                                     "\nbroker log:\n", daemons->BrokerLog()));
  }
  return daemons;
}

Daemons::~Daemons() {
  StopDaemon(broker_pid_);
  StopDaemon(launcher_pid_);
  RunProgram({"rm", "-rf", dir_, runtime_dir(), work_root_});
}

int Daemons::StopLauncher() {
  const int status = StopDaemon(launcher_pid_);
  launcher_pid_ = -1;
  return status;
}

int Daemons::StopBroker() {
  const int status = StopDaemon(broker_pid_);
  broker_pid_ = -1;
  return status;
}

void Daemons::CrashBroker() {
  kill(broker_pid_, SIGKILL);
  waitpid(broker_pid_, nullptr, 0);
  ExpectNoSanitizerReport(broker_pid_);
  broker_pid_ = -1;
}

absl::Status Daemons::RestartLauncher() {
  StopDaemon(launcher_pid_);
  std::vector<std::string> argv = {Runfile("launcher/sandbox_launcherd"),
                                   "--socket=" + launcher_socket(),
                                   "--allowed-uids=" + allowed_uids_};
  for (const std::string& flag : launcher_flags_) argv.push_back(flag);
  launcher_pid_ = SpawnDaemon(argv, daemon_env_, dir_ + "/launcher2.log");
  absl::Status started = WaitUntilListening(launcher_socket(), launcher_pid_, "restarted launcher");
  if (!started.ok()) {
    return absl::Status(started.code(), absl::StrCat(started.message(), "; its log:\n",
                                                     ReadFile(dir_ + "/launcher2.log")));
  }
  return absl::OkStatus();
}

std::string Daemons::BrokerLog() const { return ReadFile(dir_ + "/broker.log"); }
std::string Daemons::LauncherLog() const { return ReadFile(dir_ + "/launcher.log"); }

std::string Daemons::MakeWorkdir() {
  std::string tmpl = work_root_ + "/tree.XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) return "";
  chmod(tmpl.c_str(), 0777);
  GiveToCaller(tmpl);
  return tmpl;
}

void Daemons::GiveToCaller(const std::string& path) {
  if (broker_uid_ != 0) {
    RunProgram({"chown", "-R", absl::StrCat(broker_uid_, ":", broker_gid_), path});
  }
}

std::unique_ptr<Daemons> MustStart(const DaemonOptions& options) {
  absl::StatusOr<std::unique_ptr<Daemons>> daemons = Daemons::Start(options);
  EXPECT_TRUE(daemons.ok()) << daemons.status();
  return daemons.ok() ? *std::move(daemons) : nullptr;
}

ProgramResult Daemons::Sandboxctl(const std::vector<std::string>& args, const std::string& cwd) {
  std::vector<std::string> argv = {Runfile("broker/sandboxctl"), "--broker=" + broker_address()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv, std::nullopt, "", cwd);
}

namespace {

std::string JsonStream(const std::string& json, const std::string& name) {
  const std::string key = absl::StrCat("\"", name, "\":\"");
  std::string out;
  for (size_t at = json.find(key); at != std::string::npos; at = json.find(key, at + 1)) {
    const size_t begin = at + key.size();
    std::string chunk;
    absl::Base64Unescape(json.substr(begin, json.find('"', begin) - begin), &chunk);
    out += chunk;
  }
  return out;
}

}  // namespace

std::string JsonStdout(const std::string& json) { return JsonStream(json, "stdout"); }
std::string JsonStderr(const std::string& json) { return JsonStream(json, "stderr"); }

int CountOf(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

bool AnyProcessMatches(const std::string& marker) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return false;
  bool found = false;
  const std::string self = std::to_string(getpid());
  while (dirent* entry = readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.empty() || !isdigit(name[0]) || name == self) continue;
    std::string cmdline = ReadFile("/proc/" + name + "/cmdline");
    absl::StrReplaceAll({{std::string(1, '\0'), " "}}, &cmdline);
    std::ifstream stat("/proc/" + name + "/stat");
    std::string line;
    std::getline(stat, line);
    const size_t paren = line.rfind(')');
    const bool zombie =
        paren != std::string::npos && line.size() > paren + 2 && line[paren + 2] == 'Z';
    if (!zombie && cmdline.find(marker) != std::string::npos) {
      found = true;
      break;
    }
  }
  closedir(proc);
  return found;
}

::testing::AssertionResult WaitForProcessMatching(const std::string& marker, double seconds) {
  return PollUntil([&] { return AnyProcessMatches(marker); }, absl::Seconds(seconds),
                   absl::StrCat("a process matching '", marker, "'"));
}

::testing::AssertionResult WaitNoProcessMatches(const std::string& marker, double seconds) {
  return PollUntil([&] { return !AnyProcessMatches(marker); }, absl::Seconds(seconds),
                   absl::StrCat("no process to match '", marker, "'"));
}

}  // namespace ccsandbox::testing
