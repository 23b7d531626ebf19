#include "broker/microvm/probe_boot.h"

#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker::microvm {
namespace {

std::string TempDir() {
  const char* dir = getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

// A fake hypervisor: a shell script that records its pid in NAME.pid, then runs `body`.
std::string Script(const std::string& name, const std::string& body) {
  const std::string path = absl::StrCat(TempDir(), "/", name);
  std::ofstream(path) << "#!/bin/sh\necho $$ > " << path << ".pid\n" << body << "\n";
  chmod(path.c_str(), 0755);
  return path;
}

std::string File(const std::string& name) {
  const std::string path = absl::StrCat(TempDir(), "/", name);
  std::ofstream(path) << "not empty";
  return path;
}

MicrovmConfig Config(const std::string& hypervisor) {
  return MicrovmConfig{.hypervisor = hypervisor,
                       .kernel = File("kernel"),
                       .initrd = File("initrd"),
                       .accel = "tcg",
                       .boot_timeout = absl::Seconds(20)};
}

// The script's pid is gone: killed and reaped by ProbeBoot before it returned.
void ExpectGone(const std::string& script) {
  std::ifstream in(script + ".pid");
  std::string text;
  std::getline(in, text);
  int pid = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &pid)) << text;
  EXPECT_NE(kill(pid, 0), 0) << "hypervisor " << pid << " still there";
  EXPECT_EQ(errno, ESRCH);
}

TEST(ProbeBoot, TheMarkerEndsTheBootAndTheHypervisorIsKilled) {
  const std::string script =
      Script("marker", "echo booting; echo CCSANDBOX_MICROVM_PROBE_OK; exec sleep 600");
  const BootAttempt boot = ProbeBoot(Config(script), "tcg");
  EXPECT_TRUE(boot.reached_marker) << boot.failure;
  EXPECT_EQ(boot.accel, "tcg");
  EXPECT_GT(boot.took, absl::ZeroDuration());
  ExpectGone(script);
}

TEST(ProbeBoot, AnExitBeforeTheMarkerSaysItsStatusAndFirstErrorLine) {
  const std::string script =
      Script("exits", "echo starting; echo 'qemu: fatal error: no accelerator' >&2; exit 1");
  const BootAttempt boot = ProbeBoot(Config(script), "tcg");
  EXPECT_FALSE(boot.reached_marker);
  EXPECT_EQ(boot.failure, "exited with status 1 before the marker");
  EXPECT_EQ(boot.output_line, "qemu: fatal error: no accelerator");
  ExpectGone(script);
}

TEST(ProbeBoot, AHangIsGivenUpAtTheTimeoutAndKilledWithItsChildren) {
  // The script's child (sleep) is in its process group: killed with it.
  const std::string script = Script("hangs", "echo Probing EDD; sleep 600; echo never");
  MicrovmConfig config = Config(script);
  config.boot_timeout = absl::Seconds(1);
  const BootAttempt boot = ProbeBoot(config, "kvm");
  EXPECT_FALSE(boot.reached_marker);
  EXPECT_EQ(boot.failure, "no marker within 1s");
  EXPECT_EQ(boot.output_line, "Probing EDD");
  ExpectGone(script);
}

TEST(ProbeBoot, OutputClosedWithoutAnExitIsGivenUpToo) {
  const std::string script = Script("closes", "exec >/dev/null 2>&1; exec sleep 600");
  MicrovmConfig config = Config(script);
  config.boot_timeout = absl::Seconds(1);
  const BootAttempt boot = ProbeBoot(config, "tcg");
  EXPECT_FALSE(boot.reached_marker);
  EXPECT_TRUE(absl::StrContains(boot.failure, "closed its output and did not exit"))
      << boot.failure;
  ExpectGone(script);
}

TEST(GatherMicrovmFacts, NothingBootsWhenAPartIsMissing) {
  const std::string script = Script("never-run", "exit 0");
  MicrovmConfig config = Config(script);
  config.kernel = absl::StrCat(TempDir(), "/no-such-kernel");
  const MicrovmFacts facts = GatherMicrovmFacts(config);
  EXPECT_EQ(facts.kernel_problem, "not found");
  EXPECT_TRUE(facts.boots.empty());
  std::ifstream pid(script + ".pid");
  EXPECT_FALSE(pid.good()) << "the hypervisor ran";

  config = Config(File("not-executable"));
  EXPECT_EQ(GatherMicrovmFacts(config).hypervisor_problem, "not executable");
  EXPECT_TRUE(GatherMicrovmFacts(MicrovmConfig{}).boots.empty());
}

TEST(GatherMicrovmFacts, TcgOnlyBootsOnceWithTcg) {
  const MicrovmFacts facts =
      GatherMicrovmFacts(Config(Script("tcg", "echo CCSANDBOX_MICROVM_PROBE_OK; exec sleep 600")));
  ASSERT_EQ(facts.boots.size(), 1u);
  EXPECT_EQ(facts.boots[0].accel, "tcg");
  EXPECT_TRUE(facts.boots[0].reached_marker);
  EXPECT_EQ(facts.kvm_problem, "");  // not asked
}

TEST(GatherMicrovmFacts, AutoFallsBackToTcgWhenTheKvmBootFails) {
  MicrovmConfig config =
      Config(Script("auto",
                    "case \"$*\" in *'-accel kvm'*) echo 'KVM internal error'; exit 1;; esac\n"
                    "echo CCSANDBOX_MICROVM_PROBE_OK; exec sleep 600"));
  config.accel = "auto";
  const MicrovmFacts facts = GatherMicrovmFacts(config);
  ASSERT_FALSE(facts.boots.empty());
  EXPECT_EQ(facts.boots.back().accel, "tcg");
  EXPECT_TRUE(facts.boots.back().reached_marker) << facts.boots.back().failure;
  if (facts.kvm_problem.empty()) {  // KVM can create a VM here: it was tried first
    ASSERT_EQ(facts.boots.size(), 2u);
    EXPECT_EQ(facts.boots[0].accel, "kvm");
    EXPECT_EQ(facts.boots[0].output_line, "KVM internal error");
  } else {
    EXPECT_EQ(facts.boots.size(), 1u);
  }
}

TEST(KvmProblem, EitherUsableOrSaysWhichStepFailed) {
  const std::string problem = KvmProblem();
  std::cout << "KVM on this host: " << (problem.empty() ? "usable" : problem) << std::endl;
  EXPECT_TRUE(problem.empty() || absl::StartsWith(problem, "/dev/kvm: ") ||
              absl::StartsWith(problem, "KVM_GET_API_VERSION: ") ||
              absl::StartsWith(problem, "KVM_CREATE_VM: "))
      << problem;
}

}  // namespace
}  // namespace ccsandbox::broker::microvm
