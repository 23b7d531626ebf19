#include "tests/bench/limits_figure.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "launcher/cgroups/cgroup.h"
#include "tests/bench/bench_stats.h"
#include "tests/bench/broker_client.h"

namespace ccsandbox::bench {
namespace {

// Warm Exec of `true` in a session of `stub`'s daemons.
Side ExecSide(const std::string& name, v1::SandboxBroker::Stub& stub, const std::string& session) {
  v1::ExecRequest exec;
  exec.set_session_id(session);
  exec.add_argv("true");
  return {name, [&stub, exec]() -> absl::StatusOr<double> {
            absl::StatusOr<ExecTiming> timing = TimeExec(stub, exec);
            if (!timing.ok()) return timing.status();
            return timing->end;
          }};
}

// Launch of a fresh session (then its Destroy, not timed) on `stub`'s daemons.
Side LaunchSide(const std::string& name, v1::SandboxBroker::Stub& stub, const BenchSetup& setup,
                const std::string& tag) {
  auto launched = std::make_shared<int>(0);
  return {name, [&stub, &setup, tag, launched]() -> absl::StatusOr<double> {
            const v1::SandboxSpec spec = setup.SpecNamed(absl::StrCat(tag, (*launched)++));
            const Clock::time_point start = Clock::now();
            if (absl::Status s = Launch(stub, spec); !s.ok()) return s;
            const double ms = MsSince(start);
            if (absl::Status s = Destroy(stub, spec.session_id()); !s.ok()) return s;
            return ms;
          }};
}

// The counters an Exec's end reads, on a real cgroup of this host.
void AccountingRead(int runs) {
  absl::StatusOr<launcher::CgroupHierarchy> tree =
      launcher::CgroupHierarchy::Detect(absl::StrCat("ccsbench-", getpid()));
  if (!tree.ok()) {
    absl::PrintF("  accounting read: not measured (%s)\n", tree.status().message());
    return;
  }
  absl::Cleanup remove = [&] { tree->RemoveAll().IgnoreError(); };
  absl::StatusOr<std::unique_ptr<launcher::Cgroup>> cgroup = tree->Create("usage");
  if (!cgroup.ok()) {
    absl::PrintF("  accounting read: not measured (%s)\n", cgroup.status().message());
    return;
  }
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const Clock::time_point start = Clock::now();
    (void)(*cgroup)->Usage();
    ms.push_back(MsSince(start));
  }
  PrintLine(absl::StrCat("accounting read (Cgroup::Usage, ", tree->Describe(), ")"), ms);
}

}  // namespace

absl::Status FigureLimits(const BenchSetup& with_limits, v1::SandboxBroker::Stub& without_limits,
                          int runs) {
  const std::string session = with_limits.spec.session_id() + "-h";
  v1::SandboxSpec spec = with_limits.spec;
  spec.set_session_id(session);
  if (absl::Status s = Launch(*with_limits.stub, spec); !s.ok()) return s;
  absl::Cleanup destroy_on = [&] { Destroy(*with_limits.stub, session).IgnoreError(); };
  if (absl::Status s = Launch(without_limits, spec); !s.ok()) return s;
  absl::Cleanup destroy_off = [&] { Destroy(without_limits, session).IgnoreError(); };

  std::vector<Side> execs = {ExecSide("limits on", *with_limits.stub, session),
                             ExecSide("limits off", without_limits, session)};
  if (absl::Status done = Alternate(with_limits.warmup, runs, execs); !done.ok()) return done;
  PrintSides("H  resource limits: warm Exec([\"true\"]), limits on vs --cgroups=off", execs);
  PrintRatio("H warm Exec, cgroup limits on", execs[0], execs[1], 1.05);

  std::vector<Side> launches = {LaunchSide("limits on", *with_limits.stub, with_limits, "hon"),
                                LaunchSide("limits off", without_limits, with_limits, "hoff")};
  if (absl::Status done = Alternate(with_limits.warmup, std::max(1, runs / 2), launches);
      !done.ok()) {
    return done;
  }
  PrintSides("   Launch, limits on vs --cgroups=off", launches);
  PrintRatio("H Launch, cgroup limits on", launches[0], launches[1], 1.05);
  AccountingRead(1000);
  return absl::OkStatus();
}

}  // namespace ccsandbox::bench
