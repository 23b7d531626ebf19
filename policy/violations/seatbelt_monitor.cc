#include "policy/violations/seatbelt_monitor.h"

#include <algorithm>
#include <utility>

namespace ccsandbox::policy {

namespace {

using Storms = std::map<SeatbeltMonitor::Key, SeatbeltMonitor::Storm>;

// Removes the storms `ends` picks and returns their events, oldest first.
template <typename Pred>
std::vector<RunViolation> TakeStorms(Storms& storms, Pred ends) {
  std::vector<SeatbeltMonitor::Storm> ended;
  for (auto it = storms.begin(); it != storms.end();) {
    if (ends(it->first, it->second)) {
      ended.push_back(std::move(it->second));
      it = storms.erase(it);
    } else {
      ++it;
    }
  }
  std::sort(ended.begin(), ended.end(),
            [](const auto& a, const auto& b) { return a.order < b.order; });
  std::vector<RunViolation> out;
  for (auto& s : ended) out.push_back(std::move(s.event));
  return out;
}

}  // namespace

SeatbeltMonitor::SeatbeltMonitor(ParentOf parent_of, Clock clock, absl::Duration window)
    : parent_of_(std::move(parent_of)), clock_(std::move(clock)), window_(window) {}

void SeatbeltMonitor::AddRun(std::string run_id, int64_t root_pid) {
  roots_[root_pid] = std::move(run_id);
}

std::vector<RunViolation> SeatbeltMonitor::RemoveRun(absl::string_view run_id) {
  std::erase_if(roots_, [&](const auto& e) { return e.second == run_id; });
  std::erase_if(known_pids_, [&](const auto& e) { return e.second == run_id; });
  return TakeStorms(storms_,
                    [&](const Key& key, const Storm&) { return std::get<0>(key) == run_id; });
}

std::optional<std::string> SeatbeltMonitor::RunOf(int64_t pid) {
  int64_t at = pid;
  for (int step = 0; step <= kMaxAncestry && at > 0; ++step) {
    if (auto root = roots_.find(at); root != roots_.end()) return root->second;
    if (auto known = known_pids_.find(at); known != known_pids_.end()) return known->second;
    const std::optional<int64_t> parent = parent_of_(at);
    if (!parent.has_value() || *parent == at) break;
    at = *parent;
  }
  return std::nullopt;
}

std::vector<RunViolation> SeatbeltMonitor::Feed(absl::string_view line) {
  std::optional<SeatbeltDenial> denial = ParseSeatbeltLogLine(line);
  if (!denial.has_value()) return {};
  return Add(*std::move(denial));
}

std::vector<RunViolation> SeatbeltMonitor::Add(SeatbeltDenial denial) {
  std::vector<RunViolation> out;
  if (IsSeatbeltNoise(denial.violation)) {
    ++noise_;
    return out;
  }
  std::optional<std::string> run = RunOf(denial.pid);
  if (!run.has_value()) {
    ++unattributed_;
    return out;
  }
  if (known_pids_.size() < kMaxKnownPids) known_pids_.emplace(denial.pid, *run);
  Key key{*run, denial.violation.action(), denial.violation.target()};
  if (auto it = storms_.find(key); it != storms_.end()) {
    ++it->second.event.count;
    return out;
  }
  if (storms_.size() >= kMaxOpenStorms) EmitOldest(out);
  Storm storm;
  storm.event.run_id = *std::move(run);
  storm.event.violation = std::move(denial.violation);
  storm.event.pid = denial.pid;
  storm.first = clock_();
  storm.order = next_order_++;
  storms_.emplace(std::move(key), std::move(storm));
  return out;
}

std::vector<RunViolation> SeatbeltMonitor::Flush() {
  const absl::Time now = clock_();
  return TakeStorms(storms_,
                    [&](const Key&, const Storm& storm) { return now - storm.first >= window_; });
}

void SeatbeltMonitor::EmitOldest(std::vector<RunViolation>& out) {
  auto oldest = std::min_element(storms_.begin(), storms_.end(), [](const auto& a, const auto& b) {
    return a.second.order < b.second.order;
  });
  out.push_back(std::move(oldest->second.event));
  storms_.erase(oldest);
}

}  // namespace ccsandbox::policy
