#include "broker/cli_policy.h"

#include <chrono>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "broker/cli_exit.h"
#include "broker/cli_json.h"
#include "proto/policy.grpc.pb.h"

namespace ccsandbox::broker {
namespace {

int Check(v1::SandboxPolicy::Stub& stub, const std::vector<std::string>& words,
          const std::string& mode, bool json) {
  const std::string line = CommandLineFromWords(words);
  v1::EvaluateCommandRequest request;
  request.set_mode(mode);
  request.set_command_line(line);
  v1::CommandDecision decision;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Status status = stub.EvaluateCommand(&ctx, request, &decision);
  if (!status.ok()) return Fail(absl::StrCat("policy check: ", status.error_message()));
  const int code = PolicyExitCode(decision.verdict());
  if (code == kToolError) return Fail("policy check: the broker's decision has no verdict");
  std::cout << (json ? CommandDecisionJson(decision) + "\n" : FormatCommandDecision(decision));
  return code;
}

}  // namespace

int PolicyExitCode(v1::PolicyVerdict verdict) {
  switch (verdict) {
    case v1::POLICY_VERDICT_ALLOW:
      return 0;
    case v1::POLICY_VERDICT_PROMPT:
      return 1;
    case v1::POLICY_VERDICT_DENY:
      return 2;
    default:
      return kToolError;
  }
}

std::string PolicyVerdictText(v1::PolicyVerdict verdict) {
  switch (verdict) {
    case v1::POLICY_VERDICT_ALLOW:
      return "allow";
    case v1::POLICY_VERDICT_PROMPT:
      return "prompt";
    case v1::POLICY_VERDICT_DENY:
      return "deny";
    default:
      return "unspecified";
  }
}

std::string CommandLineFromWords(const std::vector<std::string>& words) {
  return absl::StrJoin(words, " ");
}

std::string FormatCommandDecision(const v1::CommandDecision& decision) {
  std::string out = absl::StrCat("verdict: ", PolicyVerdictText(decision.verdict()), "\n",
                                 "rule: ", decision.rule(), " (", decision.rule_name(), ")\n");
  if (!decision.subcommand().empty())
    absl::StrAppend(&out, "subcommand: ", decision.subcommand(), "\n");
  absl::StrAppend(&out, "reason: ", decision.reason(), "\n");
  if (!decision.fully_analysed()) {
    absl::StrAppend(&out, "not fully analysed: part of the line runs code the policy cannot see\n");
  }
  if (decision.findings_size() > 1) {
    absl::StrAppend(&out, "findings:\n");
    for (const v1::CommandFinding& f : decision.findings()) {
      absl::StrAppend(&out, "  ", PolicyVerdictText(f.verdict()), " ", f.rule(), ": ",
                      f.subcommand(), "\n");
    }
  }
  return out;
}

std::string CommandDecisionJson(const v1::CommandDecision& decision) { return JsonLine(decision); }

int RunPolicyCheck(const std::shared_ptr<grpc::Channel>& channel,
                   const std::vector<std::string>& words, const std::string& mode, bool json) {
  std::unique_ptr<v1::SandboxPolicy::Stub> stub = v1::SandboxPolicy::NewStub(channel);
  return Check(*stub, words, mode, json);
}

}  // namespace ccsandbox::broker
