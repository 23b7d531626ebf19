#include "gateway/credential_request.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ccsandbox::gateway {
namespace {

absl::string_view WithoutGitSuffix(absl::string_view s) {
  return absl::StripSuffix(absl::StripSuffix(s, "/"), ".git");
}

}  // namespace

CredentialRequest ParseCredentialRequest(absl::string_view text) {
  CredentialRequest request;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    const absl::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "protocol") request.protocol = std::string(value);
    if (key == "host") request.host = std::string(value);
    if (key == "path") request.path = std::string(WithoutGitSuffix(value));
  }
  return request;
}

std::optional<size_t> RepositoryAsked(const CredentialRequest& request,
                                      absl::Span<const std::string> upstream_urls) {
  const std::string asked = absl::StrCat(request.protocol, "://", request.host, "/", request.path);
  for (size_t i = 0; i < upstream_urls.size(); ++i) {
    if (WithoutGitSuffix(upstream_urls[i]) == asked) return i;
  }
  return std::nullopt;
}

}  // namespace ccsandbox::gateway
