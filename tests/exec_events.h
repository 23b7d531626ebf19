// Test support: one Exec call to the broker read to its end, and what tests look at in it.
//
//   std::vector<v1::SandboxEvent> events = ExecEvents(*stub, ShExec("s1", "echo hi"), &status);
//   EXPECT_EQ(StdoutOf(events), "hi\n");  EXPECT_TRUE(Last(events)->has_exit());
#ifndef CCSANDBOX_TESTS_EXEC_EVENTS_H_
#define CCSANDBOX_TESTS_EXEC_EVENTS_H_

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "proto/sandbox.grpc.pb.h"

namespace ccsandbox::testing {

// An Exec of `sh -c script` in `session`.
inline v1::ExecRequest ShExec(const std::string& session, const std::string& script,
                              uint64_t timeout_ms = 0) {
  v1::ExecRequest request;
  request.set_session_id(session);
  for (const char* arg : {"sh", "-c"}) request.add_argv(arg);
  request.add_argv(script);
  request.set_timeout_ms(timeout_ms);
  return request;
}

// Every event of the call; `deadline` (from now) makes a run that never ends fail the test
// instead of hanging it.
inline std::vector<v1::SandboxEvent> ExecEvents(
    v1::SandboxBroker::StubInterface& stub, const v1::ExecRequest& request,
    grpc::Status* status = nullptr, absl::Duration deadline = absl::InfiniteDuration()) {
  grpc::ClientContext ctx;
  if (deadline != absl::InfiniteDuration()) {
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  }
  auto reader = stub.Exec(&ctx, request);
  std::vector<v1::SandboxEvent> events;
  v1::SandboxEvent event;
  while (reader->Read(&event)) events.push_back(event);
  grpc::Status finished = reader->Finish();
  if (status != nullptr) *status = finished;
  return events;
}

inline std::string StdoutOf(const std::vector<v1::SandboxEvent>& events) {
  std::string out;
  for (const v1::SandboxEvent& e : events) out += e.stdout();
  return out;
}

inline std::string StderrOf(const std::vector<v1::SandboxEvent>& events) {
  std::string err;
  for (const v1::SandboxEvent& e : events) err += e.stderr();
  return err;
}

// The last event, or null for an empty stream.
inline const v1::SandboxEvent* Last(const std::vector<v1::SandboxEvent>& events) {
  return events.empty() ? nullptr : &events.back();
}

// The exit code of a run that exited, else -1 (killed, failed, or no end seen).
inline int ExitOf(const std::vector<v1::SandboxEvent>& events) {
  const v1::SandboxEvent* last = Last(events);
  return last != nullptr && last->has_exit() ? last->exit().exit_code() : -1;
}

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_TESTS_EXEC_EVENTS_H_
