// A run's event stream to the broker, as the launcher writes it (the gRPC server side).
#ifndef CCSANDBOX_LAUNCHER_GRPC_SINK_H_
#define CCSANDBOX_LAUNCHER_GRPC_SINK_H_

#include <sys/eventfd.h>
#include <unistd.h>

#include <functional>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/event_outbox.h"
#include "base/unique_fd.h"
#include "grpcpp/grpcpp.h"
#include "launcher/create_guard/emulator.h"
#include "launcher/run_supervisor.h"
#include "policy/violations/dedup.h"
#include "proto/launcher.grpc.pb.h"
#include "proto/launcher.pb.h"
#include "proto/sandbox.pb.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::launcher {

// Bytes of events a run may have queued for a broker that does not keep up; beyond it the
// supervisor stops reading the command's output (back-pressure on the command).
constexpr size_t kRunOutboxBytes = 512 * 1024;

// The run's event stream. Events are queued in an EventOutbox and written by its own thread,
// so neither the supervising thread nor the create guard's ever waits on the broker: Emit is
// called from both; the run's last event (exit / killed) is queued only after the guard has
// stopped, so no violation ever follows it. Finish (also run by the destructor) waits, at most
// until the broker has taken nothing for the stall limit, for the queue to drain, and cancels
// the call otherwise.
class GrpcSink : public EventSink {
 public:
  GrpcSink(grpc::ServerContext* context, grpc::ServerWriter<v1::SandboxEvent>* writer,
           const v1::LaunchPlan& plan, absl::Duration stall_limit)
      : context_(context),
        plan_(plan),
        stall_limit_(stall_limit),
        room_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
        outbox_(
            {kRunOutboxBytes},
            [writer](const v1::SandboxEvent& event) { return writer->Write(event); },
            [this] {
              const uint64_t one = 1;
              (void)!write(room_.get(), &one, sizeof(one));
            }) {}
  ~GrpcSink() override { Finish(); }

  // Runs once, unlocked, right before the last event is queued.
  void BeforeLastEvent(std::function<void()> hook) { before_last_ = std::move(hook); }

  bool Emit(const v1::SandboxEvent& event) override { return Queue(event, /*wait=*/false); }
  bool EmitWhenReady(const v1::SandboxEvent& event) override { return Queue(event, /*wait=*/true); }
  bool Cancelled() override { return context_->IsCancelled() || outbox_.failed(); }
  bool Ready() override {
    uint64_t count;
    (void)!read(room_.get(), &count, sizeof(count));  // cleared before asking: no lost wake-up
    return outbox_.HasRoom();
  }
  int ready_fd() override { return room_.get(); }
  // From now on nothing waits for room (EmitWhenReady returns at once).
  void Release() { outbox_.Release(); }

  // True once every event was written; false when the broker was gone, cancelled, or took
  // nothing for the stall limit (the call is then cancelled, so no write stays blocked).
  bool Finish() {
    const EventOutbox::Drain drain =
        outbox_.Finish(stall_limit_, [this] { return context_->IsCancelled(); });
    if (drain == EventOutbox::kStalled && !stall_logged_) {
      stall_logged_ = true;
      spdlog::warn("run {}: the broker took no event for {}; its stream is cancelled",
                   plan_.run_id(), absl::FormatDuration(stall_limit_));
    }
    if (drain == EventOutbox::kStalled || drain == EventOutbox::kCancelled) context_->TryCancel();
    return drain == EventOutbox::kDrained;
  }

 private:
  bool Queue(const v1::SandboxEvent& event, bool wait) {
    if ((event.has_exit() || event.has_killed()) && before_last_) {
      std::function<void()> hook = std::move(before_last_);
      before_last_ = nullptr;
      outbox_.Release();  // a guard callback waiting for room must not hold up the join
      hook();
    }
    v1::SandboxEvent labelled = event;
    labelled.set_session_id(plan_.session_id());
    labelled.set_backend(plan_.backend());
    if (event.has_violation()) {
      absl::MutexLock lock(&mu_);
      if (event.violation().action() == kActionFileWriteCreate ||
          event.violation().action() == kActionFileWriteSetId) {
        dedup_.RecordRefusal(event.violation().target());
      } else if (dedup_.IsEcho(event.violation())) {
        return true;  // the supervisor reported this refusal already, exactly
      }
    }
    return wait ? outbox_.PushWhenRoom(std::move(labelled)) : outbox_.Push(std::move(labelled));
  }

  grpc::ServerContext* context_;
  const v1::LaunchPlan& plan_;
  const absl::Duration stall_limit_;
  std::function<void()> before_last_;  // touched by the supervising thread only
  bool stall_logged_ = false;
  absl::Mutex mu_;
  policy::ViolationDedup dedup_ ABSL_GUARDED_BY(mu_);
  UniqueFd room_;
  EventOutbox outbox_;  // last: destroyed (its writer joined) before what it calls
};

// The run's first event: it is admitted and about to start.
inline void EmitStarting(const v1::LaunchPlan& plan, GrpcSink& sink) {
  v1::SandboxEvent starting;
  starting.mutable_starting()->set_run_id(plan.run_id());
  sink.Emit(starting);
}

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_GRPC_SINK_H_
