#include "proxy/credentials.h"

namespace ccsandbox::proxy {
namespace {

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

}  // namespace

bool CredentialsMatch(const ProxyCredentials& expected, absl::string_view username,
                      absl::string_view password) {
  const bool user_ok = ConstantTimeEquals(expected.username, username);
  const bool password_ok = ConstantTimeEquals(expected.password, password);
  return user_ok && password_ok;
}

}  // namespace ccsandbox::proxy
