#include "tests/sanitizer_report.h"

#include <string>

#include "gtest/gtest.h"

namespace ccsandbox::testing {
namespace {

constexpr char kDaemonLog[] =
    "I1202 23:01:02.000000 123 main.cc:40] sandbox_brokerd listening on unix:/tmp/x/broker.sock\n"
    "W1202 23:01:03.000000 123 exec.cc:88] run r-1: RuntimeError: the command said so\n";

TEST(SanitizerReport, NoneInAPlainLog) {
  EXPECT_EQ(SanitizerReport(""), "");
  EXPECT_EQ(SanitizerReport(kDaemonLog), "");
}

TEST(SanitizerReport, AddressSanitizerFromItsFirstLine) {
  const std::string report =
      "=================================================================\n"
      "==4242==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc "
      "0x55d0 bp 0x7ffc sp 0x7ffc\n"
      "READ of size 4 at 0x602000000010 thread T3\n"
      "    #0 0x55d0 in ccsandbox::broker::Session::Exec broker/session.cc:120\n";
  EXPECT_EQ(SanitizerReport(std::string(kDaemonLog) + report),
            report.substr(report.find("==4242==")));
}

TEST(SanitizerReport, LeakSanitizer) {
  const std::string report =
      "==77==ERROR: LeakSanitizer: detected memory leaks\n\n"
      "Direct leak of 24 byte(s) in 1 object(s) allocated from:\n"
      "    #0 0x7f in operator new(unsigned long)\n";
  EXPECT_EQ(SanitizerReport(std::string(kDaemonLog) + report), report);
}

TEST(SanitizerReport, UndefinedBehaviorSanitizer) {
  const std::string line =
      "launcher/cgroup.cc:57:21: runtime error: signed integer overflow: 2147483647 + 1 cannot be "
      "represented in type 'int'\n";
  EXPECT_EQ(SanitizerReport(std::string(kDaemonLog) + line), line);
  const std::string deadly =
      "UndefinedBehaviorSanitizer:DEADLYSIGNAL\n"
      "==9==ERROR: UndefinedBehaviorSanitizer: SEGV on unknown address 0x000000000000\n";
  EXPECT_EQ(SanitizerReport(deadly), deadly);
}

}  // namespace
}  // namespace ccsandbox::testing
