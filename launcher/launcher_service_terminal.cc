// LauncherService's Terminal RPC: a shell on a PTY the launcher allocates, its stdio and
// controlling terminal, relayed both ways for as long as the call lasts.
#include <sys/wait.h>

#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "launcher/launcher_service.h"
#include "launcher/terminal/event_queue.h"
#include "launcher/terminal/pty.h"
#include "launcher/terminal/terminal_relay.h"
#include "proto/grpc_status.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::launcher {
namespace {

// How long a broker has, once the shell's end was sent, to close its side of the call.
constexpr absl::Duration kCloseGrace = absl::Seconds(5);

v1::TerminalOutput EndedOutput(const v1::LaunchPlan& plan, const TerminalRelay::End& end) {
  v1::TerminalOutput out;
  v1::SandboxEvent* event = out.mutable_ended();
  event->set_session_id(plan.session_id());
  event->set_backend(plan.backend());
  if (!end.wait_status.ok()) {
    event->mutable_killed()->set_reason(std::string(kKilledStopped));
    event->mutable_killed()->set_detail(std::string(end.wait_status.status().message()));
    return out;
  }
  const int status = *end.wait_status;
  if (end.cause.has_value() && WIFSIGNALED(status)) {
    event->mutable_killed()->set_reason(end.cause->reason);
    event->mutable_killed()->set_detail(end.cause->detail);
    event->mutable_killed()->set_signal(WTERMSIG(status));
    return out;
  }
  event->mutable_exit()->set_exit_code(WIFEXITED(status)     ? WEXITSTATUS(status)
                                       : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                                             : 255);
  return out;
}

}  // namespace

grpc::Status LauncherService::Terminal(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<v1::TerminalOutput, v1::LauncherTerminalInput>* stream) {
  v1::LauncherTerminalInput first;
  if (!stream->Read(&first)) return grpc::Status::CANCELLED;
  if (!first.has_start()) {
    return ToGrpc(absl::InvalidArgumentError("start: a terminal's first message is its start"));
  }
  const v1::LaunchPlan& plan = first.start().plan();
  SpawnFds fds;
  absl::StatusOr<ProcessSpec> spec = AdmitRun(plan, fds, /*warm=*/false, /*terminal=*/true);
  if (!spec.ok()) return ToGrpc(spec.status());
  absl::StatusOr<Pty> pty = OpenPty(first.start().size().rows(), first.start().size().cols());
  if (!pty.ok()) return ToGrpc(pty.status());
  spec->tty_fd = pty->slave.get();
  // Kill and Destroy reach it like any run: Signal names its run id.
  absl::StatusOr<RegisteredRun> run = registry_.Register(plan.run_id(), peer_uid_);
  if (!run.ok()) return ToGrpc(run.status());
  absl::StatusOr<std::unique_ptr<SandboxProcess>> process = SandboxProcess::Spawn(*spec);
  if (!process.ok()) {
    spdlog::error("terminal {}: {}", plan.run_id(), std::string(process.status().message()));
    return ToGrpc(process.status());
  }
  pty->slave.Reset();  // only the shell holds it: its end closes the PTY
  fds.seccomp.Reset();
  fds.guard_shim.Reset();  // only the shim holds its end now
  const pid_t pid = (*process)->pid();
  // The trusted-name rules of every writable native sandbox hold in a terminal too: its
  // denials go out on the stream as events, from the relay's thread.
  TerminalEventQueue events;
  std::unique_ptr<CreateSupervisor> guard;
  if (plan.has_create_guard()) {
    absl::StatusOr<std::unique_ptr<CreateSupervisor>> started =
        StartCreateGuard(plan, plan.run_id(), std::move(fds.guard_launcher), events);
    if (!started.ok()) {
      // The shim waits for nobody: without our end it fails and the shell never starts.
      spdlog::error("terminal {}: create guard: {}", plan.run_id(),
                    std::string(started.status().message()));
      (*process)->SignalGroup(SIGKILL);
      return ToGrpc(started.status());
    }
    guard = *std::move(started);
  }
  spdlog::info("terminal {} opened: uid {}, backend {}, pid {}", plan.run_id(), peer_uid_,
               plan.backend() == v1::SANDBOX_BACKEND_NATIVE ? "native" : "none", pid);
  TerminalRelay relay(std::move(pty->master), **process, pid, run->control());

  v1::TerminalOutput opened;
  opened.mutable_opened()->set_session_id(plan.session_id());
  opened.mutable_opened()->set_backend(plan.backend());
  opened.mutable_opened()->set_state(v1::SANDBOX_STATE_ACTIVE);
  opened.mutable_opened()->set_working_directory(plan.workdir());
  if (!stream->Write(opened)) relay.Hangup();

  absl::Notification input_done;
  std::thread input([&] {
    v1::LauncherTerminalInput in;
    while (stream->Read(&in)) {
      absl::Status applied = absl::OkStatus();
      switch (in.input_case()) {
        case v1::LauncherTerminalInput::kData:
          applied = relay.Write(in.data());
          break;
        case v1::LauncherTerminalInput::kResize:
          applied = relay.Resize(in.resize().rows(), in.resize().cols());
          break;
        case v1::LauncherTerminalInput::kSignal:
          applied = relay.Signal(in.signal());
          break;
        default:
          applied = absl::InvalidArgumentError("input: a start is the first message only");
      }
      if (!applied.ok() && applied.code() != absl::StatusCode::kFailedPrecondition) {
        spdlog::warn("terminal {}: input refused: {}", plan.run_id(),
                     std::string(applied.message()));
      }
    }
    // The broker closed its side, or the call broke: as a closed terminal window.
    relay.Hangup();
    input_done.Notify();
  });
  absl::Cleanup join = [&] {
    if (!input_done.WaitForNotificationWithTimeout(kCloseGrace)) context->TryCancel();
    input.join();
  };
  auto send_events = [&] {
    size_t dropped = 0;
    for (v1::SandboxEvent& event : events.Take(&dropped)) {
      v1::TerminalOutput out;
      event.set_session_id(plan.session_id());
      event.set_backend(plan.backend());
      *out.mutable_event() = std::move(event);
      if (!stream->Write(out)) events.Cancel();
    }
    if (dropped > 0) {
      spdlog::warn("terminal {}: {} denial events dropped (a storm)", plan.run_id(), dropped);
    }
  };
  const TerminalRelay::End end = relay.Run(
      [&](absl::string_view data) {
        v1::TerminalOutput out;
        out.set_data(std::string(data));
        return stream->Write(out);
      },
      {events.wake_fd(), send_events});
  if (guard != nullptr) {
    guard->Join();  // every trapped call answered: its last events are queued
    send_events();
  }
  const v1::TerminalOutput ended = EndedOutput(plan, end);
  spdlog::info("terminal {} ended: {}", plan.run_id(), ended.ended().ShortDebugString());
  stream->Write(ended);
  return grpc::Status::OK;
}

}  // namespace ccsandbox::launcher
