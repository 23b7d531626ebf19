// The fuzz targets' invariant check: aborts with the failed invariant's text and line, so a
// crash input explains itself (libFuzzer keeps the input that aborted).
#ifndef CCSANDBOX_TESTS_FUZZ_FUZZ_CHECK_H_
#define CCSANDBOX_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition)                                                          \
  do {                                                                                 \
    if (!(condition)) {                                                                \
      std::fprintf(stderr, "invariant failed at line %d: %s\n", __LINE__, #condition); \
      std::abort();                                                                    \
    }                                                                                  \
  } while (0)

#endif  // CCSANDBOX_TESTS_FUZZ_FUZZ_CHECK_H_
