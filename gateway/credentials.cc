#include "gateway/credentials.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
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

LocalCredentialBroker::LocalCredentialBroker(std::string token_dir)
    : token_dir_(std::move(token_dir)) {}

std::string LocalCredentialBroker::Describe() const {
  return absl::StrCat("local tokens (", token_dir_,
                      "): per repository and per token, read credentials cannot push");
}

std::string LocalCredentialBroker::KeyFor(const std::string& upstream_url) {
  absl::string_view rest = upstream_url;
  const size_t scheme = rest.find("://");
  if (scheme != absl::string_view::npos) rest.remove_prefix(scheme + 3);
  const size_t slash = rest.find('/');
  std::string key(slash == absl::string_view::npos ? "" : rest.substr(slash + 1));
  while (!key.empty() && key.back() == '/') key.pop_back();
  for (char& c : key) {
    const bool kept =
        absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
    if (!kept) c = '_';
  }
  return key.empty() ? "_" : key;
}

absl::StatusOr<Credential> LocalCredentialBroker::Mint(const std::string& session,
                                                       const std::string& upstream_url,
                                                       CredentialScope scope) {
  absl::StatusOr<std::string> token = RandomToken();
  if (!token.ok()) return token.status();
  absl::MutexLock lock(&mu_);
  Live live{session, KeyFor(upstream_url), scope,
            Credential{absl::StrCat("u", next_user_++), *token}};
  live_.push_back(live);
  keys_.insert(live.key);
  if (absl::Status written = WriteLocked(); !written.ok()) {
    live_.pop_back();
    return written;
  }
  return live.credential;
}

absl::Status LocalCredentialBroker::RevokeLeftovers() {
  absl::MutexLock lock(&mu_);
  if (DIR* dir = opendir(token_dir_.c_str())) {
    while (dirent* entry = readdir(dir)) {
      const absl::string_view name = entry->d_name;
      if (absl::EndsWith(name, ".read") || absl::EndsWith(name, ".write")) {
        keys_.insert(std::string(name.substr(0, name.rfind('.'))));
      }
    }
    closedir(dir);
  }
  return WriteLocked();
}

void LocalCredentialBroker::Revoke(const std::string& session, const Credential& credential) {
  absl::MutexLock lock(&mu_);
  std::erase_if(live_, [&](const Live& l) {
    return l.session == session && l.credential.password == credential.password;
  });
  (void)WriteLocked();
}

void LocalCredentialBroker::RevokeSession(const std::string& session) {
  absl::MutexLock lock(&mu_);
  if (std::erase_if(live_, [&](const Live& l) { return l.session == session; }) > 0) {
    (void)WriteLocked();
  }
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
  for (const std::string& key : keys_) {
    for (const bool writers : {false, true}) {
      std::string text;
      for (const Live& l : live_) {
        if (l.key != key || (writers && l.scope != CredentialScope::kWrite)) continue;
        absl::StrAppend(&text, l.credential.username, ":", l.credential.password, "\n");
      }
      const std::string file = absl::StrCat(token_dir_, "/", key, writers ? ".write" : ".read");
      // Written beside and renamed over: the upstream never reads half a file. A fresh
      // temporary each time: nothing left at its name is written through.
      const std::string temp = file + ".new";
      (void)unlink(temp.c_str());
      UniqueFd fd(open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640));
      if (!fd.valid() ||
          write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
          fsync(fd.get()) != 0 || rename(temp.c_str(), file.c_str()) != 0) {
        return absl::UnavailableError(absl::StrCat("credentials: cannot write ", file));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace ccsandbox::gateway
