// Redirections (N>, &>, <<<, …) and here-documents: their bodies, read at the next newline.
#include <cstddef>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "policy/command/shell_parser_internal.h"

namespace ccsandbox::policy::shell_internal {
namespace {

struct OpSpelling {
  absl::string_view text;
  RedirectOp op;
};

// Every redirection operator, each before any operator that is a prefix of it.
constexpr OpSpelling kRedirectOps[] = {
    {"&>>", RedirectOp::kAppendBoth}, {"&>", RedirectOp::kWriteBoth},
    {"<<<", RedirectOp::kHereString}, {"<<-", RedirectOp::kHereDoc},
    {"<<", RedirectOp::kHereDoc},     {"<>", RedirectOp::kReadWrite},
    {"<&", RedirectOp::kDupRead},     {">>", RedirectOp::kAppend},
    {">|", RedirectOp::kWrite},       {">&", RedirectOp::kDupWrite},
    {"<", RedirectOp::kRead},         {">", RedirectOp::kWrite},
};

// A file descriptor number, or one followed by `-` (move), or `-` alone (close).
bool IsFdWord(absl::string_view t) {
  bool numeric = !t.empty();
  for (size_t i = 0; i < t.size(); ++i) {
    if (!absl::ascii_isdigit(t[i]) && !(t[i] == '-' && i == t.size() - 1)) numeric = false;
  }
  return numeric;
}

}  // namespace

// N>, N<, {name}>, &>, < and > (not process substitution: the caller checks).
bool Parser::RedirectAhead() const {
  size_t p = pos_;
  if (p < src_.size() && absl::ascii_isdigit(src_[p])) {
    while (p < src_.size() && absl::ascii_isdigit(src_[p])) ++p;
    return p < src_.size() && (src_[p] == '<' || src_[p] == '>');
  }
  if (p < src_.size() && src_[p] == '{') {
    ++p;
    if (p >= src_.size() || !IsNameStart(src_[p])) return false;
    while (p < src_.size() && IsNameChar(src_[p])) ++p;
    return p + 1 < src_.size() && src_[p] == '}' && (src_[p + 1] == '<' || src_[p + 1] == '>');
  }
  if (p < src_.size() && src_[p] == '&') return p + 1 < src_.size() && src_[p + 1] == '>';
  return p < src_.size() && (src_[p] == '<' || src_[p] == '>');
}

// [N|{name}]operator target, at pos_ (RedirectAhead said so). A here-document is queued: its
// body is read at the next newline.
bool Parser::ParseRedirect(ShellRedirect* r, size_t serial, size_t index) {
  const size_t start = pos_;
  if (absl::ascii_isdigit(Peek())) {
    int fd = 0;
    while (absl::ascii_isdigit(Peek())) {
      fd = fd > 100000 ? fd : fd * 10 + (Peek() - '0');
      ++pos_;
    }
    r->fd = fd;
  } else if (Peek() == '{') {
    while (Peek() != '}') ++pos_;
    ++pos_;
    r->fd = -2;
  }
  absl::string_view rest = src_.substr(pos_);
  absl::string_view spelled;
  for (const OpSpelling& o : kRedirectOps) {
    if (rest.substr(0, o.text.size()) == o.text) {
      spelled = o.text;
      r->op = o.op;
      break;
    }
  }
  if (spelled.empty()) return Fail("expected a redirection operator");
  if (r->fd != -1 && (r->op == RedirectOp::kWriteBoth || r->op == RedirectOp::kAppendBoth)) {
    return FailAt(start, "a file descriptor cannot precede '&>'");
  }
  pos_ += spelled.size();
  SkipBlanks();
  if (AtEnd() || (IsMeta(Peek()) && !((Peek() == '<' || Peek() == '>') && Peek(1) == '('))) {
    return FailAt(start, absl::StrCat("the redirection '", spelled, "' has no target"));
  }
  if (!ReadWord(&r->target)) return false;
  // `>&file` (no fd before it) writes stdout and stderr to the file, like `&>`.
  if (r->op == RedirectOp::kDupWrite && !IsFdWord(r->target.text) && r->fd == -1 &&
      r->target.literal()) {
    r->op = RedirectOp::kWriteBoth;
  }
  if (r->op == RedirectOp::kHereDoc) {
    PendingHereDoc p;
    p.delimiter = r->target.text;
    p.strip_tabs = spelled == "<<-";
    p.expands = (r->target.flags & kWordQuoted) == 0;
    r->heredoc_expands = p.expands;
    p.serial = serial;
    p.redirect = index;
    pending_.push_back(std::move(p));
  }
  return true;
}

// The newline at pos_, then the bodies of the here-documents whose operators preceded it.
bool Parser::ConsumeNewline() {
  ++pos_;
  while (!pending_.empty()) {
    PendingHereDoc p = std::move(pending_.front());
    pending_.erase(pending_.begin());
    const size_t index = st_->serial_index[p.serial];
    if (index == kUnpushed) {
      return Fail("a here-document inside an unfinished command is not supported");
    }
    std::string body;
    if (!ReadHereDocBody(p, &body)) return false;
    if (p.expands) {
      Nest nest(this);
      if (!nest.ok()) return NestTooDeep();
      Parser sub(body, st_);
      if (!sub.ScanHereDocBody()) return false;
    }
    st_->script->commands[index].redirects[p.redirect].heredoc_body = std::move(body);
  }
  return true;
}

// Lines up to the delimiter line (or the end of the input), tabs stripped for <<-.
bool Parser::ReadHereDocBody(const PendingHereDoc& p, std::string* body) {
  while (!AtEnd()) {
    size_t eol = src_.find('\n', pos_);
    size_t line_end = eol == absl::string_view::npos ? src_.size() : eol;
    absl::string_view line = src_.substr(pos_, line_end - pos_);
    if (!Tick(line.size() + 1)) return false;
    pos_ = eol == absl::string_view::npos ? src_.size() : eol + 1;
    if (p.strip_tabs) {
      while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
    }
    if (line == p.delimiter) break;
    absl::StrAppend(body, line, "\n");
  }
  return true;
}

// Here-documents still pending at the end of the input get an empty body, as in bash.
bool Parser::FinishPendingHereDocs() {
  for (const PendingHereDoc& p : pending_) {
    if (st_->serial_index[p.serial] == kUnpushed) {
      return Fail("a here-document inside an unfinished command is not supported");
    }
  }
  pending_.clear();
  return true;
}

// The whole buffer as the body of an unquoted here-document: only $ and ` expansions count.
bool Parser::ScanHereDocBody() {
  ShellWord scratch;
  while (!AtEnd()) {
    if (!Tick()) return false;
    const char c = Peek();
    if (c == '\\') {
      pos_ += (pos_ + 1 < src_.size()) ? 2 : 1;
    } else if (c == '$') {
      if (!ReadDollar(&scratch, /*in_dquote=*/true)) return false;
    } else if (c == '`') {
      if (!ReadBackquote(&scratch, /*in_dquote=*/false)) return false;
    } else {
      ++pos_;
    }
  }
  return true;
}

}  // namespace ccsandbox::policy::shell_internal
