// HostView and PathResolver over the real file system (lstat, readlink, realpath).
#ifndef CCSANDBOX_LAUNCHER_REAL_HOST_VIEW_H_
#define CCSANDBOX_LAUNCHER_REAL_HOST_VIEW_H_

#include "policy/host_view.h"
#include "policy/path_spellings.h"

namespace ccsandbox::launcher {

class RealHostView : public policy::HostView {
 public:
  Kind KindOf(const std::string& path) const override;
  std::string LinkTarget(const std::string& path) const override;
};

// PathResolver over realpath(3).
class RealPathResolver : public policy::PathResolver {
 public:
  std::optional<std::string> Resolve(const std::string& path) const override;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_REAL_HOST_VIEW_H_
