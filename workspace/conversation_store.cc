#include "workspace/conversation_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <set>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/paths.h"
#include "spdlog/spdlog.h"
#include "workspace/git_checkout.h"
#include "workspace/layout.h"
#include "workspace/reflink_clone.h"
#include "workspace/remove_tree.h"

namespace ccsandbox::workspace {
namespace {

std::string Unique(absl::string_view prefix, absl::string_view id) {
  static std::atomic<uint64_t> counter{0};
  uint64_t random = 0;
  if (::getrandom(&random, sizeof(random), 0) != sizeof(random)) random = 0;
  return absl::StrCat(prefix, id, "-", absl::Hex(random ^ ++counter, absl::kZeroPad16));
}

bool Exists(int dirfd, const std::string& name) {
  struct stat st;
  return ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

// A directory itself, not a symlink to one.
bool IsDirectory(int dirfd, const std::string& name) {
  struct stat st;
  return ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// Never replaces: a name that appeared meanwhile (an agent writes inside repos/) stops the move.
absl::Status MoveInto(int from_fd, const std::string& from, int to_fd, const std::string& to,
                      const std::string& to_path) {
  if (::renameat2(from_fd, from.c_str(), to_fd, to.c_str(), RENAME_NOREPLACE) == 0) {
    return absl::OkStatus();
  }
  if (errno == EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat(to_path, ": appeared while provisioning; nothing was changed"));
  }
  return Errno("rename into", to_path);
}

// <name>/work and <name>/config, in `parent`.
absl::Status MakeAgentDirs(int parent_fd, const std::string& name, const std::string& path) {
  if (::mkdirat(parent_fd, name.c_str(), 0755) != 0) return Errno("mkdir", path);
  absl::StatusOr<UniqueFd> agent = OpenSubdir(parent_fd, name, false);
  if (!agent.ok()) return agent.status();
  for (const char* sub : {kWork, kConfig}) {
    if (::mkdirat(agent->get(), sub, 0755) != 0) return Errno("mkdir", path + "/" + sub);
  }
  return absl::OkStatus();
}

// Every entry's name but "." and "..".
std::vector<std::string> ListEntries(int dirfd) {
  std::vector<std::string> names;
  int dup = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dup < 0) return names;
  DIR* dir = ::fdopendir(dup);
  if (dir == nullptr) {
    ::close(dup);
    return names;
  }
  while (struct dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// The sub-directories' names, hidden (staging, trash) ones left out.
std::vector<std::string> ListDirs(int dirfd) {
  std::vector<std::string> names;
  for (const std::string& name : ListEntries(dirfd)) {
    struct stat st;
    if (name[0] != '.' && ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISDIR(st.st_mode)) {
      names.push_back(name);
    }
  }
  return names;
}

absl::Status CheckIds(const std::string& conversation_id,
                      const google::protobuf::RepeatedPtrField<std::string>& agent_ids) {
  if (absl::Status id = CheckPathComponent("conversationId", conversation_id); !id.ok()) return id;
  if (agent_ids.size() > kMaxAgents) {
    return absl::InvalidArgumentError(
        absl::StrCat("agentIds: ", agent_ids.size(), " agents; at most ", kMaxAgents));
  }
  std::set<std::string> seen;
  for (int i = 0; i < agent_ids.size(); ++i) {
    const std::string field = absl::StrCat("agentIds[", i, "]");
    if (absl::Status id = CheckPathComponent(field, agent_ids[i]); !id.ok()) return id;
    if (!seen.insert(agent_ids[i]).second) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": '", agent_ids[i], "' twice"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Mutex& ConversationStore::LockFor(const std::string& workspace_id,
                                        const std::string& conversation_id) {
  absl::MutexLock lock(&locks_mu_);
  std::unique_ptr<absl::Mutex>& mu = locks_[absl::StrCat(workspace_id, "/", conversation_id)];
  if (mu == nullptr) mu = std::make_unique<absl::Mutex>();
  return *mu;
}

absl::StatusOr<int> ConversationStore::SweepLeftovers() {
  absl::StatusOr<UniqueFd> workspaces = data_.OpenDir({kWorkspaces}, false);
  if (absl::IsNotFound(workspaces.status())) return 0;
  if (!workspaces.ok()) return workspaces.status();
  int swept = 0;
  for (const std::string& ws : ListDirs(workspaces->get())) {
    const std::vector<std::string> convs_at = {kWorkspaces, ws, kConversations};
    absl::StatusOr<UniqueFd> convs = data_.OpenDir(convs_at, false);
    if (!convs.ok()) continue;
    for (const std::string& name : ListEntries(convs->get())) {
      if (!absl::StartsWith(name, ".staging-") && !absl::StartsWith(name, ".trash-")) continue;
      std::vector<std::string> at = convs_at;
      at.push_back(name);
      // A leftover that cannot go (a mount inside it) must not keep the broker from starting:
      // it is hidden from every path a sandbox is given, and reported.
      if (absl::Status removed = RemoveTree(data_.PathOf(at)); !removed.ok()) {
        spdlog::warn("workspaces: cannot remove a leftover of an earlier broker: {}",
                     std::string(removed.message()));
        continue;
      }
      ++swept;
    }
  }
  return swept;
}

absl::StatusOr<v1::Conversation> ConversationStore::Provision(const v1::ProvisionRequest& request) {
  absl::StatusOr<v1::Workspace> workspace = registry_.Get(request.workspace_id());
  if (!workspace.ok()) return workspace.status();
  const std::string& ws = request.workspace_id();
  const std::string& conv = request.conversation_id();
  if (absl::Status ids = CheckIds(conv, request.agent_ids()); !ids.ok()) return ids;
  absl::MutexLock lock(&LockFor(ws, conv));
  // The registration was checked then; the checkout may have changed since: inspected again,
  // it must still be apart from the data directory and the repository registered.
  std::vector<GitCheckout> checkouts;
  for (const v1::WorkspaceRepository& repo : workspace->repositories()) {
    absl::StatusOr<GitCheckout> checkout = InspectCheckout("path", repo.path());
    // Swapped since for a symlink into the data directory, it would clone another
    // conversation's clone (written by that conversation's agent) into this one.
    absl::Status usable =
        checkout.ok() ? CheckApartFromDataDir("path", *checkout, data_.path()) : checkout.status();
    // Nor is it ever another repository than the one registered (another user's, say, which a
    // root broker could read for this one).
    if (usable.ok() && checkout->root != repo.resolved_path()) {
      usable = absl::FailedPreconditionError(absl::StrCat("'", repo.path(), "' now resolves to '",
                                                          checkout->root, "', not to '",
                                                          repo.resolved_path(), "' as registered"));
    }
    if (!usable.ok()) {
      return absl::FailedPreconditionError(absl::StrCat("registered repository '", repo.name(),
                                                        "': ", usable.message(),
                                                        "; register the workspace again"));
    }
    checkouts.push_back(*std::move(checkout));
  }
  const std::vector<std::string> convs_at = {kWorkspaces, ws, kConversations};
  absl::StatusOr<UniqueFd> convs = data_.OpenDir(convs_at, true);
  if (!convs.ok()) return convs.status();
  absl::StatusOr<UniqueFd> existing = OpenSubdir(convs->get(), conv, false);
  if (!existing.ok() && !absl::IsNotFound(existing.status())) return existing.status();

  // Everything new is built here, out of every sandbox's reach, then renamed into place.
  const std::string staging = Unique(".staging-", conv);
  std::vector<std::string> staging_at = convs_at;
  staging_at.push_back(staging);
  const std::string staging_path = data_.PathOf(staging_at);
  if (::mkdirat(convs->get(), staging.c_str(), 0700) != 0) return Errno("mkdir", staging_path);
  absl::Cleanup remove_staging = [&] { (void)RemoveTree(staging_path); };
  absl::StatusOr<UniqueFd> staged = OpenSubdir(convs->get(), staging, false);
  if (!staged.ok()) return staged.status();

  std::map<std::string, CloneStats> cloned;
  if (!existing.ok()) {
    if (!checkouts.empty()) {
      if (::mkdirat(staged->get(), kRepos, 0755) != 0) return Errno("mkdir", staging_path);
    }
    for (size_t i = 0; i < checkouts.size(); ++i) {
      const std::string& name = workspace->repositories(static_cast<int>(i)).name();
      absl::StatusOr<CloneStats> stats =
          CloneCheckout(checkouts[i], absl::StrCat(staging_path, "/", kRepos, "/", name));
      if (!stats.ok()) return stats.status();
      cloned[name] = *std::move(stats);
    }
    if (::mkdirat(staged->get(), kAgents, 0755) != 0) return Errno("mkdir", staging_path);
    absl::StatusOr<UniqueFd> agents = OpenSubdir(staged->get(), kAgents, false);
    if (!agents.ok()) return agents.status();
    for (const std::string& agent : request.agent_ids()) {
      if (absl::Status made = MakeAgentDirs(agents->get(), agent, staging_path); !made.ok()) {
        return made;
      }
    }
    if (::fchmod(staged->get(), 0755) != 0) return Errno("chmod", staging_path);
    if (absl::Status moved = MoveInto(convs->get(), staging, convs->get(), conv,
                                      data_.PathOf({kWorkspaces, ws, kConversations, conv}));
        !moved.ok()) {
      return moved;
    }
    std::move(remove_staging).Cancel();
  } else {
    const int conv_fd = existing->get();
    absl::StatusOr<UniqueFd> repos = OpenSubdir(conv_fd, kRepos, false);
    if (!repos.ok() && !absl::IsNotFound(repos.status())) return repos.status();
    absl::StatusOr<UniqueFd> agents = OpenSubdir(conv_fd, kAgents, true);
    if (!agents.ok()) return agents.status();
    // Staged pieces: (staged name, destination dir fd, destination name).
    struct Piece {
      std::string staged;
      int to_fd;
      std::string to;
      std::string to_path;
    };
    std::vector<Piece> pieces;
    std::vector<size_t> new_repos;
    for (size_t i = 0; i < checkouts.size(); ++i) {
      const std::string& name = workspace->repositories(static_cast<int>(i)).name();
      if (repos.ok() && IsDirectory(repos->get(), name)) continue;
      // Agents write repos/: a symlink there is never a clone (a host-side tool following the
      // reported path would work wherever it points, the registered checkout say).
      if (repos.ok() && Exists(repos->get(), name)) {
        return absl::FailedPreconditionError(
            absl::StrCat(data_.PathOf({kWorkspaces, ws, kConversations, conv, kRepos, name}),
                         ": is not a directory (put there from inside a sandbox?), so repository '",
                         name, "' cannot be cloned there; remove it and provision again"));
      }
      const std::string piece = "r-" + name;
      absl::StatusOr<CloneStats> stats =
          CloneCheckout(checkouts[i], absl::StrCat(staging_path, "/", piece));
      if (!stats.ok()) return stats.status();
      cloned[name] = *std::move(stats);
      new_repos.push_back(i);
    }
    for (const std::string& agent : request.agent_ids()) {
      if (Exists(agents->get(), agent)) continue;
      if (absl::Status made = MakeAgentDirs(staged->get(), "a-" + agent, staging_path);
          !made.ok()) {
        return made;
      }
      pieces.push_back({"a-" + agent, agents->get(), agent,
                        data_.PathOf({kWorkspaces, ws, kConversations, conv, kAgents, agent})});
    }
    bool made_repos = false;
    if (!new_repos.empty() && !repos.ok()) {
      if (::mkdirat(conv_fd, kRepos, 0755) != 0) return Errno("mkdir", kRepos);
      made_repos = true;
      repos = OpenSubdir(conv_fd, kRepos, false);
      if (!repos.ok()) return repos.status();
    }
    for (size_t i : new_repos) {
      const std::string& name = workspace->repositories(static_cast<int>(i)).name();
      pieces.push_back({"r-" + name, repos->get(), name,
                        data_.PathOf({kWorkspaces, ws, kConversations, conv, kRepos, name})});
    }
    // All or nothing: a failed move puts back the pieces already moved.
    for (size_t i = 0; i < pieces.size(); ++i) {
      absl::Status moved = MoveInto(staged->get(), pieces[i].staged, pieces[i].to_fd, pieces[i].to,
                                    pieces[i].to_path);
      if (moved.ok()) continue;
      for (size_t j = 0; j < i; ++j) {
        (void)::renameat2(pieces[j].to_fd, pieces[j].to.c_str(), staged->get(),
                          pieces[j].staged.c_str(), RENAME_NOREPLACE);
      }
      if (made_repos) (void)::unlinkat(conv_fd, kRepos, AT_REMOVEDIR);
      return moved;
    }
  }
  absl::StatusOr<v1::Conversation> described = Describe(*workspace, conv);
  if (!described.ok()) return described.status();
  for (v1::ProvisionedRepository& repo : *described->mutable_repositories()) {
    auto it = cloned.find(repo.name());
    if (it == cloned.end()) continue;
    repo.set_cloned_now(true);
    repo.set_files(it->second.files);
    repo.set_bytes(it->second.bytes);
    for (const std::string& skipped : it->second.skipped) repo.add_skipped(skipped);
  }
  return described;
}

absl::StatusOr<v1::Conversation> ConversationStore::Describe(const v1::Workspace& workspace,
                                                             const std::string& conversation_id) {
  const std::string& ws = workspace.workspace_id();
  const std::vector<std::string> at = {kWorkspaces, ws, kConversations, conversation_id};
  absl::StatusOr<UniqueFd> conv = data_.OpenDir(at, false);
  if (absl::IsNotFound(conv.status())) {
    return absl::NotFoundError(absl::StrCat("conversationId: conversation '", conversation_id,
                                            "' of workspace '", ws, "' is not provisioned"));
  }
  if (!conv.ok()) return conv.status();
  v1::Conversation out;
  out.set_workspace_id(ws);
  out.set_conversation_id(conversation_id);
  out.set_path(data_.PathOf(at));
  out.set_repos_dir(absl::StrCat(out.path(), "/", kRepos));
  absl::StatusOr<UniqueFd> repos = OpenSubdir(conv->get(), kRepos, false);
  std::set<std::string> registered;
  for (const v1::WorkspaceRepository& repo : workspace.repositories()) {
    if (!repos.ok() || !IsDirectory(repos->get(), repo.name())) continue;
    registered.insert(repo.name());
    v1::ProvisionedRepository* entry = out.add_repositories();
    entry->set_name(repo.name());
    entry->set_source(repo.resolved_path());
    entry->set_path(absl::StrCat(out.repos_dir(), "/", repo.name()));
  }
  if (repos.ok()) {
    for (const std::string& name : ListDirs(repos->get())) {
      if (registered.count(name) != 0) continue;
      v1::ProvisionedRepository* entry = out.add_repositories();  // no longer registered
      entry->set_name(name);
      entry->set_path(absl::StrCat(out.repos_dir(), "/", name));
    }
  }
  absl::StatusOr<UniqueFd> agents = OpenSubdir(conv->get(), kAgents, false);
  if (agents.ok()) {
    for (const std::string& agent : ListDirs(agents->get())) {
      v1::ConversationAgent* entry = out.add_agents();
      entry->set_agent_id(agent);
      entry->set_workdir(absl::StrCat(out.path(), "/", kAgents, "/", agent, "/", kWork));
      entry->set_config_dir(absl::StrCat(out.path(), "/", kAgents, "/", agent, "/", kConfig));
    }
  }
  char resolved[PATH_MAX];
  struct stat st;
  if (!workspace.attachments_dir().empty() &&
      ::realpath(workspace.attachments_dir().c_str(), resolved) != nullptr &&
      ::stat(resolved, &st) == 0 && S_ISDIR(st.st_mode)) {
    out.set_attachments_dir(resolved);
  }
  return out;
}

absl::StatusOr<v1::Conversation> ConversationStore::Get(const std::string& workspace_id,
                                                        const std::string& conversation_id) {
  absl::StatusOr<v1::Workspace> workspace = registry_.Get(workspace_id);
  if (!workspace.ok()) return workspace.status();
  if (absl::Status id = CheckPathComponent("conversationId", conversation_id); !id.ok()) return id;
  absl::MutexLock lock(&LockFor(workspace_id, conversation_id));
  return Describe(*workspace, conversation_id);
}

absl::StatusOr<v1::TeardownResponse> ConversationStore::Teardown(
    const v1::ConversationRequest& request,
    const std::function<std::vector<std::string>(const std::string&)>& sessions_using) {
  const std::string& ws = request.workspace_id();
  const std::string& conv = request.conversation_id();
  if (absl::Status id = CheckPathComponent("workspaceId", ws); !id.ok()) return id;
  if (absl::Status id = CheckPathComponent("conversationId", conv); !id.ok()) return id;
  if (request.has_agent_id()) {
    if (absl::Status id = CheckPathComponent("agentId", request.agent_id()); !id.ok()) return id;
  }
  absl::MutexLock lock(&LockFor(ws, conv));
  v1::TeardownResponse response;
  const std::vector<std::string> convs_at = {kWorkspaces, ws, kConversations};
  absl::StatusOr<UniqueFd> convs = data_.OpenDir(convs_at, false);
  if (absl::IsNotFound(convs.status())) return response;
  if (!convs.ok()) return convs.status();
  absl::StatusOr<UniqueFd> conv_fd = OpenSubdir(convs->get(), conv, false);
  if (absl::IsNotFound(conv_fd.status())) return response;
  if (!conv_fd.ok()) return conv_fd.status();
  // What goes: (its parent's fd, its name, its path).
  int parent = convs->get();
  std::string name = conv;
  std::vector<std::string> at = {kWorkspaces, ws, kConversations, conv};
  absl::StatusOr<UniqueFd> agents;
  if (request.has_agent_id()) {
    agents = OpenSubdir(conv_fd->get(), kAgents, false);
    if (absl::IsNotFound(agents.status())) return response;
    if (!agents.ok()) return agents.status();
    if (!Exists(agents->get(), request.agent_id())) return response;
    parent = agents->get();
    name = request.agent_id();
    at.push_back(kAgents);
    at.push_back(name);
  }
  const std::string path = data_.PathOf(at);
  if (std::vector<std::string> users = sessions_using(path); !users.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " is bound by live sessions (", absl::StrJoin(users, ", "), "); destroy them first"));
  }
  // Out of every sandbox's sight in one step, then removed without following any symlink.
  const std::string trash = Unique(".trash-", conv);
  if (::renameat2(parent, name.c_str(), convs->get(), trash.c_str(), RENAME_NOREPLACE) != 0) {
    return Errno("move away", path);
  }
  std::vector<std::string> trash_at = convs_at;
  trash_at.push_back(trash);
  if (absl::Status removed = RemoveTree(data_.PathOf(trash_at)); !removed.ok()) return removed;
  response.add_removed(path);
  return response;
}

absl::StatusOr<policy::ConversationDirs> ConversationStore::DirsFor(
    const std::string& workspace_id, const std::string& conversation_id,
    const std::string& agent_id) {
  absl::StatusOr<v1::Workspace> workspace = registry_.Get(workspace_id);
  if (!workspace.ok()) return workspace.status();
  if (absl::Status id = CheckPathComponent("conversationId", conversation_id); !id.ok()) return id;
  if (absl::Status id = CheckPathComponent("agentId", agent_id); !id.ok()) return id;
  absl::MutexLock lock(&LockFor(workspace_id, conversation_id));
  const std::vector<std::string> conv_at = {kWorkspaces, workspace_id, kConversations,
                                            conversation_id};
  std::vector<std::string> agent_at = conv_at;
  agent_at.insert(agent_at.end(), {kAgents, agent_id});
  for (const char* sub : {kWork, kConfig}) {
    std::vector<std::string> dir_at = agent_at;
    dir_at.push_back(sub);
    absl::StatusOr<UniqueFd> dir = data_.OpenDir(dir_at, false);
    if (absl::IsNotFound(dir.status())) {
      return absl::NotFoundError(
          absl::StrCat("agentId: agent '", agent_id, "' of conversation '", conversation_id,
                       "' is not provisioned; ProvisionConversation with it first"));
    }
    if (!dir.ok()) return dir.status();
  }
  policy::ConversationDirs dirs;
  dirs.agent_workdir = data_.PathOf(agent_at) + "/" + kWork;
  dirs.agent_config_dir = data_.PathOf(agent_at) + "/" + kConfig;
  std::vector<std::string> repos_at = conv_at;
  repos_at.push_back(kRepos);
  dirs.repos_dir = data_.PathOf(repos_at);
  absl::StatusOr<UniqueFd> repos = data_.OpenDir(repos_at, false);
  if (!repos.ok() && !absl::IsNotFound(repos.status())) return repos.status();
  dirs.repos_present = repos.ok();
  if (!workspace->attachments_dir().empty()) {
    char resolved[PATH_MAX];
    struct stat st;
    if (::realpath(workspace->attachments_dir().c_str(), resolved) != nullptr &&
        ::stat(resolved, &st) == 0 && S_ISDIR(st.st_mode)) {
      // Swapped for a symlink since registration: it would show every conversation.
      if (IsUnderOrEqual(data_.path(), resolved) || IsUnderOrEqual(resolved, data_.path())) {
        return absl::FailedPreconditionError(
            absl::StrCat("the workspace's attachments directory now resolves to ", resolved,
                         ", which overlaps the broker's data directory; refusing to bind it"));
      }
      dirs.attachments_dir = resolved;
      dirs.attachments_present = true;
    }
  }
  return dirs;
}

}  // namespace ccsandbox::workspace
