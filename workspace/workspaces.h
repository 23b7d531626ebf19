// What the broker holds for workspaces when it has a --data-dir: the locked data directory,
// the registry of repositories, the conversations, and the dispatch plans Launch and
// ConfinePath share. Thread-safe.
//
//   absl::StatusOr<std::unique_ptr<Workspaces>> ws = Workspaces::Open("/var/lib/ccsandbox");
//   absl::StatusOr<v1::DispatchPlan> plan = (*ws)->PlanDispatch(dispatch);
#ifndef CCSANDBOX_WORKSPACE_WORKSPACES_H_
#define CCSANDBOX_WORKSPACE_WORKSPACES_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "proto/workspace.pb.h"
#include "workspace/conversation_store.h"
#include "workspace/data_dir.h"
#include "workspace/workspace_registry.h"

namespace ccsandbox::workspace {

class Workspaces {
 public:
  // Opens (and locks) the data directory and removes what a broker that died mid-way left.
  static absl::StatusOr<std::unique_ptr<Workspaces>> Open(const std::string& data_dir);

  // The bind set, confinement roots, working directory and protected paths of `dispatch`.
  // INVALID_ARGUMENT / NOT_FOUND naming the field (unsafe ids, an agent not provisioned, a
  // harness-bash workdir that does not exist or resolves outside the agent's directory and
  // repos/).
  absl::StatusOr<v1::DispatchPlan> PlanDispatch(const v1::WorkspaceDispatch& dispatch);

  // A Launch pins each bind (dev, ino) when the session is launched, and the launcher binds
  // only that object. For a bind below the data directory, confirms that the pinned object is
  // the one at `host_path` reached from the data directory without following any symlink: an
  // agent swapping a component of a harness workdir inside repos/ (which it writes) for a
  // symlink between PlanDispatch's check and the pin would otherwise have the symlink's target
  // bound. FAILED_PRECONDITION naming the path otherwise; OK for a path outside the data
  // directory (the attachments).
  absl::Status ConfirmPinned(const std::string& host_path, uint64_t dev, uint64_t ino) const;

  const DataDir& data_dir() const { return *data_; }
  WorkspaceRegistry& registry() { return registry_; }
  ConversationStore& conversations() { return store_; }

 private:
  explicit Workspaces(std::unique_ptr<DataDir> data)
      : data_(std::move(data)), registry_(*data_), store_(*data_, registry_) {}
  const std::unique_ptr<DataDir> data_;
  WorkspaceRegistry registry_;
  ConversationStore store_;
};

}  // namespace ccsandbox::workspace

#endif  // CCSANDBOX_WORKSPACE_WORKSPACES_H_
