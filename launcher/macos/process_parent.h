// The parent of a live process, for attributing Seatbelt denials by pid tree
// (policy/violations/seatbelt_monitor.h): /proc/PID/stat on Linux (where the tests run),
// sysctl(KERN_PROC_PID)'s e_ppid on macOS (compiled only there: not built or run yet).
#ifndef CCSANDBOX_LAUNCHER_MACOS_PROCESS_PARENT_H_
#define CCSANDBOX_LAUNCHER_MACOS_PROCESS_PARENT_H_

#include <cstdint>
#include <optional>

namespace ccsandbox::launcher::macos {

// nullopt when `pid` does not exist (or has exited and been reaped).
std::optional<int64_t> ParentOf(int64_t pid);

}  // namespace ccsandbox::launcher::macos

#endif  // CCSANDBOX_LAUNCHER_MACOS_PROCESS_PARENT_H_
