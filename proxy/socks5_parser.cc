#include "proxy/socks5_parser.h"

#include <algorithm>
#include <array>

namespace ccsandbox::proxy {
namespace {

uint8_t At(absl::string_view data, size_t i) { return static_cast<uint8_t>(data[i]); }

template <typename T>
Socks5Parse<T> Invalid(uint8_t reply, absl::string_view error) {
  Socks5Parse<T> out;
  out.state = Socks5ParseState::kInvalid;
  out.reply = reply;
  out.error = std::string(error);
  return out;
}

}  // namespace

Socks5Parse<Socks5Greeting> ParseSocks5Greeting(absl::string_view data) {
  Socks5Parse<Socks5Greeting> out;
  if (data.empty()) return out;
  if (At(data, 0) != 5) return Invalid<Socks5Greeting>(kSocks5GeneralFailure, "not SOCKS5");
  if (data.size() < 2) return out;
  const size_t count = At(data, 1);
  if (count == 0) return Invalid<Socks5Greeting>(kSocks5GeneralFailure, "no methods offered");
  if (data.size() < 2 + count) return out;
  out.value.methods.assign(data.begin() + 2, data.begin() + 2 + count);
  out.state = Socks5ParseState::kComplete;
  out.consumed = 2 + count;
  return out;
}

Socks5Parse<Socks5Credentials> ParseSocks5UserPass(absl::string_view data) {
  Socks5Parse<Socks5Credentials> out;
  if (data.empty()) return out;
  if (At(data, 0) != 1) {
    return Invalid<Socks5Credentials>(kSocks5GeneralFailure, "bad username/password version");
  }
  if (data.size() < 2) return out;
  const size_t ulen = At(data, 1);
  if (data.size() < 2 + ulen + 1) return out;
  const size_t plen = At(data, 2 + ulen);
  if (data.size() < 3 + ulen + plen) return out;
  out.value.username = std::string(data.substr(2, ulen));
  out.value.password = std::string(data.substr(3 + ulen, plen));
  out.state = Socks5ParseState::kComplete;
  out.consumed = 3 + ulen + plen;
  return out;
}

Socks5Parse<Socks5Request> ParseSocks5Request(absl::string_view data) {
  Socks5Parse<Socks5Request> out;
  if (data.empty()) return out;
  if (At(data, 0) != 5) return Invalid<Socks5Request>(kSocks5GeneralFailure, "not SOCKS5");
  if (data.size() < 4) return out;
  if (At(data, 2) != 0) return Invalid<Socks5Request>(kSocks5GeneralFailure, "reserved byte set");
  out.value.command = At(data, 1);
  out.value.address_type = At(data, 3);
  size_t address_end = 0;
  switch (out.value.address_type) {
    case kSocks5AddressIpv4: {
      address_end = 4 + 4;
      if (data.size() < address_end + 2) return out;
      out.value.host =
          policy::IpAddress::V4(At(data, 4), At(data, 5), At(data, 6), At(data, 7)).ToString();
      break;
    }
    case kSocks5AddressIpv6: {
      address_end = 4 + 16;
      if (data.size() < address_end + 2) return out;
      std::array<uint8_t, 16> bytes{};
      for (size_t i = 0; i < 16; ++i) bytes[i] = At(data, 4 + i);
      out.value.host = policy::IpAddress::V6(bytes).ToString();
      break;
    }
    case kSocks5AddressDomain: {
      if (data.size() < 5) return out;
      const size_t length = At(data, 4);
      if (length == 0) return Invalid<Socks5Request>(kSocks5GeneralFailure, "empty domain name");
      address_end = 5 + length;
      if (data.size() < address_end + 2) return out;
      out.value.host = std::string(data.substr(5, length));
      break;
    }
    default:
      return Invalid<Socks5Request>(kSocks5AddressTypeNotSupported, "unknown address type");
  }
  out.value.port = static_cast<uint16_t>((At(data, address_end) << 8) | At(data, address_end + 1));
  out.state = Socks5ParseState::kComplete;
  out.consumed = address_end + 2;
  return out;
}

uint8_t ChooseSocks5Method(const Socks5Greeting& greeting, bool credentials_required) {
  auto offered = [&](uint8_t method) {
    return std::find(greeting.methods.begin(), greeting.methods.end(), method) !=
           greeting.methods.end();
  };
  if (!credentials_required && offered(kSocks5MethodNoAuth)) return kSocks5MethodNoAuth;
  if (offered(kSocks5MethodUserPass)) return kSocks5MethodUserPass;
  return kSocks5MethodNoneAcceptable;
}

std::string BuildSocks5MethodSelection(uint8_t method) {
  return std::string{static_cast<char>(5), static_cast<char>(method)};
}

std::string BuildSocks5UserPassReply(bool success) {
  return std::string{static_cast<char>(1), static_cast<char>(success ? 0 : 1)};
}

std::string BuildSocks5Reply(uint8_t reply, const std::optional<policy::IpAddress>& bound,
                             uint16_t bound_port) {
  std::string out = {5, static_cast<char>(reply), 0};
  if (bound.has_value() && !bound->is_v4()) {
    out.push_back(kSocks5AddressIpv6);
    out.append(reinterpret_cast<const char*>(bound->bytes.data()), 16);
  } else {
    out.push_back(kSocks5AddressIpv4);
    if (bound.has_value()) {
      out.append(reinterpret_cast<const char*>(bound->bytes.data()), 4);
    } else {
      out.append(4, '\0');
    }
  }
  out.push_back(static_cast<char>(bound_port >> 8));
  out.push_back(static_cast<char>(bound_port & 0xff));
  return out;
}

}  // namespace ccsandbox::proxy
