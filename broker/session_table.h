// The broker's sessions: spec, handle and the runs in flight, behind one mutex.
// State: created at Launch until its sandbox is warm (a none session is warm at once), active
// while at least one Exec runs, warm again after; error once its sandbox ended by itself
// (Execs are then refused, naming the cause); gone after Destroy.
#ifndef CCSANDBOX_BROKER_SESSION_TABLE_H_
#define CCSANDBOX_BROKER_SESSION_TABLE_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "policy/plan/deny_sets.h"
#include "proto/launcher.pb.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker {

class SessionTable {
 public:
  struct RunStart {
    v1::SandboxSpec spec;
    v1::SandboxBackend backend;
    policy::DenyPaths deny;
    std::optional<v1::CreateGuardPlan> create_guard;  // unset: no create guard
    std::string sandbox_id;  // the session's warm sandbox; empty: a fresh process per run
  };

  // ALREADY_EXISTS when the session id is taken. `deny` and the create guard's patterns are
  // fixed at Launch.
  absl::Status Create(const v1::SandboxSpec& spec, const v1::SandboxHandle& handle,
                      policy::DenyPaths deny = {},
                      std::optional<v1::CreateGuardPlan> create_guard = std::nullopt);
  // NOT_FOUND for an unknown session.
  absl::StatusOr<v1::SandboxHandle> Get(const std::string& session_id) const;
  // A retried Launch: the handle of session spec.sessionId when it was launched with this very
  // spec and requested backend; ALREADY_EXISTS naming sessionId when it was launched with
  // another (a different caller must never be handed someone else's session); NOT_FOUND when
  // there is none.
  absl::StatusOr<v1::SandboxHandle> SameLaunch(const v1::SandboxSpec& spec,
                                               v1::SandboxBackend requested) const;
  std::vector<v1::SandboxHandle> List() const;
  // The sessions with a bind at, below or holding `dir` (a resolved path), each bind compared
  // on what it resolves to.
  std::vector<std::string> SessionsBinding(const std::string& dir) const;
  // What a plan of the session needs, without starting a run.
  absl::StatusOr<RunStart> Plan(const std::string& session_id) const;
  // The session's sandbox `sandbox_id` is warm; false when the session is gone (destroyed
  // meanwhile) or no longer waiting for it.
  // `limits` says how the sandbox is limited (the handle's resourceLimits detail).
  bool MarkWarm(const std::string& session_id, const std::string& sandbox_id,
                const std::string& limits = "");
  // Suspended (frozen) or back: state suspended, or warm / active as its runs say.
  void SetSuspended(const std::string& session_id, bool suspended);
  // The session's counters so far (the handle's `usage` detail).
  void SetUsage(const std::string& session_id, const v1::SandboxUsage& usage);
  // The session's sandbox ended by itself: state error, with `reason`. The first reason stays:
  // what is seen first is the cause, later reports are its consequences.
  void Fail(const std::string& session_id, const std::string& reason);
  // Marks `run_id` in flight (state active) and returns what the plan needs. FAILED_PRECONDITION
  // for a session whose sandbox ended, is not warm yet, or is suspended.
  absl::StatusOr<RunStart> BeginRun(const std::string& session_id, const std::string& run_id);
  // Back to warm once no run is in flight; a no-op for a destroyed session.
  void EndRun(const std::string& session_id, const std::string& run_id);
  // The runs in flight.
  absl::StatusOr<std::vector<std::string>> Runs(const std::string& session_id) const;
  // Destroys in two steps, so that the id stays taken until what the session holds (runs,
  // sandbox, proxies, sockets — all named by the id) is released: a Launch racing the Destroy of
  // the same id would otherwise meet the old session's proxies, or have its own stopped by the
  // Destroy. BeginDestroy makes the session gone for every call but Create (ALREADY_EXISTS until
  // EndDestroy) and returns its last handle (state destroyed), its runs in flight and, in
  // `sandbox_id`, its warm sandbox (empty: none yet); EndDestroy removes it.
  absl::StatusOr<std::pair<v1::SandboxHandle, std::vector<std::string>>> BeginDestroy(
      const std::string& session_id, std::string* sandbox_id = nullptr);
  void EndDestroy(const std::string& session_id);
  // Both at once (nothing to release in between).
  absl::StatusOr<std::pair<v1::SandboxHandle, std::vector<std::string>>> Destroy(
      const std::string& session_id);

 private:
  struct Session {
    v1::SandboxSpec spec;
    v1::SandboxHandle handle;
    std::set<std::string> runs;
    policy::DenyPaths deny;
    std::optional<v1::CreateGuardPlan> create_guard;
    std::string sandbox_id;
    bool destroying = false;  // between BeginDestroy and EndDestroy
  };
  // The session unless it is being destroyed, else end().
  std::map<std::string, Session>::iterator Live(const std::string& session_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::map<std::string, Session>::const_iterator Live(const std::string& session_id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  mutable absl::Mutex mu_;
  std::map<std::string, Session> sessions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_SESSION_TABLE_H_
