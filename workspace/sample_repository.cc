#include "workspace/sample_repository.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "tests/run_tool.h"

namespace ccsandbox::workspace::testing {
namespace {

// Text to slice files from: lines of identifiers, so git's zlib compresses it like source code.
std::string TextPool(std::mt19937& random) {
  static constexpr const char* kWords[] = {
      "absl",  "status",  "return",    "const",   "std::string", "int",   "if",     "for",
      "while", "auto",    "namespace", "class",   "struct",      "void",  "bool",   "true",
      "false", "nullptr", "template",  "value",   "index",       "count", "buffer", "path",
      "file",  "error",   "result",    "options", "=",           "==",    "!=",     "+",
      "(",     ")",       "{",         "}",       ";",           "<<",    "->",     "::",
      "0",     "1",       "42",        "size_t"};
  std::uniform_int_distribution<size_t> word(0, std::size(kWords) - 1);
  std::uniform_int_distribution<int> line_words(3, 12);
  std::string pool;
  pool.reserve((1 << 20) + 256);
  while (pool.size() < (1 << 20)) {
    pool.append(random() % 4 == 0 ? "  " : "    ");
    for (int i = line_words(random); i > 0; --i) absl::StrAppend(&pool, kWords[word(random)], " ");
    pool.back() = '\n';
  }
  return pool;
}

absl::Status MakeDirectories(const std::string& root, const std::string& relative) {
  std::string path = root;
  size_t start = 0;
  while (start < relative.size()) {
    size_t slash = relative.find('/', start);
    if (slash == std::string::npos) slash = relative.size();
    path = absl::StrCat(root, "/", relative.substr(0, slash));
    if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::ErrnoToStatus(errno, absl::StrCat("mkdir ", path));
    }
    start = slash + 1;
  }
  return absl::OkStatus();
}

absl::Status WriteFile(const std::string& path, absl::string_view header, absl::string_view body) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return absl::ErrnoToStatus(errno, absl::StrCat("create ", path));
  for (absl::string_view part : {header, body}) {
    while (!part.empty()) {
      const ssize_t n = write(fd.get(), part.data(), part.size());
      if (n < 0) return absl::ErrnoToStatus(errno, absl::StrCat("write ", path));
      part.remove_prefix(static_cast<size_t>(n));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> Git(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {
      "env", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=Clone Test",
      "GIT_AUTHOR_EMAIL=clone-test@example.com", "GIT_COMMITTER_NAME=Clone Test",
      "GIT_COMMITTER_EMAIL=clone-test@example.com",
      // No gc in the background, changing a repository under a test.
      "GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=gc.auto", "GIT_CONFIG_VALUE_0=0",
      "GIT_CONFIG_KEY_1=maintenance.auto", "GIT_CONFIG_VALUE_1=false", "git", "-C", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  return ccsandbox::testing::RunTool(argv);
}

absl::StatusOr<SampleRepository> MakeSampleRepository(const std::string& root,
                                                      const SampleShape& shape) {
  if (mkdir(root.c_str(), 0755) != 0) return absl::ErrnoToStatus(errno, "mkdir " + root);
  std::mt19937 random(shape.seed);
  const std::string pool = TextPool(random);
  const double low = static_cast<double>(shape.min_bytes);
  const double high = static_cast<double>(shape.max_bytes);
  std::uniform_real_distribution<double> log_size(std::log(low), std::log(high));
  std::uniform_real_distribution<double> linear_size(low, high);
  SampleRepository made;
  for (int i = 0; i < shape.files; ++i) {
    const int k = i / std::max(1, shape.files_per_directory);
    const std::string dir = absl::StrCat("src/g", k % 5, "/d", k, k % 3 == 0 ? "/deep/er" : "");
    if (absl::Status dirs = MakeDirectories(root, dir); !dirs.ok()) return dirs;
    const std::string header = absl::StrCat("// file ", i, " of sample ", shape.seed, "\n");
    const size_t size =
        static_cast<size_t>(shape.log_uniform ? std::exp(log_size(random)) : linear_size(random));
    const size_t body = size > header.size() ? size - header.size() : 0;
    const size_t offset = random() % (pool.size() - std::min(body, pool.size() - 1));
    absl::string_view slice = absl::string_view(pool).substr(offset, body);
    if (absl::Status written =
            WriteFile(absl::StrCat(root, "/", dir, "/f", i, ".txt"), header, slice);
        !written.ok()) {
      return written;
    }
    ++made.files;
    made.bytes += header.size() + slice.size();
  }
  for (const std::vector<std::string>& args : {std::vector<std::string>{"init", "-q", "-b", "main"},
                                               {"add", "-A"},
                                               {"commit", "-q", "-m", "sample"}}) {
    if (absl::StatusOr<std::string> ran = Git(root, args); !ran.ok()) return ran.status();
  }
  if (shape.pack) {
    if (absl::StatusOr<std::string> ran = Git(root, {"gc", "-q"}); !ran.ok()) return ran.status();
  }
  return made;
}

}  // namespace ccsandbox::workspace::testing
