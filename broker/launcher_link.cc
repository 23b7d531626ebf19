#include "broker/launcher_link.h"

#include "proto/grpc_limits.h"

namespace ccsandbox::broker {

LauncherLink ConnectLauncher(const std::string& address) {
  grpc::ChannelArguments args;
  // The launcher may be restarted by ops: reconnect quickly instead of backing off for minutes.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  ApplyChannelLimits(args);
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  std::unique_ptr<v1::SandboxLauncher::Stub> stub = v1::SandboxLauncher::NewStub(channel);
  return LauncherLink{.channel = std::move(channel), .stub = std::move(stub)};
}

}  // namespace ccsandbox::broker
