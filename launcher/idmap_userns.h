// A user namespace that maps one id — inside 0 to an unprivileged host uid/gid — used as the
// idmapping of a root caller's bind mounts (mount_setattr MOUNT_ATTR_IDMAP): through such a
// mount, files the host owns as root appear owned by the sandbox uid, and what the sandbox
// creates is owned by root on the host again, while the sandbox itself never is host root.
//
//   absl::StatusOr<UniqueFd> userns = MakeIdmapUserns(65530, 65530);  // once, at start-up
//   mount_attr attr{.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = userns->get()};
//
// Needs CAP_SETUID/CAP_SETGID (a root launcher). The namespace lives as long as the fd.
#ifndef CCSANDBOX_LAUNCHER_IDMAP_USERNS_H_
#define CCSANDBOX_LAUNCHER_IDMAP_USERNS_H_

#include <sys/types.h>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace ccsandbox::launcher {

absl::StatusOr<UniqueFd> MakeIdmapUserns(uid_t host_uid, gid_t host_gid);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_IDMAP_USERNS_H_
