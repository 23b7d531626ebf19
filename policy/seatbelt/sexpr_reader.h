// A tiny S-expression reader for the Seatbelt tests: lists, atoms, double-quoted strings with
// backslash escapes, ';' comments. Test-only: it checks what the renderer wrote, nothing more.
#ifndef CCSANDBOX_POLICY_SEATBELT_SEXPR_READER_H_
#define CCSANDBOX_POLICY_SEATBELT_SEXPR_READER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::policy::seatbelt {

struct Sexpr {
  enum class Kind { kList, kAtom, kString };
  Kind kind = Kind::kList;
  std::string text;  // an atom as written; a string decoded
  std::vector<Sexpr> items;

  bool IsAtom(absl::string_view name) const { return kind == Kind::kAtom && text == name; }
  // "(deny file-write* (subpath S))": strings as S, so two forms compare by shape alone.
  std::string Shape() const;
};

// Every top-level form of `text`; INVALID_ARGUMENT for an unterminated string or list, a
// stray ')', or an escape of anything but '"' and '\\'.
absl::StatusOr<std::vector<Sexpr>> ReadSexprs(absl::string_view text);

}  // namespace ccsandbox::policy::seatbelt

#endif  // CCSANDBOX_POLICY_SEATBELT_SEXPR_READER_H_
