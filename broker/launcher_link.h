// How the broker reaches the launcher: the stub every call goes through and the channel under
// it, which the broker asks before each run so that a restarted launcher is reconnected (and an
// absent one fails fast). The daemon connects with ConnectLauncher; tests pass a stub and
// channel of their own (a fake launcher).
//
//   BrokerService service(config, ConnectLauncher("unix:/run/ccsandbox/launcher.sock"));
#ifndef CCSANDBOX_BROKER_LAUNCHER_LINK_H_
#define CCSANDBOX_BROKER_LAUNCHER_LINK_H_

#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"
#include "proto/launcher.grpc.pb.h"

namespace ccsandbox::broker {

struct LauncherLink {
  std::shared_ptr<grpc::ChannelInterface> channel;  // the one `stub` calls over
  std::unique_ptr<v1::SandboxLauncher::StubInterface> stub;
};

// A channel to `address` that reconnects quickly after a launcher restart, and a stub over it.
LauncherLink ConnectLauncher(const std::string& address);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_LAUNCHER_LINK_H_
