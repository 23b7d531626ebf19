// Shells (sh -c, bash <<here-document, script files, other shell languages), eval, source,
// trap, alias, declare and the other shell builtins.
#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policy/command/program_util.h"

namespace ccsandbox::policy::programs {
namespace {

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
