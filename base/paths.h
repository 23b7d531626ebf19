// Lexical path rules shared by spec and plan validation. No file-system access.
#ifndef CCSANDBOX_BASE_PATHS_H_
#define CCSANDBOX_BASE_PATHS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ccsandbox {

// OK when `path` is absolute and normalised: starts with '/', no empty, "." or ".."
// components, no trailing '/', no NUL. Otherwise INVALID_ARGUMENT naming `field`.
absl::Status CheckNormalizedAbsolute(absl::string_view field, absl::string_view path);

// OK when `name` can be one directory name made from a client's id: 1 to 128 of
// [A-Za-z0-9._-], not starting with '.' (no "..", no hidden or staging names). Otherwise
// INVALID_ARGUMENT naming `field`.
absl::Status CheckPathComponent(absl::string_view field, absl::string_view name);

// True when `path` equals `root` or lies below it (both normalised absolute paths).
bool IsUnderOrEqual(absl::string_view path, absl::string_view root);

// The directory holding `path` (a normalised absolute path): "/a/b" -> "/a", "/a" -> "/",
// "/" -> "/".
std::string ParentPath(absl::string_view path);

// Number of components: "/" -> 0, "/a/b" -> 2.
int PathDepth(absl::string_view path);

// True when `path` contains a glob character ('*' or '?').
bool IsGlob(absl::string_view path);

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_PATHS_H_
