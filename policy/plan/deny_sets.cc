#include "policy/plan/deny_sets.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "policy/plan/path_spellings.h"

namespace ccsandbox::policy {

const std::vector<std::string>& SecretNames() {
  static const auto* names = new std::vector<std::string>{
      ".ssh",              // ssh keys and known_hosts
      ".aws",              // AWS credentials and SSO caches
      ".gnupg",            // GPG private keys
      ".azure",            // Azure CLI tokens
      ".kube",             // Kubernetes cluster credentials
      ".netrc",            // plaintext logins used by curl, git, ftp
      ".git-credentials",  // git's plaintext credential store
      ".pypirc",           // PyPI upload tokens
      ".vault-token",      // HashiCorp Vault token
      ".password-store",   // pass(1) encrypted store
  };
  return *names;
}

const std::vector<std::string>& HomeSecretPaths() {
  static const auto* paths = new std::vector<std::string>{
      ".config/gh",                          // GitHub CLI OAuth token
      ".config/hub",                         // hub's GitHub token
      ".config/gcloud",                      // Google Cloud credentials
      ".config/op",                          // 1Password CLI sessions
      ".docker/config.json",                 // registry auth
      ".npmrc",                              // npm auth tokens (user-level)
      ".cargo/credentials",                  // crates.io token (old name)
      ".cargo/credentials.toml",             // crates.io token
      ".gem/credentials",                    // RubyGems API key
      ".terraform.d/credentials.tfrc.json",  // Terraform Cloud token
      ".local/share/keyrings",               // GNOME keyring
      "Library/Keychains",                   // macOS keychains (spec)
  };
  return *paths;
}

const std::vector<std::string>& SystemSecretPaths() {
  static const auto* paths = new std::vector<std::string>{
      "/etc/shadow",
      "/etc/shadow-",  // password hashes (a root caller owns them)
      "/etc/gshadow",
      "/etc/gshadow-",
      "/etc/ssh/ssh_host_*_key",  // host private keys
  };
  return *paths;
}

bool EndsWithComponents(absl::string_view path, absl::string_view relative) {
  if (!absl::EndsWith(path, relative)) return false;
  if (path.size() == relative.size()) return true;
  return path[path.size() - relative.size() - 1] == '/';
}

DenyPaths ResolveDenyPaths(const DenyScan& scan, const PathResolver& resolver) {
  std::vector<std::string> read = scan.secrets;
  for (const std::string& home : scan.home_dirs) {
    for (const std::string& name : SecretNames()) read.push_back(absl::StrCat(home, "/", name));
    for (const std::string& rel : HomeSecretPaths()) read.push_back(absl::StrCat(home, "/", rel));
  }
  read.insert(read.end(), scan.system_secrets.begin(), scan.system_secrets.end());
  std::vector<std::string> write = scan.protected_paths;
  write.insert(write.end(), scan.deny_write.begin(), scan.deny_write.end());
  return {AllSpellings(read, resolver), AllSpellings(write, resolver), scan.bind_ids,
          AllSpellings(scan.creation_denied, resolver)};
}

const std::vector<std::string>& StandardFilenameDenyPatterns() {
  static const auto* patterns = new std::vector<std::string>{".env", ".env.*", "*.key", "*.pem"};
  return *patterns;
}

std::vector<std::string> EffectiveFilenameDenyPatterns(const v1::SandboxSpec& spec) {
  if (spec.has_write_deny_patterns() && spec.write_deny_patterns().patterns().empty()) {
    return {};  // the explicit opt-out
  }
  // A list adds to the standard set: naming one more pattern never drops .env & co.
  std::vector<std::string> patterns = StandardFilenameDenyPatterns();
  for (const std::string& pattern : spec.write_deny_patterns().patterns()) {
    if (std::find(patterns.begin(), patterns.end(), pattern) == patterns.end()) {
      patterns.push_back(pattern);
    }
  }
  return patterns;
}

}  // namespace ccsandbox::policy
