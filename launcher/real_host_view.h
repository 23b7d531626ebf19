// HostView over the real file system (lstat / readlink).
#ifndef CCSANDBOX_LAUNCHER_REAL_HOST_VIEW_H_
#define CCSANDBOX_LAUNCHER_REAL_HOST_VIEW_H_

#include "policy/host_view.h"

namespace ccsandbox::launcher {

class RealHostView : public policy::HostView {
 public:
  Kind KindOf(const std::string& path) const override;
  std::string LinkTarget(const std::string& path) const override;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_REAL_HOST_VIEW_H_
