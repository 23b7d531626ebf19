// The standard gRPC services a daemon's server offers next to its own, so generic clients
// (grpcurl, health probes, reflection clients) work against it:
//   grpc.health.v1.Health                      gRPC's built-in service: "" is SERVING, and each
//                                              service name the daemon sets
//   grpc.reflection.v1.ServerReflection        base/reflection_v1_service
//   grpc.reflection.v1alpha.ServerReflection   gRPC's own
// Both reflections answer from the generated descriptor pool, which holds grpc.health.v1's
// descriptors too (proto/health.proto, linked in here), and list the server's services.
//
//   grpc::ServerBuilder builder;
//   ServeStandardServices(builder);
//   builder.RegisterService(&service);
//   std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
//   server->GetHealthCheckService()->SetServingStatus("ccsandbox.v1.SandboxLauncher", true);
//
// A server that only refuses (base/deny_all_service) calls WithoutStandardServices instead:
// gRPC would otherwise give every server of the process its health service and v1alpha.
#ifndef CCSANDBOX_BASE_STANDARD_SERVICES_H_
#define CCSANDBOX_BASE_STANDARD_SERVICES_H_

#include "grpcpp/grpcpp.h"

namespace ccsandbox {

// Health and both reflections on the server `builder` builds.
void ServeStandardServices(grpc::ServerBuilder& builder);

// Neither health nor reflection on the server `builder` builds.
void WithoutStandardServices(grpc::ServerBuilder& builder);

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_STANDARD_SERVICES_H_
