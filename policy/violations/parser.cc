#include "policy/violations/parser.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"

namespace ccsandbox::policy {
namespace {

enum class Errno { kEacces, kEperm, kErofs };

struct Marker {
  size_t begin = 0;
  size_t end = 0;
  Errno err = Errno::kEacces;
};

struct Finding {
  absl::string_view action;
  std::string target;
};

// strerror(3) texts, lower-cased; Node and Go print them lower-case.
constexpr std::array<std::pair<absl::string_view, Errno>, 3> kMarkers = {{
    {"permission denied", Errno::kEacces},
    {"operation not permitted", Errno::kEperm},
    {"read-only file system", Errno::kErofs},
}};

// How a verb phrase's operand and action are read.
enum class Rule {
  kRead,
  kWrite,
  kWriteDest,  // "cannot move A to B": B is created
  kExec,
  kOpen,      // " for reading"/" for writing" decide; a shell's is a read
  kCopyDest,  // reads A or writes B: undeterminable, B reported
  kMount,
  kSyscall,  // a non-file call, named by the phrase
};

// Verb phrases, lower-case, matched at the start of a message component as
// whole words; the longest match wins ("cannot open directory" over "cannot
// open"). Bare words are Go's PathError ("open /x: permission denied") and
// tar's ("X: Cannot mkdir").
constexpr absl::string_view kReadVerbs[] = {"cannot open directory",
                                            "cannot read directory",
                                            "can't open file",
                                            "cannot access",
                                            "cannot read",
                                            "cannot stat",
                                            "cannot statx",
                                            "cannot lstat",
                                            "cannot fstat",
                                            "cannot list",
                                            "cannot chdir",
                                            "cannot cd",
                                            "cannot change to",
                                            "cannot change directory",
                                            "cannot get current directory",
                                            "cannot savedir",
                                            "cannot readlink",
                                            "cannot search",
                                            "failed to get attributes of",
                                            "failed to access",
                                            "failed to read",
                                            "failed to stat",
                                            "failed to list",
                                            "could not read",
                                            "could not access",
                                            "could not stat",
                                            "couldn't read",
                                            "unable to access",
                                            "unable to read",
                                            "unable to stat",
                                            "error reading",
                                            "read error",
                                            "fts_read",
                                            "opendir",
                                            "stat",
                                            "lstat",
                                            "readdirent",
                                            "chdir"};
constexpr absl::string_view kExecVerbs[] = {"cannot execute",
                                            "cannot exec",
                                            "cannot run",
                                            "cannot invoke",
                                            "failed to execute",
                                            "failed to exec",
                                            "failed to run command",
                                            "failed to run",
                                            "could not execute",
                                            "could not exec",
                                            "couldn't execute",
                                            "couldn't exec",
                                            "unable to execute",
                                            "unable to run",
                                            "execvp",
                                            "execve",
                                            "execv",
                                            "fork/exec"};
constexpr absl::string_view kOpenVerbs[] = {
    "cannot open",   "can't open",     "could not open",
    "couldn't open", "unable to open", "failed to open",
    "open"};
constexpr absl::string_view kCopyVerbs[] = {"cannot copy", "could not copy",
                                            "unable to copy", "failed to copy"};
constexpr absl::string_view kWriteDestVerbs[] = {
    "cannot move",      "cannot rename",   "failed to rename",
    "could not rename", "couldn't rename", "unable to rename",
    "rename",           "symlink",         "link"};
constexpr absl::string_view kWriteVerbs[] = {
    "cannot touch",
    "cannot create",
    "cannot remove",
    "cannot delete",
    "cannot unlink",
    "cannot overwrite",
    "cannot make",
    "cannot mkdir",
    "cannot link",
    "cannot symlink",
    "cannot hard link",
    "cannot write",
    "cannot truncate",
    "cannot lock",
    "cannot chmod",
    "cannot chown",
    "cannot utime",
    "cannot set times",
    "cannot change mode",
    "cannot change ownership",
    "cannot change permissions",
    "cannot backup",
    "cannot update",
    "failed to create",
    "failed to remove",
    "failed to unlink",
    "failed to delete",
    "failed to write",
    "failed to truncate",
    "failed to set",
    "failed to update",
    "failed to change",
    "failed to preserve",
    "failed to make",
    "could not create",
    "could not remove",
    "could not delete",
    "could not unlink",
    "could not write",
    "could not lock",
    "could not truncate",
    "could not set",
    "could not make",
    "could not mkdir",
    "could not update",
    "couldn't create",
    "couldn't write",
    "couldn't remove",
    "couldn't edit",
    "couldn't open temporary file",  // sed -i
    "unable to create",
    "unable to write",
    "unable to remove",
    "unable to unlink",
    "unable to delete",
    "unable to lock",
    "unable to truncate",
    "unable to append",
    "unable to mkdir",
    "changing permissions of",
    "changing ownership of",
    "changing group of",
    "changing security context of",
    "setting permissions for",
    "setting times of",
    "preserving permissions for",
    "preserving times for",
    "preserving ownership for",
    "clearing permissions for",
    "error writing",
    "error creating",
    "error removing",
    "write error",
    "mkdir",
    "remove",
    "unlinkat",
    "chmod",
    "chown",
    "lchown",
    "truncate"};
constexpr absl::string_view kMountVerbs[] = {
    "can't mount",  "cannot mount",  "failed to mount",
    "can't umount", "cannot umount", "failed to unmount"};
// Phrases that name a non-file call, and the call.
constexpr std::pair<absl::string_view, absl::string_view> kSyscallVerbs[] = {
    {"cannot change root directory", "chroot"},
    {"cannot set niceness", "setpriority"},
    {"failed to set priority", "setpriority"},
    {"cannot set date", "clock_settime"},
    {"cannot set hostname", "sethostname"},
    {"cannot modify limit", "setrlimit"},
    {"reassociate to namespace", "setns"},
    {"rtnetlink answers", "netlink"},
    {"creating new namespace failed", "unshare"},  // bwrap
};

struct Verb {
  absl::string_view phrase;
  Rule rule;
  absl::string_view syscall;
};

// System calls whose name is a whole component: "ptrace", "ptrace(PTRACE_SEIZE,
// 1)", "unshare failed".
constexpr absl::string_view kSyscalls[] = {"ptrace",
                                           "unshare",
                                           "setns",
                                           "mount",
                                           "umount",
                                           "umount2",
                                           "pivot_root",
                                           "chroot",
                                           "setuid",
                                           "setgid",
                                           "setgroups",
                                           "setresuid",
                                           "setresgid",
                                           "capset",
                                           "prctl",
                                           "seccomp",
                                           "personality",
                                           "socket",
                                           "bind",
                                           "connect",
                                           "ioctl",
                                           "clone",
                                           "clone3",
                                           "keyctl",
                                           "add_key",
                                           "bpf",
                                           "perf_event_open",
                                           "reboot",
                                           "sethostname",
                                           "setdomainname",
                                           "settimeofday",
                                           "clock_settime",
                                           "init_module",
                                           "finit_module",
                                           "kexec_load",
                                           "swapon",
                                           "swapoff",
                                           "iopl",
                                           "ioperm",
                                           "setpriority",
                                           "setrlimit",
                                           "prlimit",
                                           "userfaultfd",
                                           "process_vm_readv",
                                           "process_vm_writev",
                                           "io_uring_setup",
                                           "quotactl",
                                           "acct",
                                           "open_by_handle_at"};

// Programs whose "prog: X: error" has no verb: what they do to X.
constexpr std::pair<absl::string_view, absl::string_view> kPrograms[] = {
    {"cat", kActionFileRead},        {"tac", kActionFileRead},
    {"head", kActionFileRead},       {"tail", kActionFileRead},
    {"less", kActionFileRead},       {"more", kActionFileRead},
    {"grep", kActionFileRead},       {"egrep", kActionFileRead},
    {"fgrep", kActionFileRead},      {"rg", kActionFileRead},
    {"wc", kActionFileRead},         {"sort", kActionFileRead},
    {"uniq", kActionFileRead},       {"cut", kActionFileRead},
    {"paste", kActionFileRead},      {"nl", kActionFileRead},
    {"od", kActionFileRead},         {"xxd", kActionFileRead},
    {"hexdump", kActionFileRead},    {"strings", kActionFileRead},
    {"base64", kActionFileRead},     {"md5sum", kActionFileRead},
    {"sha1sum", kActionFileRead},    {"sha256sum", kActionFileRead},
    {"sha512sum", kActionFileRead},  {"b2sum", kActionFileRead},
    {"cksum", kActionFileRead},      {"file", kActionFileRead},
    {"diff", kActionFileRead},       {"cmp", kActionFileRead},
    {"find", kActionFileRead},       {"du", kActionFileRead},
    {"ls", kActionFileRead},         {"stat", kActionFileRead},
    {"awk", kActionFileRead},        {"gawk", kActionFileRead},
    {"mawk", kActionFileRead},       {"jq", kActionFileRead},
    {"tee", kActionFileWrite},       {"mknod", kActionFileWrite},
    {"mkfifo", kActionFileWrite},    {"touch", kActionFileWrite},
    {"shred", kActionFileWrite},     {"sponge", kActionFileWrite},
    {"env", kActionProcessExec},     {"xargs", kActionProcessExec},
    {"nohup", kActionProcessExec},   {"timeout", kActionProcessExec},
    {"nice", kActionProcessExec},    {"ionice", kActionProcessExec},
    {"stdbuf", kActionProcessExec},  {"setsid", kActionProcessExec},
    {"setpriv", kActionProcessExec}, {"runuser", kActionProcessExec},
    {"sudo", kActionProcessExec},    {"doas", kActionProcessExec},
    {"flock", kActionProcessExec},   {"watch", kActionProcessExec},
    {"time", kActionProcessExec},    {"taskset", kActionProcessExec},
    {"strace", kActionProcessExec},  {"ltrace", kActionProcessExec},
    {"bwrap", kActionProcessExec},   {"make", kActionProcessExec},
    {"mount", kActionFileMount},     {"umount", kActionFileMount},
    {"kill", kActionSignal}};

constexpr absl::string_view kBashLikeShells[] = {"bash", "sh",   "zsh",
                                                 "ksh",  "mksh", "ash"};

// Node's fs syscalls (the word after "EACCES: permission denied, ").
constexpr std::pair<absl::string_view, absl::string_view> kNodeSyscalls[] = {
    {"mkdir", kActionFileWrite},       {"rmdir", kActionFileWrite},
    {"unlink", kActionFileWrite},      {"rename", kActionFileWrite},
    {"link", kActionFileWrite},        {"symlink", kActionFileWrite},
    {"chmod", kActionFileWrite},       {"fchmod", kActionFileWrite},
    {"lchmod", kActionFileWrite},      {"chown", kActionFileWrite},
    {"fchown", kActionFileWrite},      {"lchown", kActionFileWrite},
    {"utime", kActionFileWrite},       {"futime", kActionFileWrite},
    {"lutime", kActionFileWrite},      {"truncate", kActionFileWrite},
    {"ftruncate", kActionFileWrite},   {"mkdtemp", kActionFileWrite},
    {"write", kActionFileWrite},       {"rm", kActionFileWrite},
    {"scandir", kActionFileRead},      {"opendir", kActionFileRead},
    {"readdir", kActionFileRead},      {"readlink", kActionFileRead},
    {"stat", kActionFileRead},         {"lstat", kActionFileRead},
    {"fstat", kActionFileRead},        {"statfs", kActionFileRead},
    {"realpath", kActionFileRead},     {"chdir", kActionFileRead},
    {"read", kActionFileRead},         {"watch", kActionFileRead},
    {"uv_cwd", kActionFileRead},       {"spawn", kActionProcessExec},
    {"spawnSync", kActionProcessExec},
    // open, access, copyfile, cp: read and write look the same.
};

absl::string_view Lookup(
    absl::Span<const std::pair<absl::string_view, absl::string_view>> table,
    absl::string_view key, absl::string_view fallback) {
  for (const auto& [name, action] : table) {
    if (name == key) return action;
  }
  return fallback;
}

bool IsDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), absl::ascii_isdigit);
}

struct QuotePair {
  absl::string_view open;
  absl::string_view close;
  bool escapes;  // backslash escapes (coreutils locale quoting, Python repr)
};

constexpr QuotePair kQuotes[] = {
    {"'", "'", true},
    {"\"", "\"", true},
    {"`", "`", false},                        // Rust and cargo
    {"\xE2\x80\x98", "\xE2\x80\x99", false},  // ‘…’ coreutils in UTF-8 locales
    {"\xE2\x80\x9C", "\xE2\x80\x9D", false},  // “…”
};

// A quote opens only at the start of a word, so "couldn't" has no quoted span.
bool AtWordStart(absl::string_view s, size_t pos) {
  if (pos == 0) return true;
  return absl::string_view(" ([{=,:").find(s[pos - 1]) !=
         absl::string_view::npos;
}

struct Quoted {
  std::string text;
  size_t end = 0;  // one past the closing quote
};

// The quoted span starting at `pos`, unescaped; shell-escape continuations
// ('it'\''s') join.
std::optional<Quoted> ScanQuoted(absl::string_view s, size_t pos) {
  if (!AtWordStart(s, pos)) return std::nullopt;
  for (const QuotePair& q : kQuotes) {
    if (s.substr(pos, q.open.size()) != q.open) continue;
    Quoted out;
    size_t i = pos + q.open.size();
    while (true) {
      if (i >= s.size()) return std::nullopt;
      if (q.escapes && s[i] == '\\' && i + 1 < s.size()) {
        const char next = s[i + 1];
        if (next == '\'' || next == '"' || next == '\\') {
          out.text.push_back(next);
        } else {
          absl::StrAppend(&out.text, s.substr(i, 2));
        }
        i += 2;
        continue;
      }
      if (s.substr(i, q.close.size()) == q.close) {
        i += q.close.size();
        if (q.open == "'" && absl::StartsWith(s.substr(i), "\\'")) {
          out.text.push_back('\'');
          i += 2;
          if (i < s.size() && s[i] == '\'') {
            ++i;
            continue;
          }
        }
        out.end = i;
        return out;
      }
      out.text.push_back(s[i]);
      ++i;
    }
  }
  return std::nullopt;
}

std::vector<std::string> QuotedSpans(absl::string_view s) {
  std::vector<std::string> spans;
  for (size_t i = 0; i < s.size();) {
    if (std::optional<Quoted> q = ScanQuoted(s, i)) {
      spans.push_back(std::move(q->text));
      i = q->end;
    } else {
      ++i;
    }
  }
  return spans;
}

// `s` without its quotes when it is exactly one quoted span.
std::string Unquote(absl::string_view s) {
  s = absl::StripAsciiWhitespace(s);
  if (std::optional<Quoted> q = ScanQuoted(s, 0); q && q->end == s.size())
    return q->text;
  return std::string(s);
}

// Splits "a: 'b: c': d" at ": " outside quoted spans.
std::vector<absl::string_view> SplitComponents(absl::string_view s) {
  std::vector<absl::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i < s.size();) {
    if (std::optional<Quoted> q = ScanQuoted(s, i)) {
      i = q->end;
    } else if (s.substr(i, 2) == ": ") {
      parts.push_back(s.substr(start, i - start));
      i += 2;
      start = i;
    } else {
      ++i;
    }
  }
  parts.push_back(s.substr(start));
  for (absl::string_view& p : parts) p = absl::StripAsciiWhitespace(p);
  return parts;
}

bool PrecededOk(absl::string_view before) {
  if (absl::StripAsciiWhitespace(before).empty()) return true;
  for (absl::string_view sep : {": ", "] ", " - ", "(", "message: \""}) {
    if (absl::EndsWith(before, sep)) return true;
  }
  // Java: `Cannot run program "/x": error=13, Permission denied`.
  if (absl::ConsumeSuffix(&before, ", ")) {
    const size_t eq = before.rfind("error=");
    return eq != absl::string_view::npos && IsDigits(before.substr(eq + 6));
  }
  return false;
}

bool FollowedOk(absl::string_view after) {
  after = absl::StripTrailingAsciiWhitespace(after);
  if (after.empty()) return true;
  // ssh: "Permission denied, please try again." (and "(publickey)." below).
  if (absl::StartsWith(after, ", please try again")) return false;
  if (absl::StartsWith(after, " (os error")) return true;  // Rust
  return absl::string_view(".:,)\"").find(after[0]) != absl::string_view::npos;
}

std::optional<Marker> FindMarker(absl::string_view line,
                                 absl::string_view lower) {
  std::optional<Marker> best;
  for (const auto& [text, err] : kMarkers) {
    for (size_t pos = lower.find(text); pos != absl::string_view::npos;
         pos = lower.find(text, pos + 1)) {
      if (best && pos >= best->begin) break;
      if (PrecededOk(line.substr(0, pos)) &&
          FollowedOk(line.substr(pos + text.size()))) {
        best = Marker{pos, pos + text.size(), err};
        break;
      }
    }
  }
  return best;
}

// The operand in the text after a verb phrase ("regular file '/x'", "config
// file .git/config").
std::string Operand(absl::string_view rest, bool want_last) {
  std::vector<std::string> quoted = QuotedSpans(rest);
  if (!quoted.empty()) return want_last ? quoted.back() : quoted.front();
  rest = absl::StripAsciiWhitespace(rest);
  for (absl::string_view suffix :
       {" for reading", " for writing", " for appending"}) {
    absl::ConsumeSuffix(&rest, suffix);
  }
  std::vector<absl::string_view> words =
      absl::StrSplit(rest, ' ', absl::SkipEmpty());
  if (words.empty()) return "";
  if (want_last) return std::string(words.back());
  // The path runs from its first word to the end, so paths with spaces survive.
  for (absl::string_view w : words) {
    if (w[0] == '/' || w[0] == '.' || w[0] == '~') {
      return std::string(rest.substr(w.data() - rest.data()));
    }
  }
  return std::string(words.back());
}

// The longest verb phrase `component` starts with (case-insensitive, whole
// words).
std::optional<Verb> MatchVerb(absl::string_view component) {
  const std::string lower = absl::AsciiStrToLower(component);
  std::optional<Verb> best;
  auto consider = [&](absl::string_view phrase, Rule rule,
                      absl::string_view syscall) {
    if (best && best->phrase.size() >= phrase.size()) return;
    if (!absl::StartsWith(lower, phrase)) return;
    const absl::string_view after =
        absl::string_view(lower).substr(phrase.size());
    if (after.empty() ||
        absl::string_view(" '\"`").find(after[0]) != absl::string_view::npos ||
        absl::StartsWith(after, "\xE2\x80")) {  // ‘ or “
      best = Verb{phrase, rule, syscall};
    }
  };
  const std::pair<Rule, absl::Span<const absl::string_view>> groups[] = {
      {Rule::kRead, kReadVerbs},           {Rule::kWrite, kWriteVerbs},
      {Rule::kWriteDest, kWriteDestVerbs}, {Rule::kExec, kExecVerbs},
      {Rule::kOpen, kOpenVerbs},           {Rule::kCopyDest, kCopyVerbs},
      {Rule::kMount, kMountVerbs},
  };
  for (const auto& [rule, phrases] : groups) {
    for (absl::string_view phrase : phrases) consider(phrase, rule, {});
  }
  for (const auto& [phrase, syscall] : kSyscallVerbs) {
    consider(phrase, Rule::kSyscall, syscall);
  }
  return best;
}

std::optional<absl::string_view> MatchSyscall(absl::string_view component) {
  for (absl::string_view name : kSyscalls) {
    if (!absl::StartsWith(component, name)) continue;
    const absl::string_view after = component.substr(name.size());
    if (after.empty() || after[0] == '(' || after == " failed") return name;
  }
  return std::nullopt;
}

enum class Shell { kNone, kBashLike, kDash };

// Node: "Error: spawn /x EACCES", "Error: listen EACCES: permission denied
// 0.0.0.0:80".
std::optional<Finding> ParseNodeBareCode(absl::string_view line) {
  std::vector<absl::string_view> words =
      absl::StrSplit(line, ' ', absl::SkipEmpty());
  for (size_t i = 1; i < words.size(); ++i) {
    absl::string_view code = words[i];
    absl::ConsumeSuffix(&code, ":");
    if (code != "EACCES" && code != "EPERM") continue;
    const absl::string_view prev = words[i - 1];
    if (prev == "listen" || prev == "bind" || prev == "connect") {
      return Finding{
          prev == "connect" ? kActionNetworkOutbound : kActionNetworkBind,
          i + 1 < words.size() ? std::string(words.back()) : ""};
    }
    for (size_t j = i - 1; j-- > 0;) {
      if (words[j] != "spawn" && words[j] != "spawnSync") continue;
      const char* begin = words[j + 1].data();
      const char* end = words[i - 1].data() + words[i - 1].size();
      return Finding{kActionProcessExec, std::string(begin, end - begin)};
    }
  }
  return std::nullopt;
}

// Node fs: "EACCES: permission denied, open '/x'", "..., rename '/a' -> '/b'".
Finding ParseNodeFs(absl::string_view after, Errno err) {
  Finding f{err == Errno::kErofs ? kActionFileWrite : kActionFileAccess, ""};
  if (!absl::ConsumePrefix(&after, ", ")) return f;
  const size_t space = after.find(' ');
  const absl::string_view syscall = after.substr(0, space);
  if (err != Errno::kErofs) {
    f.action = Lookup(kNodeSyscalls, syscall, kActionFileAccess);
  }
  if (space == absl::string_view::npos) return f;
  absl::string_view args = after.substr(space + 1);
  // Node does not escape quotes inside paths: the path runs to the last quote.
  if (!absl::ConsumePrefix(&args, "'")) return f;
  if (const size_t arrow = args.find("' -> '");
      arrow != absl::string_view::npos) {
    args.remove_prefix(arrow + 6);
  }
  const size_t close = args.rfind('\'');
  f.target = std::string(args.substr(0, close));
  return f;
}

// Python: "[Errno 13] Permission denied: '/x'", "...: '/a' -> '/b'".
Finding ParsePython(absl::string_view after, Errno err) {
  Finding f{err == Errno::kErofs ? kActionFileWrite : kActionFileAccess, ""};
  std::vector<std::string> paths = QuotedSpans(after);
  if (paths.size() >= 2) f.action = kActionFileWrite;  // rename, link, symlink
  if (!paths.empty()) f.target = paths.back();
  return f;
}

bool IsPythonErrno(absl::string_view before) {
  if (!absl::ConsumeSuffix(&before, "] ")) return false;
  const size_t open = before.rfind("[Errno ");
  return open != absl::string_view::npos && IsDigits(before.substr(open + 7));
}

// perror(3) style: "prog: [line N: ][builtin: ]body: <marker>[: operand]".
Finding ParsePerror(absl::string_view head, absl::string_view tail_operand) {
  std::vector<absl::string_view> comps = SplitComponents(head);
  // Java: `Cannot run program "/x": error=13, Permission denied`.
  if (comps.size() > 1 && absl::StartsWith(comps.back(), "error=")) {
    comps.pop_back();
  }
  if (comps.size() == 1 && comps[0].empty()) comps.clear();
  if (comps.empty()) return Finding{kActionFileAccess, Unquote(tail_operand)};

  absl::string_view prog = comps[0];
  if (const size_t slash = prog.rfind('/'); slash != absl::string_view::npos) {
    prog.remove_prefix(slash + 1);
  }
  absl::ConsumePrefix(&prog, "-");  // login shells: "-bash"
  std::vector<absl::string_view> rest(comps.begin() + 1, comps.end());

  Shell shell = Shell::kNone;
  if (!rest.empty() && absl::StartsWith(rest[0], "line ") &&
      IsDigits(rest[0].substr(5))) {
    shell = Shell::kBashLike;
    rest.erase(rest.begin());
  } else if (!rest.empty() && IsDigits(rest[0])) {
    shell = Shell::kDash;
    rest.erase(rest.begin());
  } else if (absl::c_linear_search(kBashLikeShells, prog)) {
    shell = Shell::kBashLike;
  }

  // The operand of the component after index `i`: a verb's operand, or the text
  // itself.
  auto operand_after = [&](size_t i) -> std::string {
    if (i + 1 >= rest.size()) return Unquote(tail_operand);
    if (const std::optional<Verb> verb = MatchVerb(rest[i + 1])) {
      return Operand(rest[i + 1].substr(verb->phrase.size()), false);
    }
    return Unquote(rest[i + 1]);
  };

  // Shell builtins and kill(1).
  if (!rest.empty()) {
    const absl::string_view builtin = rest[0];
    if (builtin == "exec") return Finding{kActionProcessExec, operand_after(0)};
    if (shell != Shell::kNone) {
      if (builtin == "cd" || builtin == "pushd" || builtin == "." ||
          builtin == "source") {
        return Finding{kActionFileRead, operand_after(0)};
      }
      if (builtin == "ulimit") return Finding{kActionSyscall, "setrlimit"};
      if (builtin == "kill") {
        std::string pid = operand_after(0);
        if (pid.size() >= 2 && pid.front() == '(' && pid.back() == ')') {
          pid = pid.substr(1, pid.size() - 2);
        }
        return Finding{kActionSignal, pid};
      }
    }
  }
  if (prog == "kill") {
    std::string pid = rest.empty() ? "" : Unquote(rest.back());
    absl::string_view p = pid;
    absl::ConsumePrefix(&p, "(");
    absl::ConsumeSuffix(&p, ")");
    return Finding{kActionSignal, std::string(p)};
  }

  // A named system call, or the program named like one ("ptrace: Operation not
  // permitted").
  for (absl::string_view c : rest) {
    if (std::optional<absl::string_view> name = MatchSyscall(c)) {
      return Finding{kActionSyscall, std::string(*name)};
    }
  }
  if (rest.empty()) {
    if (std::optional<absl::string_view> name = MatchSyscall(comps[0])) {
      return Finding{kActionSyscall, std::string(*name)};
    }
  }

  // The innermost (last) component with a verb phrase decides.
  std::vector<absl::string_view> searched = rest;
  const bool prog_is_body = rest.empty();  // Go: "open /x: permission denied"
  if (prog_is_body) searched.push_back(comps[0]);
  for (size_t i = searched.size(); i-- > 0;) {
    const std::optional<Verb> verb = MatchVerb(searched[i]);
    if (!verb) continue;
    const absl::string_view body = searched[i].substr(verb->phrase.size());
    const bool want_last =
        verb->rule == Rule::kWriteDest || verb->rule == Rule::kCopyDest;
    std::string target = Operand(body, want_last);
    // Else the operand stands beside the verb: "sort: cannot read: X",
    // "tar: X: Cannot open".
    if (target.empty() && i + 1 < searched.size()) {
      target = Unquote(searched[i + 1]);
    }
    if (target.empty() && i > 0) target = Unquote(searched[i - 1]);
    if (target.empty()) target = Unquote(tail_operand);
    switch (verb->rule) {
      case Rule::kRead:
        return Finding{kActionFileRead, target};
      case Rule::kWrite:
      case Rule::kWriteDest:
        return Finding{kActionFileWrite, target};
      case Rule::kExec:
        return Finding{kActionProcessExec, target};
      case Rule::kCopyDest:
        return Finding{kActionFileAccess, target};
      case Rule::kMount:
        return Finding{kActionFileMount, target};
      case Rule::kSyscall:
        return Finding{kActionSyscall, std::string(verb->syscall)};
      case Rule::kOpen: {
        const std::string lower = absl::AsciiStrToLower(body);
        if (absl::StrContains(lower, " for writing") ||
            absl::StrContains(lower, " for appending")) {
          return Finding{kActionFileWrite, target};
        }
        // dash's "cannot open X" is `< X` or `. X`.
        if (absl::StrContains(lower, " for reading") || shell != Shell::kNone) {
          return Finding{kActionFileRead, target};
        }
        return Finding{kActionFileAccess, target};
      }
    }
  }

  // No verb: "prog: X". Prose ("some step failed") is not an operand.
  auto operand = [](absl::string_view s) -> std::string {
    s = absl::StripAsciiWhitespace(s);
    if (std::optional<Quoted> q = ScanQuoted(s, 0); q && q->end == s.size())
      return q->text;
    if (s.empty() || s[0] == '/' || s[0] == '.' || s[0] == '~' ||
        !absl::StrContains(s, ' ')) {
      return std::string(s);
    }
    return "";
  };
  std::string target;
  if (!rest.empty()) {
    target = operand(rest.back());
  } else if (!tail_operand.empty()) {
    target = operand(tail_operand);
  } else if (absl::StartsWith(comps[0], "/")) {
    target = operand(comps[0]);  // "/x (Permission denied)" with no program
  }
  absl::string_view action = Lookup(kPrograms, prog, kActionFileAccess);
  if (shell == Shell::kDash) {
    // dash words failed redirections as "cannot create X"/"cannot open X".
    action = kActionProcessExec;
  } else if (shell == Shell::kBashLike) {
    // bash prints the same line for `> X`, `< X`, `bash X` and exec of X.
    action = absl::StartsWith(target, "./") || absl::StartsWith(target, "../")
                 ? kActionProcessExec
                 : kActionFileAccess;
  }
  return Finding{action, std::move(target)};
}

// Length of the valid UTF-8 sequence at s[i], or 0.
size_t Utf8SequenceLength(absl::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len;
  unsigned int min;
  unsigned int cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    len = 2, min = 0x80, cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, min = 0x800, cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

}  // namespace

std::string SanitizeUtf8(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (const size_t len = Utf8SequenceLength(s, i); len > 0) {
      absl::StrAppend(&out, s.substr(i, len));
      i += len;
    } else {
      absl::StrAppend(&out, "\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}


std::optional<v1::SandboxViolation> ParseViolationLine(absl::string_view line) {
  if (!absl::ConsumeSuffix(&line, "\n")) absl::ConsumeSuffix(&line, "\r");
  absl::ConsumeSuffix(&line, "\r");

  std::optional<Finding> finding = ParseNodeBareCode(line);
  if (!finding) {
    const std::string lower = absl::AsciiStrToLower(line);
    const std::optional<Marker> marker = FindMarker(line, lower);
    if (!marker) return std::nullopt;
    absl::string_view before = line.substr(0, marker->begin);
    const absl::string_view after = line.substr(marker->end);
    for (absl::string_view code : {"EACCES: ", "EPERM: ", "EROFS: "}) {
      if (absl::EndsWith(before, code)) {
        finding = ParseNodeFs(after, marker->err);
      }
    }
    if (!finding && IsPythonErrno(before)) {
      finding = ParsePython(after, marker->err);
      if (finding->target.empty()) {
        // "python3: can't open file 'X': [Errno 13] Permission denied".
        absl::string_view prefix = before.substr(0, before.rfind("[Errno "));
        prefix = absl::StripTrailingAsciiWhitespace(prefix);
        absl::ConsumeSuffix(&prefix, ":");
        if (!prefix.empty()) finding = ParsePerror(prefix, "");
      }
    }
    if (!finding && absl::EndsWith(before, "message: \"")) {
      // Rust's Debug form: Os { code: 13, kind: .., message: "Permission
      // denied" }
      finding = Finding{kActionFileAccess, ""};
    }
    if (!finding) {
      absl::string_view head = absl::StripTrailingAsciiWhitespace(before);
      for (absl::string_view sep : {":", "]", " -", "("}) {
        if (absl::ConsumeSuffix(&head, sep)) break;
      }
      absl::string_view tail_operand;
      // zsh: "zsh: permission denied: ./x".
      if (absl::StartsWith(after, ": ")) tail_operand = after.substr(2);
      finding = ParsePerror(head, tail_operand);
    }
    if (marker->err == Errno::kErofs) finding->action = kActionFileWrite;
  }

  v1::SandboxViolation violation;
  violation.set_action(std::string(finding->action));
  violation.set_target(SanitizeUtf8(finding->target));
  violation.set_raw(SanitizeUtf8(line));
  return violation;
}

void ViolationScanner::EmitPending(std::vector<v1::SandboxViolation>& out) {
  if (std::optional<v1::SandboxViolation> v = ParseViolationLine(pending_)) {
    out.push_back(*std::move(v));
  }
  pending_.clear();
}

std::vector<v1::SandboxViolation> ViolationScanner::Feed(
    absl::string_view chunk) {
  std::vector<v1::SandboxViolation> out;
  while (!chunk.empty()) {
    const size_t eol = chunk.find_first_of("\r\n");
    const absl::string_view piece = chunk.substr(0, eol);
    if (!discarding_) {
      const size_t room = kMaxViolationLineBytes - pending_.size();
      if (piece.size() > room) {
        absl::StrAppend(&pending_, piece.substr(0, room));
        // Cut on a character boundary: drop an incomplete last sequence.
        size_t lead = pending_.size();
        for (int k = 0; k < 4 && lead > 0; ++k) {
          const auto byte = static_cast<unsigned char>(pending_[--lead]);
          if ((byte & 0xC0) != 0x80) break;
        }
        if (static_cast<unsigned char>(pending_[lead]) >= 0xC0 &&
            Utf8SequenceLength(pending_, lead) == 0) {
          pending_.resize(lead);
        }
        EmitPending(out);
        discarding_ = true;
      } else {
        absl::StrAppend(&pending_, piece);
      }
    }
    if (eol == absl::string_view::npos) break;
    if (!discarding_) EmitPending(out);
    discarding_ = false;
    chunk.remove_prefix(eol + 1);
  }
  return out;
}

std::vector<v1::SandboxViolation> ViolationScanner::Finish() {
  std::vector<v1::SandboxViolation> out;
  if (!discarding_ && !pending_.empty()) EmitPending(out);
  pending_.clear();
  discarding_ = false;
  return out;
}

}  // namespace ccsandbox::policy
