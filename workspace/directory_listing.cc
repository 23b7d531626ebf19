#include "workspace/directory_listing.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/unique_fd.h"

namespace ccsandbox::workspace {
namespace {

struct DirCloser {
  void operator()(DIR* dir) const { closedir(dir); }
};

}  // namespace

absl::StatusOr<std::vector<std::string>> ListDirectory(int dir_fd) {
  // fdopendir takes the fd it is given: a duplicate (same flags, O_NOATIME included; the
  // shared offset is rewound, and nothing else reads through `dir_fd`).
  UniqueFd own(fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
  if (!own.valid()) return absl::ErrnoToStatus(errno, "dup");
  std::unique_ptr<DIR, DirCloser> stream(fdopendir(own.get()));
  if (stream == nullptr) return absl::ErrnoToStatus(errno, "fdopendir");
  own.Release();
  rewinddir(stream.get());
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = readdir(stream.get())) {
    const absl::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
    errno = 0;
  }
  if (errno != 0) return absl::ErrnoToStatus(errno, "readdir");
  return names;
}

}  // namespace ccsandbox::workspace
