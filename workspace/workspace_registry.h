// The workspaces' registered repositories and attachments directory, kept under the data
// directory (workspaces/<id>/workspace.json, proto3 JSON of v1::Workspace, replaced atomically),
// so a restarted broker still clones and protects the same checkouts. Thread-safe.
//
//   WorkspaceRegistry registry(data_dir);
//   absl::StatusOr<v1::Workspace> stored = registry.Register(request);  // validated, resolved
#ifndef CCSANDBOX_WORKSPACE_WORKSPACE_REGISTRY_H_
#define CCSANDBOX_WORKSPACE_WORKSPACE_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "proto/workspace.pb.h"
#include "workspace/data_dir.h"
#include "workspace/git_checkout.h"

namespace ccsandbox::workspace {

inline constexpr int kMaxRepositories = 64;

// INVALID_ARGUMENT naming `field` when the checkout's root or git directories hold the data
// directory (a clone would copy the conversations) or lie inside it (a clone would copy another
// conversation's clone, which its agent wrote; a bind would expose it).
absl::Status CheckApartFromDataDir(const std::string& field, const GitCheckout& checkout,
                                   const std::string& data_dir);

class WorkspaceRegistry {
 public:
  explicit WorkspaceRegistry(const DataDir& data) : data_(data) {}

  // Validates `workspace` (INVALID_ARGUMENT naming the field: unsafe id or name, a path that is
  // relative, not normalised, not a git checkout, inside the data directory or holding it, a
  // duplicate), fills each resolved_path and stores it, replacing what was registered.
  absl::StatusOr<v1::Workspace> Register(const v1::Workspace& workspace);
  // NOT_FOUND when never registered.
  absl::StatusOr<v1::Workspace> Get(const std::string& workspace_id) const;

  // Every spelling of the registered checkouts (as registered and resolved): the protected
  // paths of every Launch in the workspace. Empty when not registered (or the id could not
  // name one); an error when the registration cannot be read (the Launch then fails closed).
  absl::StatusOr<std::vector<std::string>> ProtectedPaths(const std::string& workspace_id) const;

 private:
  const DataDir& data_;
  mutable absl::Mutex mu_;
};

}  // namespace ccsandbox::workspace

#endif  // CCSANDBOX_WORKSPACE_WORKSPACE_REGISTRY_H_
