#include "proxy/hosts_file_resolver.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asio/io_context.hpp"
#include "gtest/gtest.h"

namespace ccsandbox::proxy {
namespace {

// The table as "name=addr,addr" lines, for comparing whole tables.
std::string Render(const HostsTable& table) {
  std::vector<std::string> lines;
  for (const auto& [name, addresses] : table) {
    std::vector<std::string> texts;
    for (const asio::ip::address& address : addresses) texts.push_back(address.to_string());
    lines.push_back(absl::StrCat(name, "=", absl::StrJoin(texts, ",")));
  }
  return absl::StrJoin(lines, "\n");
}

struct GoodCase {
  std::string name;
  std::string text;
  std::string table;
};

TEST(ParseHostsFileTest, ReadsEveryEntry) {
  const std::vector<GoodCase> cases = {
      {"empty", "", ""},
      {"only comments and blanks", "# header\n\n   \n\t# indented\n", ""},
      {"one name", "127.0.0.1 allowed.test\n", "allowed.test=127.0.0.1"},
      {"several names", "10.0.0.1 a.test b.test\tc.test",
       "a.test=10.0.0.1\nb.test=10.0.0.1\nc.test=10.0.0.1"},
      {"trailing comment", "10.0.0.1 a.test # the a host\n", "a.test=10.0.0.1"},
      {"names normalised", "10.0.0.1 API.Example.COM.\n", "api.example.com=10.0.0.1"},
      {"crlf line ends", "10.0.0.1 a.test\r\n10.0.0.2 b.test\r\n",
       "a.test=10.0.0.1\nb.test=10.0.0.2"},
      {"ipv6", "::1 six.test\n2001:db8::5 six.test\n", "six.test=::1,2001:db8::5"},
      {"a name on two lines gets both addresses, once each",
       "10.0.0.1 a.test\n10.0.0.2 a.test\n10.0.0.1 A.test\n", "a.test=10.0.0.1,10.0.0.2"},
      {"underscores and punycode", "10.0.0.1 _svc.x.test xn--bcher-kva.test\n",
       "_svc.x.test=10.0.0.1\nxn--bcher-kva.test=10.0.0.1"},
  };
  for (const GoodCase& c : cases) {
    absl::StatusOr<HostsTable> table = ParseHostsFile(c.text, "hosts");
    ASSERT_TRUE(table.ok()) << c.name << ": " << table.status();
    EXPECT_EQ(Render(*table), c.table) << c.name;
  }
}

struct BadCase {
  std::string name;
  std::string text;
  std::string error;  // the whole message
};

TEST(ParseHostsFileTest, RefusesTheWholeFileNamingEachBadLine) {
  const std::vector<BadCase> cases = {
      {"not an address", "# ok\nallowed.test 127.0.0.1\n",
       "hosts:2: 'allowed.test' is not an IPv4 or IPv6 address"},
      {"an address without a name", "10.0.0.1 a.test\n10.0.0.2   # b.test\n",
       "hosts:2: expected 'ADDRESS NAME [NAME...]', got no name"},
      {"a non-strict IPv4", "127.1 a.test\n", "hosts:1: '127.1' is not an IPv4 or IPv6 address"},
      {"an IP literal as the name", "10.0.0.1 10.0.0.2\n",
       "hosts:1: name '10.0.0.2' is an address, not a name"},
      {"a name with a bad character", "10.0.0.1 a.test b/c.test\n", "hosts:1: name 'b/c.test': "},
      {"every bad line", "x a.test\n10.0.0.1 ok.test\ny b.test\n",
       "hosts:1: 'x' is not an IPv4 or IPv6 address; hosts:3: 'y' is not an IPv4 or IPv6 address"},
  };
  for (const BadCase& c : cases) {
    absl::StatusOr<HostsTable> table = ParseHostsFile(c.text, "hosts");
    ASSERT_FALSE(table.ok()) << c.name;
    EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_TRUE(absl::StartsWith(table.status().message(), c.error))
        << c.name << ": " << table.status().message();
  }
}

TEST(ParseHostsFileTest, QuotesAtMostTenBadLinesThenCountsTheRest) {
  std::string text;
  for (int i = 0; i < 25; ++i) text += "bad name.test\n";
  absl::StatusOr<HostsTable> table = ParseHostsFile(text, "hosts");
  ASSERT_FALSE(table.ok());
  const std::string message(table.status().message());
  EXPECT_TRUE(absl::StrContains(message, "hosts:10: ")) << message;
  EXPECT_FALSE(absl::StrContains(message, "hosts:11: ")) << message;
  EXPECT_TRUE(absl::EndsWith(message, "; and 15 more bad lines")) << message;
}

class HostsFileResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/hosts-file-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  // Resolves `host` on a loop of its own.
  absl::StatusOr<Resolver::Addresses> Resolve(Resolver& resolver, const std::string& host) {
    asio::io_context context;
    absl::StatusOr<Resolver::Addresses> result = absl::UnknownError("never called");
    int calls = 0;
    resolver.Resolve(host, context.get_executor(), [&](absl::StatusOr<Resolver::Addresses> got) {
      ++calls;
      result = std::move(got);
    });
    EXPECT_EQ(calls, 0) << "called before the loop ran";
    context.run();
    EXPECT_EQ(calls, 1);
    return result;
  }

  std::string dir_;
};

TEST_F(HostsFileResolverTest, AnswersTheFilesNamesAndNothingElse) {
  const std::string path = Write("hosts", "127.0.0.1 allowed.test\n::1 allowed.test six.test\n");
  absl::StatusOr<std::unique_ptr<HostsFileResolver>> resolver = HostsFileResolver::Load(path);
  ASSERT_TRUE(resolver.ok()) << resolver.status();
  EXPECT_EQ((*resolver)->size(), 2u);

  absl::StatusOr<Resolver::Addresses> allowed = Resolve(**resolver, "allowed.test");
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  ASSERT_EQ(allowed->size(), 2u);
  EXPECT_EQ((*allowed)[0].to_string(), "127.0.0.1");
  EXPECT_EQ((*allowed)[1].to_string(), "::1");

  absl::StatusOr<Resolver::Addresses> other = Resolve(**resolver, "example.com");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(other.status().message(), "example.com is not in the hosts file " + path);
}

TEST_F(HostsFileResolverTest, RefusesWhatIsNotASmallRegularFileOfGoodLines) {
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string large = Write("large", std::string(kMaxHostsFileBytes + 1, '#'));
  const std::string bad = Write("bad", "127.0.0.1 a.test\nnonsense\n");
  struct Case {
    std::string path;
    absl::StatusCode code;
    std::string error;
  };
  const std::vector<Case> cases = {
      {dir_ + "/missing", absl::StatusCode::kNotFound, "cannot open '" + dir_ + "/missing'"},
      {dir_, absl::StatusCode::kInvalidArgument, "'" + dir_ + "' is not a regular file"},
      {fifo, absl::StatusCode::kInvalidArgument, "'" + fifo + "' is not a regular file"},
      {large, absl::StatusCode::kInvalidArgument, "'" + large + "' is larger than 1048576 bytes"},
      {bad, absl::StatusCode::kInvalidArgument, bad + ":2: 'nonsense' is not an IPv4"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::unique_ptr<HostsFileResolver>> resolver = HostsFileResolver::Load(c.path);
    ASSERT_FALSE(resolver.ok()) << c.path;
    EXPECT_EQ(resolver.status().code(), c.code) << c.path << ": " << resolver.status();
    EXPECT_TRUE(absl::StartsWith(resolver.status().message(), c.error))
        << c.path << ": " << resolver.status();
  }
}

TEST_F(HostsFileResolverTest, AFileOfExactlyTheLimitIsRead) {
  std::string text = "127.0.0.1 a.test\n";
  text += std::string(kMaxHostsFileBytes - text.size(), '#');
  absl::StatusOr<std::unique_ptr<HostsFileResolver>> resolver =
      HostsFileResolver::Load(Write("limit", text));
  ASSERT_TRUE(resolver.ok()) << resolver.status();
  EXPECT_EQ((*resolver)->size(), 1u);
}

}  // namespace
}  // namespace ccsandbox::proxy
