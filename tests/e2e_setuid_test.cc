// No set-id files out of a sandbox: against the real broker and launcher, real bwrap, the
// seccomp baseline and the create guard, every ordinary way to leave an S_ISUID or S_ISGID file
// in a writable bind fails with EPERM, the host file never carries either bit, and the refusal
// is reported once, by the create guard's supervisor (file-write-setid, the host path), even
// when the command prints nothing. Run with the standard filename patterns and without them
// (--no-filename-denies): either way a writable session has the create guard (for the trusted
// names), which answers set-id modes. A session without one (nothing writable but its private
// /tmp) has the seccomp baseline alone: WithoutACreateGuard below.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {
namespace {

struct Attempt {
  std::string name;
  std::string script;  // run by bash in the work tree
  // The file it tries to make set-id, relative to the work tree.
  std::string target;
};

std::string Violation(const std::string& action, const std::string& target) {
  return absl::StrCat(R"("violation":{"action":")", action, R"(","target":")", target, "\"");
}

// Host-made sources: "src/suid" (04755), "src/sgid" (02755), and "suid.tar"
// holding both.
const std::vector<Attempt>& Attempts() {
  static const std::vector<Attempt> attempts = {
      {"chmod_4755", "cp /bin/true x && chmod 4755 x", "x"},
      {"chmod_6755", "cp /bin/true x && chmod 6755 x", "x"},
      {"chmod_u_s", "cp /bin/true x && chmod u+s x", "x"},
      {"chmod_g_s", "cp /bin/true x && chmod g+s x", "x"},
      {"install_m_4755", "install -m 4755 /bin/true x", "x"},
      {"cp_p_setuid", "cp -p src/suid x", "x"},
      {"cp_p_setgid", "cp -p src/sgid x", "x"},
      {"tar_xp", "mkdir out && tar -xpf suid.tar -C out", "out/src/suid"},
      // A set-gid directory is lost too: seccomp cannot tell it from a file.
      {"mkdir_m_2775", "mkdir -m 2775 d", "d"},
      {"python_chmod", R"(cp /bin/true x && python3 -c 'import os; os.chmod("x", 0o4755)')", "x"},
      {"python_open", R"(python3 -c 'import os; os.open("x", os.O_CREAT | os.O_WRONLY, 0o6755)')",
       "x"},
  };
  return attempts;
}

// (with the standard filename patterns, with the broker unprivileged)
class SetIdTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {
 protected:
  void SetUp() override {
    auto daemons = Daemons::Start({.unprivileged_broker = Unprivileged()});
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    d_ = std::move(*daemons);
    work_ = d_->MakeWorkdir();
    ASSERT_FALSE(work_.empty());
  }

  bool Patterns() const { return std::get<0>(GetParam()); }
  bool Unprivileged() const { return std::get<1>(GetParam()); }

  // A fresh subtree of the work tree holding the host-made set-id sources, the caller's (the
  // bits are set after the chown, which would clear them).
  std::string Tree(const std::string& name) {
    const std::string tree = work_ + "/" + name;
    ProgramResult made = RunProgram(
        {"sh", "-c",
         absl::StrCat("set -e; mkdir -p ", tree, "/src; cd ", tree,
                      "; cp /bin/true src/suid; cp /bin/true src/sgid; chmod 777 . src")});
    EXPECT_EQ(made.exit_code, 0) << made.err;
    d_->GiveToCaller(tree);
    ProgramResult moded = RunProgram(
        {"sh", "-c",
         absl::StrCat("set -e; cd ", tree,
                      "; chmod 4755 src/suid; chmod 2755 src/sgid; tar -cf suid.tar src")});
    EXPECT_EQ(moded.exit_code, 0) << moded.err;
    // The sources are what they claim.
    EXPECT_EQ(Mode(tree + "/src/suid") & 07777, 04755u);
    EXPECT_EQ(Mode(tree + "/src/sgid") & 07777, 02755u);
    return tree;
  }

  // `sandboxctl run --json` of a bash script in `cwd`.
  ProgramResult Run(const std::string& script, const std::string& cwd) {
    std::vector<std::string> args = {"run", "--json", "--timeout=60"};
    if (!Patterns()) args.push_back("--no-filename-denies");
    for (const char* a : {"--", "bash", "-c"}) args.push_back(a);
    args.push_back(script);
    return d_->Sandboxctl(args, cwd);
  }

  // The file's mode, or 0 when it does not exist.
  static mode_t Mode(const std::string& path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0 ? st.st_mode : 0;
  }

  std::unique_ptr<Daemons> d_;
  std::string work_;
};

TEST_P(SetIdTest, EveryRouteToASetIdFileFailsAndIsReported) {
  for (const Attempt& a : Attempts()) {
    SCOPED_TRACE(a.name);
    const std::string tree = Tree(a.name);
    ProgramResult r = Run(absl::StrCat(a.script, "; echo rc=$?"), tree);
    const std::string out = JsonStdout(r.out);
    EXPECT_TRUE(absl::StrContains(out, "rc=")) << r.out << r.err;
    EXPECT_FALSE(absl::StrContains(out, "rc=0")) << out;
    EXPECT_EQ(Mode(tree + "/" + a.target) & (S_ISUID | S_ISGID), 0u)
        << std::oct << Mode(tree + "/" + a.target);
    EXPECT_TRUE(absl::StrContains(r.out, Violation("file-write-setid", tree + "/" + a.target)))
        << r.out;
    EXPECT_TRUE(absl::StrContains(JsonStderr(r.out), "Operation not permitted")) << r.out;
    // Every violation is the supervisor's: what the command printed about it is not reported
    // again. (tar refuses both of its set-id files.)
    EXPECT_EQ(CountOf(r.out, "\"violation\""), CountOf(r.out, "\"file-write-setid\"")) << r.out;
  }
}

// A caller that prints nothing still gets EPERM, and exactly one event says so.
TEST_P(SetIdTest, ASilentAttemptIsReportedOnce) {
  const std::string tree = Tree("silent");
  ProgramResult r =
      Run("cp /bin/true x && python3 -c '\n"
          "import errno, os, sys\n"
          "try:\n"
          "    os.chmod(\"x\", 0o4755)\n"
          "except OSError as e:\n"
          "    sys.exit(0 if e.errno == errno.EPERM else 2)\n"
          "sys.exit(3)'",
          tree);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;  // EPERM
  EXPECT_EQ(JsonStdout(r.out) + JsonStderr(r.out), "") << r.out;
  EXPECT_EQ(CountOf(r.out, "\"violation\""), 1) << r.out;
  EXPECT_EQ(CountOf(r.out, Violation("file-write-setid", tree + "/x")), 1) << r.out;
  EXPECT_EQ(Mode(tree + "/x") & 07777, 0755u);
}

TEST_P(SetIdTest, OrdinaryModesStillWork) {
  const std::string tree = Tree("ordinary");
  ProgramResult r =
      Run("set -e; cp /bin/true x; chmod 755 x; ./x;"
          " install -m 700 /bin/true y; mkdir -m 1777 d;"
          " python3 -c 'import os; os.close(os.open(\"z\","
          " os.O_CREAT | os.O_WRONLY, 0o640))';"
          " cp src/suid plain; echo done",
          tree);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(JsonStdout(r.out), "done")) << r.out;
  EXPECT_EQ(CountOf(r.out, "\"violation\""), 0) << r.out;
  EXPECT_EQ(Mode(tree + "/x") & 07777, 0755u);
  EXPECT_EQ(Mode(tree + "/y") & 07777, 0700u);
  EXPECT_EQ(Mode(tree + "/d") & 07777, 01777u);
  EXPECT_EQ(Mode(tree + "/z") & 07777, 0640u);
  // cp without -p drops the bits itself.
  EXPECT_EQ(Mode(tree + "/plain") & 07777, 0755u);
}

// A read-only session has no create guard (nothing writable but its private /tmp): the seccomp
// baseline alone refuses there, and only what the command prints is reported.
TEST(WithoutACreateGuard, TheBaselineRefusesSetIdModes) {
  auto d = Daemons::Start();
  ASSERT_TRUE(d.ok()) << d.status();
  const std::string work = (*d)->MakeWorkdir();
  std::ofstream(work + "/spec.json")
      << R"({"mode": "review", "bindMounts": [{"hostPath": ")" << work << R"("}]})";
  ProgramResult r =
      (*d)->Sandboxctl({"run", "--json", "--spec=" + work + "/spec.json", "--", "bash", "-c",
                        "cd /tmp && cp /bin/true x && chmod 4755 x; echo rc=$?; stat -c %a x"},
                       work);
  const std::string out = JsonStdout(r.out);
  EXPECT_TRUE(absl::StrContains(out, "rc=1\n755\n")) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, Violation("file-write*", "x"))) << r.out;
  EXPECT_EQ(CountOf(r.out, "file-write-setid"), 0) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Runs, SetIdTest, ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<bool, bool>>& info) {
                           return absl::StrCat(
                               std::get<0>(info.param) ? "FilenamePatterns" : "NoFilenamePatterns",
                               "_", BrokerIdentityName({std::get<1>(info.param), info.index}));
                         });

}  // namespace
}  // namespace ccsandbox::testing
