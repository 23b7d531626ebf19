// The name of a file system type as an operator knows it ("xfs", "btrfs", "ext4", "tmpfs"),
// from statfs's f_type, for messages that tell them which volume lacks a feature.
//
//   absl::StatusOr<std::string> type = FileSystemTypeOf("/var/lib/ccsandbox");  // "ext4"
#ifndef CCSANDBOX_WORKSPACE_FILE_SYSTEM_TYPE_H_
#define CCSANDBOX_WORKSPACE_FILE_SYSTEM_TYPE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace ccsandbox::workspace {

// "xfs", "btrfs", ...; "ext4" for the ext2/3/4 magic; "type 0x…" for one not in the table.
std::string FileSystemTypeName(uint64_t f_type);

// The type name of the file system holding `path` (statfs), or the errno's status.
absl::StatusOr<std::string> FileSystemTypeOf(const std::string& path);

}  // namespace ccsandbox::workspace

#endif  // CCSANDBOX_WORKSPACE_FILE_SYSTEM_TYPE_H_
