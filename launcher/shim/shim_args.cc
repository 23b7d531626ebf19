#include "launcher/shim/shim_args.h"

#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "asio.hpp"
#include "base/paths.h"

namespace ccsandbox::launcher {
namespace {

constexpr absl::string_view kInit = "--init=";
constexpr absl::string_view kPerExec = "per-exec";
constexpr absl::string_view kBridge = "--bridge=";
constexpr absl::string_view kCreateGuard = "--create-guard=";
constexpr absl::string_view kFreeCreate = "--free-create=";
constexpr absl::string_view kWritable = "--writable=";
constexpr absl::string_view kFreeSockets = "--free-sockets=";

std::string RenderBridgeRoute(const BridgeRoute& route) {
  const bool ipv6 = absl::StrContains(route.listen_address, ':');
  return absl::StrCat(kBridge, ipv6 ? "[" : "", route.listen_address, ipv6 ? "]" : "", ":",
                      route.listen_port, "=", route.unix_path);
}

absl::StatusOr<BridgeRoute> ParseBridgeRoute(const std::string& text) {
  const size_t eq = text.find('=');
  const size_t colon = text.rfind(':', eq);
  if (eq == std::string::npos || colon == std::string::npos || colon == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bridge: '", text, "' is not ADDRESS:PORT=UNIX_PATH"));
  }
  BridgeRoute route;
  route.listen_address = text.substr(0, colon);
  if (route.listen_address.size() > 2 && route.listen_address.front() == '[' &&
      route.listen_address.back() == ']') {
    route.listen_address = route.listen_address.substr(1, route.listen_address.size() - 2);
  }
  uint32_t port;
  if (!absl::SimpleAtoi(text.substr(colon + 1, eq - colon - 1), &port) || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("bridge: bad port in '", text, "'"));
  }
  route.listen_port = static_cast<uint16_t>(port);
  route.unix_path = text.substr(eq + 1);
  if (route.unix_path.empty() || route.unix_path[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat("bridge: '", text, "' needs an absolute path"));
  }
  // The bridge opens the sandbox's only way out: it must never listen beyond loopback.
  asio::error_code error;
  asio::ip::address address = asio::ip::make_address(route.listen_address, error);
  if (error || !address.is_loopback()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bridge: '", route.listen_address, "' is not a loopback address"));
  }
  return route;
}

// True when `arg` is one of the create guard's flags (and records it); an error for a
// malformed value of one of them; false for any other argument.
absl::StatusOr<bool> ParseCreateGuardArg(absl::string_view arg, CreateGuardShimConfig& config) {
  auto value_of = [&arg](absl::string_view flag) -> std::optional<absl::string_view> {
    if (!absl::StartsWith(arg, flag)) return std::nullopt;
    return arg.substr(flag.size());
  };
  if (auto fd = value_of(kCreateGuard)) {
    if (*fd == kPerExec) {
      config.channel_fd = kPerExecGuardChannel;
      return true;
    }
    int n = -1;
    // stdin, stdout and stderr are never the channel.
    if (!absl::SimpleAtoi(*fd, &n) || n < 3) {
      return absl::InvalidArgumentError(absl::StrCat("--create-guard: bad fd '", *fd, "'"));
    }
    config.channel_fd = n;
    return true;
  }
  for (auto [flag, list] :
       {std::pair{kFreeCreate, &config.free_dirs}, std::pair{kWritable, &config.writable_dirs},
        std::pair{kFreeSockets, &config.socket_dirs}}) {
    if (auto dir = value_of(flag)) {
      if (absl::Status ok = CheckNormalizedAbsolute(flag, *dir); !ok.ok()) return ok;
      list->emplace_back(*dir);
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> RenderShimArgs(const ShimArgs& args) {
  std::vector<std::string> argv;
  if (args.init_fd >= 0) argv.push_back(absl::StrCat(kInit, args.init_fd));
  for (const BridgeRoute& route : args.bridges) argv.push_back(RenderBridgeRoute(route));
  const CreateGuardShimConfig& guard = args.create_guard;
  if (guard.channel_fd == kPerExecGuardChannel) {
    argv.push_back(absl::StrCat(kCreateGuard, kPerExec));
  } else if (guard.channel_fd >= 0) {
    argv.push_back(absl::StrCat(kCreateGuard, guard.channel_fd));
  }
  for (const std::string& dir : guard.free_dirs) argv.push_back(absl::StrCat(kFreeCreate, dir));
  for (const std::string& dir : guard.writable_dirs) argv.push_back(absl::StrCat(kWritable, dir));
  for (const std::string& dir : guard.socket_dirs) argv.push_back(absl::StrCat(kFreeSockets, dir));
  if (args.init_fd < 0) argv.push_back("--");
  return argv;
}

absl::StatusOr<ShimCommandLine> ParseShimArgs(absl::Span<const std::string> args) {
  ShimCommandLine line;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (absl::StartsWith(arg, kInit)) {
      int n = -1;
      if (!absl::SimpleAtoi(arg.substr(kInit.size()), &n) || n < 3) {
        return absl::InvalidArgumentError(absl::StrCat("--init: bad fd '", arg, "'"));
      }
      line.args.init_fd = n;
      continue;
    }
    if (absl::StartsWith(arg, kBridge)) {
      absl::StatusOr<BridgeRoute> route = ParseBridgeRoute(arg.substr(kBridge.size()));
      if (!route.ok()) return route.status();
      line.args.bridges.push_back(*std::move(route));
      continue;
    }
    absl::StatusOr<bool> guard_arg = ParseCreateGuardArg(arg, line.args.create_guard);
    if (!guard_arg.ok()) return guard_arg.status();
    if (*guard_arg) continue;
    return absl::InvalidArgumentError(
        absl::StrCat("unknown argument '", arg,
                     "' (usage: sandbox_shim [--bridge=...] [--create-guard=FD ...] -- CMD)"));
  }
  const CreateGuardShimConfig& guard = line.args.create_guard;
  const bool init = line.args.init_fd >= 0;
  if (init && i > 0 && args[i - 1] == "--") {
    return absl::InvalidArgumentError("--init takes no command: each Exec comes over its fd");
  }
  if (!init && i >= args.size()) return absl::InvalidArgumentError("no command given");
  if (init && guard.channel_fd >= 0) {
    return absl::InvalidArgumentError("--init needs --create-guard=per-exec, not a fixed fd");
  }
  if (!init && guard.channel_fd == kPerExecGuardChannel) {
    return absl::InvalidArgumentError("--create-guard=per-exec needs --init");
  }
  if (guard.channel_fd == -1 && (!guard.free_dirs.empty() || !guard.writable_dirs.empty())) {
    return absl::InvalidArgumentError("--free-create and --writable need --create-guard");
  }
  line.command_start = i;
  return line;
}

}  // namespace ccsandbox::launcher
