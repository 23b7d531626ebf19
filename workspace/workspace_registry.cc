#include "workspace/workspace_registry.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "google/protobuf/util/json_util.h"
#include "workspace/git_checkout.h"
#include "workspace/layout.h"

namespace ccsandbox::workspace {
namespace {

constexpr char kFile[] = "workspace.json";
constexpr size_t kMaxFile = 1 << 20;

absl::Status Invalid(const std::string& field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

// A checkout and the data directory must not hold one another: a clone would copy the
// conversations (or itself), and a bind of the checkout would expose every conversation.
absl::Status CheckApart(const std::string& field, const std::string& resolved,
                        const std::string& data_dir, absl::string_view what) {
  if (IsUnderOrEqual(data_dir, resolved)) {
    return Invalid(field,
                   absl::StrCat("'", resolved, "' holds the broker's data directory (", data_dir,
                                "); keep the data directory outside every ", what));
  }
  if (IsUnderOrEqual(resolved, data_dir)) {
    return Invalid(field, absl::StrCat("'", resolved, "' is inside the broker's data directory (",
                                       data_dir, ")"));
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(int dirfd, const std::string& content) {
  const std::string tmp = absl::StrCat(".", kFile, ".tmp");
  UniqueFd fd(
      ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return absl::InternalError(absl::StrCat("write ", tmp, ": ", strerror(errno)));
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::InternalError(absl::StrCat("write ", tmp, ": ", strerror(errno)));
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0 || ::renameat(dirfd, tmp.c_str(), dirfd, kFile) != 0) {
    return absl::InternalError(absl::StrCat("store ", kFile, ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(int dirfd) {
  UniqueFd fd(::openat(dirfd, kFile, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return absl::NotFoundError("not registered");
    return absl::InternalError(absl::StrCat("read ", kFile, ": ", strerror(errno)));
  }
  std::string content;
  char buffer[16384];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(absl::StrCat("read ", kFile, ": ", strerror(errno)));
    if (n == 0) return content;
    content.append(buffer, static_cast<size_t>(n));
    if (content.size() > kMaxFile) return absl::DataLossError(absl::StrCat(kFile, ": too large"));
  }
}

absl::StatusOr<v1::Workspace> Validate(const v1::Workspace& request, const std::string& data_dir) {
  if (absl::Status id = CheckPathComponent("workspaceId", request.workspace_id()); !id.ok()) {
    return id;
  }
  if (request.repositories_size() > kMaxRepositories) {
    return Invalid("repositories", absl::StrCat(request.repositories_size(),
                                                " repositories; at most ", kMaxRepositories));
  }
  v1::Workspace out;
  out.set_workspace_id(request.workspace_id());
  std::set<std::string> names, roots;
  for (int i = 0; i < request.repositories_size(); ++i) {
    const v1::WorkspaceRepository& repo = request.repositories(i);
    const std::string field = absl::StrCat("repositories[", i, "]");
    if (absl::Status name = CheckPathComponent(field + ".name", repo.name()); !name.ok()) {
      return name;
    }
    if (!names.insert(repo.name()).second) {
      return Invalid(field + ".name", absl::StrCat("'", repo.name(), "' is registered twice"));
    }
    if (absl::Status path = CheckNormalizedAbsolute(field + ".path", repo.path()); !path.ok()) {
      return path;
    }
    absl::StatusOr<GitCheckout> checkout = InspectCheckout(field + ".path", repo.path());
    if (!checkout.ok()) return checkout.status();
    if (absl::Status apart = CheckApartFromDataDir(field + ".path", *checkout, data_dir);
        !apart.ok()) {
      return apart;
    }
    if (!roots.insert(checkout->root).second) {
      return Invalid(field + ".path",
                     absl::StrCat("'", checkout->root, "' is registered under two names"));
    }
    v1::WorkspaceRepository* stored = out.add_repositories();
    stored->set_name(repo.name());
    stored->set_path(repo.path());
    stored->set_resolved_path(checkout->root);
  }
  if (!request.attachments_dir().empty()) {
    const std::string& dir = request.attachments_dir();
    if (absl::Status path = CheckNormalizedAbsolute("attachmentsDir", dir); !path.ok()) return path;
    char resolved[PATH_MAX];
    const std::string spelled = ::realpath(dir.c_str(), resolved) != nullptr ? resolved : dir;
    // Bound read-only into every overlay dispatch: holding the data directory would show every
    // conversation, siblings included.
    for (const std::string& d : {dir, spelled}) {
      if (absl::Status apart = CheckApart("attachmentsDir", d, data_dir, "attachments directory");
          !apart.ok()) {
        return apart;
      }
    }
    out.set_attachments_dir(dir);
  }
  return out;
}

}  // namespace

absl::Status CheckApartFromDataDir(const std::string& field, const GitCheckout& checkout,
                                   const std::string& data_dir) {
  for (const std::string* dir : {&checkout.root, &checkout.git_dir, &checkout.common_dir}) {
    if (absl::Status apart = CheckApart(field, *dir, data_dir, "repository"); !apart.ok()) {
      return apart;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Workspace> WorkspaceRegistry::Register(const v1::Workspace& workspace) {
  absl::StatusOr<v1::Workspace> valid = Validate(workspace, data_.path());
  if (!valid.ok()) return valid.status();
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  if (!google::protobuf::util::MessageToJsonString(*valid, &json, options).ok()) {
    return absl::InternalError("cannot render the workspace");
  }
  absl::MutexLock lock(&mu_);
  absl::StatusOr<UniqueFd> dir = data_.OpenDir({kWorkspaces, valid->workspace_id()}, true);
  if (!dir.ok()) return dir.status();
  if (absl::Status written = WriteFileAtomically(dir->get(), json); !written.ok()) return written;
  return valid;
}

absl::StatusOr<v1::Workspace> WorkspaceRegistry::Get(const std::string& workspace_id) const {
  if (absl::Status id = CheckPathComponent("workspaceId", workspace_id); !id.ok()) return id;
  auto not_found = [&] {
    return absl::NotFoundError(absl::StrCat("workspaceId: workspace '", workspace_id,
                                            "' is not registered; RegisterWorkspace first"));
  };
  absl::MutexLock lock(&mu_);
  absl::StatusOr<UniqueFd> dir = data_.OpenDir({kWorkspaces, workspace_id}, false);
  if (absl::IsNotFound(dir.status())) return not_found();
  if (!dir.ok()) return dir.status();
  absl::StatusOr<std::string> json = ReadFile(dir->get());
  if (absl::IsNotFound(json.status())) return not_found();
  if (!json.ok()) return json.status();
  v1::Workspace workspace;
  if (!google::protobuf::util::JsonStringToMessage(*json, &workspace).ok()) {
    return absl::DataLossError(absl::StrCat(data_.PathOf({kWorkspaces, workspace_id, kFile}),
                                            ": does not parse; register the workspace again"));
  }
  return workspace;
}

absl::StatusOr<std::vector<std::string>> WorkspaceRegistry::ProtectedPaths(
    const std::string& workspace_id) const {
  std::vector<std::string> paths;
  if (!CheckPathComponent("workspaceId", workspace_id).ok()) return paths;
  absl::StatusOr<v1::Workspace> workspace = Get(workspace_id);
  if (absl::IsNotFound(workspace.status())) return paths;
  if (!workspace.ok()) return workspace.status();
  for (const v1::WorkspaceRepository& repo : workspace->repositories()) {
    paths.push_back(repo.path());
    if (repo.resolved_path() != repo.path()) paths.push_back(repo.resolved_path());
  }
  return paths;
}

}  // namespace ccsandbox::workspace
