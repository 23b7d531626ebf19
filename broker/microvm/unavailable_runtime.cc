#include "broker/microvm/unavailable_runtime.h"

#include "absl/strings/str_cat.h"

namespace ccsandbox::broker::microvm {

absl::StatusOr<std::unique_ptr<Guest>> UnavailableRuntime::Start(const GuestStart&) {
  if (!probe_.available()) {
    return absl::FailedPreconditionError(
        absl::StrCat("backend: microvm requested but this host cannot boot a microVM (",
                     probe_.note().empty() ? "no microVM runtime was probed" : probe_.note(), ")"));
  }
  return absl::UnimplementedError(absl::StrCat(
      "backend: microvm: this host can boot a microVM (", probe_.note(),
      ") but the microVM session runtime is not built yet (issue 20); nothing was started, "
      "and an explicit microvm request never runs as native or none"));
}

std::unique_ptr<Runtime> MakeRuntime(const v1::ProbeResult& probe) {
  return std::make_unique<UnavailableRuntime>(probe);
}

}  // namespace ccsandbox::broker::microvm
