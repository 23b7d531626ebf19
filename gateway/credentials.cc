#include "gateway/credentials.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"

namespace ccsandbox::gateway {
namespace {

absl::StatusOr<std::string> RandomToken() {
  char bytes[24];
  if (getrandom(bytes, sizeof(bytes), 0) != static_cast<ssize_t>(sizeof(bytes))) {
    return absl::InternalError("credentials: getrandom failed");
  }
  return absl::StrCat("ccs_", absl::BytesToHexString(absl::string_view(bytes, sizeof(bytes))));
}

}  // namespace

LocalCredentialBroker::LocalCredentialBroker(std::string token_file)
    : token_file_(std::move(token_file)) {}

std::string LocalCredentialBroker::Describe() const {
  return absl::StrCat("local tokens (", token_file_, "): read credentials cannot push");
}

absl::StatusOr<Credential> LocalCredentialBroker::Mint(const std::string& session,
                                                       const std::string&, CredentialScope scope) {
  absl::MutexLock lock(&mu_);
  std::optional<Credential> credential;
  if (scope == CredentialScope::kWrite) {
    // An htpasswd-style upstream honours only the first line of a user: one push's token would
    // shadow every other's, and an agent holding its push open would stop every other
    // session's. Write tokens never leave the broker, so all live pushes share one, rotated
    // once no push holds it.
    for (const auto& [holder, credentials] : live_) {
      for (const Credential& c : credentials) {
        if (c.username == "writer") credential = c;
      }
    }
  }
  if (!credential.has_value()) {
    absl::StatusOr<std::string> token = RandomToken();
    if (!token.ok()) return token.status();
    credential = Credential{scope == CredentialScope::kWrite ? "writer" : "reader", *token};
  }
  live_[session].push_back(*credential);
  if (absl::Status written = WriteLocked(); !written.ok()) {
    live_[session].pop_back();
    if (live_[session].empty()) live_.erase(session);
    return written;
  }
  return *credential;
}

absl::Status LocalCredentialBroker::RevokeLeftovers() {
  absl::MutexLock lock(&mu_);
  return WriteLocked();
}

void LocalCredentialBroker::Revoke(const std::string& session, const Credential& credential) {
  absl::MutexLock lock(&mu_);
  auto it = live_.find(session);
  if (it == live_.end()) return;
  // One hold of it: another push may share the same write token.
  auto held = std::find_if(it->second.begin(), it->second.end(),
                           [&](const Credential& c) { return c.password == credential.password; });
  if (held != it->second.end()) it->second.erase(held);
  if (it->second.empty()) live_.erase(it);
  (void)WriteLocked();
}

void LocalCredentialBroker::RevokeSession(const std::string& session) {
  absl::MutexLock lock(&mu_);
  if (live_.erase(session) > 0) (void)WriteLocked();
}

absl::StatusOr<std::unique_ptr<PersonalTokenBroker>> PersonalTokenBroker::FromFile(
    const std::string& token_file) {
  std::string text;
  UniqueFd fd(open(token_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  char buf[4096];
  const ssize_t got = fd.valid() ? read(fd.get(), buf, sizeof(buf)) : -1;
  if (got > 0) text.assign(buf, got);
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
  if (text.empty() || text.find_first_of(" \t:@") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "credentials: ", token_file, " holds no token (one line, no spaces) or cannot be read"));
  }
  return std::unique_ptr<PersonalTokenBroker>(new PersonalTokenBroker(token_file, text));
}

std::string PersonalTokenBroker::Describe() const {
  return absl::StrCat("a personal access token (", token_file_,
                      "): it can push and cannot be revoked per session, so the push rule is "
                      "ADVISORY");
}

absl::Status LocalCredentialBroker::WriteLocked() {
  std::string text;
  std::set<std::string> written;
  for (const auto& [session, credentials] : live_) {
    for (const Credential& c : credentials) {
      if (written.insert(c.password).second) {
        absl::StrAppend(&text, c.username, ":", c.password, "\n");
      }
    }
  }
  // Written beside and renamed over: the upstream never reads half a file.
  const std::string temp = token_file_ + ".new";
  // A fresh file every time: whatever was left at the name (a file with another mode, a symlink)
  // is not written through.
  (void)unlink(temp.c_str());
  UniqueFd fd(open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640));
  if (!fd.valid() ||
      write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      fsync(fd.get()) != 0 || rename(temp.c_str(), token_file_.c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat("credentials: cannot write ", token_file_));
  }
  return absl::OkStatus();
}

}  // namespace ccsandbox::gateway
