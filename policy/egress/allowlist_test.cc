#include "policy/egress/allowlist.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {
namespace {

EgressAllowlist Make(std::vector<std::string> spec_entries, bool network_enabled = true) {
  absl::StatusOr<EgressAllowlist> list = EgressAllowlist::Resolve(network_enabled, spec_entries);
  EXPECT_TRUE(list.ok()) << list.status();
  return *std::move(list);
}

struct HostCase {
  const char* host;
  uint16_t port;
  bool allowed;
  const char* reason_part;
};

void ExpectCases(const EgressAllowlist& list, const std::vector<HostCase>& cases) {
  for (const HostCase& c : cases) {
    EgressDecision d = list.CheckHost(c.host, c.port);
    EXPECT_EQ(d.allowed, c.allowed) << c.host << ":" << c.port << " -> " << d.reason;
    EXPECT_NE(d.reason.find(c.reason_part), std::string::npos)
        << c.host << ":" << c.port << " -> " << d.reason;
  }
}

TEST(EgressAllowlist, BaselineAndGithubWithTheNetworkOn) {
  ExpectCases(Make({}),
              {
                  {"api.anthropic.com", 443, true, "*.anthropic.com"},
                  {"API.Anthropic.com.", 443, true, "*.anthropic.com"},
                  {"api.openai.com", 443, true, "api.openai.com"},
                  {"bedrock-runtime.us-west-2.amazonaws.com", 443, true, "bedrock-runtime.*"},
                  {"registry.npmjs.org", 443, true, "registry.npmjs.org"},
                  {"files.pythonhosted.org", 443, true, ""},
                  {"huggingface.co", 443, true, ""},
                  {"cdn-lfs.hf.co", 443, true, "*.hf.co"},
                  {"github.com", 443, true, "github.com"},
                  {"github.com", 22, true, "github.com:22"},
                  {"ssh.github.com", 443, true, "*.github.com"},
                  {"codeload.github.com", 80, true, ""},
                  {"raw.githubusercontent.com", 443, true, ""},
                  // Not in the lists.
                  {"s3.amazonaws.com", 443, false, "not in the session's egress allowlist"},
                  {"evil-bucket.s3.amazonaws.com", 443, false, "not in"},
                  {"bedrock.evil.attacker.amazonaws.com", 443, false, "not in"},
                  {"anthropic.com", 443, false, "not in"},
                  {"gist.githubusercontent.com", 443, false, "not in"},
                  {"example.com", 443, false, "not in"},
                  // Allowed names on other ports.
                  {"api.anthropic.com", 22, false, "port 22 is not allowed"},
                  {"github.com", 8080, false, "add \"github.com:8080\""},
                  {"api.github.com", 22, false, "port 22"},
                  // The deny list beats the baseline's wildcard.
                  {"statsig.anthropic.com", 443, false, "permanently denied"},
                  {"o123.ingest.sentry.io", 443, false, "permanently denied"},
                  // Addresses need exact entries.
                  {"140.82.112.3", 443, false, "IP literals must be listed exactly"},
                  {"::1", 443, false, "IP literals must be listed exactly"},
                  // Hosts that do not normalise.
                  {"2130706433", 443, false, "invalid host"},
                  {"b\xc3\xbc"
                   "cher.example",
                   443, false, "punycode"},
                  {"", 443, false, "invalid host"},
              });
}

TEST(EgressAllowlist, SpecEntriesExtendTheBaseline) {
  EgressAllowlist list = Make({"*.corp.example", "internal.example:8443", "bedrock.*.example.org",
                               "203.0.113.7", "[2001:db8::7]:8080", "xn--bcher-kva.example"});
  ExpectCases(list, {
                        {"git.corp.example", 443, true, "*.corp.example"},
                        {"a.b.corp.example", 80, true, ""},
                        {"corp.example", 443, false, "not in"},
                        {"git.corp.example", 8443, false, "port 8443"},
                        {"internal.example", 8443, true, "internal.example:8443"},
                        {"internal.example", 443, false, "port 443"},
                        {"bedrock.eu.example.org", 443, true, ""},
                        {"bedrock.a.b.example.org", 443, false, "not in"},
                        {"203.0.113.7", 443, true, "203.0.113.7"},
                        {"::ffff:203.0.113.7", 80, true, "203.0.113.7"},
                        {"203.0.113.8", 443, false, "IP literals"},
                        {"2001:db8::7", 8080, true, ""},
                        {"[2001:DB8:0::7]", 8080, true, ""},
                        {"2001:db8::7", 443, false, "port 443"},
                        {"XN--BCHER-KVA.example", 443, true, ""},
                        {"github.com", 22, true, ""},
                    });
}

TEST(EgressAllowlist, DenyListWinsOverEveryAllowIncludingExactSpecEntries) {
  EgressAllowlist list =
      Make({"*.google.internal", "metadata.google.internal", "169.254.169.254", "fd00:ec2::254",
            "metadata", "*.sentry.io", "*.statsigapi.net", "100.100.100.200:80"});
  ExpectCases(list, {
                        {"metadata.google.internal", 80, false, "permanently denied"},
                        {"METADATA.google.internal.", 80, false, "permanently denied"},
                        {"other.google.internal", 443, true, "*.google.internal"},
                        {"169.254.169.254", 80, false, "permanently denied"},
                        {"::ffff:169.254.169.254", 80, false, "permanently denied"},
                        {"[fd00:ec2::254]", 80, false, "permanently denied"},
                        {"fd00:ec2:0::254", 443, false, "permanently denied"},
                        {"100.100.100.200", 80, false, "permanently denied"},
                        {"metadata", 80, false, "permanently denied"},
                        {"metadata.", 80, false, "permanently denied"},
                        {"x.sentry.io", 443, false, "permanently denied"},
                        {"events.statsigapi.net", 443, false, "permanently denied"},
                        // A deny entry covers every port, not just the defaults.
                        {"metadata.google.internal", 8080, false, "permanently denied"},
                    });
}

TEST(EgressAllowlist, NetworkDisabledRefusesEverything) {
  EgressAllowlist list = Make({"allowed.test:8080", "127.0.0.1:8080"}, /*network_enabled=*/false);
  EXPECT_FALSE(list.network_enabled());
  EXPECT_TRUE(list.AllowEntries().empty());
  ExpectCases(list, {
                        {"github.com", 443, false, "networkEnabled=false"},
                        {"api.anthropic.com", 443, false, "networkEnabled=false"},
                        {"allowed.test", 8080, false, "networkEnabled=false"},
                        {"127.0.0.1", 8080, false, "networkEnabled=false"},
                    });
}

TEST(EgressAllowlist, NetworkDisabledStillValidatesTheSpec) {
  std::vector<std::string> entries = {"a*b.com"};
  EXPECT_EQ(EgressAllowlist::Resolve(false, entries).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(EgressAllowlist, DecisionTargetsAreNormalisedHostPort) {
  EgressAllowlist list = Make({});
  EXPECT_EQ(list.CheckHost("GitHub.com.", 443).target, "github.com:443");
  EXPECT_EQ(list.CheckHost("[::1]", 8080).target, "[::1]:8080");
  EXPECT_EQ(list.CheckHost("::ffff:10.0.0.1", 80).target, "10.0.0.1:80");
  EXPECT_EQ(list.CheckHost("bad host\r\n", 80).target, "bad host\\r\\n:80");
}

std::optional<IpAddress> Ip(const char* text) { return ParseIpLiteral(text); }

TEST(EgressAllowlist, RebindingGuardRefusesSpecialAddressesUnlessTheExactNameIsListed) {
  EgressAllowlist list = Make({"*.wild.test", "exact.test:8080", "127.0.0.1:9000"});
  const EgressDecision baseline = list.CheckHost("registry.npmjs.org", 443);
  const EgressDecision wildcard = list.CheckHost("a.wild.test", 443);
  const EgressDecision exact = list.CheckHost("exact.test", 8080);
  const EgressDecision literal = list.CheckHost("127.0.0.1", 9000);
  ASSERT_TRUE(baseline.allowed && wildcard.allowed && exact.allowed && literal.allowed);
  EXPECT_FALSE(baseline.exact_spec_entry);
  EXPECT_FALSE(wildcard.exact_spec_entry);
  EXPECT_TRUE(exact.exact_spec_entry);
  EXPECT_TRUE(literal.exact_spec_entry);

  for (const char* address : {"104.16.1.34", "2606:4700::6810:122"}) {
    EXPECT_TRUE(list.CheckAddress(baseline, *Ip(address)).ok()) << address;
    EXPECT_TRUE(list.CheckAddress(wildcard, *Ip(address)).ok()) << address;
  }
  for (const char* address :
       {"127.0.0.1", "10.0.0.5", "172.20.1.1", "192.168.0.1", "100.64.1.1", "169.254.1.1",
        "0.0.0.0", "224.0.0.251", "255.255.255.255", "::1", "::", "fe80::1", "fc00::1",
        "fd12:3456::1", "ff02::1", "::ffff:127.0.0.1", "64:ff9b::7f00:1", "2002:c0a8:1::1"}) {
    absl::Status baseline_status = list.CheckAddress(baseline, *Ip(address));
    EXPECT_EQ(baseline_status.code(), absl::StatusCode::kPermissionDenied) << address;
    EXPECT_NE(baseline_status.message().find("DNS-rebinding"), absl::string_view::npos);
    EXPECT_FALSE(list.CheckAddress(wildcard, *Ip(address)).ok()) << address;
    EXPECT_TRUE(list.CheckAddress(exact, *Ip(address)).ok()) << address;
  }
  EXPECT_TRUE(list.CheckAddress(literal, *Ip("127.0.0.1")).ok());
}

TEST(EgressAllowlist, MetadataAddressesAreRefusedEvenForExactNames) {
  EgressAllowlist list = Make({"exact.test"});
  const EgressDecision exact = list.CheckHost("exact.test", 443);
  ASSERT_TRUE(exact.allowed);
  for (const char* address :
       {"169.254.169.254", "::ffff:169.254.169.254", "fd00:ec2::254", "100.100.100.200",
        "169.254.170.2", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "168.63.129.16"}) {
    absl::Status status = list.CheckAddress(exact, *Ip(address));
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << address;
    EXPECT_NE(status.message().find("permanently denied"), absl::string_view::npos)
        << address << ": " << status.message();
  }
}

TEST(EgressAllowlist, CheckAddressRefusesARefusedDecision) {
  EgressAllowlist list = Make({});
  const EgressDecision refused = list.CheckHost("evil.example", 443);
  EXPECT_FALSE(list.CheckAddress(refused, *Ip("93.184.216.34")).ok());
}

TEST(ValidateEgressAllowlist, NamesTheFirstBadEntryWithItsIndex) {
  v1::SandboxSpec spec;
  spec.add_egress_allowlist("*.ok.example.com");
  spec.add_egress_allowlist("a*b.com");
  spec.add_egress_allowlist("*.*.bad.com");
  absl::Status status = ValidateEgressAllowlist(spec.egress_allowlist());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("egressAllowlist[1]: \"a*b.com\""), absl::string_view::npos)
      << status.message();
  EXPECT_NE(status.message().find("whole label"), absl::string_view::npos);
}

TEST(ValidateEgressAllowlist, AcceptsEveryFormAndTheEmptyList) {
  v1::SandboxSpec spec;
  EXPECT_TRUE(ValidateEgressAllowlist(spec.egress_allowlist()).ok());
  for (const char* entry :
       {"example.com", "*.example.com", "bedrock.*.amazonaws.com", "example.com:8443", "10.1.2.3",
        "[fd00::1]:22", "fd00::1", "xn--bcher-kva.example", "Example.COM."}) {
    spec.add_egress_allowlist(entry);
  }
  EXPECT_TRUE(ValidateEgressAllowlist(spec.egress_allowlist()).ok());
  absl::StatusOr<EgressAllowlist> list = EgressAllowlist::Resolve(true, spec.egress_allowlist());
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->AllowEntries().back(), "example.com");
}

TEST(ValidateEgressAllowlist, EscapesControlBytesInTheMessage) {
  std::vector<std::string> entries = {"evil\r\nX-Injected: 1"};
  absl::Status status = ValidateEgressAllowlist(entries);
  EXPECT_EQ(status.message().find('\n'), absl::string_view::npos);
}

}  // namespace
}  // namespace ccsandbox::policy
