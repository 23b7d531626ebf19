#include "policy/plan/git_config_paths.h"

#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ccsandbox::policy {
namespace {

// `path` made absolute against `base` and normalised ("." and ".." folded), or "" when it
// climbs above "/".
std::string Absolute(absl::string_view base, absl::string_view path) {
  const std::string joined =
      absl::StartsWith(path, "/") ? std::string(path) : absl::StrCat(base, "/", path);
  std::vector<absl::string_view> parts;
  for (absl::string_view part : absl::StrSplit(joined, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      if (parts.empty()) return "";
      parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  return absl::StrCat("/", absl::StrJoin(parts, "/"));
}

// git's own character classes (git-compat-util.h): ASCII only, whitespace without \v and \f.
bool GitSpace(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool GitAlpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool GitKeyChar(int c) { return GitAlpha(c) || (c >= '0' && c <= '9') || c == '-'; }
char Lower(int c) { return static_cast<char>(GitAlpha(c) ? c | 0x20 : c); }

// A config's entries as git's config.c reads them (git_parse_source): `[section]`,
// `[section "subsection"]` (quoted, '\' escapes) and the old `[section.subsection]`; keys of
// letters, digits and '-' after a section; values with '#'/';' comments outside double quotes,
// the escapes \t \b \n \\ \" and a '\' before a newline that continues the value on the next
// line; each unquoted space or tab inside a value one space, leading and trailing ones
// dropped; "\r\n" as "\n". Reading stops at the first line git would refuse ("bad config
// line"): git then refuses to run in that repository at all.
class GitConfigReader {
 public:
  explicit GitConfigReader(absl::string_view text) : text_(text) {
    if (absl::StartsWith(text_, "\xef\xbb\xbf")) pos_ = 3;  // a UTF-8 byte order mark
  }

  // The next entry: (section, last name component, value), both names lowercased; nullopt at
  // the end or at a line git refuses.
  std::optional<std::tuple<std::string, std::string, std::string>> Next() {
    for (;;) {
      const int c = Get();
      if (c == '\n') {
        if (eof_) return std::nullopt;
        comment_ = false;
        continue;
      }
      if (comment_ || GitSpace(c)) continue;
      if (c == '#' || c == ';') {
        comment_ = true;
        continue;
      }
      if (c == '[') {
        if (!Header()) return std::nullopt;
        continue;
      }
      if (!GitAlpha(c)) return std::nullopt;  // (a key before any header is read, and unused)
      std::string name(1, Lower(c));
      int k;
      for (k = Get(); !eof_ && GitKeyChar(k); k = Get()) name.push_back(Lower(k));
      while (k == ' ' || k == '\t') k = Get();
      if (k == '\n') continue;  // a key without '=' is a boolean: no path
      if (k != '=') return std::nullopt;
      std::optional<std::string> value = Value();
      if (!value.has_value()) return std::nullopt;
      return std::make_tuple(section_, name, *std::move(value));
    }
  }

 private:
  int Get() {
    if (pos_ >= text_.size()) {
      eof_ = true;
      return '\n';
    }
    int c = static_cast<unsigned char>(text_[pos_++]);
    if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') c = text_[pos_++];
    return c;
  }

  // After '[': the section's name (the part before any subsection).
  bool Header() {
    std::string name;
    bool subsection = false;
    for (;;) {
      const int c = Get();
      if (eof_) return false;
      if (c == ']') break;
      if (GitSpace(c)) {  // [section "subsection"]
        int q = c;
        do {
          if (q == '\n') return false;
          q = Get();
        } while (GitSpace(q));
        if (q != '"') return false;
        for (;;) {
          int s = Get();
          if (s == '\n') return false;
          if (s == '"') break;
          if (s == '\\' && Get() == '\n') return false;
        }
        if (Get() != ']') return false;
        subsection = true;
        break;
      }
      if (!GitKeyChar(c) && c != '.') return false;
      name.push_back(Lower(c));
    }
    // git refuses only a header with nothing in it: `[ "sub"]` is section "", subsection "sub".
    if (name.empty() && !subsection) return false;
    section_ = name.substr(0, name.find('.'));  // [section.subsection]
    return true;
  }

  // After '=': git's parse_value.
  std::optional<std::string> Value() {
    std::string value;
    bool quote = false, comment = false;
    int spaces = 0;
    for (;;) {
      int c = Get();
      if (c == '\n') {
        if (quote) return std::nullopt;
        return value;
      }
      if (comment) continue;
      if (GitSpace(c) && !quote) {
        if (!value.empty()) ++spaces;
        continue;
      }
      if (!quote && (c == ';' || c == '#')) {
        comment = true;
        continue;
      }
      value.append(spaces, ' ');
      spaces = 0;
      if (c == '\\') {
        c = Get();  // at the end of the text: '\n', a continuation that ends the value, as git has
                    // it
        switch (c) {
          case '\n':
            continue;
          case 't':
            c = '\t';
            break;
          case 'b':
            c = '\b';
            break;
          case 'n':
            c = '\n';
            break;
          case '\\':
          case '"':
            break;
          default:
            return std::nullopt;
        }
        value.push_back(static_cast<char>(c));
        continue;
      }
      if (c == '"') {
        quote = !quote;
        continue;
      }
      value.push_back(static_cast<char>(c));
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
  bool eof_ = false;
  bool comment_ = false;
  std::string section_;  // "" before the first header
};

}  // namespace

GitConfigPaths GitConfigProgramPaths(absl::string_view config_text, absl::string_view worktree,
                                     absl::string_view config_dir, absl::string_view home) {
  // Keys whose value is a program git runs, by their last name component.
  static const auto* kProgramKeys = new std::set<std::string>{
      "fsmonitor", "sshcommand", "editor",  "pager",    "askpass",
      "clean",     "smudge",     "process", "textconv", "command",
      "external",  "driver",     "helper",  "program",  "packobjectshook"};
  GitConfigPaths found;
  GitConfigReader reader(config_text);
  while (auto entry = reader.Next()) {
    auto& [section, key, value] = *entry;
    if (value.empty()) continue;
    auto resolve = [&](absl::string_view base, std::string v) -> std::string {
      if (absl::StartsWith(v, "~/")) {
        if (home.empty()) return "";
        v = absl::StrCat(home, v.substr(1));
      } else if (absl::StartsWith(v, "~")) {
        return "";  // another user's home
      }
      if (v[0] != '/' && base.empty()) return "";
      const std::string path = Absolute(base, v);
      return path == "/" ? "" : path;
    };
    if ((section == "include" || section == "includeif") && key == "path") {
      if (std::string p = resolve(config_dir, value); !p.empty()) found.includes.push_back(p);
      continue;
    }
    if (section == "core" && key == "hookspath") {
      if (std::string p = resolve(worktree, value); !p.empty()) found.programs.push_back(p);
      continue;
    }
    const bool alias = section == "alias" && absl::StartsWith(value, "!");
    if (!alias && kProgramKeys->count(key) == 0) continue;
    if (alias) value = value.substr(1);
    // The program is the first word; it is a file of ours only when named by a path.
    std::string program(absl::StripAsciiWhitespace(value));
    program = program.substr(0, program.find_first_of(" \t"));
    if (program.find('/') == std::string::npos || absl::StrContains(program, "://")) continue;
    if (std::string p = resolve(worktree, program); !p.empty()) found.programs.push_back(p);
  }
  return found;
}

}  // namespace ccsandbox::policy
