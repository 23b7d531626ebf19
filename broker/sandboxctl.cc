// sandboxctl: the command-line client of the broker.
//
//   sandboxctl --broker=unix:PATH probe [--json]
//   sandboxctl --broker=unix:PATH run [--spec=FILE.json] [--workdir=DIR] [--timeout=SECONDS]
//              [--backend=NAME] [--stdin] [--no-filename-denies] [--json] -- CMD [ARGS...]
//   sandboxctl --broker=unix:PATH policy check --mode=MODE [--json] -- 'COMMAND LINE'
//
// run passes the command's output through live, reports violations on stderr and exits
// with the command's code (128+signal when killed, 125 when sandboxctl, the broker or the
// launcher failed — with a one-line message).
// policy check prints what MODE (chat, review, plan, orchestrate) decides for the command line
// (the words after -- joined with spaces) and exits 0 allow, 1 prompt, 2 deny, 125 on errors.
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/dashed_flags.h"
#include "broker/cli_events.h"
#include "broker/cli_exit.h"
#include "broker/cli_policy.h"
#include "broker/cli_spec.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "policy/plan/input_limits.h"
#include "proto/sandbox.grpc.pb.h"

ABSL_FLAG(std::string, broker, "",
          "broker address, e.g. unix:/run/ccsandbox/broker.sock "
          "(default: $CCSANDBOX_BROKER)");
ABSL_FLAG(bool, json, false, "print one JSON object per line");
ABSL_FLAG(std::string, spec, "", "run: SandboxSpec as proto3 JSON");
ABSL_FLAG(std::string, workdir, "", "run: working directory (default: the current one)");
ABSL_FLAG(double, timeout, 0, "run: kill the command after SECONDS (0 = never)");
ABSL_FLAG(std::string, backend, "", "run: none, native, docker or microvm (default: the host's)");
ABSL_FLAG(bool, stdin, false, "run: send this process's stdin to the command");
ABSL_FLAG(bool, no_filename_denies, false,
          "run: explicitly accept a policy WITHOUT the .env/*.key/*.pem create denies "
          "(writeDenyPatterns: []); Linux refuses writable runs that need them until "
          "create-time enforcement is available");
ABSL_FLAG(std::string, mode, "", "policy check: chat, review, plan or orchestrate");

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

std::string NewSessionId() {
  std::random_device rd;
  return absl::StrFormat("cli-%d-%08x", getpid(), rd());
}

// The Launch and Exec requests of one `run`, complete and checked before anything is sent: a
// refusal leaves no session behind.
struct RunRequests {
  v1::LaunchRequest launch;
  v1::ExecRequest exec;
};

absl::StatusOr<std::string> ResolveWorkdir() {
  std::string workdir = absl::GetFlag(FLAGS_workdir);
  char resolved[PATH_MAX];
  if (workdir.empty()) {
    if (getcwd(resolved, sizeof(resolved)) == nullptr) {
      return absl::FailedPreconditionError("cannot read the current directory");
    }
    return std::string(resolved);
  }
  if (realpath(workdir.c_str(), resolved) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--workdir: '", workdir, "' does not exist"));
  }
  return std::string(resolved);
}

absl::StatusOr<RunRequests> BuildRunRequests(const std::vector<std::string>& command) {
  absl::StatusOr<std::string> workdir = ResolveWorkdir();
  if (!workdir.ok()) return workdir.status();
  const double timeout = absl::GetFlag(FLAGS_timeout);
  if (!(timeout >= 0) || timeout * 1000 > static_cast<double>(policy::kMaxTimeoutMs)) {
    return absl::InvalidArgumentError("--timeout: from 0 (none) to 604800 seconds (7 days)");
  }

  RunRequests r;
  const std::string spec_file = absl::GetFlag(FLAGS_spec);
  if (spec_file.empty()) {
    *r.launch.mutable_spec() = DefaultSpec(*workdir, NewSessionId());
  } else {
    absl::StatusOr<v1::SandboxSpec> spec = LoadSpecFile(spec_file);
    if (!spec.ok()) return spec.status();
    *r.launch.mutable_spec() = *spec;
    if (r.launch.spec().session_id().empty()) {
      r.launch.mutable_spec()->set_session_id(NewSessionId());
    }
  }
  r.launch.set_backend(absl::GetFlag(FLAGS_backend));
  if (absl::GetFlag(FLAGS_no_filename_denies)) {
    r.launch.mutable_spec()->mutable_write_deny_patterns()->clear_patterns();
  }

  for (const std::string& arg : command) r.exec.add_argv(arg);
  if (!absl::GetFlag(FLAGS_workdir).empty()) r.exec.set_guest_workdir(*workdir);
  r.exec.set_timeout_ms(static_cast<uint64_t>(timeout * 1000));
  // If this process dies (even SIGKILL), the broker still tears the session down.
  r.exec.set_destroy_session_after(true);
  if (absl::GetFlag(FLAGS_stdin)) {
    absl::StatusOr<std::string> input = ReadStdin();
    if (!input.ok()) return input.status();
    r.exec.set_stdin(*std::move(input));
  }
  if (absl::Status valid = policy::CheckSpecLimits(r.launch.spec()); !valid.ok()) return valid;
  if (absl::Status valid = policy::CheckExecLimits(r.exec); !valid.ok()) return valid;
  return r;
}

// Launches the session and says on stderr when the run will be weakened or unsandboxed.
absl::StatusOr<v1::SandboxHandle> LaunchSession(v1::SandboxBroker::Stub& stub,
                                                const v1::LaunchRequest& launch, bool json) {
  v1::SandboxHandle handle;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::Status status = stub.Launch(&ctx, launch, &handle);
  if (!status.ok()) return absl::UnavailableError(status.error_message());
  if (json) return handle;
  const auto& fields = handle.details().fields();
  auto filenames = fields.find("filenamePolicy");
  if (filenames != fields.end() && filenames->second.string_value().rfind("WEAKENED", 0) == 0) {
    std::cerr << "sandboxctl: filename-pattern denies " << filenames->second.string_value()
              << std::endl;
  }
  if (handle.backend() != v1::SANDBOX_BACKEND_NATIVE) {
    auto note = fields.find("backendNote");
    std::cerr << "sandboxctl: running UNSANDBOXED ("
              << (note == fields.end() ? "backend none" : note->second.string_value()) << ")"
              << std::endl;
  }
  return handle;
}

// Runs `exec`, printing its events, and returns the exit code sandboxctl should end with.
int StreamRun(v1::SandboxBroker::Stub& stub, const v1::ExecRequest& exec, bool json) {
  // Ctrl-C / SIGTERM: cancel the run (the broker kills the sandbox), then tear down.
  grpc::ClientContext exec_ctx;
  std::atomic<int> stop_signal{0};
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop_signals, sig);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::thread([&stop_signal, &exec_ctx, stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    stop_signal = sig;
    exec_ctx.TryCancel();
  }).detach();

  std::optional<int> code;
  std::string tool_error;
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
    grpc::Status status = reader->Finish();
    if (!status.ok() && stop_signal == 0) tool_error = status.error_message();
  }

  // No Destroy: the broker destroyed the session when the Exec ended (destroy_session_after).

  if (stop_signal != 0) return 128 + stop_signal;
  if (!tool_error.empty()) return Fail(tool_error);
  if (!code.has_value()) return Fail("the run ended without an exit event");
  return *code;
}

int Run(v1::SandboxBroker::Stub& stub, const std::vector<std::string>& command, bool json) {
  if (command.empty()) return Fail("run: no command given (sandboxctl run -- CMD [ARGS...])");
  absl::StatusOr<RunRequests> requests = BuildRunRequests(command);
  if (!requests.ok()) return Fail(std::string(requests.status().message()));
  absl::StatusOr<v1::SandboxHandle> handle = LaunchSession(stub, requests->launch, json);
  if (!handle.ok()) return Fail(std::string(handle.status().message()));
  requests->exec.set_session_id(handle->session_id());
  return StreamRun(stub, requests->exec, json);
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "sandboxctl --broker=unix:PATH probe [--json]\n"
      "  sandboxctl --broker=unix:PATH run [--spec=FILE.json] [--workdir=DIR] "
      "[--timeout=SECONDS] [--json] -- CMD [ARGS...]\n"
      "  sandboxctl --broker=unix:PATH policy check --mode=MODE [--json] -- 'COMMAND LINE'");
  const std::vector<std::string> positional = ParseDashedCommandLine(argc, argv);
  if (positional.size() < 2) {
    return Fail("missing subcommand: probe, run or policy (see --help)");
  }
  const std::string subcommand = positional[1];
  std::string address = absl::GetFlag(FLAGS_broker);
  if (address.empty()) {
    const char* env = getenv("CCSANDBOX_BROKER");
    if (env != nullptr) address = env;
  }
  if (address.empty()) return Fail("--broker is required (or set CCSANDBOX_BROKER)");
  if (address.rfind("unix:", 0) == 0 && access(address.substr(5).c_str(), F_OK) != 0) {
    return Fail(absl::StrCat("no broker at ", address, " (socket missing)"));
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(policy::kMaxGrpcMessageBytes);
  args.SetMaxSendMessageSize(policy::kMaxGrpcMessageBytes);
  auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  std::unique_ptr<v1::SandboxBroker::Stub> stub = v1::SandboxBroker::NewStub(channel);
  const bool json = absl::GetFlag(FLAGS_json);
  if (subcommand == "probe") {
    if (positional.size() > 2) return Fail("probe takes no arguments");
    return Probe(*stub, json);
  }
  if (subcommand == "run") {
    return Run(*stub, std::vector<std::string>(positional.begin() + 2, positional.end()), json);
  }
  if (subcommand == "policy") {
    return RunPolicyCommand(channel,
                            std::vector<std::string>(positional.begin() + 2, positional.end()),
                            absl::GetFlag(FLAGS_mode), json);
  }
  return Fail(absl::StrCat("unknown subcommand '", subcommand, "': expected probe, run or policy"));
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
