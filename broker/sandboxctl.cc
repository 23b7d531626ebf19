// sandboxctl: the command-line client of the broker. The forms (cli_forms.h; `--help` and
// `sandboxctl FORM --help` print their usage lines, exit 0; a usage error exits 125):
//
//   sandboxctl --broker=unix:PATH probe [--json]
//   sandboxctl --broker=unix:PATH run [--spec=FILE.json] [--workdir=DIR] [--timeout=SECONDS]
//              [--backend=NAME] [--stdin] [--no-filename-denies] [--json] -- CMD [ARGS...]
//   sandboxctl --broker=unix:PATH run --session=ID [--workdir=DIR] [--timeout=SECONDS] [--stdin]
//              [--json] -- CMD [ARGS...]
//   sandboxctl --broker=unix:PATH session start [--spec=FILE.json] [--workdir=DIR]
//              [--backend=NAME] [--no-filename-denies] [--json]
//   sandboxctl --broker=unix:PATH session ls|show ID|stop ID|suspend ID|resume ID [--json]
//   sandboxctl --broker=unix:PATH policy check --mode=MODE [--json] -- 'COMMAND LINE'
//   sandboxctl --broker=unix:PATH plan --spec=FILE.json [--platform=linux] [--backend=NAME]
//              [--no-filename-denies] [--json] [-- CMD [ARGS...]]
//   sandboxctl --broker=unix:PATH doctor [--json]
//
// run without --session starts a session of its own and the broker ends it with the run; with
// --session it runs in a session from `session start` (cli_session.h), which stays. Either way
// it passes the command's output through live, reports violations on stderr and exits with the
// command's code (128+signal when killed, 125 when sandboxctl, the broker or the launcher failed,
// or the session does not exist — with a one-line message).
// policy check prints what MODE (chat, review, plan, orchestrate) decides for the command line
// (the words after -- joined with spaces) and exits 0 allow, 1 prompt, 2 deny, 125 on errors.
// plan prints what the spec becomes, running nothing (cli_plan.h); 0, or 125.
// doctor checks the host and the broker and runs a self-test (cli_doctor.h); 0, 1, or 125.
// --broker defaults to $CCSANDBOX_BROKER, else the installed service's socket, and takes a bare
// path. --json prints handles, events and decisions as JSON lines on stdout, and sandboxctl's
// own failures as one JSON object on stderr (cli_exit.h).
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iostream>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/version.h"
#include "broker/cli_doctor.h"
#include "broker/cli_events.h"
#include "broker/cli_exit.h"
#include "broker/cli_launch.h"
#include "broker/cli_parse.h"
#include "broker/cli_plan.h"
#include "broker/cli_policy.h"
#include "broker/cli_session.h"
#include "broker/cli_signals.h"
#include "broker/cli_term.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "policy/plan/input_limits.h"
#include "proto/sandbox.grpc.pb.h"

namespace ccsandbox::broker {
namespace {

void WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = write(fd, data.data() + off, data.size() - off);
    if (n <= 0) return;
    off += n;
  }
}

int Probe(v1::SandboxBroker::Stub& stub, bool json) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ProbeResponse response;
  grpc::Status status = stub.Probe(&ctx, v1::ProbeRequest(), &response);
  if (!status.ok()) return Fail(status.error_message());
  if (json) {
    std::string text;
    google::protobuf::util::JsonPrintOptions options;
    options.always_print_primitive_fields = true;
    (void)google::protobuf::util::MessageToJsonString(response, &text, options);
    std::cout << text << std::endl;
  } else {
    std::cout << response.status_line() << std::endl;
    if (!response.resource_limits_note().empty()) {
      std::cout << "resource limits: " << response.resource_limits_note() << std::endl;
    }
    if (response.has_microvm()) {
      std::cout << "microVM " << (response.microvm().available() ? "available (" : "unavailable (")
                << response.microvm().note() << ")" << std::endl;
    }
  }
  return 0;
}

// This process's stdin, refused past policy::kMaxStdinBytes without reading the rest.
absl::StatusOr<std::string> ReadStdin() {
  std::string data;
  char buffer[65536];
  while (true) {
    const ssize_t n = read(0, buffer, sizeof(buffer));
    if (n == 0) return data;
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::FailedPreconditionError(absl::StrCat("stdin: ", strerror(errno)));
    }
    data.append(buffer, n);
    if (data.size() > policy::kMaxStdinBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "stdin: more than ", policy::kMaxStdinBytes,
          " bytes (4 MiB, one run's limit): put bigger input in a file under a bind mount"));
    }
  }
}

LaunchFlags LaunchFlagsOf(const CliCommand& command) {
  return LaunchFlags{.spec_file = command.spec,
                     .workdir = command.workdir,
                     .backend = command.backend,
                     .no_filename_denies = command.no_filename_denies};
}

// The Exec request of one run, checked before anything is sent. `guest_workdir` overrides the
// spec's (when --workdir was given); `session_id` is "" for a one-shot run until it is launched.
absl::StatusOr<v1::ExecRequest> BuildExecRequest(const CliCommand& command,
                                                 const std::optional<std::string>& guest_workdir,
                                                 const std::string& session_id, bool one_shot) {
  const double timeout = command.timeout_seconds;
  if (!(timeout >= 0) || timeout * 1000 > static_cast<double>(policy::kMaxTimeoutMs)) {
    return absl::InvalidArgumentError("--timeout: from 0 (none) to 604800 seconds (7 days)");
  }
  v1::ExecRequest exec;
  exec.set_session_id(session_id);
  for (const std::string& arg : command.operands) exec.add_argv(arg);
  if (guest_workdir.has_value()) exec.set_guest_workdir(*guest_workdir);
  exec.set_timeout_ms(static_cast<uint64_t>(timeout * 1000));
  // If this process dies (even SIGKILL), the broker still tears a one-shot session down; a
  // session from `session start` is never ended by a run.
  exec.set_destroy_session_after(one_shot);
  if (command.read_stdin) {
    absl::StatusOr<std::string> input = ReadStdin();
    if (!input.ok()) return input.status();
    exec.set_stdin(*std::move(input));
  }
  if (absl::Status valid = policy::CheckExecLimits(exec); !valid.ok()) return valid;
  return exec;
}

// Runs `exec`, printing its events, and returns the exit code sandboxctl should end with.
int StreamRun(v1::SandboxBroker::Stub& stub, const v1::ExecRequest& exec, bool json) {
  // Ctrl-C / SIGTERM / SIGHUP: cancel the run (the broker kills its sandbox). A one-shot session
  // ends with it; a session from `session start` stays.
  grpc::ClientContext exec_ctx;
  CancelOnStopSignal stop_signal([&exec_ctx] { exec_ctx.TryCancel(); });

  std::optional<int> code;
  grpc::Status status;
  {
    std::unique_ptr<grpc::ClientReader<v1::SandboxEvent>> reader = stub.Exec(&exec_ctx, exec);
    v1::SandboxEvent event;
    while (reader->Read(&event)) {
      if (json) {
        WriteAll(1, EventJson(event) + "\n");
      } else if (event.has_stdout()) {
        WriteAll(1, event.stdout());
      } else if (event.has_stderr()) {
        WriteAll(2, event.stderr());
      } else {
        WriteAll(2, StderrNoticeFor(event));
      }
      if (std::optional<int> c = ExitCodeFor(event)) code = c;
    }
    status = reader->Finish();
  }

  // No Destroy: a one-shot session was destroyed by the broker when the Exec ended
  // (destroy_session_after), and any other session is the user's to stop.

  if (stop_signal.signal() != 0) return 128 + stop_signal.signal();
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    return Fail(NoSessionMessage(exec.session_id()), kNotFoundError);
  }
  if (!status.ok()) return Fail(status.error_message());
  if (!code.has_value()) return Fail("the run ended without an exit event");
  return *code;
}

// `run -- CMD`: a session of its own, launched for this run and destroyed by the broker after it.
int RunOneShot(v1::SandboxBroker::Stub& stub, const CliCommand& command) {
  // Launch and Exec are complete and checked before anything is sent: a refusal leaves no
  // session behind.
  const LaunchFlags flags = LaunchFlagsOf(command);
  absl::StatusOr<std::string> workdir = ResolveWorkdir(flags.workdir);
  if (!workdir.ok()) return Fail(std::string(workdir.status().message()));
  absl::StatusOr<v1::LaunchRequest> launch = BuildLaunchRequest(flags, *workdir);
  if (!launch.ok()) return Fail(std::string(launch.status().message()));
  absl::StatusOr<v1::ExecRequest> exec =
      BuildExecRequest(command, flags.workdir.empty() ? std::nullopt : std::optional(*workdir),
                       /*session_id=*/"", /*one_shot=*/true);
  if (!exec.ok()) return Fail(std::string(exec.status().message()));
  absl::StatusOr<v1::SandboxHandle> handle = LaunchSession(stub, *launch, command.json);
  if (!handle.ok()) return Fail(std::string(handle.status().message()));
  exec->set_session_id(handle->session_id());
  return StreamRun(stub, *exec, command.json);
}

// `run --session=ID -- CMD`: one Exec in an existing session; nothing launched or destroyed.
int RunInSession(v1::SandboxBroker::Stub& stub, const CliCommand& command) {
  std::optional<std::string> guest_workdir;
  if (!command.workdir.empty()) {
    absl::StatusOr<std::string> workdir = ResolveWorkdir(command.workdir);
    if (!workdir.ok()) return Fail(std::string(workdir.status().message()));
    guest_workdir = *workdir;
  }
  absl::StatusOr<v1::ExecRequest> exec =
      BuildExecRequest(command, guest_workdir, command.session, /*one_shot=*/false);
  if (!exec.ok()) return Fail(std::string(exec.status().message()));
  return StreamRun(stub, *exec, command.json);
}

int RunSession(v1::SandboxBroker::Stub& stub, const CliCommand& command) {
  const SessionCommand session{.verb = command.form.substr(command.form.find(' ') + 1),
                               .session_id = command.operands.empty() ? "" : command.operands[0]};
  return RunSessionCommand(stub, session, LaunchFlagsOf(command), command.json);
}

// What each form of cli_forms.h runs, by its subcommand words.
struct Broker {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::SandboxBroker::Stub> stub;
};

struct Handler {
  absl::string_view subcommand;  // the form's first word
  int (*run)(Broker&, const CliCommand&);
};

constexpr Handler kHandlers[] = {
    {"probe", [](Broker& b, const CliCommand& c) { return Probe(*b.stub, c.json); }},
    {"run",
     [](Broker& b, const CliCommand& c) {
       return c.form == "run --session" ? RunInSession(*b.stub, c) : RunOneShot(*b.stub, c);
     }},
    {"session", [](Broker& b, const CliCommand& c) { return RunSession(*b.stub, c); }},
    {"policy",
     [](Broker& b, const CliCommand& c) {
       return RunPolicyCheck(b.channel, c.operands, c.mode, c.json);
     }},
    {"plan",
     [](Broker& b, const CliCommand& c) {
       return RunPlan(*b.stub, LaunchFlagsOf(c), c.platform, c.operands, c.json);
     }},
    {"term",
     [](Broker& b, const CliCommand& c) {
       std::string workdir;
       if (!c.workdir.empty()) {
         absl::StatusOr<std::string> resolved = ResolveWorkdir(c.workdir);
         if (!resolved.ok()) return Fail(std::string(resolved.status().message()));
         workdir = *resolved;
       }
       return RunTerm(*b.stub, TermFlags{c.backend, workdir, c.operands});
     }},
};

int Main(int argc, char** argv) {
  BlockCliStopSignals();
  std::variant<CliCommand, CliExit> parsed =
      ParseCommandLine(std::vector<std::string>(argv, argv + argc), VersionLine("sandboxctl"));
  if (const CliExit* exit = std::get_if<CliExit>(&parsed)) {
    SetJsonErrors(exit->json);
    std::cout << exit->out << std::flush;
    return exit->code == 0 ? 0 : Fail(exit->error, kUsageError);
  }
  const CliCommand& command = std::get<CliCommand>(parsed);
  SetJsonErrors(command.json);

  const std::string address = BrokerAddress(command.broker, getenv("CCSANDBOX_BROKER"));
  // Before any channel: it forks, and without a broker it still checks the host.
  if (command.form == "doctor") return RunDoctor(address, command.json);
  if (address.rfind("unix:", 0) == 0 && access(address.substr(5).c_str(), F_OK) != 0) {
    return Fail(absl::StrCat("no broker at ", address, " (socket missing)"));
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(policy::kMaxGrpcMessageBytes);
  args.SetMaxSendMessageSize(policy::kMaxGrpcMessageBytes);
  Broker broker;
  broker.channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  broker.stub = v1::SandboxBroker::NewStub(broker.channel);
  const absl::string_view subcommand =
      absl::string_view(command.form).substr(0, command.form.find(' '));
  for (const Handler& handler : kHandlers) {
    if (handler.subcommand == subcommand) return handler.run(broker, command);
  }
  return Fail(absl::StrCat("no handler for '", command.form, "' (a bug of sandboxctl)"));
}

}  // namespace
}  // namespace ccsandbox::broker

int main(int argc, char** argv) {
  const int code = ccsandbox::broker::Main(argc, argv);
  // Every RPC has finished: skip gRPC's library shutdown at exit, which costs more than
  // the whole run of a short command.
  std::cout.flush();
  std::cerr.flush();
  fflush(nullptr);
  _exit(code);
}
