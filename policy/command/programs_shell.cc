// Privilege escalation, wrappers that run another command, shells, eval/source and shell
// builtins (see command_program_util.h).
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "policy/command/program_util.h"
#include "policy/plan/env_scrub.h"

namespace ccsandbox::policy::programs {
namespace {

// ---------------------------------------------------------------------------------------------
// Privilege escalation wrappers: denied in every mode, and their payload classified too so the
// decision names everything the line would do.

void Sudo(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1,
                       {"ugpCDrRtTUh",
                        "user group prompt close-from chdir role type other-user "
                        "host chroot command-timeout"},
                       /*stop_at_operand=*/true);
  c.Add(R::kPrivilegeEscalation, "runs a command as another user (root by default)");
  if (s.HasAny({"-e", "--edit"})) return;  // sudoedit: the operands are files
  c.Run(s.stop);
}

void Doas(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"uC", ""}, true);
  c.Add(R::kPrivilegeEscalation, "runs a command as another user (root by default)");
  c.Run(s.stop);
}

void Pkexec(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"", "user"}, true);
  c.Add(R::kPrivilegeEscalation, "runs a command as another user (root by default)");
  c.Run(s.stop);
}

void Run0(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1,
                       {"ugD",
                        "user group nice chdir setenv unit property description slice "
                        "slice-inherit background"},
                       true);
  c.Add(R::kPrivilegeEscalation, "runs a command as another user (root by default)");
  c.Run(s.stop);
}

void Su(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1,
                       {"csgGwC",
                        "command session-command shell group supp-group "
                        "whitelist-environment"},
                       false);
  c.Add(R::kPrivilegeEscalation, "switches to another user (root by default)");
  for (const Opt& o : s.opts) {
    if (!OneOf(o.name, {"-c", "--command", "--session-command"}) || !o.has_value) continue;
    ShellWord code;
    if (o.value_word != nullptr) {
      code = *o.value_word;
    } else {
      code.text = o.value;
    }
    c.Code(code, "su -c");
  }
}

void PrivilegeOnly(const Call& c) {
  c.Add(R::kPrivilegeEscalation, "changes users, groups, capabilities or who may become root");
}

void KernelModule(const Call& c) {
  if (c.name == "modprobe" &&
      AnyWord(c.argv, 1, {"-n", "--dry-run", "-c", "--showconfig", "--show-depends", "-D"})) {
    c.Add(R::kReadOnly, "shows module information");
    return;
  }
  c.Add(R::kPrivilegeEscalation, "loads or unloads kernel code");
}

// ---------------------------------------------------------------------------------------------
// Wrappers that run another command.

void Env(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"uCSP", "unset chdir split-string"}, true);
  size_t i = s.stop;
  for (; i < c.argv.size(); ++i) {
    const ShellWord& w = c.argv[i];
    const size_t eq = w.text.find('=');
    if (eq == std::string::npos || eq == 0) break;
    ClassifyAssignment(w, c.sink);
  }
  for (const Opt& o : s.opts) {
    if (o.name != "-S" && o.name != "--split-string") continue;
    ShellWord code;
    if (o.value_word != nullptr) {
      code = *o.value_word;
    } else {
      code.text = o.value;
    }
    bool literal = code.literal();
    std::string joined = code.text;
    for (size_t k = i; k < c.argv.size(); ++k) {
      literal = literal && c.argv[k].literal();
      absl::StrAppend(&joined, " ", c.argv[k].raw);
    }
    code.text = joined;
    if (!literal) code.flags |= kWordParameter;
    c.Code(code, "env -S");
    return;
  }
  if (i >= c.argv.size()) {
    c.Add(R::kReadOnly, "prints the environment");
    return;
  }
  c.Run(i);
}

void Nice(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"n", "adjustment"}, true);
  if (s.stop >= c.argv.size()) {
    c.Add(R::kReadOnly, "prints the scheduling priority");
    return;
  }
  c.Run(s.stop);
}

void Nohup(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {}, true);
  if (s.stop >= c.argv.size()) {
    c.Add(R::kReadOnly, "has no command");
    return;
  }
  c.Run(s.stop);
}

void Timeout(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"sk", "signal kill-after"}, true);
  c.Run(s.stop + 1);  // the duration, then the command
  if (s.stop + 1 >= c.argv.size()) c.Add(R::kReadOnly, "has no command");
}

void Xargs(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1,
                       {"aEdILnPs",
                        "arg-file delimiter eof replace max-lines max-args max-procs "
                        "max-chars process-slot-var"},
                       true);
  if (s.stop >= c.argv.size()) {
    c.Add(R::kReadOnly, "echoes its input");
    return;
  }
  // The command gets more arguments from standard input: `echo push | xargs git` pushes.
  std::vector<ShellWord> payload(c.argv.begin() + s.stop, c.argv.end());
  payload.push_back(RunTimeWord("arguments read by xargs"));
  c.sink.RunArgv(payload);
}

void CommandBuiltin(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {}, true);
  if (s.HasAny({"-v", "-V"})) {
    c.Add(R::kReadOnly, "looks a command up without running it");
    return;
  }
  if (s.stop >= c.argv.size()) {
    c.Add(R::kReadOnly, "has no command");
    return;
  }
  c.Run(s.stop);
}

void Builtin(const Call& c) {
  if (c.argv.size() < 2) {
    c.Add(R::kReadOnly, "has no command");
    return;
  }
  c.Run(1);
}

void Exec(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"a", ""}, true);
  if (s.stop >= c.argv.size()) {
    c.Add(R::kReadOnly, "only changes file descriptors");
    return;
  }
  c.Run(s.stop);
}

void TimeProgram(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"of", "output format"}, true);
  if (const Opt* o = s.Find("-o"); o != nullptr && o->has_value) {
    ShellWord w = OptWord(*o);
    c.AddWrite(w, "writes its report to");
  }
  if (const Opt* o = s.Find("--output"); o != nullptr && o->has_value) {
    ShellWord w = OptWord(*o);
    c.AddWrite(w, "writes its report to");
  }
  if (s.stop >= c.argv.size()) {
    c.Add(R::kReadOnly, "has no command");
    return;
  }
  c.Run(s.stop);
}

void Stdbuf(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"ioe", "input output error"}, true);
  c.Run(s.stop);
  if (s.stop >= c.argv.size()) c.Add(R::kReadOnly, "has no command");
}

void Ionice(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"cn", "class classdata"}, true);
  if (s.HasAny({"-p", "-P", "-u", "--pid", "--pgid", "--uid"})) {
    c.Add(R::kMutating, "changes the I/O priority of running processes");
    return;
  }
  if (s.stop >= c.argv.size()) {
    c.Add(R::kReadOnly, "prints the I/O priority");
    return;
  }
  c.Run(s.stop);
}

void Chrt(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"TPD", "sched-runtime sched-period sched-deadline"}, true);
  if (s.HasAny({"-m", "--max"})) {
    c.Add(R::kReadOnly, "prints scheduling limits");
    return;
  }
  if (s.HasAny({"-p", "--pid"})) {
    c.Add(R::kMutating, "changes the scheduling of a running process");
    return;
  }
  c.Run(s.stop + 1);  // the priority, then the command
  if (s.stop + 1 >= c.argv.size()) c.Add(R::kReadOnly, "has no command");
}

void Setsid(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {}, true);
  c.Run(s.stop);
  if (s.stop >= c.argv.size()) c.Add(R::kReadOnly, "has no command");
}

void Taskset(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {}, true);
  if (s.HasAny({"-p", "--pid"})) {
    c.Add(R::kMutating, "changes the CPU affinity of a running process");
    return;
  }
  c.Run(s.stop + 1);  // the mask, then the command
  if (s.stop + 1 >= c.argv.size()) c.Add(R::kReadOnly, "has no command");
}

// flock [options] file|fd [-c code | command args…]: options may also follow the file.
void Flock(const Call& c) {
  constexpr OptSpec kSpec{"EwcC", "conflict-exit-code timeout wait command"};
  ArgScan s = ScanArgs(c.argv, 1, kSpec, true);
  ArgScan after = ScanArgs(c.argv, s.stop + 1, kSpec, true);
  for (const ArgScan* scan : {&s, &after}) {
    for (const Opt& o : scan->opts) {
      if (!OneOf(o.name, {"-c", "-C", "--command"}) || !o.has_value) continue;
      ShellWord code = OptWord(o);
      c.Code(code, "flock -c");
      return;
    }
  }
  if (after.stop >= c.argv.size()) {
    c.Add(R::kReadOnly, "only takes a lock");
    return;
  }
  c.Run(after.stop);
}

void Watch(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"nq", "interval equexit"}, true);
  if (s.stop >= c.argv.size()) {
    c.Add(R::kReadOnly, "has no command");
    return;
  }
  if (s.HasAny({"-x", "--exec"})) {
    c.Run(s.stop);
    return;
  }
  // watch joins its arguments and hands them to `sh -c`.
  ShellWord code;
  bool literal = true;
  std::vector<absl::string_view> parts;
  for (size_t i = s.stop; i < c.argv.size(); ++i) {
    literal = literal && c.argv[i].literal();
    parts.push_back(c.argv[i].text);
  }
  code.text = absl::StrJoin(parts, " ");
  code.raw = code.text;
  if (!literal) code.flags |= kWordParameter;
  c.Code(code, "watch");
}

void Tracer(const Call& c) {
  ArgScan s = ScanArgs(
      c.argv, 1, c.name == "strace" ? OptSpec{"eoOpPsuEaIbSX", ""} : OptSpec{"eoupsnaAFDxXw", ""},
      true);
  if (s.HasAny({"-p", "--attach"})) {
    c.Add(R::kMutating, "attaches to a running process");
  }
  if (const Opt* o = s.Find("-o"); o != nullptr && o->has_value) {
    ShellWord w = OptWord(*o);
    c.AddWrite(w, "writes its trace to");
  }
  if (s.stop >= c.argv.size()) {
    if (!s.HasAny({"-p", "--attach"})) c.Add(R::kReadOnly, "has no command");
    return;
  }
  c.Run(s.stop);
}

// Wrappers whose own options never take a separate value: the first operand is the command.
void SimpleWrapper(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {}, true);
  if (s.stop >= c.argv.size()) {
    c.Add(R::kReadOnly, "has no command");
    return;
  }
  c.Run(s.stop);
}

void Valgrind(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {}, true);  // valgrind's options are all --opt=value
  c.Run(s.stop);
  if (s.stop >= c.argv.size()) c.Add(R::kReadOnly, "has no command");
}

void Busybox(const Call& c) {
  if (c.argv.size() < 2 || absl::StartsWith(c.argv[1].text, "-")) {
    c.Add(R::kReadOnly, "lists its applets");
    return;
  }
  c.Run(1);
}

void Script(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1,
                       {"cEIOBTt",
                        "command echo log-in log-out log-io log-timing "
                        "logging-format timing"},
                       false);
  for (const Opt& o : s.opts) {
    if ((o.name == "-c" || o.name == "--command") && o.has_value) {
      ShellWord code = OptWord(o);
      c.Code(code, "script -c");
      return;
    }
  }
  c.Add(R::kOpaqueProgram, "starts an interactive shell");
}

// ---------------------------------------------------------------------------------------------
// Shells, eval, source.

// A shell reading its program from standard input: a here-document, a here-string, a file or
// a pipe.
void ShellFromStdin(const Call& c, absl::string_view shell) {
  const ShellCommand& cmd = c.sink.Command();
  for (const ShellRedirect& r : cmd.redirects) {
    if (r.fd > 0) continue;
    if (r.op == RedirectOp::kHereDoc) {
      const bool dynamic =
          r.heredoc_expands && r.heredoc_body.find_first_of("$`") != std::string::npos;
      ShellWord code{r.heredoc_body, r.heredoc_body, dynamic ? kWordParameter : 0u};
      c.Code(code, absl::StrCat(shell, " <<here-document"));
      return;
    }
    if (r.op == RedirectOp::kHereString) {
      c.Code(r.target, absl::StrCat(shell, " <<<"));
      return;
    }
    if (r.op == RedirectOp::kRead) {
      if (r.target.flags & kWordProcessSubst) {
        c.Add(R::kDynamicCode, "runs code produced by another command (< <( … ))");
      } else {
        c.Add(R::kOpaqueProgram, absl::StrCat("runs the script file ", Quote(r.target.text)));
      }
      return;
    }
  }
  if (cmd.in_pipeline) {
    c.Add(R::kDynamicCode, "runs code piped in from another command (as in curl … | sh)");
    return;
  }
  c.Add(R::kOpaqueProgram, "starts a shell that reads commands from standard input");
}

void Shell(const Call& c) {
  // Other shell languages cannot be read with a POSIX shell parser.
  if (OneOf(c.name, {"fish", "pwsh", "powershell", "nu", "xonsh", "elvish", "csh", "tcsh", "cmd",
                     "cmd.exe", "rc", "es"})) {
    if (c.argv.size() > 1 && OneOf(c.argv[1].text, {"--version", "-v", "-version"})) {
      c.Add(R::kReadOnly, "prints its version");
      return;
    }
    c.Add(R::kOpaqueProgram, "runs code in a shell language this policy does not parse");
    return;
  }
  bool code_mode = false;
  bool stdin_mode = false;
  size_t i = 1;
  for (; i < c.argv.size(); ++i) {
    const ShellWord& w = c.argv[i];
    const std::string& t = w.text;
    if (!w.literal()) break;
    if (t == "--" || t == "-") {
      ++i;
      break;
    }
    if (t.size() < 2 || (t[0] != '-' && t[0] != '+')) break;
    if (absl::StartsWith(t, "--")) {
      if (OneOf(t, {"--version", "--help"})) {
        c.Add(R::kReadOnly, "prints its version or help");
        return;
      }
      if (OneOf(t, {"--rcfile", "--init-file"})) {
        c.Add(R::kOpaqueProgram, absl::StrCat("runs the start-up file given to ", t));
        ++i;
      }
      continue;
    }
    bool takes_value = false;
    for (size_t j = 1; j < t.size(); ++j) {
      if (t[j] == 'c') code_mode = true;
      if (t[j] == 's') stdin_mode = true;
      if (t[j] == 'o' || t[j] == 'O') takes_value = true;
    }
    if (takes_value) ++i;
  }
  if (code_mode) {
    if (i >= c.argv.size()) {
      c.Add(R::kDynamicCode, "-c gets its code only at run time (as in xargs sh -c)");
      return;
    }
    c.Code(c.argv[i], absl::StrCat(c.name, " -c"));
    return;
  }
  if (!stdin_mode && i < c.argv.size()) {
    const ShellWord& script = c.argv[i];
    if (script.flags & kWordProcessSubst) {
      c.Add(R::kDynamicCode, "runs code produced by another command (<( … ))");
    } else {
      c.Add(R::kOpaqueProgram, absl::StrCat("runs the script file ", Quote(script.text)));
    }
    return;
  }
  ShellFromStdin(c, c.name);
}

void Eval(const Call& c) {
  if (c.argv.size() < 2) {
    c.Add(R::kReadOnly, "has nothing to run");
    return;
  }
  ShellWord code;
  std::vector<absl::string_view> parts;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    if (!c.argv[i].literal()) code.flags |= kWordParameter;
    parts.push_back(c.argv[i].text);
  }
  code.text = absl::StrJoin(parts, " ");
  code.raw = code.text;
  c.Code(code, "eval");
}

void Source(const Call& c) {
  if (c.argv.size() < 2) {
    c.Add(R::kReadOnly, "has no file to run");
    return;
  }
  const ShellWord& file = c.argv[1];
  if ((file.flags & kWordProcessSubst) || file.text == "/dev/stdin" || file.text == "-") {
    c.Add(R::kDynamicCode, "runs code produced by another command");
    return;
  }
  c.Add(R::kOpaqueProgram,
        absl::StrCat("runs the script file ", Quote(file.text), " in the current shell"));
}

void Trap(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {}, true);
  if (s.HasAny({"-l", "-p"}) || s.stop >= c.argv.size()) {
    c.Add(R::kReadOnly, "lists traps");
    return;
  }
  const ShellWord& action = c.argv[s.stop];
  if (action.text == "-" || action.text.empty()) {
    c.Add(R::kReadOnly, "resets traps");
    return;
  }
  if (s.stop + 1 >= c.argv.size()) {
    c.Add(R::kReadOnly, "resets a trap");
    return;
  }
  c.Code(action, "trap");
}

void Alias(const Call& c) {
  bool any = false;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const ShellWord& w = c.argv[i];
    const size_t eq = w.text.find('=');
    if (eq == std::string::npos) continue;
    any = true;
    ShellWord value = w;
    value.text = w.text.substr(eq + 1);
    c.Code(value, "alias");
  }
  if (!any) c.Add(R::kReadOnly, "lists aliases");
}

void Declare(const Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const ShellWord& w = c.argv[i];
    if (absl::StartsWith(w.text, "-") || absl::StartsWith(w.text, "+")) continue;
    ClassifyAssignment(w, c.sink);
  }
  c.Add(R::kReadOnly, "sets shell variables");
}

void Enable(const Call& c) {
  if (AnyWordStartsWith(c.argv, 1, "-f")) {
    c.Add(R::kOpaqueProgram, "loads a builtin from a shared object");
    return;
  }
  c.Add(R::kReadOnly, "enables or disables shell builtins");
}

}  // namespace

std::vector<ProgramGroup> ShellPrograms() {
  return {
      // Privilege escalation.
      {"sudo", H(Sudo)},
      {"doas", H(Doas)},
      {"pkexec", H(Pkexec)},
      {"run0", H(Run0)},
      {"su runuser", H(Su)},
      {"sudoedit ksu pfexec", S(R::kPrivilegeEscalation, "runs as another user")},
      {"setcap setpriv capsh visudo vipw vigr usermod useradd adduser userdel deluser groupadd "
       "groupmod groupdel addgroup delgroup gpasswd passwd chpasswd chage chsh chfn newgrp sg",
       H(PrivilegeOnly)},
      {"insmod rmmod modprobe", H(KernelModule)},
      // Wrappers.
      {"env", H(Env)},
      {"nice", H(Nice)},
      {"nohup", H(Nohup)},
      {"timeout gtimeout", H(Timeout)},
      {"xargs", H(Xargs)},
      {"command", H(CommandBuiltin)},
      {"builtin", H(Builtin)},
      {"exec", H(Exec)},
      {"time", H(TimeProgram)},
      {"stdbuf", H(Stdbuf)},
      {"ionice", H(Ionice)},
      {"chrt", H(Chrt)},
      {"setsid", H(Setsid)},
      {"taskset", H(Taskset)},
      {"flock", H(Flock)},
      {"watch", H(Watch)},
      {"strace ltrace", H(Tracer)},
      {"unbuffer eatmydata fakeroot catchsegv torsocks proxychains proxychains4 tsocks "
       "nocache chronic firejail coproc",
       H(SimpleWrapper)},
      {"valgrind", H(Valgrind)},
      {"busybox toybox", H(Busybox)},
      {"script", H(Script)},
      // Shells and shell builtins.
      {"sh bash rbash zsh dash ksh mksh lksh oksh ash yash posh fish pwsh powershell nu xonsh "
       "elvish csh tcsh cmd rc",
       H(Shell)},
      {"eval", H(Eval)},
      {"source .", H(Source)},
      {"trap", H(Trap)},
      {"alias", H(Alias)},
      {"export declare typeset local readonly", H(Declare)},
      {"enable", H(Enable)},
      {"fc", S(R::kOpaqueProgram, "re-runs commands from the history")},
      {"hash", H([](const Call& c) {
         if (AnyWordStartsWith(c.argv, 1, "-p")) {
           return c.Add(R::kOpaqueProgram, "-p maps a command name to another program");
         }
         c.Add(R::kReadOnly, "only reads the command cache");
       })},
      {"cd pushd popd dirs shift wait jobs read let return exit break continue umask ulimit "
       "type help history unset set shopt getopts caller compgen complete compopt unalias times "
       "logout bind mapfile readarray disown fg bg suspend",
       S(R::kReadOnly, "only changes or reads shell state")},
      {"true false : test [ [[ (( echo printf", S(R::kReadOnly, "only prints or tests values")},
  };
}

}  // namespace ccsandbox::policy::programs
