// libFuzzer target: the deny scan's reader of git configs (policy/plan/git_config_paths.h),
// whose findings become read-only paths: the repository's own config and the files it
// includes, which may be tracked files anyone can commit. Input: the config's text.
// Invariants: never crash; every path found is normalised and absolute; and, against git
// itself (`git config --file - --list`, run when the text has a '='), nothing git would read as
// core.hooksPath, include.path / includeIf.*.path, a program key or a '!' alias is missed
// (a missed one is a hooks directory or program the agent may then rewrite for the host's git
// to run). The first-word rule for programs is the reader's own and is applied to git's values.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/paths.h"
#include "base/unique_fd.h"
#include "policy/plan/git_config_paths.h"
#include "tests/fuzz/fuzz_check.h"

extern char** environ;

namespace {

constexpr char kWorktree[] = "/w/repo";
constexpr char kConfigDir[] = "/w/repo/.git";
constexpr char kHome[] = "/home/u";

// git's reading of `text`: (key, value) pairs, or nullopt when git refuses the file (and then
// refuses to run at all in that repository).
std::optional<std::vector<std::pair<std::string, std::string>>> GitReads(const std::string& text) {
  static const bool kNoSigpipe = (signal(SIGPIPE, SIG_IGN), true);  // git may close stdin
  (void)kNoSigpipe;
  int in[2], out[2];
  FUZZ_CHECK(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0);
  ccsandbox::UniqueFd in_r(in[0]), in_w(in[1]), out_r(out[0]), out_w(out[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_r.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.get(), 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  const char* argv[] = {"git", "config", "--file", "-", "--null", "--list", nullptr};
  const char* envp[] = {"PATH=/usr/bin:/bin",          "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1",
                        "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C",          nullptr};
  pid_t pid;
  FUZZ_CHECK(posix_spawn(&pid, "/usr/bin/git", &actions, nullptr, const_cast<char**>(argv),
                         const_cast<char**>(envp)) == 0);
  posix_spawn_file_actions_destroy(&actions);
  in_r.Reset();
  out_w.Reset();
  // git may stop reading early (a file it refuses): the rest is not needed.
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = write(in_w.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  in_w.Reset();
  std::string output;
  char buf[4096];
  for (ssize_t got;;) {
    got = read(out_r.get(), buf, sizeof(buf));
    if (got < 0 && errno == EINTR) continue;  // libFuzzer's timers interrupt us
    if (got <= 0) break;
    output.append(buf, got);
  }
  int status = 0;
  pid_t waited;
  do {
    waited = waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  FUZZ_CHECK(waited == pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> entries;
  for (absl::string_view entry : absl::StrSplit(output, '\0', absl::SkipEmpty())) {
    const size_t nl = entry.find('\n');
    entries.emplace_back(entry.substr(0, nl),
                         nl == absl::string_view::npos ? "" : entry.substr(nl + 1));
  }
  return entries;
}

// The reader's resolution of a value (git_config_paths.cc): "~/" is HOME, other "~" skipped, a
// relative value against `base`, "." and ".." folded, "/" and climbs above it skipped.
std::string Resolve(absl::string_view base, std::string v) {
  if (absl::StartsWith(v, "~/")) {
    v = absl::StrCat(kHome, v.substr(1));
  } else if (absl::StartsWith(v, "~")) {
    return "";
  }
  const std::string joined = v[0] == '/' ? v : absl::StrCat(base, "/", v);
  std::vector<absl::string_view> parts;
  for (absl::string_view part : absl::StrSplit(joined, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      if (parts.empty()) return "";
      parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  return parts.empty() ? "" : absl::StrCat("/", absl::StrJoin(parts, "/"));
}

bool Found(const std::vector<std::string>& list, const std::string& path) {
  return std::find(list.begin(), list.end(), path) != list.end();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Text files: a NUL byte ends what git reads of a line; configs here are cut at the first.
  std::string text(reinterpret_cast<const char*>(data), size);
  text.resize(std::min(text.size(), text.find('\0')));
  const ccsandbox::policy::GitConfigPaths found =
      ccsandbox::policy::GitConfigProgramPaths(text, kWorktree, kConfigDir, kHome);
  for (const auto* list : {&found.programs, &found.includes}) {
    for (const std::string& path : *list) {
      FUZZ_CHECK(ccsandbox::CheckNormalizedAbsolute("path", path).ok() && path != "/");
    }
  }
  if (text.find('=') == std::string::npos) return 0;
  const auto entries = GitReads(text);
  if (!entries.has_value()) return 0;

  static const std::set<std::string> kProgramKeys = {
      "fsmonitor", "sshcommand", "editor",  "pager",    "askpass",
      "clean",     "smudge",     "process", "textconv", "command",
      "external",  "driver",     "helper",  "program",  "packobjectshook"};
  for (const auto& [key, raw_value] : *entries) {
    // As git uses it: git already dropped its own unquoted spaces (" \t\r"); a path keeps any
    // other byte (a vertical tab included), and only a program's first word is split below.
    const std::string& value = raw_value;
    if (value.empty()) continue;
    if (key.find('.') == std::string::npos) continue;  // before any section: git uses none
    const std::string section = key.substr(0, key.find('.'));
    const std::string name = key.substr(key.rfind('.') + 1);
    std::string expected;
    bool include = false;
    if ((section == "include" || section == "includeif") && name == "path") {
      expected = Resolve(kConfigDir, value);
      include = true;
    } else if (key == "core.hookspath") {
      expected = Resolve(kWorktree, value);
    } else {
      const bool alias = section == "alias" && absl::StartsWith(value, "!");
      if (!alias && kProgramKeys.count(name) == 0) continue;
      std::string program(absl::StripAsciiWhitespace(alias ? value.substr(1) : value));
      program = program.substr(0, program.find_first_of(" \t"));
      if (program.find('/') == std::string::npos || absl::StrContains(program, "://")) continue;
      expected = Resolve(kWorktree, program);
    }
    if (expected.empty()) continue;
    const bool seen = Found(include ? found.includes : found.programs, expected);
    if (!seen) {
      std::fprintf(stderr, "git reads %s = '%s'; the reader missed %s\n", key.c_str(),
                   value.c_str(), expected.c_str());
    }
    FUZZ_CHECK(seen);
  }
  return 0;
}
