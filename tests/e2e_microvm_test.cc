// The microVM contract against the real daemons (docs/microvm.md): the broker's boot probe
// names the missing part (flags, hypervisor, kernel, a failed boot, a session image), an
// explicit microvm Launch on such a host is FAILED_PRECONDITION saying so, never a session
// labelled microvm. The last test probe-boots the real image (scripts/microvm-image.sh) with
// qemu; microvm sessions themselves are e2e_microvm_session_test.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::testing {
namespace {

// Where scripts/install-deps.sh builds the probe image (scripts/microvm-image.sh).
constexpr char kImageDir[] = "/var/cache/ccsandbox/microvm";
constexpr char kQemu[] = "/usr/bin/qemu-system-x86_64";

std::string TempDir() {
  const char* dir = getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

// A fake hypervisor: a shell script running `body` (it is handed qemu's arguments).
std::string Hypervisor(const std::string& name, const std::string& body) {
  const std::string path = absl::StrCat(TempDir(), "/", name);
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  chmod(path.c_str(), 0755);
  return path;
}

std::string SomeFile(const std::string& name) {
  const std::string path = absl::StrCat(TempDir(), "/", name);
  std::ofstream(path) << "not a kernel";
  return path;
}

// The command lines of `parent`'s live children (from /proc: their stat's ppid).
std::vector<std::string> ChildrenOf(pid_t parent) {
  std::vector<std::string> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* entry = readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.empty() || !isdigit(name[0])) continue;
    const std::string stat = ReadFile("/proc/" + name + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::vector<std::string> fields = absl::StrSplit(stat.substr(paren + 2), ' ');
    int ppid = 0;
    if (fields.size() < 2 || fields[0] == "Z" || !absl::SimpleAtoi(fields[1], &ppid) ||
        ppid != parent) {
      continue;
    }
    std::string cmdline = ReadFile("/proc/" + name + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    children.push_back(cmdline);
  }
  closedir(proc);
  return children;
}

class MicrovmTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> broker_flags) {
    absl::StatusOr<std::unique_ptr<Daemons>> started =
        Daemons::Start({.broker_flags = std::move(broker_flags)});
    ASSERT_TRUE(started.ok()) << started.status();
    daemons_ = *std::move(started);
    stub_ = v1::SandboxBroker::NewStub(
        grpc::CreateChannel(daemons_->broker_address(), grpc::InsecureChannelCredentials()));
  }

  v1::ProbeResult Probe() {
    grpc::ClientContext context;
    v1::ProbeResponse response;
    EXPECT_TRUE(stub_->Probe(&context, v1::ProbeRequest(), &response).ok());
    return response.microvm();
  }

  grpc::Status Launch(const std::string& backend) {
    v1::LaunchRequest request;
    request.set_backend(backend);
    request.mutable_spec()->set_session_id("vm");
    grpc::ClientContext context;
    v1::SandboxHandle handle;
    return stub_->Launch(&context, request, &handle);
  }

  // No session was made for the refused Launch.
  void ExpectNoSession() {
    grpc::ClientContext context;
    v1::ListSessionsResponse sessions;
    ASSERT_TRUE(stub_->ListSessions(&context, v1::ListSessionsRequest(), &sessions).ok());
    EXPECT_EQ(sessions.sessions_size(), 0) << sessions.DebugString();
  }

  std::unique_ptr<Daemons> daemons_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
};

TEST_F(MicrovmTest, UnconfiguredNamesTheMissingHypervisor) {
  Start({});
  const v1::ProbeResult probe = Probe();
  EXPECT_FALSE(probe.available());
  ASSERT_EQ(probe.missing_size(), 1);
  EXPECT_EQ(probe.missing(0), "hypervisor");
  const grpc::Status status = Launch("microvm");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "no hypervisor (--microvm-hypervisor)"))
      << status.error_message();
  ExpectNoSession();
  // The default of a Launch (command wrapping) is never upgraded to a VM, nor broken by it.
  EXPECT_TRUE(Launch("").ok());
}

TEST_F(MicrovmTest, AMissingKernelIsNamedAndNothingBoots) {
  const std::string ran = absl::StrCat(TempDir(), "/hypervisor-ran");
  Start({"--microvm-hypervisor=" + Hypervisor("qemu-kernel", "touch " + ran),
         "--microvm-kernel=/nonexistent/vmlinuz", "--microvm-initrd=" + SomeFile("image")});
  const grpc::Status status = Launch("microvm");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(
      absl::StrContains(status.error_message(), "guest kernel /nonexistent/vmlinuz: not found"))
      << status.error_message();
  EXPECT_EQ(Probe().missing(0), "kernel");
  EXPECT_FALSE(PathExists(ran)) << "the hypervisor was started without a kernel";
  EXPECT_TRUE(absl::StrContains(daemons_->BrokerLog(), "microVM unavailable (guest kernel"))
      << daemons_->BrokerLog();
  ExpectNoSession();
}

TEST_F(MicrovmTest, AHypervisorThatCannotBootNamesTheFailedBoot) {
  Start({"--microvm-hypervisor=" +
             Hypervisor("qemu-fails", "echo 'qemu-system-x86_64: fatal: cannot boot' >&2; exit 1"),
         "--microvm-kernel=" + SomeFile("kernel"), "--microvm-initrd=" + SomeFile("image")});
  const grpc::Status status = Launch("microvm");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  // auto tries kvm first where KVM can create a VM; tcg is always the last attempt.
  EXPECT_TRUE(absl::StrContains(status.error_message(), "probe boot failed: ") &&
              absl::StrContains(status.error_message(),
                                "tcg: exited with status 1 before the marker "
                                "('qemu-system-x86_64: fatal: cannot boot')"))
      << status.error_message();
  EXPECT_EQ(Probe().missing(0), "boot");
  ExpectNoSession();
}

TEST_F(MicrovmTest, ABootableHostWithoutTheSessionImageIsRefusedNeverAPretendVm) {
  // This "hypervisor" prints the marker: the probe boot passes, but there is no session image
  // beside the probe image, so no session can run: said at boot and at every Launch.
  Start({"--microvm-hypervisor=" +
             Hypervisor("qemu-boots", "echo CCSANDBOX_MICROVM_PROBE_OK; exec sleep 600"),
         "--microvm-kernel=" + SomeFile("kernel"), "--microvm-initrd=" + SomeFile("image"),
         "--microvm-accel=tcg"});
  const v1::ProbeResult probe = Probe();
  EXPECT_FALSE(probe.available()) << probe.note();
  EXPECT_TRUE(absl::StrContains(probe.note(), "marker with tcg")) << probe.note();
  EXPECT_TRUE(absl::StrContains(probe.note(), "its session runtime cannot start: --microvm-image"))
      << probe.note();
  const grpc::Status status = Launch("microvm");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "agent-initrd.img' cannot be read"))
      << status.error_message();
  ExpectNoSession();
  ProgramResult run =
      daemons_->Sandboxctl({"run", "--backend=microvm", "--", "true"}, daemons_->MakeWorkdir());
  EXPECT_NE(run.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(run.err, "session runtime cannot start")) << run.err;
  EXPECT_TRUE(absl::StrContains(daemons_->Sandboxctl({"probe"}).out, "microVM unavailable (probe"));
  // The probe's "hypervisor" (its sleep) was killed once it printed the marker.
  EXPECT_THAT(ChildrenOf(daemons_->broker_pid()), ::testing::IsEmpty());
}

TEST_F(MicrovmTest, TheRealProbeImageBootsUnderQemu) {
  const std::string kernel = absl::StrCat(kImageDir, "/vmlinuz");
  const std::string image = absl::StrCat(kImageDir, "/probe-initrd.img");
  if (!PathExists(kQemu) || !PathExists(kernel) || !PathExists(image)) {
    CCSANDBOX_SKIP_OR_FAIL_IN_CI(absl::StrCat("no qemu or probe image in ", kImageDir,
                                              " (scripts/install-deps.sh builds it)"));
  }
  // tcg: where KVM is present but cannot run the guest (these hosts: a KVM boot hangs until
  // its timeout), auto would spend the whole timeout on kvm first, and the broker probes
  // before it listens (the fixture waits 30 s for that; TCG boots in ~2 s on a quiet host).
  Start({absl::StrCat("--microvm-hypervisor=", kQemu), "--microvm-kernel=" + kernel,
         "--microvm-initrd=" + image, "--microvm-accel=tcg", "--microvm-boot-timeout=25s"});
  const v1::ProbeResult probe = Probe();
  std::cout << "microVM probe: " << probe.note() << std::endl;
  EXPECT_TRUE(probe.available()) << probe.note();
  EXPECT_TRUE(absl::StrContains(probe.note(), "probe boot reached its marker with "))
      << probe.note();
  EXPECT_THAT(ChildrenOf(daemons_->broker_pid()), ::testing::IsEmpty())
      << "a probe qemu outlived the probe";
}

}  // namespace
}  // namespace ccsandbox::testing
