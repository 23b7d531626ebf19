#include "policy/violations/vocabulary.h"

#include <algorithm>
#include <string>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/types/span.h"
#include "policy/violations/parser.h"

namespace ccsandbox::policy::violations {
namespace {

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
constexpr absl::string_view kOpenVerbs[] = {"cannot open",   "can't open",     "could not open",
                                            "couldn't open", "unable to open", "failed to open",
                                            "open"};
constexpr absl::string_view kCopyVerbs[] = {"cannot copy", "could not copy", "unable to copy",
                                            "failed to copy"};
// tar's "X: Cannot change mode to rwsr-xr-x": the operand is the component before.
constexpr absl::string_view kWriteNamedBeforeVerbs[] = {"cannot change mode to",
                                                        "cannot change ownership to"};
constexpr absl::string_view kWriteDestVerbs[] = {
    "cannot move",      "cannot rename",   "failed to rename",
    "could not rename", "couldn't rename", "unable to rename",
    "rename",           "symlink",         "link"};
constexpr absl::string_view kWriteVerbs[] = {"cannot touch",
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
constexpr absl::string_view kMountVerbs[] = {"can't mount",  "cannot mount",  "failed to mount",
                                             "can't umount", "cannot umount", "failed to unmount"};
// Phrases that name a non-file call, and the call.
constexpr std::pair<absl::string_view, absl::string_view> kSyscallVerbs[] = {
    {"cannot change root directory", "chroot"},   {"cannot set niceness", "setpriority"},
    {"failed to set priority", "setpriority"},    {"cannot set date", "clock_settime"},
    {"cannot set hostname", "sethostname"},       {"cannot modify limit", "setrlimit"},
    {"reassociate to namespace", "setns"},        {"rtnetlink answers", "netlink"},
    {"creating new namespace failed", "unshare"},  // bwrap
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

constexpr absl::string_view kBashLikeShells[] = {"bash", "sh", "zsh", "ksh", "mksh", "ash"};

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

absl::string_view Lookup(absl::Span<const std::pair<absl::string_view, absl::string_view>> table,
                         absl::string_view key, absl::string_view fallback) {
  for (const auto& [name, action] : table) {
    if (name == key) return action;
  }
  return fallback;
}
}  // namespace

std::optional<Verb> MatchVerb(absl::string_view component) {
  const std::string lower = absl::AsciiStrToLower(component);
  std::optional<Verb> best;
  auto consider = [&](absl::string_view phrase, Rule rule, absl::string_view syscall) {
    if (best && best->phrase.size() >= phrase.size()) return;
    if (!absl::StartsWith(lower, phrase)) return;
    const absl::string_view after = absl::string_view(lower).substr(phrase.size());
    if (after.empty() || absl::string_view(" '\"`").find(after[0]) != absl::string_view::npos ||
        absl::StartsWith(after, "\xE2\x80")) {  // ‘ or “
      best = Verb{phrase, rule, syscall};
    }
  };
  const std::pair<Rule, absl::Span<const absl::string_view>> groups[] = {
      {Rule::kRead, kReadVerbs},           {Rule::kWrite, kWriteVerbs},
      {Rule::kWriteDest, kWriteDestVerbs}, {Rule::kExec, kExecVerbs},
      {Rule::kOpen, kOpenVerbs},           {Rule::kCopyDest, kCopyVerbs},
      {Rule::kMount, kMountVerbs},         {Rule::kWriteNamedBefore, kWriteNamedBeforeVerbs},
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

absl::string_view ProgramAction(absl::string_view program) {
  return Lookup(kPrograms, program, kActionFileAccess);
}

absl::string_view NodeSyscallAction(absl::string_view syscall) {
  return Lookup(kNodeSyscalls, syscall, kActionFileAccess);
}

bool IsBashLikeShell(absl::string_view program) {
  return absl::c_linear_search(kBashLikeShells, program);
}

}  // namespace ccsandbox::policy::violations
