// libFuzzer target: the daemons' flag-name rewriting (base/dashed_flags.h:
// --allowed-uids as well as --allowed_uids). Input: the arguments, separated by NUL bytes.
// Invariants: never crash; the program name, every value (after the first '='), every argument
// that is not a flag and everything from a bare "--" on are untouched; only '-' inside a flag's
// name becomes '_'; rewriting twice changes nothing more.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "base/dashed_flags.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args = absl::StrSplit(input, '\0');
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  const std::vector<std::string> out =
      ccsandbox::UnderscoreFlagNames(static_cast<int>(argv.size()), argv.data());
  // What absl sees as argv is NUL-terminated: compare with the C strings, not the split pieces.
  std::vector<std::string> in;
  for (char* a : argv) in.emplace_back(a);
  FUZZ_CHECK(out.size() == in.size());
  FUZZ_CHECK(out.empty() || out[0] == in[0]);
  bool after_separator = false;
  for (size_t i = 1; i < in.size(); ++i) {
    const std::string& before = in[i];
    const std::string& after = out[i];
    FUZZ_CHECK(before.size() == after.size());
    const bool flag = !after_separator && before.size() >= 3 && before[0] == '-';
    after_separator = after_separator || before == "--";
    const size_t name_start = flag ? (before[1] == '-' ? 2 : 1) : before.size();
    const size_t name_end = flag ? std::min(before.find('='), before.size()) : before.size();
    for (size_t j = 0; j < before.size(); ++j) {
      if (j >= name_start && j < name_end && before[j] == '-') {
        FUZZ_CHECK(after[j] == '_');
      } else {
        FUZZ_CHECK(after[j] == before[j]);
      }
    }
  }
  std::vector<std::string> copy = out;
  std::vector<char*> again_argv;
  for (std::string& a : copy) again_argv.push_back(a.data());
  FUZZ_CHECK(ccsandbox::UnderscoreFlagNames(static_cast<int>(again_argv.size()),
                                            again_argv.data()) == out);
  return 0;
}
