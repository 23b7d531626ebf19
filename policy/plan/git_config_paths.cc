#include "policy/plan/git_config_paths.h"

#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

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

std::string Unquote(absl::string_view value) {
  value = absl::StripAsciiWhitespace(value);
  std::string out;
  bool quoted = false;
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (c == '"') {
      quoted = !quoted;
    } else if (c == '\\' && i + 1 < value.size()) {
      out.push_back(value[++i]);
    } else if (!quoted && (c == '#' || c == ';')) {
      break;
    } else {
      out.push_back(c);
    }
  }
  return std::string(absl::StripAsciiWhitespace(out));
}

}  // namespace

GitConfigPaths GitConfigProgramPaths(absl::string_view config_text, absl::string_view worktree,
                                     absl::string_view config_dir, absl::string_view home) {
  // Keys whose value is a program git runs, by their last name component.
  static const auto* kProgramKeys = new std::set<std::string>{
      "fsmonitor", "sshcommand", "editor",  "pager",    "askpass",
      "clean",     "smudge",     "process", "textconv", "command",
      "external",  "driver",     "helper",  "program",  "packobjectshook"};
  GitConfigPaths found;
  std::string section;  // "core", "include", "includeif", "alias" ...
  for (absl::string_view line : absl::StrSplit(config_text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      const size_t end = line.find_first_of(" \t\"].", 1);
      section = absl::AsciiStrToLower(line.substr(1, end == absl::string_view::npos ? 0 : end - 1));
      // `[core] hooksPath = x` may follow the header on the same line.
      const size_t close = line.find(']');
      if (close == absl::string_view::npos) continue;
      line = absl::StripAsciiWhitespace(line.substr(close + 1));
      if (line.empty()) continue;
    }
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    const std::string key = absl::AsciiStrToLower(absl::StripAsciiWhitespace(line.substr(0, eq)));
    std::string value = Unquote(line.substr(eq + 1));
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
