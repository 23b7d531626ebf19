// $'…' strings: bash's ANSI-C quoting, decoded as bash decodes it (a decoded NUL ends the
// string; an unknown escape stays as written).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "policy/command/shell_parser_internal.h"

namespace ccsandbox::policy::shell_internal {
namespace {

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x110000) {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The one-character escapes and what each stands for.
struct SimpleEscape {
  char letter;
  uint32_t code;
};
constexpr SimpleEscape kSimpleEscapes[] = {
    {'a', 7}, {'b', 8},  {'e', 27},    {'E', 27},    {'f', 12},  {'n', 10},  {'r', 13},
    {'t', 9}, {'v', 11}, {'\\', '\\'}, {'\'', '\''}, {'"', '"'}, {'?', '?'},
};

}  // namespace

bool Parser::ReadAnsiC(ShellWord* w) {
  const size_t open = pos_;
  pos_ += 2;
  w->flags |= kWordQuoted;
  bool truncated = false;  // bash ends the string at a decoded NUL
  while (true) {
    if (AtEnd()) return FailAt(open, "unterminated $'…' string");
    if (!Tick()) return false;
    const char c = Peek();
    if (c == '\'') {
      ++pos_;
      return true;
    }
    if (c == '\\') {
      if (!ReadAnsiCEscape(open, w, &truncated)) return false;
      continue;
    }
    if (!truncated) w->text += c;
    ++pos_;
  }
}

// The backslash escape at pos_, inside the $'…' opened at `open`: decoded onto w->text unless
// the string already ended at a decoded NUL.
bool Parser::ReadAnsiCEscape(size_t open, ShellWord* w, bool* truncated) {
  auto emit = [&](uint32_t cp) {
    if (cp == 0) *truncated = true;
    if (!*truncated) AppendUtf8(cp, &w->text);
  };
  const char e = Peek(1);
  pos_ += 2;
  for (const SimpleEscape& s : kSimpleEscapes) {
    if (s.letter == e) {
      emit(s.code);
      return true;
    }
  }
  if (e == 'c') {  // \cX: control-X
    const char x = Peek();
    if (x == '\0') return Fail("unterminated $'…' string");
    ++pos_;
    emit(static_cast<unsigned char>(x) & 0x1F);
    return true;
  }
  if (e == 'x' || e == 'u' || e == 'U') {  // \xHH (a byte), \uHHHH and \UHHHHHHHH (code points)
    const int max_digits = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
    uint32_t value = 0;
    int digits = 0;
    while (digits < max_digits && HexValue(Peek()) >= 0) {
      value = value * 16 + HexValue(Peek());
      ++pos_;
      ++digits;
    }
    if (digits == 0) {
      if (!*truncated) absl::StrAppend(&w->text, "\\", std::string(1, e));
    } else if (e == 'x') {
      if (value == 0) *truncated = true;
      if (!*truncated) w->text += static_cast<char>(value);
    } else {
      emit(value);
    }
    return true;
  }
  if (e >= '0' && e <= '7') {  // \NNN: a byte in octal
    uint32_t value = e - '0';
    for (int i = 0; i < 2 && Peek() >= '0' && Peek() <= '7'; ++i) {
      value = value * 8 + (Peek() - '0');
      ++pos_;
    }
    if ((value & 0xFF) == 0) *truncated = true;
    if (!*truncated) w->text += static_cast<char>(value & 0xFF);
    return true;
  }
  if (e == '\0') return FailAt(open, "unterminated $'…' string");
  if (!*truncated) {
    w->text += '\\';
    w->text += e;
  }
  return true;
}

}  // namespace ccsandbox::policy::shell_internal
