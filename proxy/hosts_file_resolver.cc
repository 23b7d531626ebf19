#include "proxy/hosts_file_resolver.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "asio/post.hpp"
#include "base/unique_fd.h"
#include "policy/egress/host.h"

namespace ccsandbox::proxy {
namespace {

// One line's entry, or why it is not one.
struct HostsLine {
  asio::ip::address address;
  std::vector<std::string> names;  // normalised
};

absl::StatusOr<HostsLine> ParseHostsLine(absl::string_view line) {
  const std::vector<absl::string_view> words =
      absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
  if (words.empty()) return absl::InvalidArgumentError("expected 'ADDRESS NAME [NAME...]'");
  HostsLine entry;
  std::error_code ec;
  entry.address = asio::ip::make_address(std::string(words[0]), ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", policy::SanitizeForReason(words[0]), "' is not an IPv4 or IPv6 address"));
  }
  if (words.size() < 2) {
    return absl::InvalidArgumentError("expected 'ADDRESS NAME [NAME...]', got no name");
  }
  for (size_t i = 1; i < words.size(); ++i) {
    absl::StatusOr<policy::EgressHost> host = policy::NormalizeEgressHost(words[i]);
    if (!host.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("name '", policy::SanitizeForReason(words[i]),
                                                     "': ", host.status().message()));
    }
    // The proxies connect to an IP literal without asking the resolver.
    if (host->is_ip()) {
      return absl::InvalidArgumentError(
          absl::StrCat("name '", host->name, "' is an address, not a name"));
    }
    entry.names.push_back(host->name);
  }
  return entry;
}

absl::StatusOr<std::string> ReadBounded(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not hang the broker's start; it is refused below.
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd.valid()) {
    return absl::NotFoundError(absl::StrCat("cannot open '", path, "': ", strerror(errno)));
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a regular file"));
  }
  std::string text;
  char buffer[64 * 1024];
  while (true) {
    const ssize_t got = read(fd.get(), buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return absl::InternalError(absl::StrCat("cannot read '", path, "': ", strerror(errno)));
    }
    if (got == 0) return text;
    if (text.size() + got > kMaxHostsFileBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", path, "' is larger than ", kMaxHostsFileBytes, " bytes"));
    }
    text.append(buffer, got);
  }
}

}  // namespace

absl::StatusOr<HostsTable> ParseHostsFile(absl::string_view text, absl::string_view origin) {
  HostsTable table;
  std::vector<std::string> bad;
  int bad_count = 0;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = line.substr(0, line.find('#'));
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    absl::StatusOr<HostsLine> entry = ParseHostsLine(line);
    if (!entry.ok()) {
      if (++bad_count <= kMaxReportedHostsLines) {
        bad.push_back(absl::StrCat(origin, ":", number, ": ", entry.status().message()));
      }
      continue;
    }
    for (const std::string& name : entry->names) {
      Resolver::Addresses& addresses = table[name];
      if (std::find(addresses.begin(), addresses.end(), entry->address) == addresses.end()) {
        addresses.push_back(entry->address);
      }
    }
  }
  if (bad_count == 0) return table;
  if (bad_count > kMaxReportedHostsLines) {
    bad.push_back(absl::StrCat("and ", bad_count - kMaxReportedHostsLines, " more bad lines"));
  }
  return absl::InvalidArgumentError(absl::StrJoin(bad, "; "));
}

absl::StatusOr<std::unique_ptr<HostsFileResolver>> HostsFileResolver::Load(
    const std::string& path) {
  absl::StatusOr<std::string> text = ReadBounded(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<HostsTable> table = ParseHostsFile(*text, path);
  if (!table.ok()) return table.status();
  return std::make_unique<HostsFileResolver>(*std::move(table), path);
}

HostsFileResolver::HostsFileResolver(HostsTable table, std::string origin)
    : table_(std::move(table)), origin_(std::move(origin)) {}

std::string HostsFileResolver::FirstAddress(const std::string& host) const {
  std::string name = absl::AsciiStrToLower(host);
  if (!name.empty() && name.back() == '.') name.pop_back();
  auto it = table_.find(name);
  return it == table_.end() || it->second.empty() ? "" : it->second.front().to_string();
}

void HostsFileResolver::Resolve(const std::string& host, asio::any_io_executor executor,
                                Callback done) {
  absl::StatusOr<Addresses> result =
      absl::NotFoundError(absl::StrCat(host, " is not in the hosts file ", origin_));
  if (auto it = table_.find(host); it != table_.end()) result = it->second;
  asio::post(executor, [done = std::move(done), result = std::move(result)]() mutable {
    done(std::move(result));
  });
}

}  // namespace ccsandbox::proxy
