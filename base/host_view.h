// The only windows policy/ has onto the file system: what kind of thing a path is (HostView)
// and where it resolves (PathResolver). base/real_host_view.h is the real one; tests build any
// tree they like.
#ifndef CCSANDBOX_BASE_HOST_VIEW_H_
#define CCSANDBOX_BASE_HOST_VIEW_H_

#include <optional>
#include <string>

namespace ccsandbox {

class HostView {
 public:
  enum class Kind { kMissing, kDirectory, kFile, kSymlink };
  virtual ~HostView() = default;
  // lstat-like: a symlink is reported as kSymlink, not followed.
  virtual Kind KindOf(const std::string& path) const = 0;
  // The link's target as stored; empty when `path` is not a symlink.
  virtual std::string LinkTarget(const std::string& path) const = 0;
};

class PathResolver {
 public:
  virtual ~PathResolver() = default;
  // realpath(3)-like: every symlink resolved; nullopt when the path does not resolve.
  virtual std::optional<std::string> Resolve(const std::string& path) const = 0;
};

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_HOST_VIEW_H_
