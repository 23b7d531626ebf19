// The guest's root as the host asks the agent to build it (docs/microvm.md, "The guest's
// root"): the payload of the kSetup frame. An ordered list of steps the agent applies under
// /sysroot, then every run is chrooted there. Plain C++ (no absl): the static agent decodes it.
// The decoder fails closed like the frames: anything but an exactly valid payload is refused.
#ifndef CCSANDBOX_BROKER_MICROVM_GUEST_SETUP_H_
#define CCSANDBOX_BROKER_MICROVM_GUEST_SETUP_H_

#include <string>
#include <vector>

namespace ccsandbox::broker::microvm {

enum class SetupStep : char {
  kShare = 's',          // mount the 9p share tagged `arg` at `path`, writable
  kShareReadOnly = 'r',  // the same, read-only
  kShareCached = 'c',    // read-only and cached by the guest (host changes may show late): the
                         // system directories, whose lookups dominate a program's start
  kSymlink = 'l',        // a symlink at `path` pointing to `arg`
  kBase = 'b',           // /proc (its /proc/sys read-only), a minimal /dev, a private /tmp
  kMaskDir = 'd',        // hide a directory: an empty read-only tmpfs over it
  kMaskFile = 'f',       // hide a file: an empty read-only file over it
  kPin = 'p',            // bind `path` onto itself (recursively): it cannot be renamed away
  kReadOnly = 'w',       // bind `path` onto itself, remounted read-only (deny-write)
};

struct GuestStep {
  SetupStep step;
  std::string path;  // in the guest, absolute, normalised; "/" only for kBase
  std::string arg;   // kShare*: the mount tag; kSymlink: the target; otherwise empty
};

struct GuestSetup {
  std::vector<GuestStep> steps;  // applied in order; exactly one kBase
  std::string workdir;           // a run's directory when its request names none; "" = "/"
};

// The longest 9p mount tag the kernel and qemu accept.
inline constexpr size_t kMaxMountTag = 31;

// Absolute, no empty, "." or ".." component, no trailing slash, no NUL: a path the agent mounts
// on must be the path it names, under /sysroot.
bool IsNormalAbsolutePath(const std::string& path);

std::string EncodeSetup(const GuestSetup& setup);
// False (and why in `error`) unless `payload` is exactly a valid setup.
bool DecodeSetup(const std::string& payload, GuestSetup* setup, std::string* error);

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_GUEST_SETUP_H_
