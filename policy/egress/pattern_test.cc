#include "policy/egress/pattern.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

bool Matches(const EgressPattern& pattern, const std::string& host) {
  absl::StatusOr<EgressHost> normalised = NormalizeEgressHost(host);
  return normalised.ok() && pattern.MatchesHost(*normalised);
}

struct MatchCase {
  const char* entry;
  std::vector<std::string> match;
  std::vector<std::string> no_match;
};

TEST(EgressPattern, MatchesAsTheSpecSays) {
  const MatchCase cases[] = {
      // The spec's examples.
      {"*.example.com",
       {"a.example.com", "a.b.example.com", "x.y.z.example.com", "A.EXAMPLE.COM", "a.example.com."},
       {"example.com", "example.com.", "aexample.com", "example.com.evil.com", "a.example.co",
        "a.example.comx"}},
      {"bedrock.*.amazonaws.com",
       {"bedrock.us-east-1.amazonaws.com", "BEDROCK.eu-west-3.AmazonAWS.com",
        "bedrock.us-east-1.amazonaws.com."},
       {"bedrock.amazonaws.com", "bedrock.evil.attacker.amazonaws.com", "bedrock.a.b.amazonaws.com",
        "xbedrock.us-east-1.amazonaws.com", "bedrock-runtime.us-east-1.amazonaws.com",
        "s3.amazonaws.com", "bedrock.us-east-1.amazonaws.com.evil.com"}},
      // Exact names: case and one trailing dot, nothing else.
      {"example.com",
       {"example.com", "EXAMPLE.com", "example.com."},
       {"a.example.com", "example.co", "example.com.evil", "www.example.com"}},
      {"Example.COM.", {"example.com"}, {"a.example.com"}},
      // Two fixed labels before the star.
      {"api.eu.*.example.com",
       {"api.eu.x.example.com"},
       {"api.eu.example.com", "api.eu.x.y.example.com"}},
      // Punycode compares as ASCII.
      {"xn--bcher-kva.example",
       {"XN--BCHER-KVA.example", "xn--bcher-kva.example."},
       {"bucher.example"}},
      {"*.xn--bcher-kva.example", {"www.xn--bcher-kva.example"}, {"xn--bcher-kva.example"}},
      // IP literals: exactly, and never through a wildcard or a name.
      {"203.0.113.7",
       {"203.0.113.7", "::ffff:203.0.113.7", "[::ffff:203.0.113.7]"},
       {"203.0.113.8", "203.0.113.07", "3405803783", "203.0.113.7.example.com"}},
      {"2001:db8::1", {"2001:DB8:0:0:0:0:0:1", "[2001:db8::1]"}, {"2001:db8::2", "::1"}},
      {"[2001:db8::1]:8443", {"2001:db8::1"}, {"2001:db8::2"}},
      {"*.example.com:8443", {"a.example.com"}, {"example.com"}},
  };
  for (const MatchCase& c : cases) {
    absl::StatusOr<EgressPattern> pattern = EgressPattern::Parse(c.entry);
    ASSERT_TRUE(pattern.ok()) << c.entry << ": " << pattern.status();
    for (const std::string& host : c.match) {
      EXPECT_TRUE(Matches(*pattern, host)) << c.entry << " should match " << host;
    }
    for (const std::string& host : c.no_match) {
      EXPECT_FALSE(Matches(*pattern, host)) << c.entry << " should not match " << host;
    }
  }
}

TEST(EgressPattern, NamesNeverMatchAddressesAndBack) {
  EXPECT_FALSE(Matches(*EgressPattern::Parse("*.0.0.1.example.com"), "127.0.0.1"));
  EXPECT_FALSE(Matches(*EgressPattern::Parse("localhost"), "127.0.0.1"));
  EXPECT_FALSE(Matches(*EgressPattern::Parse("127.0.0.1"), "localhost"));
}

struct InvalidCase {
  const char* entry;
  const char* message_part;
};

TEST(EgressPattern, RejectsEverythingElse) {
  const InvalidCase cases[] = {
      {"", "empty"},
      {"*", "last label"},
      {"*.", "last label"},
      {"*.com", "two fixed labels"},
      {"a.*.com", "two fixed labels"},
      {"example.*", "last label"},
      {"*.*.example.com", "more than one"},
      {"**.example.com", "more than one"},
      {"a.*.*.example.com", "more than one"},
      {"a*b.com", "whole label"},
      {"*example.com", "whole label"},
      {"*a.example.com", "whole label"},
      {"a.b*.example.com", "whole label"},
      {".example.com", "empty"},
      {"a..example.com", "empty"},
      {"*..example.com", "empty"},
      {"example..com", "empty"},
      {"*.example.com..", "empty"},
      {" example.com", "whitespace"},
      {"example.com ", "whitespace"},
      {"exa mple.com", "whitespace"},
      {"example.com:", "port"},
      {"example.com:0", "port"},
      {"example.com:65536", "port"},
      {"example.com:08443", "port"},
      {"example.com:https", "port"},
      {"example.com:-1", "port"},
      {"[::1]8080", "':port'"},
      {"[::1", "']'"},
      {"*.1.2.3", "IP address"},
      {"*.example.0x10", "IP address"},
      {"b\xc3\xbc"
       "cher.example",
       "punycode"},
      {"*.b\xc3\xbc"
       "cher.example",
       "punycode"},
      {"xn--.example", "ends with"},
      {"127.1", "dotted-quad"},
      {"2130706433", "dotted-quad"},
      {"user@example.com", "not allowed"},
      {"http://example.com", "port"},
      {"example.com/path", "not allowed"},
      {"fe80::1%eth0", "IPv6"},
  };
  for (const InvalidCase& c : cases) {
    absl::StatusOr<EgressPattern> pattern = EgressPattern::Parse(c.entry);
    ASSERT_FALSE(pattern.ok()) << "accepted: " << c.entry;
    EXPECT_EQ(pattern.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(pattern.status().message().find(c.message_part), absl::string_view::npos)
        << c.entry << ": " << pattern.status().message();
  }
}

struct CanonicalCase {
  const char* entry;
  const char* text;
  EgressPattern::Kind kind;
};

TEST(EgressPattern, CanonicalSpellingAndKind) {
  const CanonicalCase cases[] = {
      {"Example.COM.", "example.com", EgressPattern::Kind::kExactName},
      {"*.Example.com.:8443", "*.example.com:8443", EgressPattern::Kind::kAnySubdomain},
      {"Bedrock.*.AmazonAWS.com", "bedrock.*.amazonaws.com", EgressPattern::Kind::kOneLabel},
      {"2001:DB8::1", "2001:db8::1", EgressPattern::Kind::kAddress},
      {"[2001:DB8::1]", "2001:db8::1", EgressPattern::Kind::kAddress},
      {"[2001:db8::1]:22", "[2001:db8::1]:22", EgressPattern::Kind::kAddress},
      {"127.0.0.1:8080", "127.0.0.1:8080", EgressPattern::Kind::kAddress},
      {"github.com:22", "github.com:22", EgressPattern::Kind::kExactName},
  };
  for (const CanonicalCase& c : cases) {
    absl::StatusOr<EgressPattern> pattern = EgressPattern::Parse(c.entry);
    ASSERT_TRUE(pattern.ok()) << c.entry << ": " << pattern.status();
    EXPECT_EQ(pattern->text(), c.text);
    EXPECT_EQ(pattern->kind(), c.kind) << c.entry;
  }
}

TEST(EgressPattern, PortsDefaultTo80And443AndAnExplicitPortIsTheOnlyOne) {
  absl::StatusOr<EgressPattern> plain = EgressPattern::Parse("example.com");
  EXPECT_TRUE(plain->AllowsPort(80));
  EXPECT_TRUE(plain->AllowsPort(443));
  EXPECT_FALSE(plain->AllowsPort(22));
  EXPECT_FALSE(plain->AllowsPort(8080));
  EXPECT_FALSE(plain->AllowsPort(0));
  EXPECT_FALSE(plain->port().has_value());
  absl::StatusOr<EgressPattern> ssh = EgressPattern::Parse("example.com:22");
  EXPECT_TRUE(ssh->AllowsPort(22));
  EXPECT_FALSE(ssh->AllowsPort(443));
  EXPECT_EQ(ssh->port(), 22);
  EXPECT_TRUE(EgressPattern::Parse("example.com:65535")->AllowsPort(65535));
}

}  // namespace
}  // namespace ccsandbox::policy
