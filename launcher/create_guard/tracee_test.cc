#include "launcher/create_guard/tracee.h"

#include <string>

#include "gtest/gtest.h"

namespace ccsandbox::launcher {
namespace {

constexpr char kStatus[] =
    "Name:\tmake\nUmask:\t0027\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4243\n"
    "Uid:\t1000\t1000\t1000\t1001\nGid:\t100\t100\t100\t101\nFDSize:\t64\nGroups:\t4 24 27 \n"
    "NStgid:\t4242\t12\nNSpid:\t4243\t13\nNSpgid:\t4242\t12\nNSsid:\t1\t1\n";

TEST(ParseTraceeStatus, ReadsTheFsIdsGroupsUmaskAndInnermostPids) {
  TraceeIdentity id;
  ASSERT_TRUE(ParseTraceeStatus(kStatus, &id));
  EXPECT_EQ(id.fsuid, 1001u);
  EXPECT_EQ(id.fsgid, 101u);
  EXPECT_EQ(id.groups, (std::vector<gid_t>{4, 24, 27}));
  EXPECT_EQ(id.umask, 0027u);
  EXPECT_EQ(id.ns_tgid, 12);
  EXPECT_EQ(id.ns_tid, 13);
}

// A status longer than the reader's buffer (a user in many groups) arrives cut: a pid cut in
// two must never be taken for another thread's (found by proc_status_fuzz).
TEST(ParseTraceeStatus, NeverReadsACutLastLine) {
  const std::string status = kStatus;
  const size_t nspid = status.find("NSpid:\t4243\t13\n");
  for (size_t cut = 0; cut < status.size(); ++cut) {
    TraceeIdentity id;
    const bool read = ParseTraceeStatus(status.substr(0, cut), &id);
    EXPECT_EQ(read, cut >= nspid + 15) << cut;
    if (read) EXPECT_EQ(id.ns_tid, 13) << cut;
  }
}

}  // namespace
}  // namespace ccsandbox::launcher
