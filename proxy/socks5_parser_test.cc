#include "proxy/socks5_parser.h"

#include <string>

#include "gtest/gtest.h"

namespace ccsandbox::proxy {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

TEST(ParseSocks5Greeting, IncrementalAndStrict) {
  const std::string greeting = Bytes({5, 2, 0, 2});
  for (size_t n = 0; n < greeting.size(); ++n) {
    EXPECT_EQ(ParseSocks5Greeting(greeting.substr(0, n)).state, Socks5ParseState::kIncomplete);
  }
  Socks5Parse<Socks5Greeting> parsed = ParseSocks5Greeting(greeting + "extra");
  ASSERT_EQ(parsed.state, Socks5ParseState::kComplete);
  EXPECT_EQ(parsed.consumed, 4u);
  EXPECT_EQ(parsed.value.methods, (std::vector<uint8_t>{0, 2}));
  EXPECT_EQ(ParseSocks5Greeting(Bytes({4, 1, 0})).state, Socks5ParseState::kInvalid);
  EXPECT_EQ(ParseSocks5Greeting(Bytes({5, 0})).state, Socks5ParseState::kInvalid);
}

TEST(ChooseSocks5Method, PrefersNoAuthUnlessCredentialsAreRequired) {
  EXPECT_EQ(ChooseSocks5Method({{0, 2}}, false), kSocks5MethodNoAuth);
  EXPECT_EQ(ChooseSocks5Method({{2}}, false), kSocks5MethodUserPass);
  EXPECT_EQ(ChooseSocks5Method({{0, 2}}, true), kSocks5MethodUserPass);
  EXPECT_EQ(ChooseSocks5Method({{0}}, true), kSocks5MethodNoneAcceptable);
  EXPECT_EQ(ChooseSocks5Method({{1, 3, 0x80}}, false), kSocks5MethodNoneAcceptable);
}

TEST(ParseSocks5UserPass, Rfc1929) {
  const std::string auth = Bytes({1, 3}) + "bob" + Bytes({2}) + "pw";
  for (size_t n = 0; n < auth.size(); ++n) {
    EXPECT_EQ(ParseSocks5UserPass(auth.substr(0, n)).state, Socks5ParseState::kIncomplete);
  }
  Socks5Parse<Socks5Credentials> parsed = ParseSocks5UserPass(auth);
  ASSERT_EQ(parsed.state, Socks5ParseState::kComplete);
  EXPECT_EQ(parsed.value.username, "bob");
  EXPECT_EQ(parsed.value.password, "pw");
  EXPECT_EQ(parsed.consumed, auth.size());
  EXPECT_EQ(ParseSocks5UserPass(Bytes({5, 0, 0})).state, Socks5ParseState::kInvalid);
}

TEST(ParseSocks5Request, AllThreeAddressTypes) {
  const std::string domain = Bytes({5, 1, 0, 3, 12}) + "allowed.test" + Bytes({0x1f, 0x90});
  for (size_t n = 0; n < domain.size(); ++n) {
    EXPECT_EQ(ParseSocks5Request(domain.substr(0, n)).state, Socks5ParseState::kIncomplete) << n;
  }
  Socks5Parse<Socks5Request> r = ParseSocks5Request(domain + "early");
  ASSERT_EQ(r.state, Socks5ParseState::kComplete);
  EXPECT_EQ(r.value.command, kSocks5CommandConnect);
  EXPECT_EQ(r.value.host, "allowed.test");
  EXPECT_EQ(r.value.port, 8080);
  EXPECT_EQ(r.consumed, domain.size());

  r = ParseSocks5Request(Bytes({5, 1, 0, 1, 127, 0, 0, 1, 0, 80}));
  ASSERT_EQ(r.state, Socks5ParseState::kComplete);
  EXPECT_EQ(r.value.host, "127.0.0.1");
  EXPECT_EQ(r.value.port, 80);

  r = ParseSocks5Request(Bytes({5, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0}));
  ASSERT_EQ(r.state, Socks5ParseState::kComplete);
  EXPECT_EQ(r.value.command, kSocks5CommandBind);
  EXPECT_EQ(r.value.host, "::1");
  EXPECT_EQ(r.value.port, 256);

  // IPv4-mapped IPv6 reads as the IPv4 address the policy compares.
  r = ParseSocks5Request(
      Bytes({5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 169, 254, 169, 254, 0, 80}));
  EXPECT_EQ(r.value.host, "169.254.169.254");
}

TEST(ParseSocks5Request, RefusesMalformedRequests) {
  Socks5Parse<Socks5Request> r = ParseSocks5Request(Bytes({5, 1, 0, 9, 1, 2}));
  EXPECT_EQ(r.state, Socks5ParseState::kInvalid);
  EXPECT_EQ(r.reply, kSocks5AddressTypeNotSupported);
  EXPECT_EQ(ParseSocks5Request(Bytes({4, 1, 0, 1})).state, Socks5ParseState::kInvalid);
  EXPECT_EQ(ParseSocks5Request(Bytes({5, 1, 1, 1, 1, 2, 3, 4, 0, 80})).state,
            Socks5ParseState::kInvalid);
  EXPECT_EQ(ParseSocks5Request(Bytes({5, 1, 0, 3, 0, 0, 80})).state, Socks5ParseState::kInvalid);
}

TEST(BuildSocks5Reply, Layout) {
  EXPECT_EQ(BuildSocks5Reply(kSocks5NotAllowed), Bytes({5, 2, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(BuildSocks5Reply(kSocks5Succeeded, policy::IpAddress::V4(127, 0, 0, 1), 0x1234),
            Bytes({5, 0, 0, 1, 127, 0, 0, 1, 0x12, 0x34}));
  EXPECT_EQ(BuildSocks5Reply(kSocks5Succeeded, policy::ParseIpLiteral("::1"), 1).size(), 22u);
  EXPECT_EQ(BuildSocks5MethodSelection(kSocks5MethodNoneAcceptable), Bytes({5, 0xff}));
  EXPECT_EQ(BuildSocks5UserPassReply(false), Bytes({1, 1}));
}

}  // namespace
}  // namespace ccsandbox::proxy
