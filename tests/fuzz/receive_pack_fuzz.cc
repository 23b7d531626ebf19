// The push gateway's parsers on hostile bytes: the receive-pack head (pkt-lines, commands,
// capabilities, push options) fed whole and in pieces must agree, never crash, never accept a
// ref git would not, and what it accepted must render into a report-status that parses back.
#include <cstddef>
#include <cstdint>
#include <string>

#include "gateway/pkt_line.h"
#include "gateway/receive_pack.h"
#include "gateway/report_status.h"
#include "tests/fuzz/fuzz_check.h"

using ccsandbox::gateway::PktLine;
using ccsandbox::gateway::PktLineReader;
using ccsandbox::gateway::ReceivePackHeadParser;
using ccsandbox::gateway::RefStatus;
using ccsandbox::gateway::ReportBand;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t chunk = 1 + data[0] % 64;  // the first byte says how the rest arrives
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);

  ReceivePackHeadParser whole;
  const bool whole_ok = whole.Feed(body).ok();
  ReceivePackHeadParser pieces;
  bool pieces_ok = true;
  for (size_t at = 0; at < body.size() && pieces_ok; at += chunk) {
    pieces_ok = pieces.Feed(body.substr(at, chunk)).ok();
  }
  FUZZ_CHECK(whole_ok == pieces_ok);
  FUZZ_CHECK(whole.done() == pieces.done());
  if (!whole.done()) return 0;
  FUZZ_CHECK(whole.head_bytes() == pieces.head_bytes());
  FUZZ_CHECK(whole.Rest() == pieces.Rest());
  FUZZ_CHECK(whole.head_bytes() <= ccsandbox::gateway::kMaxHeadBytes);
  const auto& head = whole.head();
  FUZZ_CHECK(head.updates.size() <= ccsandbox::gateway::kMaxRefUpdates);
  std::vector<RefStatus> statuses;
  for (const auto& update : head.updates) {
    FUZZ_CHECK(ccsandbox::gateway::IsValidRefName(update.ref));
    FUZZ_CHECK(update.old_id.size() == update.new_id.size());
    statuses.push_back({update.ref, update.ref});  // a reason with the same bytes as the ref
  }
  for (ReportBand band : {ReportBand::kNone, ReportBand::kSideBand, ReportBand::kSideBand64k}) {
    PktLineReader reader;
    reader.Feed(ccsandbox::gateway::RenderReportStatus("", statuses, band));
    size_t packets = 0;
    for (;;) {
      auto next = reader.Next();
      FUZZ_CHECK(next.ok());
      if (!next->has_value()) break;
      ++packets;
    }
    FUZZ_CHECK(reader.Rest().empty());
    FUZZ_CHECK(packets >= 2 || (statuses.empty() && packets >= 1));
  }
  return 0;
}
