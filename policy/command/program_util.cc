#include "policy/command/program_util.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "policy/command/name_list.h"

namespace ccsandbox::policy::programs {

bool OneOf(absl::string_view s, std::initializer_list<absl::string_view> set) {
  for (absl::string_view x : set) {
    if (s == x) return true;
  }
  return false;
}

// `list` is space-separated.
bool InList(absl::string_view s, absl::string_view list) { return InNameList(s, list); }

// Options as getopt_long reads them. With `stop_at_operand` the scan ends at the first operand
// (a wrapper's command); otherwise options and operands may interleave until `--`.
ArgScan ScanArgs(Args argv, size_t start, const OptSpec& spec, bool stop_at_operand) {
  ArgScan scan;
  scan.stop = argv.size();
  size_t i = start;
  bool only_operands = false;
  while (i < argv.size()) {
    const ShellWord& w = argv[i];
    const std::string& t = w.text;
    const bool optionish =
        !only_operands && t.size() > 1 && (t[0] == '-' || (spec.plus_options && t[0] == '+'));
    if (!w.literal() && !only_operands && !optionish) scan.dynamic = true;
    if (only_operands || !optionish) {
      if (stop_at_operand) {
        scan.stop = i;
        return scan;
      }
      scan.operands.push_back(i);
      ++i;
      continue;
    }
    if (t == "--") {
      only_operands = true;
      ++i;
      if (stop_at_operand) {
        scan.stop = i;
        return scan;
      }
      continue;
    }
    if (absl::StartsWith(t, "--")) {
      Opt o;
      const size_t eq = t.find('=');
      o.name = t.substr(0, eq);
      if (eq != std::string::npos) {
        o.value = t.substr(eq + 1);
        o.has_value = true;
      } else if (InList(absl::string_view(o.name).substr(2), spec.long_values) &&
                 i + 1 < argv.size()) {
        o.value = argv[i + 1].text;
        o.value_word = &argv[i + 1];
        o.has_value = true;
        ++i;
      }
      scan.opts.push_back(std::move(o));
      ++i;
      continue;
    }
    // A cluster of short options: -rf, -uroot, -o pipefail.
    for (size_t j = 1; j < t.size(); ++j) {
      Opt o;
      o.name = std::string(1, t[0]) + t[j];
      if (spec.short_values.find(t[j]) != absl::string_view::npos) {
        o.has_value = true;
        if (j + 1 < t.size()) {
          o.value = t.substr(j + 1);
        } else if (i + 1 < argv.size()) {
          o.value = argv[i + 1].text;
          o.value_word = &argv[i + 1];
          ++i;
        } else {
          o.has_value = false;
        }
        scan.opts.push_back(std::move(o));
        break;
      }
      scan.opts.push_back(std::move(o));
    }
    ++i;
  }
  return scan;
}

// The operands of `scan` as words.
std::vector<const ShellWord*> Operands(Args argv, const ArgScan& scan) {
  std::vector<const ShellWord*> out;
  out.reserve(scan.operands.size());
  for (size_t i : scan.operands) out.push_back(&argv[i]);
  return out;
}

// The first word at or after `start` that is not an option ("" when none); `skip_values`
// names options whose value is a separate word.
size_t FirstOperand(Args argv, size_t start, absl::string_view skip_values) {
  for (size_t i = start; i < argv.size(); ++i) {
    const std::string& t = argv[i].text;
    if (t == "--") return i + 1 < argv.size() ? i + 1 : argv.size();
    if (t.size() > 1 && t[0] == '-') {
      if (t.find('=') == std::string::npos && InList(t, skip_values)) ++i;
      continue;
    }
    return i;
  }
  return argv.size();
}

bool AnyWord(Args argv, size_t start, std::initializer_list<absl::string_view> set) {
  for (size_t i = start; i < argv.size(); ++i) {
    if (OneOf(argv[i].text, set)) return true;
  }
  return false;
}

bool AnyWordStartsWith(Args argv, size_t start, absl::string_view prefix) {
  for (size_t i = start; i < argv.size(); ++i) {
    if (absl::StartsWith(argv[i].text, prefix)) return true;
  }
  return false;
}

std::string Quote(absl::string_view s) {
  constexpr size_t kMax = 60;
  if (s.size() > kMax) return absl::StrCat("'", s.substr(0, kMax), "…'");
  return absl::StrCat("'", s, "'");
}

// Lexical normalisation of an absolute or home-relative path word; `..` above the root stays at
// the root, `~/..` becomes /home.
NormalPath Normalize(const ShellWord& w) {
  NormalPath p;
  absl::string_view t = w.text;
  const uint32_t dynamic = w.flags & kWordDynamicFlags & ~kWordGlob;
  if ((w.flags & kWordTilde) && absl::StartsWith(t, "~")) {
    size_t slash = t.find('/');
    t = slash == absl::string_view::npos ? absl::string_view() : t.substr(slash);
    p.home = true;
  } else if (dynamic == kWordParameter) {
    bool matched = false;
    for (absl::string_view home : {"${HOME:?}", "${HOME}", "$HOME"}) {
      if (absl::ConsumePrefix(&t, home) && (t.empty() || t[0] == '/')) {
        matched = true;
        break;
      }
      t = w.text;
    }
    if (!matched || absl::StrContains(t, '$') || absl::StrContains(t, '`')) return p;
    p.home = true;
  } else if (dynamic != 0) {
    return p;
  }
  if (!p.home && !absl::StartsWith(t, "/")) return p;
  p.known = true;
  for (absl::string_view part : absl::StrSplit(t, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      if (!p.parts.empty()) {
        p.parts.pop_back();
      } else if (p.home) {
        p.home = false;
        p.parts = {"home"};
      }
      continue;
    }
    p.parts.emplace_back(part);
  }
  return p;
}

ShellWord RunTimeWord(absl::string_view what) {
  const std::string shown = absl::StrCat("<", what, ">");
  return ShellWord{shown, shown, kWordParameter};
}

ShellWord OptWord(const Opt& o) {
  if (o.value_word != nullptr) return *o.value_word;
  return ShellWord{o.value, o.value, 0};
}

const Opt* ArgScan::Find(absl::string_view name) const {
  const Opt* found = nullptr;
  for (const Opt& o : opts) {
    if (o.name == name) found = &o;
  }
  return found;
}

bool ArgScan::HasAny(std::initializer_list<absl::string_view> names) const {
  for (absl::string_view n : names) {
    if (Has(n)) return true;
  }
  return false;
}

void Call::Add(CommandRule rule, absl::string_view what) const {
  sink.Add(rule, absl::StrCat(name, " ", what));
}

void Call::AddWrite(const ShellWord& target, absl::string_view how) const {
  CommandRule rule;
  std::string reason;
  if (DescribeWrite(target, how, &rule, &reason)) sink.Add(rule, absl::StrCat(name, " ", reason));
}

void Call::Code(const ShellWord& code, absl::string_view how) const {
  if (code.literal()) {
    sink.RunCode(code.text, how);
  } else {
    sink.Add(R::kDynamicCode,
             absl::StrCat(how, " runs shell code only known at run time (", Quote(code.raw), ")"));
  }
}

void Call::Run(size_t from) const {
  if (from < argv.size()) sink.RunArgv(argv.subspan(from));
}

void Install(const Call& c, absl::string_view what) {
  c.Add(R::kInstallPackage, absl::StrCat(what, " installs packages"));
}

void Publish(const Call& c, absl::string_view what) {
  c.Add(R::kPublishPackage, absl::StrCat(what, " publishes a package"));
}

// The subcommand word: the first operand after the program, skipping `skip_values` options'
// values. Empty when there is none; "$" when it is only known at run time.
std::string SubWord(const Call& c, size_t* index, absl::string_view skip_values, size_t start) {
  size_t i = FirstOperand(c.argv, start, skip_values);
  if (index != nullptr) *index = i;
  if (i >= c.argv.size()) return "";
  if (!c.argv[i].literal()) return "$";
  return c.argv[i].text;
}

bool DynamicSub(const Call& c, absl::string_view sub) {
  if (sub != "$") return false;
  c.Add(R::kDynamicCode, "runs a subcommand only known at run time");
  return true;
}

bool IsVersionFlag(const Call& c) {
  return c.argv.size() == 2 &&
         OneOf(c.argv[1].text, {"--version", "-v", "-V", "version", "--help", "-h", "help"});
}

}  // namespace ccsandbox::policy::programs
