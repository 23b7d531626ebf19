#include "proxy/http_head_parser.h"

#include <string>

#include "gtest/gtest.h"

namespace ccsandbox::proxy {
namespace {

TEST(ScanRequestHead, FindsTheBlankLineAndBoundsTheHead) {
  EXPECT_EQ(ScanRequestHead("GET / HTTP/1.1\r\n").state, HeadScan::State::kIncomplete);
  HeadScan scan = ScanRequestHead("CONNECT a:1 HTTP/1.1\r\n\r\nearly");
  EXPECT_EQ(scan.state, HeadScan::State::kComplete);
  EXPECT_EQ(scan.head_size, 24u);
  // Resumes where it left off without missing a terminator split across reads.
  const std::string split = "GET / HTTP/1.1\r\nA: b\r\n\r";
  EXPECT_EQ(ScanRequestHead(split).state, HeadScan::State::kIncomplete);
  EXPECT_EQ(ScanRequestHead(split + "\n", split.size()).state, HeadScan::State::kComplete);
  const std::string big(kMaxRequestHeadBytes, 'a');
  EXPECT_EQ(ScanRequestHead(big).state, HeadScan::State::kTooLarge);
  // A terminator past 16 KiB does not count.
  EXPECT_EQ(ScanRequestHead(big + "\r\n\r\n").state, HeadScan::State::kTooLarge);
  std::string exact = "GET / HTTP/1.1\r\nX: ";
  exact += std::string(kMaxRequestHeadBytes - exact.size() - 4, 'a') + "\r\n\r\n";
  EXPECT_EQ(ScanRequestHead(exact).state, HeadScan::State::kComplete);
}

TEST(ParseRequestHead, ParsesAWellFormedHead) {
  absl::StatusOr<HttpRequestHead> head = ParseRequestHead(
      "CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n"
      "Proxy-Connection:  keep-alive \r\nUser-Agent: curl/7.88\r\n\r\n");
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->method, "CONNECT");
  EXPECT_EQ(head->target, "api.github.com:443");
  EXPECT_EQ(head->minor_version, 1);
  ASSERT_EQ(head->headers.size(), 3u);
  EXPECT_EQ(head->Find("proxy-connection")->value, "keep-alive");
  EXPECT_EQ(head->Find("x-missing"), nullptr);
  EXPECT_TRUE(ParseRequestHead("GET http://a.test/ HTTP/1.0\r\n\r\n").ok());
}

struct BadCase {
  const char* head;
  int status;
};

TEST(ParseRequestHead, RefusesWhatCouldBeReadTwoWays) {
  const BadCase cases[] = {
      {"GET http://a/ HTTP/1.1\r\n\r\n", 0},  // sanity: ok
      {"\r\nGET http://a/ HTTP/1.1\r\n\r\n", 400},
      {"GET  http://a/ HTTP/1.1\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1 \r\n\r\n", 400},
      {"GET http://a/\r\n\r\n", 400},
      {"G(T http://a/ HTTP/1.1\r\n\r\n", 400},
      {"GET http://a/\x01 HTTP/1.1\r\n\r\n", 400},
      {"GET http://a/ HTTP/2.0\r\n\r\n", 505},
      {"GET http://a/ HTTP/1.2\r\n\r\n", 505},
      {"GET http://a/ HTTP/1.1x\r\n\r\n", 400},
      {"GET http://a/ http/1.1\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1\nHost: a\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1\r\nHost : a\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1\r\n Host: a\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1\r\nNoColon\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1\r\n: empty\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1\r\nX: a\x7f\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400},
      {"POST http://a/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"POST http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 400},
      {"POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400},
      {"POST http://a/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
      {"GET http://a/ HTTP/1.1\r\n", 400},
  };
  for (const BadCase& c : cases) {
    absl::StatusOr<HttpRequestHead> head = ParseRequestHead(c.head);
    if (c.status == 0) {
      EXPECT_TRUE(head.ok()) << c.head;
    } else {
      ASSERT_FALSE(head.ok()) << c.head;
      EXPECT_EQ(HttpStatusForParseError(head.status()), c.status) << c.head;
    }
  }
}

TEST(ParseRequestHead, AcceptsChunkedAndRepeatedEqualLengths) {
  EXPECT_TRUE(
      ParseRequestHead("POST http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n").ok());
  EXPECT_TRUE(
      ParseRequestHead("POST http://a/ HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n")
          .ok());
  EXPECT_TRUE(ParseRequestHead("GET http://a/ HTTP/1.1\r\nX-Bin: caf\xc3\xa9\r\n\r\n").ok());
}

TEST(ParseRequestHead, BoundsHeaderCount) {
  std::string head = "GET http://a/ HTTP/1.1\r\n";
  for (size_t i = 0; i < kMaxHeaderFields; ++i) head += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_TRUE(ParseRequestHead(head + "\r\n").ok());
  absl::StatusOr<HttpRequestHead> too_many = ParseRequestHead(head + "X-last: v\r\n\r\n");
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(HttpStatusForParseError(too_many.status()), 431);
}

struct AuthorityCase {
  const char* target;
  const char* host;  // nullptr: refused
  uint16_t port;
};

TEST(ParseConnectTarget, NeedsHostAndPort) {
  const AuthorityCase cases[] = {
      {"api.github.com:443", "api.github.com", 443},
      {"[::1]:8080", "::1", 8080},
      {"127.0.0.1:22", "127.0.0.1", 22},
      {"api.github.com", nullptr, 0},
      {"api.github.com:", nullptr, 0},
      {"api.github.com:0", nullptr, 0},
      {"api.github.com:65536", nullptr, 0},
      {"api.github.com:44x", nullptr, 0},
      {":443", nullptr, 0},
      {"::1:443", nullptr, 0},
      {"[::1]", nullptr, 0},
      {"[::1]x:443", nullptr, 0},
      {"[a.b]:443", nullptr, 0},
      {"user@api.github.com:443", nullptr, 0},
      {"api.github.com:443/x", nullptr, 0},
      {"http://api.github.com:443", nullptr, 0},
  };
  for (const AuthorityCase& c : cases) {
    absl::StatusOr<HttpAuthority> authority = ParseConnectTarget(c.target);
    if (c.host == nullptr) {
      EXPECT_FALSE(authority.ok()) << c.target;
    } else {
      ASSERT_TRUE(authority.ok()) << c.target << ": " << authority.status();
      EXPECT_EQ(authority->host, c.host);
      EXPECT_EQ(authority->port, c.port);
    }
  }
}

TEST(ParseAbsoluteHttpTarget, SplitsAuthorityAndOriginForm) {
  struct Case {
    const char* target;
    const char* host;
    uint16_t port;
    const char* host_header;
    const char* origin_form;
  };
  const Case cases[] = {
      {"http://a.test/x?y=1", "a.test", 80, "a.test", "/x?y=1"},
      {"HTTP://A.test:8080", "A.test", 8080, "A.test:8080", "/"},
      {"http://a.test?q", "a.test", 80, "a.test", "/?q"},
      {"http://[::1]:81/p", "::1", 81, "[::1]:81", "/p"},
      {"http://10.0.0.1/", "10.0.0.1", 80, "10.0.0.1", "/"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<AbsoluteHttpTarget> target = ParseAbsoluteHttpTarget(c.target);
    ASSERT_TRUE(target.ok()) << c.target << ": " << target.status();
    EXPECT_EQ(target->authority.host, c.host);
    EXPECT_EQ(target->authority.port, c.port);
    EXPECT_EQ(target->host_header, c.host_header);
    EXPECT_EQ(target->origin_form, c.origin_form);
  }
  for (const char* bad :
       {"/x", "https://a.test/", "ftp://a.test/", "http://", "http:///x", "http://user:pw@a.test/",
        "http://a.test/#frag", "http://a.test:/", "http://a.test:0/", "http://::1/", "a.test:80"}) {
    EXPECT_FALSE(ParseAbsoluteHttpTarget(bad).ok()) << bad;
  }
  EXPECT_NE(ParseAbsoluteHttpTarget("https://a/").status().message().find("CONNECT"),
            absl::string_view::npos);
}

}  // namespace
}  // namespace ccsandbox::proxy
