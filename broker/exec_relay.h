// One Exec stream: the launcher's Run stream relayed to the broker's client, with the session's
// own events (proxy refusals) mixed in.
//
// Enforcement never waits on the client. Events reach the client through a bounded EventOutbox
// whose own thread does the writing; the launcher's stream is read with the asynchronous API,
// one read at a time and only while the outbox has room. A client that stops reading therefore
// stops the broker reading the launcher, whose supervisor then stops reading the command's pipes:
// the command blocks on its own output and nothing piles up in either daemon. Because the
// launcher call's status is awaited from the start, its end (the launcher cancelling a stream
// nobody reads, a launcher restart) is seen even while no read is outstanding. Timeouts, Kill and
// Destroy act in the launcher and never pass through this stream; Cancel is the way round for a
// run the launcher's Signal could not reach. A client that takes nothing at all for the stall
// limit is dropped like one that disconnected (its run, if still going, is killed): a launcher
// call's status stays behind its unread events, so a relay waiting on such a client could not
// tell a run that ended from one that goes on.
//
//   ExecRelay relay(context, writer, {}, [&](v1::SandboxEvent& e) { label(e); });
//   events.Subscribe(session, [&](const v1::SandboxEvent& e) { relay.Offer(e); });
//   ExecRelay::Result result = relay.Run(*launcher_stub, plan, [&] { flush; unsubscribe; });
//   if (lost) relay.Push(killed);
//   if (!relay.Finish()) return CANCELLED;   // the client took nothing for the stall limit
#ifndef CCSANDBOX_BROKER_EXEC_RELAY_H_
#define CCSANDBOX_BROKER_EXEC_RELAY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/event_outbox.h"
#include "grpcpp/grpcpp.h"
#include "proto/launcher.grpc.pb.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker {

class ExecRelay {
 public:
  struct Options {
    std::string run_id;  // for logs
    // Queued bytes for the client beyond which the launcher's stream is not read.
    size_t capacity_bytes = 512 * 1024;
    // A client that takes nothing for this long while events wait for it is dropped as if it
    // had gone: its stream is cancelled and, if the run still goes on, the run with it.
    absl::Duration stall_limit = absl::Seconds(60);
    // Sees each event of the run's own stream (not the session's) before it is queued; may be
    // empty. Runs on the relay's thread: keep it short.
    std::function<void(const v1::SandboxEvent&)> on_run_event;
  };

  struct Result {
    grpc::Status status;        // the launcher call's
    bool started = false;       // its starting event came
    bool ended = false;         // its exit or killed event came
    bool client_gone = false;   // the client cancelled, its stream broke, or it was dropped
    std::string cancel_reason;  // set when Cancel ended the call
    // The field of a launcher event that did not parse (a string that is not UTF-8); the call
    // was then cancelled, since the rest of its stream can no longer be read.
    std::string unparsed;
  };

  // `label` is applied to every event before it is queued.
  ExecRelay(grpc::ServerContext* client, grpc::ServerWriter<v1::SandboxEvent>* writer,
            Options options, std::function<void(v1::SandboxEvent&)> label);
  ~ExecRelay();  // Finish, then joins the writer
  ExecRelay(const ExecRelay&) = delete;
  ExecRelay& operator=(const ExecRelay&) = delete;

  // Runs `plan` on the launcher and relays its events until the call has ended.
  // `before_last` runs right before the run's last event (exit / killed) is queued.
  Result Run(v1::SandboxLauncher::StubInterface& launcher, const v1::LaunchPlan& plan,
             const std::function<void()>& before_last);

  // A session-wide event: queued while there is room, otherwise dropped and counted (a notice
  // precedes the run's last event), never waited for. Thread-safe.
  void Offer(v1::SandboxEvent event);
  // Queues an event the broker adds itself (the killed event of a run whose launcher was lost).
  void Push(v1::SandboxEvent event);
  // Ends the launcher call, so the launcher kills the run; `reason` is kept for the killed
  // event. Thread-safe, also before Run and after it.
  void Cancel(const std::string& reason);
  // Waits for the client to take everything queued, at most until it has taken nothing for the
  // stall limit; then drops it (cancels its stream). False when not everything was delivered.
  bool Finish();

 private:
  struct Call;  // one Run's launcher call and what has come of it (exec_relay.cc)

  // Starts the launcher call; reads begin once its initial metadata is in.
  void StartCall(v1::SandboxLauncher::StubInterface& launcher, const v1::LaunchPlan& plan,
                 Call& call);
  // True, and no read starts any more, once the call and its reads are over.
  bool CallOver(const Call& call);
  // Ends the launcher call when its client is gone or stalled, or when its status, after the
  // reads, takes too long.
  void CancelWhenDue(Call& call);
  // One completion of the launcher call: its start, metadata, status or a read.
  void OnCompletion(Call& call, void* tag, bool ok, const std::function<void()>& before_last);
  void OnRead(Call& call, const std::function<void()>& before_last);
  void OnReadsEnded(Call& call);
  // Queued before the last event: how many session events were dropped, if any.
  void PushDroppedNotice();
  void StartReadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void OnRoom();
  void LogDropped(bool run_ended);

  grpc::ServerContext* const client_;
  const Options options_;
  const std::function<void(v1::SandboxEvent&)> label_;
  grpc::ClientContext launcher_context_;
  std::atomic<uint64_t> dropped_{0};
  bool dropped_logged_ = false;  // the handler's thread only

  absl::Mutex mu_;
  grpc::ClientAsyncReaderInterface<v1::SandboxEvent>* reader_ ABSL_GUARDED_BY(mu_) = nullptr;
  v1::SandboxEvent incoming_ ABSL_GUARDED_BY(mu_);  // the outstanding read's message
  bool read_pending_ ABSL_GUARDED_BY(mu_) = false;
  bool want_read_ ABSL_GUARDED_BY(mu_) = false;  // a read waits for room in the outbox
  std::string cancel_reason_ ABSL_GUARDED_BY(mu_);

  EventOutbox outbox_;  // last: destroyed (its writer joined) first
};

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_EXEC_RELAY_H_
