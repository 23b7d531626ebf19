#include "gateway/report_status.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "gateway/pkt_line.h"

namespace ccsandbox::gateway {
namespace {

// One printable line of at most `limit` bytes.
std::string OneLine(absl::string_view text, size_t limit) {
  std::string line(text.substr(0, limit));
  for (char& c : line) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 040 || u == 0177) c = ' ';
  }
  return line;
}

// `payload` in side-band packets of `band` (channel 1), each at most `max_data` bytes of it.
std::string InBand(absl::string_view payload, size_t max_data) {
  std::string out;
  while (!payload.empty()) {
    const size_t n = std::min(payload.size(), max_data - 1);
    out += PktLine::Data(absl::StrCat("\1", payload.substr(0, n))).Encode();
    payload.remove_prefix(n);
  }
  return out;
}

}  // namespace

ReportBand BandFor(const ReceivePackHead& head) {
  if (head.Has("side-band-64k")) return ReportBand::kSideBand64k;
  if (head.Has("side-band")) return ReportBand::kSideBand;
  return ReportBand::kNone;
}

std::string RenderReportStatus(absl::string_view unpack_error, const std::vector<RefStatus>& refs,
                               ReportBand band) {
  constexpr size_t kLineRoom = 1000;  // a reason longer than this is cut: git prints one line
  std::string report;
  report += PktLine::Data(unpack_error.empty()
                              ? std::string("unpack ok\n")
                              : absl::StrCat("unpack ", OneLine(unpack_error, kLineRoom), "\n"))
                .Encode();
  for (const RefStatus& status : refs) {
    const std::string ref = OneLine(status.ref, kLineRoom);
    report +=
        PktLine::Data(status.error.empty()
                          ? absl::StrCat("ok ", ref, "\n")
                          : absl::StrCat("ng ", ref, " ", OneLine(status.error, kLineRoom), "\n"))
            .Encode();
  }
  report += PktLine::Flush().Encode();
  switch (band) {
    case ReportBand::kNone:
      return report;
    case ReportBand::kSideBand:
      return InBand(report, 1000 - 4) + PktLine::Flush().Encode();
    case ReportBand::kSideBand64k:
      return InBand(report, kPktLineDataMax) + PktLine::Flush().Encode();
  }
  return report;
}

}  // namespace ccsandbox::gateway
