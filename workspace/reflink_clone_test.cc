#include "workspace/reflink_clone.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "tests/reflink_volumes.h"
#include "tests/skip_or_fail_in_ci.h"
#include "workspace/git_checkout.h"
#include "workspace/sample_repository.h"
#include "workspace/tree_manifest.h"

namespace ccsandbox::workspace {
namespace {

using ccsandbox::testing::TestVolume;
using testing::Git;
using testing::Manifest;
using testing::TakeManifest;

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string Sh(const std::string& script) {
  return system(script.c_str()) == 0 ? "" : "failed: " + script;
}

struct StatsOf {
  uint64_t files = 0, directories = 0, symlinks = 0, bytes = 0;
};

StatsOf Count(const Manifest& manifest) {
  StatsOf count;
  for (const auto& [path, entry] : manifest) {
    if (S_ISREG(entry.mode)) {
      ++count.files;
      count.bytes += entry.size;
    }
    if (S_ISDIR(entry.mode)) ++count.directories;
    if (S_ISLNK(entry.mode)) ++count.symlinks;
  }
  return count;
}

// Skips (or fails under CI) when the host cannot make the volume; fails on other errors.
#define MAKE_VOLUME_OR_RETURN(var, kind)                                       \
  std::unique_ptr<TestVolume> var;                                             \
  {                                                                            \
    absl::StatusOr<std::unique_ptr<TestVolume>> made = TestVolume::Make(kind); \
    if (absl::IsFailedPrecondition(made.status())) {                           \
      CCSANDBOX_SKIP_OR_FAIL_IN_CI(made.status().ToString());                  \
    }                                                                          \
    ASSERT_TRUE(made.ok()) << made.status();                                   \
    var = std::move(*made);                                                    \
  }

// A checkout with everything a clone must get right, beside the sample's nested files: an
// executable, a set-uid file, a set-gid directory, a read-only directory, a file of another
// owner, an old mtime, an empty file, hard links, a FIFO, a socket, symlinks leading out of the
// repository (to a file and to a directory), a submodule (a nested .git file), and a linked
// worktree registered in .git/worktrees/.
void MakeRichCheckout(const std::string& volume, int files) {
  const std::string repo = volume + "/repo";
  testing::SampleShape shape;
  shape.files = files;
  ASSERT_TRUE(testing::MakeSampleRepository(repo, shape).ok());
  ASSERT_EQ(Sh("mkdir -p " + volume + "/outside/dir && echo target > " + volume +
               "/outside/target.txt && echo inside > " + volume + "/outside/dir/file.txt"),
            "");
  ASSERT_EQ(Sh("cd " + repo +
               " && mkdir -p bin shared ro owned docs && printf '#!/bin/sh\\necho hi\\n' > "
               "bin/run.sh && chmod 0755 bin/run.sh && echo tool > bin/setuid-tool && chmod "
               "4755 bin/setuid-tool && chmod 2775 shared && echo s > shared/s.txt && echo r > "
               "ro/r.txt && echo o > owned/other.txt && chown 1234:1234 owned/other.txt && "
               "echo old > docs/old.txt && : > empty.txt && echo h > hard-a && ln hard-a hard-b "
               "&& ln -s ../outside/target.txt link-outside && ln -s " +
               volume +
               "/outside/dir link-dir-outside && ln -s src link-inside && mkfifo fifo && "
               "printf 'fifo\\nsocket\\n' > .gitignore"),
            "");
  {
    const std::string socket_path = repo + "/socket";
    UniqueFd sock(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    socket_path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    ASSERT_EQ(bind(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  }
  ASSERT_TRUE(Git(volume, {"init", "-q", "-b", "main", volume + "/subsrc"}).ok());
  WriteText(volume + "/subsrc/lib.txt", "lib\n");
  ASSERT_TRUE(Git(volume + "/subsrc", {"add", "-A"}).ok());
  ASSERT_TRUE(Git(volume + "/subsrc", {"commit", "-q", "-m", "lib"}).ok());
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-c", "protocol.file.allow=always", "submodule", "add", "-q",
                                 volume + "/subsrc", "vendor/sub"},
        {"add", "-A"},
        {"commit", "-q", "-m", "rich"},
        {"worktree", "add", "-q", volume + "/other-worktree", "-b", "other"}}) {
    absl::StatusOr<std::string> ran = Git(repo, args);
    ASSERT_TRUE(ran.ok()) << ran.status();
  }
  // After the commit: git records neither, and the clone must keep both.
  ASSERT_EQ(Sh("cd " + repo + " && chmod 0555 ro && touch -h -d 2001-02-03T04:05:06 docs/old.txt"),
            "");
}

class ReflinkCloneTest : public ::testing::TestWithParam<TestVolume::Kind> {};

TEST_P(ReflinkCloneTest, MainCheckoutClonesCompletelyAndTheSourceNeverChanges) {
  MAKE_VOLUME_OR_RETURN(volume, GetParam());
  const std::string root = volume->path();
  absl::StatusOr<uint64_t> empty = volume->UsedBytes();
  ASSERT_TRUE(empty.ok()) << empty.status();
  ASSERT_NO_FATAL_FAILURE(MakeRichCheckout(root, 2000));
  const std::string repo = root + "/repo";
  const std::string clone = root + "/clone";
  absl::StatusOr<GitCheckout> checkout = InspectCheckout("repository", repo);
  ASSERT_TRUE(checkout.ok()) << checkout.status();
  ASSERT_EQ(checkout->kind, GitCheckout::Kind::kMain);
  ASSERT_TRUE(Exists(repo + "/.git/worktrees/other-worktree"));

  absl::StatusOr<Manifest> before = TakeManifest(repo);
  absl::StatusOr<Manifest> outside_before = TakeManifest(root + "/outside");
  ASSERT_TRUE(before.ok() && outside_before.ok());
  absl::StatusOr<uint64_t> used_before = volume->UsedBytes();
  ASSERT_TRUE(used_before.ok());

  absl::StatusOr<CloneStats> stats = CloneCheckout(*checkout, clone);
  ASSERT_TRUE(stats.ok()) << stats.status();

  // Copy-on-write: the clone costs metadata, not the repository's size.
  absl::StatusOr<uint64_t> used_after = volume->UsedBytes();
  ASSERT_TRUE(used_after.ok());
  const double repository = static_cast<double>(*used_before - *empty);
  const double extra = static_cast<double>(*used_after) - static_cast<double>(*used_before);
  std::cout << absl::StrFormat(
      "[%s] clone of %d files, %d directories (%.1f MiB of files; the repository takes %.1f MiB "
      "on disk): %.2f MiB extra on disk = %.1f%% of the repository\n",
      TestVolume::KindName(GetParam()), stats->files, stats->directories, stats->bytes / 1048576.0,
      repository / 1048576.0, extra / 1048576.0, 100.0 * extra / repository);
  EXPECT_LT(extra, repository * 0.25);

  // Everything but the set-id bits, the owner, the socket and .git/worktrees/ is as it was.
  auto not_cloned = [](const std::string& path) {
    return path == "socket" || path == ".git/worktrees" ||
           absl::StartsWith(path, ".git/worktrees/");
  };
  absl::StatusOr<Manifest> cloned = TakeManifest(clone);
  ASSERT_TRUE(cloned.ok()) << cloned.status();
  absl::StatusOr<Manifest> expected = TakeManifest(repo, not_cloned);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(testing::DescribeDifference(
                testing::AsCloned(testing::Portable(*expected), geteuid(), getegid()),
                testing::Portable(*cloned)),
            "");
  const StatsOf count = Count(*expected);
  EXPECT_EQ(stats->files, count.files);
  EXPECT_EQ(stats->directories, count.directories);
  EXPECT_EQ(stats->symlinks, count.symlinks);
  EXPECT_EQ(stats->bytes, count.bytes);
  EXPECT_EQ(stats->skipped, std::vector<std::string>{"socket"});

  // The points of the rules, one by one.
  EXPECT_EQ(cloned->at("bin/setuid-tool").mode, S_IFREG | 0755);
  EXPECT_EQ(cloned->at("shared").mode, S_IFDIR | 0775);
  EXPECT_EQ(cloned->at("bin/run.sh").mode, S_IFREG | 0755);
  EXPECT_EQ(cloned->at("ro").mode, S_IFDIR | 0555);
  EXPECT_EQ(cloned->at("owned/other.txt").uid, geteuid());
  EXPECT_EQ(cloned->at("docs/old.txt").mtime_ns, before->at("docs/old.txt").mtime_ns);
  EXPECT_TRUE(S_ISFIFO(cloned->at("fifo").mode));
  EXPECT_EQ(cloned->at("link-outside").link_target, "../outside/target.txt");
  EXPECT_TRUE(S_ISLNK(cloned->at("link-dir-outside").mode));
  EXPECT_FALSE(cloned->contains("link-dir-outside/file.txt"));
  EXPECT_NE(cloned->at("hard-a").inode, cloned->at("hard-b").inode);
  EXPECT_FALSE(Exists(clone + "/.git/worktrees"));
  EXPECT_EQ(ReadText(clone + "/vendor/sub/.git"), ReadText(repo + "/vendor/sub/.git"));

  // git works in the clone, and only there.
  absl::StatusOr<std::string> status = Git(clone, {"status", "--porcelain"});
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(*status, "");
  absl::StatusOr<std::string> worktrees = Git(clone, {"worktree", "list", "--porcelain"});
  ASSERT_TRUE(worktrees.ok()) << worktrees.status();
  const std::vector<std::string> listed = absl::StrSplit(*worktrees, "worktree ");
  EXPECT_EQ(listed.size(), 2u) << *worktrees;  // "" and the clone's own
  EXPECT_TRUE(absl::StrContains(*worktrees, "worktree " + clone + "\n")) << *worktrees;
  absl::StatusOr<std::string> sub_status = Git(clone + "/vendor/sub", {"status", "--porcelain"});
  ASSERT_TRUE(sub_status.ok()) << sub_status.status();
  EXPECT_EQ(*sub_status, "");
  WriteText(clone + "/src/g0/d0/deep/er/f0.txt", "edited in the clone\n");
  WriteText(clone + "/new.txt", "new\n");
  ASSERT_EQ(unlink((clone + "/empty.txt").c_str()), 0);
  ASSERT_TRUE(Git(clone, {"add", "-A"}).ok());
  absl::StatusOr<std::string> committed = Git(clone, {"commit", "-q", "-m", "in the clone"});
  ASSERT_TRUE(committed.ok()) << committed.status();
  absl::StatusOr<std::string> log = Git(clone, {"log", "--format=%s"});
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(*log, "in the clone\nrich\nsample\n");

  // The source: every byte, mode, time and inode as before; the symlinks' targets too.
  absl::StatusOr<Manifest> after = TakeManifest(repo);
  absl::StatusOr<Manifest> outside_after = TakeManifest(root + "/outside");
  ASSERT_TRUE(after.ok() && outside_after.ok());
  EXPECT_EQ(testing::DescribeDifference(*before, *after), "");
  EXPECT_EQ(testing::DescribeDifference(*outside_before, *outside_after), "");
  absl::StatusOr<std::string> source_log = Git(repo, {"log", "--format=%s"});
  ASSERT_TRUE(source_log.ok());
  EXPECT_EQ(*source_log, "rich\nsample\n");
  absl::StatusOr<std::string> source_status = Git(repo, {"status", "--porcelain"});
  ASSERT_TRUE(source_status.ok()) << source_status.status();
  EXPECT_EQ(*source_status, "");
}

TEST_P(ReflinkCloneTest, TwoClonesDoNotSeeEachOthersEdits) {
  MAKE_VOLUME_OR_RETURN(volume, GetParam());
  const std::string repo = volume->path() + "/repo";
  testing::SampleShape shape;
  shape.files = 50;
  ASSERT_TRUE(testing::MakeSampleRepository(repo, shape).ok());
  absl::StatusOr<GitCheckout> checkout = InspectCheckout("repository", repo);
  ASSERT_TRUE(checkout.ok());
  const std::string one = volume->path() + "/one", two = volume->path() + "/two";
  ASSERT_TRUE(CloneCheckout(*checkout, one).ok());
  ASSERT_TRUE(CloneCheckout(*checkout, two).ok());
  const std::string file = "/src/g0/d0/deep/er/f0.txt";
  const std::string original = ReadText(repo + file);
  WriteText(one + file, "one's edit\n");
  std::ofstream(two + file, std::ios::app) << "two's addition\n";
  EXPECT_EQ(ReadText(repo + file), original);
  EXPECT_EQ(ReadText(one + file), "one's edit\n");
  EXPECT_EQ(ReadText(two + file), original + "two's addition\n");
}

TEST_P(ReflinkCloneTest, LinkedWorktreeClonesIntoAStandaloneRepository) {
  MAKE_VOLUME_OR_RETURN(volume, GetParam());
  const std::string root = volume->path();
  const std::string repo = root + "/repo", wt = root + "/wt", clone = root + "/clone";
  testing::SampleShape shape;
  shape.files = 200;
  ASSERT_TRUE(testing::MakeSampleRepository(repo, shape).ok());
  ASSERT_TRUE(Git(repo, {"worktree", "add", "-q", wt, "-b", "feature"}).ok());
  WriteText(wt + "/feature.txt", "feature\n");
  ASSERT_TRUE(Git(wt, {"add", "-A"}).ok());
  ASSERT_TRUE(Git(wt, {"commit", "-q", "-m", "feature work"}).ok());
  absl::StatusOr<std::string> main_head = Git(repo, {"rev-parse", "HEAD"});
  ASSERT_TRUE(main_head.ok());
  // The main worktree's own state (here: a merge in progress) must not leak into the clone.
  WriteText(repo + "/.git/MERGE_HEAD", *main_head);

  absl::StatusOr<GitCheckout> checkout = InspectCheckout("repository", wt);
  ASSERT_TRUE(checkout.ok()) << checkout.status();
  ASSERT_EQ(checkout->kind, GitCheckout::Kind::kLinkedWorktree);
  absl::StatusOr<std::string> wt_head = Git(wt, {"rev-parse", "HEAD"});
  ASSERT_TRUE(wt_head.ok());
  const std::string index = ReadText(checkout->git_dir + "/index");
  const std::string logs_head = ReadText(checkout->git_dir + "/logs/HEAD");
  const std::string config = ReadText(checkout->common_dir + "/config");
  // Taken after the reads above: a read moves an atime, and the manifest sees atimes.
  absl::StatusOr<Manifest> common_before = TakeManifest(checkout->common_dir);
  absl::StatusOr<Manifest> wt_before = TakeManifest(wt);
  ASSERT_TRUE(common_before.ok() && wt_before.ok());

  absl::StatusOr<CloneStats> stats = CloneCheckout(*checkout, clone);
  ASSERT_TRUE(stats.ok()) << stats.status();

  struct stat st;
  ASSERT_EQ(lstat((clone + "/.git").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  for (const char* absent : {"worktrees", "commondir", "gitdir", "MERGE_HEAD"}) {
    EXPECT_FALSE(Exists(clone + "/.git/" + absent)) << absent;
  }
  EXPECT_EQ(ReadText(clone + "/.git/HEAD"), "ref: refs/heads/feature\n");
  EXPECT_EQ(ReadText(clone + "/.git/index"), index);
  EXPECT_EQ(ReadText(clone + "/.git/logs/HEAD"), logs_head);
  EXPECT_EQ(ReadText(clone + "/.git/config"), config);

  for (const auto& [args, want] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"rev-parse", "HEAD"}, *wt_head},
           {{"rev-parse", "--abbrev-ref", "HEAD"}, "feature\n"},
           {{"rev-parse", "--git-common-dir"}, ".git\n"},
           {{"status", "--porcelain"}, ""}}) {
    absl::StatusOr<std::string> out = Git(clone, args);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(*out, want) << args.back();
  }
  WriteText(clone + "/feature.txt", "more feature\n");
  ASSERT_TRUE(Git(clone, {"commit", "-q", "-am", "in the clone"}).ok());
  absl::StatusOr<std::string> log = Git(clone, {"log", "--format=%s", "-2"});
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(*log, "in the clone\nfeature work\n");

  absl::StatusOr<Manifest> common_after = TakeManifest(checkout->common_dir);
  absl::StatusOr<Manifest> wt_after = TakeManifest(wt);
  ASSERT_TRUE(common_after.ok() && wt_after.ok());
  EXPECT_EQ(testing::DescribeDifference(*common_before, *common_after), "");
  EXPECT_EQ(testing::DescribeDifference(*wt_before, *wt_after), "");
  absl::StatusOr<std::string> wt_head_after = Git(wt, {"rev-parse", "HEAD"});
  ASSERT_TRUE(wt_head_after.ok());
  EXPECT_EQ(*wt_head_after, *wt_head);
}

TEST_P(ReflinkCloneTest, DestinationRules) {
  MAKE_VOLUME_OR_RETURN(volume, GetParam());
  const std::string root = volume->path(), repo = root + "/repo";
  testing::SampleShape shape;
  shape.files = 10;
  ASSERT_TRUE(testing::MakeSampleRepository(repo, shape).ok());
  absl::StatusOr<GitCheckout> checkout = InspectCheckout("repository", repo);
  ASSERT_TRUE(checkout.ok());
  ASSERT_EQ(mkdir((root + "/exists").c_str(), 0755), 0);
  WriteText(root + "/exists/keep", "keep");
  struct Case {
    std::string destination;
    absl::StatusCode code;
    const char* says;
  };
  const Case kCases[] = {
      {"relative/clone", absl::StatusCode::kInvalidArgument, "relative"},
      {root + "/a/../clone", absl::StatusCode::kInvalidArgument, "'..'"},
      {"/", absl::StatusCode::kInvalidArgument, "'/'"},
      {root + "/exists", absl::StatusCode::kAlreadyExists, "already exists"},
      {root + "/missing/clone", absl::StatusCode::kFailedPrecondition, "parent"},
      {repo + "/clone", absl::StatusCode::kInvalidArgument, "inside the repository"},
      {repo + "/.git/clone", absl::StatusCode::kInvalidArgument, "inside the repository"},
      {repo, absl::StatusCode::kInvalidArgument, "inside the repository"},
  };
  absl::StatusOr<Manifest> before = TakeManifest(root);
  ASSERT_TRUE(before.ok());
  for (const Case& c : kCases) {
    absl::StatusOr<CloneStats> stats = CloneCheckout(*checkout, c.destination);
    EXPECT_EQ(stats.status().code(), c.code) << c.destination << ": " << stats.status();
    EXPECT_TRUE(absl::StartsWith(stats.status().message(), "destination: ")) << stats.status();
    EXPECT_TRUE(absl::StrContains(stats.status().message(), c.says)) << stats.status();
  }
  absl::StatusOr<Manifest> after = TakeManifest(root);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(testing::DescribeDifference(*before, *after), "");
}

TEST_P(ReflinkCloneTest, DeeperThanTheCapFailsAndLeavesNothing) {
  MAKE_VOLUME_OR_RETURN(volume, GetParam());
  const std::string repo = volume->path() + "/repo", clone = volume->path() + "/clone";
  testing::SampleShape shape;
  shape.files = 10;
  ASSERT_TRUE(testing::MakeSampleRepository(repo, shape).ok());
  std::string deep = repo + "/deep";
  for (int i = 0; i < 300; ++i) deep += "/d";
  ASSERT_EQ(Sh("mkdir -p " + deep), "");
  absl::StatusOr<GitCheckout> checkout = InspectCheckout("repository", repo);
  ASSERT_TRUE(checkout.ok());
  absl::StatusOr<CloneStats> stats = CloneCheckout(*checkout, clone);
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kFailedPrecondition) << stats.status();
  EXPECT_TRUE(absl::StrContains(stats.status().message(), "256 levels")) << stats.status();
  EXPECT_FALSE(Exists(clone));
}

// A checkout its owner filled with what a root broker must never recreate as root's: devices,
// set-id files and directories, a set-id FIFO, names with a newline. Nothing of the clone has a
// set-id bit, no device exists in it, and the odd names are cloned as they are.
TEST_P(ReflinkCloneTest, HostileEntriesAreNeverRecreatedDangerously) {
  MAKE_VOLUME_OR_RETURN(volume, GetParam());
  const std::string repo = volume->path() + "/repo", clone = volume->path() + "/clone";
  testing::SampleShape shape;
  shape.files = 3;
  ASSERT_TRUE(testing::MakeSampleRepository(repo, shape).ok());
  ASSERT_EQ(mknod((repo + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  ASSERT_EQ(mknod((repo + "/disk").c_str(), S_IFBLK | 0660, makedev(7, 0)), 0);
  ASSERT_EQ(Sh("cd " + repo + " && mkdir sgid && chmod 2777 sgid && cp /bin/true sgid/rootshell" +
               " && chmod 6755 sgid/rootshell && mkfifo setid-fifo && chmod 6666 setid-fifo && "
               "echo x > " +
               "\"$(printf 'new\\nline')\" && chmod 7777 \"$(printf 'new\\nline')\""),
            "");
  absl::StatusOr<GitCheckout> checkout = InspectCheckout("repository", repo);
  ASSERT_TRUE(checkout.ok()) << checkout.status();
  absl::StatusOr<CloneStats> stats = CloneCheckout(*checkout, clone);
  ASSERT_TRUE(stats.ok()) << stats.status();
  std::vector<std::string> skipped = stats->skipped;
  std::sort(skipped.begin(), skipped.end());
  EXPECT_EQ(skipped, (std::vector<std::string>{"disk", "null"}));
  absl::StatusOr<Manifest> cloned = TakeManifest(clone);
  ASSERT_TRUE(cloned.ok()) << cloned.status();
  for (const auto& [path, entry] : *cloned) {
    EXPECT_EQ(entry.mode & (S_ISUID | S_ISGID), 0u) << path;
    EXPECT_FALSE(S_ISCHR(entry.mode) || S_ISBLK(entry.mode)) << path;
    EXPECT_EQ(entry.uid, geteuid()) << path;
  }
  EXPECT_EQ(cloned->at("sgid/rootshell").mode, S_IFREG | 0755);
  EXPECT_EQ(cloned->at("sgid").mode, S_IFDIR | 0777);
  EXPECT_EQ(cloned->at("setid-fifo").mode, S_IFIFO | 0666);
  EXPECT_EQ(cloned->at("new\nline").mode, S_IFREG | 01777);
}

// A directory above the checkout swapped for a symlink (to another user's repository, say)
// between the inspection and the clone: what the clone opens is checked to be what was
// inspected, and nothing is cloned.
TEST_P(ReflinkCloneTest, ACheckoutSwappedAfterItsInspectionIsNotCloned) {
  MAKE_VOLUME_OR_RETURN(volume, GetParam());
  const std::string v = volume->path(), clone = v + "/clone";
  testing::SampleShape shape;
  shape.files = 3;
  ASSERT_EQ(Sh("mkdir " + v + "/mine " + v + "/theirs"), "");
  ASSERT_TRUE(testing::MakeSampleRepository(v + "/mine/repo", shape).ok());
  ASSERT_TRUE(testing::MakeSampleRepository(v + "/theirs/repo", shape).ok());
  absl::StatusOr<GitCheckout> checkout = InspectCheckout("repository", v + "/mine/repo");
  ASSERT_TRUE(checkout.ok()) << checkout.status();
  ASSERT_EQ(rename((v + "/mine").c_str(), (v + "/mine.old").c_str()), 0);
  ASSERT_EQ(symlink((v + "/theirs").c_str(), (v + "/mine").c_str()), 0);
  absl::StatusOr<CloneStats> stats = CloneCheckout(*checkout, clone);
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kAborted) << stats.status();
  EXPECT_FALSE(Exists(clone));
}

std::string KindTestName(const ::testing::TestParamInfo<TestVolume::Kind>& info) {
  std::string name = TestVolume::KindName(info.param);
  for (char& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Reflink, ReflinkCloneTest,
                         ::testing::Values(TestVolume::Kind::kXfsReflink, TestVolume::Kind::kBtrfs),
                         KindTestName);

// Spec: if the file system does not support reflink, provisioning FAILS and does not fall back.
class NoReflinkTest : public ::testing::TestWithParam<TestVolume::Kind> {};

TEST_P(NoReflinkTest, FailsNamingTheFileSystemAndLeavesNothing) {
  MAKE_VOLUME_OR_RETURN(volume, GetParam());
  const std::string repo = volume->path() + "/repo", clone = volume->path() + "/clone";
  testing::SampleShape shape;
  shape.files = 100;
  ASSERT_TRUE(testing::MakeSampleRepository(repo, shape).ok());
  absl::StatusOr<GitCheckout> checkout = InspectCheckout("repository", repo);
  ASSERT_TRUE(checkout.ok());
  absl::StatusOr<Manifest> before = TakeManifest(repo);
  ASSERT_TRUE(before.ok());

  absl::StatusOr<CloneStats> stats = CloneCheckout(*checkout, clone);
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kFailedPrecondition) << stats.status();
  const std::string fs = GetParam() == TestVolume::Kind::kExt4 ? "(ext4)" : "(tmpfs)";
  for (const std::string& says : {std::string("does not support reflink"), fs, clone,
                                  std::string("never falls back to a byte copy")}) {
    EXPECT_TRUE(absl::StrContains(stats.status().message(), says)) << stats.status();
  }
  EXPECT_FALSE(Exists(clone));
  absl::StatusOr<Manifest> after = TakeManifest(repo);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(testing::DescribeDifference(*before, *after), "");
}

INSTANTIATE_TEST_SUITE_P(NoReflink, NoReflinkTest,
                         ::testing::Values(TestVolume::Kind::kExt4, TestVolume::Kind::kTmpfs),
                         KindTestName);

// Spec: if the data directory is on a different volume from the repository, provisioning FAILS.
TEST(CrossVolumeTest, FailsNamingBothAndLeavesNothing) {
  MAKE_VOLUME_OR_RETURN(repository_volume, TestVolume::Kind::kXfsReflink);
  MAKE_VOLUME_OR_RETURN(data_volume, TestVolume::Kind::kXfsReflink);
  const std::string repo = repository_volume->path() + "/repo";
  const std::string clone = data_volume->path() + "/clone";
  testing::SampleShape shape;
  shape.files = 100;
  ASSERT_TRUE(testing::MakeSampleRepository(repo, shape).ok());
  absl::StatusOr<GitCheckout> checkout = InspectCheckout("repository", repo);
  ASSERT_TRUE(checkout.ok());

  absl::StatusOr<CloneStats> stats = CloneCheckout(*checkout, clone);
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kFailedPrecondition) << stats.status();
  for (const std::string& says :
       {std::string("different volume"), repo, clone, std::string("one file system")}) {
    EXPECT_TRUE(absl::StrContains(stats.status().message(), says)) << stats.status();
  }
  EXPECT_FALSE(Exists(clone));
}

}  // namespace
}  // namespace ccsandbox::workspace
