#include "broker/microvm/egress_frame.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ccsandbox::broker::microvm {
namespace {

std::string Header(char type, uint32_t stream, uint32_t size) {
  return std::string(1, type) + EncodeU32(stream) + EncodeU32(size);
}

TEST(EgressFrameTest, FramesRoundTripEvenByteByByte) {
  const std::string stream =
      EncodeEgressFrame(EgressFrameType::kOpen, 1, std::string(1, '\1')) +
      EncodeEgressFrame(EgressFrameType::kData, 1, "GET / HTTP/1.1\r\n") +
      EncodeEgressFrame(EgressFrameType::kWindow, 7, EncodeU32(kEgressWindow)) +
      EncodeEgressFrame(EgressFrameType::kFin, 1, "") +
      EncodeEgressFrame(EgressFrameType::kReset, 0xfffffffe, "");
  EgressFrameDecoder decoder(FrameSide::kFromGuest);
  std::vector<EgressFrame> frames;
  std::string error;
  for (char c : stream) {
    decoder.Feed(&c, 1);
    EgressFrame frame;
    while (decoder.Next(&frame, &error) == EgressFrameDecoder::Result::kFrame) {
      frames.push_back(frame);
    }
  }
  ASSERT_EQ(frames.size(), 5u) << error;
  EXPECT_EQ(frames[0].type, EgressFrameType::kOpen);
  EXPECT_EQ(frames[0].payload, std::string(1, '\1'));
  EXPECT_EQ(frames[1].type, EgressFrameType::kData);
  EXPECT_EQ(frames[1].payload, "GET / HTTP/1.1\r\n");
  EXPECT_EQ(frames[2].stream, 7u);
  EXPECT_EQ(DecodeU32(frames[2].payload), kEgressWindow);
  EXPECT_EQ(frames[3].type, EgressFrameType::kFin);
  EXPECT_EQ(frames[4].stream, 0xfffffffeu);
  EXPECT_EQ(decoder.buffered(), 0u);
}

TEST(EgressFrameTest, TheLargestDataFramePasses) {
  EgressFrameDecoder decoder(FrameSide::kFromHost);
  const std::string bytes =
      EncodeEgressFrame(EgressFrameType::kData, 3, std::string(kEgressMaxData, 'x'));
  decoder.Feed(bytes.data(), bytes.size());
  EgressFrame frame;
  std::string error;
  ASSERT_EQ(decoder.Next(&frame, &error), EgressFrameDecoder::Result::kFrame) << error;
  EXPECT_EQ(frame.payload.size(), kEgressMaxData);
}

struct BadFrame {
  const char* name;
  FrameSide from;
  std::string bytes;
  const char* error;
};

TEST(EgressFrameTest, BadFramesEndTheStreamForGood) {
  const std::vector<BadFrame> table = {
      {"unknown type", FrameSide::kFromGuest, Header('Z', 1, 0), "unexpected egress frame type 90"},
      {"an agent frame type", FrameSide::kFromHost, Header('X', 1, 0), "unexpected egress frame"},
      {"an open from the host", FrameSide::kFromHost, Header('O', 1, 1) + '\0',
       "egress open from the host"},
      {"stream 0", FrameSide::kFromGuest, Header('D', 0, 1) + "x", "for stream 0"},
      {"an open of 2 bytes", FrameSide::kFromGuest, Header('O', 1, 2) + "\0\0",
       "open with a payload of 2 bytes"},
      {"an empty open", FrameSide::kFromGuest, Header('O', 1, 0), "open with a payload of 0"},
      {"an open for listener 2", FrameSide::kFromGuest, Header('O', 1, 1) + '\2',
       "unknown listener"},
      {"empty data", FrameSide::kFromGuest, Header('D', 1, 0), "data frame of 0 bytes"},
      {"oversized data", FrameSide::kFromHost, Header('D', 1, kEgressMaxData + 1),
       "data frame of 65537 bytes"},
      {"a huge length", FrameSide::kFromGuest, Header('D', 1, 0xffffffff), "data frame of"},
      {"fin with a payload", FrameSide::kFromGuest, Header('F', 1, 1) + "x", "with a payload"},
      {"reset with a payload", FrameSide::kFromHost, Header('R', 1, 1) + "x", "with a payload"},
      {"window of 3 bytes", FrameSide::kFromGuest, Header('W', 1, 3) + "abc", "window frame of 3"},
      {"window of no credit", FrameSide::kFromHost, Header('W', 1, 4) + EncodeU32(0),
       "0 bytes of credit"},
  };
  for (const BadFrame& bad : table) {
    SCOPED_TRACE(bad.name);
    EgressFrameDecoder decoder(bad.from);
    // A good frame first: what follows the bad one is never trusted either.
    const std::string good = EncodeEgressFrame(EgressFrameType::kFin, 1, "");
    decoder.Feed(good.data(), good.size());
    decoder.Feed(bad.bytes.data(), bad.bytes.size());
    decoder.Feed(good.data(), good.size());
    EgressFrame frame;
    std::string error;
    ASSERT_EQ(decoder.Next(&frame, &error), EgressFrameDecoder::Result::kFrame);
    ASSERT_EQ(decoder.Next(&frame, &error), EgressFrameDecoder::Result::kBad);
    EXPECT_NE(error.find(bad.error), std::string::npos) << error;
    decoder.Feed(good.data(), good.size());
    error.clear();
    EXPECT_EQ(decoder.Next(&frame, &error), EgressFrameDecoder::Result::kBad);
    EXPECT_FALSE(error.empty());
  }
}

}  // namespace
}  // namespace ccsandbox::broker::microvm
