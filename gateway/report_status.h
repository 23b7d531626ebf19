// The answer a receive-pack gives (gitprotocol-pack: "Report Status"): `unpack ok` (or why
// not), one `ok <ref>` / `ng <ref> <reason>` line per ref, a flush — wrapped in side-band
// channel 1 when the client asked for `side-band-64k` (or `side-band`), as git-receive-pack does.
// git prints an `ng` line as `! [remote rejected] <src> -> <dst> (<reason>)` and exits non-zero.
//
//   std::string body = RenderReportStatus("", {{"refs/heads/main", "Control Center policy: …"}},
//                                         ReportBand::kSideBand64k);
#ifndef CCSANDBOX_GATEWAY_REPORT_STATUS_H_
#define CCSANDBOX_GATEWAY_REPORT_STATUS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gateway/receive_pack.h"

namespace ccsandbox::gateway {

struct RefStatus {
  std::string ref;
  std::string error;  // empty: ok
};

enum class ReportBand { kNone, kSideBand, kSideBand64k };

// The band a client's capabilities ask for.
ReportBand BandFor(const ReceivePackHead& head);

// `unpack_error` empty: "unpack ok". Reasons are made one printable line (control characters
// become spaces) and cut so every line fits a pkt-line.
std::string RenderReportStatus(absl::string_view unpack_error, const std::vector<RefStatus>& refs,
                               ReportBand band);

}  // namespace ccsandbox::gateway

#endif  // CCSANDBOX_GATEWAY_REPORT_STATUS_H_
