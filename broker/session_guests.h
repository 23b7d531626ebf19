// The microVMs of the broker's microvm sessions (one guest per session, with the directory its
// files live in), and the stop requests of the runs in them: a Kill or Destroy reaches a run
// in a guest here, since the launcher does not know it.
#ifndef CCSANDBOX_BROKER_SESSION_GUESTS_H_
#define CCSANDBOX_BROKER_SESSION_GUESTS_H_

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "broker/microvm/runtime.h"

namespace ccsandbox::broker {

class SessionGuests {
 public:
  struct Entry {
    std::shared_ptr<microvm::Guest> guest;
    std::string state_dir;  // the RuntimeDir session directory the guest's files are in
  };

  // False when the session has one already.
  bool Add(const std::string& session_id, Entry entry);
  std::shared_ptr<microvm::Guest> Get(const std::string& session_id) const;
  std::optional<Entry> Remove(const std::string& session_id);

  // A run in a guest, from its start to its end.
  void BeginRun(const std::string& run_id);
  void EndRun(const std::string& run_id);
  // Asks run `run_id` to stop, `detail` saying why; false when no such run is in a guest.
  bool RequestStop(const std::string& run_id, const std::string& detail);
  // Why the run was asked to stop; empty while it was not.
  std::string StopRequested(const std::string& run_id) const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> guests_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> runs_ ABSL_GUARDED_BY(mu_);  // run id -> stop detail
};

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_SESSION_GUESTS_H_
