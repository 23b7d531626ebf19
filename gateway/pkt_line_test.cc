#include "gateway/pkt_line.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ccsandbox::gateway {
namespace {

// The packets of `wire` as text: "data:<bytes>", "flush", "delim", "end"; then "more" when
// bytes are missing, or "error" (and nothing after it).
std::vector<std::string> Parse(const std::string& wire, size_t chunk) {
  PktLineReader reader;
  std::vector<std::string> out;
  for (size_t at = 0; at < wire.size() || at == 0; at += chunk) {
    reader.Feed(wire.substr(at, chunk));
    for (;;) {
      absl::StatusOr<std::optional<PktLine>> line = reader.Next();
      if (!line.ok()) {
        out.push_back("error");
        return out;
      }
      if (!line->has_value()) break;
      switch ((*line)->kind) {
        case PktLine::Kind::kData:
          out.push_back("data:" + (*line)->data);
          break;
        case PktLine::Kind::kFlush:
          out.push_back("flush");
          break;
        case PktLine::Kind::kDelim:
          out.push_back("delim");
          break;
        case PktLine::Kind::kResponseEnd:
          out.push_back("end");
          break;
      }
    }
    if (wire.empty()) break;
  }
  if (!reader.Rest().empty()) out.push_back("more");
  return out;
}

struct Case {
  std::string name;
  std::string wire;
  std::vector<std::string> packets;
};

class PktLineTable : public ::testing::TestWithParam<Case> {};

// Whole, and byte by byte: packets come out the same however the bytes arrive.
TEST_P(PktLineTable, ParsesAsTheTableSays) {
  const Case& c = GetParam();
  EXPECT_EQ(Parse(c.wire, c.wire.size() + 1), c.packets);
  EXPECT_EQ(Parse(c.wire, 1), c.packets);
}

INSTANTIATE_TEST_SUITE_P(
    Wire, PktLineTable,
    ::testing::Values(Case{"Empty", "", {}}, Case{"OneLine", "000ahello\n", {"data:hello\n"}},
                      Case{"Special", "000000010002", {"flush", "delim", "end"}},
                      Case{"UpperHex", "000Ahello\n", {"data:hello\n"}},
                      Case{"EmptyData", "0004", {"data:"}}, Case{"Partial", "000ahel", {"more"}},
                      Case{"PartialHeader", "00", {"more"}},
                      Case{"LinesThenFlush", "0006ab0006cd0000", {"data:ab", "data:cd", "flush"}},
                      Case{"Three", "0003", {"error"}}, Case{"NotHex", "00g4abcd", {"error"}},
                      Case{"Space", " 004", {"error"}}, Case{"Sign", "-004", {"error"}},
                      Case{"AboveTheMaximum", "fff1", {"error"}},
                      Case{"ErrorAfterAGoodLine", "0006abzzzz", {"data:ab", "error"}}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(PktLine, TheLargestLineRoundTrips) {
  const std::string data(kPktLineDataMax, 'x');
  const std::string wire = PktLine::Data(data).Encode();
  EXPECT_EQ(wire.substr(0, 4), "fff0");
  EXPECT_EQ(Parse(wire, 4096), std::vector<std::string>{"data:" + data});
}

TEST(PktLine, EncodesSpecialPackets) {
  EXPECT_EQ(PktLine::Flush().Encode(), "0000");
  EXPECT_EQ(PktLine::Data("").Encode(), "0004");
  EXPECT_EQ(PktLine::Data("unpack ok\n").Encode(), "000eunpack ok\n");
}

TEST(PktLine, ARestAfterThePacketsIsKept) {
  PktLineReader reader;
  reader.Feed("0006ab0000PACK");
  ASSERT_TRUE(reader.Next().ok());
  ASSERT_TRUE(reader.Next().ok());
  EXPECT_EQ(reader.consumed(), 10u);
  EXPECT_EQ(reader.Rest(), "PACK");
}

TEST(PktLine, AFailedReaderStaysFailed) {
  PktLineReader reader;
  reader.Feed("zzzz");
  EXPECT_FALSE(reader.Next().ok());
  reader.Feed("0006ab");
  EXPECT_FALSE(reader.Next().ok());
}

TEST(PktLine, ManyPacketsDoNotGrowTheBufferWithoutBound) {
  PktLineReader reader;
  const std::string line = PktLine::Data(std::string(1000, 'y')).Encode();
  for (int i = 0; i < 10000; ++i) {
    reader.Feed(line);
    absl::StatusOr<std::optional<PktLine>> next = reader.Next();
    ASSERT_TRUE(next.ok() && next->has_value());
  }
  EXPECT_EQ(reader.consumed(), 10000u * line.size());
  EXPECT_TRUE(reader.Rest().empty());
}

}  // namespace
}  // namespace ccsandbox::gateway
