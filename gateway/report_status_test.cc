#include "gateway/report_status.h"

#include <string>
#include <vector>

#include "gateway/pkt_line.h"
#include "gtest/gtest.h"

namespace ccsandbox::gateway {
namespace {

// The data lines of a report, unwrapping side-band channel 1 when `band` says so; every band
// packet must be channel 1 and within the band's size.
std::vector<std::string> Lines(const std::string& wire, ReportBand band) {
  std::string report = wire;
  if (band != ReportBand::kNone) {
    PktLineReader outer;
    outer.Feed(wire);
    report.clear();
    for (;;) {
      absl::StatusOr<std::optional<PktLine>> p = outer.Next();
      EXPECT_TRUE(p.ok());
      if (!p.ok() || !p->has_value()) break;
      if ((*p)->kind == PktLine::Kind::kFlush) break;
      EXPECT_EQ((*p)->data[0], '\1');
      EXPECT_LE((*p)->data.size() + 4, band == ReportBand::kSideBand ? 1000u : kPktLineMax);
      report += (*p)->data.substr(1);
    }
    EXPECT_TRUE(outer.Rest().empty()) << "bytes after the final flush";
  }
  PktLineReader inner;
  inner.Feed(report);
  std::vector<std::string> lines;
  for (;;) {
    absl::StatusOr<std::optional<PktLine>> p = inner.Next();
    EXPECT_TRUE(p.ok());
    if (!p.ok() || !p->has_value()) break;
    lines.push_back((*p)->kind == PktLine::Kind::kFlush ? "<flush>" : (*p)->data);
  }
  EXPECT_TRUE(inner.Rest().empty());
  return lines;
}

TEST(ReportStatus, PlainIsExactlyWhatGitReads) {
  EXPECT_EQ(
      RenderReportStatus("", {{"refs/heads/x", ""}, {"refs/heads/main", "no"}}, ReportBand::kNone),
      "000eunpack ok\n"
      "0014ok refs/heads/x\n"
      "001ang refs/heads/main no\n"
      "0000");
}

TEST(ReportStatus, SideBandsWrapTheSameReport) {
  const std::vector<RefStatus> refs = {
      {"refs/heads/main", "Control Center policy: refs/heads/main: deny by rule 2"}};
  const std::vector<std::string> expected = {
      "unpack ok\n", "ng refs/heads/main Control Center policy: refs/heads/main: deny by rule 2\n",
      "<flush>"};
  for (ReportBand band : {ReportBand::kNone, ReportBand::kSideBand, ReportBand::kSideBand64k}) {
    EXPECT_EQ(Lines(RenderReportStatus("", refs, band), band), expected);
  }
}

TEST(ReportStatus, ALongReportSpansSeveralBandPackets) {
  std::vector<RefStatus> refs;
  for (int i = 0; i < 200; ++i) {
    refs.push_back({"refs/heads/branch-" + std::to_string(i), std::string(300, 'r')});
  }
  for (ReportBand band : {ReportBand::kSideBand, ReportBand::kSideBand64k}) {
    const std::vector<std::string> lines = Lines(RenderReportStatus("", refs, band), band);
    ASSERT_EQ(lines.size(), 202u);
    EXPECT_EQ(lines[200], "ng refs/heads/branch-199 " + std::string(300, 'r') + "\n");
  }
}

TEST(ReportStatus, ReasonsAreOnePrintableBoundedLine) {
  const std::vector<std::string> lines =
      Lines(RenderReportStatus("index-pack\nfailed",
                               {{"refs/heads/x", "two\nlines\r\x1b[31m" + std::string(5000, 'z')}},
                               ReportBand::kNone),
            ReportBand::kNone);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "unpack index-pack failed\n");
  EXPECT_EQ(lines[1].find('\n'), lines[1].size() - 1);
  EXPECT_EQ(lines[1].find('\x1b'), std::string::npos);
  EXPECT_LT(lines[1].size(), 1100u);
}

TEST(ReportStatus, TheBandFollowsTheCapabilities) {
  ReceivePackHead head;
  EXPECT_EQ(BandFor(head), ReportBand::kNone);
  head.capabilities = {"report-status", "side-band"};
  EXPECT_EQ(BandFor(head), ReportBand::kSideBand);
  head.capabilities.push_back("side-band-64k");
  EXPECT_EQ(BandFor(head), ReportBand::kSideBand64k);
}

}  // namespace
}  // namespace ccsandbox::gateway
