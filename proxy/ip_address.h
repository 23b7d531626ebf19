// The egress policy's IpAddress and Asio's address, one into the other.
#ifndef CCSANDBOX_PROXY_IP_ADDRESS_H_
#define CCSANDBOX_PROXY_IP_ADDRESS_H_

#include "asio/ip/address.hpp"
#include "policy/egress/address.h"

namespace ccsandbox::proxy {

policy::IpAddress ToPolicyAddress(const asio::ip::address& address);
asio::ip::address ToAsioAddress(const policy::IpAddress& ip);

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_IP_ADDRESS_H_
