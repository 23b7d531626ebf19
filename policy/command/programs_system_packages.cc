// System package managers and others keyed by a verb (apt, dnf, brew, pacman, dpkg, rpm, nix …):
// the install and publish rules for packages outside a project.
#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "policy/command/program_util.h"

namespace ccsandbox::policy::programs {
namespace {

// What a package manager's verb does.
enum class PackageVerb {
  kInstalls,         // runs the packages' install scripts, changes what later commands run
  kPublishes,        // changes what everyone else installs
  kRunsScript,       // a project's script
  kReads,            // shows packages, the index or the tool's own state
  kRunsProjectCode,  // builds, tests or runs the project
  kChangesPackages,  // removes packages, changes sources or configuration
};

struct PackageVerbs {
  absl::string_view verbs;  // space-separated
  PackageVerb what;
};

// Tried in order; a verb in no row changes installed packages or their configuration.
constexpr PackageVerbs kPackageVerbs[] = {
    {"install i in reinstall upgrade dist-upgrade full-upgrade add build-dep localinstall "
     "groupinstall dup up tap require update-packages get deps.get deps.update "
     "archive.install local.hex local.rebar restore global create-project fetch source bundle",
     PackageVerb::kInstalls},
    {"publish push upload hex.publish yank", PackageVerb::kPublishes},
    {"run-script", PackageVerb::kRunsScript},
    {"search show list info policy depends rdepends madison changelog provides whatprovides "
     "repoquery leaves deps outdated doctor config home cat uses desc files list-installed "
     "query repolist check-update history why validate diagnose licenses --version -v -V "
     "version help --help --prefix --cellar --repository --cache --env commands formulae casks "
     "options log audit fund status check depends-on suggests stats dotty why-not browse docs",
     PackageVerb::kReads},
    {"run exec compile test build start serve", PackageVerb::kRunsProjectCode},
};

// Package managers whose `update` only refreshes the package index; for the others it upgrades
// packages.
constexpr absl::string_view kUpdateRefreshesIndex =
    "apt apt-get aptitude brew apk port snap flatpak pkg";

PackageVerb PackageVerbOf(absl::string_view program, absl::string_view verb) {
  if (verb.empty()) return PackageVerb::kReads;  // prints its usage
  if (verb == "update" && !InList(program, kUpdateRefreshesIndex)) return PackageVerb::kInstalls;
  for (const PackageVerbs& row : kPackageVerbs) {
    if (InList(verb, row.verbs)) return row.what;
  }
  return PackageVerb::kChangesPackages;
}

// apt, dnf, brew and other system or language package managers keyed by a verb.
void VerbPackageManager(const Call& c) {
  size_t i = 0;
  const std::string sub = SubWord(c, &i,
                                  "-o -c -t --target-release --installroot --repo "
                                  "-R --root --config");
  if (DynamicSub(c, sub)) return;
  switch (PackageVerbOf(c.name, sub)) {
    case PackageVerb::kInstalls:
      if (c.name == "brew" && sub == "bundle" && AnyWord(c.argv, i + 1, {"check", "list"})) {
        return c.Add(R::kReadOnly, "bundle check only reads");
      }
      return Install(c, sub);
    case PackageVerb::kPublishes:
      return Publish(c, sub);
    case PackageVerb::kRunsScript:
      return c.Add(R::kOpaqueProgram, "run-script runs a project script");
    case PackageVerb::kReads:
      return c.Add(R::kReadOnly,
                   absl::StrCat(sub.empty() ? "(without a command)" : sub, " only reads"));
    case PackageVerb::kRunsProjectCode:
      return c.Add(R::kOpaqueProgram, absl::StrCat(sub, " runs project code"));
    case PackageVerb::kChangesPackages:
      return c.Add(R::kMutating,
                   absl::StrCat(sub, " changes installed packages or their configuration"));
  }
}

void Pacman(const Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& t = c.argv[i].text;
    if (absl::StartsWith(t, "--sync") || absl::StartsWith(t, "--upgrade") ||
        (absl::StartsWith(t, "-") && !absl::StartsWith(t, "--") &&
         (t.find('S') != std::string::npos || t.find('U') != std::string::npos))) {
      if (t.find_first_of("silgp") != std::string::npos && t.find('u') == std::string::npos &&
          t.find('y') == std::string::npos) {
        return c.Add(R::kNetworkAccess, "queries the package database");
      }
      return Install(c, t);
    }
    if (absl::StartsWith(t, "--remove") || (absl::StartsWith(t, "-R"))) {
      return c.Add(R::kMutating, "removes packages");
    }
  }
  c.Add(R::kReadOnly, "queries the package database");
}

void Dpkg(const Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& t = c.argv[i].text;
    if (OneOf(t, {"-i", "--install", "--unpack", "--configure", "-U"})) return Install(c, t);
    if (OneOf(t, {"-r", "--remove", "-P", "--purge", "--set-selections", "--clear-avail",
                  "--update-avail", "--merge-avail", "-e", "--erase", "-F", "--freshen"})) {
      if (c.name == "rpm" && OneOf(t, {"-F", "--freshen"})) return Install(c, t);
      return c.Add(R::kMutating, absl::StrCat(t, " changes installed packages"));
    }
    if (c.name == "rpm" && absl::StartsWith(t, "-") && !absl::StartsWith(t, "--") &&
        (t.find('i') != std::string::npos || t.find('U') != std::string::npos) &&
        t.find('q') == std::string::npos) {
      return Install(c, t);
    }
  }
  c.Add(R::kReadOnly, "queries the package database");
}

void NixEnv(const Call& c) {
  if (c.name == "nix") {
    size_t i = 0;
    const std::string sub = SubWord(c, &i);
    if (sub == "profile" && AnyWord(c.argv, i + 1, {"install", "add", "upgrade"})) {
      return Install(c, "profile install");
    }
    if (OneOf(sub, {"search", "eval", "show-config", "path-info", "why-depends", "log", "--version",
                    "flake"}) &&
        !AnyWord(c.argv, i + 1, {"update", "lock", "init", "new"})) {
      return c.Add(R::kReadOnly, absl::StrCat(sub, " only reads"));
    }
    return c.Add(R::kOpaqueProgram, absl::StrCat(sub, " builds or runs Nix expressions"));
  }
  if (AnyWord(c.argv, 1, {"-i", "--install", "-u", "--upgrade", "-iA"})) {
    return Install(c, "-i");
  }
  if (AnyWord(c.argv, 1, {"-q", "--query"})) return c.Add(R::kReadOnly, "queries profiles");
  c.Add(R::kMutating, "changes the user's Nix profile");
}

}  // namespace

std::vector<ProgramGroup> SystemPackagePrograms() {
  return {
      {"apt apt-get aptitude dnf yum microdnf zypper apk brew port snap flatpak pkg "
       "xbps-install emerge choco winget scoop composer mix stack cabal luarocks opam nuget "
       "asdf nvm pyenv rbenv sdk volta fnm corepack pixi",
       H(VerbPackageManager)},
      {"pacman yay paru", H(Pacman)},
      {"dpkg rpm", H(Dpkg)},
      {"nix-env nix", H(NixEnv)},
      {"apt-cache dpkg-query apt-file apt-mark", S(R::kReadOnly, "queries the package database")},
  };
}

}  // namespace ccsandbox::policy::programs
