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
#include "policy/violations/line_text.h"
#include "policy/violations/vocabulary.h"

namespace ccsandbox::policy {
namespace {

using violations::Errno;
using violations::IsDigits;
using violations::kMarkers;
using violations::MatchSyscall;
using violations::MatchVerb;
using violations::Quoted;
using violations::QuotedSpans;
using violations::Rule;
using violations::ScanQuoted;
using violations::SplitComponents;
using violations::Unquote;
using violations::Utf8SequenceLength;
using violations::Verb;

struct Marker {
  size_t begin = 0;
  size_t end = 0;
  Errno err = Errno::kEacces;
};

struct Finding {
  absl::string_view action;
  std::string target;
};

enum class Shell { kNone, kBashLike, kDash };

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

std::optional<Marker> FindMarker(absl::string_view line, absl::string_view lower) {
  std::optional<Marker> best;
  for (const auto& [text, err] : kMarkers) {
    for (size_t pos = lower.find(text); pos != absl::string_view::npos;
         pos = lower.find(text, pos + 1)) {
      if (best && pos >= best->begin) break;
      if (PrecededOk(line.substr(0, pos)) && FollowedOk(line.substr(pos + text.size()))) {
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
  for (absl::string_view suffix : {" for reading", " for writing", " for appending"}) {
    absl::ConsumeSuffix(&rest, suffix);
  }
  std::vector<absl::string_view> words = absl::StrSplit(rest, ' ', absl::SkipEmpty());
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

// Node: "Error: spawn /x EACCES", "Error: listen EACCES: permission denied
// 0.0.0.0:80".
std::optional<Finding> ParseNodeBareCode(absl::string_view line) {
  std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
  for (size_t i = 1; i < words.size(); ++i) {
    absl::string_view code = words[i];
    absl::ConsumeSuffix(&code, ":");
    if (code != "EACCES" && code != "EPERM") continue;
    const absl::string_view prev = words[i - 1];
    if (prev == "listen" || prev == "bind" || prev == "connect") {
      return Finding{prev == "connect" ? kActionNetworkOutbound : kActionNetworkBind,
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
    f.action = violations::NodeSyscallAction(syscall);
  }
  if (space == absl::string_view::npos) return f;
  absl::string_view args = after.substr(space + 1);
  // Node does not escape quotes inside paths: the path runs to the last quote.
  if (!absl::ConsumePrefix(&args, "'")) return f;
  if (const size_t arrow = args.find("' -> '"); arrow != absl::string_view::npos) {
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

// A perror(3)-style line taken apart: "prog: [line N: ][builtin: ]body: <marker>[: operand]".
struct PerrorLine {
  absl::string_view prog;               // the program's base name, "-bash" as "bash"
  absl::string_view first;              // the first component as printed
  std::vector<absl::string_view> rest;  // the components after the program (and line number)
  Shell shell = Shell::kNone;
  absl::string_view tail_operand;  // what followed the marker
};

// Empty when the line has no component before the marker.
std::optional<PerrorLine> SplitPerror(absl::string_view head, absl::string_view tail_operand) {
  std::vector<absl::string_view> comps = SplitComponents(head);
  // Java: `Cannot run program "/x": error=13, Permission denied`.
  if (comps.size() > 1 && absl::StartsWith(comps.back(), "error=")) {
    comps.pop_back();
  }
  if (comps.size() == 1 && comps[0].empty()) comps.clear();
  if (comps.empty()) return std::nullopt;

  PerrorLine line;
  line.tail_operand = tail_operand;
  line.first = comps[0];
  line.prog = comps[0];
  if (const size_t slash = line.prog.rfind('/'); slash != absl::string_view::npos) {
    line.prog.remove_prefix(slash + 1);
  }
  absl::ConsumePrefix(&line.prog, "-");  // login shells: "-bash"
  line.rest.assign(comps.begin() + 1, comps.end());
  std::vector<absl::string_view>& rest = line.rest;
  if (!rest.empty() && absl::StartsWith(rest[0], "line ") && IsDigits(rest[0].substr(5))) {
    line.shell = Shell::kBashLike;
    rest.erase(rest.begin());
  } else if (!rest.empty() && IsDigits(rest[0])) {
    line.shell = Shell::kDash;
    rest.erase(rest.begin());
  } else if (violations::IsBashLikeShell(line.prog)) {
    line.shell = Shell::kBashLike;
  }
  return line;
}

// Shell builtins (exec, cd, ., source, ulimit, kill) and kill(1).
std::optional<Finding> BuiltinFinding(const PerrorLine& line) {
  const std::vector<absl::string_view>& rest = line.rest;
  // The operand of the component after the builtin: a verb's operand, or the text itself.
  auto operand_after_builtin = [&]() -> std::string {
    if (rest.size() < 2) return Unquote(line.tail_operand);
    if (const std::optional<Verb> verb = MatchVerb(rest[1])) {
      return Operand(rest[1].substr(verb->phrase.size()), false);
    }
    return Unquote(rest[1]);
  };
  if (!rest.empty()) {
    const absl::string_view builtin = rest[0];
    if (builtin == "exec") return Finding{kActionProcessExec, operand_after_builtin()};
    if (line.shell != Shell::kNone) {
      if (builtin == "cd" || builtin == "pushd" || builtin == "." || builtin == "source") {
        return Finding{kActionFileRead, operand_after_builtin()};
      }
      if (builtin == "ulimit") return Finding{kActionSyscall, "setrlimit"};
      if (builtin == "kill") {
        std::string pid = operand_after_builtin();
        if (pid.size() >= 2 && pid.front() == '(' && pid.back() == ')') {
          pid = pid.substr(1, pid.size() - 2);
        }
        return Finding{kActionSignal, pid};
      }
    }
  }
  if (line.prog == "kill") {
    std::string pid = rest.empty() ? "" : Unquote(rest.back());
    absl::string_view p = pid;
    absl::ConsumePrefix(&p, "(");
    absl::ConsumeSuffix(&p, ")");
    return Finding{kActionSignal, std::string(p)};
  }
  return std::nullopt;
}

// A named system call, or the program named like one ("ptrace: Operation not permitted").
std::optional<Finding> SyscallFinding(const PerrorLine& line) {
  for (absl::string_view c : line.rest) {
    if (std::optional<absl::string_view> name = MatchSyscall(c)) {
      return Finding{kActionSyscall, std::string(*name)};
    }
  }
  if (line.rest.empty()) {
    if (std::optional<absl::string_view> name = MatchSyscall(line.first)) {
      return Finding{kActionSyscall, std::string(*name)};
    }
  }
  return std::nullopt;
}

// What a verb phrase of `rule` means for `target`; `body` is the text after the phrase.
Finding VerbRuleFinding(const Verb& verb, absl::string_view body, Shell shell, std::string target) {
  switch (verb.rule) {
    case Rule::kRead:
      return Finding{kActionFileRead, target};
    case Rule::kWrite:
    case Rule::kWriteDest:
    case Rule::kWriteNamedBefore:
      return Finding{kActionFileWrite, target};
    case Rule::kExec:
      return Finding{kActionProcessExec, target};
    case Rule::kCopyDest:
      return Finding{kActionFileAccess, target};
    case Rule::kMount:
      return Finding{kActionFileMount, target};
    case Rule::kSyscall:
      return Finding{kActionSyscall, std::string(verb.syscall)};
    case Rule::kOpen:
      break;
  }
  const std::string lower = absl::AsciiStrToLower(body);
  if (absl::StrContains(lower, " for writing") || absl::StrContains(lower, " for appending")) {
    return Finding{kActionFileWrite, target};
  }
  // dash's "cannot open X" is `< X` or `. X`.
  if (absl::StrContains(lower, " for reading") || shell != Shell::kNone) {
    return Finding{kActionFileRead, target};
  }
  return Finding{kActionFileAccess, target};
}

// The innermost (last) component with a verb phrase decides.
std::optional<Finding> VerbFinding(const PerrorLine& line) {
  std::vector<absl::string_view> searched = line.rest;
  const bool prog_is_body = line.rest.empty();  // Go: "open /x: permission denied"
  if (prog_is_body) searched.push_back(line.first);
  for (size_t i = searched.size(); i-- > 0;) {
    const std::optional<Verb> verb = MatchVerb(searched[i]);
    if (!verb) continue;
    const absl::string_view body = searched[i].substr(verb->phrase.size());
    const bool want_last = verb->rule == Rule::kWriteDest || verb->rule == Rule::kCopyDest;
    std::string target = verb->rule == Rule::kWriteNamedBefore ? "" : Operand(body, want_last);
    if (target.empty() && verb->rule == Rule::kWriteNamedBefore && i > 0) {
      target = Unquote(searched[i - 1]);
    }
    // Else the operand stands beside the verb: "sort: cannot read: X",
    // "tar: X: Cannot open".
    if (target.empty() && i + 1 < searched.size()) {
      target = Unquote(searched[i + 1]);
    }
    if (target.empty() && i > 0) target = Unquote(searched[i - 1]);
    if (target.empty()) target = Unquote(line.tail_operand);
    return VerbRuleFinding(*verb, body, line.shell, std::move(target));
  }
  return std::nullopt;
}

// No verb: "prog: X". Prose ("some step failed") is not an operand.
Finding NoVerbFinding(const PerrorLine& line) {
  auto operand = [](absl::string_view s) -> std::string {
    s = absl::StripAsciiWhitespace(s);
    if (std::optional<Quoted> q = ScanQuoted(s, 0); q && q->end == s.size()) return q->text;
    if (s.empty() || s[0] == '/' || s[0] == '.' || s[0] == '~' || !absl::StrContains(s, ' ')) {
      return std::string(s);
    }
    return "";
  };
  std::string target;
  if (!line.rest.empty()) {
    target = operand(line.rest.back());
  } else if (!line.tail_operand.empty()) {
    target = operand(line.tail_operand);
  } else if (absl::StartsWith(line.first, "/")) {
    target = operand(line.first);  // "/x (Permission denied)" with no program
  }
  absl::string_view action = violations::ProgramAction(line.prog);
  if (line.shell == Shell::kDash) {
    // dash words failed redirections as "cannot create X"/"cannot open X".
    action = kActionProcessExec;
  } else if (line.shell == Shell::kBashLike) {
    // bash prints the same line for `> X`, `< X`, `bash X` and exec of X.
    action = absl::StartsWith(target, "./") || absl::StartsWith(target, "../") ? kActionProcessExec
                                                                               : kActionFileAccess;
  }
  return Finding{action, std::move(target)};
}

// perror(3) style: "prog: [line N: ][builtin: ]body: <marker>[: operand]".
Finding ParsePerror(absl::string_view head, absl::string_view tail_operand) {
  const std::optional<PerrorLine> line = SplitPerror(head, tail_operand);
  if (!line) return Finding{kActionFileAccess, Unquote(tail_operand)};
  if (std::optional<Finding> f = BuiltinFinding(*line)) return *f;
  if (std::optional<Finding> f = SyscallFinding(*line)) return *f;
  if (std::optional<Finding> f = VerbFinding(*line)) return *f;
  return NoVerbFinding(*line);
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

std::vector<v1::SandboxViolation> ViolationScanner::Feed(absl::string_view chunk) {
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
