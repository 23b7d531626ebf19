// libFuzzer target: the push gateway's reader of an upstream's ls-refs answer (the symbolic
// refs a push may update through an alias, gateway/upstream_symrefs.h). Input: the answer's
// bytes. Invariants: never crash; an answer is accepted only up to a flush that ends it, from
// data packets; every symbolic ref read is a non-empty name without spaces, and rendering the
// refs read as an answer and reading it again gives the same refs.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gateway/pkt_line.h"
#include "gateway/upstream_symrefs.h"
#include "tests/fuzz/fuzz_check.h"

using ccsandbox::gateway::PktLine;
using ccsandbox::gateway::Symrefs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view answer(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Symrefs> refs = ccsandbox::gateway::ParseLsRefs(answer);
  if (!refs.ok()) {
    FUZZ_CHECK(refs.status().code() == absl::StatusCode::kInvalidArgument);
    return 0;
  }
  FUZZ_CHECK(answer.find("0000") != absl::string_view::npos);
  std::string rendered;
  for (const auto& [name, target] : *refs) {
    FUZZ_CHECK(!name.empty() && name.find(' ') == std::string::npos);
    FUZZ_CHECK(target.find(' ') == std::string::npos);
    rendered += PktLine::Data(
                    absl::StrCat(std::string(40, 'a'), " ", name, " symref-target:", target, "\n"))
                    .Encode();
  }
  rendered += PktLine::Flush().Encode();
  absl::StatusOr<Symrefs> again = ccsandbox::gateway::ParseLsRefs(rendered);
  FUZZ_CHECK(again.ok() && *again == *refs);
  return 0;
}
