// A git credential request as the run's credential helper forwards it to the push gateway
// (gitcredentials(7): "key=value" lines; the helper sends what git gave it), and the session's
// repository it names. Pure. The request comes from inside the sandbox: unknown keys and lines
// without '=' are ignored, a key given twice keeps its last value, and a request names a
// repository only when protocol://host/path spells that repository's upstream URL (a trailing
// "/" and ".git" aside on both sides); anything else names none, and gets no credential.
//
//   CredentialRequest asked = ParseCredentialRequest("protocol=https\nhost=github.com\n"
//                                                    "path=owner/repo.git\n");
//   std::optional<size_t> i = RepositoryAsked(asked, {"https://github.com/owner/repo.git"});  // 0
#ifndef CCSANDBOX_GATEWAY_CREDENTIAL_REQUEST_H_
#define CCSANDBOX_GATEWAY_CREDENTIAL_REQUEST_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ccsandbox::gateway {

struct CredentialRequest {
  std::string protocol;  // "https"
  std::string host;      // "github.com" (with ":port" when git has one)
  std::string path;      // "owner/repo": without a trailing "/" and ".git"
};

CredentialRequest ParseCredentialRequest(absl::string_view text);

// The index in `upstream_urls` of the repository `request` names, or nullopt.
std::optional<size_t> RepositoryAsked(const CredentialRequest& request,
                                      absl::Span<const std::string> upstream_urls);

}  // namespace ccsandbox::gateway

#endif  // CCSANDBOX_GATEWAY_CREDENTIAL_REQUEST_H_
