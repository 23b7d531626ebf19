// The only window policy/ has onto the file system: what kind of thing a path is.
// The launcher passes the real one; tests build any tree they like.
#ifndef CCSANDBOX_POLICY_HOST_VIEW_H_
#define CCSANDBOX_POLICY_HOST_VIEW_H_

#include <string>

namespace ccsandbox::policy {

class HostView {
 public:
  enum class Kind { kMissing, kDirectory, kFile, kSymlink };
  virtual ~HostView() = default;
  // lstat-like: a symlink is reported as kSymlink, not followed.
  virtual Kind KindOf(const std::string& path) const = 0;
  // The link's target as stored; empty when `path` is not a symlink.
  virtual std::string LinkTarget(const std::string& path) const = 0;
};

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_HOST_VIEW_H_
