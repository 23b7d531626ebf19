// git and gh: the spec's commit, push, pull-request, review and tracker rules. What each git
// subcommand and gh command does is git_subcommands.h's and gh_subcommands.h's tables; this
// file owns what comes before the subcommand and the actions the tables hand back.
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "policy/command/gh_subcommands.h"
#include "policy/command/git_subcommands.h"
#include "policy/command/program_util.h"

namespace ccsandbox::policy::programs {
namespace {

// ---------------------------------------------------------------------------------------------
// git.

// Configuration keys whose value git runs as a command.
bool IsGitCommandKey(absl::string_view key_in) {
  std::string key = absl::AsciiStrToLower(key_in);
  if (absl::StartsWith(key, "alias.")) return true;
  if (OneOf(key, {"core.pager",
                  "core.sshcommand",
                  "core.editor",
                  "core.fsmonitor",
                  "core.askpass",
                  "core.hookspath",
                  "sequence.editor",
                  "diff.external",
                  "gpg.program",
                  "gpg.ssh.program",
                  "gpg.x509.program",
                  "credential.helper",
                  "uploadpack.packobjectshook",
                  "sendemail.sendmailcmd",
                  "sendemail.smtpserver",
                  "merge.tool",
                  "diff.tool",
                  "web.browser",
                  "protocol.ext.allow",
                  "remote.origin.uploadpack",
                  "remote.origin.receivepack",
                  "core.gitproxy",
                  "ssh.variant",
                  "gpg.format",
                  "instaweb.httpd"})) {
    return true;
  }
  for (absl::string_view suffix :
       {".textconv", ".command", ".cmd", ".clean", ".smudge", ".process", ".driver", ".helper",
        ".uploadpack", ".receivepack", ".proxy", ".program", ".path"}) {
    if (absl::EndsWith(key, suffix)) return true;
  }
  return absl::StartsWith(key, "pager.") || absl::StartsWith(key, "hook.");
}

// `-c key=value` before the subcommand.
void GitConfigOverride(const Call& c, const ShellWord& w) {
  const size_t eq = w.text.find('=');
  absl::string_view key = absl::string_view(w.text).substr(0, eq);
  if (!IsGitCommandKey(key)) return;
  if (eq == std::string::npos || !w.literal()) {
    c.Add(R::kDynamicCode, absl::StrCat("-c ", key, " sets a command only known at run time"));
    return;
  }
  std::string value = w.text.substr(eq + 1);
  std::string lower_key = absl::AsciiStrToLower(key);
  if (lower_key == "core.hookspath" || absl::EndsWith(lower_key, ".path")) {
    c.Add(R::kOpaqueProgram, absl::StrCat("-c ", key, " runs programs from ", Quote(value)));
    return;
  }
  if (lower_key == "protocol.ext.allow") {
    c.Add(R::kOpaqueProgram, "-c protocol.ext.allow lets ext:: URLs run commands");
    return;
  }
  if (absl::StartsWith(lower_key, "alias.")) {
    if (!absl::StartsWith(value, "!")) return;  // an alias for other git subcommands
    value = value.substr(1);
  }
  c.sink.RunCode(value, absl::StrCat("git -c ", key));
}

// git's options before the subcommand. Returns the subcommand's index, or argv.size() when the
// options decided (version, help, no subcommand, a subcommand only known at run time).
size_t GitGlobalOptions(const Call& c) {
  size_t i = 1;
  for (; i < c.argv.size(); ++i) {
    const ShellWord& w = c.argv[i];
    const std::string& t = w.text;
    if (!w.literal()) break;
    if (t == "-c" && i + 1 < c.argv.size()) {
      GitConfigOverride(c, c.argv[++i]);
      continue;
    }
    if (OneOf(t, {"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
                  "--attr-source", "--list-cmds"})) {
      ++i;
      continue;
    }
    if (t == "--config-env" || absl::StartsWith(t, "--config-env=")) {
      std::string spec = t == "--config-env" ? (i + 1 < c.argv.size() ? c.argv[++i].text : "")
                                             : t.substr(sizeof("--config-env=") - 1);
      absl::string_view key = absl::string_view(spec).substr(0, spec.find('='));
      if (IsGitCommandKey(key)) {
        c.Add(R::kDynamicCode, absl::StrCat("--config-env sets ", key,
                                            " from the environment, a command only "
                                            "known at run time"));
      }
      continue;
    }
    if (absl::StartsWith(t, "--exec-path=")) {
      c.Add(R::kOpaqueProgram, "--exec-path runs git subcommands from another directory");
      continue;
    }
    if (OneOf(t, {"--version", "-v", "--help", "-h", "--html-path", "--man-path", "--info-path",
                  "--exec-path"})) {
      c.Add(R::kReadOnly, "prints information about itself");
      return c.argv.size();
    }
    if (absl::StartsWith(t, "-")) continue;
    break;
  }
  if (i >= c.argv.size()) {
    c.Add(R::kReadOnly, "without a subcommand prints its usage");
    return c.argv.size();
  }
  if (!c.argv[i].literal()) {
    c.Add(R::kDynamicCode,
          absl::StrCat("runs a subcommand only known at run time (", c.argv[i].raw, ")"));
    return c.argv.size();
  }
  return i;
}

// Code git runs on this machine, carried in the arguments after the subcommand at argv[sub]:
// ext:: URLs, the transport programs (ls-remote --upload-pack='…' runs it), rebase --exec.
void GitArgumentCode(const Call& c, size_t sub) {
  const std::string name = absl::AsciiStrToLower(c.argv[sub].text);
  for (size_t k = sub + 1; k < c.argv.size(); ++k) {
    const std::string& t = c.argv[k].text;
    if (absl::StartsWith(t, "ext::")) {
      c.Add(R::kOpaqueProgram, "an ext:: URL makes git run a command");
    }
    for (absl::string_view opt : {"--upload-pack", "--receive-pack", "--exec"}) {
      if (t == opt && k + 1 < c.argv.size()) {
        c.Code(c.argv[k + 1], absl::StrCat("git ", opt));
      } else if (absl::StartsWith(t, opt) && t.size() > opt.size() && t[opt.size()] == '=') {
        ShellWord value = c.argv[k];
        value.text = t.substr(opt.size() + 1);
        c.Code(value, absl::StrCat("git ", opt));
      }
    }
    if (t == "-u" && k + 1 < c.argv.size() && name == "ls-remote") {
      c.Code(c.argv[k + 1], "git ls-remote -u");
    }
  }
  if (name == "rebase") {
    Args rest = c.argv.subspan(sub + 1);
    ArgScan s = ScanArgs(rest, 0, {"xsX", "exec onto strategy strategy-option"}, false);
    for (const Opt& o : s.opts) {
      if ((o.name == "-x" || o.name == "--exec") && o.has_value) {
        c.Code(OptWord(o), "git rebase --exec");
      }
    }
  }
}

void GitPush(const Call& c, Args rest) {
  ArgScan s = ScanArgs(rest, 0, {"o", "push-option repo receive-pack exec"}, false);
  if (s.HasAny({"-n", "--dry-run"})) {
    c.Add(R::kNetworkAccess, "push --dry-run contacts the remote without pushing");
    return;
  }
  std::vector<std::string> refs;
  if (s.HasAny({"--all", "--mirror", "--branches"}) || s.dynamic) refs.push_back("*");
  if (s.Has("--tags") || s.Has("--follow-tags")) refs.push_back("refs/tags/*");
  std::vector<const ShellWord*> ops = Operands(rest, s);
  for (size_t i = 1; i < ops.size(); ++i) {
    const ShellWord& spec = *ops[i];
    if (!spec.literal()) {
      refs.push_back("*");
      continue;
    }
    absl::string_view ref = spec.text;
    absl::ConsumePrefix(&ref, "+");
    const size_t colon = ref.find(':');
    if (colon != absl::string_view::npos) {
      absl::string_view dst = ref.substr(colon + 1);
      ref = dst.empty() ? ref.substr(0, colon) : dst;
    }
    refs.emplace_back(ref == "HEAD" ? "" : ref);
  }
  if (refs.empty()) refs.push_back("");  // the current branch's upstream
  std::vector<std::string> unique;
  for (std::string& r : refs) {
    if (std::find(unique.begin(), unique.end(), r) == unique.end()) unique.push_back(std::move(r));
  }
  refs = std::move(unique);
  std::vector<std::string> shown;
  for (const std::string& r : refs) shown.push_back(r.empty() ? "the current branch" : r);
  c.sink.AddPush(refs, absl::StrCat("git push updates ", absl::StrJoin(shown, ", "),
                                    " on a remote repository"));
}

void GitConfig(const Call& c, Args rest) {
  if (GitTestHolds({.has = "--get --get-all --get-regexp --get-urlmatch -l --list --get-color "
                           "--get-colorbool"},
                   rest)) {
    c.Add(R::kReadOnly, "config reads configuration");
    return;
  }
  const bool writes = GitTestHolds({.has = "--unset --unset-all --add --replace-all -e --edit "
                                           "--rename-section --remove-section"},
                                   rest);
  ArgScan s = ScanArgs(rest, 0, {"f", "file blob type default comment value"}, false);
  std::vector<const ShellWord*> ops = Operands(rest, s);
  if (!ops.empty() && OneOf(ops[0]->text, {"get", "list"})) {
    c.Add(R::kReadOnly, "config reads configuration");
    return;
  }
  if (!writes && ops.size() <= 1) {
    c.Add(R::kReadOnly, "config reads configuration");
    return;
  }
  size_t key = (!ops.empty() && OneOf(ops[0]->text, {"set", "unset"})) ? 1 : 0;
  if (key < ops.size() && IsGitCommandKey(ops[key]->text)) {
    c.Add(R::kOpaqueProgram,
          absl::StrCat("config sets ", ops[key]->text, ", a command later git invocations run"));
  }
  c.Add(R::kMutating, "config changes configuration");
}

// git submodule foreach CODE, or foreach COMMAND ARGS…: run in every submodule.
void GitSubmoduleForeach(const Call& c, Args rest, size_t verb) {
  size_t code = FirstOperand(rest, verb + 1);
  if (code >= rest.size()) return;
  if (code + 1 == rest.size()) {
    c.Code(rest[code], "git submodule foreach");
  } else {
    c.sink.RunArgv(rest.subspan(code));
  }
}

// git bisect run COMMAND ARGS…: checks out commits and runs the command on each.
void GitBisectRun(const Call& c, Args rest, size_t verb) {
  c.Add(R::kMutating, "bisect run checks out commits");
  if (verb + 1 < rest.size()) c.sink.RunArgv(rest.subspan(verb + 1));
}

void Git(const Call& c) {
  const size_t sub = GitGlobalOptions(c);
  if (sub >= c.argv.size()) return;
  GitArgumentCode(c, sub);
  Args rest = c.argv.subspan(sub + 1);
  GitDecision d = DecideGitSubcommand(absl::AsciiStrToLower(c.argv[sub].text), rest);
  switch (d.action) {
    case GitAction::kFinding:
      if (d.rule == R::kPushToRemote) {
        c.sink.AddPush({"*"}, absl::StrCat(c.name, " ", d.reason));
      } else {
        c.Add(d.rule, d.reason);
      }
      return;
    case GitAction::kPush:
      return GitPush(c, rest);
    case GitAction::kConfig:
      return GitConfig(c, rest);
    case GitAction::kSubmoduleForeach:
      return GitSubmoduleForeach(c, rest, d.verb);
    case GitAction::kBisectRun:
      return GitBisectRun(c, rest, d.verb);
  }
}

// ---------------------------------------------------------------------------------------------
// gh.

// gh's command and verb: the first two words that are not options. Returns false when gh's
// own options decided (--version, --help, no command, a command only known at run time).
bool GhCommandWords(const Call& c, std::string* command, std::string* verb) {
  std::vector<std::string> words;
  for (size_t i = 1; i < c.argv.size() && words.size() < 2; ++i) {
    const ShellWord& w = c.argv[i];
    if (!w.literal()) {
      c.Add(R::kDynamicCode, "runs a subcommand only known at run time");
      return false;
    }
    if (OneOf(w.text, {"-R", "--repo", "--hostname"})) {
      ++i;
      continue;
    }
    if (absl::StartsWith(w.text, "-")) {
      if (words.empty() && OneOf(w.text, {"--version", "--help", "-h"})) {
        c.Add(R::kReadOnly, "prints its version or help");
        return false;
      }
      continue;
    }
    words.push_back(w.text);
  }
  if (words.empty()) {
    c.Add(R::kReadOnly, "without a subcommand prints its usage");
    return false;
  }
  *command = words[0];
  *verb = words.size() > 1 ? words[1] : "";
  return true;
}

// gh api's request method: GET, or POST when it sends fields or a body, or what -X says.
std::string GhApiMethod(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 2,
                       {"XfFHpqtj",
                        "method field raw-field header preview jq "
                        "template input hostname cache"},
                       false);
  std::string method = "GET";
  if (s.HasAny({"-f", "-F", "--field", "--raw-field", "--input"})) method = "POST";
  for (const Opt& o : s.opts) {
    if ((o.name == "-X" || o.name == "--method") && o.has_value) {
      method = absl::AsciiStrToUpper(o.value);
    }
  }
  return method;
}

void Gh(const Call& c) {
  std::string command;
  std::string verb;
  if (!GhCommandWords(c, &command, &verb)) return;
  GhDecision d = DecideGhCommand(command, verb);
  if (d.action == GhAction::kApi) {
    const std::string method = GhApiMethod(c);
    if (method != "GET" && method != "HEAD") {
      return c.Add(R::kChangeRemoteState,
                   absl::StrCat("api sends a ", method, " request that can change GitHub"));
    }
  }
  c.Add(d.rule, d.reason);
}

}  // namespace

std::vector<ProgramGroup> GitPrograms() {
  return {
      // Source control and hosting.
      {"git", H(Git)},
      {"gh", H(Gh)},
  };
}

}  // namespace ccsandbox::policy::programs
