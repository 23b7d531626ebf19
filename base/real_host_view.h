// HostView and PathResolver over the real file system (lstat, readlink, realpath).
#ifndef CCSANDBOX_BASE_REAL_HOST_VIEW_H_
#define CCSANDBOX_BASE_REAL_HOST_VIEW_H_

#include "base/host_view.h"

namespace ccsandbox {

class RealHostView : public HostView {
 public:
  Kind KindOf(const std::string& path) const override;
  std::string LinkTarget(const std::string& path) const override;
};

// PathResolver over realpath(3).
class RealPathResolver : public PathResolver {
 public:
  std::optional<std::string> Resolve(const std::string& path) const override;
};

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_REAL_HOST_VIEW_H_
