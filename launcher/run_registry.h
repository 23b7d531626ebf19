// Running commands by run id, so the Signal RPC can reach them. A run is visible only to
// the uid that started it.
#ifndef CCSANDBOX_LAUNCHER_RUN_REGISTRY_H_
#define CCSANDBOX_LAUNCHER_RUN_REGISTRY_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "launcher/run_control.h"

namespace ccsandbox::launcher {

class RunRegistry;

// A run's controls, registered under its id for as long as this lives.
class RegisteredRun {
 public:
  RegisteredRun(RunRegistry& registry, std::string run_id, std::unique_ptr<RunControl> control)
      : registry_(&registry), run_id_(std::move(run_id)), control_(std::move(control)) {}
  RegisteredRun(RegisteredRun&& other) noexcept
      : registry_(std::exchange(other.registry_, nullptr)),
        run_id_(std::move(other.run_id_)),
        control_(std::move(other.control_)) {}
  RegisteredRun(const RegisteredRun&) = delete;
  RegisteredRun& operator=(const RegisteredRun&) = delete;
  RegisteredRun& operator=(RegisteredRun&&) = delete;
  ~RegisteredRun();
  RunControl& control() { return *control_; }

 private:
  RunRegistry* registry_;
  std::string run_id_;
  std::unique_ptr<RunControl> control_;
};

class RunRegistry {
 public:
  // A fresh RunControl registered under `run_id` until the result goes; ALREADY_EXISTS when
  // `run_id` is running.
  absl::StatusOr<RegisteredRun> Register(const std::string& run_id, uid_t owner);
  // ALREADY_EXISTS when `run_id` is running.
  absl::Status Add(const std::string& run_id, uid_t owner, RunControl* control);
  void Remove(const std::string& run_id);
  // NOT_FOUND unless `run_id` runs and belongs to `caller`.
  absl::Status Signal(const std::string& run_id, uid_t caller, int signal, KillCause cause);
  // Queues SIGKILL for every run (launcher shutdown).
  void KillAll(const KillCause& cause);

 private:
  struct Entry {
    uid_t owner;
    RunControl* control;
  };
  absl::Mutex mu_;
  std::map<std::string, Entry> runs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_RUN_REGISTRY_H_
