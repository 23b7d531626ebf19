#include "broker/cli_doctor.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "broker/doctor_checks.h"
#include "broker/doctor_facts.h"
#include "broker/doctor_self_test.h"
#include "grpcpp/grpcpp.h"
#include "policy/plan/input_limits.h"
#include "proto/sandbox.grpc.pb.h"

namespace ccsandbox::broker {
namespace {

// Asks the broker at facts.broker.address for its probe and sessions; false when it does not
// answer (facts.broker.error says why, naming the socket).
bool AskBroker(v1::SandboxBroker::Stub& stub, DoctorFacts& facts) {
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status status = stub.Probe(&ctx, v1::ProbeRequest(), &facts.broker.probe);
    if (!status.ok()) {
      facts.broker.error = absl::StrCat("no broker answering at ", facts.broker.address, ": ",
                                        status.error_message());
      return false;
    }
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ListSessionsResponse sessions;
  grpc::Status status = stub.ListSessions(&ctx, v1::ListSessionsRequest(), &sessions);
  if (!status.ok()) {
    facts.broker.sessions_error = status.error_message();
  } else {
    facts.broker.sessions.assign(sessions.sessions().begin(), sessions.sessions().end());
  }
  return true;
}

}  // namespace

int RunDoctor(const std::string& address, bool json) {
  DoctorFacts facts;
  GatherHostDoctorFacts(getenv("PATH"), facts);
  facts.broker.address = address;
  // The broker made its socket: its owner is the uid sandboxed commands run as.
  struct stat socket {};
  socket.st_uid = geteuid();
  socket.st_gid = getegid();
  if (absl::StartsWith(address, "unix:") && stat(address.substr(5).c_str(), &socket) != 0) {
    facts.broker.error = absl::StrCat("no broker at ", address, " (socket missing)");
  } else {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(policy::kMaxGrpcMessageBytes);
    args.SetMaxSendMessageSize(policy::kMaxGrpcMessageBytes);
    std::unique_ptr<v1::SandboxBroker::Stub> stub = v1::SandboxBroker::NewStub(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
    // The sessions are listed before the self-test adds its own.
    if (AskBroker(*stub, facts))
      facts.self_test = RunDoctorSelfTest(*stub, socket.st_uid, socket.st_gid);
  }
  const std::vector<DoctorCheck> checks = DoctorChecks(facts);
  std::cout << (json ? DoctorJson(checks) + "\n" : DoctorText(checks)) << std::flush;
  if (facts.self_test.has_value() && facts.self_test->stop_signal != 0) {
    return 128 + facts.self_test->stop_signal;
  }
  return DoctorExitCode(checks);
}

}  // namespace ccsandbox::broker
