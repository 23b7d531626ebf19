#include "launcher/create_guard/in_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/paths.h"
#include "base/unique_fd.h"
#include "launcher/create_guard/filter.h"
#include "launcher/create_guard/landlock.h"
#include "launcher/create_guard/notify_channel.h"

namespace ccsandbox::launcher {
namespace {

struct MountEntry {
  std::string root;
  std::string mount_point;
  bool read_write = false;
  std::string fs_type;
};

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(absl::string_view field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      int value = 0;
      bool octal = true;
      for (size_t j = 1; j <= 3; ++j) {
        const char c = field[i + j];
        if (c < '0' || c > '7') octal = false;
        value = value * 8 + (c - '0');
      }
      if (octal) {
        out.push_back(static_cast<char>(value));
        i += 3;
        continue;
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

std::vector<MountEntry> ParseMountInfo(absl::string_view text) {
  std::vector<MountEntry> entries;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    // id parent dev root mount_point options [optional...] - fs_type source
    // super_options
    size_t dash = 6;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (fields.size() < 6 || dash + 1 >= fields.size()) continue;
    MountEntry entry;
    entry.root = Unescape(fields[3]);
    entry.mount_point = Unescape(fields[4]);
    for (absl::string_view option : absl::StrSplit(fields[5], ',')) {
      if (option == "rw") entry.read_write = true;
    }
    entry.fs_type = std::string(fields[dash + 1]);
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace

absl::Status CheckFreeDirs(const std::vector<std::string>& free_dirs,
                           const std::vector<std::string>& writable_dirs,
                           absl::string_view mountinfo, bool allow_writable_beneath) {
  const std::vector<MountEntry> mounts = ParseMountInfo(mountinfo);
  for (const std::string& dir : free_dirs) {
    auto refuse = [&dir](absl::string_view why) {
      return absl::FailedPreconditionError(
          absl::StrCat("create guard: --free-create=", dir, " ", why,
                       "; the command could create any name there unchecked. "
                       "Fix the launcher's "
                       "FreeCreateDirs"));
    };
    for (const std::string& writable : writable_dirs) {
      if (IsUnderOrEqual(writable, dir) || IsUnderOrEqual(dir, writable)) {
        return refuse(absl::StrCat("overlaps the writable mount ", writable));
      }
    }
    bool mount_point = false;
    for (const MountEntry& mount : mounts) {
      if (mount.mount_point == dir) {
        if (mount.fs_type != "tmpfs" || mount.root != "/") {
          return refuse(absl::StrCat("is a ", mount.fs_type, " mount of ", mount.root,
                                     ", not the sandbox's own tmpfs"));
        }
        mount_point = true;
      } else if (!allow_writable_beneath && mount.read_write &&
                 IsUnderOrEqual(mount.mount_point, dir)) {
        return refuse(absl::StrCat("has the read-write mount ", mount.mount_point, " beneath it"));
      }
    }
    if (!mount_point) return refuse("is not a tmpfs mount point");
  }
  return absl::OkStatus();
}

absl::Status ApplyCreateGuard(const CreateGuardShimConfig& config, const std::string* program) {
  if (config.channel_fd < 0) return absl::InvalidArgumentError("create guard: no channel fd");
  UniqueFd channel(config.channel_fd);
  fcntl(channel.get(), F_SETFD, FD_CLOEXEC);
  std::ifstream file("/proc/self/mountinfo");
  if (!file) return absl::InternalError("create guard: cannot read /proc/self/mountinfo");
  std::stringstream mountinfo;
  mountinfo << file.rdbuf();
  if (absl::Status ok = CheckFreeDirs(config.free_dirs, config.writable_dirs, mountinfo.str(),
                                      /*allow_writable_beneath=*/false);
      !ok.ok()) {
    return ok;
  }
  absl::StatusOr<std::string> built =
      program != nullptr ? absl::StatusOr<std::string>(*program) : CreateFilterProgram();
  if (!built.ok()) return built.status();
  // Socket dirs need only be the sandbox's own tmpfs: writable binds may lie beneath them.
  if (absl::Status ok = CheckFreeDirs(config.socket_dirs, {}, mountinfo.str(),
                                      /*allow_writable_beneath=*/true);
      !ok.ok()) {
    return ok;
  }
  if (absl::Status ok = RestrictCreationTo(config.free_dirs, config.socket_dirs); !ok.ok())
    return ok;
  absl::StatusOr<UniqueFd> notify = InstallCreateFilter(*built);
  if (!notify.ok()) return notify.status();
  return SendNotifyFd(channel.get(), notify->get());
}

}  // namespace ccsandbox::launcher
