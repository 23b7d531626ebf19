// The broker's private runtime directory: one sub-directory per sandboxed session holding
// that session's proxy sockets. Created 0700 at boot; anything a previous broker left behind
// is removed then, each session's directory at Destroy, and the whole tree at shutdown — so no
// socket file outlives its session, whatever way the session ends.
#ifndef CCSANDBOX_BROKER_RUNTIME_DIR_H_
#define CCSANDBOX_BROKER_RUNTIME_DIR_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace ccsandbox::broker {

class RuntimeDir {
 public:
  // `root` must be absolute; it is created (0700) or emptied. Locked (flock on root/.lock)
  // while the object lives: FAILED_PRECONDITION, touching nothing, when another broker holds it.
  static absl::StatusOr<std::unique_ptr<RuntimeDir>> Open(const std::string& root);
  ~RuntimeDir();  // removes the whole tree

  // Creates <root>/s/<index> (0700) for a session and returns it. Session ids are not used
  // in paths: sockets must stay under 108 bytes whatever the id.
  absl::StatusOr<std::string> CreateSessionDir();
  // Removes a directory CreateSessionDir returned, and everything in it.
  void RemoveSessionDir(const std::string& dir);

  const std::string& root() const { return root_; }

  // The default root: $XDG_RUNTIME_DIR/ccsandbox-broker, else /tmp/ccsandbox-broker-<uid>.
  static std::string DefaultRoot();

 private:
  explicit RuntimeDir(std::string root) : root_(std::move(root)) {}
  std::string root_;
  uint64_t next_ = 0;
  UniqueFd lock_;
};

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_RUNTIME_DIR_H_
