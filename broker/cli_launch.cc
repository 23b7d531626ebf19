#include "broker/cli_launch.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "broker/cli_spec.h"
#include "policy/plan/input_limits.h"

namespace ccsandbox::broker {

absl::StatusOr<std::string> ResolveWorkdir(const std::string& flag) {
  char resolved[PATH_MAX];
  if (flag.empty()) {
    if (getcwd(resolved, sizeof(resolved)) == nullptr) {
      return absl::FailedPreconditionError("cannot read the current directory");
    }
    return std::string(resolved);
  }
  if (realpath(flag.c_str(), resolved) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--workdir: '", flag, "' does not exist"));
  }
  return std::string(resolved);
}

std::string NewSessionId() {
  std::random_device rd;
  return absl::StrFormat("cli-%d-%08x", getpid(), rd());
}

absl::StatusOr<v1::LaunchRequest> BuildLaunchRequest(const LaunchFlags& flags,
                                                     const std::string& workdir) {
  v1::LaunchRequest launch;
  if (flags.spec_file.empty()) {
    *launch.mutable_spec() = DefaultSpec(workdir, NewSessionId());
  } else {
    absl::StatusOr<v1::SandboxSpec> spec = LoadSpecFile(flags.spec_file);
    if (!spec.ok()) return spec.status();
    *launch.mutable_spec() = *std::move(spec);
    if (launch.spec().session_id().empty()) {
      launch.mutable_spec()->set_session_id(NewSessionId());
    }
  }
  launch.set_backend(flags.backend);
  if (flags.no_filename_denies) {
    launch.mutable_spec()->mutable_write_deny_patterns()->clear_patterns();
  }
  if (absl::Status valid = policy::CheckSpecLimits(launch.spec()); !valid.ok()) return valid;
  return launch;
}

std::string LaunchNotices(const v1::SandboxHandle& handle) {
  std::string notices;
  const auto& fields = handle.details().fields();
  if (handle.filename_denies_weakened()) {
    auto filenames = fields.find("filenamePolicy");
    absl::StrAppend(&notices, "sandboxctl: filename-pattern denies ",
                    filenames == fields.end() ? "WEAKENED" : filenames->second.string_value(),
                    "\n");
  }
  if (handle.backend() != v1::SANDBOX_BACKEND_NATIVE &&
      handle.backend() != v1::SANDBOX_BACKEND_MICROVM) {
    auto note = fields.find("backendNote");
    absl::StrAppend(&notices, "sandboxctl: running UNSANDBOXED (",
                    note == fields.end() ? "backend none" : note->second.string_value(), ")\n");
  }
  return notices;
}

absl::StatusOr<v1::SandboxHandle> LaunchSession(v1::SandboxBroker::Stub& stub,
                                                const v1::LaunchRequest& launch, bool json) {
  v1::SandboxHandle handle;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::Status status = stub.Launch(&ctx, launch, &handle);
  if (!status.ok()) return absl::UnavailableError(status.error_message());
  if (!json) std::cerr << LaunchNotices(handle) << std::flush;
  return handle;
}

}  // namespace ccsandbox::broker
