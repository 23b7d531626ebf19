// `sandboxctl doctor`'s live self-test, through the broker's public API as `sandboxctl run`
// goes: a native session over a fresh temporary work tree, whose one command attempts a write
// to a protectedPaths file, the creation of .env and a connection (through the session's HTTP
// proxy) to a host the allowlist does not name; the violations come from the event stream.
// A control write to an ordinary file shows the tree was writable at all, and the host files
// are checked afterwards. The session and the tree are removed on every path: a stop signal
// (Ctrl-C, SIGTERM, SIGHUP) cancels the calls, the clean-up runs, and stop_signal says which.
//
//   SelfTestFacts test = RunDoctorSelfTest(*stub, broker_uid, broker_gid);
#ifndef CCSANDBOX_BROKER_DOCTOR_SELF_TEST_H_
#define CCSANDBOX_BROKER_DOCTOR_SELF_TEST_H_

#include <sys/types.h>

#include "broker/doctor_checks.h"
#include "proto/sandbox.grpc.pb.h"

namespace ccsandbox::broker {

// The host the command asks the proxy for: never on an allowlist (.invalid never resolves).
inline constexpr char kSelfTestDeniedTarget[] = "doctor-self-test.invalid:443";

// `broker_uid` / `broker_gid`: who the sandboxed command runs as (the launcher runs it as its
// caller, the broker): the tree is made theirs (as root), or writable for them.
SelfTestFacts RunDoctorSelfTest(v1::SandboxBroker::Stub& stub, uid_t broker_uid, gid_t broker_gid);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_DOCTOR_SELF_TEST_H_
