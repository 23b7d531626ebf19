// Wrappers that run another command (env, nice, timeout, xargs, exec, time, flock, watch,
// strace, …): their own options skipped, their payload classified as the command it is.
#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policy/command/program_util.h"

namespace ccsandbox::policy::programs {
namespace {

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

}  // namespace

std::vector<ProgramGroup> WrapperPrograms() {
  return {
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
  };
}

}  // namespace ccsandbox::policy::programs
