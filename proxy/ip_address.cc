#include "proxy/ip_address.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace ccsandbox::proxy {

policy::IpAddress ToPolicyAddress(const asio::ip::address& address) {
  if (address.is_v4()) {
    const auto b = address.to_v4().to_bytes();
    return policy::IpAddress::V4(b[0], b[1], b[2], b[3]);
  }
  const auto b = address.to_v6().to_bytes();
  std::array<uint8_t, 16> bytes;
  std::copy(b.begin(), b.end(), bytes.begin());
  return policy::IpAddress::V6(bytes);
}

asio::ip::address ToAsioAddress(const policy::IpAddress& ip) {
  if (ip.is_v4()) {
    return asio::ip::address_v4({ip.bytes[0], ip.bytes[1], ip.bytes[2], ip.bytes[3]});
  }
  asio::ip::address_v6::bytes_type bytes;
  std::copy(ip.bytes.begin(), ip.bytes.end(), bytes.begin());
  return asio::ip::address_v6(bytes);
}

}  // namespace ccsandbox::proxy
