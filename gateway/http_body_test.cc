#include "gateway/http_body.h"

#include <string>

#include "gtest/gtest.h"

namespace ccsandbox::gateway {
namespace {

struct Case {
  std::string name;
  bool chunked;
  uint64_t length;
  std::string wire;
  // The decoded body and leftover when it ends; "" body + !done for incomplete; error: fails.
  bool done;
  bool error;
  std::string body;
  std::string leftover;
};

class BodyTable : public ::testing::TestWithParam<Case> {};

// Whole and byte by byte: the same body, the same end, the same error.
TEST_P(BodyTable, DecodesAsTheTableSays) {
  const Case& c = GetParam();
  for (size_t chunk : {c.wire.size() + 1, size_t{1}, size_t{3}}) {
    BodyDecoder body = c.chunked ? BodyDecoder::Chunked() : BodyDecoder::Length(c.length);
    std::string out;
    absl::Status fed;
    for (size_t at = 0; at < c.wire.size() && fed.ok(); at += chunk) {
      fed = body.Feed(absl::string_view(c.wire).substr(at, chunk), out);
    }
    EXPECT_EQ(!fed.ok(), c.error) << "chunk " << chunk << ": " << fed;
    if (c.error) continue;
    EXPECT_EQ(body.done(), c.done) << "chunk " << chunk;
    EXPECT_EQ(out, c.body) << "chunk " << chunk;
    EXPECT_EQ(body.Leftover(), c.leftover) << "chunk " << chunk;
    EXPECT_EQ(body.decoded(), c.body.size());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Framing, BodyTable,
    ::testing::Values(Case{"Length", false, 5, "hello", true, false, "hello", ""},
                      Case{"LengthThenMore", false, 5, "helloGET /", true, false, "hello", "GET /"},
                      Case{"LengthShort", false, 5, "hel", false, false, "hel", ""},
                      Case{"LengthZero", false, 0, "", true, false, "", ""},
                      Case{"Chunked", true, 0, "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", true,
                           false, "hello world", ""},
                      Case{"ChunkedUpperHexAndExtension", true, 0,
                           "A;name=v\r\n0123456789\r\n0\r\n\r\n", true, false, "0123456789", ""},
                      Case{"ChunkedTrailers", true, 0,
                           "1\r\nx\r\n0\r\nX-A: 1\r\nX-B: 2\r\n\r\nnext", true, false, "x", "next"},
                      Case{"ChunkedIncomplete", true, 0, "5\r\nhel", false, false, "hel", ""},
                      Case{"ChunkedNoFinalCrlf", true, 0, "1\r\nx\r\n0\r\n", false, false, "x", ""},
                      Case{"BareLf", true, 0, "5\nhello\r\n0\r\n\r\n", false, true, "", ""},
                      Case{"NotHex", true, 0, "5g\r\nhello\r\n0\r\n\r\n", false, true, "", ""},
                      Case{"EmptySize", true, 0, "\r\n", false, true, "", ""},
                      Case{"HugeSize", true, 0, "1000000000000000\r\n", false, true, "", ""},
                      Case{"DataLongerThanItsSize", true, 0, "1\r\nxy\r\n0\r\n\r\n", false, true,
                           "", ""},
                      Case{"EndlessSizeLine", true, 0, std::string(2000, '0'), false, true, "", ""},
                      Case{"EndlessTrailers", true, 0,
                           "0\r\n" + std::string(20000, 'x') + "\r\n\r\n", false, true, "", ""}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace ccsandbox::gateway
