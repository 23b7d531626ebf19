// The fuzz targets' UTF-8 oracle: strict RFC 3629 validity, written independently of the parsers'
// own readers (proto3 strings must be valid UTF-8).
#ifndef CCSANDBOX_TESTS_FUZZ_STRICT_UTF8_H_
#define CCSANDBOX_TESTS_FUZZ_STRICT_UTF8_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace ccsandbox::fuzz {

// RFC 3629, written independently of the parser's own reader: no overlong forms, no
// surrogates, nothing above U+10FFFF.
inline bool StrictUtf8(absl::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t n;
    uint32_t cp;
    if (b < 0x80) {
      ++i;
      continue;
    } else if ((b & 0xE0) == 0xC0) {
      n = 2, cp = b & 0x1F;
    } else if ((b & 0xF0) == 0xE0) {
      n = 3, cp = b & 0x0F;
    } else if ((b & 0xF8) == 0xF0) {
      n = 4, cp = b & 0x07;
    } else {
      return false;
    }
    if (i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n;
  }
  return true;
}

}  // namespace ccsandbox::fuzz

#endif  // CCSANDBOX_TESTS_FUZZ_STRICT_UTF8_H_
