#include "policy/plan/push_wiring.h"

#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "policy/plan/egress_wiring.h"

namespace ccsandbox::policy {
namespace {

std::string GatewayBase() { return absl::StrCat("http://127.0.0.1:", kSandboxPushPort); }

// `url` for a message: at most 200 bytes, and any user:password@ before the host hidden.
std::string Shown(absl::string_view url) {
  std::string shown(url.substr(0, 200));
  const size_t scheme = shown.find("://");
  const size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t at = shown.find('@', start);
  if (at != std::string::npos && at < shown.find('/', start))
    shown.replace(start, at - start, "***");
  return shown;
}

}  // namespace

absl::StatusOr<std::string> GatewayPathFor(absl::string_view url) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("push.repositories: '", Shown(url), "' ", why));
  };
  if (url.size() > 2048) return bad("is longer than 2048 bytes");
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "https://") && !absl::ConsumePrefix(&rest, "http://")) {
    return bad(
        "is not an http(s) URL (ssh spellings of GitHub repositories are covered by their "
        "https URL)");
  }
  for (char c : url) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= 040 || u == 0177 || c == '?' || c == '#' || c == '\\' || c == '"' || c == '\'') {
      return bad("holds a space, a control byte, a quote, a query or a fragment");
    }
  }
  const size_t slash = rest.find('/');
  const absl::string_view host = rest.substr(0, slash);
  if (host.empty() || absl::StrContains(host, '@')) {
    return bad("has no host, or holds credentials (they never go in a URL)");
  }
  absl::string_view path = slash == absl::string_view::npos ? "" : rest.substr(slash);
  path = absl::StripSuffix(path, "/");
  if (path.size() <= 1 || absl::StrContains(path, "/../") || absl::EndsWith(path, "/..") ||
      absl::StrContains(path, "/./") || absl::StrContains(path, "//")) {
    return bad("has no repository path, or one with '.', '..' or an empty component");
  }
  return absl::StrCat("/", host, path);
}

absl::Status ValidatePushRepositories(const std::vector<std::string>& repositories) {
  if (repositories.size() > kMaxPushRepositories) {
    return absl::InvalidArgumentError(absl::StrCat("push.repositories: ", repositories.size(),
                                                   " is more than ", kMaxPushRepositories));
  }
  std::set<std::string> seen;
  for (const std::string& url : repositories) {
    absl::StatusOr<std::string> path = GatewayPathFor(url);
    if (!path.ok()) return path.status();
    if (!seen.insert(*path).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("push.repositories: '", Shown(url), "' is listed twice"));
    }
  }
  return absl::OkStatus();
}

std::map<std::string, std::string> PushEnvironment(const std::vector<std::string>& repositories) {
  const std::string base = GatewayBase();
  // (gateway URL, what git's push URL starts with): git takes the longest matching prefix.
  std::vector<std::pair<std::string, std::string>> rewrites = {
      {base + "/github.com/", "https://github.com/"},
      {base + "/github.com/", "git@github.com:"},
      {base + "/github.com/", "ssh://git@github.com/"},
  };
  for (const std::string& url : repositories) {
    absl::StatusOr<std::string> path = GatewayPathFor(url);
    if (!path.ok()) continue;  // refused at Launch
    const std::string trimmed(absl::StripSuffix(absl::StripSuffix(url, "/"), ".git"));
    const std::string gateway = base + *path;
    rewrites.push_back({gateway, url});
    if (trimmed != url) {
      rewrites.push_back({std::string(absl::StripSuffix(gateway, ".git")), trimmed});
    }
  }
  std::vector<std::pair<std::string, std::string>> config;
  for (const auto& [gateway, prefix] : rewrites) {
    config.push_back({absl::StrCat("url.", gateway, ".pushInsteadOf"), prefix});
  }
  // Fetches authenticate with a read credential the gateway hands the helper, per repository.
  for (const std::string& url : repositories) {
    if (!GatewayPathFor(url).ok()) continue;
    config.push_back({absl::StrCat("credential.", url, ".helper"),
                      absl::StrCat(kSandboxShimPath, " --git-credential=", kSandboxPushPort)});
    config.push_back({absl::StrCat("credential.", url, ".useHttpPath"), "true"});
  }
  std::map<std::string, std::string> env;
  for (size_t i = 0; i < config.size(); ++i) {
    env[absl::StrCat("GIT_CONFIG_KEY_", i)] = config[i].first;
    env[absl::StrCat("GIT_CONFIG_VALUE_", i)] = config[i].second;
  }
  env["GIT_CONFIG_COUNT"] = absl::StrCat(config.size());
  return env;
}

}  // namespace ccsandbox::policy
