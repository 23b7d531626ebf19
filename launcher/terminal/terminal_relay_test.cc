// The relay on real PTYs with real shells (the none backend's way: no sandbox around them).
#include "launcher/terminal/terminal_relay.h"

#include <signal.h>
#include <sys/wait.h>

#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "launcher/sandbox_process.h"
#include "launcher/terminal/pty.h"

namespace ccsandbox::launcher {
namespace {

// A shell on a PTY with its relay running on a thread; output collected for the test to wait on.
class Terminal {
 public:
  explicit Terminal(std::vector<std::string> argv, unsigned rows = 24, unsigned cols = 80) {
    absl::StatusOr<Pty> pty = OpenPty(rows, cols);
    EXPECT_TRUE(pty.ok()) << pty.status();
    ProcessSpec spec;
    spec.executable = argv[0];
    spec.argv = std::move(argv);
    spec.envp = {"PATH=/usr/bin:/bin", "TERM=dumb", "PS1=$ ", "HOME=/tmp"};
    spec.tty_fd = pty->slave.get();
    absl::StatusOr<std::unique_ptr<SandboxProcess>> process = SandboxProcess::Spawn(spec);
    EXPECT_TRUE(process.ok()) << process.status();
    process_ = *std::move(process);
    pty->slave.Reset();  // only the shell holds it now
    control_ = *RunControl::Create();
    relay_ = std::make_unique<TerminalRelay>(std::move(pty->master), *process_, process_->pid(),
                                             *control_, absl::Milliseconds(500));
    thread_ = std::thread([this] {
      TerminalRelay::End end = relay_->Run([this](absl::string_view out) {
        absl::MutexLock lock(&mu_);
        output_.append(out.data(), out.size());
        return true;
      });
      absl::MutexLock lock(&mu_);
      end_ = std::move(end);
    });
  }
  ~Terminal() {
    relay_->Hangup();
    thread_.join();
  }

  TerminalRelay& relay() { return *relay_; }
  RunControl& control() { return *control_; }

  // True once the output holds `text` (within 20 s: a loaded machine is slow, never hung).
  bool WaitFor(const std::string& text) {
    absl::MutexLock lock(&mu_);
    auto seen = [&] { return output_.find(text) != std::string::npos; };
    return mu_.AwaitWithTimeout(absl::Condition(&seen), absl::Seconds(20));
  }
  std::string Output() {
    absl::MutexLock lock(&mu_);
    return output_;
  }
  TerminalRelay::End AwaitEnd() {
    thread_.join();
    thread_ = std::thread([] {});
    absl::MutexLock lock(&mu_);
    return *std::move(end_);
  }

 private:
  std::unique_ptr<SandboxProcess> process_;
  std::unique_ptr<RunControl> control_;
  std::unique_ptr<TerminalRelay> relay_;
  std::thread thread_;
  absl::Mutex mu_;
  std::string output_ ABSL_GUARDED_BY(mu_);
  std::optional<TerminalRelay::End> end_ ABSL_GUARDED_BY(mu_);
};

int ExitCode(const TerminalRelay::End& end) {
  EXPECT_TRUE(end.wait_status.ok()) << end.wait_status.status();
  return WIFEXITED(*end.wait_status) ? WEXITSTATUS(*end.wait_status) : -1;
}

TEST(TerminalRelay, OutputAndExitCode) {
  Terminal t({"/bin/sh", "-c", "echo hello-from-the-pty; exit 3"});
  TerminalRelay::End end = t.AwaitEnd();
  EXPECT_EQ(ExitCode(end), 3);
  EXPECT_FALSE(end.cause.has_value());
  EXPECT_NE(t.Output().find("hello-from-the-pty"), std::string::npos) << t.Output();
  EXPECT_FALSE(t.relay().Write("late").ok());  // the terminal has ended
}

TEST(TerminalRelay, KeystrokesReachTheShellAndItIsATerminal) {
  Terminal t({"/bin/bash", "--norc", "--noprofile", "-i"});
  ASSERT_TRUE(t.relay().Write("test -t 0 && echo tty-$((6*7))\n").ok());
  EXPECT_TRUE(t.WaitFor("tty-42")) << t.Output();
  ASSERT_TRUE(t.relay().Write("exit 5\n").ok());
  EXPECT_EQ(ExitCode(t.AwaitEnd()), 5);
}

TEST(TerminalRelay, ResizeReachesTheShell) {
  Terminal t({"/bin/bash", "--norc", "--noprofile", "-i"}, 24, 80);
  ASSERT_TRUE(t.relay().Write("echo size-$(stty size | tr ' ' x)\n").ok());
  EXPECT_TRUE(t.WaitFor("size-24x80")) << t.Output();
  ASSERT_TRUE(t.relay().Resize(40, 120).ok());
  ASSERT_TRUE(t.relay().Write("echo size-$(stty size | tr ' ' x)\n").ok());
  EXPECT_TRUE(t.WaitFor("size-40x120")) << t.Output();
  EXPECT_EQ(t.relay().Resize(0, 80).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(t.relay().Resize(24, 100000).code(), absl::StatusCode::kInvalidArgument);
}

// ^C goes to the foreground job through the line discipline; the shell lives on.
TEST(TerminalRelay, ControlCInterruptsTheForegroundJobNotTheShell) {
  Terminal t({"/bin/bash", "--norc", "--noprofile", "-i"});
  // Arithmetic tells the job's output from the echo of what was typed.
  ASSERT_TRUE(t.relay()
                  .Write("sh -c 'trap \"echo got-$((1+2)); exit 9\" INT; echo ready-$((0+1)); "
                         "while :; do sleep 0.1; done'\n")
                  .ok());
  ASSERT_TRUE(t.WaitFor("ready-1")) << t.Output();
  ASSERT_TRUE(t.relay().Write("\x03").ok());
  EXPECT_TRUE(t.WaitFor("got-3")) << t.Output();
  ASSERT_TRUE(t.relay().Write("echo rc-$(($? + 0))\n").ok());
  EXPECT_TRUE(t.WaitFor("rc-9")) << t.Output();
  // The same through the Signal input.
  ASSERT_TRUE(t.relay()
                  .Write("sh -c 'trap \"echo got-$((2+3)); exit 8\" INT; echo ready-$((0+2)); "
                         "while :; do sleep 0.1; done'\n")
                  .ok());
  ASSERT_TRUE(t.WaitFor("ready-2")) << t.Output();
  ASSERT_TRUE(t.relay().Signal(SIGINT).ok());
  EXPECT_TRUE(t.WaitFor("got-5")) << t.Output();
  ASSERT_TRUE(t.relay().Write("echo alive-$((2+2)); exit 7\n").ok());
  EXPECT_EQ(ExitCode(t.AwaitEnd()), 7) << t.Output();
  EXPECT_NE(t.Output().find("alive-4"), std::string::npos) << t.Output();
}

TEST(TerminalRelay, OnlyTerminalSignalsAreSent) {
  Terminal t({"/bin/bash", "--norc", "--noprofile", "-i"});
  EXPECT_EQ(t.relay().Signal(SIGUSR1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(t.relay().Signal(SIGSTOP).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(t.relay().Signal(0).code(), absl::StatusCode::kInvalidArgument);
}

// A client that goes away leaves nothing running: the shell and its background job end.
TEST(TerminalRelay, HangupEndsTheShellAndItsBackgroundJobs) {
  Terminal t({"/bin/bash", "--norc", "--noprofile", "-i"});
  ASSERT_TRUE(t.relay().Write("trap '' HUP; sleep 1000 & echo bg=$(($! + 0))=d$((0))ne\n").ok());
  ASSERT_TRUE(t.WaitFor("=d0ne\r\n")) << t.Output();
  const std::string out = t.Output();
  const size_t done = out.find("=d0ne\r\n");
  const size_t at = out.rfind("bg=", done) + 3;
  int bg = 0;
  ASSERT_TRUE(absl::SimpleAtoi(out.substr(at, done - at), &bg)) << out;
  ASSERT_EQ(kill(bg, 0), 0);
  t.relay().Hangup();
  TerminalRelay::End end = t.AwaitEnd();
  ASSERT_TRUE(end.cause.has_value());
  EXPECT_EQ(end.cause->reason, kKilledStopped);
  // Reaped by bash's parent (us) or re-parented to init and reaped there: gone either way.
  for (int i = 0; i < 200 && kill(bg, 0) == 0; ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_NE(kill(bg, 0), 0) << "the background job survived the hang-up";
}

// The broker's Kill: SIGKILL through the run's control ends the terminal with its cause.
TEST(TerminalRelay, KillThroughTheRunControl) {
  Terminal t({"/bin/bash", "--norc", "--noprofile", "-i"});
  t.control().RequestSignal(SIGKILL, KillCause{std::string(kKilledStopped), "Kill"});
  TerminalRelay::End end = t.AwaitEnd();
  ASSERT_TRUE(end.wait_status.ok());
  EXPECT_TRUE(WIFSIGNALED(*end.wait_status));
  ASSERT_TRUE(end.cause.has_value());
  EXPECT_EQ(end.cause->detail, "Kill");
}

}  // namespace
}  // namespace ccsandbox::launcher
