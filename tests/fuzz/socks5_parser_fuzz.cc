// libFuzzer target: the SOCKS5 greeting, RFC 1929 and request parsers. Invariants: never
// crash; a complete parse consumes no more than it was given and reads the same from exactly
// those bytes; every shorter prefix of a complete message is incomplete.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "proxy/socks5_parser.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

template <typename T, typename Parse, typename Same>
void CheckIncremental(const std::string& input, Parse parse, Same same) {
  const ccsandbox::proxy::Socks5Parse<T> full = parse(input);
  if (full.state != ccsandbox::proxy::Socks5ParseState::kComplete) return;
  FUZZ_CHECK(full.consumed > 0 && full.consumed <= input.size());
  const ccsandbox::proxy::Socks5Parse<T> exact = parse(input.substr(0, full.consumed));
  FUZZ_CHECK(exact.state == ccsandbox::proxy::Socks5ParseState::kComplete);
  FUZZ_CHECK(exact.consumed == full.consumed && same(exact.value, full.value));
  for (size_t n = 0; n < full.consumed; ++n) {
    FUZZ_CHECK(parse(input.substr(0, n)).state != ccsandbox::proxy::Socks5ParseState::kComplete);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ccsandbox::proxy;
  const std::string input(reinterpret_cast<const char*>(data), size);
  CheckIncremental<Socks5Greeting>(
      input, ParseSocks5Greeting,
      [](const Socks5Greeting& a, const Socks5Greeting& b) { return a.methods == b.methods; });
  CheckIncremental<Socks5Credentials>(input, ParseSocks5UserPass,
                                      [](const Socks5Credentials& a, const Socks5Credentials& b) {
                                        return a.username == b.username && a.password == b.password;
                                      });
  CheckIncremental<Socks5Request>(
      input, ParseSocks5Request, [](const Socks5Request& a, const Socks5Request& b) {
        return a.command == b.command && a.host == b.host && a.port == b.port;
      });
  Socks5Parse<Socks5Greeting> greeting = ParseSocks5Greeting(input);
  if (greeting.state == Socks5ParseState::kComplete) {
    const uint8_t method = ChooseSocks5Method(greeting.value, size % 2 == 0);
    FUZZ_CHECK(method == kSocks5MethodNoAuth || method == kSocks5MethodUserPass ||
               method == kSocks5MethodNoneAcceptable);
    FUZZ_CHECK(BuildSocks5MethodSelection(method).size() == 2);
  }
  Socks5Parse<Socks5Request> request = ParseSocks5Request(input);
  if (request.state == Socks5ParseState::kComplete) {
    FUZZ_CHECK(!request.value.host.empty() && request.value.host.size() <= 255);
    FUZZ_CHECK(BuildSocks5Reply(kSocks5NotAllowed).size() == 10);
  }
  return 0;
}
