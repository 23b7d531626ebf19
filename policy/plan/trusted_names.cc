#include "policy/plan/trusted_names.h"

#include <algorithm>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "policy/plan/filename_patterns.h"

namespace ccsandbox::policy {
namespace {

// Components `pattern` against all of `path`; "**" takes any number, none included. Memoised on
// (pattern component, path component): plain backtracking is exponential in the path's depth
// once a rule has several "**" (a client's denyWriteNames rule, a path the sandbox makes deep),
// and this runs for every name the create guard is asked about.
bool MatchFrom(const std::vector<std::string>& pattern,
               const std::vector<absl::string_view>& path) {
  const size_t width = path.size() + 1;
  std::vector<int8_t> memo((pattern.size() + 1) * width, -1);
  auto match = [&](auto&& self, size_t p, size_t i) -> bool {
    int8_t& known = memo[p * width + i];
    if (known >= 0) return known;
    bool result;
    if (p == pattern.size()) {
      result = i == path.size();
    } else if (pattern[p] == "**") {
      result = self(self, p + 1, i) || (i < path.size() && self(self, p, i + 1));
    } else {
      result = i < path.size() && NameGlobMatches(pattern[p], path[i]) && self(self, p + 1, i + 1);
    }
    known = result;
    return result;
  };
  return match(match, 0, 0);
}

std::vector<absl::string_view> Components(absl::string_view path) {
  return absl::StrSplit(path, '/', absl::SkipEmpty());
}

}  // namespace

const std::vector<TrustedName>& StandardTrustedNames() {
  static const auto* names = new std::vector<TrustedName>{
      // Shell start-up and logout files: the user's next shell or login runs them.
      {".bashrc", "bash runs it in every interactive shell"},
      {".bash_profile", "bash login shells"},
      {".bash_login", "bash login shells"},
      {".bash_logout", "bash runs it at logout"},
      {".bash_aliases", "sourced by Debian's .bashrc"},
      {".profile", "sh/bash/dash login shells"},
      {".zshrc", "zsh"},
      {".zprofile", "zsh"},
      {".zshenv", "zsh, every invocation"},
      {".zlogin", "zsh"},
      {".zlogout", "zsh"},
      {".cshrc", "csh"},
      {".tcshrc", "tcsh"},
      {".login", "csh login"},
      {".logout", "csh"},
      {".kshrc", "ksh"},
      {".mkshrc", "mksh"},
      {".config/fish/**", "fish: config.fish, conf.d and autoloaded functions"},
      {".xprofile", "X session start"},
      {".xinitrc", "startx"},
      {".xsession", "X session"},
      {".pam_environment", "login environment (LD_PRELOAD)"},
      {".tmux.conf", "tmux runs run-shell commands from it"},
      {".inputrc", "readline key bindings that type commands"},
      // Keys and secret stores: a new ~/.ssh/authorized_keys is a remote login to the host.
      {".ssh/**", "ssh keys, authorized_keys, config (ProxyCommand)"},
      {".gnupg/**", "GPG keys and gpg.conf"},
      {".aws/**", "AWS credentials and config (credential_process)"},
      {".azure/**", "Azure CLI"},
      {".kube/**", "kubeconfig (exec credential plugins)"},
      {".docker/**", "registry auth and credential helpers"},
      {".netrc", "plaintext logins"},
      {".git-credentials", "git's credential store"},
      {".pypirc", "PyPI tokens"},
      {".vault-token", "Vault token"},
      {".password-store/**", "pass(1)"},
      {".config/gh/**", "GitHub CLI"},
      {".config/hub", "hub"},
      {".config/gcloud/**", "Google Cloud"},
      {".config/op/**", "1Password CLI"},
      {".local/share/keyrings/**", "GNOME keyring"},
      {"Library/Keychains/**", "macOS keychains"},
      {".npmrc", "npm config: script-shell, node-options, tokens"},
      {".yarnrc", "yarn"},
      {".yarnrc.yml", "yarn berry: yarnPath runs any script"},
      {".cargo/credentials", "crates.io"},
      {".cargo/credentials.toml", "crates.io"},
      {".cargo/config", "cargo config: build.rustc-wrapper"},
      {".cargo/config.toml", "cargo config: build.rustc-wrapper"},
      {".gem/credentials", "RubyGems"},
      {".terraform.d/**", "Terraform credentials and plugins"},
      // Git: config names programs (core.fsmonitor, core.hooksPath, core.sshCommand, pager,
      // editor, filters, diff/merge drivers, credential helpers, include); commondir and a
      // worktree's .git file point git at another, agent-written repository.
      {".gitconfig", "user-level git config"},
      {".config/git/**", "user-level git config, attributes, hooks"},
      {".git", "a new repository or a worktree pointer (gitdir: ...) runs its config", true, false},
      {".git/config", "repository config"},
      {".git/config.worktree", "per-worktree config"},
      {".git/commondir", "points git at another repository"},
      {".git/hooks/**", "hooks run on commit, checkout, merge, push"},
      {".git/info/attributes", "filter and diff drivers"},
      {".git/modules/**/config", "a submodule's config"},
      {".git/modules/**/config.worktree", "a submodule's worktree config"},
      {".git/modules/**/commondir", "a submodule's commondir"},
      {".git/modules/**/hooks/**", "a submodule's hooks"},
      {".git/worktrees/*/commondir", "a linked worktree's pointers"},
      {".git/worktrees/*/gitdir", "a linked worktree's pointers"},
      {".git/worktrees/*/config.worktree", "a linked worktree's config"},
      // Bare repositories: git takes any directory with HEAD, objects/ and refs/ for one and
      // runs its config (safe.bareRepository defaults to all). HEAD is only git's to make,
      // inside a .git directory; conventional bare repositories (x.git) are covered whole.
      {"HEAD", "a HEAD file makes its directory a bare repository whose config git runs", false,
       false, ".git/**"},
      {"*.git/config", "a bare repository's config"},
      {"*.git/config.worktree", "a bare repository's worktree config"},
      {"*.git/commondir", "a bare repository's pointer to another"},
      {"*.git/hooks/**", "a bare repository's hooks"},
      {".hg/hgrc", "Mercurial repository hooks"},
      {".hgrc", "Mercurial hooks"},
      // Desktop autostart, user services, PATH.
      {".config/autostart/**", "XDG autostart"},
      {".config/systemd/user/**", "systemd user units"},
      {".local/share/systemd/user/**", "systemd user units"},
      {".config/environment.d/**", "systemd user environment"},
      {".local/bin/**", "first on PATH in Debian's default .profile"},
      {".local/lib/python*/site-packages/**",
       "user site-packages comes before the system's: .pth lines run, packages shadow"},
      {".local/share/applications/**", "desktop entries the desktop runs"},
      {".local/share/bash-completion/**", "bash sources completions"},
      {".bash_completion", "bash-completion sources it"},
      {".bashrc.d/**", "sourced by .bashrc"},
      {".oh-my-zsh/**", "zsh plugins"},
      {".xsessionrc", "X session start"},
      {".config/plasma-workspace/env/**", "KDE sources it at login"},
      {".config/user-dirs.dirs", "sourced by xdg-user-dir"},
      {".config/mimeapps.list", "which program opens what"},
      {".config/direnv/**", "direnvrc"},
      {".config/tmux/**", "tmux"},
      {".cargo/env", "sourced by rustup's .profile line"},
      {".cargo/bin/**", "on PATH"},
      {".condarc", "package index"},
      {".config/pip/**", "pip index and options"},
      {".pip/**", "pip index and options"},
      {".mavenrc", "sourced by mvn"},
      {".m2/settings.xml", "maven repositories and plugins"},
      {".gradle/init.d/**", "gradle runs init scripts"},
      {".gradle/gradle.properties", "gradle JVM arguments"},
      {".Rprofile", "R start-up"},
      {".sqliterc", "sqlite3 start-up (.shell)"},
      {".psqlrc", "psql start-up (\\!)"},
      {".gdbinit", "gdb start-up"},
      {".irbrc", "irb start-up"},
      {".pryrc", "pry start-up"},
      {".ipython/**", "IPython start-up scripts"},
      {".emacs", "emacs"},
      {".emacs.d/**", "emacs"},
      {".vim/**", "vim plugins"},
      {".config/vim/**", "vim"},
      {".config/Code/User/**", "VS Code user settings and tasks"},
      {".vscode-server/**", "VS Code server"},
      {".config/kitty/**", "kitty"},
      {".wezterm.lua", "wezterm"},
      {".config/starship.toml", "prompt commands"},
      {".config/i3/**", "window manager exec"},
      {".config/sway/**", "window manager exec"},
      {".config/hypr/**", "window manager exec"},
      {".config/openbox/**", "autostart"},
      {".config/labwc/**", "autostart"},
      {".nvm/**", "sourced by shell rc"},
      // Version-manager shims and tool bin dirs on PATH, and caches of code that runs.
      {".pyenv/shims/**", "on PATH"},
      {".pyenv/versions/*/bin/**", "on PATH via shims"},
      {".rbenv/shims/**", "on PATH"},
      {".asdf/shims/**", "on PATH"},
      {".volta/bin/**", "on PATH"},
      {".local/share/pnpm/**", "on PATH"},
      {".local/share/mise/shims/**", "on PATH"},
      {".npm-global/bin/**", "on PATH"},
      {".yarn/bin/**", "on PATH"},
      {".sdkman/candidates/**", "on PATH"},
      {".dotnet/tools/**", "on PATH"},
      {".ghcup/bin/**", "on PATH"},
      {".nix-profile/**", "on PATH"},
      {".krew/bin/**", "on PATH"},
      {".rustup/toolchains/*/bin/**", "cargo and rustc"},
      {".cache/pre-commit/**", "hook code pre-commit runs for every repository"},
      {".cache/node/corepack/**", "the package managers corepack launches"},
      {".npm/_npx/**", "what npx runs"},
      {".yarn/releases/**", "the yarn a project's yarnPath runs"},
      {".yarn/plugins/**", "yarn plugins"},
      // Git hook managers: the installed hook runs what these name (husky v9's .husky/_/h
      // runs .husky/<hook>; pre-commit and lefthook run local commands from their config).
      {".husky/**", "husky hooks"},
      {".config/husky/**", "husky's init.sh"},
      {".pre-commit-config.yaml", "pre-commit runs its local hooks"},
      {"lefthook.yml", "lefthook"},
      {".lefthook.yml", "lefthook"},
      {"lefthook-local.yml", "lefthook"},
      {".lefthook-local.yml", "lefthook"},
      {".simple-git-hooks.json", "simple-git-hooks"},
      {".simple-git-hooks.js", "simple-git-hooks"},
      {"Library/LaunchAgents/**", "macOS launchd agents"},
      // direnv, editors and agents.
      {".envrc", "direnv runs it on cd"},
      {".vscode/**", "tasks.json (runOn: folderOpen), settings.json (terminal profiles)"},
      {".vimrc", "vim"},
      {".exrc", "vi/vim with 'exrc'"},
      {".nvimrc", "neovim with 'exrc'"},
      {".config/nvim/**", "neovim"},
      {".claude/**", "Claude Code settings and hooks"},
      {".mcp.json", "MCP servers the agent starts"},
      {".codex/**", "Codex"},
      {".gemini/**", "Gemini CLI"},
      {".cursor/**", "Cursor"},
      {".aider.conf.yml", "aider"},
      {"opencode.json", "opencode: MCP servers and plugins, loaded without a prompt"},
      {"opencode.jsonc", "opencode"},
      {".opencode/**", "opencode plugins and agents"},
      {".roo/**", "Roo Code MCP servers"},
      {".kilocode/**", "Kilo Code MCP servers"},
      {".kiro/**", "Kiro hooks run shell commands on events"},
      {".amazonq/**", "Amazon Q MCP servers"},
      {".qwen/**", "Qwen Code (Gemini CLI's format)"},
      {".continue/**", "Continue MCP servers"},
      {".windsurf/**", "Windsurf"},
      {".junie/**", "Junie"},
      {".crush.json", "Crush MCP servers"},
      {"crush.json", "Crush"},
      {".zed/**", "Zed settings and tasks"},
      {".idea/**", "JetBrains run configurations"},
      {".devcontainer/**", "devcontainer lifecycle commands"},
      {".nvim.lua", "neovim with 'exrc'"},
      {".lazy.lua", "lazy.nvim project spec"},
      {".lvimrc", "vim localvimrc"},
      {".dir-locals.el", "Emacs directory variables"},
      {"mise.toml", "mise runs its hooks and env on cd"},
      {".mise.toml", "mise"},
      {"mise.local.toml", "mise"},
      {".mise.local.toml", "mise"},
      {".mise/**", "mise"},
      {".config/mise/**", "mise"},
  };
  return *names;
}

const std::vector<TrustedName>& HomeTrustedPaths() {
  static const auto* paths = new std::vector<TrustedName>{
      {"bin", "on PATH in Debian's default .profile"},
      {"go/bin", "on PATH for Go users"},
      {".deno/bin", "on PATH for Deno users"},
      {".bun/bin", "on PATH for Bun users"},
  };
  return *paths;
}

std::vector<std::string> StandardTrustedNameRules() {
  std::vector<std::string> rules;
  for (const TrustedName& name : StandardTrustedNames()) rules.push_back(name.rule);
  return rules;
}

absl::StatusOr<TrustedNameRules> TrustedNameRules::Create(const std::vector<std::string>& rules,
                                                          absl::string_view field) {
  std::vector<std::vector<std::string>> components, unless;
  for (const std::string& rule : rules) {
    std::vector<std::string> exception;
    for (const TrustedName& standard : StandardTrustedNames()) {
      if (standard.unless != nullptr && rule == standard.rule) {
        exception = {"**"};
        for (absl::string_view part : absl::StrSplit(standard.unless, '/')) {
          exception.emplace_back(part);
        }
      }
    }
    unless.push_back(std::move(exception));
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": rule \"", rule, "\" ", why));
    };
    if (rule.empty()) return bad("is empty");
    if (rule[0] == '/') return bad("is absolute; rules match the end of a path, at any depth");
    std::vector<std::string> parts = {"**"};
    for (absl::string_view part : absl::StrSplit(rule, '/')) {
      if (part.empty() || part == "." || part == "..") {
        return bad("has an empty, '.' or '..' component");
      }
      if (part != "**") {
        if (absl::Status s = CheckNameGlob(std::string(part)); !s.ok()) return bad(s.message());
      }
      parts.emplace_back(part);
    }
    components.push_back(std::move(parts));
  }
  return TrustedNameRules(rules, std::move(components), std::move(unless));
}

TrustedNameRules::TrustedNameRules(std::vector<std::string> rules,
                                   std::vector<std::vector<std::string>> components,
                                   std::vector<std::vector<std::string>> unless)
    : rules_(std::move(rules)), components_(std::move(components)), unless_(std::move(unless)) {
  for (size_t r = 0; r < components_.size(); ++r) {
    const std::string& first = components_[r][1];  // [0] is the leading "**"
    if (first.find_first_of("*?[\\") == std::string::npos) {
      by_first_name_[absl::AsciiStrToLower(first)].push_back(r);
    } else {
      std::string suffix = first.substr(first.rfind('*') + 1);
      // The last '*' is a wildcard only outside classes and escapes ("*[a*]x" ends in 'a', '*'
      // or ']'... then "x", not in "]x"): with either, every component is a candidate.
      if (first.find_first_of("[\\") != std::string::npos ||
          suffix.find('?') != std::string::npos || first == "**") {
        suffix.clear();
      }
      by_suffix_.emplace_back(absl::AsciiStrToLower(suffix), r);
    }
  }
}

std::optional<std::string> TrustedNameRules::Match(absl::string_view path) const {
  const std::vector<absl::string_view> parts = Components(path);
  std::vector<size_t> candidates;
  // Rules that start with "**" may match no component at all ("/" for "**"): always tried.
  for (const auto& [suffix, r] : by_suffix_) {
    if (suffix.empty()) candidates.push_back(r);
  }
  std::string lower;
  for (absl::string_view part : parts) {
    lower.assign(part.data(), part.size());
    absl::AsciiStrToLower(&lower);
    auto it = by_first_name_.find(lower);
    if (it != by_first_name_.end()) {
      candidates.insert(candidates.end(), it->second.begin(), it->second.end());
    }
    for (const auto& [suffix, r] : by_suffix_) {
      if (!suffix.empty() && absl::EndsWith(lower, suffix)) candidates.push_back(r);
    }
  }
  if (candidates.empty()) return std::nullopt;
  std::sort(candidates.begin(), candidates.end());  // the first rule in order wins
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  for (size_t r : candidates) {
    if (MatchFrom(components_[r], parts) && (unless_[r].empty() || !MatchFrom(unless_[r], parts))) {
      return rules_[r];
    }
  }
  return std::nullopt;
}

std::optional<std::string> TrustedNameRules::MatchBeneath(absl::string_view dir) const {
  const std::vector<absl::string_view> parts = Components(dir);
  for (size_t r = 0; r < components_.size(); ++r) {
    // A proper prefix of the rule (past the leading "**") ends at `dir`; the rest names
    // something beneath it.
    for (size_t end = 2; end < components_[r].size(); ++end) {
      const std::vector<std::string> prefix(components_[r].begin(), components_[r].begin() + end);
      if (MatchFrom(prefix, parts)) return rules_[r];
    }
  }
  return std::nullopt;
}

}  // namespace ccsandbox::policy
