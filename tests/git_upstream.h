// A git smart-HTTP upstream for tests, from Debian packages: lighttpd running git-http-backend
// over bare repositories in a temp dir, behind basic auth read at each request from the
// per-repository token files LocalCredentialBroker writes (`<key>.read`: may fetch;
// `<key>.write`: may push), so minted tokens work — for their repository only — and revoked ones
// are refused, for real.
//
//   absl::StatusOr<std::unique_ptr<GitUpstream>> up = GitUpstream::Start();
//   (*up)->CreateRepository("r.git");
//   git push (*up)->Url("r.git") ...;  (*up)->Head("r.git", "refs/heads/main");
#ifndef CCSANDBOX_TESTS_GIT_UPSTREAM_H_
#define CCSANDBOX_TESTS_GIT_UPSTREAM_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ccsandbox::testing {

class GitUpstream {
 public:
  static absl::StatusOr<std::unique_ptr<GitUpstream>> Start();
  ~GitUpstream();  // stops lighttpd, removes everything

  // A bare repository `name` ("r.git") that takes pushes from a writer.
  absl::Status CreateRepository(const std::string& name);
  // http://127.0.0.1:PORT/git/<name>
  std::string Url(const std::string& name) const;
  // The directory of the per-repository token files (LocalCredentialBroker's contract).
  const std::string& token_dir() const { return token_dir_; }
  // Whether any write token is live; every live token (all files, concatenated).
  bool WriteTokensLive() const;
  std::string AllTokens() const;
  const std::string& dir() const { return dir_; }
  // The object `ref` names in repository `name`, or "" when it does not exist.
  std::string Head(const std::string& name, const std::string& ref) const;

 private:
  GitUpstream() = default;
  std::string dir_;
  std::string token_dir_;
  std::vector<std::string> repositories_;
  absl::Status WriteConfigAndRestart();
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_TESTS_GIT_UPSTREAM_H_
