// libFuzzer target: the violation-line parser on a sandboxed command's stderr (hostile: the
// command writes it). Input: the first byte picks how the rest arrives in chunks, the rest is
// the stream. Invariants: never crash; the scanner gives the same violations however the stream
// is cut, and the same as ParseViolationLine on each line; every violation has a known action,
// no line terminator, strictly valid UTF-8 (proto3 strings: it must serialize and parse back),
// a raw text that is the sanitized line, and bounded sizes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "policy/violations/parser.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/strict_utf8.h"

namespace {

using ccsandbox::fuzz::StrictUtf8;
using ccsandbox::policy::kMaxViolationLineBytes;
using ccsandbox::v1::SandboxViolation;

bool Same(const SandboxViolation& a, const SandboxViolation& b) {
  return a.action() == b.action() && a.target() == b.target() && a.raw() == b.raw();
}

void CheckViolation(const SandboxViolation& v) {
  static const absl::string_view kActions[] = {
      ccsandbox::policy::kActionFileRead,    ccsandbox::policy::kActionFileWrite,
      ccsandbox::policy::kActionFileAccess,  ccsandbox::policy::kActionProcessExec,
      ccsandbox::policy::kActionFileMount,   ccsandbox::policy::kActionSignal,
      ccsandbox::policy::kActionNetworkBind, ccsandbox::policy::kActionNetworkOutbound,
      ccsandbox::policy::kActionSyscall};
  bool known = false;
  for (absl::string_view action : kActions) known = known || v.action() == action;
  FUZZ_CHECK(known);
  FUZZ_CHECK(StrictUtf8(v.target()) && StrictUtf8(v.raw()));
  FUZZ_CHECK(v.raw().find_first_of("\r\n") == std::string::npos);
  FUZZ_CHECK(v.target().find_first_of("\r\n") == std::string::npos);
  // Each byte of a kept line becomes at most U+FFFD (3 bytes).
  FUZZ_CHECK(v.raw().size() <= 3 * kMaxViolationLineBytes);
  FUZZ_CHECK(v.target().size() <= v.raw().size() * 2 + 16);
  SandboxViolation back;
  FUZZ_CHECK(back.ParseFromString(v.SerializeAsString()) && Same(back, v));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t chunk = 1 + data[0] % 97;
  const absl::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);

  ccsandbox::policy::ViolationScanner whole;
  std::vector<SandboxViolation> at_once = whole.Feed(stream);
  for (SandboxViolation& v : whole.Finish()) at_once.push_back(std::move(v));

  ccsandbox::policy::ViolationScanner pieces;
  std::vector<SandboxViolation> in_pieces;
  for (size_t at = 0; at < stream.size(); at += chunk) {
    for (SandboxViolation& v : pieces.Feed(stream.substr(at, chunk))) {
      in_pieces.push_back(std::move(v));
    }
  }
  for (SandboxViolation& v : pieces.Finish()) in_pieces.push_back(std::move(v));

  FUZZ_CHECK(at_once.size() == in_pieces.size());
  for (size_t i = 0; i < at_once.size(); ++i) {
    FUZZ_CHECK(Same(at_once[i], in_pieces[i]));
    CheckViolation(at_once[i]);
  }

  // Line by line, as the scanner splits (at '\n' or '\r'): lines within the cap parse alike.
  std::vector<SandboxViolation> by_line;
  bool all_short = true;
  for (size_t start = 0; start <= stream.size();) {
    size_t eol = stream.find_first_of("\r\n", start);
    const bool last = eol == absl::string_view::npos;
    if (last) eol = stream.size();
    const absl::string_view line = stream.substr(start, eol - start);
    all_short = all_short && line.size() <= kMaxViolationLineBytes;
    if (!line.empty()) {
      std::optional<SandboxViolation> v = ccsandbox::policy::ParseViolationLine(line);
      if (v.has_value()) {
        FUZZ_CHECK(v->raw() == ccsandbox::policy::SanitizeUtf8(line));
        by_line.push_back(*std::move(v));
      }
    }
    if (last) break;
    start = eol + 1;
  }
  if (all_short) {
    FUZZ_CHECK(by_line.size() == at_once.size());
    for (size_t i = 0; i < by_line.size(); ++i) FUZZ_CHECK(Same(by_line[i], at_once[i]));
  }
  return 0;
}
