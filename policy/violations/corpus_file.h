// The violation tests' corpus files: tab-separated rows, '#' comments, read from the test's
// runfiles (or the working directory outside Bazel). Test-only.
#ifndef CCSANDBOX_POLICY_VIOLATIONS_CORPUS_FILE_H_
#define CCSANDBOX_POLICY_VIOLATIONS_CORPUS_FILE_H_

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace ccsandbox::policy::testing {

struct CorpusRow {
  int line_number = 0;
  std::vector<std::string> fields;  // exactly `fields` of them; the last keeps its tabs
};

inline std::vector<CorpusRow> ReadCorpus(const std::string& repo_path, int fields) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  std::string path = repo_path;
  if (srcdir != nullptr && workspace != nullptr) {
    path = std::string(srcdir) + "/" + workspace + "/" + path;
  }
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::vector<CorpusRow> rows;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits('\t', fields - 1));
    EXPECT_EQ(f.size(), static_cast<size_t>(fields)) << path << ":" << n;
    if (f.size() == static_cast<size_t>(fields)) rows.push_back({n, std::move(f)});
  }
  return rows;
}

}  // namespace ccsandbox::policy::testing

#endif  // CCSANDBOX_POLICY_VIOLATIONS_CORPUS_FILE_H_
