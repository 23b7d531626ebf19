// libFuzzer target: both ends of the run's git credential helper — the push gateway's reading
// of the request that comes from inside the sandbox (gateway/credential_request.h) and the
// shim's reading of the gateway's answer (launcher/shim/git_credential.h, CredentialAnswer).
// Input (FuzzedDataProvider): the session's repository URLs (those ValidatePushRepositories
// accepts), the request's text and the answer's bytes. Invariants: never crash; the fields read
// hold no newline; a request names a repository only when protocol://host/path spells its URL
// ('/' and ".git" ends aside), and the first such one; every repository is named by the request
// git would send for its own URL; the helper passes on exactly the body of a "200" answer.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gateway/credential_request.h"
#include "launcher/shim/git_credential.h"
#include "policy/plan/push_wiring.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

std::string Trimmed(absl::string_view url) {
  return std::string(absl::StripSuffix(absl::StripSuffix(url, "/"), ".git"));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  std::vector<std::string> urls;
  for (size_t n = in.ConsumeIntegralInRange<size_t>(0, 4); n > 0; --n) {
    urls.push_back(in.ConsumeRandomLengthString(120));
  }
  if (!ccsandbox::policy::ValidatePushRepositories(urls).ok()) urls.clear();
  const std::string request = in.ConsumeRandomLengthString(600);
  const std::string response = in.ConsumeRemainingBytesAsString();

  const ccsandbox::gateway::CredentialRequest asked =
      ccsandbox::gateway::ParseCredentialRequest(request);
  for (const std::string* field : {&asked.protocol, &asked.host, &asked.path}) {
    FUZZ_CHECK(field->find('\n') == std::string::npos);
  }
  const std::optional<size_t> named = ccsandbox::gateway::RepositoryAsked(asked, urls);
  const std::string spelled = absl::StrCat(asked.protocol, "://", asked.host, "/", asked.path);
  std::optional<size_t> expected;
  for (size_t i = 0; i < urls.size() && !expected.has_value(); ++i) {
    if (Trimmed(urls[i]) == spelled) expected = i;
  }
  FUZZ_CHECK(named == expected);

  // What git sends for each repository's own URL (credential.useHttpPath, as the run's git
  // configuration sets it) names that repository, or an earlier one spelled the same.
  for (size_t i = 0; i < urls.size(); ++i) {
    absl::string_view rest = urls[i];
    const size_t scheme = rest.find("://");
    FUZZ_CHECK(scheme != absl::string_view::npos);
    const absl::string_view protocol = rest.substr(0, scheme);
    rest.remove_prefix(scheme + 3);
    const size_t slash = rest.find('/');
    FUZZ_CHECK(slash != absl::string_view::npos);
    const std::string git_request =
        absl::StrCat("protocol=", protocol, "\nhost=", rest.substr(0, slash),
                     "\npath=", rest.substr(slash + 1), "\n");
    const std::optional<size_t> own = ccsandbox::gateway::RepositoryAsked(
        ccsandbox::gateway::ParseCredentialRequest(git_request), urls);
    FUZZ_CHECK(own.has_value() && *own <= i && Trimmed(urls[*own]) == Trimmed(urls[i]));
  }

  const std::string answer = ccsandbox::launcher::CredentialAnswer(response);
  const size_t head_end = response.find("\r\n\r\n");
  if (absl::StartsWith(response, "HTTP/1.1 200 ") && head_end != std::string::npos) {
    FUZZ_CHECK(answer == response.substr(head_end + 4));
  } else {
    FUZZ_CHECK(answer.empty());
  }
  return 0;
}
