// No set-id files out of a sandbox: against the real broker
// and launcher, real bwrap and the seccomp baseline, every ordinary way to
// leave an S_ISUID or S_ISGID file in a writable bind fails, the host file
// never carries either bit, and the refusal is reported as a violation event.
// Run with the create guard (the default) and without it
// (--no-filename-denies): the baseline alone must hold.
#include <sys/stat.h>
#include <unistd.h>

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
  // In the JSON stream: what the event its refusal produces must contain.
  std::string violation;
};

std::string Violation(const std::string& action, const std::string& target) {
  return absl::StrCat(R"("violation":{"action":")", action, R"(","target":")", target, "\"");
}

// Host-made sources: "src/suid" (04755), "src/sgid" (02755), and "suid.tar"
// holding both.
const std::vector<Attempt>& Attempts() {
  static const std::vector<Attempt> attempts = {
      {"chmod_4755", "cp /bin/true x && chmod 4755 x", "x", Violation("file-write*", "x")},
      {"chmod_6755", "cp /bin/true x && chmod 6755 x", "x", Violation("file-write*", "x")},
      {"chmod_u_s", "cp /bin/true x && chmod u+s x", "x", Violation("file-write*", "x")},
      {"chmod_g_s", "cp /bin/true x && chmod g+s x", "x", Violation("file-write*", "x")},
      {"install_m_4755", "install -m 4755 /bin/true x", "x", Violation("file-write*", "x")},
      {"cp_p_setuid", "cp -p src/suid x", "x", Violation("file-write*", "x")},
      {"cp_p_setgid", "cp -p src/sgid x", "x", Violation("file-write*", "x")},
      {"tar_xp", "mkdir out && tar -xpf suid.tar -C out", "out/src/suid",
       R"("raw":"tar: src/suid: Cannot change mode to rwsr-xr-x: Operation not permitted")"},
      // A set-gid directory is lost too: seccomp cannot tell it from a file.
      {"mkdir_m_2775", "mkdir -m 2775 d", "d", Violation("file-write*", "d")},
      {"python_chmod", R"(cp /bin/true x && python3 -c 'import os; os.chmod("x", 0o4755)')", "x",
       Violation("file-access*", "x")},
      {"python_open", R"(python3 -c 'import os; os.open("x", os.O_CREAT | os.O_WRONLY, 0o6755)')",
       "x", Violation("file-access*", "x")},
  };
  return attempts;
}

// (with filename patterns, with the broker unprivileged)
class SetIdTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {
 protected:
  void SetUp() override {
    auto daemons = Daemons::Start({.unprivileged_broker = Unprivileged()});
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    d_ = std::move(*daemons);
    work_ = d_->MakeWorkdir();
    ASSERT_FALSE(work_.empty());
  }

  bool Guarded() const { return std::get<0>(GetParam()); }
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
    if (!Guarded()) args.push_back("--no-filename-denies");
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
    EXPECT_TRUE(absl::StrContains(r.out, a.violation)) << r.out;
    EXPECT_TRUE(absl::StrContains(r.out, "Operation not permitted")) << r.out;
  }
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

INSTANTIATE_TEST_SUITE_P(Runs, SetIdTest, ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<bool, bool>>& info) {
                           return absl::StrCat(
                               std::get<0>(info.param) ? "WithCreateGuard" : "BaselineOnly", "_",
                               BrokerIdentityName({std::get<1>(info.param), info.index}));
                         });

}  // namespace
}  // namespace ccsandbox::testing
