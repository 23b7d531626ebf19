#include "gateway/receive_pack.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ccsandbox::gateway {
namespace {

bool IsObjectId(absl::string_view id) {
  return (id.size() == 40 || id.size() == 64) && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// A bounded, printable rendering of what the client sent, for error messages.
std::string Shown(absl::string_view text) {
  std::string shown = absl::CHexEscape(text.substr(0, 120));
  if (text.size() > 120) shown += "…";
  return shown;
}

}  // namespace

bool ReceivePackHead::Has(absl::string_view capability) const {
  return std::find(capabilities.begin(), capabilities.end(), capability) != capabilities.end();
}

bool ReceivePackHead::ExpectsPack() const {
  return std::any_of(updates.begin(), updates.end(),
                     [](const RefUpdate& u) { return !u.IsDelete(); });
}

bool IsValidRefName(absl::string_view ref) {
  if (!absl::StartsWith(ref, "refs/") || ref.size() > 1024) return false;
  if (absl::EndsWith(ref, "/") || absl::EndsWith(ref, ".") || absl::EndsWith(ref, ".lock")) {
    return false;
  }
  if (absl::StrContains(ref, "..") || absl::StrContains(ref, "@{") ||
      absl::StrContains(ref, "//")) {
    return false;
  }
  for (char c : ref) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 040 || u == 0177 || c == ' ' || c == '~' || c == '^' || c == ':' || c == '?' ||
        c == '*' || c == '[' || c == '\\') {
      return false;
    }
  }
  for (absl::string_view component : absl::StrSplit(ref, '/')) {
    if (component.empty() || component[0] == '.' || absl::EndsWith(component, ".lock")) {
      return false;
    }
  }
  return true;
}

absl::Status ReceivePackHeadParser::Feed(absl::string_view bytes) {
  if (stage_ == Stage::kFailed) return failure_;
  reader_.Feed(bytes);
  while (stage_ != Stage::kDone) {
    absl::StatusOr<std::optional<PktLine>> line = reader_.Next();
    absl::Status status = line.status();
    if (status.ok() && !line->has_value()) {
      if (reader_.consumed() + reader_.Rest().size() <= kMaxHeadBytes) return absl::OkStatus();
      status = absl::InvalidArgumentError(
          absl::StrCat("receive-pack: the commands are longer than ", kMaxHeadBytes, " bytes"));
    }
    if (status.ok()) status = Take(**line);
    if (!status.ok()) {
      stage_ = Stage::kFailed;
      failure_ = status;
      return status;
    }
  }
  return absl::OkStatus();
}

absl::Status ReceivePackHeadParser::Take(const PktLine& line) {
  if (reader_.consumed() > kMaxHeadBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("receive-pack: the commands are longer than ", kMaxHeadBytes, " bytes"));
  }
  if (stage_ == Stage::kPushOptions) {
    if (line.kind == PktLine::Kind::kFlush) {
      stage_ = Stage::kDone;
    } else if (line.kind != PktLine::Kind::kData) {
      return absl::InvalidArgumentError("receive-pack: a push option that is not a data line");
    } else if (head_.push_options.size() >= kMaxRefUpdates) {
      return absl::InvalidArgumentError(
          absl::StrCat("receive-pack: more than ", kMaxRefUpdates, " push options"));
    } else {
      head_.push_options.emplace_back(absl::StripSuffix(line.data, "\n"));
    }
    return absl::OkStatus();
  }
  if (line.kind == PktLine::Kind::kFlush) {
    // A lone flush (no command) is git's probe before a large push: done, nothing to update.
    stage_ = head_.Has("push-options") ? Stage::kPushOptions : Stage::kDone;
    return absl::OkStatus();
  }
  if (line.kind != PktLine::Kind::kData) {
    return absl::InvalidArgumentError("receive-pack: a delimiter among the commands");
  }
  absl::string_view text = absl::StripSuffix(line.data, "\n");
  if (absl::StartsWith(text, "shallow ")) {
    if (!head_.updates.empty() || !IsObjectId(text.substr(8))) {
      return absl::InvalidArgumentError(
          absl::StrCat("receive-pack: bad shallow line '", Shown(text), "'"));
    }
    head_.shallow.emplace_back(text.substr(8));
    return absl::OkStatus();
  }
  if (absl::StartsWith(text, "push-cert")) {
    return absl::InvalidArgumentError(
        "receive-pack: signed pushes (push certificates) are not supported by the gateway");
  }
  return TakeCommand(text);
}

absl::Status ReceivePackHeadParser::TakeCommand(absl::string_view text) {
  if (head_.updates.size() >= kMaxRefUpdates) {
    return absl::InvalidArgumentError(
        absl::StrCat("receive-pack: more than ", kMaxRefUpdates, " ref updates in one push"));
  }
  if (head_.updates.empty()) {
    const size_t nul = text.find('\0');
    if (nul != absl::string_view::npos) {
      for (absl::string_view cap : absl::StrSplit(text.substr(nul + 1), ' ', absl::SkipEmpty())) {
        head_.capabilities.emplace_back(cap);
      }
      text = text.substr(0, nul);
    }
  }
  std::vector<absl::string_view> f = absl::StrSplit(text, ' ');
  if (f.size() != 3 || !IsObjectId(f[0]) || !IsObjectId(f[1]) || f[0].size() != f[1].size() ||
      !IsValidRefName(f[2])) {
    return absl::InvalidArgumentError(
        absl::StrCat("receive-pack: bad command '", Shown(text),
                     "' (expected: old-id new-id refname, ids of one length, a valid ref name)"));
  }
  if (!head_.updates.empty() && f[0].size() != head_.updates[0].old_id.size()) {
    return absl::InvalidArgumentError("receive-pack: object ids of two lengths in one push");
  }
  head_.updates.push_back({std::string(f[0]), std::string(f[1]), std::string(f[2])});
  return absl::OkStatus();
}

}  // namespace ccsandbox::gateway
