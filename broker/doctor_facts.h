// What `sandboxctl doctor` finds on this host by itself, without the broker: the tools on PATH
// and their versions, and the kernel features a sandboxed run needs, each found by trying
// (a child that calls unshare(CLONE_NEWUSER), Landlock's ABI query, a seccomp listener filter
// in a throw-away child), never by the kernel version alone.
//
//   DoctorFacts facts;
//   GatherHostDoctorFacts(getenv("PATH"), facts);
//
// Forks short-lived children: call it before any thread that must not see a fork starts.
#ifndef CCSANDBOX_BROKER_DOCTOR_FACTS_H_
#define CCSANDBOX_BROKER_DOCTOR_FACTS_H_

#include <string>

#include "broker/doctor_checks.h"

namespace ccsandbox::broker {

// Fills the host half of `facts` (bwrap, socat, userns, landlock, seccomp, cgroups). `path_env`
// is the PATH searched (may be null).
void GatherHostDoctorFacts(const char* path_env, DoctorFacts& facts);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_DOCTOR_FACTS_H_
