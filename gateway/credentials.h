// The credential broker: credentials minted per session and scope, revoked together when the
// session ends. A run gets a read credential for its repository (it fetches); only the gateway
// ever holds a write credential (it pushes what the push rule allowed), minted per push.
//
// Implementations: LocalCredentialBroker (an upstream this host serves, e.g. the tests' git
// server, honours its tokens through a file it reads at each request); a GitHub App's
// installation tokens go behind the same interface. With a personal token only, read
// credentials can push too: ReadOnlyEnforced() is false, and the push rule is then advisory.
#ifndef CCSANDBOX_GATEWAY_CREDENTIALS_H_
#define CCSANDBOX_GATEWAY_CREDENTIALS_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace ccsandbox::gateway {

struct Credential {
  std::string username;
  std::string password;  // the token; never logged
};

enum class CredentialScope { kRead, kWrite };

class CredentialBroker {
 public:
  virtual ~CredentialBroker() = default;
  // A credential for the repository at `upstream_url`, held for `session` until revoked.
  virtual absl::StatusOr<Credential> Mint(const std::string& session,
                                          const std::string& upstream_url,
                                          CredentialScope scope) = 0;
  // Revokes one credential (a write credential once its push is done).
  virtual void Revoke(const std::string& session, const Credential& credential) = 0;
  // Revokes every credential of `session` (Destroy, broker shutdown).
  virtual void RevokeSession(const std::string& session) = 0;
  // True when a read credential cannot push (so only the gateway can).
  virtual bool ReadOnlyEnforced() const = 0;
  // For the boot line and the handle: what mints, and whether pushes are enforced.
  virtual std::string Describe() const = 0;
};

// Tokens for an upstream served on this host (the tests' lighttpd + git-http-backend): for each
// repository, two basic-auth files in `token_dir`, read by the upstream at each request and
// rewritten atomically here — `<key>.read` (every live token of that repository: they may fetch)
// and `<key>.write` (its write tokens: they may push), where <key> is the repository's URL path
// with '/' as '_' ("/git/r.git" -> "git_r.git"). Each token has a user name of its own
// ("u<n>:<token>" lines), so tokens of several sessions and pushes live side by side, and a
// token opens only its own repository.
class LocalCredentialBroker : public CredentialBroker {
 public:
  explicit LocalCredentialBroker(std::string token_dir);
  // Empties every token file in the directory, once at boot: a broker killed mid-push could not
  // revoke its tokens.
  absl::Status RevokeLeftovers();
  absl::StatusOr<Credential> Mint(const std::string& session, const std::string& upstream_url,
                                  CredentialScope scope) override;
  void Revoke(const std::string& session, const Credential& credential) override;
  void RevokeSession(const std::string& session) override;
  bool ReadOnlyEnforced() const override { return true; }
  std::string Describe() const override;
  // The file key of a repository's URL.
  static std::string KeyFor(const std::string& upstream_url);

 private:
  struct Live {
    std::string session;
    std::string key;
    CredentialScope scope;
    Credential credential;
  };
  absl::Status WriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string token_dir_;
  absl::Mutex mu_;
  std::vector<Live> live_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> keys_ ABSL_GUARDED_BY(mu_);  // every repository ever written
  uint64_t next_user_ ABSL_GUARDED_BY(mu_) = 1;
};

// A personal access token the operator configured (the only credential when no GitHub App is):
// every Mint hands out the same token, which can push and cannot be revoked per session. The
// gateway still asks the rule for every `git push`, but code holding the token could push
// around it: the push rule is ADVISORY, and the boot line and every handle say so.
class PersonalTokenBroker : public CredentialBroker {
 public:
  // The token from `token_file` (its first line); INVALID_ARGUMENT when empty or unreadable.
  static absl::StatusOr<std::unique_ptr<PersonalTokenBroker>> FromFile(
      const std::string& token_file);
  absl::StatusOr<Credential> Mint(const std::string&, const std::string&,
                                  CredentialScope) override {
    return Credential{"x-access-token", token_};
  }
  void Revoke(const std::string&, const Credential&) override {}
  void RevokeSession(const std::string&) override {}
  bool ReadOnlyEnforced() const override { return false; }
  std::string Describe() const override;

 private:
  PersonalTokenBroker(std::string token_file, std::string token)
      : token_file_(std::move(token_file)), token_(std::move(token)) {}
  const std::string token_file_;
  const std::string token_;
};

}  // namespace ccsandbox::gateway

#endif  // CCSANDBOX_GATEWAY_CREDENTIALS_H_
