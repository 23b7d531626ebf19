// Gathers the facts the boot probe decides on (OS, WSL2, bwrap and socat on PATH).
#ifndef CCSANDBOX_BROKER_HOST_PROBE_H_
#define CCSANDBOX_BROKER_HOST_PROBE_H_

#include <string>

#include "policy/plan/probe.h"

namespace ccsandbox::broker {

// `path_env` is the PATH searched for bwrap and socat.
policy::HostFacts GatherHostFacts(const std::string& path_env);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_HOST_PROBE_H_
