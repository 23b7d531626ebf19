#include "policy/command/effects.h"

#include <algorithm>
#include <string>

namespace ccsandbox::policy {

std::optional<EffectClass> EffectClassForCommandRule(CommandRule rule) {
  switch (rule) {
    case CommandRule::kCreateCommit:
      return EffectClass::kCreateCommit;
    case CommandRule::kPushToRemote:
      return EffectClass::kPushToRemote;
    case CommandRule::kOpenPullRequest:
      return EffectClass::kOpenPullRequest;
    case CommandRule::kPublishReviewOrMerge:
      return EffectClass::kPublishReviewOrMerge;
    case CommandRule::kWriteExternalTracker:
      return EffectClass::kWriteExternalTracker;
    case CommandRule::kInstallPackage:
      return EffectClass::kInstallPackage;
    case CommandRule::kPublishPackage:
      return EffectClass::kPublishPackage;
    case CommandRule::kChangeRemoteState:
      return EffectClass::kChangeRemoteState;
    case CommandRule::kNetworkWrite:
    case CommandRule::kNetworkAccess:
      return EffectClass::kNetworkAccess;
    default:
      return std::nullopt;
  }
}

std::vector<EffectRequest> CommandEffects(const CommandClassification& classification) {
  std::vector<EffectRequest> out;
  for (const CommandFinding& f : classification.findings) {
    std::optional<EffectClass> effect = EffectClassForCommandRule(f.rule);
    if (!effect.has_value()) continue;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const EffectRequest& r) { return r.effect == *effect; });
    if (it == out.end()) {
      out.push_back(EffectRequest{*effect, {}});
      it = out.end() - 1;
    }
    for (const std::string& ref : f.push_refs) {
      if (std::find(it->refs.begin(), it->refs.end(), ref) == it->refs.end()) {
        it->refs.push_back(ref);
      }
    }
  }
  return out;
}

}  // namespace ccsandbox::policy
