// libFuzzer target: the readers of /proc/PID/status — the create guard's ParseTraceeStatus
// (launcher/create_guard/tracee.h: a trapped thread's fs ids, groups, umask and pids, read with
// one bounded pread) and the daemons' StatusShowsNestedPidNamespace (base/peer_check.h). The
// process described is the sandbox's: it names itself (comm) and picks its umask.
// Input: byte 0 bit 0 clear — the rest is any text; set — a status file written as the kernel
// writes it, its fields read with FuzzedDataProvider, and a cut anywhere (what a bounded read
// of a larger file gives). Invariants: never crash; a kernel-written status reads back exactly
// the ids, groups, umask and innermost pids it holds; the nested-namespace test says "nested"
// exactly when NSpid has more than one pid, and for any text without an NSpid line; a cut file
// reads back the same identity or is refused — never a different one.
#include <fuzzer/FuzzedDataProvider.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/peer_check.h"
#include "launcher/create_guard/tracee.h"
#include "tests/fuzz/fuzz_check.h"

using ccsandbox::launcher::ParseTraceeStatus;
using ccsandbox::launcher::TraceeIdentity;

namespace {

bool Same(const TraceeIdentity& a, const TraceeIdentity& b) {
  return a.fsuid == b.fsuid && a.fsgid == b.fsgid && a.groups == b.groups && a.umask == b.umask &&
         a.ns_tgid == b.ns_tgid && a.ns_tid == b.ns_tid;
}

// The comm as fs/proc/array.c prints it: "\n" and "\\" escaped, the rest as it is.
std::string EscapedComm(const std::string& comm) {
  std::string out;
  for (char c : comm) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c != '\0') {
      out += c;
    }
  }
  return out;
}

std::vector<uint32_t> Pids(FuzzedDataProvider& in) {
  std::vector<uint32_t> pids(in.ConsumeIntegralInRange<size_t>(1, 4));
  for (uint32_t& pid : pids) pid = in.ConsumeIntegralInRange<uint32_t>(1, 4194304);
  return pids;
}

void Structured(FuzzedDataProvider& in) {
  const std::string comm = in.ConsumeRandomLengthString(15);
  const uint32_t umask = in.ConsumeIntegralInRange<uint32_t>(0, 0777);
  const uint32_t uid[4] = {in.ConsumeIntegral<uint32_t>(), in.ConsumeIntegral<uint32_t>(),
                           in.ConsumeIntegral<uint32_t>(), in.ConsumeIntegral<uint32_t>()};
  const uint32_t gid[4] = {in.ConsumeIntegral<uint32_t>(), in.ConsumeIntegral<uint32_t>(),
                           in.ConsumeIntegral<uint32_t>(), in.ConsumeIntegral<uint32_t>()};
  std::vector<gid_t> groups(in.ConsumeIntegralInRange<size_t>(0, 1200));
  for (gid_t& g : groups) g = in.ConsumeIntegral<uint32_t>();
  const std::vector<uint32_t> tgids = Pids(in);
  std::vector<uint32_t> tids = Pids(in);
  tids.resize(tgids.size(), tids.back());  // one pid per namespace level, like NStgid
  const size_t cut = in.ConsumeIntegral<size_t>();

  std::string status = absl::StrCat("Name:\t", EscapedComm(comm), "\n");
  absl::StrAppend(&status, "Umask:\t", absl::StrFormat("%04o", umask), "\n");
  absl::StrAppend(&status, "State:\tS (sleeping)\nTgid:\t", tgids[0], "\nNgid:\t0\nPid:\t", tids[0],
                  "\nPPid:\t1\nTracerPid:\t0\n");
  absl::StrAppend(&status, "Uid:\t", absl::StrJoin(uid, "\t"), "\n");
  absl::StrAppend(&status, "Gid:\t", absl::StrJoin(gid, "\t"), "\n");
  absl::StrAppend(&status, "FDSize:\t64\nGroups:\t", absl::StrJoin(groups, " "), " \n");
  absl::StrAppend(&status, "NStgid:\t", absl::StrJoin(tgids, "\t"), "\n");
  absl::StrAppend(&status, "NSpid:\t", absl::StrJoin(tids, "\t"), "\n");
  absl::StrAppend(&status, "NSpgid:\t", tgids.back(), "\nNSsid:\t", tgids.back(),
                  "\nVmPeak:\t    3060 kB\nThreads:\t1\nSeccomp:\t2\n");

  TraceeIdentity read;
  FUZZ_CHECK(ParseTraceeStatus(status, &read));
  TraceeIdentity want;
  want.fsuid = uid[3];
  want.fsgid = gid[3];
  want.groups = groups;
  want.umask = umask;
  want.ns_tgid = static_cast<pid_t>(tgids.back());
  want.ns_tid = static_cast<pid_t>(tids.back());
  FUZZ_CHECK(Same(read, want));
  FUZZ_CHECK(ccsandbox::StatusShowsNestedPidNamespace(status) == (tids.size() != 1));

  const std::string prefix = status.substr(0, cut % (status.size() + 1));
  TraceeIdentity partial;
  if (ParseTraceeStatus(prefix, &partial) && !Same(partial, want)) {
    std::fprintf(
        stderr, "a status cut after %zu of %zu bytes read as another identity; it ends: %s\n",
        prefix.size(), status.size(),
        absl::CHexEscape(prefix.substr(prefix.size() - std::min<size_t>(prefix.size(), 40)))
            .c_str());
    FUZZ_CHECK(Same(partial, want));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] & 1) {
    FuzzedDataProvider in(data + 1, size - 1);
    Structured(in);
    return 0;
  }
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  TraceeIdentity identity;
  (void)ParseTraceeStatus(text, &identity);
  if (text.find("NSpid:") == std::string::npos) {
    FUZZ_CHECK(ccsandbox::StatusShowsNestedPidNamespace(text));
  }
  return 0;
}
