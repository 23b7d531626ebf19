#include "broker/microvm/agent_frame.h"

#include <csignal>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/plan/terminal_profile.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker::microvm {
namespace {

std::string Header(char type, uint32_t size) { return std::string(1, type) + EncodeU32(size); }

TEST(AgentFrameTest, FramesRoundTripEvenByteByByte) {
  const std::string stream = EncodeFrame(FrameType::kStdout, "hi\n") +
                             EncodeFrame(FrameType::kExit, EncodeU32(static_cast<uint32_t>(-9)));
  FrameDecoder decoder(FrameSide::kFromGuest);
  std::vector<Frame> frames;
  std::string error;
  for (char c : stream) {
    decoder.Feed(&c, 1);
    Frame frame;
    while (decoder.Next(&frame, &error) == FrameDecoder::Result::kFrame) frames.push_back(frame);
  }
  ASSERT_EQ(frames.size(), 2u) << error;
  EXPECT_EQ(frames[0].type, FrameType::kStdout);
  EXPECT_EQ(frames[0].payload, "hi\n");
  EXPECT_EQ(frames[1].type, FrameType::kExit);
  EXPECT_EQ(static_cast<int32_t>(DecodeU32(frames[1].payload)), -9);
}

TEST(AgentFrameTest, ExecRequestRoundTrips) {
  const ExecRequest request{
      .argv = {"sh", "-c", "echo \"$X\""}, .env = {"X=a=b", "PATH=/bin"}, .workdir = "/tmp"};
  ExecRequest decoded;
  std::string error;
  ASSERT_TRUE(DecodeExec(EncodeExec(request), &decoded, &error)) << error;
  EXPECT_EQ(decoded.argv, request.argv);
  EXPECT_EQ(decoded.env, request.env);
  EXPECT_EQ(decoded.workdir, request.workdir);
}

struct BadFrame {
  const char* name;
  FrameSide from;
  std::string bytes;
  const char* error;
};

TEST(AgentFrameTest, BadFramesEndTheStreamForGood) {
  const std::vector<BadFrame> table = {
      {"unknown type", FrameSide::kFromGuest, Header('Z', 0), "unexpected frame type 90"},
      {"a host frame from the guest", FrameSide::kFromGuest, Header('X', 0),
       "unexpected frame type 88"},
      {"a guest frame from the host", FrameSide::kFromHost, Header('o', 2) + "hi",
       "unexpected frame type 111"},
      {"oversized", FrameSide::kFromGuest, Header('o', kMaxFramePayload + 1), "over the limit"},
      {"a huge length", FrameSide::kFromHost, Header('I', 0xffffffff), "over the limit"},
      {"exit of 3 bytes", FrameSide::kFromGuest, Header('x', 3) + "abc", "payload of 3 bytes"},
      {"started of 5 bytes", FrameSide::kFromGuest, Header('s', 5) + "abcde", "payload of 5 bytes"},
      {"hello with a payload", FrameSide::kFromHost, Header('H', 1) + "x", "payload of 1 bytes"},
      {"kill with a payload", FrameSide::kFromHost, Header('K', 4) + "abcd", "payload of 4 bytes"},
      {"a setup from the guest", FrameSide::kFromGuest, Header('S', 0), "unexpected frame type 83"},
      {"setup done from the host", FrameSide::kFromHost, Header('k', 0),
       "unexpected frame type 107"},
      {"setup done with a payload", FrameSide::kFromGuest, Header('k', 2) + "ok",
       "payload of 2 bytes"},
      {"a terminal from the guest", FrameSide::kFromGuest, Header('T', 0),
       "unexpected frame type 84"},
      {"a window size of 3 bytes", FrameSide::kFromHost, Header('W', 3) + "abc",
       "payload of 3 bytes"},
      {"a signal of 8 bytes", FrameSide::kFromHost, Header('G', 8) + "abcdefgh",
       "payload of 8 bytes"},
      {"a hang-up with a payload", FrameSide::kFromHost, Header('U', 1) + "x",
       "payload of 1 bytes"},
      {"a window size from the guest", FrameSide::kFromGuest, Header('W', 4) + "abcd",
       "unexpected frame type 87"},
  };
  for (const BadFrame& bad : table) {
    SCOPED_TRACE(bad.name);
    FrameDecoder decoder(bad.from);
    // A good frame first: what came before a bad one is still delivered.
    const std::string good = bad.from == FrameSide::kFromHost
                                 ? EncodeFrame(FrameType::kHello, "")
                                 : EncodeFrame(FrameType::kStderr, "e");
    const std::string stream = good + bad.bytes;
    decoder.Feed(stream.data(), stream.size());
    Frame frame;
    std::string error;
    ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kFrame);
    ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kBad);
    EXPECT_NE(error.find(bad.error), std::string::npos) << error;
    // Fails closed: a good frame afterwards is not believed.
    decoder.Feed(good.data(), good.size());
    EXPECT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kBad);
  }
}

TEST(AgentFrameTest, ATruncatedFrameIsNotDelivered) {
  FrameDecoder decoder(FrameSide::kFromGuest);
  const std::string frame_bytes = EncodeFrame(FrameType::kStdout, "hello");
  decoder.Feed(frame_bytes.data(), frame_bytes.size() - 1);
  Frame frame;
  std::string error;
  EXPECT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kNeedMore);
}

TEST(AgentFrameTest, BadExecRequestsAreRefused) {
  auto str = [](const std::string& s) { return EncodeU32(s.size()) + s; };
  const std::string empty_env_and_workdir = EncodeU32(0) + str("");
  const std::vector<std::pair<std::string, std::string>> table = {
      {"", "truncated"},
      {EncodeU32(1) + str("true"), "truncated"},
      {EncodeU32(0) + empty_env_and_workdir, "no argv"},
      {EncodeU32(1) + str("true") + empty_env_and_workdir + "x", "trailing bytes"},
      {EncodeU32(1000000) + str("true") + empty_env_and_workdir, "truncated"},
      {EncodeU32(1) + EncodeU32(100) + "true" + empty_env_and_workdir, "truncated"},
      {EncodeU32(1) + str(std::string("a\0b", 3)) + empty_env_and_workdir, "NUL"},
      {EncodeU32(1) + str("true") + EncodeU32(1) + str("NOEQUALS") + str(""), "NAME=value"},
      {EncodeU32(1) + str("true") + EncodeU32(1) + str("=v") + str(""), "NAME=value"},
      {EncodeU32(1) + str("true") + EncodeU32(0) + str(std::string("/t\0", 3)), "NUL"},
  };
  for (const auto& [payload, want] : table) {
    ExecRequest request;
    std::string error;
    EXPECT_FALSE(DecodeExec(payload, &request, &error)) << want;
    EXPECT_NE(error.find(want), std::string::npos) << error << " (want " << want << ")";
  }
}

TEST(AgentFrameTest, TerminalRequestsRoundTrip) {
  const TerminalRequest request{
      .exec = {.argv = {"/bin/sh", "-i"}, .env = {"TERM=xterm"}, .workdir = "/w"},
      .rows = 1000,
      .cols = 1};
  TerminalRequest decoded;
  std::string error;
  ASSERT_TRUE(DecodeTerminal(EncodeTerminal(request), &decoded, &error)) << error;
  EXPECT_EQ(decoded.exec.argv, request.exec.argv);
  EXPECT_EQ(decoded.exec.env, request.exec.env);
  EXPECT_EQ(decoded.exec.workdir, "/w");
  EXPECT_EQ(decoded.rows, 1000);
  EXPECT_EQ(decoded.cols, 1);
  uint16_t rows = 0, cols = 0;
  ASSERT_TRUE(DecodeWindow(EncodeWindow(40, 100), &rows, &cols, &error)) << error;
  EXPECT_EQ(rows, 40);
  EXPECT_EQ(cols, 100);
}

TEST(AgentFrameTest, BadTerminalPayloadsAreRefused) {
  const std::string exec = EncodeExec({.argv = {"sh"}});
  struct Bad {
    FrameType type;
    std::string payload;
    const char* error;
  };
  const std::vector<Bad> table = {
      {FrameType::kTerminal, "", "truncated"},
      {FrameType::kTerminal, "abc", "truncated"},
      {FrameType::kTerminal, EncodeWindow(24, 80), "truncated"},
      {FrameType::kTerminal, EncodeWindow(0, 80) + exec, "not 1..1000"},
      {FrameType::kTerminal, EncodeWindow(24, 1001) + exec, "not 1..1000"},
      {FrameType::kTerminal, EncodeWindow(24, 80) + EncodeExec({}), "no argv"},
      {FrameType::kTerminal, EncodeWindow(24, 80) + exec + "x", "trailing bytes"},
      {FrameType::kWindow, EncodeWindow(1001, 80), "not 1..1000"},
      {FrameType::kWindow, EncodeWindow(24, 0), "not 1..1000"},
      {FrameType::kWindow, EncodeU32(0xffffffff), "not 1..1000"},
      {FrameType::kWindow, "abc", "not 4 bytes"},
      {FrameType::kSignal, EncodeU32(SIGSEGV), "not one a terminal sends"},
      {FrameType::kSignal, EncodeU32(0), "not one a terminal sends"},
      {FrameType::kSignal, EncodeU32(static_cast<uint32_t>(-2)), "not one a terminal sends"},
      {FrameType::kSignal, EncodeU32(SIGINT) + "x", "not one a terminal sends"},
  };
  for (const Bad& bad : table) {
    SCOPED_TRACE(bad.error);
    std::string error;
    bool ok = true;
    if (bad.type == FrameType::kTerminal) {
      TerminalRequest request;
      ok = DecodeTerminal(bad.payload, &request, &error);
    } else if (bad.type == FrameType::kWindow) {
      uint16_t rows, cols;
      ok = DecodeWindow(bad.payload, &rows, &cols, &error);
    } else {
      int sig;
      ok = DecodeSignal(bad.payload, &sig, &error);
    }
    EXPECT_FALSE(ok);
    EXPECT_NE(error.find(bad.error), std::string::npos) << error;
  }
}

// The agent cannot link policy/ (it is static and plain C++): its bounds must be the broker's.
TEST(AgentFrameTest, TheAgentsTerminalBoundsAreThePolicys) {
  for (int sig = -1; sig <= 65; ++sig) {
    EXPECT_EQ(IsTerminalFrameSignal(sig), policy::IsTerminalSignal(sig)) << sig;
  }
  for (int side : {0, 1, 999, 1000, 1001, 65535}) {
    v1::TerminalSize size;
    size.set_rows(side);
    size.set_cols(24);
    uint16_t rows, cols;
    std::string error;
    EXPECT_EQ(DecodeWindow(EncodeWindow(side, 24), &rows, &cols, &error),
              policy::ValidTerminalSize(size))
        << side;
  }
}

}  // namespace
}  // namespace ccsandbox::broker::microvm
