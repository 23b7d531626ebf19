#include "policy/egress/host.h"

#include <string>

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

struct HostCase {
  const char* raw;
  const char* normalised;  // nullptr: refused
};

TEST(NormalizeEgressHost, LowercasesDropsOneTrailingDotAndRefusesTheRest) {
  const HostCase cases[] = {
      {"api.github.com", "api.github.com"},
      {"API.GitHub.COM", "api.github.com"},
      {"api.github.com.", "api.github.com"},
      {"localhost", "localhost"},
      {"under_score.example.com", "under_score.example.com"},
      {"r3---sn-abc.googlevideo.com", "r3---sn-abc.googlevideo.com"},
      {"xn--bcher-kva.example", "xn--bcher-kva.example"},  // bücher
      {"XN--BCHER-KVA.example", "xn--bcher-kva.example"},
      {"1.2.3.4", "1.2.3.4"},
      {"[::1]", "::1"},
      {"::1", "::1"},
      {"[::ffff:127.0.0.1]", "127.0.0.1"},
      {"api.github.com..", nullptr},
      {".", nullptr},
      {"", nullptr},
      {".example.com", nullptr},
      {"a..example.com", nullptr},
      {"-a.example.com", nullptr},
      {"a-.example.com", nullptr},
      {"ex ample.com", nullptr},
      {"example.com:443", nullptr},
      {"user@example.com", nullptr},
      {"%65xample.com", nullptr},
      {"b\xc3\xbc"
       "cher.example",
       nullptr},  // raw UTF-8: must arrive as punycode
      {"xn--.example", nullptr},
      {"xn--abc-.example", nullptr},
      {"xn--ls8h-.example", nullptr},
      {"2130706433", nullptr},
      {"0x7f000001", nullptr},
      {"127.1", nullptr},
      {"0177.0.0.1", nullptr},
      {"example.123", nullptr},
      {"[1.2.3.4]", nullptr},
      {"fe80::1%eth0", nullptr},
  };
  for (const HostCase& c : cases) {
    absl::StatusOr<EgressHost> host = NormalizeEgressHost(c.raw);
    if (c.normalised == nullptr) {
      EXPECT_FALSE(host.ok()) << c.raw << " -> " << host->name;
    } else {
      ASSERT_TRUE(host.ok()) << c.raw << ": " << host.status();
      EXPECT_EQ(host->name, c.normalised) << c.raw;
    }
  }
}

TEST(NormalizeEgressHost, NulInsideIsRefused) {
  EXPECT_FALSE(NormalizeEgressHost(std::string("exa\0mple.com", 12)).ok());
}

TEST(NormalizeEgressHost, LengthLimits) {
  const std::string label63(63, 'a');
  EXPECT_TRUE(NormalizeEgressHost(label63 + ".com").ok());
  EXPECT_FALSE(NormalizeEgressHost(label63 + "a.com").ok());
  std::string long_name;
  while (long_name.size() < 251) long_name += "abcdefghi.";
  long_name += "com";  // 263
  EXPECT_FALSE(NormalizeEgressHost(long_name).ok());
  EXPECT_TRUE(NormalizeEgressHost(long_name.substr(long_name.size() - 253)).ok());
}

TEST(NormalizeEgressHost, RawNonAsciiSaysToUsePunycode) {
  absl::StatusOr<EgressHost> host = NormalizeEgressHost(
      "b\xc3\xbc"
      "cher.example");
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.status().message().find("punycode"), absl::string_view::npos);
}

TEST(NormalizeEgressHost, IpLiteralsAreMarked) {
  EXPECT_TRUE(NormalizeEgressHost("10.0.0.1")->is_ip());
  EXPECT_TRUE(NormalizeEgressHost("[fd00:ec2::254]")->is_ip());
  EXPECT_FALSE(NormalizeEgressHost("example.com")->is_ip());
}

TEST(DecodePunycode, Rfc3492Samples) {
  EXPECT_EQ(DecodePunycode("bcher-kva"), std::u32string(U"b\u00fccher"));
  EXPECT_EQ(DecodePunycode("mnchen-3ya"), std::u32string(U"m\u00fcnchen"));
  EXPECT_EQ(DecodePunycode("ls8h"), std::u32string(U"\U0001F4A9"));
  EXPECT_EQ(DecodePunycode("abc-"), std::u32string(U"abc"));
  EXPECT_FALSE(DecodePunycode("99999999999999").has_value());
  EXPECT_FALSE(DecodePunycode("a!").has_value());
}

TEST(FormatHostPort, BracketsIpv6Only) {
  EXPECT_EQ(FormatHostPort(*NormalizeEgressHost("example.com"), 443), "example.com:443");
  EXPECT_EQ(FormatHostPort(*NormalizeEgressHost("10.0.0.1"), 80), "10.0.0.1:80");
  EXPECT_EQ(FormatHostPort(*NormalizeEgressHost("::1"), 8080), "[::1]:8080");
}

TEST(SanitizeForReason, EscapesAndBounds) {
  EXPECT_EQ(SanitizeForReason("a\r\nb"), "a\\r\\nb");
  EXPECT_EQ(SanitizeForReason(std::string(300, 'x')).size(), 258u);
}

}  // namespace
}  // namespace ccsandbox::policy
