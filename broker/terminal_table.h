// The broker's open terminals (the Terminal RPC), so an operator can see them (GetSession,
// ListSessions) and end them (Kill, Destroy, the broker's stop) like sessions. A terminal's id
// is its run id at the launcher; an entry lives exactly as long as its call.
//
//   TerminalTable::Entry entry = terminals.Add(handle, [&] { call_context.TryCancel(); });
//   ... relay ...          // the entry goes when `entry` is destroyed
//   terminals.Get(id);  terminals.List();  terminals.Contains(id);
#ifndef CCSANDBOX_BROKER_TERMINAL_TABLE_H_
#define CCSANDBOX_BROKER_TERMINAL_TABLE_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker {

// The largest keystroke message a terminal takes (a paste is split by any client well below
// this); a bigger one hangs the terminal up.
inline constexpr size_t kMaxTerminalData = 1 << 20;

class TerminalTable {
 public:
  // Removes its terminal from the table when destroyed.
  class Entry {
   public:
    Entry(TerminalTable& table, std::string id) : table_(&table), id_(std::move(id)) {}
    Entry(Entry&& other) noexcept : table_(std::exchange(other.table_, nullptr)), id_(other.id_) {}
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;
    Entry& operator=(Entry&&) = delete;
    ~Entry() {
      if (table_ != nullptr) table_->Remove(id_);
    }

   private:
    TerminalTable* table_;
    std::string id_;
  };

  // `hang_up` ends the terminal's call when the launcher cannot be asked to kill it.
  Entry Add(const v1::SandboxHandle& handle, std::function<void()> hang_up);
  bool Contains(const std::string& id) const;
  std::optional<v1::SandboxHandle> Get(const std::string& id) const;
  std::vector<v1::SandboxHandle> List() const;
  // Runs `hang_up` of terminal `id`; false when there is none.
  bool HangUp(const std::string& id) const;
  // Waits at most `limit` for terminal `id` to leave the table; true once it has.
  bool AwaitGone(const std::string& id, absl::Duration limit) const;
  std::vector<std::string> Ids() const;
  // Takes one of `limit` places for a terminal's call, for its whole life (opening included);
  // false when all are taken. Unreserve gives it back when the call ends.
  bool Reserve(size_t limit);
  void Unreserve();

 private:
  void Remove(const std::string& id);

  struct Open {
    v1::SandboxHandle handle;
    std::function<void()> hang_up;
  };
  mutable absl::Mutex mu_;
  std::map<std::string, Open> open_ ABSL_GUARDED_BY(mu_);
  size_t reserved_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_TERMINAL_TABLE_H_
