// libFuzzer target: the parser of the broker's --egress-hosts-file (proxy/hosts_file_resolver.h).
// Input: the file's text. Invariants: never crash; a file is taken whole or refused whole; every
// name taken is a normalised DNS name (NormalizeEgressHost gives it back unchanged, and it is
// not an IP literal) with at least one address and no address twice; the table written back as
// a hosts file parses to the same table; every spelling of a name in the file finds the same
// first address through FirstAddress (the push gateway's way in) as the table holds; a refusal
// names the file and the line, quotes at most kMaxReportedHostsLines lines, and says how many
// more there were.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "policy/egress/host.h"
#include "proxy/hosts_file_resolver.h"
#include "tests/fuzz/fuzz_check.h"

using ccsandbox::proxy::HostsTable;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<HostsTable> table = ccsandbox::proxy::ParseHostsFile(text, "hosts");
  if (!table.ok()) {
    FUZZ_CHECK(table.status().code() == absl::StatusCode::kInvalidArgument);
    const std::string message(table.status().message());
    FUZZ_CHECK(absl::StartsWith(message, "hosts:"));
    const std::vector<absl::string_view> parts = absl::StrSplit(message, "; hosts:");
    FUZZ_CHECK(parts.size() <= ccsandbox::proxy::kMaxReportedHostsLines);
    return 0;
  }
  std::string rendered;
  for (const auto& [name, addresses] : *table) {
    absl::StatusOr<ccsandbox::policy::EgressHost> host =
        ccsandbox::policy::NormalizeEgressHost(name);
    FUZZ_CHECK(host.ok() && host->name == name && !host->is_ip());
    FUZZ_CHECK(!addresses.empty());
    for (size_t i = 0; i < addresses.size(); ++i) {
      for (size_t j = i + 1; j < addresses.size(); ++j) FUZZ_CHECK(addresses[i] != addresses[j]);
      absl::StrAppend(&rendered, addresses[i].to_string(), " ", name, "\n");
    }
  }
  absl::StatusOr<HostsTable> again = ccsandbox::proxy::ParseHostsFile(rendered, "rendered");
  FUZZ_CHECK(again.ok() && *again == *table);

  const ccsandbox::proxy::HostsFileResolver resolver(*table, "hosts");
  FUZZ_CHECK(resolver.size() == table->size());
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = line.substr(0, line.find('#'));
    if (absl::StripAsciiWhitespace(line).empty()) continue;  // as the parser: a blank line
    const std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string spelled(words[i]);
      absl::StatusOr<ccsandbox::policy::EgressHost> host =
          ccsandbox::policy::NormalizeEgressHost(spelled);
      FUZZ_CHECK(host.ok());
      auto found = table->find(host->name);
      FUZZ_CHECK(found != table->end());
      FUZZ_CHECK(resolver.FirstAddress(spelled) == found->second.front().to_string());
    }
  }
  return 0;
}
