// The names in a directory open as an fd, read in one go (so the walk that uses them holds no
// directory stream while it descends: one fd per level, not two).
//
//   absl::StatusOr<std::vector<std::string>> names = ListDirectory(dir_fd);
#ifndef CCSANDBOX_WORKSPACE_DIRECTORY_LISTING_H_
#define CCSANDBOX_WORKSPACE_DIRECTORY_LISTING_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ccsandbox::workspace {

// Every name but "." and "..", in the directory's order; the errno's status on failure (the
// caller names the path). `dir_fd` stays open; its file offset (shared with the stream read
// through a duplicate) is rewound and then at the end.
absl::StatusOr<std::vector<std::string>> ListDirectory(int dir_fd);

}  // namespace ccsandbox::workspace

#endif  // CCSANDBOX_WORKSPACE_DIRECTORY_LISTING_H_
