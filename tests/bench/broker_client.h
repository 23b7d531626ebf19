// The benchmarks' calls to the broker (SandboxBroker over gRPC): Probe for native dispatch, Launch,
// timed Exec, Destroy, ListSessions. Each call has a deadline; a failed call is an error value
// naming the RPC.
#ifndef CCSANDBOX_TESTS_BENCH_BROKER_CLIENT_H_
#define CCSANDBOX_TESTS_BENCH_BROKER_CLIENT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/sandbox.grpc.pb.h"

namespace ccsandbox::bench {

// Comparing with raw bwrap only means something when the broker runs natively: waits for the
// broker (10 s), then FAILED_PRECONDITION unless it would dispatch to the native backend.
absl::Status CheckNativeDispatch(v1::SandboxBroker::Stub& stub, const std::string& broker_log);

// Launch(spec) on the native backend.
absl::Status Launch(v1::SandboxBroker::Stub& stub, const v1::SandboxSpec& spec);

absl::Status Destroy(v1::SandboxBroker::Stub& stub, const std::string& session_id);

// How many sessions the broker lists.
absl::StatusOr<int> CountSessions(v1::SandboxBroker::Stub& stub);

// Client-side times of one Exec, in ms from the call.
struct ExecTiming {
  double starting = 0;  // first event: broker + launcher accepted the run
  double ready = 0;     // the sandbox's command started
  double exit = 0;      // exit event
  double end = 0;       // stream finished
};

// One Exec(request) read to the end; an error unless the command exited 0.
absl::StatusOr<ExecTiming> TimeExec(v1::SandboxBroker::Stub& stub, const v1::ExecRequest& request);

// Probe's round trip in ms (one unary RPC).
absl::StatusOr<double> TimeProbe(v1::SandboxBroker::Stub& stub);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_BROKER_CLIENT_H_
