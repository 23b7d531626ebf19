// Test support: waiting for a process — a child or not — to end, on its pidfd (readable once it
// has exited, zombie or reaped), instead of polling /proc.
#ifndef CCSANDBOX_TESTS_PROCESS_EXIT_H_
#define CCSANDBOX_TESTS_PROCESS_EXIT_H_

#include <sys/types.h>

#include "absl/time/time.h"

namespace ccsandbox::testing {

// True once process `pid` has exited (a zombie counts, and so does a pid that no longer
// exists), false if it still runs after `timeout`. Reaps nothing.
bool ExitsWithin(pid_t pid, absl::Duration timeout);

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_TESTS_PROCESS_EXIT_H_
