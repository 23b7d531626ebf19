// sandboxctl's spec sources: a proto3 JSON file with the spec's own spellings, or the
// default spec that binds the working directory read-write.
#ifndef CCSANDBOX_BROKER_CLI_SPEC_H_
#define CCSANDBOX_BROKER_CLI_SPEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker {

// Parses `json` strictly: unknown fields and malformed JSON are INVALID_ARGUMENT naming the
// problem (quoting at most policy::kMaxQuotedBytes of the parser's message); `source` (a file
// name) prefixes the message.
absl::StatusOr<v1::SandboxSpec> ParseSpecJson(const std::string& source, const std::string& json);

// The largest spec file read: a spec within every limit of docs/limits.md is far smaller.
inline constexpr size_t kMaxSpecFileBytes = 16 << 20;

// Reads and parses FILE (a regular file, a FIFO, /dev/stdin), at most kMaxSpecFileBytes of it.
absl::StatusOr<v1::SandboxSpec> LoadSpecFile(const std::string& path);

// {"sessionId": session_id, "bindMounts": [{"hostPath": workdir, "guestPath": workdir}],
//  "guestWorkdir": workdir}.
v1::SandboxSpec DefaultSpec(const std::string& workdir, const std::string& session_id);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_SPEC_H_
