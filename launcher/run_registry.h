// Running commands by run id, so the Signal RPC can reach them. A run is visible only to
// the uid that started it.
#ifndef CCSANDBOX_LAUNCHER_RUN_REGISTRY_H_
#define CCSANDBOX_LAUNCHER_RUN_REGISTRY_H_

#include <sys/types.h>

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "launcher/run_control.h"

namespace ccsandbox::launcher {

class RunRegistry {
 public:
  // ALREADY_EXISTS when `run_id` is running.
  absl::Status Add(const std::string& run_id, uid_t owner, RunControl* control);
  void Remove(const std::string& run_id);
  // NOT_FOUND unless `run_id` runs and belongs to `caller`.
  absl::Status Signal(const std::string& run_id, uid_t caller, int signal, std::string reason);
  // Queues SIGKILL for every run (launcher shutdown).
  void KillAll(const std::string& reason);

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
