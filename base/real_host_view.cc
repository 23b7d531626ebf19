#include "base/real_host_view.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ccsandbox {

HostView::Kind RealHostView::KindOf(const std::string& path) const {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return Kind::kMissing;
  if (S_ISLNK(st.st_mode)) return Kind::kSymlink;
  if (S_ISDIR(st.st_mode)) return Kind::kDirectory;
  return Kind::kFile;
}

std::string RealHostView::LinkTarget(const std::string& path) const {
  char buf[PATH_MAX];
  ssize_t n = readlink(path.c_str(), buf, sizeof(buf));
  return n > 0 ? std::string(buf, n) : std::string();
}

std::optional<std::string> RealPathResolver::Resolve(const std::string& path) const {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf) == nullptr) return std::nullopt;
  return std::string(buf);
}

}  // namespace ccsandbox
