// Test-only: what the launcher/macos tests share — reading a pipe to its end, a corpus line of
// policy/violations/testdata/seatbelt_log_corpus.tsv rewritten to name a real pid, and an
// EventSink that records every event.
#ifndef CCSANDBOX_LAUNCHER_MACOS_MACOS_TEST_SUPPORT_H_
#define CCSANDBOX_LAUNCHER_MACOS_MACOS_TEST_SUPPORT_H_

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "launcher/run_supervisor.h"
#include "policy/violations/corpus_file.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::launcher::macos::testing {

inline std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

// The line of the corpus's first row with `verdict` and `action`, its denial naming `pid`
// (rows of verdict "-" are returned as they are).
inline std::string CorpusLine(const std::string& verdict, const std::string& action, int64_t pid) {
  for (const policy::testing::CorpusRow& row :
       policy::testing::ReadCorpus("policy/violations/testdata/seatbelt_log_corpus.tsv", 5)) {
    if (row.fields[0] != verdict || row.fields[1] != action) continue;
    if (verdict == "-") return row.fields[4];
    return absl::StrReplaceAll(row.fields[4], {{absl::StrCat("(", row.fields[3], ") deny("),
                                                absl::StrCat("(", pid, ") deny(")}});
  }
  ADD_FAILURE() << "no corpus row " << verdict << " " << action;
  return "";
}

class RecordingSink : public EventSink {
 public:
  bool Emit(const v1::SandboxEvent& e) override {
    absl::MutexLock lock(&mu_);
    events_.push_back(e);
    return true;
  }
  bool Cancelled() override { return false; }
  std::vector<v1::SandboxEvent> events() const {
    absl::MutexLock lock(&mu_);
    return events_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<v1::SandboxEvent> events_;
};

}  // namespace ccsandbox::launcher::macos::testing

#endif  // CCSANDBOX_LAUNCHER_MACOS_MACOS_TEST_SUPPORT_H_
