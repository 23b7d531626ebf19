// sandboxctl's spec sources: a proto3 JSON file with the spec's own spellings, or the
// default spec that binds the working directory read-write.
#ifndef CCSANDBOX_BROKER_CLI_SPEC_H_
#define CCSANDBOX_BROKER_CLI_SPEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker {

// Parses `json` strictly: unknown fields and malformed JSON are INVALID_ARGUMENT naming the
// problem; `source` (a file name) prefixes the message.
absl::StatusOr<v1::SandboxSpec> ParseSpecJson(const std::string& source, const std::string& json);

// Reads and parses FILE.
absl::StatusOr<v1::SandboxSpec> LoadSpecFile(const std::string& path);

// {"sessionId": session_id, "bindMounts": [{"hostPath": workdir, "guestPath": workdir}],
//  "guestWorkdir": workdir}.
v1::SandboxSpec DefaultSpec(const std::string& workdir, const std::string& session_id);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_SPEC_H_
