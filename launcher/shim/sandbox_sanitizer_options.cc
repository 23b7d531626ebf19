// ASan's defaults for a program that runs inside the sandbox, under the seccomp baseline: linked
// into the sandbox_shim (and create_guard_test_helper) only by the sanitizer configs of .bazelrc.
//
// LeakSanitizer checks at exit by stopping the process's threads with ptrace, which the baseline
// denies (EPERM): the check dies with "LeakSanitizer has encountered a fatal error" and turns
// the program's exit status into 1, so the shim would no longer report the command's status.
// Leak checking is off here only; ASan's memory checks stay on, and the shim's code is
// leak-checked outside the sandbox by its unit tests. The sandbox's environment is the plan's,
// so ASAN_OPTIONS from outside never reaches it.
extern "C" __attribute__((visibility("default"))) const char* __asan_default_options() {
  return "detect_leaks=0";
}
