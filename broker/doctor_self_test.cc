#include "broker/doctor_self_test.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "broker/cli_launch.h"
#include "broker/cli_signals.h"
#include "broker/cli_spec.h"
#include "grpcpp/grpcpp.h"

namespace ccsandbox::broker {
namespace {

constexpr char kProtectedText[] = "protected by the doctor's self-test\n";

// A bounded wait for the broker: a sandbox starts in well under a second on a healthy host.
std::chrono::system_clock::time_point Deadline(int seconds) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The command: the three denials, then the control write. `p` is the proxy's host:port from
// the HTTP proxy variable the session sets.
std::string Script(const SelfTestFacts& t, const std::string& control) {
  return absl::StrCat("echo changed > '", t.protected_file, "'\n", "touch '", t.env_file, "'\n",
                      "p=${HTTP_PROXY:-${http_proxy:-}}; p=${p#*://}; p=${p%%/*}\n",
                      "if exec 3<>\"/dev/tcp/${p%:*}/${p##*:}\"; then\n",
                      "  printf 'CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' '",
                      kSelfTestDeniedTarget, "' '", kSelfTestDeniedTarget, "' >&3\n",
                      "  read -r -t 20 answer <&3; echo \"proxy: $answer\"\n", "fi\n",
                      "echo written > '", control, "'\n");
}

// The calls a stop signal cancels.
struct Calls {
  grpc::ClientContext launch, exec;
};

void RunSelfTest(v1::SandboxBroker::Stub& stub, uid_t broker_uid, gid_t broker_gid, Calls& calls,
                 SelfTestFacts& t) {
  char dir[] = "/var/tmp/ccsandbox-doctor.XXXXXX";
  if (mkdtemp(dir) == nullptr) {
    t.error = absl::StrCat("mkdtemp /var/tmp: ", strerror(errno));
    return;
  }
  absl::Cleanup remove_tree = [&dir] {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  };
  chmod(dir, 0755);
  absl::StatusOr<std::string> workdir = ResolveWorkdir(dir);
  if (!workdir.ok()) {
    t.error = std::string(workdir.status().message());
    return;
  }
  t.workdir = *workdir;
  t.protected_file = t.workdir + "/protected.txt";
  t.env_file = t.workdir + "/.env";
  t.denied_target = kSelfTestDeniedTarget;
  const std::string control = t.workdir + "/control.txt";
  std::ofstream(t.protected_file) << kProtectedText;
  if (broker_uid != geteuid()) {
    if (geteuid() == 0) {
      (void)chown(dir, broker_uid, broker_gid);
      (void)chown(t.protected_file.c_str(), broker_uid, broker_gid);
    } else {
      // Not ours to give away: writable for the broker's uid for the few seconds of the test
      // (its random name is in no other directory than /var/tmp's).
      chmod(dir, 0777);
      chmod(t.protected_file.c_str(), 0666);
    }
  }

  v1::LaunchRequest launch;
  *launch.mutable_spec() = DefaultSpec(t.workdir, NewSessionId());
  launch.mutable_spec()->add_protected_paths(t.protected_file);
  launch.set_backend("native");
  const std::string session_id = launch.spec().session_id();
  v1::SandboxHandle handle;
  {
    calls.launch.set_deadline(Deadline(60));
    grpc::Status launched = stub.Launch(&calls.launch, launch, &handle);
    if (!launched.ok()) {
      t.error = absl::StrCat("Launch: ", launched.error_message());
      return;
    }
  }
  // The Exec destroys it when it ends; this covers an Exec that never started.
  absl::Cleanup destroy = [&stub, &session_id] {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(30));
    v1::SessionRequest request;
    request.set_session_id(session_id);
    v1::SandboxHandle ignored;
    (void)stub.Destroy(&ctx, request, &ignored);
  };

  v1::ExecRequest exec;
  exec.set_session_id(session_id);
  exec.add_argv("bash");
  exec.add_argv("-c");
  exec.add_argv(Script(t, control));
  exec.set_guest_workdir(t.workdir);
  exec.set_timeout_ms(60000);
  exec.set_destroy_session_after(true);
  calls.exec.set_deadline(Deadline(90));
  std::unique_ptr<grpc::ClientReader<v1::SandboxEvent>> reader = stub.Exec(&calls.exec, exec);
  v1::SandboxEvent event;
  bool exited = false;
  while (reader->Read(&event)) {
    if (event.has_violation()) t.violations.push_back(event.violation());
    if (event.has_exit()) exited = true;
    if (event.has_killed()) {
      t.error = absl::StrCat("the command was killed (", event.killed().reason(), ")");
    }
    if (event.has_error()) t.error = event.error().message();
  }
  grpc::Status finished = reader->Finish();
  if (!finished.ok() && t.error.empty()) t.error = absl::StrCat("Exec: ", finished.error_message());
  if (!exited && t.error.empty()) t.error = "the run ended without an exit event";
  t.control_write_landed = ReadAll(control) == "written\n";
  t.protected_unchanged = ReadAll(t.protected_file) == kProtectedText;
  struct stat st;
  t.env_absent = lstat(t.env_file.c_str(), &st) != 0;
}

}  // namespace

SelfTestFacts RunDoctorSelfTest(v1::SandboxBroker::Stub& stub, uid_t broker_uid, gid_t broker_gid) {
  SelfTestFacts t;
  Calls calls;
  {
    // Ctrl-C / SIGTERM / SIGHUP cancel the calls instead of ending sandboxctl, so the session
    // and the tree are still removed (RunSelfTest's clean-ups run while this is alive).
    CancelOnStopSignal stop([&calls] {
      calls.launch.TryCancel();
      calls.exec.TryCancel();
    });
    RunSelfTest(stub, broker_uid, broker_gid, calls, t);
    t.stop_signal = stop.signal();
  }
  if (t.stop_signal != 0) t.error = absl::StrCat("interrupted by signal ", t.stop_signal);
  return t;
}

}  // namespace ccsandbox::broker
