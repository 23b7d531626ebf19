// The symbolic refs an upstream keeps (`refs/heads/master -> refs/heads/main`): receive-pack
// follows them, so a push to an alias updates its target, and the push rule must judge the
// target too. Asked with protocol v2's ls-refs (`symrefs`) over smart HTTP, with the gateway's
// credential; an upstream that cannot say is refused, never assumed to have none.
//
//   absl::StatusOr<Symrefs> aliases = UpstreamSymrefs(repo.upstream_url, credential);
#ifndef CCSANDBOX_GATEWAY_UPSTREAM_SYMREFS_H_
#define CCSANDBOX_GATEWAY_UPSTREAM_SYMREFS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gateway/credentials.h"

namespace ccsandbox::gateway {

using Symrefs = std::map<std::string, std::string>;  // name -> target, both under refs/

// The ls-refs request body (refs under refs/, with their symref targets).
std::string LsRefsRequest();
// The symbolic refs in an ls-refs response (pkt-lines ending with a flush); INVALID_ARGUMENT for
// what is not one, e.g. a v0 advertisement from an upstream without protocol v2.
absl::StatusOr<Symrefs> ParseLsRefs(absl::string_view response);

absl::StatusOr<Symrefs> UpstreamSymrefs(const std::string& upstream_url,
                                        const Credential& credential,
                                        const std::vector<std::string>& resolve = {});

}  // namespace ccsandbox::gateway

#endif  // CCSANDBOX_GATEWAY_UPSTREAM_SYMREFS_H_
