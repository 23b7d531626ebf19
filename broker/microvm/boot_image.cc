#include "broker/microvm/boot_image.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ccsandbox::broker::microvm {
namespace {

void Pad4(std::string* out) { out->append((4 - out->size() % 4) % 4, '\0'); }

void AppendEntry(std::string* out, absl::string_view name, uint32_t mode,
                 absl::string_view contents) {
  // newc: magic, then 13 fields of 8 hex digits: ino mode uid gid nlink mtime filesize
  // devmajor devminor rdevmajor rdevminor namesize (with its NUL) check.
  absl::StrAppend(out, "070701",
                  absl::StrFormat("%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", 1, mode,
                                  0, 0, 1, 0, contents.size(), 0, 0, 0, 0, name.size() + 1, 0));
  absl::StrAppend(out, name, absl::string_view("\0", 1));
  Pad4(out);
  absl::StrAppend(out, contents);
  Pad4(out);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::FailedPreconditionError(absl::StrCat("cannot read ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

std::string CpioWithOneFile(absl::string_view name, absl::string_view contents) {
  std::string out;
  AppendEntry(&out, name, 0100755, contents);
  AppendEntry(&out, "TRAILER!!!", 0, "");
  return out;
}

absl::Status WriteBootImage(const std::string& image, const std::string& agent,
                            const std::string& out) {
  absl::StatusOr<std::string> base = ReadFile(image);
  if (!base.ok()) return base.status();
  absl::StatusOr<std::string> binary = ReadFile(agent);
  if (!binary.ok()) return binary.status();
  Pad4(&*base);
  std::ofstream file(out, std::ios::binary | std::ios::trunc);
  file << *base << CpioWithOneFile("ccsandbox-agent", *binary);
  file.close();
  if (!file) return absl::InternalError(absl::StrCat("cannot write ", out));
  return absl::OkStatus();
}

}  // namespace ccsandbox::broker::microvm
