// The sandbox_shim's command line: the one place that writes and reads it. The launcher
// renders a run's ShimArgs into the bwrap argv; the shim parses its own argv back.
//
//   sandbox_shim [--bridge=127.0.0.1:PORT=/run/ccsandbox/http.sock ...]
//                [--create-guard=FD [--free-create=DIR ...] [--writable=DIR ...]
//                 [--free-sockets=DIR ...]] -- CMD [ARGS...]
//   sandbox_shim --init=FD [--bridge=...] [--create-guard=per-exec [--free-create=DIR ...] ...]
//
// The second form is a warm sandbox's init: no command; each Exec comes over FD (init.h), its
// create guard channel with it.
//
//   launcher:  ShimArgs args = ...;  argv += RenderShimArgs(args);  argv += command;
//   shim:      absl::StatusOr<ShimCommandLine> line =
//                  ParseShimArgs(std::vector<std::string>(argv + 1, argv + argc));
//              if (!line.ok()) return 126;  ...  char** command = argv + 1 + line->command_start;
//
// Parsing fails closed: an unknown flag, a malformed value (a non-loopback bridge, a relative
// or unnormalised dir, a channel fd below 3), a missing command, or guard dirs without
// --create-guard are refused with a message naming the argument, and the shim then runs
// nothing. Rendering does not validate: what it renders from a valid ShimArgs parses back to
// the same ShimArgs.
#ifndef CCSANDBOX_LAUNCHER_SHIM_SHIM_ARGS_H_
#define CCSANDBOX_LAUNCHER_SHIM_SHIM_ARGS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ccsandbox::launcher {

// --bridge=ADDRESS:PORT=UNIX_PATH (IPv6 as "[::1]:PORT=..."): the shim listens on a loopback
// port of the sandbox's network namespace and relays each connection to a Unix socket.
struct BridgeRoute {
  std::string listen_address;  // a loopback address, e.g. 127.0.0.1
  uint16_t listen_port = 0;    // 0 picks one (NetBridge::ports())
  std::string unix_path;       // where each connection is relayed to
  bool operator==(const BridgeRoute&) const = default;
};

// The create guard's part (launcher/create_guard/in_sandbox.h applies it).
inline constexpr int kPerExecGuardChannel = -2;

struct CreateGuardShimConfig {
  // --create-guard=FD; -1 = no guard; kPerExecGuardChannel (--create-guard=per-exec, init
  // mode only): each Exec brings its own channel.
  int channel_fd = -1;
  std::vector<std::string> free_dirs;      // --free-create=DIR
  std::vector<std::string> writable_dirs;  // --writable=DIR
  std::vector<std::string> socket_dirs;    // --free-sockets=DIR: bind(AF_UNIX) beneath
  bool operator==(const CreateGuardShimConfig&) const = default;
};

// Everything the shim is told before the command.
struct ShimArgs {
  int init_fd = -1;  // --init=FD: run as a warm sandbox's init; -1 = run the command
  std::vector<BridgeRoute> bridges;
  CreateGuardShimConfig create_guard;
  bool operator==(const ShimArgs&) const = default;
};

// The shim's arguments, in order: --init (when init_fd >= 0), one --bridge per route, then
// --create-guard (when there is a guard), each --free-create, --writable and --free-sockets,
// and, unless in init mode, the "--" that precedes the command.
std::vector<std::string> RenderShimArgs(const ShimArgs& args);

struct ShimCommandLine {
  ShimArgs args;
  size_t command_start = 0;  // index in the parsed arguments of the command's first word
};

// Parses the shim's arguments (its argv without the program name): flags, "--", then a
// command of at least one word; in init mode flags only (a command or a fixed guard channel is
// refused there, as is --create-guard=per-exec outside it).
absl::StatusOr<ShimCommandLine> ParseShimArgs(absl::Span<const std::string> args);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_SHIM_SHIM_ARGS_H_
