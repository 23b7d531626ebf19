#include "policy/seatbelt/sexpr_reader.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ccsandbox::policy::seatbelt {
namespace {

class Reader {
 public:
  explicit Reader(absl::string_view text) : text_(text) {}

  absl::StatusOr<std::vector<Sexpr>> All() {
    std::vector<Sexpr> out;
    while (SkipSpace()) {
      absl::StatusOr<Sexpr> form = One();
      if (!form.ok()) return form.status();
      out.push_back(*std::move(form));
    }
    return out;
  }

 private:
  // False at the end of the text.
  bool SkipSpace() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ';') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == ' ' || c == '\n' || c == '\t') {
        ++pos_;
      } else {
        return true;
      }
    }
    return false;
  }

  absl::StatusOr<Sexpr> One() {
    const char c = text_[pos_];
    Sexpr out;
    if (c == ')') return Error("a stray ')'");
    if (c == '(') {
      ++pos_;
      while (true) {
        if (!SkipSpace()) return Error("an unterminated list");
        if (text_[pos_] == ')') {
          ++pos_;
          return out;
        }
        absl::StatusOr<Sexpr> item = One();
        if (!item.ok()) return item.status();
        out.items.push_back(*std::move(item));
      }
    }
    if (c == '"') {
      out.kind = Sexpr::Kind::kString;
      for (++pos_; pos_ < text_.size(); ++pos_) {
        char d = text_[pos_];
        if (d == '"') {
          ++pos_;
          return out;
        }
        if (d == '\\') {
          if (++pos_ >= text_.size()) break;
          d = text_[pos_];
          if (d != '"' && d != '\\') return Error("an escape of something other than \" or \\");
        }
        out.text.push_back(d);
      }
      return Error("an unterminated string");
    }
    out.kind = Sexpr::Kind::kAtom;
    while (pos_ < text_.size() &&
           std::string_view(" \n\t()\";").find(text_[pos_]) == std::string_view::npos) {
      out.text.push_back(text_[pos_++]);
    }
    return out;
  }

  absl::Status Error(absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(what, " at byte ", pos_));
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

std::string Sexpr::Shape() const {
  switch (kind) {
    case Kind::kAtom:
      return text;
    case Kind::kString:
      return "S";
    case Kind::kList: {
      std::vector<std::string> parts;
      for (const Sexpr& item : items) parts.push_back(item.Shape());
      return absl::StrCat("(", absl::StrJoin(parts, " "), ")");
    }
  }
  return "";
}

absl::StatusOr<std::vector<Sexpr>> ReadSexprs(absl::string_view text) { return Reader(text).All(); }

}  // namespace ccsandbox::policy::seatbelt
