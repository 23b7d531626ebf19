#include "broker/cli_spec.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "google/protobuf/util/json_util.h"
#include "policy/plan/input_limits.h"

namespace ccsandbox::broker {

absl::StatusOr<v1::SandboxSpec> ParseSpecJson(const std::string& source, const std::string& json) {
  v1::SandboxSpec spec;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(json, &spec, options);
  if (!status.ok()) {
    // Its first line says what is wrong; it can quote the input whole (an unknown key of any
    // length): bounded.
    const std::string message = status.message().as_string();
    return absl::InvalidArgumentError(absl::StrCat(
        source,
        ": not a valid SandboxSpec: ", policy::CutInput(message.substr(0, message.find('\n')))));
  }
  return spec;
}

absl::StatusOr<v1::SandboxSpec> LoadSpecFile(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot read the spec file: ", strerror(errno)));
  }
  // Read up to the limit only: a FIFO or device named by mistake (/dev/zero) ends in an error,
  // not in memory exhaustion.
  std::string text;
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t got = read(fd.get(), buffer, sizeof(buffer));
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": cannot read the spec file: ", strerror(errno)));
    }
    text.append(buffer, got);
    if (text.size() > kMaxSpecFileBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": more than ", kMaxSpecFileBytes, " bytes; not a spec file (see docs/limits.md)"));
    }
  }
  return ParseSpecJson(path, text);
}

v1::SandboxSpec DefaultSpec(const std::string& workdir, const std::string& session_id) {
  v1::SandboxSpec spec;
  spec.set_session_id(session_id);
  v1::SandboxBindMount* bind = spec.add_bind_mounts();
  bind->set_host_path(workdir);
  bind->set_guest_path(workdir);
  spec.set_guest_workdir(workdir);
  return spec;
}

}  // namespace ccsandbox::broker
