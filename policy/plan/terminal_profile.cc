#include "policy/plan/terminal_profile.h"

#include <signal.h>

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "policy/plan/deny_sets.h"

namespace ccsandbox::policy {
namespace {

constexpr uint32_t kMaxSide = 1000;
constexpr size_t kMaxTerm = 64;

void AddMount(v1::LaunchPlan& plan, const std::string& path,
              const std::map<std::string, FileIdentity>& ids) {
  v1::PlanMount* mount = plan.add_mounts();
  mount->set_host_path(path);
  mount->set_guest_path(path);
  mount->set_read_only(false);
  if (auto id = ids.find(path); id != ids.end()) {
    mount->set_dev(id->second.dev);
    mount->set_ino(id->second.ino);
  }
}

}  // namespace

std::vector<std::string> TerminalSecretPaths(const std::string& home) {
  std::vector<std::string> paths;
  for (const std::vector<std::string>* set : {&SecretNames(), &HomeSecretPaths()}) {
    for (const std::string& relative : *set) paths.push_back(absl::StrCat(home, "/", relative));
  }
  return paths;
}

bool ValidTerminalSize(const v1::TerminalSize& size) {
  return size.rows() >= 1 && size.rows() <= kMaxSide && size.cols() >= 1 && size.cols() <= kMaxSide;
}

bool IsTerminalSignal(int sig) {
  for (int allowed : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGKILL, SIGTSTP, SIGCONT, SIGWINCH}) {
    if (sig == allowed) return true;
  }
  return false;
}

absl::Status CheckTerminalSize(unsigned rows, unsigned cols) {
  v1::TerminalSize size;
  size.set_rows(rows);
  size.set_cols(cols);
  if (!ValidTerminalSize(size)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "size: ", rows, "x", cols, " is not a terminal size (rows and cols 1..", kMaxSide, ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckTerminalSignal(int sig) {
  if (!IsTerminalSignal(sig)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "signal: ", sig,
        " is not one a terminal sends (INT, QUIT, TERM, HUP, KILL, TSTP, CONT, WINCH)"));
  }
  return absl::OkStatus();
}

absl::Status CheckTerminalOpen(const v1::TerminalOpen& open) {
  if (!open.working_directory().empty()) {
    if (absl::Status s = CheckNormalizedAbsolute("workingDirectory", open.working_directory());
        !s.ok()) {
      return s;
    }
  }
  if (open.argv_size() > 0 && open.argv(0).empty()) {
    return absl::InvalidArgumentError("argv[0]: the program is empty");
  }
  if (open.term().size() > kMaxTerm) {
    return absl::InvalidArgumentError(
        absl::StrCat("term: ", open.term().size(), " characters; at most ", kMaxTerm));
  }
  for (char c : open.term()) {
    if (!absl::ascii_isgraph(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError(
          "term: only printable ASCII without spaces (e.g. xterm-256color)");
    }
  }
  return CheckTerminalSize(open.size().rows(), open.size().cols());
}

std::vector<std::string> TerminalMounts(const std::string& home, const std::string& workdir) {
  if (IsUnderOrEqual(home, workdir)) return {workdir};
  if (IsUnderOrEqual(workdir, home)) return {home};
  return {home, workdir};
}

absl::StatusOr<v1::LaunchPlan> BuildTerminalPlan(const TerminalInputs& in) {
  if (in.backend != v1::SANDBOX_BACKEND_NONE && in.backend != v1::SANDBOX_BACKEND_NATIVE) {
    return absl::InvalidArgumentError("backend: a terminal plan is native or none");
  }
  if (absl::Status s = CheckNormalizedAbsolute("home", in.home); !s.ok()) return s;
  if (absl::Status s = CheckNormalizedAbsolute("workingDirectory", in.workdir); !s.ok()) return s;
  if (in.argv.empty() || in.argv[0].empty()) {
    return absl::InvalidArgumentError("argv: the program is empty");
  }
  v1::LaunchPlan plan;
  plan.set_run_id(in.run_id);
  plan.set_session_id(in.session_id);
  plan.set_backend(in.backend);
  for (const std::string& arg : in.argv) plan.add_argv(arg);
  plan.set_workdir(in.workdir);
  std::map<std::string, std::string> env = in.base_env;
  env["HOME"] = in.home;
  env["TERM"] = in.term.empty() ? "xterm-256color" : in.term;
  env["SHELL"] = in.argv[0];
  for (const auto& [name, value] : env) (*plan.mutable_env())[name] = value;
  if (in.backend == v1::SANDBOX_BACKEND_NONE) return plan;  // the host shell, as it is

  // Spec: "$HOME and the session's working directory are writable, the network is open".
  std::map<std::string, FileIdentity> ids = in.bind_ids;
  for (const auto& [path, id] : in.deny.bind_ids) ids[path] = id;
  for (const std::string& mount : TerminalMounts(in.home, in.workdir)) AddMount(plan, mount, ids);
  std::set<std::string> hidden;
  for (const std::string& path : in.deny.read) {
    if (hidden.insert(path).second) plan.add_deny_read_paths(path);
  }
  for (const std::string& path : in.deny.write) plan.add_deny_write_paths(path);
  if (in.create_guard.has_value()) *plan.mutable_create_guard() = *in.create_guard;
  for (const std::string& dir : in.forbidden_dirs) plan.add_forbidden_dirs(dir);
  plan.set_open_network(true);
  return plan;
}

}  // namespace ccsandbox::policy
