// SOCKS5 wire format (RFC 1928, with RFC 1929 username/password): incremental parsing of what a
// client sends and the replies the proxy writes. Pure: bytes in, a message or an error out.
//
//   Socks5Parse<Socks5Greeting> g = ParseSocks5Greeting(buffer);  // kIncomplete: read more
//   write(BuildSocks5MethodSelection(ChooseSocks5Method(g.value, credentials_required)));
//   Socks5Parse<Socks5Request> r = ParseSocks5Request(buffer.substr(g.consumed));
//   write(BuildSocks5Reply(kSocks5NotAllowed));  // or kSocks5Succeeded with the bound address
//
// Refused: a version other than 5 (SOCKS4 clients too), zero offered methods, a non-zero
// reserved byte, an unknown address type (reply 0x08), an empty domain name. The command is not
// judged here: the proxy answers BIND and UDP ASSOCIATE with 0x07 once it knows the target.
#ifndef CCSANDBOX_PROXY_SOCKS5_PARSER_H_
#define CCSANDBOX_PROXY_SOCKS5_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "policy/egress/address.h"

namespace ccsandbox::proxy {

inline constexpr uint8_t kSocks5MethodNoAuth = 0x00;
inline constexpr uint8_t kSocks5MethodUserPass = 0x02;
inline constexpr uint8_t kSocks5MethodNoneAcceptable = 0xff;

inline constexpr uint8_t kSocks5CommandConnect = 0x01;
inline constexpr uint8_t kSocks5CommandBind = 0x02;
inline constexpr uint8_t kSocks5CommandUdpAssociate = 0x03;

inline constexpr uint8_t kSocks5AddressIpv4 = 0x01;
inline constexpr uint8_t kSocks5AddressDomain = 0x03;
inline constexpr uint8_t kSocks5AddressIpv6 = 0x04;

inline constexpr uint8_t kSocks5Succeeded = 0x00;
inline constexpr uint8_t kSocks5GeneralFailure = 0x01;
inline constexpr uint8_t kSocks5NotAllowed = 0x02;  // "connection not allowed by ruleset"
inline constexpr uint8_t kSocks5NetworkUnreachable = 0x03;
inline constexpr uint8_t kSocks5HostUnreachable = 0x04;
inline constexpr uint8_t kSocks5ConnectionRefused = 0x05;
inline constexpr uint8_t kSocks5TtlExpired = 0x06;
inline constexpr uint8_t kSocks5CommandNotSupported = 0x07;
inline constexpr uint8_t kSocks5AddressTypeNotSupported = 0x08;

enum class Socks5ParseState { kIncomplete, kComplete, kInvalid };

template <typename T>
struct Socks5Parse {
  Socks5ParseState state = Socks5ParseState::kIncomplete;
  size_t consumed = 0;  // kComplete: bytes this message took
  T value{};
  uint8_t reply = kSocks5GeneralFailure;  // kInvalid: the reply code to send, if any
  std::string error;                      // kInvalid: why
};

struct Socks5Greeting {
  std::vector<uint8_t> methods;
};

struct Socks5Credentials {
  std::string username;
  std::string password;
};

struct Socks5Request {
  uint8_t command = 0;
  uint8_t address_type = 0;
  std::string host;  // a domain as sent (the egress policy validates it), or an address's text
  uint16_t port = 0;
};

Socks5Parse<Socks5Greeting> ParseSocks5Greeting(absl::string_view data);
Socks5Parse<Socks5Credentials> ParseSocks5UserPass(absl::string_view data);
Socks5Parse<Socks5Request> ParseSocks5Request(absl::string_view data);

// No-auth when offered and no credentials are required, else username/password when offered,
// else kSocks5MethodNoneAcceptable.
uint8_t ChooseSocks5Method(const Socks5Greeting& greeting, bool credentials_required);

std::string BuildSocks5MethodSelection(uint8_t method);
std::string BuildSocks5UserPassReply(bool success);
// VER REP RSV ATYP BND.ADDR BND.PORT; without `bound`, 0.0.0.0:0.
std::string BuildSocks5Reply(uint8_t reply,
                             const std::optional<policy::IpAddress>& bound = std::nullopt,
                             uint16_t bound_port = 0);

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_SOCKS5_PARSER_H_
