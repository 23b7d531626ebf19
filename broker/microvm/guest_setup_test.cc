#include "broker/microvm/guest_setup.h"

#include <string>
#include <utility>
#include <vector>

#include "broker/microvm/agent_frame.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker::microvm {
namespace {

const GuestStep kBaseStep{SetupStep::kBase, "/", ""};

TEST(GuestSetupTest, RoundTrips) {
  const GuestSetup setup{.steps = {{SetupStep::kShareCached, "/usr", "s0"},
                                   {SetupStep::kShareReadOnly, "/data", "s2"},
                                   {SetupStep::kSymlink, "/bin", "usr/bin"},
                                   kBaseStep,
                                   {SetupStep::kShare, "/work", "s1"},
                                   {SetupStep::kMaskDir, "/work/.ssh", ""},
                                   {SetupStep::kMaskFile, "/work/.env", ""},
                                   {SetupStep::kPin, "/work/sub", ""},
                                   {SetupStep::kReadOnly, "/work/sub/.git", ""}},
                         .workdir = "/work"};
  GuestSetup decoded;
  std::string error;
  ASSERT_TRUE(DecodeSetup(EncodeSetup(setup), &decoded, &error)) << error;
  ASSERT_EQ(decoded.steps.size(), setup.steps.size());
  for (size_t i = 0; i < setup.steps.size(); ++i) {
    EXPECT_EQ(decoded.steps[i].step, setup.steps[i].step);
    EXPECT_EQ(decoded.steps[i].path, setup.steps[i].path);
    EXPECT_EQ(decoded.steps[i].arg, setup.steps[i].arg);
  }
  EXPECT_EQ(decoded.workdir, "/work");
}

TEST(GuestSetupTest, BadSetupsAreRefused) {
  auto str = [](const std::string& s) { return EncodeU32(s.size()) + s; };
  auto step = [&](char type, const std::string& path, const std::string& arg) {
    return std::string(1, type) + str(path) + str(arg);
  };
  const std::string base = step('b', "/", "");
  const std::vector<std::pair<std::string, std::string>> table = {
      {"", "truncated"},
      {EncodeU32(1) + base, "truncated"},  // no workdir
      {EncodeU32(1) + base + str("") + "x", "trailing bytes"},
      {EncodeU32(0) + str(""), "exactly one base"},
      {EncodeU32(2) + base + base + str(""), "exactly one base"},
      {EncodeU32(1000000) + base + str(""), "truncated"},
      {EncodeU32(1) + std::string(1, 'b') + EncodeU32(100) + "/" + str("") + str(""), "truncated"},
      {EncodeU32(2) + base + step('Z', "/x", "") + str(""), "unknown setup step"},
      {EncodeU32(2) + base + step('s', "/x", "") + str(""), "mount tag"},
      {EncodeU32(2) + base + step('s', "/x", std::string(32, 't')) + str(""), "mount tag"},
      {EncodeU32(2) + base + step('s', "relative", "s0") + str(""), "not absolute"},
      {EncodeU32(2) + base + step('r', "/a/../etc", "s0") + str(""), "not absolute"},
      {EncodeU32(2) + base + step('d', "/a/./b", "") + str(""), "not absolute"},
      {EncodeU32(2) + base + step('d', "/a//b", "") + str(""), "not absolute"},
      {EncodeU32(2) + base + step('d', "/a/", "") + str(""), "not absolute"},
      {EncodeU32(2) + base + step('f', std::string("/a\0b", 4), "") + str(""), "not absolute"},
      {EncodeU32(2) + base + step('d', "/", "") + str(""), "below /"},
      {EncodeU32(2) + base + step('w', "/x", "extra") + str(""), "no argument"},
      {EncodeU32(2) + base + step('l', "/bin", "") + str(""), "a target"},
      {EncodeU32(1) + step('b', "/x", "") + str(""), "base step"},
      {EncodeU32(1) + base + str("work"), "workdir"},
  };
  for (const auto& [payload, want] : table) {
    GuestSetup setup;
    std::string error;
    EXPECT_FALSE(DecodeSetup(payload, &setup, &error)) << want;
    EXPECT_NE(error.find(want), std::string::npos) << error << " (want " << want << ")";
  }
}

}  // namespace
}  // namespace ccsandbox::broker::microvm
