// libFuzzer target: the name rules the create guard applies to every name a sandboxed command
// creates (hostile) and the deny scan to every file of a bound tree: the one-name globs of
// writeDenyPatterns (policy/plan/filename_patterns.h) and the trusted-name rules of
// denyWriteNames (policy/plan/trusted_names.h), both written by the client.
// Input: patterns/rules, one per line, up to an empty line; then a name or path. Invariants:
// never crash and never take long (libFuzzer's -timeout); a glob agrees with fnmatch(3)
// (FNM_CASEFOLD, no FNM_PERIOD) where both define it (no classes, ASCII); matching ignores
// ASCII case, as documented, classes included; FilenamePatterns::Match is the first pattern
// that matches, never for "." or ".."; TrustedNameRules::Match is the first rule, in order,
// that a reference matcher (every rule tried, "**" any number of components, memoised) finds
// — the rule index the matcher uses must not lose one — minus the standard rules' exceptions.
#include <fnmatch.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "policy/plan/filename_patterns.h"
#include "policy/plan/trusted_names.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using ccsandbox::policy::NameGlobMatches;

// Rule components (after a leading "**") against path components; memoised on (p, i).
bool Reference(const std::vector<std::string>& rule, const std::vector<std::string>& path) {
  const size_t width = path.size() + 1;
  std::vector<int8_t> memo((rule.size() + 1) * width, -1);
  auto match = [&](auto&& self, size_t p, size_t i) -> bool {
    int8_t& m = memo[p * width + i];
    if (m >= 0) return m;
    bool r;
    if (p == rule.size()) {
      r = i == path.size();
    } else if (rule[p] == "**") {
      r = self(self, p + 1, i) || (i < path.size() && self(self, p, i + 1));
    } else {
      r = i < path.size() && NameGlobMatches(rule[p], path[i]) && self(self, p + 1, i + 1);
    }
    m = r;
    return r;
  };
  return match(match, 0, 0);
}

std::vector<std::string> RuleComponents(absl::string_view rule) {
  std::vector<std::string> parts = {"**"};
  for (absl::string_view part : absl::StrSplit(rule, '/')) parts.emplace_back(part);
  return parts;
}

bool PlainAscii(absl::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u == 0 || u >= 0x80) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t blank = input.find("\n\n");
  const std::string head = input.substr(0, blank);
  const std::string target = blank == std::string::npos ? "" : input.substr(blank + 2);
  std::vector<std::string> lines = absl::StrSplit(head, '\n');
  if (lines.size() > 16) lines.resize(16);

  // One-name globs.
  std::vector<std::string> valid_patterns;
  for (const std::string& pattern : lines) {
    if (!ccsandbox::policy::CheckNameGlob(pattern).ok()) continue;
    valid_patterns.push_back(pattern);
    const bool matches = NameGlobMatches(pattern, target);
    for (const std::string& spelled :
         {absl::AsciiStrToLower(target), absl::AsciiStrToUpper(target)}) {
      FUZZ_CHECK(NameGlobMatches(pattern, spelled) == matches);
    }
    if (pattern.find('[') == std::string::npos && PlainAscii(pattern) && PlainAscii(target)) {
      FUZZ_CHECK(matches == (fnmatch(pattern.c_str(), target.c_str(), FNM_CASEFOLD) == 0));
    }
  }
  absl::StatusOr<ccsandbox::policy::FilenamePatterns> patterns =
      ccsandbox::policy::FilenamePatterns::Create(valid_patterns);
  FUZZ_CHECK(patterns.ok());
  std::optional<std::string> first;
  if (target != "." && target != ".." && !target.empty()) {
    for (const std::string& p : valid_patterns) {
      if (NameGlobMatches(p, target)) {
        first = p;
        break;
      }
    }
  }
  FUZZ_CHECK(patterns->Match(target) == first);

  // Trusted-name rules: the standard ones (built once: they never change), then the client's,
  // as the deny scan and the guard try them.
  static const auto* standard = new ccsandbox::policy::TrustedNameRules(
      *ccsandbox::policy::TrustedNameRules::Create(ccsandbox::policy::StandardTrustedNameRules()));
  // Each standard rule split once, with its exception (empty: none).
  struct Split {
    std::string rule;
    std::vector<std::string> components, unless;
  };
  static const auto* standard_split = [] {
    auto* list = new std::vector<Split>;
    for (const ccsandbox::policy::TrustedName& name : ccsandbox::policy::StandardTrustedNames()) {
      list->push_back(
          {name.rule, RuleComponents(name.rule),
           name.unless == nullptr ? std::vector<std::string>() : RuleComponents(name.unless)});
    }
    return list;
  }();
  std::vector<std::string> rules;
  for (const std::string& line : lines) {
    if (ccsandbox::policy::TrustedNameRules::Create({line}).ok()) rules.push_back(line);
  }
  absl::StatusOr<ccsandbox::policy::TrustedNameRules> client =
      ccsandbox::policy::TrustedNameRules::Create(rules);
  FUZZ_CHECK(client.ok());
  const std::string path = "/" + target;
  const std::vector<std::string> parts = absl::StrSplit(path, '/', absl::SkipEmpty());
  std::vector<Split> client_split;
  for (const std::string& rule : rules) client_split.push_back({rule, RuleComponents(rule), {}});
  auto first_rule = [&](const std::vector<Split>& list) {
    for (const Split& rule : list) {
      if (!Reference(rule.components, parts)) continue;
      if (!rule.unless.empty() && Reference(rule.unless, parts)) continue;
      return std::optional<std::string>(rule.rule);
    }
    return std::optional<std::string>();
  };
  for (const auto& [set, expected] :
       {std::pair{standard, first_rule(*standard_split)},
        std::pair{static_cast<const ccsandbox::policy::TrustedNameRules*>(&*client),
                  first_rule(client_split)}}) {
    const std::optional<std::string> matched = set->Match(path);
    if (matched != expected) {
      std::fprintf(stderr, "TrustedNameRules::Match gave '%s', every rule in order '%s'\n",
                   matched.value_or("(none)").c_str(), expected.value_or("(none)").c_str());
    }
    FUZZ_CHECK(matched == expected);
  }
  return 0;
}
