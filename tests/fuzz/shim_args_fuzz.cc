// libFuzzer target: the sandbox_shim's argument format (launcher/shim/shim_args.h). Input: the
// arguments, separated by NUL bytes. Invariants: never crash; an accepted line has only
// loopback bridges with absolute socket paths, normalised absolute guard dirs, a channel fd of
// at least 3 (or per-exec, in init mode only), guard dirs only with a guard, a command unless in
// init mode and none in it; rendering what was parsed and parsing it again gives the same
// arguments and the same command; a refused line says why, naming the argument.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "asio/ip/address.hpp"
#include "base/paths.h"
#include "launcher/shim/shim_args.h"
#include "tests/fuzz/fuzz_check.h"

using ccsandbox::launcher::BridgeRoute;
using ccsandbox::launcher::kPerExecGuardChannel;
using ccsandbox::launcher::ParseShimArgs;
using ccsandbox::launcher::RenderShimArgs;
using ccsandbox::launcher::ShimCommandLine;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> args = absl::StrSplit(input, '\0');
  absl::StatusOr<ShimCommandLine> line = ParseShimArgs(args);
  if (!line.ok()) {
    FUZZ_CHECK(line.status().code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(!line.status().message().empty());
    return 0;
  }
  const ccsandbox::launcher::ShimArgs& parsed = line->args;
  const bool init = parsed.init_fd >= 0;
  FUZZ_CHECK(parsed.init_fd == -1 || parsed.init_fd >= 3);
  for (const BridgeRoute& route : parsed.bridges) {
    asio::error_code error;
    const asio::ip::address address = asio::ip::make_address(route.listen_address, error);
    FUZZ_CHECK(!error && address.is_loopback());
    FUZZ_CHECK(!route.unix_path.empty() && route.unix_path[0] == '/');
  }
  const auto& guard = parsed.create_guard;
  FUZZ_CHECK(guard.channel_fd == -1 || guard.channel_fd >= 3 ||
             guard.channel_fd == kPerExecGuardChannel);
  FUZZ_CHECK(init == (guard.channel_fd == kPerExecGuardChannel) || guard.channel_fd == -1);
  if (guard.channel_fd == -1) FUZZ_CHECK(guard.free_dirs.empty() && guard.writable_dirs.empty());
  for (const auto* dirs : {&guard.free_dirs, &guard.writable_dirs, &guard.socket_dirs}) {
    for (const std::string& dir : *dirs) {
      FUZZ_CHECK(ccsandbox::CheckNormalizedAbsolute("dir", dir).ok());
    }
  }
  FUZZ_CHECK(line->command_start <= args.size());
  const std::vector<std::string> command(args.begin() + line->command_start, args.end());
  if (init) {
    FUZZ_CHECK(command.empty());
  } else {
    FUZZ_CHECK(!command.empty() && line->command_start >= 1 &&
               args[line->command_start - 1] == "--");
  }

  std::vector<std::string> rendered = RenderShimArgs(parsed);
  FUZZ_CHECK(init || (!rendered.empty() && rendered.back() == "--"));
  const size_t flags = rendered.size();
  rendered.insert(rendered.end(), command.begin(), command.end());
  absl::StatusOr<ShimCommandLine> again = ParseShimArgs(rendered);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->args == parsed);
  FUZZ_CHECK(again->command_start == flags);
  return 0;
}
