#include "workspace/git_checkout.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "base/unique_fd.h"

namespace ccsandbox::workspace {
namespace {

// A .git or commondir file is one short line; anything longer is not git's.
constexpr size_t kMaxPointerFile = 4096;

std::optional<std::string> RealPath(const std::string& path) {
  std::unique_ptr<char, decltype(&free)> real(realpath(path.c_str(), nullptr), &free);
  if (real == nullptr) return std::nullopt;
  return std::string(real.get());
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// HEAD as git writes it: a regular file (or the symlink of very old repositories).
bool HasHead(const std::string& dir) {
  struct stat st;
  return lstat((dir + "/HEAD").c_str(), &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode));
}

// The one line of a pointer file (`.git`, `commondir`), without its line end; nullopt when it is
// not a small regular file.
std::optional<std::string> ReadPointerFile(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (!fd.valid() || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size > static_cast<off_t>(kMaxPointerFile)) {
    return std::nullopt;
  }
  std::string text(kMaxPointerFile + 1, '\0');
  size_t have = 0;
  while (have < text.size()) {
    const ssize_t n = read(fd.get(), text.data() + have, text.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  if (have > kMaxPointerFile) return std::nullopt;
  text.resize(have);
  return std::string(absl::StripTrailingAsciiWhitespace(text));
}

}  // namespace

absl::StatusOr<GitCheckout> InspectCheckout(absl::string_view field, const std::string& path) {
  if (absl::Status normal = CheckNormalizedAbsolute(field, path); !normal.ok()) return normal;
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": '", path, "' ", why));
  };
  const std::optional<std::string> root = RealPath(path);
  if (!root.has_value()) {
    return errno == ENOENT ? bad("does not exist")
                           : bad(absl::StrCat("cannot be resolved: ", strerror(errno)));
  }
  struct stat root_st;
  if (stat(root->c_str(), &root_st) != 0 || !S_ISDIR(root_st.st_mode)) {
    return bad("is not a directory, so not a git checkout");
  }
  GitCheckout checkout;
  checkout.root = *root;
  const std::string dot_git = *root + "/.git";
  struct stat st;
  if (lstat(dot_git.c_str(), &st) != 0) {
    if (errno != ENOENT) return bad(absl::StrCat("has an unreadable .git: ", strerror(errno)));
    if (HasHead(*root) && IsDirectory(*root + "/objects")) {
      return bad("is a bare repository, not a checkout: register a working tree (it has .git)");
    }
    return bad("is not a git checkout: it has no .git");
  }
  if (S_ISLNK(st.st_mode)) {
    return bad("is not a git checkout we clone: its .git is a symlink");
  }
  if (S_ISDIR(st.st_mode)) {
    if (!HasHead(dot_git)) return bad("is not a git checkout: its .git directory has no HEAD");
    checkout.kind = GitCheckout::Kind::kMain;
    checkout.git_dir = dot_git;
    checkout.common_dir = dot_git;
    return checkout;
  }
  const std::optional<std::string> pointer = ReadPointerFile(dot_git);
  constexpr absl::string_view kGitdir = "gitdir: ";
  if (!pointer.has_value() || !absl::StartsWith(*pointer, kGitdir) ||
      pointer->size() == kGitdir.size() || pointer->find('\n') != std::string::npos) {
    return bad("is not a git checkout: its .git is neither a directory nor a \"gitdir: \" file");
  }
  std::string target = pointer->substr(kGitdir.size());
  if (target[0] != '/') target = *root + "/" + target;
  const std::optional<std::string> git_dir = RealPath(target);
  if (!git_dir.has_value() || !IsDirectory(*git_dir) || !HasHead(*git_dir)) {
    return bad(absl::StrCat("is not a git checkout: its .git points at '", target,
                            "', which is not a git directory (no HEAD)"));
  }
  checkout.kind = GitCheckout::Kind::kLinkedWorktree;
  checkout.git_dir = *git_dir;
  checkout.common_dir = *git_dir;
  const std::string commondir_file = *git_dir + "/commondir";
  if (lstat(commondir_file.c_str(), &st) == 0) {
    const std::optional<std::string> common = ReadPointerFile(commondir_file);
    if (!common.has_value() || common->empty() || common->find('\n') != std::string::npos) {
      return bad(absl::StrCat("is not a git checkout: '", commondir_file, "' is not git's"));
    }
    const std::string common_target = (*common)[0] == '/' ? *common : *git_dir + "/" + *common;
    const std::optional<std::string> common_dir = RealPath(common_target);
    if (!common_dir.has_value() || !IsDirectory(*common_dir + "/objects")) {
      return bad(absl::StrCat("is not a git checkout: its common directory '", common_target,
                              "' is not a repository (no objects)"));
    }
    checkout.common_dir = *common_dir;
  }
  // git's safe.directory rule: a .git file or commondir pointing into someone else's repository
  // would have a root broker clone what the registering user cannot read.
  for (const std::string* dir : {&checkout.git_dir, &checkout.common_dir}) {
    struct stat dir_st;
    if (stat(dir->c_str(), &dir_st) != 0 || dir_st.st_uid != root_st.st_uid) {
      return bad(absl::StrCat("is not a git checkout we clone: its git directory '", *dir,
                              "' is not owned by the working tree's owner (uid ", root_st.st_uid,
                              ")"));
    }
  }
  return checkout;
}

}  // namespace ccsandbox::workspace
