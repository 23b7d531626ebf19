// Terminals in a microVM against real qemu (tcg) and the session image: a shell on the guest's
// PTY, chrooted in the guest's root built from the host's shares, driven as a person would
// (type, read the screen, resize, ^C, exit, hang up); the guest runs nothing of it afterwards.
// A second guest, without a layout, panics under its terminal.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/real_host_view.h"
#include "broker/microvm/guest_layout.h"
#include "broker/microvm/qemu_runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/plan/bwrap_argv.h"
#include "proto/launcher.pb.h"
#include "proto/sandbox.pb.h"
#include "tests/microvm_test_config.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::testing {
namespace {

using broker::microvm::Guest;
using broker::microvm::GuestCommand;
using broker::microvm::GuestLayout;
using broker::microvm::GuestLayoutFromPlan;
using broker::microvm::GuestTerminal;
using broker::microvm::QemuRuntime;
using broker::microvm::QemuRuntimeConfig;
using broker::microvm::TerminalCallbacks;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

// Under tcg on a loaded host a guest is slow, never this slow: a wait this long has failed.
constexpr absl::Duration kPatience = absl::Seconds(60);

// What a terminal has shown, from the runtime's thread.
class Screen {
 public:
  TerminalCallbacks Callbacks() {
    return {.output =
                [this](const std::string& bytes) {
                  absl::MutexLock lock(&mu_);
                  text_ += bytes;
                },
            .exited =
                [this](int code, const std::string& cause) {
                  absl::MutexLock lock(&mu_);
                  ++exits_;
                  code_ = code;
                  cause_ = cause;
                }};
  }
  // Waits until the output after the last thing waited for shows `want`; false (and the screen
  // in the failure) when it never does.
  bool WaitFor(const std::string& want) {
    absl::MutexLock lock(&mu_);
    Looking looking{this, &want};
    mu_.AwaitWithTimeout(absl::Condition(&Shown, &looking), kPatience);
    const size_t at = text_.find(want, seen_);
    if (at == std::string::npos) {
      ADD_FAILURE() << "never shown: '" << want << "'; the screen after the last match:\n"
                    << text_.substr(seen_);
      return false;
    }
    seen_ = at + want.size();
    return true;
  }
  // The exit (code, cause), once it came.
  std::optional<std::pair<int, std::string>> WaitExit() {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&Exited, this), kPatience);
    if (exits_ == 0) return std::nullopt;
    return std::pair{code_, cause_};
  }
  int exits() {
    absl::MutexLock lock(&mu_);
    return exits_;
  }

 private:
  struct Looking {
    Screen* screen;
    const std::string* want;
  };
  static bool Shown(Looking* l) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return l->screen->text_.find(*l->want, l->screen->seen_) != std::string::npos ||
           l->screen->exits_ > 0;
  }
  static bool Exited(Screen* s) ABSL_NO_THREAD_SAFETY_ANALYSIS { return s->exits_ > 0; }

  absl::Mutex mu_;
  std::string text_ ABSL_GUARDED_BY(mu_);
  size_t seen_ ABSL_GUARDED_BY(mu_) = 0;
  int exits_ ABSL_GUARDED_BY(mu_) = 0;
  int code_ ABSL_GUARDED_BY(mu_) = 0;
  std::string cause_ ABSL_GUARDED_BY(mu_);
};

// `script` under the guest's sh, through Exec: its stdout.
std::string Sh(Guest& guest, const std::string& script) {
  std::string out;
  const absl::Status status =
      guest.Exec({.argv = {"sh", "-c", script}, .env = {{"PATH", "/usr/bin:/bin"}}},
                 [&](const v1::SandboxEvent& event) {
                   if (event.has_stdout()) out += event.stdout();
                   return true;
                 });
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

// The guest's processes other than the agent and the one listing them (kernel threads have no
// command line), each as "pid command".
constexpr char kListProcesses[] =
    "for d in /proc/[0-9]*; do p=${d#/proc/}; [ \"$p\" = 1 ] || [ \"$p\" = $$ ] && continue; "
    "c=$(tr '\\0' ' ' < $d/cmdline 2>/dev/null); [ -n \"$c\" ] && echo \"$p $c\"; done; "
    "true";

class MicrovmTerminalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char root[] = "/tmp/ccsandbox-mtt-XXXXXX";
    ASSERT_NE(mkdtemp(root), nullptr);
    root_ = root;
    config_ = MicrovmTestConfig(root_ + "/state");
    if (const std::string missing = MissingMicrovmImage(config_); !missing.empty()) {
      CCSANDBOX_SKIP_OR_FAIL_IN_CI(missing);
    }
    if (getuid() != 0) CCSANDBOX_SKIP_OR_FAIL_IN_CI("needs root (9p shares of any host file)");
    work_ = root_ + "/work";
    std::filesystem::create_directories(config_.state_root);
    std::filesystem::create_directories(work_);
    std::ofstream(work_ + "/marker") << "from-the-host-share\n";
  }
  void TearDown() override {
    if (!root_.empty()) std::filesystem::remove_all(root_);
  }

  std::string root_, work_;
  QemuRuntimeConfig config_;
};

TEST_F(MicrovmTerminalTest, AShellOnTheGuestsPty) {
  v1::LaunchPlan plan;
  v1::PlanMount* mount = plan.add_mounts();
  mount->set_host_path(work_);
  mount->set_guest_path(work_);
  plan.set_workdir(work_);
  RealHostView host;
  absl::StatusOr<GuestLayout> layout =
      GuestLayoutFromPlan(plan, policy::DefaultSystemRoDirs(), host);
  ASSERT_TRUE(layout.ok()) << layout.status();
  QemuRuntime runtime(config_);
  absl::StatusOr<std::unique_ptr<Guest>> started = runtime.Start({.layout = *layout});
  ASSERT_TRUE(started.ok()) << started.status();
  Guest& guest = **started;
  // The host's shell from the shares ($SHELL), with a prompt this test knows.
  const GuestCommand shell{.env = {{"PATH", "/usr/bin:/bin"},
                                   {"PS1", "guest-prompt$ "},
                                   {"SHELL", "/bin/sh"},
                                   {"TERM", "dumb"}}};

  Screen screen;
  absl::StatusOr<std::unique_ptr<GuestTerminal>> opened =
      guest.Terminal(shell, 24, 80, screen.Callbacks());
  ASSERT_TRUE(opened.ok()) << opened.status();
  GuestTerminal& terminal = **opened;
  std::string cause;
  EXPECT_EQ(guest.State(&cause), v1::SANDBOX_STATE_ACTIVE) << cause;
  // One run or terminal at a time.
  EXPECT_EQ(guest.Exec({.argv = {"true"}}, [](const v1::SandboxEvent&) { return true; }).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(guest.Terminal(shell, 24, 80, Screen().Callbacks()).status().code(),
            absl::StatusCode::kFailedPrecondition);

  // As a person types: at the prompt. The PTY echoes what is typed; what is waited for is only
  // in the output.
  const auto type = [&](const std::string& line) {
    ASSERT_TRUE(screen.WaitFor("guest-prompt$ "));
    ASSERT_TRUE(terminal.Input(line + "\n").ok());
  };
  type("echo $((40+2))");
  EXPECT_TRUE(screen.WaitFor("\r\n42\r\n"));

  // Chrooted in the guest's root: the layout's share in the workdir, the initramfs out of sight,
  // the PTY its own.
  type("pwd; cat marker; test -e /ccsandbox-agent && echo vis''ible || echo hid''den; tty");
  EXPECT_TRUE(screen.WaitFor(absl::StrCat("\r\n", work_,
                                          "\r\nfrom-the-host-share\r\nhidden\r\n"
                                          "/dev/pts/0\r\n")));

  // The opening size, then a resize.
  type("stty size");
  EXPECT_TRUE(screen.WaitFor("\r\n24 80\r\n"));
  ASSERT_TRUE(terminal.Resize(40, 100).ok());
  type("stty size");
  EXPECT_TRUE(screen.WaitFor("\r\n40 100\r\n"));
  EXPECT_EQ(terminal.Resize(0, 80).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(terminal.Resize(24, 1001).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(terminal.Signal(SIGSEGV).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(terminal.Input(std::string((1 << 20) + 1, 'x')).code(),
            absl::StatusCode::kInvalidArgument);

  // ^C as a signal reaches the foreground job (once it printed, it is the foreground): the
  // prompt is back well before the sleep would end (kPatience < 100 s), and the shell lives on.
  type("sh -c 'echo st''arted; exec sleep 100'");
  ASSERT_TRUE(screen.WaitFor("started\r\n"));
  ASSERT_TRUE(terminal.Signal(SIGINT).ok());
  type("echo ali''ve");
  EXPECT_TRUE(screen.WaitFor("\r\nalive\r\n"));
  ASSERT_TRUE(screen.WaitFor("guest-prompt$ "));

  ASSERT_TRUE(terminal.Input("exit 7\n").ok());
  std::optional<std::pair<int, std::string>> exited = screen.WaitExit();
  ASSERT_TRUE(exited.has_value());
  EXPECT_EQ(exited->first, 7);
  EXPECT_EQ(exited->second, "");
  EXPECT_EQ(terminal.Input("echo late\n").code(), absl::StatusCode::kFailedPrecondition);
  opened->reset();
  EXPECT_EQ(screen.exits(), 1);
  EXPECT_EQ(guest.State(&cause), v1::SANDBOX_STATE_WARM) << cause;

  // A hung-up shell ends by SIGHUP (or SIGKILL after the grace), and nothing it started is left
  // in the guest: not its background job, not one that left its session.
  Screen hung;
  opened = guest.Terminal(shell, 24, 80, hung.Callbacks());
  ASSERT_TRUE(opened.ok()) << opened.status();
  ASSERT_TRUE(hung.WaitFor("guest-prompt$ "));
  ASSERT_TRUE((*opened)->Input("sleep 1001 & setsid sleep 1002 & echo bg''=$!\n").ok());
  ASSERT_TRUE(hung.WaitFor("bg="));
  (*opened)->Close(absl::Seconds(2));
  exited = hung.WaitExit();
  ASSERT_TRUE(exited.has_value());
  EXPECT_THAT(exited->first, AnyOf(-SIGHUP, -SIGKILL));
  EXPECT_EQ(exited->second, "");
  opened->reset();
  EXPECT_EQ(guest.State(&cause), v1::SANDBOX_STATE_WARM) << cause;
  const std::string left = Sh(guest, kListProcesses);
  EXPECT_THAT(left, Not(HasSubstr("sleep"))) << left;
  // The listing sees a process when there is one.
  EXPECT_THAT(Sh(guest, absl::StrCat("sleep 1003 >/dev/null 2>&1 & ", kListProcesses, "; kill $!")),
              HasSubstr("sleep 1003"));

  // A command the guest cannot start: its reason, exit 127, as from a shell.
  Screen missing;
  opened = guest.Terminal({.argv = {"/no/such/shell"}}, 24, 80, missing.Callbacks());
  ASSERT_TRUE(opened.ok()) << opened.status();
  exited = missing.WaitExit();
  ASSERT_TRUE(exited.has_value());
  EXPECT_EQ(exited->first, 127);
  EXPECT_TRUE(missing.WaitFor("/no/such/shell"));
  opened->reset();

  // Stop ends an open terminal, and its exit still comes.
  Screen stopped;
  opened = guest.Terminal(shell, 24, 80, stopped.Callbacks());
  ASSERT_TRUE(opened.ok()) << opened.status();
  ASSERT_TRUE(stopped.WaitFor("guest-prompt$ "));
  ASSERT_TRUE(guest.Stop(absl::Seconds(2)).ok());
  exited = stopped.WaitExit();
  ASSERT_TRUE(exited.has_value());
  EXPECT_EQ(exited->first, -SIGKILL);
  EXPECT_THAT(exited->second, HasSubstr("stopped"));
  EXPECT_EQ(guest.State(&cause), v1::SANDBOX_STATE_DESTROYED);
  opened->reset();
  EXPECT_EQ(stopped.exits(), 1);
}

TEST_F(MicrovmTerminalTest, AGuestThatDiesUnderItsTerminalEndsItWithTheCause) {
  QemuRuntime runtime(config_);
  absl::StatusOr<std::unique_ptr<Guest>> started = runtime.Start({});
  ASSERT_TRUE(started.ok()) << started.status();
  Guest& guest = **started;
  // No layout: the image's busybox shell, on a PTY of the agent's own devpts.
  Screen screen;
  absl::StatusOr<std::unique_ptr<GuestTerminal>> opened = guest.Terminal(
      {.env = {{"PATH", "/bin"}, {"PS1", "bb-prompt# "}}}, 24, 80, screen.Callbacks());
  ASSERT_TRUE(opened.ok()) << opened.status();
  ASSERT_TRUE(screen.WaitFor("bb-prompt# "));
  ASSERT_TRUE((*opened)->Input("echo $((40+2)); stty size\n").ok());
  EXPECT_TRUE(screen.WaitFor("\r\n42\r\n24 80\r\n"));
  ASSERT_TRUE((*opened)->Input("echo c > /proc/sysrq-trigger\n").ok());
  std::optional<std::pair<int, std::string>> exited = screen.WaitExit();
  ASSERT_TRUE(exited.has_value());
  EXPECT_EQ(exited->first, -SIGKILL);
  EXPECT_THAT(exited->second, HasSubstr("panicked"));
  std::string cause;
  EXPECT_EQ(guest.State(&cause), v1::SANDBOX_STATE_ERROR);
  EXPECT_THAT(cause, HasSubstr("panicked"));
  EXPECT_EQ(guest.Terminal({}, 24, 80, Screen().Callbacks()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  opened->reset();
  EXPECT_EQ(screen.exits(), 1);
}

}  // namespace
}  // namespace ccsandbox::testing
