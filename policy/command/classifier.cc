#include "policy/command/classifier.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "policy/command/programs.h"

namespace ccsandbox::policy {
namespace {

using Args = absl::Span<const ShellWord>;

constexpr size_t kMaxShownText = 200;
constexpr size_t kMaxBraceWords = 256;

std::string Shorten(absl::string_view s) {
  if (s.size() <= kMaxShownText) return std::string(s);
  return absl::StrCat(s.substr(0, kMaxShownText), "…");
}

// Directories whose programs are the system's own; anything else (./x, ~/bin/x, a build
// directory) may be something the agent wrote.
bool IsSystemProgramDir(absl::string_view dir) {
  for (absl::string_view d :
       {"/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin",
        "/opt/homebrew/bin", "/opt/homebrew/sbin", "/usr/libexec", "/bin/", "/usr/bin/"}) {
    if (dir == d) return true;
  }
  return false;
}

// Brace expansion of an unquoted, expansion-free word: `{rm,-rf,/}` is three words.
// False when the expansion would exceed `max` words.
bool ExpandBraces(const std::string& s, std::vector<std::string>* out, size_t max) {
  size_t open = std::string::npos;
  size_t close = std::string::npos;
  std::vector<size_t> commas;
  for (size_t i = 0; i < s.size() && close == std::string::npos; ++i) {
    if (s[i] != '{') continue;
    int depth = 0;
    std::vector<size_t> top;
    for (size_t j = i; j < s.size(); ++j) {
      if (s[j] == '{') {
        ++depth;
      } else if (s[j] == '}') {
        if (--depth == 0) {
          if (!top.empty()) {
            open = i;
            close = j;
            commas = std::move(top);
          }
          break;
        }
      } else if (s[j] == ',' && depth == 1) {
        top.push_back(j);
      }
    }
  }
  if (open == std::string::npos) {
    if (out->size() >= max) return false;
    out->push_back(s);
    return true;
  }
  const std::string prefix = s.substr(0, open);
  const std::string suffix = s.substr(close + 1);
  size_t begin = open + 1;
  commas.push_back(close);
  for (size_t comma : commas) {
    if (!ExpandBraces(absl::StrCat(prefix, s.substr(begin, comma - begin), suffix), out, max)) {
      return false;
    }
    begin = comma + 1;
  }
  return true;
}

bool BraceExpandable(const ShellWord& w) {
  return (w.flags & kWordBrace) &&
         (w.flags & (kWordDynamicFlags & ~(kWordBrace | kWordGlob))) == 0 &&
         w.raw.find_first_of("'\"\\$`") == std::string::npos;
}

class Classifier : public ProgramSink {
 public:
  Classifier(const ShellParseLimits& limits, std::vector<CommandFinding>* out)
      : limits_(limits), out_(out) {}

  void ClassifyTop(absl::string_view line) {
    absl::StatusOr<ShellScript> script = ParseShell(line, limits_);
    if (!script.ok()) {
      CommandFinding f;
      f.rule = CommandRule::kUnparseable;
      f.subcommand = Shorten(line);
      f.reason = script.status().code() == absl::StatusCode::kResourceExhausted
                     ? absl::StrCat("the command line is too large or complex to analyse: ",
                                    script.status().message())
                     : absl::StrCat("the command line does not parse: ", script.status().message());
      out_->push_back(std::move(f));
      return;
    }
    ClassifyScript(*script, 0);
  }

  void Add(CommandRule rule, std::string reason) override {
    CommandFinding f;
    f.rule = rule;
    f.subcommand = Shorten(current_ != nullptr ? current_->text : "");
    f.reason = WithContext(std::move(reason));
    out_->push_back(std::move(f));
  }

  void AddPush(std::vector<std::string> refs, std::string reason) override {
    Add(CommandRule::kPushToRemote, std::move(reason));
    out_->back().push_refs = std::move(refs);
  }

  void RunArgv(Args argv) override { ClassifyArgv(argv); }

  void RunCode(absl::string_view code, absl::string_view how, bool substitutions_only) override {
    work_ += code.size();
    if (static_cast<int>(contexts_.size()) >= limits_.max_nesting || work_ > limits_.max_work) {
      Add(CommandRule::kUnparseable,
          absl::StrCat("shell code passed to ", how, " nests too deep to analyse"));
      return;
    }
    absl::StatusOr<ShellScript> inner = ParseShell(code, limits_);
    if (!inner.ok()) {
      Add(CommandRule::kUnparseable, absl::StrCat("the shell code passed to ", how,
                                                  " does not parse: ", inner.status().message()));
      return;
    }
    const ShellCommand* saved_current = current_;
    const absl::flat_hash_set<std::string>* saved_functions = functions_;
    contexts_.emplace_back(how);
    ClassifyScript(*inner, substitutions_only ? 1 : 0);
    contexts_.pop_back();
    functions_ = saved_functions;
    current_ = saved_current;
  }

  const ShellCommand& Command() const override { return *current_; }

 private:
  std::string WithContext(std::string reason) const {
    if (contexts_.empty()) return reason;
    return absl::StrCat(reason, " (inside ", contexts_.back(), ")");
  }

  // Commands nested less deeply than `min_depth` are skipped.
  void ClassifyScript(const ShellScript& script, int min_depth) {
    absl::flat_hash_set<std::string> functions;
    for (const ShellFunction& f : script.functions) functions.insert(f.name);
    functions_ = &functions;
    // A function that starts copies of itself in the background or a pipeline never stops
    // multiplying: :(){ :|:& };:
    for (const ShellFunction& f : script.functions) {
      for (size_t i = f.body_begin; i < f.body_end && i < script.commands.size(); ++i) {
        const ShellCommand& c = script.commands[i];
        if (!c.words.empty() && c.words[0].text == f.name && (c.background || c.in_pipeline)) {
          current_ = &c;
          Add(CommandRule::kSystemDestruction,
              absl::StrCat("the function ", f.name,
                           " keeps starting copies of itself (a fork "
                           "bomb), exhausting the machine"));
          break;
        }
      }
    }
    for (const ShellCommand& c : script.commands) {
      if (c.depth >= min_depth) ClassifySimple(c);
    }
    functions_ = nullptr;
  }

  void ClassifySimple(const ShellCommand& cmd) {
    current_ = &cmd;
    const size_t before = out_->size();
    ClassifyRedirects(cmd);
    if (cmd.compound) return;
    for (const ShellWord& a : cmd.assignments) ClassifyAssignment(a, *this);
    if (cmd.words.empty()) {
      if (out_->size() == before) {
        Add(CommandRule::kReadOnly, cmd.assignments.empty() ? "only redirects file descriptors"
                                                            : "only sets shell variables");
      }
      return;
    }
    ClassifyArgv(cmd.words);
    current_ = &cmd;
  }

  void ClassifyRedirects(const ShellCommand& cmd) {
    for (const ShellRedirect& r : cmd.redirects) {
      if (r.target.flags & kWordProcessSubst) continue;  // a pipe to a command seen on its own
      const bool dup_to_file = r.op == RedirectOp::kDupWrite && !r.target.text.empty() &&
                               r.target.text.find_first_not_of("0123456789-") != std::string::npos;
      if (r.op == RedirectOp::kWrite || r.op == RedirectOp::kAppend ||
          r.op == RedirectOp::kWriteBoth || r.op == RedirectOp::kAppendBoth ||
          r.op == RedirectOp::kReadWrite || dup_to_file) {
        CommandRule rule;
        std::string reason;
        if (DescribeWrite(r.target, "redirects output to", &rule, &reason)) {
          Add(rule, std::move(reason));
        }
      } else if (r.op == RedirectOp::kRead && (absl::StartsWith(r.target.text, "/dev/tcp/") ||
                                               absl::StartsWith(r.target.text, "/dev/udp/"))) {
        Add(CommandRule::kNetworkAccess,
            absl::StrCat("reads from the network socket ", r.target.text));
      }
    }
  }

  void ClassifyArgv(Args argv) {
    if (argv.empty()) return;
    if (++argv_depth_ > 2 * limits_.max_nesting) {
      Add(CommandRule::kUnparseable, "wrappers nest too deep to analyse");
      --argv_depth_;
      return;
    }
    ClassifyArgvBody(argv);
    --argv_depth_;
  }

  void ClassifyArgvBody(Args argv) {
    for (const ShellWord& w : argv) {
      if (!BraceExpandable(w)) continue;
      std::vector<ShellWord> expanded;
      for (const ShellWord& x : argv) {
        if (!BraceExpandable(x)) {
          expanded.push_back(x);
          continue;
        }
        std::vector<std::string> words;
        if (!ExpandBraces(x.text, &words, kMaxBraceWords)) {
          Add(CommandRule::kUnparseable, "brace expansion produces too many words to analyse");
          return;
        }
        for (std::string& text : words) {
          ShellWord y;
          y.flags = x.flags & ~kWordBrace;
          if (!absl::StartsWith(text, "~")) y.flags &= ~kWordTilde;
          y.raw = text;
          y.text = std::move(text);
          expanded.push_back(std::move(y));
        }
      }
      ClassifyArgvBody(expanded);
      return;
    }
    const ShellWord& w0 = argv[0];
    if (!w0.literal()) {
      Add(CommandRule::kDynamicCode,
          absl::StrCat("the command name is only known at run time (", Shorten(w0.raw), ")"));
      return;
    }
    const std::string& t = w0.text;
    if (t.empty()) {
      Add(CommandRule::kUnknownProgram, "runs an empty command name");
      return;
    }
    if (functions_ != nullptr && functions_->contains(t)) {
      Add(CommandRule::kReadOnly,
          absl::StrCat("calls the shell function ", t, " (its body is evaluated on its own)"));
      return;
    }
    absl::string_view base = t;
    const size_t slash = base.rfind('/');
    if (slash != absl::string_view::npos) {
      absl::string_view dir = base.substr(0, slash);
      base = base.substr(slash + 1);
      if (!IsSystemProgramDir(dir)) {
        Add(CommandRule::kOpaqueProgram,
            absl::StrCat("runs ", t, ", a program from outside the system directories"));
      }
      if (base.empty()) return;
    }
    // macOS and Windows file systems are case-insensitive: SUDO is sudo there.
    std::string name = absl::AsciiStrToLower(base);
    if (absl::EndsWith(name, ".exe")) name.resize(name.size() - 4);
    ClassifyProgram(name, argv, *this);
  }

  const ShellParseLimits& limits_;
  std::vector<CommandFinding>* out_;
  const ShellCommand* current_ = nullptr;
  const absl::flat_hash_set<std::string>* functions_ = nullptr;
  std::vector<std::string> contexts_;  // how each level of nested shell code was passed
  int argv_depth_ = 0;
  size_t work_ = 0;
};

}  // namespace

CommandClassification ClassifyCommandLine(absl::string_view command_line,
                                          const ShellParseLimits& limits) {
  CommandClassification result;
  Classifier classifier(limits, &result.findings);
  classifier.ClassifyTop(command_line);
  return result;
}

}  // namespace ccsandbox::policy
