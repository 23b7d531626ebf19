#include "broker/cli_parse.h"

#include <algorithm>
#include <exception>
#include <map>
#include <memory>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "broker/cli_forms.h"
#include "policy/plan/input_limits.h"

namespace ccsandbox::broker {
namespace {

constexpr int kUsageExit = 125;  // cli_exit.h's kToolError: policy check's 1 and 2 are verdicts

// One line each in the "Subcommands:" lists of --help.
const std::map<std::string, std::string>& Descriptions() {
  static const std::map<std::string, std::string>* const descriptions =
      new std::map<std::string, std::string>{
          {"probe", "what this host's broker can enforce"},
          {"run", "run a command in a sandbox: a session of its own, or --session's"},
          {"session", "sessions that outlive one command, kept until stopped"},
          {"session start", "start a session; prints its id"},
          {"session ls", "one line per session: id, backend, state"},
          {"session show", "the session's state, backend and details"},
          {"session stop", "stop the session and everything running in it"},
          {"session suspend", "freeze the session's sandbox"},
          {"session resume", "thaw the session's sandbox"},
          {"policy", "what a mode's command policy decides"},
          {"policy check", "the decision for one command line; exits 0 allow, 1 prompt, 2 deny"},
          {"plan",
           "what a spec becomes on this host (bwrap argv, deny sets, create guard, egress), "
           "running nothing"},
          {"term",
           "an interactive terminal on this one: the host shell by default (reported as none), "
           "the terminal profile with --backend=native"},
          {"doctor",
           "everything to check by hand on this host, and a live self-test; exits 1 when "
           "something required is missing"},
      };
  return *descriptions;
}

constexpr char kExitCodes[] =
    "Exit codes: run: the command's, 128+signal when it was killed, 125 when sandboxctl, the "
    "broker or the launcher failed or the session does not exist; session, probe, plan: 0, or "
    "125; "
    "policy check: 0 allow, 1 prompt, 2 deny, 125; term: the shell's, 128+signal, 125; doctor: 0, "
    "1 when a check FAILs, 125. A usage "
    "error is 125 everywhere, --help 0.";

// --help's usage lines: those of every form `path` starts (every form at the top).
class UsageFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string) const override {
    std::vector<std::string> path;
    for (const CLI::App* a = app; a->get_parent() != nullptr; a = a->get_parent()) {
      path.insert(path.begin(), a->get_name());
    }
    std::string out = "Usage:\n";
    for (const CliForm& form : CliForms()) {
      const std::vector<std::string> form_path = FormPath(form.form);
      if (form_path.size() < path.size() ||
          !std::equal(path.begin(), path.end(), form_path.begin())) {
        continue;
      }
      absl::StrAppend(&out, "  ", UsageLine(form), "\n");
    }
    return out;
  }
};

// The CLI11 tree of every form, the values its options fill in.
class CommandTree {
 public:
  CommandTree() {
    root_.formatter(std::make_shared<UsageFormatter>());
    root_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    root_.footer(kExitCodes);
    root_.add_flag("--version", version_, "print the release and the commit, and exit");
    Configure(root_);
    for (const CliFlag& flag : CliFlags()) AddFlag(root_, flag.name);
    for (const CliForm& form : CliForms()) {
      CLI::App* app = &root_;
      std::vector<std::string> path;
      for (const std::string& word : FormPath(form.form)) {
        path.push_back(word);
        CLI::App* sub = Find(*app, word);
        if (sub == nullptr) {
          sub = app->add_subcommand(word, Descriptions().at(absl::StrJoin(path, " ")));
          Configure(*sub);
          AddFlag(*sub, "broker");
          AddFlag(*sub, "json");
        }
        app = sub;
      }
      for (absl::string_view flag : form.flags) AddFlag(*app, flag);
      if (form.operands == "ID" && app->get_option_no_throw("ID") == nullptr) {
        app->add_option("ID", id_, "the session's id (session ls lists them)")->type_name("");
      } else if (absl::StartsWith(form.operands, "--") &&
                 app->get_option_no_throw("ARGS") == nullptr) {
        app->add_option("ARGS", words_, "after --: " + std::string(form.operands.substr(3)))
            ->type_name("");
      }
    }
  }

  CLI::App& root() { return root_; }
  const CLI::App& root() const { return root_; }
  bool version_asked() const { return version_; }

  // Flags given with an empty value, which CLI11 did not see.
  void SetEmpty(std::vector<std::string> names) {
    for (const std::string& name : names) text_[name].clear();
    empty_ = std::move(names);
  }

  // The dashed names of the flags given, anywhere, in CliFlags() order.
  std::vector<std::string> Given() const {
    std::vector<std::string> given;
    for (const CliFlag& flag : CliFlags()) {
      if (std::find(empty_.begin(), empty_.end(), flag.name) != empty_.end()) {
        given.emplace_back(flag.name);
        continue;
      }
      auto found = options_.find(std::string(flag.name));
      if (found == options_.end()) continue;
      for (const CLI::Option* option : found->second) {
        if (option->count() > 0) {
          given.emplace_back(flag.name);
          break;
        }
      }
    }
    return given;
  }

  std::string Text(absl::string_view name) const { return text_.at(std::string(name)); }
  bool Switch(absl::string_view name) const { return switches_.at(std::string(name)); }
  const std::string& id() const { return id_; }
  bool id_given() const {
    const CLI::App* leaf = Leaf();
    const CLI::Option* option = leaf->get_option_no_throw("ID");
    return option != nullptr && option->count() > 0;
  }
  const std::vector<std::string>& words() const { return words_; }

  // The subcommands selected, outermost first.
  std::vector<const CLI::App*> Chain() const {
    std::vector<const CLI::App*> chain;
    for (const CLI::App* app = &root_;;) {
      const std::vector<CLI::App*> selected = app->get_subcommands();
      if (selected.empty()) return chain;
      app = selected[0];
      chain.push_back(app);
    }
  }
  const CLI::App* Leaf() const {
    std::vector<const CLI::App*> chain = Chain();
    return chain.empty() ? &root_ : chain.back();
  }

 private:
  static CLI::App* Find(CLI::App& app, const std::string& name) {
    std::vector<CLI::App*> subs =
        app.get_subcommands([&name](const CLI::App* sub) { return sub->get_name() == name; });
    return subs.empty() ? nullptr : subs[0];
  }

  static void Configure(CLI::App& app) {
    // Unknown flags and stray words are collected, and refused by the caller with its message.
    app.allow_extras();
    // One subcommand per level: a later word that names one is an operand (`session show ls`).
    app.require_subcommand(0, 1);
  }

  void AddFlag(CLI::App& app, absl::string_view name) {
    const std::string dashed = absl::StrCat("--", name);
    if (app.get_option_no_throw(dashed) != nullptr) return;
    const CliFlag* flag = FindCliFlag(name);
    CLI::Option* option;
    if (flag->value.empty()) {
      option = app.add_flag(dashed, switches_[std::string(name)], std::string(flag->help));
    } else {
      option = app.add_option(dashed, text_[std::string(name)], std::string(flag->help))
                   ->type_name(std::string(flag->value));
    }
    options_[std::string(name)].push_back(option);
  }

  CLI::App root_{"sandboxctl: the command-line client of the ccsandbox broker", "sandboxctl"};
  bool version_ = false;
  std::map<std::string, std::string> text_;
  std::map<std::string, bool> switches_;
  std::map<std::string, std::vector<CLI::Option*>> options_;
  std::string id_;
  std::vector<std::string> words_;
  std::vector<std::string> empty_;
};

bool IsFlagName(absl::string_view name) { return FindCliFlag(name) != nullptr; }

// --no_filename_denies -> --no-filename-denies, -json -> --json: the spellings Abseil took.
std::vector<std::string> DashedArgs(std::vector<std::string> args) {
  for (std::string& arg : args) {
    if (arg.size() < 3 || arg[0] != '-') continue;
    const size_t start = arg[1] == '-' ? 2 : 1;
    const size_t end = std::min(arg.find('='), arg.size());
    std::string name = arg.substr(start, end - start);
    std::replace(name.begin(), name.end(), '_', '-');
    if (IsFlagName(name)) arg = absl::StrCat("--", name, arg.substr(end));
  }
  return args;
}

// Takes `--NAME=` out of `args` for the value flags: CLI11 reads an empty value as a missing
// one, sandboxctl as given and empty (`run --session=` is refused as an empty session id).
std::vector<std::string> TakeEmptyValues(std::vector<std::string>& args) {
  std::vector<std::string> names;
  auto empty = [&names](const std::string& arg) {
    if (!absl::StartsWith(arg, "--") || !absl::EndsWith(arg, "=")) return false;
    const std::string name = arg.substr(2, arg.size() - 3);
    if (!IsFlagName(name) || FindCliFlag(name)->value.empty()) return false;
    names.push_back(name);
    return true;
  };
  args.erase(std::remove_if(args.begin(), args.end(), empty), args.end());
  return names;
}

bool JsonAsked(const std::vector<std::string>& args) {
  bool json = false;
  for (const std::string& arg : args) {
    if (arg == "--json") json = true;
    if (absl::StartsWith(arg, "--json=")) {
      const std::string value = arg.substr(7);
      json = value == "true" || value == "1" || value == "on" || value == "yes";
    }
  }
  return json;
}

std::string FlagName(absl::string_view arg) {
  arg.remove_prefix(std::min(arg.find_first_not_of('-'), arg.size()));
  return std::string(arg.substr(0, arg.find('=')));
}

std::string SeeHelp(const std::vector<std::string>& path) {
  return absl::StrCat(" (see sandboxctl ", absl::StrJoin(path, " "), path.empty() ? "" : " ",
                      "--help)");
}

// What is wrong with a parsed command line, or OK: in order, a missing or unknown subcommand,
// a flag the form does not take, an unknown flag, a stray word, the form's own operands.
class Checker {
 public:
  // `after`: the words after a bare "--" (`double_dash`), which CLI11 never saw.
  Checker(const CommandTree& tree, std::vector<std::string> after, bool double_dash)
      : tree_(tree), after_(std::move(after)), double_dash_(double_dash) {
    for (const CLI::App* app : tree.Chain()) path_.push_back(app->get_name());
    std::vector<const CLI::App*> apps = {&tree.root()};
    for (const CLI::App* app : tree.Chain()) apps.push_back(app);
    for (const CLI::App* app : apps) {
      for (const std::string& extra : app->remaining()) {
        (absl::StartsWith(extra, "-") ? extra_flags_ : extra_words_).push_back(extra);
      }
    }
  }

  absl::Status Check(CliCommand& command) {
    if (absl::Status s = CheckSubcommand(); !s.ok()) return s;
    command.form = Form();
    const std::string form = command.form;
    std::vector<std::string> given = tree_.Given();
    for (const std::string& extra : extra_flags_) {
      if (IsFlagName(FlagName(extra))) given.push_back(FlagName(extra));
    }
    if (absl::Status s = CheckFormFlags(form, given); !s.ok()) return s;
    if (!extra_flags_.empty()) {
      return Usage(absl::StrCat(form, ": unknown flag ", policy::QuoteInput(extra_flags_[0]),
                                SeeHelp(path_)));
    }
    const CliForm& entry = FindForm(form);
    std::vector<std::string> stray = extra_words_;
    if (entry.operands == "ID") {
      // `session stop -- -odd-id`: an id that looks like a flag.
      if (!tree_.id_given() && !after_.empty()) {
        command.operands = {after_[0]};
        stray.insert(stray.end(), after_.begin() + 1, after_.end());
      } else {
        command.operands = {tree_.id()};
        stray.insert(stray.end(), after_.begin(), after_.end());
      }
    } else if (absl::StartsWith(entry.operands, "--")) {
      command.operands = tree_.words();
      command.operands.insert(command.operands.end(), after_.begin(), after_.end());
    } else if (double_dash_) {
      stray.push_back(after_.empty() ? "--" : after_[0]);
    }
    if (!stray.empty()) {
      return Usage(absl::StrCat(form, ": unexpected argument ", policy::QuoteInput(stray[0]),
                                entry.operands == "ID"   ? " (one session id at a time)"
                                : entry.operands.empty() ? " (it takes no arguments)"
                                                         : ""));
    }
    if (entry.operands == "ID" && !tree_.id_given() && after_.empty()) {
      return Usage(absl::StrCat(form, ": missing session id (sandboxctl ", form,
                                " ID; session ls lists them)"));
    }
    return CheckValues(entry, command);
  }

 private:
  static absl::Status Usage(const std::string& message) {
    return absl::InvalidArgumentError(message);
  }

  static const CliForm& FindForm(absl::string_view form) {
    return *std::find_if(CliForms().begin(), CliForms().end(),
                         [form](const CliForm& f) { return f.form == form; });
  }

  // The leaf must be a form's: `sandboxctl`, `sandboxctl session` name none.
  absl::Status CheckSubcommand() const {
    const CLI::App* leaf = tree_.Leaf();
    std::vector<std::string> names;
    for (const CLI::App* sub : leaf->get_subcommands([](const CLI::App*) { return true; })) {
      names.push_back(sub->get_name());
    }
    if (names.empty()) return absl::OkStatus();
    std::string expected = absl::StrJoin(names.begin(), names.end() - 1, ", ");
    absl::StrAppend(&expected, names.size() > 1 ? " or " : "", names.back());
    std::string unknown;
    if (!extra_words_.empty()) {
      unknown = policy::QuoteInput(extra_words_[0]);
    } else if (!after_.empty()) {
      unknown = policy::QuoteInput(after_[0]);
    }
    if (path_.empty()) {
      return Usage(unknown.empty() ? absl::StrCat("missing subcommand: ", expected, SeeHelp(path_))
                                   : absl::StrCat("unknown subcommand ", unknown, ": expected ",
                                                  expected, SeeHelp(path_)));
    }
    const std::string where = absl::StrJoin(path_, " ");
    if (names.size() == 1) {
      return Usage(absl::StrCat(where, ": expected '", names[0], "'",
                                unknown.empty() ? "" : absl::StrCat(", got ", unknown),
                                SeeHelp(path_)));
    }
    return Usage(unknown.empty() ? absl::StrCat(where, ": missing verb: ", expected, SeeHelp(path_))
                                 : absl::StrCat(where, ": unknown verb ", unknown, ": expected ",
                                                expected, SeeHelp(path_)));
  }

  // Among the forms of the selected subcommands, the one whose selecting flag was given.
  std::string Form() const {
    const std::vector<std::string> given = tree_.Given();
    std::string plain;
    for (const CliForm& form : CliForms()) {
      if (FormPath(form.form) != path_) continue;
      const size_t flag = form.form.find(" --");
      if (flag == absl::string_view::npos) {
        plain = std::string(form.form);
        continue;
      }
      const std::string selector(form.form.substr(flag + 3));
      if (std::find(given.begin(), given.end(), selector) != given.end()) {
        return std::string(form.form);
      }
    }
    return plain;
  }

  absl::Status CheckValues(const CliForm& entry, CliCommand& command) const {
    const std::string form(entry.form);
    if (entry.operands == "ID" && command.operands[0].empty()) {
      return Usage(absl::StrCat(form, ": empty session id"));
    }
    // The spec names its own binds and working directory: a --workdir beside it would be ignored.
    if (form == "session start" && !command.spec.empty() && !command.workdir.empty()) {
      return Usage(
          "session start: --workdir chooses the directory bound without --spec; with a spec, set "
          "its guestWorkdir (or give --workdir to each run --session)");
    }
    if (form == "run --session" && command.session.empty()) {
      return Usage("run --session: empty session id");
    }
    if (FormPath(form)[0] == "run") {
      if (command.operands.empty()) {
        return Usage(absl::StrCat("run: no command given (", UsageLine(entry), ")"));
      }
      const std::string timeout = tree_.Text("timeout");
      if (!absl::SimpleAtod(timeout.empty() ? "0" : timeout, &command.timeout_seconds)) {
        return Usage(absl::StrCat("run: --timeout: ", policy::QuoteInput(timeout),
                                  " is not a number of seconds"));
      }
    }
    if (form == "plan") {
      if (command.spec.empty()) {
        return Usage("plan: --spec is required (sandboxctl plan --spec=FILE.json)");
      }
      if (!command.platform.empty() && command.platform != "linux" && command.platform != "macos") {
        return Usage(absl::StrCat("plan: --platform: ", policy::QuoteInput(command.platform),
                                  " is not a platform (linux or macos)"));
      }
    }
    if (form == "policy check") {
      if (command.mode.empty()) {
        return Usage("policy check: --mode is required (chat, review, plan or orchestrate)");
      }
      if (absl::StrJoin(command.operands, " ").empty()) {
        return Usage(
            "policy check: no command line given "
            "(sandboxctl policy check --mode=MODE -- 'COMMAND LINE')");
      }
    }
    return absl::OkStatus();
  }

  const CommandTree& tree_;
  const std::vector<std::string> after_;
  const bool double_dash_;
  std::vector<std::string> path_;
  std::vector<std::string> extra_flags_, extra_words_;
};

CliExit UsageError(const std::string& message, bool json) {
  return CliExit{.code = kUsageExit, .error = message, .json = json};
}

// ParseCommandLine but for exceptions other than CLI11's parse errors (a form without a
// description, an allocation failure), which its caller catches.
std::variant<CliCommand, CliExit> ParseOrThrow(const std::vector<std::string>& argv,
                                               const std::string& version_line) {
  // CLI11 parses the flags and words before a bare "--"; the words after it are operands as
  // they are (`run -- sh -c ...`), whatever they look like.
  const auto double_dash = std::find(argv.begin() + (argv.empty() ? 0 : 1), argv.end(), "--");
  std::vector<std::string> args =
      DashedArgs(std::vector<std::string>(argv.begin() + (argv.empty() ? 0 : 1), double_dash));
  std::vector<std::string> empty_values = TakeEmptyValues(args);
  std::vector<std::string> after;
  if (double_dash != argv.end()) after.assign(double_dash + 1, argv.end());
  const bool json = JsonAsked(args);
  CommandTree tree;
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 pops from the back
  try {
    tree.root().parse(reversed);
  } catch (const CLI::CallForHelp&) {
    return CliExit{.code = 0, .out = tree.root().help(), .json = json};
  } catch (const CLI::ParseError& e) {
    std::vector<std::string> path;
    for (const CLI::App* app : tree.Chain()) path.push_back(app->get_name());
    return UsageError(
        absl::StrCat(absl::StrJoin(path, " "), path.empty() ? "" : ": ", e.what(), SeeHelp(path)),
        json);
  }
  if (tree.version_asked()) return CliExit{.code = 0, .out = version_line, .json = json};
  tree.SetEmpty(std::move(empty_values));
  CliCommand command{.broker = tree.Text("broker"),
                     .json = tree.Switch("json"),
                     .session = tree.Text("session"),
                     .spec = tree.Text("spec"),
                     .workdir = tree.Text("workdir"),
                     .backend = tree.Text("backend"),
                     .mode = tree.Text("mode"),
                     .platform = tree.Text("platform"),
                     .read_stdin = tree.Switch("stdin"),
                     .no_filename_denies = tree.Switch("no-filename-denies")};
  if (absl::Status valid =
          Checker(tree, std::move(after), double_dash != argv.end()).Check(command);
      !valid.ok()) {
    return UsageError(std::string(valid.message()), json);
  }
  return command;
}

}  // namespace

std::variant<CliCommand, CliExit> ParseCommandLine(const std::vector<std::string>& argv,
                                                   const std::string& version_line) {
  try {
    return ParseOrThrow(argv, version_line);
  } catch (const std::exception& e) {
    return UsageError(absl::StrCat("cannot parse the command line: ", e.what()), false);
  } catch (...) {
    return UsageError("cannot parse the command line", false);
  }
}

std::string BrokerAddress(const std::string& flag, const char* env) {
  std::string address = flag;
  if (address.empty() && env != nullptr) address = env;
  // The installed service's socket (packaging/systemd) unless told otherwise.
  if (address.empty()) address = "unix:/run/ccsandbox-broker/broker.sock";
  if (absl::StartsWith(address, "/")) address = "unix:" + address;
  return address;
}

}  // namespace ccsandbox::broker
