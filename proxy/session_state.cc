#include "proxy/session_state.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::proxy {

SessionChild::SessionChild(std::shared_ptr<SessionState> state) : state_(std::move(state)) {}

SessionChild::~SessionChild() { state_->Unregister(this); }

SessionState::SessionState(asio::io_context& context, SessionProxiesOptions options)
    : context_(context), options_(std::move(options)) {}

void SessionState::Register(const std::shared_ptr<SessionChild>& child, bool refusing) {
  children_[child.get()] = Child{child, refusing};
  if (refusing) {
    ++refusing_;
  } else {
    ++admitted_;
    if (options_.budget != nullptr) options_.budget->Add();
  }
  if (stopping_) child->Close();
}

void SessionState::Unregister(SessionChild* child) {
  auto it = children_.find(child);
  if (it == children_.end()) return;
  if (it->second.refusing) {
    --refusing_;
  } else {
    --admitted_;
    if (options_.budget != nullptr) options_.budget->Remove();
  }
  children_.erase(it);
  MaybeDrained();
}

bool SessionState::CanAdmit() const {
  return admitted_ < options_.max_connections &&
         (options_.budget == nullptr || !options_.budget->full() ||
          admitted_ < options_.guaranteed_connections);
}

std::string SessionState::LimitReason() const {
  if (admitted_ >= options_.max_connections) {
    return absl::StrCat("connection limit: this session has ", admitted_,
                        " proxied connections open, the most one session may have");
  }
  return absl::StrCat("connection limit: the egress proxies of all sessions have ",
                      options_.budget->open(), " connections open, the most the broker allows");
}

void SessionState::RemovePending() {
  --pending_;
  MaybeDrained();
}

void SessionState::ReportViolation(absl::string_view protocol, const std::string& target,
                                   const std::string& reason, bool log) {
  if (log) {
    spdlog::info("egress refused: session={} proxy={} target={} reason=\"{}\"", options_.session_id,
                 std::string(protocol), target, reason);
  }
  if (options_.on_violation) {
    EgressViolation violation;
    violation.target = target;
    violation.raw = reason;
    options_.on_violation(violation);
  }
}

void SessionState::BeginStop(std::promise<void> drained) {
  drained_ = std::move(drained);
  stopping_ = true;
  std::vector<std::shared_ptr<SessionChild>> open;
  open.reserve(children_.size());
  for (auto& [raw, weak] : children_) {
    if (std::shared_ptr<SessionChild> child = weak.child.lock()) open.push_back(std::move(child));
  }
  for (const std::shared_ptr<SessionChild>& child : open) child->Close();
  open.clear();  // may destroy children, which unregister
  MaybeDrained();
}

void SessionState::MaybeDrained() {
  if (stopping_ && !drained_signalled_ && children_.empty() && pending_ == 0) {
    drained_signalled_ = true;
    drained_.set_value();
  }
}

}  // namespace ccsandbox::proxy
