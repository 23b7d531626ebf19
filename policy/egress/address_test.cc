#include "policy/egress/address.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

struct LiteralCase {
  const char* text;
  const char* canonical;  // nullptr: not a literal
};

TEST(ParseIpLiteral, AcceptsOnlyStrictSpellingsAndNormalises) {
  const LiteralCase cases[] = {
      {"127.0.0.1", "127.0.0.1"},
      {"0.0.0.0", "0.0.0.0"},
      {"255.255.255.255", "255.255.255.255"},
      {"::1", "::1"},
      {"[::1]", "::1"},
      {"FD00:EC2:0:0:0:0:0:254", "fd00:ec2::254"},
      {"fd00:ec2::254", "fd00:ec2::254"},
      {"::ffff:127.0.0.1", "127.0.0.1"},  // mapped IPv6 is the IPv4 address
      {"[::ffff:169.254.169.254]", "169.254.169.254"},
      {"::ffff:7f00:1", "127.0.0.1"},
      {"2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},
      // inet_aton spellings: refused, never reinterpreted.
      {"127.1", nullptr},
      {"0x7f.0.0.1", nullptr},
      {"0177.0.0.1", nullptr},
      {"2130706433", nullptr},
      {"127.0.0.01", nullptr},
      {"256.0.0.1", nullptr},
      {"1.2.3.4.", nullptr},
      {"1.2.3", nullptr},
      {"1..2.3", nullptr},
      {" 1.2.3.4", nullptr},
      {"1.2.3.4 ", nullptr},
      {"[1.2.3.4]", nullptr},
      {"fe80::1%eth0", nullptr},
      {"[fe80::1%25eth0]", nullptr},
      {"::1]", nullptr},
      {"[::1", nullptr},
      {"1:2:3:4:5:6:7:8:9", nullptr},
      {"", nullptr},
      {"example.com", nullptr},
  };
  for (const LiteralCase& c : cases) {
    std::optional<IpAddress> ip = ParseIpLiteral(c.text);
    if (c.canonical == nullptr) {
      EXPECT_FALSE(ip.has_value()) << c.text << " -> " << ip->ToString();
    } else {
      ASSERT_TRUE(ip.has_value()) << c.text;
      EXPECT_EQ(ip->ToString(), c.canonical) << c.text;
    }
  }
}

TEST(ParseIpLiteral, MappedAndPlainIpv4AreEqual) {
  EXPECT_EQ(*ParseIpLiteral("::ffff:10.1.2.3"), *ParseIpLiteral("10.1.2.3"));
  EXPECT_TRUE(ParseIpLiteral("::ffff:10.1.2.3")->is_v4());
  EXPECT_FALSE(*ParseIpLiteral("::1") == *ParseIpLiteral("127.0.0.1"));
}

struct ClassCase {
  const char* address;
  AddressClass expected;
};

TEST(ClassifyAddress, CoversEveryRangeTheRebindingGuardRefuses) {
  const ClassCase cases[] = {
      {"8.8.8.8", AddressClass::kPublic},
      {"140.82.112.3", AddressClass::kPublic},
      {"0.0.0.0", AddressClass::kUnspecified},
      {"0.1.2.3", AddressClass::kUnspecified},
      {"127.0.0.1", AddressClass::kLoopback},
      {"127.255.255.254", AddressClass::kLoopback},
      {"10.0.0.1", AddressClass::kPrivate},
      {"172.16.0.1", AddressClass::kPrivate},
      {"172.31.255.255", AddressClass::kPrivate},
      {"172.32.0.1", AddressClass::kPublic},
      {"172.15.255.255", AddressClass::kPublic},
      {"192.168.1.1", AddressClass::kPrivate},
      {"100.64.0.1", AddressClass::kSharedCgnat},
      {"100.127.255.255", AddressClass::kSharedCgnat},
      {"100.128.0.1", AddressClass::kPublic},
      {"100.100.100.200", AddressClass::kSharedCgnat},
      {"169.254.169.254", AddressClass::kLinkLocal},
      {"224.0.0.1", AddressClass::kMulticast},
      {"239.255.255.250", AddressClass::kMulticast},
      {"240.0.0.1", AddressClass::kReserved},
      {"255.255.255.255", AddressClass::kReserved},
      {"192.0.0.192", AddressClass::kReserved},
      {"192.0.2.1", AddressClass::kReserved},
      {"198.18.0.1", AddressClass::kReserved},
      {"198.51.100.1", AddressClass::kReserved},
      {"203.0.113.1", AddressClass::kReserved},
      {"::", AddressClass::kUnspecified},
      {"::1", AddressClass::kLoopback},
      {"fe80::1", AddressClass::kLinkLocal},
      {"febf::1", AddressClass::kLinkLocal},
      {"fec0::1", AddressClass::kUniqueLocal},
      {"fc00::1", AddressClass::kUniqueLocal},
      {"fd00:ec2::254", AddressClass::kUniqueLocal},
      {"ff02::1", AddressClass::kMulticast},
      {"::ffff:127.0.0.1", AddressClass::kLoopback},
      {"64:ff9b::a9fe:a9fe", AddressClass::kLinkLocal},  // NAT64 of 169.254.169.254
      {"64:ff9b::808:808", AddressClass::kPublic},
      {"2002:7f00:1::", AddressClass::kLoopback},     // 6to4 of 127.0.0.1
      {"2002:0a00:0001::1", AddressClass::kPrivate},  // 6to4 of 10.0.0.1
      {"::7f00:1", AddressClass::kReserved},          // IPv4-compatible
      {"2001:db8::1", AddressClass::kReserved},
      {"2001:0:4136:e378::1", AddressClass::kReserved},  // Teredo
      {"100::1", AddressClass::kReserved},
      {"2606:4700::1111", AddressClass::kPublic},
  };
  for (const ClassCase& c : cases) {
    std::optional<IpAddress> ip = ParseIpLiteral(c.address);
    ASSERT_TRUE(ip.has_value()) << c.address;
    EXPECT_EQ(ClassifyAddress(*ip), c.expected)
        << c.address << " is " << AddressClassName(ClassifyAddress(*ip));
  }
}

}  // namespace
}  // namespace ccsandbox::policy
