// Test support: a git repository of generated source-like files, the same every time for a
// given shape, for the clone tests and the worktree benchmark; and git run on it with a fixed
// identity and no host configuration.
//
//   SampleShape shape;  shape.files = 2000;
//   ASSERT_OK(MakeSampleRepository(volume->path() + "/repo", shape));
//   Git(volume->path() + "/repo", {"status", "--porcelain"});
#ifndef CCSANDBOX_WORKSPACE_SAMPLE_REPOSITORY_H_
#define CCSANDBOX_WORKSPACE_SAMPLE_REPOSITORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ccsandbox::workspace::testing {

struct SampleShape {
  int files = 2000;
  int files_per_directory = 40;
  // Sizes between these: log-uniform (most files small, a few large, as in real trees), or
  // uniform.
  uint64_t min_bytes = 1024;
  uint64_t max_bytes = 64 * 1024;
  bool log_uniform = true;
  uint32_t seed = 1;
  // `git gc` after the commit: the objects in one pack, as in a fresh clone, instead of a loose
  // file per object.
  bool pack = false;
};

struct SampleRepository {
  uint64_t files = 0;  // the generated files (git's own not counted)
  uint64_t bytes = 0;  // their total size
};

// Creates `root` (its parent must exist), writes the shape's files as text in nested
// directories (up to four levels: src/gN/dN[/deep/er]/fN.txt), then `git init` + add + commit
// on branch main (+ `git gc` when asked).
absl::StatusOr<SampleRepository> MakeSampleRepository(const std::string& root,
                                                      const SampleShape& shape);

// `git -C dir ARGS`, author and committer fixed, the host's and the user's git config ignored,
// no automatic gc; its stdout, or an error with its stderr.
absl::StatusOr<std::string> Git(const std::string& dir, const std::vector<std::string>& args);

}  // namespace ccsandbox::workspace::testing

#endif  // CCSANDBOX_WORKSPACE_SAMPLE_REPOSITORY_H_
