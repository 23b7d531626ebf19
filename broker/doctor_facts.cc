#include "broker/doctor_facts.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <spawn.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/unique_fd.h"
#include "launcher/create_guard/landlock.h"
#include "launcher/create_guard/probe.h"

extern char** environ;

namespace ccsandbox::broker {
namespace {

constexpr uid_t kNobody = 65534;

std::string FindOnPath(const std::string& name, const char* path_env) {
  for (absl::string_view dir :
       absl::StrSplit(path_env == nullptr ? "" : path_env, ':', absl::SkipEmpty())) {
    const std::string candidate = absl::StrCat(dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// What `argv` prints on stdout and stderr (at most 64 KiB), or "" when it cannot be run.
std::string OutputOf(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return "";
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  write_end.Reset();
  if (spawned != 0) return "";
  std::string out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(read_end.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() < 65536) out.append(buffer, n);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return out;
}

// The first line of `output` that names a version ("socat version 1.7.4.4 on ..."), else its
// first line.
std::string VersionLine(const std::string& output) {
  std::vector<std::string> lines = absl::StrSplit(output, '\n', absl::SkipWhitespace());
  for (const std::string& line : lines) {
    if (absl::StrContains(line, " version ")) return std::string(absl::StripAsciiWhitespace(line));
  }
  return lines.empty() ? "" : std::string(absl::StripAsciiWhitespace(lines[0]));
}

ToolFacts FindTool(const std::string& name, const std::string& version_flag, const char* path_env) {
  ToolFacts tool;
  tool.path = FindOnPath(name, path_env);
  if (!tool.path.empty()) tool.version = VersionLine(OutputOf({tool.path, version_flag}));
  return tool;
}

std::string ReadTrimmed(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream text;
  text << in.rdbuf();
  return std::string(absl::StripAsciiWhitespace(text.str()));
}

// errno of unshare(CLONE_NEWUSER) in a child, as an unprivileged uid when this is root (bwrap
// runs as one): 0 when it worked.
int TryUserNamespace() {
  const pid_t child = fork();
  if (child < 0) return errno;
  if (child == 0) {
    if (geteuid() == 0 &&
        (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0)) {
      _exit(errno & 0xff);
    }
    _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : (errno & 0xff));
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : ECHILD;
}

UserNamespaceFacts UserNamespaces() {
  UserNamespaceFacts facts;
  for (const char* name : {"user.max_user_namespaces", "kernel.unprivileged_userns_clone",
                           "kernel.apparmor_restrict_unprivileged_userns"}) {
    std::string path = absl::StrCat("/proc/sys/", name);
    std::replace(path.begin(), path.end(), '.', '/');
    const std::string value = ReadTrimmed(path);
    if (!value.empty()) facts.sysctls.emplace_back(name, value);
  }
  facts.tried_as = absl::StrCat("uid ", geteuid() == 0 ? kNobody : geteuid());
  if (const int error = TryUserNamespace(); error != 0) facts.unshare_error = strerror(error);
  return facts;
}

SeccompFacts Seccomp() {
  SeccompFacts facts;
  utsname uts;
  if (uname(&uts) == 0) facts.kernel = uts.release;
  seccomp_notif_sizes sizes{};
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) {
    facts.notif_sizes_error = strerror(errno);
  } else {
    facts.notif_sizes =
        absl::StrCat("SECCOMP_GET_NOTIF_SIZES: notif ", sizes.seccomp_notif, ", resp ",
                     sizes.seccomp_notif_resp, ", data ", sizes.seccomp_data, " bytes");
  }
  facts.listener_missing = launcher::SeccompListenerMissing();
  return facts;
}

CgroupFacts Cgroups() {
  CgroupFacts facts;
  std::ifstream v2("/sys/fs/cgroup/cgroup.controllers");
  if (v2) {
    facts.version = 2;
    std::string name;
    while (v2 >> name) facts.controllers.push_back(name);
    return facts;
  }
  // /proc/cgroups: "subsys_name hierarchy num_cgroups enabled"; hierarchy 0 is unmounted.
  std::ifstream v1("/proc/cgroups");
  std::string line;
  while (std::getline(v1, line)) {
    if (absl::StartsWith(line, "#")) continue;
    std::vector<std::string> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (words.size() == 4 && words[1] != "0" && words[3] == "1") {
      facts.version = 1;
      facts.controllers.push_back(words[0]);
    }
  }
  return facts;
}

}  // namespace

void GatherHostDoctorFacts(const char* path_env, DoctorFacts& facts) {
  facts.bwrap = FindTool("bwrap", "--version", path_env);
  facts.socat = FindTool("socat", "-V", path_env);
  facts.userns = UserNamespaces();
  absl::StatusOr<int> abi = launcher::LandlockAbi();
  if (abi.ok()) {
    facts.landlock_abi = *abi;
  } else {
    facts.landlock_error = std::string(abi.status().message());
  }
  facts.seccomp = Seccomp();
  facts.cgroups = Cgroups();
}

}  // namespace ccsandbox::broker
