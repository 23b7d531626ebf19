// libFuzzer target: git's pkt-line framing as the push gateway reads it (gateway/pkt_line.h),
// and the report-status it writes back (gateway/report_status.h). Input: the first byte picks
// how the rest arrives in chunks, the rest is the stream. Invariants: never crash; the reader
// gives the same packets, error and rest however the stream is cut; each data packet re-encodes
// to the bytes it was read from (the length's hex case aside); after an error it stays failed.
// The data packets, taken as (ref, reason) pairs, render into a report-status that parses back:
// "unpack ok", then one "ok REF" or "ng REF REASON" line per ref without control characters,
// then a flush — inside side-band channel 1 packets of at most 1000 (side-band) or 65520
// (side-band-64k) bytes when a band is asked for.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "gateway/pkt_line.h"
#include "gateway/report_status.h"
#include "tests/fuzz/fuzz_check.h"

using ccsandbox::gateway::kPktLineMax;
using ccsandbox::gateway::PktLine;
using ccsandbox::gateway::PktLineReader;
using ccsandbox::gateway::RefStatus;
using ccsandbox::gateway::ReportBand;

namespace {

struct Read {
  std::vector<PktLine> lines;
  std::vector<size_t> sizes;  // bytes each line took
  bool failed = false;
  std::string error;
  std::string rest;
};

void Drain(PktLineReader& reader, Read& out) {
  for (;;) {
    const size_t before = reader.consumed();
    absl::StatusOr<std::optional<PktLine>> next = reader.Next();
    if (!next.ok()) {
      FUZZ_CHECK(next.status().code() == absl::StatusCode::kInvalidArgument);
      out.failed = true;
      out.error = std::string(next.status().message());
      // Failed for good.
      absl::StatusOr<std::optional<PktLine>> again = reader.Next();
      FUZZ_CHECK(!again.ok() && again.status().message() == next.status().message());
      return;
    }
    if (!next->has_value()) return;
    out.lines.push_back(**next);
    out.sizes.push_back(reader.consumed() - before);
  }
}

bool SameLines(const Read& a, const Read& b) {
  if (a.lines.size() != b.lines.size()) return false;
  for (size_t i = 0; i < a.lines.size(); ++i) {
    if (a.lines[i].kind != b.lines[i].kind || a.lines[i].data != b.lines[i].data) return false;
  }
  return true;
}

// The packets of `bytes`, which must all parse and leave nothing behind.
std::vector<PktLine> ParseAll(absl::string_view bytes) {
  PktLineReader reader;
  reader.Feed(bytes);
  std::vector<PktLine> lines;
  for (;;) {
    absl::StatusOr<std::optional<PktLine>> next = reader.Next();
    FUZZ_CHECK(next.ok());
    if (!next->has_value()) break;
    lines.push_back(**next);
  }
  FUZZ_CHECK(reader.Rest().empty());
  return lines;
}

bool Printable(absl::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 040 || u == 0177) return false;
  }
  return true;
}

void CheckReport(const std::vector<RefStatus>& refs, ReportBand band) {
  const std::string wire = ccsandbox::gateway::RenderReportStatus("", refs, band);
  std::vector<PktLine> outer = ParseAll(wire);
  std::string report;
  if (band == ReportBand::kNone) {
    report = wire;
  } else {
    FUZZ_CHECK(!outer.empty() && outer.back().kind == PktLine::Kind::kFlush);
    outer.pop_back();
    for (const PktLine& line : outer) {
      FUZZ_CHECK(line.kind == PktLine::Kind::kData && !line.data.empty() && line.data[0] == '\1');
      FUZZ_CHECK(line.data.size() + 4 <= (band == ReportBand::kSideBand ? 1000 : kPktLineMax));
      report += line.data.substr(1);
    }
  }
  std::vector<PktLine> lines = ParseAll(report);
  FUZZ_CHECK(lines.size() == refs.size() + 2);
  FUZZ_CHECK(lines.front().kind == PktLine::Kind::kData && lines.front().data == "unpack ok\n");
  FUZZ_CHECK(lines.back().kind == PktLine::Kind::kFlush);
  for (size_t i = 0; i < refs.size(); ++i) {
    const PktLine& line = lines[i + 1];
    FUZZ_CHECK(line.kind == PktLine::Kind::kData && absl::EndsWith(line.data, "\n"));
    const absl::string_view text = absl::string_view(line.data).substr(0, line.data.size() - 1);
    FUZZ_CHECK(Printable(text));
    FUZZ_CHECK(absl::StartsWith(text, refs[i].error.empty() ? "ok " : "ng "));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t chunk = 1 + data[0] % 61;
  const absl::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);

  PktLineReader whole_reader;
  whole_reader.Feed(stream);
  Read whole;
  Drain(whole_reader, whole);
  whole.rest = std::string(whole_reader.Rest());

  PktLineReader piece_reader;
  Read pieces;
  for (size_t at = 0; at < stream.size() && !pieces.failed; at += chunk) {
    piece_reader.Feed(stream.substr(at, chunk));
    Drain(piece_reader, pieces);
  }
  if (!pieces.failed) pieces.rest = std::string(piece_reader.Rest());

  FUZZ_CHECK(SameLines(whole, pieces));
  FUZZ_CHECK(whole.failed == pieces.failed && whole.error == pieces.error);
  if (!whole.failed) FUZZ_CHECK(whole.rest == pieces.rest);

  size_t at = 0;
  for (size_t i = 0; i < whole.lines.size(); ++i) {
    const std::string encoded = whole.lines[i].Encode();
    FUZZ_CHECK(encoded.size() == whole.sizes[i]);
    FUZZ_CHECK(absl::EqualsIgnoreCase(encoded.substr(0, 4), stream.substr(at, 4)));
    FUZZ_CHECK(encoded.substr(4) == stream.substr(at + 4, whole.sizes[i] - 4));
    at += whole.sizes[i];
  }
  FUZZ_CHECK(whole_reader.consumed() == at);
  if (!whole.failed) FUZZ_CHECK(whole.rest == stream.substr(at));

  std::vector<RefStatus> refs;
  for (size_t i = 0; i + 1 < whole.lines.size(); i += 2) {
    refs.push_back({whole.lines[i].data, whole.lines[i + 1].data});
  }
  if (whole.lines.size() % 2 == 1) refs.push_back({whole.lines.back().data, ""});
  for (ReportBand band : {ReportBand::kNone, ReportBand::kSideBand, ReportBand::kSideBand64k}) {
    CheckReport(refs, band);
  }
  return 0;
}
