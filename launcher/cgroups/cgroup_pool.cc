#include "launcher/cgroups/cgroup_pool.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace ccsandbox::launcher {

CgroupPool::CgroupPool(CgroupHierarchy tree, std::string prefix)
    : tree_(std::move(tree)), prefix_(std::move(prefix)), worker_([this] { Work(); }) {}

CgroupPool::~CgroupPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  worker_.join();
  // What is left: the ready one and anything retired since the worker's last round.
  absl::MutexLock lock(&mu_);
  ready_.reset();
  retired_.clear();
}

void CgroupRetirer::operator()(Cgroup* cgroup) const {
  std::unique_ptr<Cgroup> owned(cgroup);
  if (pool != nullptr) pool->Retire(std::move(owned));
}

absl::StatusOr<PooledCgroup> CgroupPool::Take() {
  uint64_t n;
  {
    absl::MutexLock lock(&mu_);
    if (ready_ != nullptr) {  // the worker makes the next
      return PooledCgroup(ready_.release(), CgroupRetirer{this});
    }
    n = next_++;
  }
  absl::StatusOr<std::unique_ptr<Cgroup>> made =
      tree_.Create(absl::StrCat(prefix_, getpid(), "-", n));
  if (!made.ok()) return made.status();
  return PooledCgroup(made->release(), CgroupRetirer{this});
}

void CgroupPool::Retire(std::unique_ptr<Cgroup> cgroup) {
  if (cgroup == nullptr) return;
  (void)cgroup->KillAll();  // nothing of it runs once this returns
  absl::MutexLock lock(&mu_);
  retired_.push_back(std::move(cgroup));
}

void CgroupPool::Work() {
  for (;;) {
    std::vector<std::unique_ptr<Cgroup>> retired;
    bool make = false;
    uint64_t n = 0;
    {
      absl::MutexLock lock(&mu_);
      auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || ready_ == nullptr || !retired_.empty();
      };
      mu_.Await(absl::Condition(&work));
      if (stopping_) return;
      retired.swap(retired_);
      if (ready_ == nullptr) {
        make = true;
        n = next_++;
      }
    }
    retired.clear();  // each one's destructor removes it (killed already)
    if (make) {
      absl::StatusOr<std::unique_ptr<Cgroup>> made =
          tree_.Create(absl::StrCat(prefix_, getpid(), "-", n));
      absl::MutexLock lock(&mu_);
      if (made.ok() && ready_ == nullptr) {
        ready_ = *std::move(made);
      } else if (!made.ok()) {
        // Take makes its own meanwhile; try again a little later rather than spin.
        mu_.AwaitWithTimeout(absl::Condition(&stopping_), absl::Seconds(1));
      }
    }
  }
}

}  // namespace ccsandbox::launcher
