// Cost of create-time enforcement, measured in real sandboxes (bwrap +
// sandbox_shim as uid 65534, a writable bind at /work) with and without the
// guard:
//   - µs per create (open O_CREAT|O_EXCL + close) in the writable bind: trapped
//   and
//     performed by the supervisor, vs the kernel alone;
//   - µs per untrapped call (open existing + close; stat): must not change;
//   - wall time of `tar -x` of 5,000 small files (one of them .env).
// Needs root.  bazel run -c opt //launcher:create_guard_bench [-- N [tmpfs|ext4|roundtrip]]
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "launcher/create_guard/notify_channel.h"
#include "launcher/create_guard/probe.h"
#include "launcher/create_guard/seccomp_notify.h"
#include "launcher/create_guard/testing.h"
#include "launcher/seccomp_baseline.h"
#include "tests/bench/bench_table.h"

namespace ccsandbox::launcher {
namespace {

namespace fs = std::filesystem;

// A new dir owned by the sandbox's uid on the host file system `base` is on.
std::string FreshWork(const std::string& base) {
  std::string work_template = base + "/cg-bench-XXXXXX";
  std::string work = mkdtemp(work_template.data());
  chown(work.c_str(), kSandboxUid, kSandboxUid);
  chmod(work.c_str(), 0755);
  return work;
}

// The floor: one seccomp user-notification round trip answered with CONTINUE at
// once, on this host, now (a child traps getppid under a one-rule filter; we
// answer).
double BareRoundTrip(long n) {
  absl::StatusOr<std::pair<UniqueFd, UniqueFd>> channel = NotifyChannelPair();
  int result[2];
  if (!channel.ok() || pipe(result) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{4, filter};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    const long fd =
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
    if (fd < 0 || !SendNotifyFd(channel->second.get(), static_cast<int>(fd)).ok()) _exit(1);
    close(static_cast<int>(fd));
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) syscall(SYS_getppid);
    const double micros =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count() /
        n;
    (void)!write(result[1], &micros, sizeof(micros));
    _exit(0);
  }
  close(result[1]);
  channel->second.Reset();
  absl::StatusOr<UniqueFd> fd = ReceiveNotifyFd(channel->first.get());
  if (!fd.ok()) return -1;
  absl::StatusOr<SeccompNotify> notify = SeccompNotify::Create(std::move(*fd));
  if (!notify.ok()) return -1;
  for (;;) {
    pollfd p{notify->fd(), POLLIN, 0};
    if (poll(&p, 1, -1) < 0 || !(p.revents & POLLIN)) break;
    absl::StatusOr<seccomp_notif> call = notify->Receive();
    if (call.ok()) notify->RespondContinue(call->id).IgnoreError();
  }
  double micros = -1;
  (void)!read(result[0], &micros, sizeof(micros));
  close(result[0]);
  waitpid(child, nullptr, 0);
  return micros;
}

double HelperFigure(const GuardedSandbox& sandbox, bool guard, const std::string& op) {
  GuardedRunOptions options;
  options.guard = guard;
  GuardedRun run = sandbox.Run({kSandboxHelper, op}, options);
  double value = -1;
  if (run.lines.size() != 1 || run.lines[0].rfind("OK ", 0) != 0 ||
      !absl::SimpleAtod(run.lines[0].substr(3), &value)) {
    fprintf(stderr, "%s failed: %s %s\n", op.c_str(), run.lines.empty() ? "" : run.lines[0].c_str(),
            run.stderr_text.c_str());
    exit(1);
  }
  return value;
}

int Main(int argc, char** argv) {
  CreateGuardSupport support = ProbeCreateGuard();
  if (!support.available) {
    fprintf(stderr, "create-time enforcement unavailable: %s\n", support.reason.c_str());
    return 1;
  }
  const char* runfiles = getenv("RUNFILES_DIR");
  const std::string from = runfiles != nullptr ? absl::StrCat(runfiles, "/ccsandbox")
                                               : absl::StrCat(argv[0], ".runfiles/ccsandbox");
  const long n = argc > 1 ? atol(argv[1]) : 20000;
  // Which host file systems to put /work on: "tmpfs", "ext4" or both (default).
  const std::string only = argc > 2 ? argv[2] : "";
  std::vector<const char*> bases;
  if (only != "ext4") bases.push_back("/dev/shm");
  if (only != "tmpfs") bases.push_back("/tmp");
  if (only == "roundtrip") {
    printf("bare notify round trip: %.2f us\n", BareRoundTrip(n));
    return 0;
  }
  absl::StatusOr<std::string> made = MakeBinDir(from, kGuardBinaries);
  if (!made.ok()) {
    fprintf(stderr, "%s\n", std::string(made.status().message()).c_str());
    return 1;
  }
  const std::string bin_dir = *made;
  const std::string baseline = *SeccompBaselineProgram();
  constexpr int kFiles = 5000;

  // The archive: 5,000 small files in 50 directories, one .env among them.
  const std::string src = FreshWork("/tmp");
  for (int d = 0; d < 50; ++d) {
    const std::string dir = absl::StrCat(src, "/tree/d", d);
    fs::create_directories(dir);
    for (int f = 0; f < kFiles / 50; ++f) {
      std::ofstream(absl::StrCat(dir, "/f", f, ".txt")) << "content " << d << " " << f << "\n";
    }
  }
  std::ofstream(absl::StrCat(src, "/tree/d7/.env")) << "SECRET=1\n";
  const std::string tar = absl::StrCat(bin_dir, "/files.tar");
  if (system(absl::StrCat("tar -cf ", tar, " -C ", src, " tree").c_str()) != 0) return 1;
  chmod(tar.c_str(), 0644);
  fs::remove_all(src);

  printf("create-time enforcement benchmark (%s)\n", support.reason.c_str());
  printf(
      "the writable bind at /work is a fresh dir on the host's ext4 (/tmp) or "
      "tmpfs "
      "(/dev/shm); best of 3; guarded and unguarded alternate\n");
  // Issue 4's targets: <= 50 us per trapped create; untrapped calls cost the same (read here as
  // within 10%); untar <= 2x unguarded.
  struct Row {
    const char* name;
    std::string op;
    bench::Goal target;
  };
  const Row rows[] = {
      {"create+close in /work (trapped, performed)", absl::StrCat("bench create /work ", n),
       bench::AtMost(50)},
      {"create+close in /tmp (trapped, CONTINUE)", absl::StrCat("bench create /tmp ", n),
       bench::AtMost(50)},
      {"open existing+close (not trapped)", absl::StrCat("bench open /work ", n),
       bench::RatioAtMost(1.1)},
      {"stat (not trapped)", absl::StrCat("bench stat /work ", n), bench::RatioAtMost(1.1)},
  };
  const double round_trip = BareRoundTrip(n);
  printf("bare notify round trip (trap + CONTINUE, no work): %.2f us\n", round_trip);
  bench::ReportRow(
      {.figure = "bare seccomp-notify round trip (no work)", .ours = round_trip, .unit = "us"});
  for (const char* base : bases) {
    printf("\n%-46s %10s %10s %8s\n", absl::StrCat("us per operation, /work on ", base).c_str(),
           "unguarded", "guarded", "ratio");
    for (const Row& row : rows) {
      double figure[2];
      for (int guard : {0, 1}) {
        const std::string work = FreshWork(base);
        figure[guard] = HelperFigure(GuardedSandbox(bin_dir, work, baseline), guard == 1, row.op);
        fs::remove_all(work);
      }
      printf("%-46s %10.2f %10.2f %7.2fx\n", row.name, figure[0], figure[1], figure[1] / figure[0]);
      bench::ReportRow({.figure = absl::StrCat(row.name, ", /work on ", base),
                        .ours = figure[1],
                        .unit = "us",
                        .baseline_name = "unguarded",
                        .baseline = figure[0],
                        .target = row.target});
    }
  }

  for (const char* base : bases) {
    double seconds[2] = {1e9, 1e9};
    for (int round = 0; round < 3; ++round) {
      for (int guard : {0, 1}) {
        const std::string work = FreshWork(base);
        GuardedRunOptions options;
        options.guard = guard == 1;
        const auto start = std::chrono::steady_clock::now();
        GuardedRun run = GuardedSandbox(bin_dir, work, baseline)
                             .Run({"/usr/bin/tar", "-xf",
                                   absl::StrCat(kSandboxBinDir, "/files.tar"), "-C", "/work"},
                                  options);
        seconds[guard] = std::min(
            seconds[guard],
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (round == 0) {
          size_t files = 0;
          for (const auto& entry : fs::recursive_directory_iterator(work + "/tree")) {
            files += entry.is_regular_file() ? 1 : 0;
          }
          printf(
              "\nuntar on %s %s: %zu files extracted, .env %s, %zu "
              "violation(s), tar exit %d",
              base, guard ? "guarded  " : "unguarded", files,
              fs::exists(work + "/tree/d7/.env") ? "PRESENT" : "refused", run.violations.size(),
              WEXITSTATUS(run.wait_status));
        }
        fs::remove_all(work);
      }
    }
    printf("\n%-46s %10.3f %10.3f %7.2fx\n",
           absl::StrCat("untar 5,000 files on ", base, ", s").c_str(), seconds[0], seconds[1],
           seconds[1] / seconds[0]);
    bench::ReportRow({.figure = absl::StrCat("untar 5,000 files on ", base, ", best of 3"),
                      .ours = seconds[1],
                      .unit = "s",
                      .baseline_name = "unguarded",
                      .baseline = seconds[0],
                      .target = bench::RatioAtMost(2.0)});
  }
  fs::remove_all(bin_dir);
  return 0;
}

}  // namespace
}  // namespace ccsandbox::launcher

int main(int argc, char** argv) { return ccsandbox::launcher::Main(argc, argv); }
