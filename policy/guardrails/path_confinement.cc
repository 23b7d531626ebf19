#include "policy/guardrails/path_confinement.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/paths.h"

namespace ccsandbox::policy {
namespace {

constexpr int kMaxSymlinks = 40;  // the kernel's MAXSYMLINKS
constexpr size_t kMaxPathBytes = 4096;

std::string Join(const std::string& dir, absl::string_view name) {
  return dir == "/" ? absl::StrCat("/", name) : absl::StrCat(dir, "/", name);
}

void PushComponents(absl::string_view path, std::vector<std::string>* pending) {
  std::vector<absl::string_view> parts = absl::StrSplit(path, '/', absl::SkipEmpty());
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending->emplace_back(*it);
}

struct Resolution {
  std::string path;  // absolute, resolved
  bool exists = true;
};

class Resolver {
 public:
  // Every step must stay inside or above one of `roots` (canonical and as configured); null
  // while the roots themselves are resolved.
  Resolver(const HostView& fs, const std::vector<std::string>* roots) : fs_(fs), roots_(roots) {}

  absl::StatusOr<Resolution> Resolve(absl::string_view path, absl::string_view requested,
                                     bool allow_missing) {
    std::vector<std::string> pending;
    PushComponents(path, &pending);
    std::string cur = "/";
    std::vector<std::string> tail;  // components from the first one that does not exist
    std::string missing;
    std::string last_link;
    int links = 0;
    while (!pending.empty()) {
      std::string comp = std::move(pending.back());
      pending.pop_back();
      if (comp.empty() || comp == ".") continue;
      if (!missing.empty()) {
        if (comp == "..") {
          return absl::InvalidArgumentError(absl::StrCat("'", requested, "': '..' follows '",
                                                         missing, "', which does not exist"));
        }
        tail.push_back(std::move(comp));
        continue;
      }
      if (comp == "..") {
        cur = ParentPath(cur);  // an ancestor of an allowed directory is allowed (see Allowed)
        continue;
      }
      std::string candidate = Join(cur, comp);
      // Never look at anything outside the roots: no probing for what exists out there.
      if (!Allowed(candidate)) return Outside(requested, candidate, last_link);
      switch (fs_.KindOf(candidate)) {
        case HostView::Kind::kDirectory:
          cur = std::move(candidate);
          break;
        case HostView::Kind::kFile:
          if (std::any_of(pending.begin(), pending.end(),
                          [](const std::string& c) { return !c.empty() && c != "."; })) {
            return absl::FailedPreconditionError(
                absl::StrCat("'", requested, "': '", candidate, "' is a file, not a directory"));
          }
          cur = std::move(candidate);
          break;
        case HostView::Kind::kSymlink: {
          if (++links > kMaxSymlinks) {
            return absl::FailedPreconditionError(
                absl::StrCat("'", requested, "': too many levels of symbolic links"));
          }
          const std::string target = fs_.LinkTarget(candidate);
          if (target.empty() || target.size() > kMaxPathBytes) {
            return absl::FailedPreconditionError(
                absl::StrCat("'", requested, "': cannot read the symbolic link '", candidate, "'"));
          }
          last_link = absl::StrCat(candidate, " -> ", target);
          if (absl::StartsWith(target, "/")) cur = "/";
          PushComponents(target, &pending);
          break;
        }
        case HostView::Kind::kMissing:
          if (!allow_missing) {
            return absl::NotFoundError(
                absl::StrCat("'", requested, "': '", candidate, "' does not exist"));
          }
          missing = candidate;
          tail.push_back(std::move(comp));
          break;
      }
    }
    Resolution r;
    r.exists = missing.empty();
    r.path = cur;
    for (const std::string& t : tail) r.path = Join(r.path, t);
    return r;
  }

 private:
  // Inside a root, or on the way down to one (an ancestor of a root).
  bool Allowed(const std::string& path) const {
    if (roots_ == nullptr) return true;
    for (const std::string& root : *roots_) {
      if (root.empty()) continue;
      if (IsUnderOrEqual(path, root) || IsUnderOrEqual(root, path)) return true;
    }
    return false;
  }

  absl::Status Outside(absl::string_view requested, const std::string& at,
                       const std::string& last_link) const {
    std::string message = absl::StrCat("'", requested, "' leads to '", at,
                                       "', outside the run's working directory and shared roots");
    // The escape most worth naming: a symlink inside a root that points out of it.
    if (!last_link.empty())
      absl::StrAppend(&message, " (through the symbolic link ", last_link, ")");
    std::vector<absl::string_view> shown;
    for (const std::string& root : *roots_) {
      if (!root.empty() && std::find(shown.begin(), shown.end(), root) == shown.end()) {
        shown.push_back(root);
      }
    }
    absl::StrAppend(&message, "; file tools only reach ", absl::StrJoin(shown, ", "));
    return absl::PermissionDeniedError(message);
  }

  const HostView& fs_;
  const std::vector<std::string>* roots_;
};

}  // namespace

absl::StatusOr<ConfinedPath> ConfinePath(const HostView& fs,
                                         absl::Span<const ConfinementRoot> roots,
                                         absl::string_view workdir, absl::string_view requested,
                                         PathIntent intent) {
  if (roots.empty()) return absl::InvalidArgumentError("no confinement roots given");
  if (requested.empty()) return absl::InvalidArgumentError("the path is empty");
  if (requested.size() > kMaxPathBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the path is ", requested.size(), " bytes; at most ", kMaxPathBytes));
  }
  if (requested.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("the path contains a NUL byte");
  }
  if (absl::Status s = CheckNormalizedAbsolute("workdir", workdir); !s.ok()) return s;
  // The roots' own symlinks (/tmp -> /private/tmp) are configuration, resolved once.
  std::vector<std::string> canonical(roots.size());
  Resolver unconfined(fs, nullptr);
  for (size_t i = 0; i < roots.size(); ++i) {
    const std::string field = absl::StrCat("roots[", i, "]");
    if (absl::Status s = CheckNormalizedAbsolute(field, roots[i].path); !s.ok()) return s;
    if (roots[i].path == "/") {
      return absl::InvalidArgumentError(absl::StrCat(field, ": '/' confines nothing"));
    }
    absl::StatusOr<Resolution> r = unconfined.Resolve(roots[i].path, roots[i].path, false);
    if (r.ok() && r->path == "/") {
      // A root that is a symlink to "/" (or up to it) would confine nothing either.
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": '", roots[i].path, "' resolves to '/', which confines nothing"));
    }
    if (r.ok()) canonical[i] = r->path;  // a root that does not exist holds nothing
  }
  // Steps may pass through a root as configured (/tmp/work, /tmp being a symlink) as well as
  // through its resolved form.
  std::vector<std::string> allowed = canonical;
  for (const ConfinementRoot& root : roots) allowed.push_back(root.path);
  Resolver resolver(fs, &allowed);
  std::string start;
  if (absl::StartsWith(requested, "/")) {
    start = std::string(requested);
  } else {
    absl::StatusOr<Resolution> wd = resolver.Resolve(workdir, workdir, false);
    if (!wd.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the working directory '", workdir, "' is not usable: ", wd.status().message()));
    }
    start = Join(wd->path, requested);
  }
  absl::StatusOr<Resolution> r = resolver.Resolve(start, requested, intent == PathIntent::kWrite);
  if (!r.ok()) return r.status();
  std::optional<size_t> best;
  for (size_t i = 0; i < canonical.size(); ++i) {
    if (canonical[i].empty() || !IsUnderOrEqual(r->path, canonical[i])) continue;
    if (!best.has_value() || canonical[i].size() > canonical[*best].size()) best = i;
  }
  if (!best.has_value()) {
    std::vector<std::string> usable;
    for (const std::string& c : canonical) {
      if (!c.empty()) usable.push_back(c);
    }
    return absl::PermissionDeniedError(
        absl::StrCat("'", requested, "' resolves to '", r->path,
                     "', outside the run's working directory and shared roots; file tools only "
                     "reach ",
                     absl::StrJoin(usable, ", ")));
  }
  if (intent == PathIntent::kWrite && !roots[*best].writable) {
    return absl::PermissionDeniedError(absl::StrCat("'", requested, "' is in '", roots[*best].path,
                                                    "', which file tools may only read"));
  }
  ConfinedPath out;
  out.root_index = *best;
  out.resolved = r->path;
  out.exists = r->exists;
  const std::string& root = canonical[*best];
  out.relative = r->path == root ? "." : r->path.substr(root.size() + 1);
  return out;
}

}  // namespace ccsandbox::policy
