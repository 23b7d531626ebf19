// What the launcher does with a LaunchPlan it has validated, and the invariants the result must
// keep, shared by spec_json_fuzz and launch_plan_fuzz: the shim's arguments (ShimArgsFor,
// RenderShimArgs), the bwrap argv (RenderBwrapArgv over a made-up host), then the argv read
// back with bubblewrap's grammar:
//  - every word before "--" is an option bwrap knows with its arguments; namespaces unshared and
//    capabilities dropped first; uid 0 inside only for a root caller;
//  - the plan's mounts in order, writable exactly when the plan says;
//  - a writable bind only at or below a writable mount of the plan;
//  - every secret (deny-read) that exists and is visible is, at the end, covered by an empty
//    read-only tmpfs or /dev/null, and every existing deny-write path by something read-only;
//  - "--chdir" the plan's working directory; after "--" the shim (when the plan needs it) whose
//    arguments the shim itself parses back to what the launcher meant, then exactly the plan's
//    command.
#ifndef CCSANDBOX_TESTS_FUZZ_LAUNCH_CHECK_H_
#define CCSANDBOX_TESTS_FUZZ_LAUNCH_CHECK_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/host_view.h"
#include "base/paths.h"
#include "launcher/shim/shim_args.h"
#include "launcher/shim_plan.h"
#include "policy/plan/bwrap_argv.h"
#include "policy/plan/egress_wiring.h"
#include "policy/plan/push_wiring.h"
#include "proto/launcher.pb.h"
#include "tests/fuzz/fuzz_check.h"

namespace ccsandbox::fuzz {

// A host where the plan's mount points and their ancestors are directories, the default system
// base is Debian's merged /usr, and every other path is a directory, a file, a symlink or
// missing as a stable hash of its spelling says.
class MadeUpHost : public HostView {
 public:
  explicit MadeUpHost(const v1::LaunchPlan& plan) {
    for (const v1::PlanMount& mount : plan.mounts()) {
      for (std::string p = mount.guest_path(); p != "/"; p = ParentPath(p)) directories_[p] = true;
      for (std::string p = mount.host_path(); p != "/"; p = ParentPath(p)) directories_[p] = true;
    }
  }
  Kind KindOf(const std::string& path) const override {
    static const std::map<std::string, Kind> kSystem = {
        {"/", Kind::kDirectory},    {"/usr", Kind::kDirectory}, {"/etc", Kind::kDirectory},
        {"/bin", Kind::kSymlink},   {"/sbin", Kind::kSymlink},  {"/lib", Kind::kSymlink},
        {"/lib64", Kind::kSymlink}, {"/lib32", Kind::kMissing}, {"/libx32", Kind::kMissing},
        {"/dev/null", Kind::kFile}};
    if (auto it = kSystem.find(path); it != kSystem.end()) return it->second;
    if (directories_.count(path) > 0) return Kind::kDirectory;
    uint32_t h = 2166136261u;  // FNV-1a
    for (char c : path) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
    switch (h % 8) {
      case 0:
      case 1:
      case 2:
      case 3:
        return Kind::kDirectory;
      case 4:
      case 5:
        return Kind::kFile;
      case 6:
        return Kind::kSymlink;
      default:
        return Kind::kMissing;
    }
  }
  std::string LinkTarget(const std::string& path) const override {
    return KindOf(path) == Kind::kSymlink ? "usr" + path : "";
  }

 private:
  std::map<std::string, bool> directories_;
};

// One mount operation as bwrap applies it: later ones cover earlier ones at or below `dest`.
struct MountOp {
  std::string dest;
  bool read_only = false;
  bool hides = false;  // an empty tmpfs or /dev/null: nothing of the host shows through
};

inline bool ThroughSymlink(const std::string& path, const HostView& host) {
  for (std::string a = ParentPath(path); a != "/"; a = ParentPath(a)) {
    if (host.KindOf(a) == HostView::Kind::kSymlink) return true;
  }
  return false;
}

// A fresh /proc, /dev or /tmp of bwrap's (with /proc/sys read-only in it): nothing of the host.
inline bool BwrapsOwn(const std::string& dest) {
  return IsUnderOrEqual(dest, "/proc") || dest == "/dev" || dest == "/tmp";
}

// The last operation that covers `path`, or nullptr.
inline const MountOp* Covering(const std::vector<MountOp>& ops, const std::string& path) {
  const MountOp* last = nullptr;
  for (const MountOp& op : ops) {
    if (IsUnderOrEqual(path, op.dest)) last = &op;
  }
  return last;
}

// Renders `plan` as the launcher does (its shim arguments for a guard channel on fd 5, or
// per-exec in a warm sandbox's init) and checks the argv. The plan passed ValidatePlan.
inline void CheckLaunch(const v1::LaunchPlan& plan, bool warm, bool inside_root) {
  absl::StatusOr<launcher::ShimArgs> shim = launcher::ShimArgsFor(
      plan, warm ? std::optional<int>(launcher::kPerExecGuardChannel) : std::optional<int>(5));
  FUZZ_CHECK(shim.ok());
  if (warm) shim->init_fd = 6;
  policy::BwrapConfig config;
  config.bwrap_path = "/usr/bin/bwrap";
  config.system_ro_dirs = policy::DefaultSystemRoDirs();
  config.seccomp_fd = 4;
  config.shim_path = "/usr/libexec/ccsandbox/sandbox_shim";
  config.shim_args = launcher::RenderShimArgs(*shim);
  config.inside_root = inside_root;
  config.warm_init = warm;
  const MadeUpHost host(plan);
  absl::StatusOr<std::vector<std::string>> rendered = policy::RenderBwrapArgv(plan, config, host);
  FUZZ_CHECK(rendered.ok());
  const std::vector<std::string>& argv = *rendered;

  // bwrap's grammar, for the options the renderer uses: name -> argument count.
  static const std::map<std::string, int> kArity = {
      {"--unshare-all", 0}, {"--die-with-parent", 0}, {"--cap-drop", 1}, {"--uid", 1},
      {"--gid", 1},         {"--seccomp", 1},         {"--ro-bind", 2},  {"--bind", 2},
      {"--ro-bind-try", 2}, {"--symlink", 2},         {"--proc", 1},     {"--dev", 1},
      {"--tmpfs", 1},       {"--remount-ro", 1},      {"--chdir", 1}};
  FUZZ_CHECK(argv.size() >= 6 && argv[0] == config.bwrap_path && argv[1] == "--unshare-all" &&
             argv[2] == "--die-with-parent" && argv[3] == "--cap-drop" && argv[4] == "ALL");
  std::vector<MountOp> ops;
  std::vector<std::pair<std::string, bool>> plan_binds;  // (dest, writable), in argv order
  std::optional<std::string> chdir;
  bool uid0 = false;
  bool binds_started = false;  // past bwrap's own /tmp: the plan's binds and the deny operations
  size_t i = 1;
  for (; i < argv.size() && argv[i] != "--"; ++i) {
    auto arity = kArity.find(argv[i]);
    FUZZ_CHECK(arity != kArity.end() && i + arity->second < argv.size());
    const std::string& op = argv[i];
    const std::string a = arity->second >= 1 ? argv[i + 1] : "";
    const std::string b = arity->second >= 2 ? argv[i + 2] : "";
    if (op == "--uid") uid0 = a == "0";
    if (op == "--chdir") chdir = a;
    if (op == "--bind" || op == "--ro-bind" || op == "--ro-bind-try") {
      FUZZ_CHECK(!b.empty() && b[0] == '/');
      const bool dev_null = a == "/dev/null";
      // The sandbox's own objects replace whatever the host has at their paths.
      const bool own = b == policy::kSandboxShimPath || b == policy::kSandboxHttpSocket ||
                       b == policy::kSandboxSocksSocket || b == policy::kSandboxPushSocket;
      // No staged sources here: a bind's source is its destination, /dev/null or our own.
      FUZZ_CHECK(a == b || dev_null || own);
      ops.push_back({b, op != "--bind", dev_null || own});
      if (op == "--bind") {
        bool inside_writable = false;
        for (const v1::PlanMount& mount : plan.mounts()) {
          inside_writable =
              inside_writable || (!mount.read_only() && IsUnderOrEqual(b, mount.guest_path()));
        }
        FUZZ_CHECK(inside_writable);
      }
      bool is_plan_mount = false;
      for (const v1::PlanMount& mount : plan.mounts()) {
        is_plan_mount = is_plan_mount || mount.guest_path() == b;
      }
      if (binds_started && is_plan_mount && !dev_null) plan_binds.push_back({b, op == "--bind"});
    }
    if (op == "--proc" || op == "--dev") ops.push_back({a, false, true});
    if (op == "--tmpfs") {
      binds_started = binds_started || a == "/tmp";
      ops.push_back({a, false, true});
    }
    if (op == "--remount-ro") {
      FUZZ_CHECK(!ops.empty() && ops.back().dest == a);
      ops.back().read_only = true;
    }
    i += arity->second;
  }
  FUZZ_CHECK(i < argv.size() && argv[i] == "--");
  FUZZ_CHECK(uid0 == inside_root);
  FUZZ_CHECK(chdir.has_value() && *chdir == plan.workdir());

  // The plan's mounts, in order and as writable as the plan says (a deny-write path may also be
  // one of them: its read-only self-bind comes after).
  size_t next = 0;
  for (const v1::PlanMount& mount : plan.mounts()) {
    while (next < plan_binds.size() && plan_binds[next].first != mount.guest_path()) ++next;
    FUZZ_CHECK(next < plan_binds.size() && plan_binds[next].second == !mount.read_only());
    ++next;
  }

  // Secrets hidden, protected paths read-only — wherever they exist and are visible.
  for (const std::string& path : plan.deny_read_paths()) {
    const HostView::Kind kind = host.KindOf(path);
    if (kind != HostView::Kind::kDirectory && kind != HostView::Kind::kFile) continue;
    if (ThroughSymlink(path, host)) continue;
    const MountOp* op = Covering(ops, path);
    if (op == nullptr || BwrapsOwn(op->dest)) continue;  // not visible, or not the host's
    FUZZ_CHECK(op->hides && op->read_only);
  }
  for (const std::string& path : plan.deny_write_paths()) {
    const HostView::Kind kind = host.KindOf(path);
    if (kind != HostView::Kind::kDirectory && kind != HostView::Kind::kFile) continue;
    if (ThroughSymlink(path, host)) continue;
    const MountOp* op = Covering(ops, path);
    if (op == nullptr || BwrapsOwn(op->dest)) continue;
    FUZZ_CHECK(op->read_only);
  }

  // After "--": the shim and what it parses, then the command.
  std::vector<std::string> rest(argv.begin() + i + 1, argv.end());
  const bool needs_shim = warm || plan.has_egress() || plan.has_create_guard();
  if (needs_shim) {
    FUZZ_CHECK(!rest.empty() && rest[0] == policy::kSandboxShimPath);
    rest.erase(rest.begin());
    absl::StatusOr<launcher::ShimCommandLine> line = launcher::ParseShimArgs(rest);
    FUZZ_CHECK(line.ok());
    FUZZ_CHECK(line->args == *shim);
    rest.erase(rest.begin(), rest.begin() + line->command_start);
  }
  FUZZ_CHECK(rest == std::vector<std::string>(plan.argv().begin(), plan.argv().end()));
}

}  // namespace ccsandbox::fuzz

#endif  // CCSANDBOX_TESTS_FUZZ_LAUNCH_CHECK_H_
