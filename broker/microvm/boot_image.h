// The initramfs a QEMU guest boots: the session image as built (gzip'd cpio) followed by a
// second, uncompressed cpio newc archive holding the agent as /ccsandbox-agent. The kernel
// unpacks concatenated archives in order; each must start 4-byte aligned.
#ifndef CCSANDBOX_BROKER_MICROVM_BOOT_IMAGE_H_
#define CCSANDBOX_BROKER_MICROVM_BOOT_IMAGE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::broker::microvm {

// A cpio newc archive of one regular file `name` (mode 0755, root's) and the trailer.
std::string CpioWithOneFile(absl::string_view name, absl::string_view contents);

// Writes `image` + padding + CpioWithOneFile("ccsandbox-agent", agent's bytes) to `out`.
absl::Status WriteBootImage(const std::string& image, const std::string& agent,
                            const std::string& out);

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_BOOT_IMAGE_H_
