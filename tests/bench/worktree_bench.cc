// worktree_bench: what provisioning a conversation's worktree costs, in time and in disk, with
// CloneCheckout (copy-on-write, FICLONE per file) next to `cp -a` and `git worktree add` of the
// same repository on the same file system. A program that prints figures and asserts nothing.
//
// For each file system (an XFS image made with reflink=1, a btrfs image; loop-mounted by the
// bench, as root) it generates a repository of --files text files (sizes between --min-kib and
// --max-kib, uniform or log-uniform), commits it and packs its objects (as a fresh clone has
// them). Each round then provisions one copy per side, in turn: the time is the call or the
// command (page cache warm for all, nothing synced); the disk is the file system's used blocks
// after minus before (statfs, each reading after syncfs, so it includes what the side's writes
// cost once on disk). Each copy is removed, untimed, before the next side runs. `cp -a` is
// coreutils' (it reflinks by default since 9.0, where it can); `cp -a --reflink=never` is the byte
// copy provisioning refuses to fall back to, shown for scale.
//
//   bazel run -c opt //tests/bench:worktree_bench -- --files=10000 --rounds=5
#include <unistd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "tests/bench/bench_process.h"
#include "tests/bench/bench_stats.h"
#include "tests/bench/bench_table.h"
#include "tests/reflink_volumes.h"
#include "tests/run_tool.h"
#include "workspace/git_checkout.h"
#include "workspace/reflink_clone.h"
#include "workspace/remove_tree.h"
#include "workspace/sample_repository.h"

ABSL_FLAG(int, files, 10000, "files in the generated repository");
ABSL_FLAG(int, min_kib, 1, "smallest file, KiB");
ABSL_FLAG(int, max_kib, 64, "largest file, KiB");
ABSL_FLAG(bool, log_uniform, false, "sizes log-uniform (most files small) instead of uniform");
ABSL_FLAG(int, rounds, 3, "measured provisionings of each side (after one warm-up round)");
ABSL_FLAG(std::string, file_systems, "xfs,btrfs", "volumes to measure on: xfs, btrfs");
ABSL_FLAG(int, volume_gib, 4, "size of each (sparse) volume image");

namespace ccsandbox::bench {
namespace {

using testing::TestVolume;

double MiB(double bytes) { return bytes / 1048576.0; }

// One way of provisioning a copy of `repo` at `destination`, and of removing it again.
struct Provisioner {
  std::string name;
  std::function<absl::Status(const std::string& destination)> make;
  std::function<absl::Status(const std::string& destination)> remove;
};

absl::Status RunFor(TestVolume::Kind kind) {
  absl::StatusOr<std::unique_ptr<TestVolume>> volume =
      TestVolume::Make(kind, (uint64_t{1} << 30) * absl::GetFlag(FLAGS_volume_gib));
  if (!volume.ok()) return volume.status();
  const std::string root = (*volume)->path();
  const std::string repo = root + "/repo";
  absl::StatusOr<uint64_t> empty = (*volume)->UsedBytes();
  if (!empty.ok()) return empty.status();

  workspace::testing::SampleShape shape;
  shape.files = absl::GetFlag(FLAGS_files);
  shape.min_bytes = uint64_t{1024} * absl::GetFlag(FLAGS_min_kib);
  shape.max_bytes = uint64_t{1024} * absl::GetFlag(FLAGS_max_kib);
  shape.log_uniform = absl::GetFlag(FLAGS_log_uniform);
  shape.pack = true;
  const Clock::time_point generating = Clock::now();
  absl::StatusOr<workspace::testing::SampleRepository> sample =
      workspace::testing::MakeSampleRepository(repo, shape);
  if (!sample.ok()) return sample.status();
  absl::StatusOr<uint64_t> with_repo = (*volume)->UsedBytes();
  if (!with_repo.ok()) return with_repo.status();
  const double repository = static_cast<double>(*with_repo - *empty);
  absl::PrintF(
      "\n== %s: a repository of %d files, %s %d-%d KiB, %.1f MiB of files; %.1f MiB on disk "
      "with .git (made in %.1f s)\n",
      TestVolume::KindName(kind), sample->files, shape.log_uniform ? "log-uniform" : "uniform",
      absl::GetFlag(FLAGS_min_kib), absl::GetFlag(FLAGS_max_kib), MiB(sample->bytes),
      MiB(repository), MsSince(generating) / 1000);

  absl::StatusOr<workspace::GitCheckout> checkout = workspace::InspectCheckout("repository", repo);
  if (!checkout.ok()) return checkout.status();
  workspace::CloneStats last_clone;
  auto remove_tree = [](const std::string& destination) {
    return workspace::RemoveTree(destination);
  };
  const std::vector<Provisioner> provisioners = {
      {"CloneCheckout",
       [&](const std::string& destination) -> absl::Status {
         absl::StatusOr<workspace::CloneStats> stats =
             workspace::CloneCheckout(*checkout, destination);
         if (!stats.ok()) return stats.status();
         last_clone = *stats;
         return absl::OkStatus();
       },
       remove_tree},
      {"cp -a",
       [&](const std::string& destination) {
         return testing::RunTool({"cp", "-a", repo, destination}).status();
       },
       remove_tree},
      {"git worktree add",
       [&](const std::string& destination) {
         return workspace::testing::Git(repo, {"worktree", "add", "-q", "--detach", destination})
             .status();
       },
       [&](const std::string& destination) {
         return workspace::testing::Git(repo, {"worktree", "remove", "--force", destination})
             .status();
       }},
      {"cp (byte copy)",
       [&](const std::string& destination) {
         return testing::RunTool({"cp", "-a", "--reflink=never", repo, destination}).status();
       },
       remove_tree},
  };
  std::map<std::string, std::vector<double>> extra;  // bytes, per side
  std::vector<Side> sides;
  int next = 0;
  for (const Provisioner& p : provisioners) {
    sides.push_back({p.name, [&, p]() -> absl::StatusOr<double> {
                       const std::string destination = absl::StrCat(root, "/copy-", next++);
                       absl::StatusOr<uint64_t> before = (*volume)->UsedBytes();
                       if (!before.ok()) return before.status();
                       const Clock::time_point start = Clock::now();
                       if (absl::Status made = p.make(destination); !made.ok()) {
                         return made;
                       }
                       const double ms = MsSince(start);
                       absl::StatusOr<uint64_t> after = (*volume)->UsedBytes();
                       if (!after.ok()) return after.status();
                       extra[p.name].push_back(static_cast<double>(*after) -
                                               static_cast<double>(*before));
                       if (absl::Status removed = p.remove(destination); !removed.ok()) {
                         return removed;
                       }
                       return ms;
                     }});
  }
  const int rounds = std::max(1, absl::GetFlag(FLAGS_rounds));
  if (absl::Status done = Alternate(1, rounds, sides); !done.ok()) return done;

  PrintSides(absl::StrFormat("time to provision one worktree on %s", TestVolume::KindName(kind)),
             sides);
  const std::string figure =
      absl::StrCat(TestVolume::KindName(kind), ": CloneCheckout provisioning");
  PrintRatio(figure, sides[0], sides[1], 1.0);
  PrintRatio(figure, sides[0], sides[2], 1.0);
  PrintRatio(figure, sides[0], sides[3], std::nullopt);
  absl::PrintF("extra disk per worktree (median of %d; the repository takes %.1f MiB)\n",
               rounds + 1, MiB(repository));
  for (const Provisioner& p : provisioners) {
    const Summary s = Summarize(extra[p.name]);
    absl::PrintF("  %-16s %9.2f MiB  %6.2f%% of the repository%s\n", p.name, MiB(s.median),
                 100 * s.median / repository,
                 p.name == "CloneCheckout"
                     ? absl::StrFormat("   target <= 1%%: %s",
                                       s.median <= repository / 100 ? "met" : "NOT met")
                     : "");
  }
  ReportRow(
      {.figure = absl::StrCat(TestVolume::KindName(kind), ": CloneCheckout extra disk, median"),
       .ours = MiB(Summarize(extra["CloneCheckout"]).median),
       .unit = "MiB",
       .baseline_name = "the repository",
       .baseline = MiB(repository),
       .target = RatioAtMost(0.01)});
  const double entries =
      static_cast<double>(last_clone.files + last_clone.directories + last_clone.symlinks);
  absl::PrintF(
      "  CloneCheckout made %d files, %d directories, %d symlinks (%.1f MiB shared, not "
      "copied): %.0f bytes of metadata per entry\n",
      last_clone.files, last_clone.directories, last_clone.symlinks, MiB(last_clone.bytes),
      Summarize(extra["CloneCheckout"]).median / entries);
  return absl::OkStatus();
}

absl::Status Run() {
  std::vector<TestVolume::Kind> kinds;
  for (absl::string_view name : absl::StrSplit(absl::GetFlag(FLAGS_file_systems), ',')) {
    if (name == "xfs") {
      kinds.push_back(TestVolume::Kind::kXfsReflink);
    } else if (name == "btrfs") {
      kinds.push_back(TestVolume::Kind::kBtrfs);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--file_systems: '", name, "' is not xfs or btrfs"));
    }
  }
  for (TestVolume::Kind kind : kinds) {
    if (absl::Status ran = RunFor(kind); !ran.ok()) return ran;
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ccsandbox::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  ccsandbox::bench::StopOnSignals();
  absl::Status status = ccsandbox::bench::Run();
  if (!status.ok()) {
    absl::FPrintF(stderr, "worktree_bench: %s\n", status.ToString());
    return 1;
  }
  return 0;
}
