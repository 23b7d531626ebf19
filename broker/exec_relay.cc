#include "broker/exec_relay.h"

#include <chrono>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/grpc_limits.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker {
namespace {

enum Tag : intptr_t { kStart = 1, kMetadata, kRead, kFinish };

void* TagOf(Tag tag) { return reinterpret_cast<void*>(static_cast<intptr_t>(tag)); }

// How often the relay looks at its client while the launcher is silent: a client that cancels
// ends the launcher call (and so the run) within this.
constexpr auto kClientPoll = std::chrono::milliseconds(50);
// Once the reads have ended, how long the launcher call's status may take.
constexpr auto kStatusGrace = std::chrono::seconds(5);

using Clock = std::chrono::steady_clock;

}  // namespace

ExecRelay::ExecRelay(grpc::ServerContext* client, grpc::ServerWriter<v1::SandboxEvent>* writer,
                     Options options, std::function<void(v1::SandboxEvent&)> label)
    : client_(client),
      options_(options),
      label_(std::move(label)),
      outbox_(
          {options.capacity_bytes},
          [writer](const v1::SandboxEvent& event) { return writer->Write(event); },
          [this] { OnRoom(); }) {}

ExecRelay::~ExecRelay() { Finish(); }

void ExecRelay::StartReadLocked() {
  want_read_ = false;
  read_pending_ = true;
  reader_->Read(&incoming_, TagOf(kRead));
}

void ExecRelay::OnRoom() {
  absl::MutexLock lock(&mu_);
  if (want_read_ && reader_ != nullptr) StartReadLocked();
}

void ExecRelay::Offer(v1::SandboxEvent event) {
  label_(event);
  if (!outbox_.TryPush(std::move(event))) ++dropped_;
}

void ExecRelay::Push(v1::SandboxEvent event) {
  label_(event);
  outbox_.Push(std::move(event));
}

void ExecRelay::Cancel(const std::string& reason) {
  {
    absl::MutexLock lock(&mu_);
    if (cancel_reason_.empty()) cancel_reason_ = reason;
  }
  launcher_context_.TryCancel();
}

struct ExecRelay::Call {
  Result result;
  grpc::CompletionQueue cq;
  std::unique_ptr<grpc::ClientAsyncReaderInterface<v1::SandboxEvent>> reader;
  int outstanding = 2;  // start, metadata, then finish; reads are counted in read_pending_
  bool finished = false;
  bool reads_done = false;
  bool cancelled_launcher = false;
  Clock::time_point reads_done_at;
};

ExecRelay::Result ExecRelay::Run(v1::SandboxLauncher::StubInterface& launcher,
                                 const v1::LaunchPlan& plan,
                                 const std::function<void()>& before_last) {
  Call call;
  StartCall(launcher, plan, call);
  while (!CallOver(call)) {
    void* tag = nullptr;
    bool ok = false;
    const grpc::CompletionQueue::NextStatus next =
        call.cq.AsyncNext(&tag, &ok, std::chrono::system_clock::now() + kClientPoll);
    CancelWhenDue(call);
    if (next == grpc::CompletionQueue::GOT_EVENT) OnCompletion(call, tag, ok, before_last);
  }
  call.cq.Shutdown();
  void* tag;
  bool ok;
  while (call.cq.Next(&tag, &ok)) {
  }
  absl::MutexLock lock(&mu_);
  call.result.cancel_reason = cancel_reason_;
  return std::move(call.result);
}

void ExecRelay::StartCall(v1::SandboxLauncher::StubInterface& launcher, const v1::LaunchPlan& plan,
                          Call& call) {
  launcher_context_.set_wait_for_ready(true);
  call.reader = launcher.PrepareAsyncRun(&launcher_context_, plan, &call.cq);
  {
    absl::MutexLock lock(&mu_);
    reader_ = call.reader.get();
  }
  call.reader->StartCall(TagOf(kStart));
  // Reads may start only once the initial metadata is in (each read would ask for it again).
  call.reader->ReadInitialMetadata(TagOf(kMetadata));
  (void)TakeUtf8ParseFailure();  // this thread deserializes the reads: start clean
}

bool ExecRelay::CallOver(const Call& call) {
  absl::MutexLock lock(&mu_);
  if (call.outstanding == 0 && call.reads_done && !read_pending_) {
    reader_ = nullptr;  // from here on no read starts (OnRoom)
    return true;
  }
  return false;
}

void ExecRelay::CancelWhenDue(Call& call) {
  if (!call.cancelled_launcher && (client_->IsCancelled() || outbox_.failed())) {
    // Nobody reads this run any more: the launcher kills it on cancellation.
    call.result.client_gone = true;
    call.cancelled_launcher = true;
    launcher_context_.TryCancel();
  } else if (!call.cancelled_launcher && outbox_.blocked_for() >= options_.stall_limit) {
    LogDropped(/*run_ended=*/false);
    call.result.client_gone = true;
    call.cancelled_launcher = true;
    client_->TryCancel();  // makes the blocked write return
    launcher_context_.TryCancel();
  }
  if (call.reads_done && !call.finished && !call.cancelled_launcher &&
      Clock::now() - call.reads_done_at > kStatusGrace) {
    // Reads over, yet no status: whatever stopped the reads, do not wait for it forever.
    call.cancelled_launcher = true;
    launcher_context_.TryCancel();
  }
}

void ExecRelay::OnCompletion(Call& call, void* tag, bool ok,
                             const std::function<void()>& before_last) {
  switch (static_cast<Tag>(reinterpret_cast<intptr_t>(tag))) {
    case kStart:
      --call.outstanding;
      break;
    case kMetadata: {
      // Still one outstanding: the status, awaited from now on, so the call's end is seen
      // whatever the reads are doing.
      call.reader->Finish(&call.result.status, TagOf(kFinish));
      absl::MutexLock lock(&mu_);
      StartReadLocked();
      break;
    }
    case kFinish: {
      --call.outstanding;
      call.finished = true;
      // The call is over: what is left to read is bounded, and the last read ends it.
      absl::MutexLock lock(&mu_);
      if (want_read_) StartReadLocked();
      break;
    }
    case kRead:
      if (ok) {
        OnRead(call, before_last);
      } else {
        OnReadsEnded(call);
      }
      break;
  }
}

void ExecRelay::OnReadsEnded(Call& call) {
  // An event that does not parse ends the reads but not the call, whose status would
  // then wait for the unread rest forever: end the call (and so the run) instead.
  call.result.unparsed = TakeUtf8ParseFailure();
  if (!call.result.unparsed.empty()) launcher_context_.TryCancel();
  call.reads_done_at = Clock::now();
  absl::MutexLock lock(&mu_);
  read_pending_ = false;
  call.reads_done = true;
}

void ExecRelay::OnRead(Call& call, const std::function<void()>& before_last) {
  v1::SandboxEvent event;
  {
    absl::MutexLock lock(&mu_);
    event = std::move(incoming_);
    incoming_.Clear();
  }
  call.result.started = call.result.started || event.has_starting();
  const bool last = event.has_exit() || event.has_killed();
  call.result.ended = call.result.ended || last;
  if (last) {
    before_last();
    PushDroppedNotice();
  }
  if (options_.on_run_event) options_.on_run_event(event);
  label_(event);
  outbox_.Push(std::move(event));
  absl::MutexLock lock(&mu_);
  read_pending_ = false;
  // Back-pressure: the next read waits until the client has taken half of the queue.
  if (call.finished || outbox_.HasRoom()) {
    StartReadLocked();
  } else {
    want_read_ = true;
  }
}

void ExecRelay::PushDroppedNotice() {
  const uint64_t dropped = dropped_.exchange(0);
  if (dropped == 0) return;
  v1::SandboxEvent notice;
  notice.mutable_error()->set_code("RESOURCE_EXHAUSTED");
  notice.mutable_error()->set_message(
      absl::StrCat(dropped,
                   " session event(s) (proxy refusals) were dropped: the client did not "
                   "read its stream in time"));
  Push(std::move(notice));
}

void ExecRelay::LogDropped(bool run_ended) {
  if (std::exchange(dropped_logged_, true)) return;
  spdlog::warn("run {}: the client took no event for {}; it is dropped{}", options_.run_id,
               absl::FormatDuration(options_.stall_limit),
               run_ended ? " (the run had ended)" : " and the run cancelled");
}

bool ExecRelay::Finish() {
  const EventOutbox::Drain drain =
      outbox_.Finish(options_.stall_limit, [this] { return client_->IsCancelled(); });
  if (drain == EventOutbox::kStalled) LogDropped(/*run_ended=*/true);  // once: cached after
  if (drain == EventOutbox::kStalled || drain == EventOutbox::kCancelled) client_->TryCancel();
  return drain == EventOutbox::kDrained;
}

}  // namespace ccsandbox::broker
