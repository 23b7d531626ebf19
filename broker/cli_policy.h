// `sandboxctl policy check`: asks the broker's SandboxPolicy service what a mode decides for one
// shell command line, prints the decision and exits with its verdict.
//
//   sandboxctl --broker=unix:PATH policy check --mode=plan [--json] -- 'git commit -m x && npm i'
//
// Exit codes: 0 allow, 1 prompt, 2 deny (policy/policy_verdict.h's numbering), 125 when
// sandboxctl or the broker failed (an unknown mode, no broker) and for a usage error (no --mode,
// no command line: cli_parse.h's).
#ifndef CCSANDBOX_BROKER_CLI_POLICY_H_
#define CCSANDBOX_BROKER_CLI_POLICY_H_

#include <memory>
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "proto/policy.pb.h"

namespace ccsandbox::broker {

// 0 allow, 1 prompt, 2 deny; 125 for a decision without a verdict (fail closed).
int PolicyExitCode(v1::PolicyVerdict verdict);

// "allow", "prompt", "deny"; "unspecified" otherwise.
std::string PolicyVerdictText(v1::PolicyVerdict verdict);

// The command line sandboxctl sends: the words after `--`, joined with single spaces (a single
// quoted argument is the usual form and passes through unchanged).
std::string CommandLineFromWords(const std::vector<std::string>& words);

// The human rendering, one "key: value" per line:
//   verdict: deny
//   rule: install_package (install a package)
//   subcommand: npm i
//   reason: …
//   not fully analysed: …        (only when so)
//   findings:                    (only when the line has more than one)
//     deny create_commit: git commit -m x
std::string FormatCommandDecision(const v1::CommandDecision& decision);

// One line of proto3 JSON (fields at their defaults included).
std::string CommandDecisionJson(const v1::CommandDecision& decision);

// Runs `sandboxctl policy check --mode=MODE -- WORDS...` against the broker on `channel`;
// prints to stdout / stderr and returns the exit code.
int RunPolicyCheck(const std::shared_ptr<grpc::Channel>& channel,
                   const std::vector<std::string>& words, const std::string& mode, bool json);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_POLICY_H_
