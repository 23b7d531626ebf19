#include "broker/microvm/unavailable_runtime.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker::microvm {
namespace {

TEST(UnavailableRuntime, AHostThatCannotBootNamesTheMissingPart) {
  v1::ProbeResult probe;
  probe.set_note("guest kernel /vm/vmlinuz: not found");
  absl::StatusOr<std::unique_ptr<Guest>> guest = MakeRuntime(probe)->Start(GuestStart{});
  EXPECT_EQ(guest.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(guest.status().message(), "guest kernel /vm/vmlinuz: not found"))
      << guest.status();
}

TEST(UnavailableRuntime, AHostThatCanBootIsStillNotGivenAPretendVm) {
  v1::ProbeResult probe;
  probe.set_available(true);
  probe.set_note("probe boot reached its marker with tcg in 1.8s");
  absl::StatusOr<std::unique_ptr<Guest>> guest = MakeRuntime(probe)->Start(GuestStart{});
  EXPECT_EQ(guest.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(guest.status().message(), "session runtime is not built yet"))
      << guest.status();
}

}  // namespace
}  // namespace ccsandbox::broker::microvm
