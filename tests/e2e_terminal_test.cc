// Hosted terminals against the real daemons (spec: "Server-hosted terminal"). tmux drives
// `sandboxctl term` as a person would: keys in (send-keys), the screen out (capture-pane).
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/unique_fd.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/poll_until.h"

namespace ccsandbox::testing {
namespace {

constexpr char kSecret[] = "SECRET-KEY-MATERIAL";

// A terminal on the screen of a private tmux server (its own socket: no other tmux is touched).
class Screen {
 public:
  // `name`: each screen its own tmux server (a killed one may still be going away).
  Screen(const std::string& dir, const std::string& name)
      : socket_(absl::StrCat(dir, "/tmux-", name, ".sock")) {
    // A plain outer shell with a known prompt, in a 100x30 window without a status line.
    Tmux({"-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "100", "-y", "30",
          "env PS1='outer$ ' TERM=xterm-256color bash --norc --noprofile"});
    Tmux({"set-option", "-g", "status", "off"});
  }
  ~Screen() { Tmux({"kill-server"}); }

  ProgramResult Tmux(std::vector<std::string> args) {
    args.insert(args.begin(), {"tmux", "-S", socket_});
    return RunProgram(args);
  }
  void Type(const std::string& text) {
    Tmux({"send-keys", "-t", "t", "-l", text});
    Tmux({"send-keys", "-t", "t", "Enter"});
  }
  void Key(const std::string& key) { Tmux({"send-keys", "-t", "t", key}); }
  std::string Contents() { return Tmux({"capture-pane", "-p", "-t", "t", "-S", "-300"}).out; }
  int Count(const std::string& text) { return CountOf(Contents(), text); }
  // Waits until `text` is on the screen more than `before` times: a prompt that came back.
  ::testing::AssertionResult ShowsAgain(const std::string& text, int before) {
    ::testing::AssertionResult seen =
        PollUntil([&] { return Count(text) > before; }, absl::Seconds(30),
                  absl::StrCat("'", text, "' to show again"));
    if (!seen) seen << "\nscreen:\n" << Contents();
    return seen;
  }
  ::testing::AssertionResult Shows(const std::string& text) {
    ::testing::AssertionResult seen =
        PollUntil([&] { return absl::StrContains(Contents(), text); }, absl::Seconds(30),
                  absl::StrCat("the screen to show '", text, "'"));
    if (!seen) seen << "\nscreen:\n" << Contents();
    return seen;
  }

 private:
  std::string socket_;
};

class TerminalTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    char home_template[] = "/tmp/ccs-term-home-XXXXXX";
    ASSERT_NE(mkdtemp(home_template), nullptr);
    home_ = home_template;
    std::filesystem::create_directories(home_ + "/.ssh");
    std::ofstream(home_ + "/.ssh/id_ed25519") << kSecret << "\n";
    std::ofstream(home_ + "/.bashrc") << "PS1='term-prompt$ '\n";
    std::filesystem::create_directories(home_ + "/.config/gh");
    std::ofstream(home_ + "/.config/gh/hosts.yml") << kSecret << "-gh\n";
    std::filesystem::permissions(home_, std::filesystem::perms(0755));
    DaemonOptions options;
    options.unprivileged_broker = GetParam();
    options.broker_env = {"HOME=" + home_, "SHELL=/bin/bash"};
    absl::StatusOr<std::unique_ptr<Daemons>> daemons = Daemons::Start(options);
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    daemons_ = *std::move(daemons);
    daemons_->GiveToCaller(home_);
    work_ = daemons_->MakeWorkdir();
  }
  void TearDown() override {
    daemons_.reset();
    std::filesystem::remove_all(home_);
  }

  // The command line a person types to open a terminal.
  std::string TermCommand(const std::string& flags) {
    return absl::StrCat(Runfile("broker/sandboxctl"), " --broker=", daemons_->broker_address(),
                        " term ", flags);
  }

  std::string home_, work_;
  std::unique_ptr<Daemons> daemons_;
};

// Everything a person does in a native terminal, on a real screen.
TEST_P(TerminalTest, ANativeTerminalAsAPersonUsesIt) {
  Screen screen(daemons_->dir(), "person");
  ASSERT_TRUE(screen.Shows("outer$"));
  screen.Type("stty -g > " + work_ + "/../tty.before");
  screen.Type(TermCommand("--backend=native --workdir=" + work_));
  ASSERT_TRUE(screen.Shows("backend native"));
  ASSERT_TRUE(screen.Shows("term-prompt$"));  // the user's own rc, from the writable $HOME

  screen.Type("echo out-$((6*7)) in $(pwd)");
  EXPECT_TRUE(screen.Shows("out-42 in " + work_));

  // The secrets of $HOME are not there to read; the denial shows on the screen.
  screen.Type("cat ~/.ssh/id_ed25519; echo read-rc-$?");
  EXPECT_TRUE(screen.Shows("read-rc-1"));
  EXPECT_TRUE(screen.Shows("No such file or directory"));
  EXPECT_FALSE(absl::StrContains(screen.Contents(), kSecret));

  // $HOME and the working directory are writable.
  screen.Type("echo made > ~/made-in-term && echo made > made-in-work && echo wrote-$((1+1))");
  EXPECT_TRUE(screen.Shows("wrote-2"));
  EXPECT_EQ(ReadFile(home_ + "/made-in-term"), "made\n");
  EXPECT_EQ(ReadFile(work_ + "/made-in-work"), "made\n");

  // A resized window reaches the shell.
  // The window's SIGWINCH and the next keys race in tmux: ask until the new size shows.
  screen.Tmux({"resize-window", "-t", "t", "-x", "120", "-y", "40"});
  EXPECT_TRUE(PollUntil(
      [&] {
        const int answers = screen.Count("size-");
        screen.Type("echo size-$(stty size | tr ' ' x)");
        (void)PollUntil([&] { return screen.Count("size-") > answers + 1; }, absl::Seconds(10),
                        "the shell's answer");
        return absl::StrContains(screen.Contents(), "size-40x120");
      },
      absl::Seconds(60), "the resized window to reach the shell"))
      << screen.Contents();

  // Ctrl-C interrupts the foreground job, and the terminal goes on.
  screen.Type("sleep 1001; echo after-sleep-$((2+3))");
  ASSERT_TRUE(WaitForProcessMatching("sleep 1001", 30));
  screen.Key("C-c");
  EXPECT_TRUE(WaitNoProcessMatches("sleep 1001", 30));
  screen.Type("echo alive-$((3+4))");
  EXPECT_TRUE(screen.Shows("alive-7"));
  EXPECT_FALSE(absl::StrContains(screen.Contents(), "after-sleep-5"));

  // exit ends it, sandboxctl exits with the shell's code, and the terminal is as it was.
  const int outer_prompts = screen.Count("outer$");
  screen.Type("exit 7");
  ASSERT_TRUE(screen.ShowsAgain("outer$", outer_prompts));  // sandboxctl has exited
  screen.Type("echo term-rc-$?");
  EXPECT_TRUE(screen.Shows("term-rc-7"));
  screen.Type("stty -g > " + work_ + "/../tty.after; cmp -s " + work_ + "/../tty.before " + work_ +
              "/../tty.after && echo restored-$((4+4))");
  EXPECT_TRUE(screen.Shows("restored-8"));
}

// The default is the host shell, and it says so: the secret is readable there.
TEST_P(TerminalTest, TheDefaultIsTheHostShellAndSaysSo) {
  Screen screen(daemons_->dir(), "default");
  ASSERT_TRUE(screen.Shows("outer$"));
  screen.Type(TermCommand("--workdir=" + work_));
  ASSERT_TRUE(screen.Shows("backend none (the host shell, NOT sandboxed)"));
  ASSERT_TRUE(screen.Shows("term-prompt$"));
  screen.Type("cat ~/.ssh/id_ed25519");
  EXPECT_TRUE(screen.Shows(kSecret));
  const int outer_prompts = screen.Count("outer$");
  screen.Type("exit");
  EXPECT_TRUE(screen.ShowsAgain("outer$", outer_prompts));
}

// A client that goes away ends the terminal and everything it started.
TEST_P(TerminalTest, AVanishedClientLeavesNothingRunning) {
  for (const std::string backend : {"native", "none"}) {
    SCOPED_TRACE(backend);
    Screen screen(daemons_->dir(), backend);
    ASSERT_TRUE(screen.Shows("outer$"));
    screen.Type(TermCommand("--backend=" + backend + " --workdir=" + work_));
    ASSERT_TRUE(screen.Shows("term-prompt$"));
    screen.Type("sleep 1002 & sleep 1003");
    ASSERT_TRUE(WaitForProcessMatching("sleep 1002", 30));
    ASSERT_TRUE(WaitForProcessMatching("sleep 1003", 30));
    RunProgram({"pkill", "-KILL", "-f", "sandboxctl --broker=" + daemons_->broker_address()});
    EXPECT_TRUE(WaitNoProcessMatches("sleep 1002", 30));
    EXPECT_TRUE(WaitNoProcessMatches("sleep 1003", 30));
  }
}

// The terminal's id, from the line `sandboxctl term` prints before attaching.
std::string TerminalId(const std::string& screen) {
  const size_t at = screen.find("sandboxctl: terminal ");
  if (at == std::string::npos) return "";
  const size_t begin = at + strlen("sandboxctl: terminal ");
  return screen.substr(begin, screen.find(',', begin) - begin);
}

// An operator sees an open terminal among the sessions and can end it (Kill, Destroy), and a
// broker that stops takes its terminals with it.
TEST_P(TerminalTest, AnOperatorSeesAndEndsTerminals) {
  Screen screen(daemons_->dir(), "operator");
  ASSERT_TRUE(screen.Shows("outer$"));
  screen.Type(TermCommand("--backend=native --workdir=" + work_));
  ASSERT_TRUE(screen.Shows("term-prompt$"));
  const std::string id = TerminalId(screen.Contents());
  ASSERT_FALSE(id.empty()) << screen.Contents();
  ProgramResult listed = daemons_->Sandboxctl({"session", "ls"});
  EXPECT_TRUE(absl::StrContains(listed.out, id)) << listed.out;
  ProgramResult shown = daemons_->Sandboxctl({"session", "show", id});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_TRUE(absl::StrContains(shown.out, "native")) << shown.out;
  screen.Type("sleep 1004");
  ASSERT_TRUE(WaitForProcessMatching("sleep 1004", 30));
  const int outer_prompts = screen.Count("outer$");
  ProgramResult stopped = daemons_->Sandboxctl({"session", "stop", id});
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_TRUE(WaitNoProcessMatches("sleep 1004", 30));
  EXPECT_TRUE(screen.Shows("the terminal was killed (stopped"));
  ASSERT_TRUE(screen.ShowsAgain("outer$", outer_prompts));
  screen.Type("echo term-rc-$?");
  EXPECT_TRUE(screen.Shows("term-rc-137"));
  listed = daemons_->Sandboxctl({"session", "ls"});
  EXPECT_FALSE(absl::StrContains(listed.out, id)) << listed.out;

  // The broker's orderly stop ends the terminals still open.
  const int term_prompts = screen.Count("term-prompt$");
  screen.Type(TermCommand("--backend=native --workdir=" + work_));
  ASSERT_TRUE(screen.ShowsAgain("term-prompt$", term_prompts));
  screen.Type("sleep 1005");
  ASSERT_TRUE(WaitForProcessMatching("sleep 1005", 30));
  daemons_->StopBroker();
  EXPECT_TRUE(WaitNoProcessMatches("sleep 1005", 30));
}

// A client that stops reading while its shell floods the terminal cannot keep it alive: Kill
// and Destroy still end the shell (every daemon's write to the stalled client is blocked then).
TEST_P(TerminalTest, AStalledClientCannotKeepATerminalAlive) {
  auto channel =
      grpc::CreateChannel(daemons_->broker_address(), grpc::InsecureChannelCredentials());
  auto stub = v1::SandboxBroker::NewStub(channel);
  std::set<std::string> ended;  // the terminals of the verbs before, still listed while they end
  for (const char* verb : {"stop", "kill"}) {
    SCOPED_TRACE(verb);
    const std::string marker = absl::StrCat("stalled-client-", verb);
    grpc::ClientContext context;
    auto call = stub->Terminal(&context);
    v1::TerminalInput open;
    open.mutable_open()->set_backend("native");
    open.mutable_open()->set_working_directory(work_);
    for (const std::string& arg :
         {std::string("/bin/sh"), std::string("-c"), absl::StrCat("exec yes ", marker)}) {
      open.mutable_open()->add_argv(arg);
    }
    open.mutable_open()->mutable_size()->set_rows(24);
    open.mutable_open()->mutable_size()->set_cols(80);
    ASSERT_TRUE(call->Write(open));
    // Never read: the flood fills every window on the way.
    ASSERT_TRUE(WaitForProcessMatching("yes " + marker, 30));
    std::string id;
    ASSERT_TRUE(PollUntil(
        [&] {
          grpc::ClientContext list_context;
          v1::ListSessionsResponse listed;
          stub->ListSessions(&list_context, v1::ListSessionsRequest(), &listed);
          for (const v1::SandboxHandle& handle : listed.sessions()) {
            if (absl::StartsWith(handle.session_id(), "term-") &&
                !ended.contains(handle.session_id())) {
              id = handle.session_id();
            }
          }
          return !id.empty();
        },
        absl::Seconds(30), "the terminal to be listed"));
    absl::SleepFor(absl::Seconds(1));  // the flood has filled the windows by now
    if (std::string(verb) == "stop") {
      ProgramResult stopped = daemons_->Sandboxctl({"session", "stop", id});
      EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
    } else {
      grpc::ClientContext kill_context;
      v1::KillRequest kill;
      kill.set_session_id(id);
      v1::KillResponse killed;
      const grpc::Status status = stub->Kill(&kill_context, kill, &killed);
      EXPECT_TRUE(status.ok()) << id << ": " << status.error_message();
    }
    EXPECT_TRUE(WaitNoProcessMatches("yes " + marker, 30));
    context.TryCancel();
    ended.insert(id);
  }
}

// The terminal profile's network is open (the host's), and it is still never host root: kernel
// tunables read-only, no launcher or broker socket in sight.
TEST_P(TerminalTest, NativeHasTheNetworkButNotTheHost) {
  UniqueFd listener(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(listener.get(), 4), 0);
  socklen_t length = sizeof(address);
  getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length);
  const int port = ntohs(address.sin_port);
  std::string received;
  std::thread accept_one([&] {
    UniqueFd peer(accept(listener.get(), nullptr, nullptr));
    char buffer[64];
    const ssize_t n = read(peer.get(), buffer, sizeof(buffer));
    if (n > 0) received.assign(buffer, static_cast<size_t>(n));
  });
  // An abstract socket of the host's network namespace: shared with the terminal, out of reach.
  UniqueFd abstract(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un abstract_address = {};
  abstract_address.sun_family = AF_UNIX;
  const std::string abstract_name = absl::StrCat("ccs-term-test-", getpid());
  memcpy(abstract_address.sun_path + 1, abstract_name.data(), abstract_name.size());
  const socklen_t abstract_length =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + abstract_name.size());
  ASSERT_EQ(bind(abstract.get(), reinterpret_cast<sockaddr*>(&abstract_address), abstract_length),
            0);
  ASSERT_EQ(listen(abstract.get(), 4), 0);
  const std::string script = absl::StrCat(
      "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\0",
      abstract_name,
      "')\" 2>/dev/null && echo abstract-$((2+2)) || echo abstract-refused-$((3+3))\n",
      // Each marker is arithmetic: the PTY echoes what was typed, the answer only the shell.
      "echo hello-net > /dev/tcp/127.0.0.1/", port, " && echo net-ok-$((1+1))\n",
      "echo 1 > /proc/sys/kernel/core_pattern 2>/dev/null || echo sysctl-refused-$((1+2))\n", "ls ",
      daemons_->dir(), " >/dev/null 2>&1 || echo control-plane-hidden-$((2+3))\n", "test -e ",
      daemons_->launcher_socket(), " || echo no-launcher-socket-$((3+4))\n", "exit 0\n");
  ProgramResult run =
      RunProgram({Runfile("broker/sandboxctl"), "--broker=" + daemons_->broker_address(), "term",
                  "--backend=native", "--workdir=" + work_},
                 std::nullopt, script);
  accept_one.join();
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(received, "hello-net\n");
  EXPECT_FALSE(absl::StrContains(run.out, "abstract-4")) << run.out;
  for (const char* line : {"net-ok-2", "sysctl-refused-3", "control-plane-hidden-5",
                           "no-launcher-socket-7", "abstract-refused-6"}) {
    EXPECT_TRUE(absl::StrContains(run.out, line)) << line << "\n" << run.out;
  }
}

// The secrets stay hidden whatever the spelling and whatever the shell renames: a working
// directory that is a link to $HOME, a $HOME that is itself a link, a secret's parent moved away
// so that the next terminal would find it elsewhere.
TEST_P(TerminalTest, SecretsHoldAgainstOtherSpellingsAndRenames) {
  auto run = [&](Daemons& daemons, const std::string& workdir, const std::string& script) {
    return RunProgram({Runfile("broker/sandboxctl"), "--broker=" + daemons.broker_address(), "term",
                       "--backend=native", "--workdir=" + workdir},
                      std::nullopt, script + "\nexit 0\n");
  };
  const std::string link = work_ + "/home-link";
  std::filesystem::create_directory_symlink(home_, link);
  ProgramResult via_link =
      run(*daemons_, link,
          absl::StrCat("cat ", link, "/.ssh/id_ed25519 ~/.ssh/id_ed25519 ~/.config/gh/hosts.yml; ",
                       "pwd"));
  EXPECT_EQ(via_link.exit_code, 0) << via_link.err;
  EXPECT_FALSE(absl::StrContains(via_link.out, kSecret)) << via_link.out;

  // Renaming a secret's parent fails inside; the next terminal finds it where it was, hidden.
  ProgramResult moved = run(*daemons_, work_,
                            "mv ~/.config ~/.cfg-x && echo moved-$((0+1)); "
                            "mv ~/.ssh ~/.ssh-x && echo moved-$((0+2)); echo tried-$((1+1))");
  EXPECT_TRUE(absl::StrContains(moved.out, "tried-2")) << moved.out;
  EXPECT_FALSE(absl::StrContains(moved.out, "moved-1")) << moved.out;  // ~/.config stayed
  EXPECT_FALSE(absl::StrContains(moved.out, "moved-2")) << moved.out;  // ~/.ssh stayed
  EXPECT_TRUE(absl::StrContains(moved.out, "Device or resource busy")) << moved.out;
  EXPECT_TRUE(PathExists(home_ + "/.config/gh/hosts.yml"));
  ProgramResult next = run(*daemons_, work_, "cat ~/.cfg-x/gh/hosts.yml ~/.config/gh/hosts.yml");
  EXPECT_FALSE(absl::StrContains(next.out, kSecret)) << next.out;

  // A broker whose $HOME is a link.
  DaemonOptions options;
  options.unprivileged_broker = GetParam();
  options.broker_env = {"HOME=" + link, "SHELL=/bin/bash"};
  std::unique_ptr<Daemons> linked = MustStart(options);
  ASSERT_NE(linked, nullptr);
  ProgramResult home_link =
      run(*linked, work_, "cat ~/.ssh/id_ed25519 ~/.config/gh/hosts.yml; echo home-$((2+2))");
  EXPECT_TRUE(absl::StrContains(home_link.out, "home-4")) << home_link.out << home_link.err;
  EXPECT_FALSE(absl::StrContains(home_link.out, kSecret)) << home_link.out;
}

// Terminals are capped (--max-terminals): one more is refused, a closed one frees its place.
TEST_P(TerminalTest, OpenTerminalsAreCapped) {
  DaemonOptions options;
  options.unprivileged_broker = GetParam();
  options.broker_env = {"HOME=" + home_, "SHELL=/bin/bash"};
  options.broker_flags = {"--max-terminals=1"};
  std::unique_ptr<Daemons> capped = MustStart(options);
  ASSERT_NE(capped, nullptr);
  Screen screen(capped->dir(), "capped");
  ASSERT_TRUE(screen.Shows("outer$"));
  screen.Type(absl::StrCat(Runfile("broker/sandboxctl"), " --broker=", capped->broker_address(),
                           " term --workdir=", work_));
  ASSERT_TRUE(screen.Shows("term-prompt$"));
  ProgramResult second = capped->Sandboxctl({"term", "--workdir=" + work_});
  EXPECT_EQ(second.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(second.err, "1 are open (--max-terminals)")) << second.err;
  const int outer_prompts = screen.Count("outer$");
  screen.Type("exit");
  ASSERT_TRUE(screen.ShowsAgain("outer$", outer_prompts));
  ProgramResult third =
      RunProgram({Runfile("broker/sandboxctl"), "--broker=" + capped->broker_address(), "term",
                  "--workdir=" + work_},
                 std::nullopt, "exit 4\n");
  EXPECT_EQ(third.exit_code, 4) << third.err;
}

// The boundary rules hold in a terminal: what the host runs or trusts (start-up files, git
// hooks) cannot be changed or created, and says so; the host's sockets in $HOME are hidden.
TEST_P(TerminalTest, StartUpFilesAndHostSocketsAreOutOfReach) {
  const std::string socket = home_ + "/host-tmux.sock";
  RunProgram(
      {"tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "h", "sleep", "1006"});
  daemons_->GiveToCaller(socket);
  ASSERT_TRUE(WaitForProcessMatching("sleep 1006", 30));
  ProgramResult run =
      RunProgram({Runfile("broker/sandboxctl"), "--broker=" + daemons_->broker_address(), "term",
                  "--backend=native", "--workdir=" + work_},
                 std::nullopt,
                 absl::StrCat("echo evil >> ~/.bashrc || echo rc-append-refused-$((1))\n",
                              "echo evil > ~/.bash_profile || echo profile-refused-$((2))\n",
                              "mkdir -p .git/hooks 2>/dev/null; ", "test -S ", socket,
                              " || echo socket-hidden-$((3))\n", "exit 0\n"));
  RunProgram({"tmux", "-S", socket, "kill-server"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const char* said : {"rc-append-refused-1", "profile-refused-2", "socket-hidden-3"}) {
    EXPECT_TRUE(absl::StrContains(run.out, said)) << said << "\n" << run.out;
  }
  EXPECT_TRUE(absl::StrContains(run.err,
                                "sandboxctl: denied file-write-create " + home_ + "/.bash_profile"))
      << run.err;
  EXPECT_EQ(ReadFile(home_ + "/.bashrc"), "PS1='term-prompt$ '\n");
  EXPECT_FALSE(PathExists(home_ + "/.bash_profile"));
}

// What cannot be honoured fails loudly, naming why; nothing runs on the host in its place.
TEST_P(TerminalTest, RefusalsAreLoudAndExit125) {
  struct Case {
    std::vector<std::string> flags;
    const char* says;
  };
  const Case cases[] = {
      {{"--backend=microvm"}, "microvm"},
      {{"--backend=vm"}, "unknown terminal backend name 'vm'"},
      {{"--backend=native", "--workdir=/nonexistent-dir"}, "/nonexistent-dir"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"term"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    ProgramResult run = daemons_->Sandboxctl(args);
    EXPECT_EQ(run.exit_code, 125) << c.says;
    EXPECT_TRUE(absl::StrContains(run.err, c.says)) << run.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Brokers, TerminalTest, ::testing::Bool(), BrokerIdentityName);

}  // namespace
}  // namespace ccsandbox::testing
