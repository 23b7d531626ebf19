// Conversations on disk: provisioning (a reflink clone of every registered repository into
// repos/, a working and a config directory per agent), description, teardown, and the
// directories a dispatch binds. Thread-safe; one conversation's calls are serialised, different
// conversations proceed in parallel.
//
// All or nothing: everything new is built in a staging directory beside the conversations
// (never inside a directory a sandbox can write) and renamed into place only when all of it
// succeeded; on failure the staging directory is removed and the conversation is as it was.
//
//   ConversationStore store(data_dir, registry);
//   absl::StatusOr<v1::Conversation> c = store.Provision(request);
#ifndef CCSANDBOX_WORKSPACE_CONVERSATION_STORE_H_
#define CCSANDBOX_WORKSPACE_CONVERSATION_STORE_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "policy/plan/dispatch_binds.h"
#include "proto/workspace.pb.h"
#include "workspace/data_dir.h"
#include "workspace/workspace_registry.h"

namespace ccsandbox::workspace {

inline constexpr int kMaxAgents = 64;

class ConversationStore {
 public:
  ConversationStore(const DataDir& data, const WorkspaceRegistry& registry)
      : data_(data), registry_(registry) {}

  // Removes the staging and trash directories a broker that died mid-way left (at boot, with
  // the data directory locked: no other broker is provisioning). Returns how many; one that
  // cannot be removed is logged and left (it never keeps the broker from starting).
  absl::StatusOr<int> SweepLeftovers();

  // Clones what is missing, makes the agents' directories that are missing; keeps what exists.
  absl::StatusOr<v1::Conversation> Provision(const v1::ProvisionRequest& request);
  // NOT_FOUND when not provisioned.
  absl::StatusOr<v1::Conversation> Get(const std::string& workspace_id,
                                       const std::string& conversation_id);
  // Removes the conversation, or only `agent_id`'s directories. `sessions_using(dir)` names the
  // live sessions binding anything at or below `dir`: while there are any, FAILED_PRECONDITION.
  // Nothing there: OK with no removed path.
  absl::StatusOr<v1::TeardownResponse> Teardown(
      const v1::ConversationRequest& request,
      const std::function<std::vector<std::string>(const std::string&)>& sessions_using);
  // The resolved directories `agent_id` of the conversation may be given. NOT_FOUND until the
  // conversation and the agent are provisioned.
  absl::StatusOr<policy::ConversationDirs> DirsFor(const std::string& workspace_id,
                                                   const std::string& conversation_id,
                                                   const std::string& agent_id);

 private:
  // One mutex per conversation (never removed: ids are bounded by what clients provision).
  absl::Mutex& LockFor(const std::string& workspace_id, const std::string& conversation_id);
  absl::StatusOr<v1::Conversation> Describe(const v1::Workspace& workspace,
                                            const std::string& conversation_id);

  const DataDir& data_;
  const WorkspaceRegistry& registry_;
  absl::Mutex locks_mu_;
  std::map<std::string, std::unique_ptr<absl::Mutex>> locks_ ABSL_GUARDED_BY(locks_mu_);
};

}  // namespace ccsandbox::workspace

#endif  // CCSANDBOX_WORKSPACE_CONVERSATION_STORE_H_
