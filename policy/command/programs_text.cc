// Text tools that can write or run commands (sed, awk, sort -o, archives, formatters) and
// interpreters.
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

namespace ccsandbox::policy::programs {
namespace {

// ---------------------------------------------------------------------------------------------
// Text tools that can write or run commands.

// Scans a sed script for commands that execute (`e`, s///e) or write files (`w`, s///w).
struct SedEffects {
  bool executes = false;
  bool writes = false;
  bool unknown = false;
};

SedEffects ScanSed(absl::string_view s) {
  SedEffects fx;
  size_t i = 0;
  auto skip_to_eol = [&] {
    while (i < s.size() && s[i] != '\n') ++i;
  };
  auto skip_delimited = [&](char delim) {  // i at the first char after the delimiter
    while (i < s.size() && s[i] != delim) {
      if (s[i] == '\\') ++i;
      ++i;
    }
    ++i;
  };
  auto skip_address = [&] {
    if (i < s.size() && (absl::ascii_isdigit(s[i]) || s[i] == '$')) {
      while (i < s.size() && (absl::ascii_isdigit(s[i]) || s[i] == '$' || s[i] == '~')) ++i;
    } else if (i < s.size() && s[i] == '/') {
      ++i;
      skip_delimited('/');
      while (i < s.size() && (s[i] == 'I' || s[i] == 'M')) ++i;
    } else if (i + 1 < s.size() && s[i] == '\\') {
      const char d = s[i + 1];
      i += 2;
      skip_delimited(d);
    }
  };
  int guard = 0;
  while (i < s.size() && ++guard < 100000) {
    const char ch = s[i];
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == ';' || ch == '}' || ch == '{') {
      ++i;
      continue;
    }
    skip_address();
    while (i < s.size() &&
           (s[i] == ' ' || s[i] == ',' || s[i] == '+' || s[i] == '~' || s[i] == '!')) {
      if (s[i] == ',' || s[i] == '+' || s[i] == '~') {
        ++i;
        skip_address();
      } else {
        ++i;
      }
    }
    if (i >= s.size()) break;
    const char cmd = s[i++];
    switch (cmd) {
      case '{':
      case '}':
      case '=':
      case 'd':
      case 'D':
      case 'g':
      case 'G':
      case 'h':
      case 'H':
      case 'n':
      case 'N':
      case 'p':
      case 'P':
      case 'x':
      case 'z':
      case 'F':
      case 'l':
      case 'q':
      case 'Q':
      case 'L':
        while (i < s.size() && absl::ascii_isdigit(s[i])) ++i;
        break;
      case '#':
      case ':':
      case 'b':
      case 't':
      case 'T':
      case 'v':
        while (i < s.size() && s[i] != '\n' && s[i] != ';') ++i;
        break;
      case 'a':
      case 'i':
      case 'c':
      case 'r':
      case 'R':
        skip_to_eol();
        break;
      case 'w':
      case 'W':
        fx.writes = true;
        skip_to_eol();
        break;
      case 'e':
        fx.executes = true;
        skip_to_eol();
        break;
      case 's':
      case 'y': {
        if (i >= s.size()) return fx;
        const char d = s[i++];
        skip_delimited(d);
        skip_delimited(d);
        if (cmd == 'y') break;
        while (i < s.size() && s[i] != ';' && s[i] != '\n' && s[i] != '}') {
          if (s[i] == 'e') fx.executes = true;
          if (s[i] == 'w') {
            fx.writes = true;
            skip_to_eol();
            break;
          }
          ++i;
        }
        break;
      }
      default:
        fx.unknown = true;
        return fx;
    }
  }
  return fx;
}

void Sed(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"efl", "expression file line-length"}, false);
  bool in_place = s.HasAny({"-i", "--in-place", "-I"});
  for (const Opt& o : s.opts) {
    if (absl::StartsWith(o.name, "--in-place")) in_place = true;
  }
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& t = c.argv[i].text;
    if (t.size() > 1 && t[0] == '-' && t[1] != '-' && t.find('i') != std::string::npos &&
        t.find_first_of("ef") == std::string::npos) {
      in_place = true;
    }
  }
  std::vector<const ShellWord*> scripts;
  std::vector<ShellWord> attached;
  attached.reserve(s.opts.size());
  bool from_file = false;
  for (const Opt& o : s.opts) {
    if ((o.name == "-e" || o.name == "--expression") && o.has_value) {
      if (o.value_word != nullptr) {
        scripts.push_back(o.value_word);
      } else {
        attached.push_back(ShellWord{o.value, o.value, 0});
        scripts.push_back(&attached.back());
      }
    }
    if (o.name == "-f" || o.name == "--file") from_file = true;
  }
  std::vector<const ShellWord*> ops = Operands(c.argv, s);
  if (scripts.empty() && !from_file && !ops.empty()) scripts.push_back(ops[0]);
  const bool sandboxed = s.Has("--sandbox");
  if (from_file && !sandboxed) c.Add(R::kOpaqueProgram, "runs a sed script file");
  for (const ShellWord* w : scripts) {
    if (!w->literal()) {
      if (!sandboxed) c.Add(R::kDynamicCode, "runs a sed script only known at run time");
      continue;
    }
    SedEffects fx = ScanSed(w->text);
    if (sandboxed) continue;
    if (fx.executes || fx.unknown) {
      c.Add(R::kOpaqueProgram, "runs a sed script that executes commands");
    }
    if (fx.writes) c.Add(R::kMutating, "runs a sed script that writes files");
  }
  if (in_place) return c.Add(R::kMutating, "-i edits files in place");
  c.Add(R::kReadOnly, "only reads files");
}

void Awk(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1,
                       {"fvFEiol",
                        "file assign field-separator exec include "
                        "load"},
                       false);
  if (s.HasAny({"-f", "--file", "-E", "--exec"})) {
    c.Add(R::kOpaqueProgram, "runs an awk program file");
  }
  for (const Opt& o : s.opts) {
    if ((o.name == "-i" || o.name == "--include") && o.value == "inplace") {
      c.Add(R::kMutating, "-i inplace edits files in place");
    }
  }
  std::vector<const ShellWord*> ops = Operands(c.argv, s);
  if (!s.HasAny({"-f", "--file", "-E", "--exec"}) && !ops.empty()) {
    const ShellWord& prog = *ops[0];
    if (!prog.literal()) {
      c.Add(R::kDynamicCode, "runs an awk program only known at run time");
    } else {
      const std::string& p = prog.text;
      if (absl::StrContains(p, "system") || absl::StrContains(p, "|") ||
          absl::StrContains(p, "getline")) {
        c.Add(R::kOpaqueProgram, "runs an awk program that runs commands");
      }
      // `print > "file"` and `printf … >> f` write files.
      size_t at = 0;
      while ((at = p.find("print", at)) != std::string::npos) {
        size_t end = p.find_first_of(";}\n", at);
        absl::string_view stmt = absl::string_view(p).substr(
            at, end == std::string::npos ? std::string::npos : end - at);
        if (absl::StrContains(stmt, ">")) {
          c.Add(R::kMutating, "runs an awk program that writes files");
          break;
        }
        at += 5;
      }
    }
  }
  c.Add(R::kReadOnly, "only reads files");
}

void SortLike(const Call& c) {
  if (AnyWord(c.argv, 1, {"--compress-program"}) ||
      AnyWordStartsWith(c.argv, 1, "--compress-program=")) {
    return c.Add(R::kOpaqueProgram, "--compress-program runs a command");
  }
  ArgScan s = ScanArgs(c.argv, 1,
                       {"otkSTn",
                        "output field-separator key buffer-size "
                        "temporary-directory parallel random-source "
                        "files0-from"},
                       false);
  for (const Opt& o : s.opts) {
    if ((o.name == "-o" || o.name == "--output") && o.has_value) {
      ShellWord w = OptWord(o);
      c.AddWrite(w, "writes");
    }
  }
  std::vector<const ShellWord*> ops = Operands(c.argv, s);
  if (OneOf(c.name, {"uniq", "xxd"}) && ops.size() >= 2) c.AddWrite(*ops[1], "writes");
  c.Add(R::kReadOnly, "only reads");
}

void Archive(const Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& t = c.argv[i].text;
    if (absl::StartsWith(t, "--to-command") || absl::StartsWith(t, "--checkpoint-action") ||
        absl::StartsWith(t, "--use-compress-program") || absl::StartsWith(t, "--info-script") ||
        absl::StartsWith(t, "--new-volume-script") || absl::StartsWith(t, "--unzip-command") ||
        t == "-I" || t == "-F" || t == "-TT") {
      return c.Add(R::kOpaqueProgram, absl::StrCat(t, " runs a command"));
    }
  }
  if (c.name == "tar" || c.name == "bsdtar") {
    bool list = false;
    bool create_or_extract = false;
    for (size_t i = 1; i < c.argv.size(); ++i) {
      const std::string& t = c.argv[i].text;
      if (OneOf(t, {"--list"})) list = true;
      if (OneOf(t, {"--extract", "--get", "--create", "--append", "--update", "--delete",
                    "--concatenate", "--catenate"})) {
        create_or_extract = true;
      }
      if (absl::StartsWith(t, "--")) continue;
      // Bundled (`tar xzf`, first word only) or dashed short options.
      if ((i == 1 && !t.empty() && t[0] != '-') || (t.size() > 1 && t[0] == '-')) {
        if (t.find('t') != std::string::npos) list = true;
        if (t.find_first_of("xcruA") != std::string::npos) create_or_extract = true;
      }
    }
    if (list && !create_or_extract) return c.Add(R::kReadOnly, "lists an archive");
    return c.Add(R::kMutating, "creates or extracts an archive");
  }
  if (c.name == "unzip") {
    if (AnyWord(c.argv, 1, {"-l", "-t", "-v", "-Z", "-p", "-z"})) {
      return c.Add(R::kReadOnly, "lists an archive");
    }
    return c.Add(R::kMutating, "extracts an archive");
  }
  if (OneOf(c.name, {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4",
                     "brotli", "compress", "uncompress", "lzma", "unlzma"})) {
    for (size_t i = 1; i < c.argv.size(); ++i) {
      const std::string& t = c.argv[i].text;
      if (OneOf(t, {"--stdout", "--to-stdout", "--list", "--test", "-V", "--version"}) ||
          (t.size() > 1 && t[0] == '-' && t[1] != '-' &&
           t.find_first_of("cltV") != std::string::npos)) {
        return c.Add(R::kReadOnly, "writes to standard output");
      }
    }
    if (c.argv.size() == 1) return c.Add(R::kReadOnly, "filters standard input");
    return c.Add(R::kMutating, "replaces files with their (de)compressed form");
  }
  if (OneOf(c.name, {"7z", "7za", "7zz"}) && AnyWord(c.argv, 1, {"l", "t", "i"})) {
    return c.Add(R::kReadOnly, "lists an archive");
  }
  c.Add(R::kMutating, "writes archive files");
}

void Formatter(const Call& c) {
  const bool check = AnyWord(
      c.argv, 1, {"--check", "--diff", "--dry-run", "-n", "-l", "-d", "--list-different", "-c"});
  const bool write = AnyWord(c.argv, 1,
                             {"-i", "-w", "--write", "--fix", "--in-place", "-a", "-A",
                              "--autocorrect", "--autocorrect-all", "-W", "--overwrite"});
  const bool writes_by_default =
      OneOf(c.name, {"black", "rustfmt", "isort", "yapf", "autopep8", "ruff", "dos2unix",
                     "unix2dos", "terraform", "swiftformat"});
  if (c.name == "ruff" && AnyWord(c.argv, 1, {"check"}) && !write) {
    return c.Add(R::kReadOnly, "check only reports");
  }
  if (write || (writes_by_default && !check && c.argv.size() > 1 && !IsVersionFlag(c))) {
    return c.Add(R::kMutating, "rewrites files");
  }
  c.Add(R::kReadOnly, "only reports");
}

// ---------------------------------------------------------------------------------------------
// Interpreters.

// For a short-option cluster: true when a code flag (-c, -e) comes before any option whose
// value is attached.
bool ClusterHasCode(absl::string_view t, absl::string_view code_flags,
                    absl::string_view value_flags) {
  if (t.size() < 2 || t[0] != '-' || t[1] == '-') return false;
  for (size_t j = 1; j < t.size(); ++j) {
    if (code_flags.find(t[j]) != absl::string_view::npos) return true;
    if (value_flags.find(t[j]) != absl::string_view::npos) return false;
  }
  return false;
}

void Editor(const Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& t = c.argv[i].text;
    if (OneOf(t, {"-c", "--cmd", "-S", "-u"}) || absl::StartsWith(t, "+")) {
      return c.Add(R::kOpaqueProgram, "runs editor commands");
    }
  }
  c.Add(R::kMutating, "opens an editor that can change files");
}

}  // namespace

void Interpreter(const Call& c) {
  absl::string_view name = c.name;
  const bool python = absl::StartsWith(name, "python") || absl::StartsWith(name, "pypy");
  absl::string_view code_flags = "ec";
  absl::string_view value_flags = "";  // options taking a value (attached or the next word)
  if (python) {
    code_flags = "c";
    value_flags = "mWXQ";
  } else if (OneOf(name, {"node", "nodejs", "bun", "deno", "ts-node", "tsx"})) {
    code_flags = "ep";
    value_flags = "rC";
  } else if (name == "perl") {
    code_flags = "eE";
    value_flags = "IMmCx";
  } else if (name == "ruby") {
    code_flags = "e";
    value_flags = "IrCxT";
  } else if (name == "php") {
    code_flags = "rRBE";
    value_flags = "dcfzS";
  }
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const ShellWord& w = c.argv[i];
    const std::string& t = w.text;
    if (!w.literal()) {
      c.Add(R::kOpaqueProgram, "runs code only known at run time");
      return;
    }
    if (OneOf(t, {"--version", "-V", "-v", "-version", "--help", "-h"}) && i == 1 &&
        c.argv.size() == 2) {
      return c.Add(R::kReadOnly, "prints its version or help");
    }
    if (name == "perl" && ClusterHasCode(t, "i", value_flags)) {
      c.Add(R::kMutating, "-i edits files in place");
    }
    if (OneOf(t, {"--eval", "--print", "--command"}) ||
        ClusterHasCode(t, code_flags, value_flags)) {
      return c.Add(R::kOpaqueProgram, "runs inline code");
    }
    if (python && t == "-m" && i + 1 < c.argv.size()) {
      const std::string module = c.argv[i + 1].text;
      Args rest = c.argv.subspan(i + 1);
      if (module == "pip") return Pip(c, rest, "-m pip");
      if (module == "ensurepip") return Install(c, "-m ensurepip");
      if (OneOf(module, {"venv", "virtualenv", "compileall", "py_compile"})) {
        return c.Add(R::kMutating, absl::StrCat("-m ", module, " writes files"));
      }
      if (module == "twine") {
        Call inner{"twine", rest, c.sink};
        return Twine(inner);
      }
      if (OneOf(module, {"json.tool", "pydoc", "site", "sysconfig", "platform", "tokenize", "dis",
                         "this"})) {
        return c.Add(R::kReadOnly, absl::StrCat("-m ", module, " only reads"));
      }
      if (OneOf(module, {"black", "isort", "autopep8", "ruff", "yapf"})) {
        Call inner{module, rest, c.sink};
        return Formatter(inner);
      }
      if (OneOf(module, {"uv", "poetry", "pipx", "pdm", "hatch", "pipenv", "conda"})) {
        Call inner{module, rest, c.sink};
        return PythonProjectTool(inner);
      }
      return c.Add(R::kOpaqueProgram, absl::StrCat("runs the module ", module));
    }
    if (t == "-") break;
    if (t.size() > 1 && t[0] == '-') {
      if (t.size() == 2 && value_flags.find(t[1]) != absl::string_view::npos) ++i;
      if (OneOf(t, {"--require", "--import", "--loader", "--experimental-loader"})) ++i;
      continue;
    }
    return c.Add(R::kOpaqueProgram, absl::StrCat("runs the script ", Quote(t)));
  }
  const ShellCommand& cmd = c.sink.Command();
  for (const ShellRedirect& r : cmd.redirects) {
    if (r.fd <= 0 && (r.op == RedirectOp::kHereDoc || r.op == RedirectOp::kHereString)) {
      return c.Add(R::kOpaqueProgram, "runs a program given on standard input");
    }
  }
  if (cmd.in_pipeline) {
    return c.Add(R::kDynamicCode, "runs code piped in from another command");
  }
  c.Add(R::kOpaqueProgram, "starts an interactive interpreter");
}

std::vector<ProgramGroup> TextPrograms() {
  return {
      {"vi vim nvim view nano pico emacs ed ex code code-insiders subl micro hx helix kak joe "
       "mg",
       H(Editor)},
      {"clang-format gofmt goimports shfmt prettier eslint black rustfmt isort yapf autopep8 "
       "ruff dos2unix unix2dos rubocop stylelint swiftformat clang-tidy",
       H(Formatter)},
      {"sed gsed", H(Sed)},
      {"awk gawk mawk nawk", H(Awk)},
      {"sort uniq xxd shuf", H(SortLike)},
      {"tar bsdtar zip unzip gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 brotli compress "
       "uncompress lzma unlzma 7z 7za 7zz",
       H(Archive)},
      {"node nodejs deno ts-node tsx ruby perl php lua luajit rscript r julia java jshell groovy "
       "scala kotlin osascript tclsh wish expect erl escript elixir iex ghci runghc guile "
       "racket sbcl clisp ocaml dotnet-script jruby irb",
       H(Interpreter)},
      {"xdg-open open start", S(R::kOpaqueProgram,
                                "opens a file with whatever program is "
                                "registered for it")},
  };
}

}  // namespace ccsandbox::policy::programs
