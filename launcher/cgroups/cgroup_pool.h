// Session cgroups made ahead and removed behind: on v1 each directory costs milliseconds to
// make and to remove (one per hierarchy), which a Launch and a Destroy should not wait for. A
// worker thread keeps one fresh cgroup ready and removes retired ones; killing is never
// deferred: Retire kills everything in the cgroup before it returns.
//
//   CgroupPool pool(tree, "s-");
//   absl::StatusOr<std::unique_ptr<Cgroup>> cg = pool.Take();   // ready at once, mostly
//   ... pool.Retire(std::move(cg));                              // killed now, removed later
#ifndef CCSANDBOX_LAUNCHER_CGROUPS_CGROUP_POOL_H_
#define CCSANDBOX_LAUNCHER_CGROUPS_CGROUP_POOL_H_

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "launcher/cgroups/cgroup.h"

namespace ccsandbox::launcher {

class CgroupPool;

// Owns a cgroup taken from a pool: when it goes, it is retired (killed now, removed later).
struct CgroupRetirer {
  CgroupPool* pool = nullptr;
  void operator()(Cgroup* cgroup) const;
};
using PooledCgroup = std::unique_ptr<Cgroup, CgroupRetirer>;

class CgroupPool {
 public:
  CgroupPool(CgroupHierarchy tree, std::string prefix);
  ~CgroupPool();  // removes what it holds; waits for the worker
  CgroupPool(const CgroupPool&) = delete;
  CgroupPool& operator=(const CgroupPool&) = delete;

  const CgroupHierarchy& tree() const { return tree_; }
  // A fresh, empty cgroup below the roots (no limits set yet), retired here when dropped.
  absl::StatusOr<PooledCgroup> Take();
  // Kills everything in `cgroup` now; its directories are removed in the background.
  void Retire(std::unique_ptr<Cgroup> cgroup);

 private:
  void Work();

  const CgroupHierarchy tree_;
  const std::string prefix_;
  absl::Mutex mu_;
  std::unique_ptr<Cgroup> ready_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Cgroup>> retired_ ABSL_GUARDED_BY(mu_);
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 1;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread worker_;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CGROUPS_CGROUP_POOL_H_
