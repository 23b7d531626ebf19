// Text tools that can write or run commands (sed, awk, sort -o, archives, formatters) and
// interpreters.
#include <algorithm>
#include <cstddef>
#include <optional>
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

// What a sed script does beyond editing its input: commands that execute (`e`, s///e) or write
// files (`w`, s///w), or a command this scan does not know.
struct SedEffects {
  bool executes = false;
  bool writes = false;
  bool unknown = false;
};

// What follows a sed command letter, and what the command does that matters here.
enum class SedArgument {
  kCount,          // an optional number (q's exit code, l's line length); most take nothing
  kLabel,          // a label, comment or version, up to `;` or the end of the line
  kText,           // text to add, or a file to read, up to the end of the line
  kWriteFile,      // w, W: a file the command writes, up to the end of the line
  kShellCommand,   // e: a command it runs, up to the end of the line
  kSubstitute,     // s/regex/replacement/flags: the e flag runs, the w flag writes
  kTransliterate,  // y/source/dest/
};

struct SedCommands {
  absl::string_view letters;
  SedArgument argument;
};

// GNU sed's commands; a letter that is in no row is unknown.
constexpr SedCommands kSedCommands[] = {
    {"{}=dDgGhHnNpPxzFlqQL", SedArgument::kCount},
    {"#:btTv", SedArgument::kLabel},
    {"aicrR", SedArgument::kText},
    {"wW", SedArgument::kWriteFile},
    {"e", SedArgument::kShellCommand},
    {"s", SedArgument::kSubstitute},
    {"y", SedArgument::kTransliterate},
};

std::optional<SedArgument> SedArgumentOf(char letter) {
  for (const SedCommands& row : kSedCommands) {
    if (row.letters.find(letter) != absl::string_view::npos) return row.argument;
  }
  return std::nullopt;
}

// Reads a sed script command by command: the addresses, the command letter, its argument.
class SedScanner {
 public:
  explicit SedScanner(absl::string_view script) : s_(script) {}

  SedEffects Scan() {
    for (int guard = 0; i_ < s_.size() && ++guard < 100000;) {
      if (At(" \t\n;}{")) {
        ++i_;
        continue;
      }
      SkipAddresses();
      if (i_ >= s_.size() || !ReadCommand()) break;
    }
    return fx_;
  }

 private:
  static constexpr absl::string_view kDigits = "0123456789";

  // The next character is one of `chars`.
  bool At(absl::string_view chars) const {
    return i_ < s_.size() && chars.find(s_[i_]) != absl::string_view::npos;
  }
  void SkipAll(absl::string_view chars) {
    while (At(chars)) ++i_;
  }
  void SkipUntil(absl::string_view ends) {
    while (i_ < s_.size() && !At(ends)) ++i_;
  }
  // From the first character after `delim` to the first character after the next unescaped one.
  void SkipDelimited(char delim) {
    while (i_ < s_.size() && s_[i_] != delim) {
      if (s_[i_] == '\\') ++i_;
      ++i_;
    }
    ++i_;
  }

  // A line number (`3`, `$`, `first~step`), /regex/ with its I and M flags, or \cregexc.
  void SkipAddress() {
    if (At(kDigits) || At("$")) {
      SkipAll("0123456789$~");
    } else if (At("/")) {
      ++i_;
      SkipDelimited('/');
      SkipAll("IM");
    } else if (i_ + 1 < s_.size() && s_[i_] == '\\') {
      const char delim = s_[i_ + 1];
      i_ += 2;
      SkipDelimited(delim);
    }
  }

  // An address, the ranges and steps after it (`,addr`, `+N`, `~N`) and `!`.
  void SkipAddresses() {
    SkipAddress();
    while (At(" ,+~!")) {
      const bool another = At(",+~");
      ++i_;
      if (another) SkipAddress();
    }
  }

  // The command letter and its argument; false when the rest of the script cannot be read.
  bool ReadCommand() {
    const std::optional<SedArgument> argument = SedArgumentOf(s_[i_++]);
    if (!argument.has_value()) {
      fx_.unknown = true;
      return false;
    }
    switch (*argument) {
      case SedArgument::kCount:
        SkipAll(kDigits);
        return true;
      case SedArgument::kLabel:
        SkipUntil("\n;");
        return true;
      case SedArgument::kText:
        SkipUntil("\n");
        return true;
      case SedArgument::kWriteFile:
        fx_.writes = true;
        SkipUntil("\n");
        return true;
      case SedArgument::kShellCommand:
        fx_.executes = true;
        SkipUntil("\n");
        return true;
      case SedArgument::kSubstitute:
      case SedArgument::kTransliterate:
        if (i_ >= s_.size()) return false;
        SkipPatterns();
        if (*argument == SedArgument::kSubstitute) ReadSubstituteFlags();
        return true;
    }
    return true;
  }

  // s/regex/replacement/ and y/source/dest/, from the delimiter on.
  void SkipPatterns() {
    const char delim = s_[i_++];
    SkipDelimited(delim);
    SkipDelimited(delim);
  }

  // s///'s flags: e runs the pattern space as a command, w FILE writes to FILE.
  void ReadSubstituteFlags() {
    while (i_ < s_.size() && !At(";\n}")) {
      if (s_[i_] == 'e') fx_.executes = true;
      if (s_[i_] == 'w') {
        fx_.writes = true;
        SkipUntil("\n");
        return;
      }
      ++i_;
    }
  }

  absl::string_view s_;
  size_t i_ = 0;
  SedEffects fx_;
};

SedEffects ScanSed(absl::string_view script) { return SedScanner(script).Scan(); }

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

// Each interpreter's short options: those that take code (python -c, node -e, perl -e) and
// those that take a value, attached or the next word (python -m, perl -I).
struct InterpreterFlags {
  absl::string_view names;  // space-separated
  absl::string_view code;
  absl::string_view value;
};

constexpr InterpreterFlags kInterpreterFlags[] = {
    {"node nodejs bun deno ts-node tsx", "ep", "rC"},
    {"perl", "eE", "IMmCx"},
    {"ruby", "e", "IrCxT"},
    {"php", "rRBE", "dcfzS"},
};

// python3.12, pypy3 and the like.
constexpr InterpreterFlags kPythonFlags = {"python* pypy*", "c", "mWXQ"};
// Everything else (lua, julia, …): -e and -c are code; no short option takes a value.
constexpr InterpreterFlags kOtherFlags = {"", "ec", ""};

bool IsPython(absl::string_view name) {
  return absl::StartsWith(name, "python") || absl::StartsWith(name, "pypy");
}

InterpreterFlags FlagsOf(absl::string_view name) {
  if (IsPython(name)) return kPythonFlags;
  for (const InterpreterFlags& row : kInterpreterFlags) {
    if (InList(name, row.names)) return row;
  }
  return kOtherFlags;
}

// python -m MODULE ARGS…: what the module does; `module_argv` starts at the module's name.
struct PythonModules {
  absl::string_view names;  // space-separated
  void (*run)(const Call& c, absl::string_view module, Args module_argv);
};

const PythonModules kPythonModules[] = {
    {"pip", [](const Call& c, absl::string_view, Args argv) { Pip(c, argv, "-m pip"); }},
    {"ensurepip", [](const Call& c, absl::string_view, Args) { Install(c, "-m ensurepip"); }},
    {"venv virtualenv compileall py_compile",
     [](const Call& c, absl::string_view module, Args) {
       c.Add(R::kMutating, absl::StrCat("-m ", module, " writes files"));
     }},
    {"twine",
     [](const Call& c, absl::string_view, Args argv) {
       Twine({"twine", argv, c.sink});
     }},
    {"json.tool pydoc site sysconfig platform tokenize dis this",
     [](const Call& c, absl::string_view module, Args) {
       c.Add(R::kReadOnly, absl::StrCat("-m ", module, " only reads"));
     }},
    {"black isort autopep8 ruff yapf",
     [](const Call& c, absl::string_view module, Args argv) {
       Formatter({module, argv, c.sink});
     }},
    {"uv poetry pipx pdm hatch pipenv conda",
     [](const Call& c, absl::string_view module, Args argv) {
       PythonProjectTool({module, argv, c.sink});
     }},
};

void PythonModule(const Call& c, absl::string_view module, Args module_argv) {
  for (const PythonModules& row : kPythonModules) {
    if (InList(module, row.names)) return row.run(c, module, module_argv);
  }
  c.Add(R::kOpaqueProgram, absl::StrCat("runs the module ", module));
}

// Reads the interpreter's arguments up to the code it runs: inline code, a module, a script.
// Returns false when the program comes from standard input (`-`, or no script).
bool InterpreterArgumentsDecide(const Call& c) {
  const InterpreterFlags flags = FlagsOf(c.name);
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const ShellWord& w = c.argv[i];
    const std::string& t = w.text;
    if (!w.literal()) {
      c.Add(R::kOpaqueProgram, "runs code only known at run time");
      return true;
    }
    if (OneOf(t, {"--version", "-V", "-v", "-version", "--help", "-h"}) && i == 1 &&
        c.argv.size() == 2) {
      c.Add(R::kReadOnly, "prints its version or help");
      return true;
    }
    if (c.name == "perl" && ClusterHasCode(t, "i", flags.value)) {
      c.Add(R::kMutating, "-i edits files in place");
    }
    if (OneOf(t, {"--eval", "--print", "--command"}) ||
        ClusterHasCode(t, flags.code, flags.value)) {
      c.Add(R::kOpaqueProgram, "runs inline code");
      return true;
    }
    if (IsPython(c.name) && t == "-m" && i + 1 < c.argv.size()) {
      PythonModule(c, c.argv[i + 1].text, c.argv.subspan(i + 1));
      return true;
    }
    if (t == "-") return false;
    if (t.size() > 1 && t[0] == '-') {
      if (t.size() == 2 && flags.value.find(t[1]) != absl::string_view::npos) ++i;
      if (OneOf(t, {"--require", "--import", "--loader", "--experimental-loader"})) ++i;
      continue;
    }
    c.Add(R::kOpaqueProgram, absl::StrCat("runs the script ", Quote(t)));
    return true;
  }
  return false;
}

// No script or code in the arguments: the program is a here-document, a pipe, or typed in.
void ProgramFromStandardInput(const Call& c) {
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

}  // namespace

void Interpreter(const Call& c) {
  if (InterpreterArgumentsDecide(c)) return;
  ProgramFromStandardInput(c);
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
