// libFuzzer target: the lexical path rules every request path and client id goes through
// (base/paths.h: CheckNormalizedAbsolute, CheckPathComponent and the helpers built on them), the
// data directory's bindable parts (workspace/layout.h) and the bind set of a dispatch into a
// conversation (policy/plan/dispatch_binds.h). Input: a path, ids and a dispatch, read with
// FuzzedDataProvider. Invariants: never crash; each rule agrees with a reference written here
// from its header's words; an accepted id is one path component; IsUnderOrEqual, ParentPath and
// PathDepth agree on normalised paths and never take "/a/bc" to be under "/a/b"; a dispatch's
// binds are normalised, guest = host, inside the agent's own work/ and config/, the
// conversation's repos/ or the attachments, never a sibling agent's; config and attachments are
// read-only; every bind is a confinement root of the same writability; the working directory
// lies in a writable root; a refusal names "workdir".
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/paths.h"
#include "policy/plan/dispatch_binds.h"
#include "tests/fuzz/fuzz_check.h"
#include "workspace/layout.h"

namespace {

using ccsandbox::CheckNormalizedAbsolute;
using ccsandbox::CheckPathComponent;
using ccsandbox::IsUnderOrEqual;
using ccsandbox::ParentPath;
using ccsandbox::PathDepth;

bool ReferenceNormalizedAbsolute(const std::string& path) {
  if (path.empty() || path[0] != '/' || path.find('\0') != std::string::npos) return false;
  if (path == "/") return true;
  std::string rebuilt;
  for (absl::string_view part : absl::StrSplit(path.substr(1), '/')) {
    if (part.empty() || part == "." || part == "..") return false;
    absl::StrAppend(&rebuilt, "/", part);
  }
  return rebuilt == path;
}

bool ReferenceComponent(const std::string& name) {
  if (name.empty() || name.size() > 128 || name[0] == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

void CheckPathHelpers(const std::string& path) {
  const bool normalized = CheckNormalizedAbsolute("path", path).ok();
  FUZZ_CHECK(normalized == ReferenceNormalizedAbsolute(path));
  if (!normalized) {
    FUZZ_CHECK(absl::StartsWith(CheckNormalizedAbsolute("path", path).message(), "path: "));
    return;
  }
  FUZZ_CHECK(IsUnderOrEqual(path, "/") && IsUnderOrEqual(path, path));
  const std::string parent = ParentPath(path);
  FUZZ_CHECK(CheckNormalizedAbsolute("parent", parent).ok());
  FUZZ_CHECK(IsUnderOrEqual(path, parent));
  if (path == "/") {
    FUZZ_CHECK(parent == "/" && PathDepth(path) == 0);
    return;
  }
  FUZZ_CHECK(PathDepth(parent) == PathDepth(path) - 1);
  FUZZ_CHECK(!IsUnderOrEqual(parent, path));
  FUZZ_CHECK(IsUnderOrEqual(path + "/x", path));
  FUZZ_CHECK(!IsUnderOrEqual(path + "x", path) && !IsUnderOrEqual(path, path + "x"));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const std::string workspace = in.ConsumeRandomLengthString(160);
  const std::string conversation = in.ConsumeRandomLengthString(160);
  const std::string agent = in.ConsumeRandomLengthString(160);
  const std::string sibling = in.ConsumeRandomLengthString(160);
  const std::string workdir = in.ConsumeRandomLengthString(300);
  const std::string attachments = in.ConsumeRandomLengthString(300);
  const bool harness_bash = in.ConsumeBool();
  const bool repos_present = in.ConsumeBool();
  const std::string path = in.ConsumeRemainingBytesAsString();

  CheckPathHelpers(path);
  CheckPathHelpers(workdir);
  for (const std::string* id : {&workspace, &conversation, &agent, &sibling}) {
    const absl::Status checked = CheckPathComponent("workspaceId", *id);
    FUZZ_CHECK(checked.ok() == ReferenceComponent(*id));
    if (!checked.ok()) {
      FUZZ_CHECK(absl::StartsWith(checked.message(), "workspaceId: '"));
      FUZZ_CHECK(checked.message().size() < 4 * 128 + 200);
      continue;
    }
    const std::string below = absl::StrCat("/data/", *id);
    FUZZ_CHECK(CheckNormalizedAbsolute("id", below).ok() && ParentPath(below) == "/data");
  }
  // Which parts of the data directory a bind may name.
  if (ReferenceNormalizedAbsolute(path) && path != "/" &&
      ccsandbox::workspace::IsBindableBelowDataDir(path.substr(1))) {
    const std::vector<std::string> parts = absl::StrSplit(path.substr(1), '/');
    FUZZ_CHECK(parts.size() >= 5 && parts[0] == "workspaces" && parts[2] == "conversations");
    FUZZ_CHECK(parts[1][0] != '.' && parts[3][0] != '.');
    FUZZ_CHECK(parts[4] == "repos" ||
               (parts.size() >= 7 && parts[4] == "agents" && parts[5][0] != '.' &&
                (parts[6] == "work" || parts[6] == "config")));
  }

  if (!ReferenceComponent(workspace) || !ReferenceComponent(conversation) ||
      !ReferenceComponent(agent) || !ReferenceComponent(sibling) || agent == sibling) {
    return 0;
  }
  const std::string data_dir = "/var/lib/ccsandbox";
  const std::string conv_rel =
      absl::StrCat("workspaces/", workspace, "/conversations/", conversation);
  const std::string conv = absl::StrCat(data_dir, "/", conv_rel);
  ccsandbox::policy::ConversationDirs dirs;
  dirs.agent_workdir = absl::StrCat(conv, "/agents/", agent, "/work");
  dirs.agent_config_dir = absl::StrCat(conv, "/agents/", agent, "/config");
  dirs.repos_dir = conv + "/repos";
  dirs.repos_present = repos_present;
  // As ConversationStore::DirsFor: a resolved directory that does not overlap the data dir.
  if (ReferenceNormalizedAbsolute(attachments) && !IsUnderOrEqual(attachments, data_dir) &&
      !IsUnderOrEqual(data_dir, attachments)) {
    dirs.attachments_dir = attachments;
    dirs.attachments_present = true;
  }
  const auto kind = harness_bash ? ccsandbox::v1::WorkspaceDispatch::KIND_HARNESS_BASH
                                 : ccsandbox::v1::WorkspaceDispatch::KIND_OVERLAY;
  absl::StatusOr<ccsandbox::policy::DispatchBinds> binds =
      ccsandbox::policy::PlanDispatchBinds(dirs, kind, harness_bash ? workdir : "");
  if (!binds.ok()) {
    FUZZ_CHECK(harness_bash && binds.status().code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(absl::StartsWith(binds.status().message(), "workdir: "));
    return 0;
  }
  const std::string sibling_dir = absl::StrCat(conv, "/agents/", sibling);
  FUZZ_CHECK(binds->bind_mounts.size() >= 1 && binds->bind_mounts.size() <= 4);
  for (const ccsandbox::v1::SandboxBindMount& bind : binds->bind_mounts) {
    const std::string& host = bind.host_path();
    FUZZ_CHECK(host == bind.guest_path() && ReferenceNormalizedAbsolute(host));
    FUZZ_CHECK(!IsUnderOrEqual(host, sibling_dir) && !IsUnderOrEqual(conv, host));
    const bool attached = dirs.attachments_present && host == dirs.attachments_dir;
    FUZZ_CHECK(attached ||
               (IsUnderOrEqual(host, data_dir) &&
                ccsandbox::workspace::IsBindableBelowDataDir(host.substr(data_dir.size() + 1))));
    FUZZ_CHECK(IsUnderOrEqual(host, dirs.agent_workdir) ||
               IsUnderOrEqual(host, dirs.agent_config_dir) ||
               (dirs.repos_present && IsUnderOrEqual(host, dirs.repos_dir)) || attached);
    if (host == dirs.agent_config_dir || attached) FUZZ_CHECK(bind.read_only());
    bool rooted = false;
    for (const ccsandbox::v1::ConfinementRoot& root : binds->confinement_roots) {
      rooted = rooted || (root.path() == host && root.writable() == !bind.read_only());
    }
    FUZZ_CHECK(rooted);
  }
  bool workdir_writable = false;
  for (const ccsandbox::v1::ConfinementRoot& root : binds->confinement_roots) {
    FUZZ_CHECK(!IsUnderOrEqual(root.path(), sibling_dir));
    workdir_writable =
        workdir_writable || (root.writable() && IsUnderOrEqual(binds->workdir, root.path()));
  }
  FUZZ_CHECK(workdir_writable);
  if (harness_bash) {
    FUZZ_CHECK(binds->bind_mounts.size() == 1 && binds->workdir == workdir);
  } else {
    FUZZ_CHECK(binds->workdir == dirs.agent_workdir);
  }
  return 0;
}
