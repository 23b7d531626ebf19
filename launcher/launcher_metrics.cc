#include "launcher/launcher_metrics.h"

namespace ccsandbox::launcher {
namespace {

constexpr CallOutcome kOutcomes[] = {CallOutcome::kWithdrawn, CallOutcome::kDropped,
                                     CallOutcome::kContinued, CallOutcome::kPerformed,
                                     CallOutcome::kFailed,    CallOutcome::kRefused};

const char* OutcomeName(CallOutcome outcome) {
  switch (outcome) {
    case CallOutcome::kWithdrawn:
      return "withdrawn";
    case CallOutcome::kDropped:
      return "dropped";
    case CallOutcome::kContinued:
      return "continued";
    case CallOutcome::kPerformed:
      return "performed";
    case CallOutcome::kFailed:
      return "failed";
    case CallOutcome::kRefused:
      return "refused";
  }
  return "failed";
}

}  // namespace

LauncherMetrics::LauncherMetrics(MetricsEndpoint* endpoint) {
  if (endpoint == nullptr) return;
  prometheus::Registry& registry = endpoint->registry();
  guard_calls_ = &prometheus::BuildCounter()
                      .Name("ccsandbox_launcher_create_guard_calls_total")
                      .Help(
                          "Creation calls trapped by the runs' create guards, by outcome: "
                          "continued (left to the kernel), performed (by the launcher), refused "
                          "(a violation), failed (another errno), withdrawn, dropped")
                      .Register(registry);
  for (CallOutcome outcome : kOutcomes) guard_calls_->Add({{"outcome", OutcomeName(outcome)}});
  guard_seconds_ = &prometheus::BuildHistogram()
                        .Name("ccsandbox_launcher_create_guard_call_duration_seconds")
                        .Help("How long the create guard held a trapped call, in seconds")
                        .Register(registry)
                        .Add({}, prometheus::Histogram::BucketBoundaries{
                                     0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                     0.0025, 0.005, 0.01, 0.1, 1});
}

void LauncherMetrics::CreateGuardCall(CallOutcome outcome, absl::Duration held) const {
  if (guard_calls_ == nullptr) return;
  guard_calls_->Add({{"outcome", OutcomeName(outcome)}}).Increment();
  guard_seconds_->Observe(absl::ToDoubleSeconds(held));
}

}  // namespace ccsandbox::launcher
