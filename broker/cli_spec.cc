#include "broker/cli_spec.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

namespace ccsandbox::broker {

absl::StatusOr<v1::SandboxSpec> ParseSpecJson(const std::string& source, const std::string& json) {
  v1::SandboxSpec spec;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(json, &spec, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not a valid SandboxSpec: ", status.message().as_string()));
  }
  return spec;
}

absl::StatusOr<v1::SandboxSpec> LoadSpecFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read the spec file"));
  std::stringstream text;
  text << in.rdbuf();
  return ParseSpecJson(path, text.str());
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
