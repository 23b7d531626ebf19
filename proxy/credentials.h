// Internal: checking proxy credentials without leaking their length or prefix through timing.
#ifndef CCSANDBOX_PROXY_CREDENTIALS_H_
#define CCSANDBOX_PROXY_CREDENTIALS_H_

#include "absl/strings/string_view.h"
#include "proxy/proxy_options.h"

namespace ccsandbox::proxy {

bool CredentialsMatch(const ProxyCredentials& expected, absl::string_view username,
                      absl::string_view password);

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_CREDENTIALS_H_
