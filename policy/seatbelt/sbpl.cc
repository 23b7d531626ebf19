#include "policy/seatbelt/sbpl.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/paths.h"
#include "policy/plan/filename_patterns.h"
#include "policy/plan/trusted_names.h"

namespace ccsandbox::policy::seatbelt {
namespace {

// ']' and '}' are literal outside a class and an interval (and escaping them is undefined).
constexpr absl::string_view kRegexMeta = ".[(){*+?^$|\\";

// One literal character of a name, matched in either ASCII case.
std::string FoldedChar(char c) {
  if (absl::ascii_isalpha(static_cast<unsigned char>(c))) {
    return absl::StrCat("[", std::string(1, absl::ascii_tolower(c)),
                        std::string(1, absl::ascii_toupper(c)), "]");
  }
  return RegexLiteral(absl::string_view(&c, 1));
}

bool AllAlnum(const std::string& chars) {
  for (const char c : chars) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The class `text` ("[...]" as written) as a regex class over the same single names, computed
// from the glob matcher itself so both agree on every byte.
absl::StatusOr<std::string> ClassRegex(absl::string_view glob, absl::string_view text) {
  std::string in, out;
  for (int b = 1; b < 256; ++b) {
    const char c = static_cast<char>(b);
    if (c == '/') continue;
    (NameGlobMatches(text, absl::string_view(&c, 1)) ? in : out).push_back(c);
  }
  if (!in.empty() && AllAlnum(in)) return absl::StrCat("[", in, "]");
  if (!out.empty() && AllAlnum(out)) return absl::StrCat("[^/", out, "]");
  return absl::InvalidArgumentError(
      absl::StrCat("glob \"", glob, "\": the class ", text,
                   " has no safe Seatbelt spelling (use letters and digits only)"));
}

// The components of `rule`, checked by the trusted-name rules' own parser.
absl::StatusOr<std::vector<std::string>> RuleComponents(absl::string_view rule) {
  absl::StatusOr<TrustedNameRules> checked =
      TrustedNameRules::Create({std::string(rule)}, "denyWriteNames");
  if (!checked.ok()) return checked.status();
  return std::vector<std::string>(absl::StrSplit(rule, '/'));
}

// The regex of components[0..n) after `anchor` ("" = any depth), ending at a name boundary.
absl::StatusOr<std::string> ComponentsRegex(const std::vector<std::string>& components, size_t n,
                                            absl::string_view anchor) {
  std::string re = anchor.empty() ? "(^|/)" : absl::StrCat(anchor, "/");
  bool need_sep = false;
  for (size_t i = 0; i < n; ++i) {
    if (components[i] == "**") {
      if (i + 1 == n) {
        absl::StrAppend(&re, need_sep ? "(/.*)?" : ".*");
      } else {
        absl::StrAppend(&re, need_sep ? "/" : "", "(.*/)?");
        need_sep = false;
      }
      continue;
    }
    absl::StatusOr<std::string> name = NameGlobRegex(components[i]);
    if (!name.ok()) return name.status();
    absl::StrAppend(&re, need_sep ? "/" : "", *name);
    need_sep = true;
  }
  return absl::StrCat(re, "$");
}

}  // namespace

absl::StatusOr<std::string> SbplString(absl::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      return absl::InvalidArgumentError(
          absl::StrCat("a path or pattern holds a control character (byte ", static_cast<int>(u),
                       "): a Seatbelt profile has no safe spelling for it"));
    }
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string RegexLiteral(absl::string_view s) {
  std::string out;
  for (const char c : s) {
    if (kRegexMeta.find(c) != absl::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

absl::StatusOr<std::string> NameGlobRegex(absl::string_view glob) {
  if (absl::Status status = CheckNameGlob(std::string(glob)); !status.ok()) return status;
  std::string re;
  for (size_t i = 0; i < glob.size(); ++i) {
    const char c = glob[i];
    if (c == '*') {
      re += "[^/]*";
    } else if (c == '?') {
      re += "[^/]";
    } else if (c == '\\' && i + 1 < glob.size()) {
      re += FoldedChar(glob[++i]);
    } else if (c == '[') {
      // The class ends at the first ']' after its first member (which may be ']' itself).
      size_t p = i + 1;
      if (p < glob.size() && (glob[p] == '!' || glob[p] == '^')) ++p;
      bool first = true;
      while (p < glob.size() && (first || glob[p] != ']')) {
        first = false;
        if (glob[p] == '\\') ++p;
        ++p;
      }
      absl::StatusOr<std::string> cls = ClassRegex(glob, glob.substr(i, p + 1 - i));
      if (!cls.ok()) return cls.status();
      re += *cls;
      i = p;
    } else {
      re += FoldedChar(c);
    }
  }
  return re;
}

absl::StatusOr<std::string> TrustedRuleRegex(absl::string_view rule, absl::string_view anchor) {
  absl::StatusOr<std::vector<std::string>> components = RuleComponents(rule);
  if (!components.ok()) return components.status();
  return ComponentsRegex(*components, components->size(), anchor);
}

absl::StatusOr<std::vector<std::string>> TrustedRuleAncestorRegexes(absl::string_view rule,
                                                                    absl::string_view anchor) {
  absl::StatusOr<std::vector<std::string>> components = RuleComponents(rule);
  if (!components.ok()) return components.status();
  std::vector<std::string> out;
  for (size_t n = 1; n < components->size(); ++n) {
    absl::StatusOr<std::string> re = ComponentsRegex(*components, n, anchor);
    if (!re.ok()) return re.status();
    out.push_back(*std::move(re));
  }
  return out;
}

absl::StatusOr<std::string> PathGlobRegex(absl::string_view path) {
  std::string re = "^";
  for (absl::string_view component : absl::StrSplit(path.substr(1), '/')) {
    re += "/";
    if (IsGlob(component)) {
      absl::StatusOr<std::string> name = NameGlobRegex(component);
      if (!name.ok()) return name.status();
      re += *name;
    } else {
      re += RegexLiteral(component);
    }
  }
  return absl::StrCat(re, "(/.*)?$");
}

}  // namespace ccsandbox::policy::seatbelt
