#include "policy/command/classifier.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/command/programs.h"

namespace ccsandbox::policy {
namespace {

using R = CommandRule;

std::vector<R> Rules(absl::string_view line) {
  std::vector<R> out;
  for (const CommandFinding& f : ClassifyCommandLine(line).findings) out.push_back(f.rule);
  return out;
}

bool HasRule(absl::string_view line, R rule) {
  for (R r : Rules(line)) {
    if (r == rule) return true;
  }
  return false;
}

std::vector<std::string> PushRefs(absl::string_view line) {
  for (const CommandFinding& f : ClassifyCommandLine(line).findings) {
    if (f.rule == R::kPushToRemote) return f.push_refs;
  }
  return {"<no push>"};
}

TEST(ClassifyCommandLine, PushRefs) {
  struct Case {
    const char* line;
    std::vector<std::string> refs;
  };
  for (const Case& c : std::vector<Case>{
           {"git push", {""}},
           {"git push origin", {""}},
           {"git push origin main", {"main"}},
           {"git push origin HEAD", {""}},
           {"git push origin HEAD:main", {"main"}},
           {"git push origin +feature:refs/heads/release", {"refs/heads/release"}},
           {"git push origin :old", {"old"}},
           {"git push --delete origin old", {"old"}},
           {"git push -u origin a b", {"a", "b"}},
           {"git push --all origin", {"*"}},
           {"git push --mirror", {"*"}},
           {"git push --tags", {"refs/tags/*"}},
           {"git push origin $BRANCH", {"*"}},
           {"git push -o ci.skip origin main", {"main"}},
           {"git -C repo -c user.name=x push origin main", {"main"}},
           {"sudo git push origin main", {"main"}},
       }) {
    EXPECT_EQ(PushRefs(c.line), c.refs) << c.line;
  }
}

TEST(ClassifyCommandLine, SpecRuleMapping) {
  struct Case {
    const char* line;
    R rule;
  };
  for (const Case& c : std::vector<Case>{
           {"git commit -m x", R::kCreateCommit},
           {"git merge dev", R::kCreateCommit},
           {"git rebase main", R::kCreateCommit},
           {"git cherry-pick abc", R::kCreateCommit},
           {"git revert HEAD", R::kCreateCommit},
           {"git am x.patch", R::kCreateCommit},
           {"git push", R::kPushToRemote},
           {"gh pr create", R::kOpenPullRequest},
           {"gh pr merge 1", R::kPublishReviewOrMerge},
           {"gh pr review 1", R::kPublishReviewOrMerge},
           {"gh pr comment 1", R::kPublishReviewOrMerge},
           {"gh pr close 1", R::kPublishReviewOrMerge},
           {"gh issue create", R::kWriteExternalTracker},
           {"gh issue edit 1", R::kWriteExternalTracker},
           {"gh issue comment 1", R::kWriteExternalTracker},
           {"gh issue close 1", R::kWriteExternalTracker},
           {"npm install x", R::kInstallPackage},
           {"pnpm add x", R::kInstallPackage},
           {"yarn add x", R::kInstallPackage},
           {"pip install x", R::kInstallPackage},
           {"python -m pip install x", R::kInstallPackage},
           {"cargo install x", R::kInstallPackage},
           {"cargo add x", R::kInstallPackage},
           {"apt install x", R::kInstallPackage},
           {"apt-get install x", R::kInstallPackage},
           {"dnf install x", R::kInstallPackage},
           {"yum install x", R::kInstallPackage},
           {"brew install x", R::kInstallPackage},
           {"apk add x", R::kInstallPackage},
           {"go install x@latest", R::kInstallPackage},
           {"go get x", R::kInstallPackage},
           {"gem install x", R::kInstallPackage},
           {"curl https://x", R::kNetworkAccess},
           {"wget -O- https://x", R::kNetworkAccess},
           {"npm publish", R::kPublishPackage},
           {"cargo publish", R::kPublishPackage},
           {"twine upload dist/*", R::kPublishPackage},
           {"gem push x.gem", R::kPublishPackage},
       }) {
    EXPECT_TRUE(HasRule(c.line, c.rule)) << c.line << " should be " << CommandRuleId(c.rule);
  }
}

TEST(ClassifyCommandLine, UnwrapsWrappers) {
  for (const char* line : {"sudo -u ci -E git push",
                           "env -i A=1 git push",
                           "nice -n 5 git push",
                           "nohup git push",
                           "timeout -s KILL 30s git push",
                           "xargs -I{} git push",
                           "command -p git push",
                           "exec git push",
                           "time -p git push",
                           "/usr/bin/time -v git push",
                           "stdbuf -o0 git push",
                           "ionice -c 3 git push",
                           "setsid -f git push",
                           "doas -u root git push",
                           "chrt -r 5 git push",
                           "taskset -c 0 git push",
                           "strace -e trace=file git push",
                           "builtin command git push",
                           "env -S 'git push'",
                           "busybox env git push",
                           "find . -exec git push \\;"}) {
    EXPECT_TRUE(HasRule(line, R::kPushToRemote)) << line;
  }
  EXPECT_FALSE(HasRule("command -v git push", R::kPushToRemote));
  EXPECT_FALSE(HasRule("timeout 5", R::kPushToRemote));
}

TEST(ClassifyCommandLine, LiteralShellCodeIsParsedRecursively) {
  for (const char* line :
       {"bash -c 'git push'", "sh -ec 'git push'", "bash -o pipefail -c 'git push'",
        "zsh -c \"git push\"", "eval git push", "eval 'git push'", "su -c 'git push' u",
        "watch 'git push'", "flock l -c 'git push'", "trap 'git push' EXIT",
        "bash <<'E'\ngit push\nE", "sh <<< 'git push'", "git rebase --exec 'git push' main",
        "alias p='git push'"}) {
    EXPECT_TRUE(HasRule(line, R::kPushToRemote)) << line;
    EXPECT_FALSE(HasRule(line, R::kDynamicCode)) << line;
  }
}

TEST(ClassifyCommandLine, CodeNotKnownUntilRunTime) {
  for (const char* line : {"eval \"$X\"", "bash -c \"$X\"", "$CMD", "\"$(which git)\" push",
                           "curl x | sh", "curl x | python3", "source <(curl x)",
                           "bash <<EOF\n$X\nEOF", "git $SUB", "git -c core.pager=\"$P\" log"}) {
    EXPECT_TRUE(HasRule(line, R::kDynamicCode)) << line;
  }
  for (const char* line : {"bash x.sh", "source x.sh", ". x.sh", "python3 -c 'x'", "node -e x",
                           "./run", "LD_PRELOAD=x.so ls", "export PATH=/tmp:$PATH"}) {
    EXPECT_TRUE(HasRule(line, R::kOpaqueProgram)) << line;
  }
}

// Read-only tools that run a command taken from configuration or from their input.
TEST(ClassifyCommandLine, CommandsHiddenInReadOnlyTools) {
  for (const char* line :
       {"PAGER='git push' git log", "env GIT_PAGER='git push' git log", "export EDITOR='git push'",
        "man -P 'git push' ls", "git ls-remote --upload-pack='git push' .",
        "git ls-remote -u 'git push' .", "git fetch --upload-pack='git push' origin",
        "ssh -o ProxyCommand='git push' h", "rsync -e 'git push' a h:b",
        "LESSOPEN='|git push %s' less f", "git -c core.sshCommand='git push' fetch"}) {
    EXPECT_TRUE(HasRule(line, R::kPushToRemote)) << line;
  }
  for (const char* line : {"echo push | xargs git", "echo 'git push' | xargs sh -c",
                           "find . -exec sh -c {} \\;", "PAGER=\"$P\" git log"}) {
    EXPECT_TRUE(HasRule(line, R::kDynamicCode)) << line;
  }
  for (const char* line : {"hash -p ./x git", "sort --compress-program=./x f"}) {
    EXPECT_TRUE(HasRule(line, R::kOpaqueProgram)) << line;
  }
  EXPECT_EQ(Rules("PAGER=cat git log"), (std::vector<R>{R::kReadOnly, R::kReadOnly}));
  EXPECT_EQ(Rules("find . -name '*.go' | xargs grep -n TODO"),
            (std::vector<R>{R::kReadOnly, R::kReadOnly}));
}

TEST(ClassifyCommandLine, SubcommandTextAndContext) {
  CommandClassification c = ClassifyCommandLine("ls | bash -c 'git push'");
  ASSERT_EQ(c.findings.size(), 2u);
  EXPECT_EQ(c.findings[0].subcommand, "ls");
  EXPECT_EQ(c.findings[1].subcommand, "git push");
  EXPECT_NE(c.findings[1].reason.find("(inside bash -c)"), std::string::npos);
}

TEST(ClassifyCommandLine, FunctionsAreEvaluatedAndCallsAreNotUnknown) {
  EXPECT_EQ(Rules("deploy() { git push; }; deploy"),
            (std::vector<R>{R::kPushToRemote, R::kReadOnly}));
  EXPECT_TRUE(HasRule(":(){ :|:& };:", R::kSystemDestruction));
  EXPECT_FALSE(HasRule("f() { f; }; f", R::kSystemDestruction));
}

TEST(ClassifyCommandLine, Redirections) {
  EXPECT_TRUE(HasRule("ls > out", R::kMutating));
  EXPECT_TRUE(HasRule("ls >> out", R::kMutating));
  EXPECT_TRUE(HasRule("ls &> out", R::kMutating));
  EXPECT_TRUE(HasRule("ls >& out", R::kMutating));
  EXPECT_TRUE(HasRule("{ ls; } > out", R::kMutating));
  EXPECT_EQ(Rules("ls > /dev/null 2>&1"), std::vector<R>{R::kReadOnly});
  EXPECT_EQ(Rules("ls 2>/dev/stderr >&2 < in"), std::vector<R>{R::kReadOnly});
  EXPECT_TRUE(HasRule("echo x > /dev/sda", R::kSystemDestruction));
  EXPECT_TRUE(HasRule("echo x >> /etc/sudoers.d/me", R::kPrivilegeEscalation));
  EXPECT_TRUE(HasRule("cat f > /dev/tcp/h/1", R::kNetworkWrite));
  EXPECT_EQ(Rules("ls > >(cat)"), (std::vector<R>{R::kReadOnly, R::kReadOnly}));
}

TEST(IsCriticalPath, Table) {
  auto word = [](const std::string& text, uint32_t flags = 0) {
    return ShellWord{text, text, flags};
  };
  for (const ShellWord& w :
       {word("/"), word("//"), word("/."), word("/tmp/.."), word("/usr"), word("/etc/"),
        word("/*", kWordGlob), word("/u*", kWordGlob), word("/usr/*", kWordGlob),
        word("~", kWordTilde), word("~/", kWordTilde), word("~/*", kWordTilde | kWordGlob),
        word("$HOME", kWordParameter), word("${HOME}/", kWordParameter),
        word("~/..", kWordTilde)}) {
    EXPECT_TRUE(IsCriticalPath(w)) << w.text;
  }
  for (const ShellWord& w : {word("build"), word("./"), word("/tmp/x"), word("/usr/lib"),
                             word("~/project", kWordTilde), word("~"), word("$DIR", kWordParameter),
                             word("$HOME/x", kWordParameter), word("/home/u/repo")}) {
    EXPECT_FALSE(IsCriticalPath(w)) << w.text;
  }
}

TEST(ClassifyWriteTarget, Table) {
  auto target = [](const std::string& t) { return ClassifyWriteTarget(ShellWord{t, t, 0}); };
  EXPECT_EQ(target("/dev/null"), WriteTarget::kDiscard);
  EXPECT_EQ(target("/dev/fd/3"), WriteTarget::kDiscard);
  EXPECT_EQ(target("out.txt"), WriteTarget::kFile);
  EXPECT_EQ(target("/dev/sda"), WriteTarget::kBlockDevice);
  EXPECT_EQ(target("/dev/nvme0n1p1"), WriteTarget::kBlockDevice);
  EXPECT_EQ(target("/dev/mapper/root"), WriteTarget::kBlockDevice);
  EXPECT_EQ(target("/dev/./sda"), WriteTarget::kBlockDevice);
  EXPECT_EQ(target("/etc/passwd"), WriteTarget::kAccountFile);
  EXPECT_EQ(target("/etc/sudoers.d/x"), WriteTarget::kAccountFile);
  EXPECT_EQ(target("/dev/tcp/1.2.3.4/80"), WriteTarget::kNetwork);
  EXPECT_EQ(target("/proc/sysrq-trigger"), WriteTarget::kSystemControl);
  EXPECT_EQ(target("/boot/vmlinuz"), WriteTarget::kSystemControl);
  EXPECT_EQ(ClassifyWriteTarget(
                ShellWord{"~/.ssh/authorized_keys", "~/.ssh/authorized_keys", kWordTilde}),
            WriteTarget::kAccountFile);
}

TEST(ClassifyCommandLine, UnparseableInnerCodeKeepsOtherFindings) {
  std::vector<R> rules = Rules("git push; bash -c 'echo \"x'");
  EXPECT_EQ(rules, (std::vector<R>{R::kPushToRemote, R::kUnparseable}));
  EXPECT_EQ(Rules("echo 'x"), std::vector<R>{R::kUnparseable});
}

TEST(ClassifyCommandLine, BraceExpansionIsBounded) {
  std::string many = "echo";
  for (int i = 0; i < 12; ++i) many += " {a,b}";
  // Each word expands on its own: 24 words.
  EXPECT_EQ(Rules(many), std::vector<R>{R::kReadOnly});
  std::string huge = "echo ";
  for (int i = 0; i < 12; ++i) huge += "{a,b}";  // one word, 4096 expansions
  EXPECT_TRUE(HasRule(huge, R::kUnparseable));
}

}  // namespace
}  // namespace ccsandbox::policy
