#include "broker/policy_service.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "policy/command/command_policy.h"
#include "policy/command/rule.h"
#include "policy/guardrails/guardrails.h"
#include "policy/guardrails/path_confinement.h"
#include "policy/mode.h"
#include "policy/verdict.h"
#include "proto/grpc_status.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker {
namespace {

// Each effect (and push ref) is matched against every rule: unbounded lists would let one
// request pin a broker thread.
constexpr int kMaxRules = 1000;
constexpr int kMaxResolutions = 1000;
constexpr int kMaxRoots = 64;

grpc::Status InvalidArgument(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

v1::PolicyVerdict ToProto(policy::PolicyVerdict verdict) {
  switch (verdict) {
    case policy::PolicyVerdict::kAllow:
      return v1::POLICY_VERDICT_ALLOW;
    case policy::PolicyVerdict::kPrompt:
      return v1::POLICY_VERDICT_PROMPT;
    case policy::PolicyVerdict::kDeny:
      return v1::POLICY_VERDICT_DENY;
  }
  return v1::POLICY_VERDICT_DENY;
}

// UNSPECIFIED is the rule set's own default (prompt).
std::optional<policy::PolicyVerdict> DefaultVerdictFromProto(int verdict) {
  switch (verdict) {
    case v1::POLICY_VERDICT_UNSPECIFIED:
      return policy::GuardrailRuleSet().default_verdict;
    case v1::POLICY_VERDICT_ALLOW:
      return policy::PolicyVerdict::kAllow;
    case v1::POLICY_VERDICT_PROMPT:
      return policy::PolicyVerdict::kPrompt;
    case v1::POLICY_VERDICT_DENY:
      return policy::PolicyVerdict::kDeny;
    default:
      return std::nullopt;
  }
}

std::string KnownEffectIds() {
  std::vector<absl::string_view> ids;
  for (int i = 0; i < policy::kEffectClassCount; ++i) {
    ids.push_back(policy::EffectClassId(static_cast<policy::EffectClass>(i)));
  }
  return absl::StrJoin(ids, ", ");
}

void FillResolution(const policy::EffectResolution& resolution,
                    const policy::GuardrailRuleSet& rules, v1::EffectResolution* out) {
  out->set_effect(std::string(policy::EffectClassId(resolution.effect)));
  out->set_ref(resolution.ref);
  out->set_verdict(ToProto(resolution.verdict));
  if (resolution.rule_index >= 0 &&
      static_cast<size_t>(resolution.rule_index) < rules.rules.size()) {
    out->set_rule_index(resolution.rule_index);
    out->set_rule(policy::FormatGuardrailRule(rules.rules[resolution.rule_index]));
  }
}

}  // namespace

PolicyService::PolicyService(workspace::Workspaces* workspaces)
    : host_view_(real_view_), workspaces_(workspaces) {}

PolicyService::PolicyService(const HostView& host_view) : host_view_(host_view) {}

grpc::Status PolicyService::EvaluateCommand(grpc::ServerContext*,
                                            const v1::EvaluateCommandRequest* request,
                                            v1::CommandDecision* decision) {
  absl::StatusOr<policy::Mode> mode = policy::ParseMode(request->mode());
  if (!mode.ok()) return ToGrpc(mode.status());
  const policy::CommandDecision d = policy::EvaluateCommand(*mode, request->command_line());
  decision->set_verdict(ToProto(d.verdict));
  decision->set_rule(std::string(policy::CommandRuleId(d.rule)));
  decision->set_rule_name(std::string(policy::CommandRuleName(d.rule)));
  decision->set_subcommand(d.subcommand);
  decision->set_reason(d.reason);
  decision->set_fully_analysed(d.fully_analysed);
  decision->set_mode(std::string(policy::ModeName(*mode)));
  for (const policy::CommandFinding& f : d.findings) {
    v1::CommandFinding* finding = decision->add_findings();
    finding->set_rule(std::string(policy::CommandRuleId(f.rule)));
    finding->set_rule_name(std::string(policy::CommandRuleName(f.rule)));
    finding->set_verdict(ToProto(policy::CommandRuleVerdict(*mode, f.rule)));
    finding->set_subcommand(f.subcommand);
    finding->set_reason(f.reason);
    for (const std::string& ref : f.push_refs) finding->add_push_refs(ref);
  }
  if (d.verdict == policy::PolicyVerdict::kDeny) {
    spdlog::debug("policy: {} mode denies '{}' ({}): {}", decision->mode(), d.subcommand,
                  decision->rule(), d.reason);
  }
  return grpc::Status::OK;
}

grpc::Status PolicyService::ResolveAction(grpc::ServerContext*,
                                          const v1::ResolveActionRequest* request,
                                          v1::GuardrailDecision* decision) {
  if (request->rules_size() > kMaxRules) {
    return InvalidArgument(
        absl::StrCat("rules: ", request->rules_size(), " rules; at most ", kMaxRules));
  }
  policy::GuardrailRuleSet rules;
  for (int i = 0; i < request->rules_size(); ++i) {
    absl::StatusOr<policy::GuardrailRule> rule = policy::ParseGuardrailRule(request->rules(i));
    if (!rule.ok())
      return InvalidArgument(absl::StrCat("rules[", i, "]: ", rule.status().message()));
    rules.rules.push_back(*std::move(rule));
  }
  const std::optional<policy::PolicyVerdict> default_verdict =
      DefaultVerdictFromProto(request->default_verdict());
  if (!default_verdict.has_value()) {
    return InvalidArgument(absl::StrCat("defaultVerdict: unknown value ",
                                        request->default_verdict(),
                                        "; expected POLICY_VERDICT_ALLOW, _PROMPT or _DENY"));
  }
  rules.default_verdict = *default_verdict;

  policy::ActionRequest action;
  int resolutions = 0;
  for (int i = 0; i < request->effects_size(); ++i) {
    const v1::EffectRequest& e = request->effects(i);
    const std::string field = absl::StrCat("effects[", i, "]");
    std::optional<policy::EffectClass> effect = policy::EffectClassFromId(e.effect());
    if (!effect.has_value()) {
      return InvalidArgument(absl::StrCat(field, ".effect: unknown effect class '", e.effect(),
                                          "'; known: ", KnownEffectIds()));
    }
    if (e.refs_size() > 0 && *effect != policy::EffectClass::kPushToRemote) {
      return InvalidArgument(
          absl::StrCat(field, ".refs: only push_to_remote takes refs, not ", e.effect()));
    }
    resolutions += std::max(1, e.refs_size());
    if (resolutions > kMaxResolutions) {
      return InvalidArgument(
          absl::StrCat("effects: more than ", kMaxResolutions, " effects and push refs"));
    }
    action.effects.push_back({*effect, {e.refs().begin(), e.refs().end()}});
  }
  action.current_branch = request->current_branch();
  action.approver_connected = request->approver_connected();

  const policy::GuardrailDecision d = policy::ResolveAction(action, rules);
  decision->set_verdict(ToProto(d.verdict));
  decision->set_rule_verdict(ToProto(d.rule_verdict));
  decision->set_denied_for_no_approver(d.denied_for_no_approver);
  if (d.decided_by.has_value())
    FillResolution(*d.decided_by, rules, decision->mutable_decided_by());
  decision->set_reason(d.reason);
  for (const policy::EffectResolution& r : d.resolutions) {
    FillResolution(r, rules, decision->add_resolutions());
  }
  if (d.verdict == policy::PolicyVerdict::kDeny)
    spdlog::debug("policy: guardrails deny: {}", d.reason);
  return grpc::Status::OK;
}

grpc::Status PolicyService::ConfinePath(grpc::ServerContext*, const v1::ConfinePathRequest* request,
                                        v1::ConfinedPath* confined) {
  // A dispatch's roots are the directories its Launch binds: the two never disagree.
  google::protobuf::RepeatedPtrField<v1::ConfinementRoot> dispatch_roots;
  std::string workdir = request->workdir();
  if (request->has_dispatch()) {
    if (request->roots_size() > 0) {
      return InvalidArgument("roots: give roots or a dispatch, not both");
    }
    if (workspaces_ == nullptr) {
      return ToGrpc(absl::FailedPreconditionError(
          "dispatch: this broker keeps no workspaces; start it with --data-dir=DIR"));
    }
    absl::StatusOr<v1::DispatchPlan> plan = workspaces_->PlanDispatch(request->dispatch());
    if (!plan.ok()) {
      return ToGrpc(
          absl::Status(plan.status().code(), absl::StrCat("dispatch.", plan.status().message())));
    }
    dispatch_roots = plan->confinement_roots();
    if (workdir.empty()) workdir = plan->workdir();
  }
  const auto& request_roots = request->has_dispatch() ? dispatch_roots : request->roots();
  if (request_roots.empty()) {
    return InvalidArgument("roots: empty; give at least the run's working directory");
  }
  if (request_roots.size() > kMaxRoots) {
    return InvalidArgument(
        absl::StrCat("roots: ", request_roots.size(), " roots; at most ", kMaxRoots));
  }
  if (request->path().empty()) return InvalidArgument("path: empty");
  if (request->path().find('\0') != std::string::npos) {
    return InvalidArgument("path: contains a NUL byte");
  }
  policy::PathIntent intent;
  switch (request->intent()) {
    case v1::PATH_INTENT_READ:
      intent = policy::PathIntent::kRead;
      break;
    case v1::PATH_INTENT_WRITE:
      intent = policy::PathIntent::kWrite;
      break;
    default:
      return InvalidArgument("intent: must be PATH_INTENT_READ or PATH_INTENT_WRITE");
  }
  std::vector<policy::ConfinementRoot> roots;
  for (const v1::ConfinementRoot& root : request_roots) {
    roots.push_back({root.path(), root.writable()});
  }
  absl::StatusOr<policy::ConfinedPath> p =
      policy::ConfinePath(host_view_, roots, workdir, request->path(), intent);
  if (!p.ok()) {
    if (absl::IsPermissionDenied(p.status())) {
      spdlog::debug("policy: path refused: {}", std::string(p.status().message()));
    }
    return ToGrpc(p.status());
  }
  confined->set_root_index(static_cast<uint32_t>(p->root_index));
  confined->set_root(roots[p->root_index].path);
  confined->set_relative(p->relative);
  confined->set_resolved(p->resolved);
  confined->set_exists(p->exists);
  return grpc::Status::OK;
}

}  // namespace ccsandbox::broker
