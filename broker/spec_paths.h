// The host paths of a SandboxSpec, checked at Launch on what they RESOLVE to: a bind or
// runner state dir that does not exist is INVALID_ARGUMENT now (not a bwrap error at the
// first Exec), and one that is, contains or lies inside `/`, /proc, /dev, /sys or a
// directory of the control plane (the launcher's socket dir, the broker's listen dir and
// runtime dir) is refused however it is spelled. The launcher checks the same again on the
// objects it opens (launcher/bind_stage.h): this is the early, clear refusal.
#ifndef CCSANDBOX_BROKER_SPEC_PATHS_H_
#define CCSANDBOX_BROKER_SPEC_PATHS_H_

#include <string>

#include "absl/status/status.h"
#include "policy/plan/bind_checks.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker {

// The resolved directory holding a `unix:PATH` address's socket; empty for other addresses.
std::string UnixSocketDir(const std::string& address);

// `backend` is the session's actual backend: the none backend mounts nothing, so only the
// native one needs its binds to exist and its workdir to be inside one.
absl::Status CheckSpecPaths(const v1::SandboxSpec& spec, v1::SandboxBackend backend,
                            const policy::ForbiddenDirs& forbidden);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_SPEC_PATHS_H_
