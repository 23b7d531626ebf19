// Create-time enforcement of the filename-pattern denies, end to end: the real broker and
// launcher, bwrap, the shim's Landlock layer and the launcher's seccomp-notify supervisor, with
// real programs (coreutils, git, tar, node) writing into a writable bind.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {
namespace {

bool Exists(const std::string& path) { return PathExists(path); }

class CreateGuardFixture : public ::testing::Test {
 protected:
  void StartDaemons(bool unprivileged_broker) {
    auto daemons = Daemons::Start({.unprivileged_broker = unprivileged_broker});
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    d_ = std::move(*daemons);
    work_ = d_->MakeWorkdir();  // the caller's
  }

  // A chat-mode run with the working tree bound writable: the full dispatch policy.
  ProgramResult Run(const std::string& script) {
    return d_->Sandboxctl({"run", "--json", "--timeout=120", "--", "bash", "-c", script}, work_);
  }

  std::string Violation(const std::string& host_path) const {
    return absl::StrCat(R"("violation":{"action":"file-write-create","target":")", host_path, "\"");
  }

  std::unique_ptr<Daemons> d_;
  std::string work_;
};

// The guard's emulated creations, as the command's identity, with the broker as root (the
// command runs as the sandbox uid) and as an unprivileged user (as that user).
class CreateGuardTest : public CreateGuardFixture, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override { StartDaemons(GetParam()); }
};

// Many creations in one run: what they measure does not depend on the broker's identity.
class CreateGuardBulkTest : public CreateGuardFixture {
 protected:
  void SetUp() override { StartDaemons(false); }
};

TEST_P(CreateGuardTest, ANewEnvFileIsRefusedWithOneViolationEvent) {
  ProgramResult r = Run("touch .env; echo touch=$?; echo ok > notes.txt; echo notes=$?");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string out = JsonStdout(r.out);
  EXPECT_TRUE(absl::StrContains(out, "touch=1")) << out;
  EXPECT_TRUE(absl::StrContains(out, "notes=0")) << out;
  EXPECT_FALSE(Exists(work_ + "/.env"));
  EXPECT_EQ(ReadFile(work_ + "/notes.txt"), "ok\n");
  // One refusal, one event: the supervisor's, with the host path; touch's own complaint on
  // stderr is not reported a second time.
  EXPECT_EQ(CountOf(r.out, Violation(work_ + "/.env")), 1) << r.out;
  EXPECT_EQ(CountOf(r.out, "\"violation\""), 1) << r.out;
  EXPECT_LT(r.out.find("\"violation\""), r.out.find("\"exit\"")) << r.out;
}

TEST_P(CreateGuardTest, ExtraPatternsAddToTheStandardSet) {
  std::ofstream(work_ + "/spec.json")
      << R"({"mode": "chat", "bindMounts": [{"hostPath": ")" << work_
      << R"("}], "writeDenyPatterns": {"patterns": ["*.p12"]}})";
  ProgramResult r = d_->Sandboxctl({"run", "--json", "--spec=" + work_ + "/spec.json", "--", "bash",
                                    "-c", "touch id.p12 .env ok.txt; echo rc=$?"},
                                   work_);
  EXPECT_TRUE(absl::StrContains(JsonStdout(r.out), "rc=1")) << r.out << r.err;
  EXPECT_FALSE(Exists(work_ + "/id.p12"));
  EXPECT_FALSE(Exists(work_ + "/.env"));
  EXPECT_TRUE(Exists(work_ + "/ok.txt"));
  EXPECT_EQ(CountOf(r.out, "file-write-create"), 2) << r.out;
}

TEST_P(CreateGuardTest, EveryShellRouteToAMatchingNameIsRefused) {
  ASSERT_EQ(mkdir((work_ + "/sub").c_str(), 0755), 0);
  std::ofstream(work_ + "/plain.txt") << "data";
  d_->GiveToCaller(work_);
  ProgramResult r =
      Run("cd sub;"
          "echo k > server.key; echo redirect=$?;"
          "cp ../plain.txt cert.PEM; echo cp=$?;"
          "mv ../plain.txt .env.local; echo mv=$?;"
          "ln ../plain.txt hard.pem; echo link=$?;"
          "ln -s ../plain.txt soft.pem; echo symlink=$?;"
          "mkdir keys.key; echo mkdir=$?;"
          "mkfifo pipe.pem; echo mkfifo=$?;"
          "ln -s dangling.pem ok-name; echo > ok-name; echo dangling=$?;"
          "echo fine > allowed.txt; echo allowed=$?");
  const std::string out = JsonStdout(r.out);
  for (const char* refused :
       {"redirect=1", "cp=1", "mv=1", "link=1", "symlink=1", "mkdir=1", "mkfifo=1", "dangling=1"}) {
    EXPECT_TRUE(absl::StrContains(out, refused)) << refused << "\n" << out << r.err;
  }
  EXPECT_TRUE(absl::StrContains(out, "allowed=0")) << out;
  for (const char* name : {"server.key", "cert.PEM", ".env.local", "hard.pem", "soft.pem",
                           "keys.key", "pipe.pem", "dangling.pem"}) {
    EXPECT_FALSE(Exists(work_ + "/sub/" + name)) << name;
    EXPECT_EQ(CountOf(r.out, Violation(work_ + "/sub/" + name)), 1) << name << "\n" << r.out;
  }
  EXPECT_TRUE(Exists(work_ + "/plain.txt"));    // the refused mv left it where it was
  EXPECT_TRUE(Exists(work_ + "/sub/ok-name"));  // the symlink itself is an allowed name
  EXPECT_EQ(ReadFile(work_ + "/sub/allowed.txt"), "fine\n");
}

TEST_P(CreateGuardTest, ExistingMatchingFilesAreReadOnlyFromLaunch) {
  std::ofstream(work_ + "/.env") << "TOKEN=original\n";
  ASSERT_EQ(mkdir((work_ + "/tls").c_str(), 0755), 0);
  std::ofstream(work_ + "/tls/server.pem") << "CERT\n";
  d_->GiveToCaller(work_);
  ProgramResult r =
      Run("echo TOKEN=stolen >> .env; echo append=$?;"
          "rm -f .env; echo rm=$?;"
          "mv tls/server.pem tls/x; echo mv=$?;"
          "cat .env tls/server.pem");
  const std::string out = JsonStdout(r.out);
  EXPECT_TRUE(absl::StrContains(out, "append=1")) << out;
  EXPECT_TRUE(absl::StrContains(out, "rm=1")) << out;
  EXPECT_TRUE(absl::StrContains(out, "mv=1")) << out;
  EXPECT_TRUE(absl::StrContains(out, "TOKEN=original\nCERT\n")) << out;  // readable, unchanged
  EXPECT_EQ(ReadFile(work_ + "/.env"), "TOKEN=original\n");
  EXPECT_EQ(ReadFile(work_ + "/tls/server.pem"), "CERT\n");
}

TEST_P(CreateGuardTest, PrivateTmpIsFreeAndNothingThereOutlivesTheRun) {
  // The sandbox's own /tmp (a private tmpfs) is where creation is left to the kernel: even a
  // matching name there is harmless, it disappears with the sandbox.
  ProgramResult r = Run("touch /tmp/.env /tmp/a.pem && ls -a /tmp");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(JsonStdout(r.out), ".env")) << r.out;
  EXPECT_EQ(CountOf(r.out, "\"violation\""), 0) << r.out;
}

// Ordinary git work in a repository that existed at Launch: everything but its config and
// hooks stays writable. (Its config is read-only: identity comes from the environment.)
TEST_P(CreateGuardTest, OrdinaryGitWorkInAnExistingRepository) {
  ProgramResult made = RunProgram(
      {"bash", "-c",
       absl::StrCat(
           "set -e; cd ", work_, "; git init -q -b main repo; cd repo;",
           "git -c user.email=h@example.com -c user.name=h commit -q --allow-empty -m root")});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  d_->GiveToCaller(work_);
  ProgramResult r =
      Run("set -e; cd repo; export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com "
          "GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com;"
          "mkdir -p src; for i in $(seq 50); do echo $i > src/f$i.txt; done;"
          "git add -A; git commit -q -m 'first'; git log --oneline | wc -l;"
          "git checkout -q -b feature; echo more >> src/f1.txt; git commit -qam second;"
          "git checkout -q main; git merge -q --no-edit feature; git branch -q topic;"
          "git checkout -q topic; echo t > t.txt; git add t.txt; git commit -qm topic;"
          "git rebase -q main; echo wip >> src/f2.txt; git stash -q; git stash pop -q;"
          "git tag v1; git gc -q; git fsck --no-progress && echo fsck-ok");
  EXPECT_EQ(r.exit_code, 0) << JsonStdout(r.out) << r.err << r.out;
  EXPECT_TRUE(absl::StrContains(JsonStdout(r.out), "fsck-ok")) << r.out;
  EXPECT_EQ(CountOf(r.out, "\"violation\""), 0) << r.out;
  // Created by us on the command's behalf, owned as if it had created them: the caller's.
  struct stat st;
  ASSERT_EQ(stat((work_ + "/repo/src/f1.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, d_->broker_uid());
}

// Whatever is renamed to a name under which a rule could match is refused, file or directory:
// the object's type at check time proves nothing, since another writer on the tree can swap a
// plain file for a prepared directory (RENAME_EXCHANGE) before the rename runs — which is how
// two sessions once planted .git/modules/<sub>/{config,hooks} that host git then ran.
TEST_P(CreateGuardTest, AnythingRenamedWhereARuleCouldMatchBeneathIsRefused) {
  ProgramResult made =
      RunProgram({"bash", "-c", absl::StrCat("set -e; cd ", work_, "; git init -q -b main repo")});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  d_->GiveToCaller(work_);
  ProgramResult r =
      Run("cd repo/.git; echo x > plain; mkdir -p stage/sub/hooks;"
          "mv plain modules; echo file=$?;"
          "mv stage modules; echo dir=$?;"
          "cd ../..; echo y > cfg; mv cfg .config; echo config=$?");
  const std::string out = JsonStdout(r.out);
  EXPECT_TRUE(absl::StrContains(out, "file=1")) << out << r.err;
  EXPECT_TRUE(absl::StrContains(out, "dir=1")) << out << r.err;
  EXPECT_TRUE(absl::StrContains(out, "config=1")) << out << r.err;
  EXPECT_FALSE(Exists(work_ + "/repo/.git/modules"));
  EXPECT_FALSE(Exists(work_ + "/.config"));
  EXPECT_TRUE(Exists(work_ + "/repo/.git/stage/sub/hooks"));
  EXPECT_GE(CountOf(r.out, "file-write-create"), 3) << r.out;
}

// The spec's denyWriteNames add to the trusted names for this launch: a new match is refused at
// creation (EACCES, one violation naming the rule), an existing one is read-only.
TEST_P(CreateGuardTest, DenyWriteNamesExtendTheTrustedNamesPerLaunch) {
  ASSERT_EQ(mkdir((work_ + "/tools").c_str(), 0755), 0);
  std::ofstream(work_ + "/tools/y.sh") << "echo y\n";
  d_->GiveToCaller(work_);
  std::ofstream(work_ + "/spec.json") << R"({"mode": "chat", "bindMounts": [{"hostPath": ")"
                                      << work_ << R"("}], "denyWriteNames": ["tools/*.sh"]})";
  ProgramResult r =
      d_->Sandboxctl({"run", "--json", "--spec=" + work_ + "/spec.json", "--", "bash", "-c",
                      "echo x > tools/x.sh; echo new=$?; echo more >> tools/y.sh; echo existing=$?;"
                      "echo ok > tools/notes.txt; echo other=$?; echo z > y.sh; echo elsewhere=$?"},
                     work_);
  const std::string out = JsonStdout(r.out);
  EXPECT_EQ(out, "new=1\nexisting=1\nother=0\nelsewhere=0\n") << r.out << r.err;
  EXPECT_FALSE(Exists(work_ + "/tools/x.sh"));
  EXPECT_EQ(ReadFile(work_ + "/tools/y.sh"), "echo y\n");
  EXPECT_EQ(ReadFile(work_ + "/tools/notes.txt"), "ok\n");
  EXPECT_EQ(CountOf(r.out, Violation(work_ + "/tools/x.sh")), 1) << r.out;
  EXPECT_EQ(CountOf(r.out, "file-write-create"), 1) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "'tools/*.sh' is something the host runs or trusts"))
      << r.out;
}

// RENAME_WHITEOUT leaves a character device (0:0) at the source's name; the sandbox makes no
// device nodes, so it is refused (EPERM) and both names stay as they were.
TEST_P(CreateGuardTest, RenameWhiteoutIsRefused) {
  ProgramResult r =
      Run("echo x > wsrc; python3 -c 'import ctypes; libc = ctypes.CDLL(None, use_errno=True);"
          " r = libc.renameat2(-100, b\"wsrc\", -100, b\"wdst\", 4);"
          " print(\"whiteout=%d\" % (0 if r == 0 else ctypes.get_errno()))'");
  const std::string out = JsonStdout(r.out);
  EXPECT_TRUE(absl::StrContains(out, "whiteout=1\n")) << out << r.err;  // EPERM
  EXPECT_EQ(ReadFile(work_ + "/wsrc"), "x\n");
  EXPECT_FALSE(Exists(work_ + "/wdst"));
}

// A repository the agent creates in a writable bind would be one the human's git later runs
// the config and hooks of: `git init` / `git clone` there are refused; in /tmp they work.
TEST_P(CreateGuardTest, NewRepositoriesOnlyInThePrivateTmp) {
  ProgramResult r =
      Run("git init -q repo; echo init=$?;"
          "cd /tmp && git init -q scratch && cd scratch && git -c user.email=a@b -c user.name=a "
          "commit -q --allow-empty -m x && echo tmp-ok");
  const std::string out = JsonStdout(r.out);
  EXPECT_TRUE(absl::StrContains(out, "init=")) << out << r.err;
  EXPECT_FALSE(absl::StrContains(out, "init=0")) << out << r.err;
  EXPECT_TRUE(absl::StrContains(out, "tmp-ok")) << out << r.err;
  EXPECT_FALSE(Exists(work_ + "/repo/.git"));
  EXPECT_EQ(CountOf(r.out, Violation(work_ + "/repo/.git")), 1) << r.out;
}

TEST_F(CreateGuardBulkTest, UntarOfFiveThousandFilesRefusesOnlyTheEnv) {
  // The archive is made on the host, then unpacked inside the sandbox.
  const std::string src = work_ + "/src";
  ProgramResult made = RunProgram(
      {"bash", "-c",
       absl::StrCat("set -e; mkdir -p ", src, "/pkg; cd ", src,
                    "/pkg; for d in $(seq 0 49); do mkdir d$d; for f in $(seq 0 99); do "
                    "echo $d-$f > d$d/f$f.js; done; done; rm d0/f0.js; echo SECRET=1 > d7/.env;"
                    "cd ..; tar -cf ../pkg.tar pkg; cd ..; rm -rf src")});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  ProgramResult r =
      Run("mkdir out; tar -xf pkg.tar -C out; echo tar=$?;"
          "find out -type f | wc -l");
  const std::string out = JsonStdout(r.out);
  EXPECT_TRUE(absl::StrContains(out, "tar=2")) << out << r.err;  // tar reports the refusal
  EXPECT_TRUE(absl::StrContains(out, "\n4999\n")) << out;        // everything else is there
  EXPECT_FALSE(Exists(work_ + "/out/pkg/d7/.env"));
  EXPECT_EQ(ReadFile(work_ + "/out/pkg/d49/f99.js"), "49-99\n");
  EXPECT_EQ(CountOf(r.out, Violation(work_ + "/out/pkg/d7/.env")), 1) << r.out;
}

TEST_F(CreateGuardBulkTest, NpmStyleWritesOfManySmallFiles) {
  // What a package manager does: nested directories, many small files, renames into place.
  const char* script = R"JS(
const fs = require('fs'), path = require('path');
let n = 0;
for (let p = 0; p < 40; p++) {
  const dir = path.join('node_modules', 'pkg' + p, 'lib');
  fs.mkdirSync(dir, {recursive: true});
  for (let f = 0; f < 50; f++) {
    const tmp = path.join(dir, '.f' + f + '.tmp');
    fs.writeFileSync(tmp, 'module.exports = ' + f + ';\n');
    fs.renameSync(tmp, path.join(dir, 'f' + f + '.js'));
    n++;
  }
}
let refused = 'no';
try { fs.writeFileSync(path.join('node_modules', 'pkg1', 'key.pem'), 'x'); }
catch (e) { refused = e.code; }
console.log('files=' + n + ' pem=' + refused);
)JS";
  std::ofstream(work_ + "/install.js") << script;
  ProgramResult r = Run("node install.js");
  EXPECT_EQ(r.exit_code, 0) << r.err << JsonStdout(r.out);
  EXPECT_TRUE(absl::StrContains(JsonStdout(r.out), "files=2000 pem=EACCES")) << r.out;
  EXPECT_EQ(ReadFile(work_ + "/node_modules/pkg39/lib/f49.js"), "module.exports = 49;\n");
  EXPECT_FALSE(Exists(work_ + "/node_modules/pkg1/key.pem"));
}

INSTANTIATE_TEST_SUITE_P(Brokers, CreateGuardTest, ::testing::Bool(), BrokerIdentityName);

}  // namespace
}  // namespace ccsandbox::testing
