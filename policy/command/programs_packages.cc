// Language package managers (install and publish rules: npm, yarn, pip, uv, cargo, go, gem,
// dotnet …) and build tools. System package managers are programs_system_packages.cc.
#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "policy/command/program_util.h"

namespace ccsandbox::policy::programs {
namespace {

// ---------------------------------------------------------------------------------------------
// Package managers. Installing runs the package's own install scripts and changes what code
// later commands run; publishing changes what everyone else installs.

// npm's subcommands: a row decides when the subcommand is one of `subs` and its test holds.
struct NpmTest {
  absl::string_view any_word;  // a word after the subcommand is one of these (space-separated)
  int operands = -1;           // 1: an operand follows the subcommand; 0: none; -1: either
};

struct NpmRow {
  absl::string_view subs;  // space-separated, with npm's aliases and accepted misspellings
  NpmTest when;
  CommandRule rule;
  absl::string_view what;  // the reason reads "<sub> <what>"…
  bool names_sub = true;   // …or `what` alone
};

// Tried in order; a subcommand in no row is not a known npm command.
const NpmRow kNpmRows[] = {
    {"install i in ins inst insta instal isnt isnta isntal isntall add ci clean-install ic "
     "install-clean isntall-clean install-test it install-ci-test cit update up upgrade udpate "
     "link ln rebuild rb dedupe ddp exec x create",
     {},
     R::kInstallPackage,
     "installs packages"},
    {"init", {.operands = 1}, R::kInstallPackage, "installs packages"},  // npm init <initializer>
    {"audit", {.any_word = "fix"}, R::kInstallPackage, "audit fix installs packages", false},
    {"dist-tag dist-tags owner author access",
     {.any_word = "ls list get"},
     R::kNetworkAccess,
     "reads from the registry"},
    {"publish unpublish deprecate undeprecate dist-tag dist-tags owner author access trust",
     {},
     R::kPublishPackage,
     "publishes a package"},
    {"run run-script rum urn test tst t start stop restart explore",
     {},
     R::kOpaqueProgram,
     "runs scripts from package.json"},
    {"ls list la ll view info show v outdated search s se find help help-search get root bin "
     "prefix whoami ping doctor explain why fund query sbom diff docs home bugs repo audit -v "
     "--version -h --help completion",
     {},
     R::kNetworkAccess,
     "only reads"},
    {"config c", {.any_word = "get list ls"}, R::kReadOnly, "config reads configuration", false},
    {"config c", {}, R::kMutating, "config changes configuration", false},
    {"version", {.operands = 0}, R::kReadOnly, "prints versions"},
    {"pkg", {.any_word = "get"}, R::kReadOnly, "pkg get reads package.json", false},
    {"uninstall remove rm r un unlink prune cache pack version set-script pkg login adduser "
     "add-user logout token shrinkwrap init set edit star unstar team org hook profile stars",
     {},
     R::kMutating,
     "changes local state or the registry"},
};

// `after` is the subcommand's index in argv.
bool NpmTestHolds(const NpmTest& test, Args argv, size_t after) {
  if (!test.any_word.empty()) {
    bool found = false;
    for (size_t k = after + 1; k < argv.size() && !found; ++k) {
      found = InList(argv[k].text, test.any_word);
    }
    if (!found) return false;
  }
  if (test.operands >= 0 && (FirstOperand(argv, after + 1) < argv.size()) != (test.operands > 0)) {
    return false;
  }
  return true;
}

void Npm(const Call& c) {
  size_t i = 0;
  const std::string sub =
      SubWord(c, &i, "--prefix -w --workspace --registry --cache --userconfig --loglevel -C");
  if (DynamicSub(c, sub)) return;
  if (sub.empty()) return c.Add(R::kReadOnly, "prints its usage or version");
  for (const NpmRow& row : kNpmRows) {
    if (!InList(sub, row.subs) || !NpmTestHolds(row.when, c.argv, i)) continue;
    if (!row.names_sub) return c.Add(row.rule, row.what);
    return c.Add(row.rule, absl::StrCat(sub, " ", row.what));
  }
  c.Add(R::kUnknownProgram, absl::StrCat(sub, " is not a known npm command"));
}

// yarn, pnpm and bun: an unknown first word is a package.json script.
void JsPackageManager(const Call& c) {
  size_t i = 0;
  const std::string sub = SubWord(c, &i, "--cwd -C --dir --filter -F --workspace -w");
  if (DynamicSub(c, sub)) return;
  if (sub.empty()) {
    if (c.name == "bun") return c.Add(R::kReadOnly, "prints its usage");
    if (AnyWord(c.argv, 1, {"--version", "-v", "-V", "--help", "-h"})) {
      return c.Add(R::kReadOnly, "prints its version");
    }
    return Install(c, "(without a command)");
  }
  if (OneOf(sub, {"add", "install", "i", "up", "upgrade", "update", "upgrade-interactive", "dlx",
                  "create", "link", "import", "rebuild", "rb", "fetch", "install-test", "it",
                  "setup", "x"}) ||
      (sub == "global" && AnyWord(c.argv, i + 1, {"add", "upgrade"}))) {
    return Install(c, sub);
  }
  if (sub == "publish" || (sub == "npm" && AnyWord(c.argv, i + 1, {"publish"}))) {
    return Publish(c, sub);
  }
  if (OneOf(sub, {"info",     "list",       "ls",    "ll",    "why",     "outdated",  "audit",
                  "licenses", "bin",        "root",  "owner", "version", "--version", "-v",
                  "help",     "workspaces", "store", "pm",    "explain", "config"}) &&
      !AnyWord(c.argv, i + 1,
               {"set", "delete", "add", "rm", "remove", "prune", "fix", "major", "minor", "patch",
                "apply"})) {
    if (OneOf(sub, {"version", "workspaces", "store", "pm", "config"}) &&
        FirstOperand(c.argv, i + 1) < c.argv.size() &&
        !AnyWord(c.argv, i + 1,
                 {"get", "list", "ls", "info", "path", "status", "bin", "hash", "cache"})) {
      return c.Add(R::kMutating, absl::StrCat(sub, " changes project or tool state"));
    }
    return c.Add(R::kNetworkAccess, absl::StrCat(sub, " only reads"));
  }
  if (OneOf(sub, {"remove", "rm",     "uninstall",  "un",           "unlink", "prune",
                  "cache",  "pack",   "version",    "init",         "set",    "config",
                  "login",  "logout", "patch",      "patch-commit", "dedupe", "workspaces",
                  "store",  "pm",     "constraints"})) {
    return c.Add(R::kMutating, absl::StrCat(sub, " changes project or tool state"));
  }
  if (sub == "exec" && c.name != "bun") {
    c.Add(R::kOpaqueProgram, "exec runs a program from the project's dependencies");
    c.Run(FirstOperand(c.argv, i + 1));
    return;
  }
  c.Add(R::kOpaqueProgram, absl::StrCat(sub, " runs a script or program from the project"));
}

void Npx(const Call& c) {
  if (AnyWord(c.argv, 1, {"--no-install", "--offline", "--no"})) {
    return c.Add(R::kOpaqueProgram, "runs a program from the project's dependencies");
  }
  if (IsVersionFlag(c)) return c.Add(R::kReadOnly, "prints its version");
  Install(c, "(fetch and run)");
}

void Cargo(const Call& c) {
  size_t i = 0;
  std::string sub = SubWord(c, &i, "--manifest-path --config -Z --color --target-dir -C");
  if (absl::StartsWith(sub, "+")) sub = SubWord(c, &i, "", i + 1);  // cargo +nightly build
  if (DynamicSub(c, sub)) return;
  if (sub.empty()) return c.Add(R::kReadOnly, "prints its usage or version");
  if (OneOf(sub, {"install", "add", "fetch", "binstall"})) return Install(c, sub);
  if (OneOf(sub, {"publish", "yank", "owner", "login", "logout"})) {
    if (OneOf(sub, {"login", "logout"})) return c.Add(R::kMutating, "changes registry tokens");
    if (sub == "owner" && AnyWord(c.argv, i + 1, {"-l", "--list"})) {
      return c.Add(R::kNetworkAccess, "owner --list reads from the registry");
    }
    return Publish(c, sub);
  }
  if (OneOf(sub, {"build", "b",       "run",      "r",         "test",   "t",     "bench",
                  "check", "c",       "clippy",   "doc",       "d",      "rustc", "rustdoc",
                  "miri",  "nextest", "llvm-cov", "tarpaulin", "expand", "watch"})) {
    return c.Add(R::kOpaqueProgram,
                 absl::StrCat(sub, " compiles and runs project code (build scripts, macros)"));
  }
  if (sub == "fmt" && AnyWord(c.argv, i + 1, {"--check"})) {
    return c.Add(R::kReadOnly, "fmt --check only checks formatting");
  }
  if (OneOf(sub,
            {"search",         "tree",  "metadata",      "version",        "--version", "-V",
             "locate-project", "pkgid", "read-manifest", "verify-project", "info",      "help",
             "--help",         "-h",    "--list",        "report",         "outdated",  "audit",
             "deny",           "udeps"})) {
    return c.Add(R::kNetworkAccess, absl::StrCat(sub, " only reads"));
  }
  if (OneOf(sub, {"fmt", "clean", "update", "remove", "rm", "new", "init", "generate-lockfile",
                  "vendor", "fix", "uninstall", "package", "config", "upgrade", "sort"})) {
    return c.Add(R::kMutating, absl::StrCat(sub, " changes the project"));
  }
  c.Add(R::kUnknownProgram,
        absl::StrCat(sub, " is not a known cargo command (a cargo-", sub, " plug-in would run)"));
}

void Rustup(const Call& c) {
  size_t i = 0;
  const std::string sub = SubWord(c, &i);
  if (sub.empty() || OneOf(sub, {"show", "which", "--version", "-V", "doc", "help"})) {
    return c.Add(R::kReadOnly, "only reads");
  }
  if (sub == "run") {
    c.Run(FirstOperand(c.argv, i + 2));
    return;
  }
  if (OneOf(sub, {"toolchain", "target", "component"}) && AnyWord(c.argv, i + 1, {"list"})) {
    return c.Add(R::kReadOnly, "lists toolchains");
  }
  Install(c, sub);
}

void Go(const Call& c) {
  size_t i = 0;
  const std::string sub = SubWord(c, &i);
  if (DynamicSub(c, sub)) return;
  if (OneOf(sub, {"", "version", "env", "list", "vet", "doc", "help", "--version"})) {
    if (sub == "env" && AnyWord(c.argv, i + 1, {"-w", "-u"})) {
      return c.Add(R::kMutating, "env -w changes go's configuration");
    }
    return c.Add(R::kReadOnly, absl::StrCat(sub, " only reads"));
  }
  if (sub == "install" || sub == "get") return Install(c, sub);
  if (sub == "mod") {
    const std::string verb = SubWord(c, nullptr, "", i + 1);
    if (OneOf(verb, {"download", "tidy"})) return Install(c, absl::StrCat("mod ", verb));
    if (OneOf(verb, {"graph", "why", "verify"})) return c.Add(R::kReadOnly, "mod only reads");
    if (verb == "edit" && AnyWord(c.argv, i + 2, {"-json", "-print"})) {
      return c.Add(R::kReadOnly, "mod edit -json only prints");
    }
    return c.Add(R::kMutating, absl::StrCat("mod ", verb, " changes go.mod"));
  }
  if (OneOf(sub, {"build", "run", "test", "generate", "tool", "bug"})) {
    return c.Add(R::kOpaqueProgram, absl::StrCat(sub, " compiles and runs project code"));
  }
  c.Add(R::kMutating, absl::StrCat(sub, " changes the project or caches"));
}

void Gem(const Call& c) {
  size_t i = 0;
  const std::string sub = SubWord(c, &i);
  if (OneOf(sub, {"install", "i", "update"})) return Install(c, sub);
  if (OneOf(sub, {"push", "yank", "owner"})) return Publish(c, sub);
  if (OneOf(sub, {"", "list", "search", "info", "env", "which", "contents", "query",
                  "specification", "dependency", "help", "outdated", "--version", "-v"})) {
    return c.Add(R::kReadOnly, absl::StrCat(sub, " only reads"));
  }
  c.Add(R::kMutating, absl::StrCat(sub, " changes installed gems"));
}

void Bundle(const Call& c) {
  size_t i = 0;
  const std::string sub = SubWord(c, &i);
  if (OneOf(sub, {"", "install", "update", "add", "i"})) return Install(c, sub);
  if (sub == "exec") {
    c.Add(R::kOpaqueProgram, "exec runs a program with the bundle's gems");
    c.Run(FirstOperand(c.argv, i + 1));
    return;
  }
  if (OneOf(sub, {"check", "list", "show", "info", "outdated", "--version", "version", "help",
                  "licenses", "platform", "doctor"})) {
    return c.Add(R::kReadOnly, absl::StrCat(sub, " only reads"));
  }
  c.Add(R::kMutating, absl::StrCat(sub, " changes the bundle"));
}

void Dotnet(const Call& c) {
  size_t i = 0;
  const std::string sub = SubWord(c, &i);
  if (sub == "add" && AnyWord(c.argv, i + 1, {"package"})) return Install(c, "add package");
  if (sub == "tool" && AnyWord(c.argv, i + 1, {"install", "update", "restore"})) {
    return Install(c, "tool install");
  }
  if (sub == "restore") return Install(c, sub);
  if (sub == "nuget" && AnyWord(c.argv, i + 1, {"push", "delete"})) return Publish(c, "nuget push");
  if (OneOf(sub, {"", "--version", "--info", "--list-sdks", "--list-runtimes", "list", "help",
                  "--help"})) {
    return c.Add(R::kReadOnly, absl::StrCat(sub, " only reads"));
  }
  if (OneOf(sub, {"build", "run", "test", "watch", "publish", "pack", "msbuild", "exec"})) {
    return c.Add(R::kOpaqueProgram, absl::StrCat(sub, " compiles and runs project code"));
  }
  c.Add(R::kMutating, absl::StrCat(sub, " changes the project"));
}

// Build tools: their recipes are project code the policy cannot see.
void BuildTool(const Call& c) {
  if (IsVersionFlag(c)) return c.Add(R::kReadOnly, "prints its version or help");
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& t = c.argv[i].text;
    if ((OneOf(c.name, {"mvn", "mvnw"}) && t == "deploy") ||
        (OneOf(c.name, {"gradle", "gradlew"}) && absl::StartsWith(t, "publish")) ||
        (OneOf(c.name, {"lerna", "changeset", "vsce", "ovsx"}) && t == "publish") ||
        (OneOf(c.name, {"flit", "hatch"}) && t == "publish")) {
      return Publish(c, t);
    }
  }
  c.Add(R::kOpaqueProgram, "runs project-defined build or test code");
}

}  // namespace

// `prefix` names how pip was reached ("-m pip", "pip" for uv pip); "" when it is the program.
void Pip(const Call& c, Args argv, absl::string_view prefix) {
  const std::string what = prefix.empty() ? std::string() : absl::StrCat(prefix, " ");
  size_t i = FirstOperand(argv, 1,
                          "--log --proxy --retries --timeout --exists-action "
                          "--trusted-host --cert --client-cert --cache-dir "
                          "--python");
  if (i >= argv.size()) return c.Add(R::kReadOnly, absl::StrCat(what, "prints its usage"));
  if (!argv[i].literal()) {
    c.Add(R::kDynamicCode, "runs a subcommand only known at run time");
    return;
  }
  const std::string& sub = argv[i].text;
  if (OneOf(sub, {"install", "download", "wheel"})) {
    if (sub == "install" && AnyWord(argv, i + 1, {"--dry-run"})) {
      return c.Add(R::kNetworkAccess, absl::StrCat(what, "install --dry-run only resolves"));
    }
    return c.Add(R::kInstallPackage, absl::StrCat(what, sub, " installs packages"));
  }
  if (OneOf(sub, {"uninstall"})) {
    return c.Add(R::kMutating, absl::StrCat(what, "uninstall removes packages"));
  }
  if (OneOf(sub, {"cache", "config"}) &&
      AnyWord(argv, i + 1, {"purge", "remove", "set", "unset", "edit"})) {
    return c.Add(R::kMutating, absl::StrCat(what, sub, " changes local state"));
  }
  if (OneOf(sub, {"freeze", "list", "show", "check", "search", "index", "inspect", "config",
                  "debug", "help", "hash", "cache", "completion", "lock", "--version", "-V"})) {
    return c.Add(R::kReadOnly, absl::StrCat(what, sub, " only reads"));
  }
  c.Add(R::kUnknownProgram, absl::StrCat(what, sub, " is not a known pip command"));
}

void PipProgram(const Call& c) { Pip(c, c.argv, ""); }

// Python-world project tools: uv, poetry, pdm, hatch, pipenv, pipx, conda and friends.
void PythonProjectTool(const Call& c) {
  size_t i = 0;
  const std::string sub = SubWord(c, &i, "-p --python --directory --project -n --name -C");
  if (DynamicSub(c, sub)) return;
  if (sub.empty() || IsVersionFlag(c)) return c.Add(R::kReadOnly, "prints its usage or version");
  if (c.name == "uv" && sub == "pip") {
    Pip(c, c.argv.subspan(i), "pip");
    return;
  }
  if (c.name == "uvx" || (c.name == "pipx" && sub == "run")) return Install(c, "(fetch and run)");
  if (OneOf(sub, {"add", "install", "sync", "update", "upgrade", "create", "inject", "reinstall",
                  "upgrade-all", "lock"}) ||
      ((sub == "tool" || sub == "self") &&
       AnyWord(c.argv, i + 1, {"install", "run", "add", "upgrade", "update"}))) {
    if (sub == "lock" && c.name != "conda") {
      return c.Add(R::kMutating, "lock rewrites the lock file");
    }
    return Install(c, sub);
  }
  if (sub == "publish" || sub == "upload") return Publish(c, sub);
  if (sub == "run" || sub == "exec") {
    c.Add(R::kOpaqueProgram, absl::StrCat(sub, " runs a program in the project environment"));
    size_t cmd = FirstOperand(c.argv, i + 1, "-n --name -p --prefix --with --python");
    c.Run(cmd);
    return;
  }
  if (OneOf(sub, {"show", "list", "info", "search", "check", "env", "tree", "--version", "version",
                  "help", "export", "config"}) &&
      FirstOperand(c.argv, i + 1) >= c.argv.size()) {
    return c.Add(R::kReadOnly, absl::StrCat(sub, " only reads"));
  }
  if (OneOf(sub, {"show", "list", "info", "search", "tree", "help", "env"})) {
    return c.Add(R::kReadOnly, absl::StrCat(sub, " only reads"));
  }
  c.Add(R::kMutating, absl::StrCat(sub, " changes the project or its environment"));
}

void Twine(const Call& c) {
  const std::string sub = SubWord(c, nullptr);
  if (OneOf(sub, {"upload", "register"})) return Publish(c, sub);
  c.Add(R::kReadOnly, absl::StrCat(sub, " only checks distributions"));
}

std::vector<ProgramGroup> PackagePrograms() {
  return {
      // Language packages.
      {"npm", H(Npm)},
      {"yarn yarnpkg pnpm bun", H(JsPackageManager)},
      {"npx bunx pnpx", H(Npx)},
      {"pip pip3 pip2", H(PipProgram)},
      {"uv uvx poetry pdm hatch pipenv pipx conda mamba micromamba rye", H(PythonProjectTool)},
      {"twine", H(Twine)},
      {"cargo", H(Cargo)},
      {"rustup", H(Rustup)},
      {"go", H(Go)},
      {"cpan cpanm easy_install", S(R::kInstallPackage, "installs packages")},
      {"gem", H(Gem)},
      {"bundle bundler", H(Bundle)},
      {"dotnet", H(Dotnet)},
      // Build and test tools.
      {"make gmake cmake ninja bazel bazelisk mvn mvnw gradle gradlew ant sbt meson scons just "
       "task rake invoke tox nox pytest py.test jest vitest mocha webpack vite next nuxt rollup "
       "esbuild parcel turbo nx lerna changeset vsce ovsx flit ctest xcodebuild swift "
       "pre-commit playwright cypress karma phpunit rspec cucumber ./configure configure "
       "autoreconf automake autoconf gcc g++ cc c++ clang clang++ rustc javac ld",
       H(BuildTool)},
      {"tsc", H([](const Call& c) {
         if (AnyWord(c.argv, 1, {"--noEmit", "--version", "-v", "--help", "-h"})) {
           return c.Add(R::kReadOnly, "only type-checks");
         }
         c.Add(R::kMutating, "writes compiled output");
       })},
  };
}

}  // namespace ccsandbox::policy::programs
