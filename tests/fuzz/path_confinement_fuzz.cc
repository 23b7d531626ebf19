// libFuzzer target: path confinement of the harness's file tools (policy/guardrails/
// path_confinement.h), the boundary those tools rely on: the path is the model's, the tree may
// hold symlinks the agent planted. Input (FuzzedDataProvider): a small tree (directories,
// files, symlinks with relative or absolute targets, "." and ".." included) over a few names,
// 1-3 roots, a working directory, the requested path and the intent. Invariants: never crash;
// an accepted path resolves (by a plain resolver written here, as the kernel would) to exactly
// `resolved`, which lies in the innermost root that holds it, is `relative` below that root's
// resolved form, exists as said, and is writable when written; a path that resolves outside
// every root is never accepted; nothing outside the roots (or the roots' own resolution) is
// ever looked at; refusals have the documented codes.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/host_view.h"
#include "base/paths.h"
#include "policy/guardrails/path_confinement.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using ccsandbox::HostView;
using ccsandbox::IsUnderOrEqual;
using ccsandbox::ParentPath;
using Kind = HostView::Kind;

class Tree : public HostView {
 public:
  void Add(const std::string& path, Kind kind, const std::string& target) {
    nodes_[path] = {kind, target};
    for (std::string p = ParentPath(path); p != "/"; p = ParentPath(p)) {
      nodes_.emplace(p, Node{Kind::kDirectory, ""});  // ancestors are directories unless said
    }
  }
  Kind KindOf(const std::string& path) const override {
    if (recording_) asked_.insert(path);
    if (path == "/") return Kind::kDirectory;
    auto it = nodes_.find(path);
    return it == nodes_.end() ? Kind::kMissing : it->second.kind;
  }
  std::string LinkTarget(const std::string& path) const override {
    auto it = nodes_.find(path);
    return it == nodes_.end() || it->second.kind != Kind::kSymlink ? "" : it->second.target;
  }
  void Record(bool on) const { recording_ = on; }
  const std::set<std::string>& asked() const { return asked_; }

 private:
  struct Node {
    Kind kind;
    std::string target;
  };
  std::map<std::string, Node> nodes_;
  mutable bool recording_ = false;
  mutable std::set<std::string> asked_;
};

struct Resolved {
  std::string path;
  bool exists = true;
};

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// The kernel's walk (no confinement): components left to right, ".." to the parent of what is
// resolved so far, symlinks replaced by their targets (40 at most), a file only last; with
// `allow_missing`, plain names may follow the first missing component. `visited` gets every
// path looked at.
std::optional<Resolved> Walk(const Tree& tree, const std::string& path, bool allow_missing,
                             std::set<std::string>* visited) {
  std::vector<std::string> pending;
  auto push = [&](const std::string& p) {
    std::vector<std::string> parts = absl::StrSplit(p, '/', absl::SkipEmpty());
    pending.insert(pending.end(), parts.rbegin(), parts.rend());
  };
  push(path);
  std::string cur = "/";
  std::vector<std::string> tail;
  int links = 0;
  while (!pending.empty()) {
    const std::string comp = pending.back();
    pending.pop_back();
    if (comp == ".") continue;
    if (!tail.empty()) {
      if (comp == "..") return std::nullopt;
      tail.push_back(comp);
      continue;
    }
    if (comp == "..") {
      cur = ParentPath(cur);
      continue;
    }
    const std::string next = Join(cur, comp);
    if (visited != nullptr) visited->insert(next);
    switch (tree.KindOf(next)) {
      case Kind::kDirectory:
        cur = next;
        break;
      case Kind::kFile:
        for (const std::string& rest : pending) {
          if (rest != ".") return std::nullopt;
        }
        cur = next;
        break;
      case Kind::kSymlink: {
        const std::string target = tree.LinkTarget(next);
        if (++links > 40 || target.empty()) return std::nullopt;
        if (target[0] == '/') cur = "/";
        push(target);
        break;
      }
      case Kind::kMissing:
        if (!allow_missing) return std::nullopt;
        tail.push_back(comp);
        break;
    }
  }
  Resolved r{cur, tail.empty()};
  for (const std::string& t : tail) r.path = Join(r.path, t);
  return r;
}

std::string PathFrom(FuzzedDataProvider& in, bool absolute) {
  static const char* const kNames[] = {"w",   "a",   "b",  "repos", "work", "x",
                                       "etc", "tmp", "..", ".",     "l",    "m"};
  std::vector<std::string> parts(in.ConsumeIntegralInRange<size_t>(absolute ? 1 : 0, 4));
  for (std::string& part : parts) part = kNames[in.ConsumeIntegralInRange<size_t>(0, 11)];
  return (absolute ? "/" : "") + absl::StrJoin(parts, "/");
}

// A normalised absolute path made of plain names.
std::string PlainPath(FuzzedDataProvider& in) {
  static const char* const kNames[] = {"w", "a", "b", "repos", "work", "x", "etc", "tmp", "l"};
  std::vector<std::string> parts(in.ConsumeIntegralInRange<size_t>(1, 3));
  for (std::string& part : parts) part = kNames[in.ConsumeIntegralInRange<size_t>(0, 8)];
  return "/" + absl::StrJoin(parts, "/");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  Tree tree;
  for (size_t n = in.ConsumeIntegralInRange<size_t>(0, 10); n > 0; --n) {
    const std::string path = PlainPath(in);
    switch (in.ConsumeIntegralInRange<int>(0, 2)) {
      case 0:
        tree.Add(path, Kind::kDirectory, "");
        break;
      case 1:
        tree.Add(path, Kind::kFile, "");
        break;
      default:
        tree.Add(path, Kind::kSymlink, PathFrom(in, in.ConsumeBool()));
        break;
    }
  }
  std::vector<ccsandbox::policy::ConfinementRoot> roots(in.ConsumeIntegralInRange<size_t>(1, 3));
  for (auto& root : roots) root = {PlainPath(in), in.ConsumeBool()};
  const std::string workdir = PlainPath(in);
  const bool write = in.ConsumeBool();
  const std::string requested =
      in.ConsumeBool() ? PathFrom(in, in.ConsumeBool()) : in.ConsumeRandomLengthString(64);
  const auto intent =
      write ? ccsandbox::policy::PathIntent::kWrite : ccsandbox::policy::PathIntent::kRead;

  tree.Record(true);
  absl::StatusOr<ccsandbox::policy::ConfinedPath> got =
      ccsandbox::policy::ConfinePath(tree, roots, workdir, requested, intent);
  tree.Record(false);

  // The roots as they resolve, and what resolving them looks at.
  std::set<std::string> root_walk;
  std::vector<std::string> canonical;
  for (const auto& root : roots) {
    std::optional<Resolved> r = Walk(tree, root.path, false, &root_walk);
    canonical.push_back(r.has_value() ? r->path : "");
  }
  // Nothing outside the roots is looked at.
  for (const std::string& asked : tree.asked()) {
    bool near = root_walk.count(asked) > 0;
    for (size_t i = 0; i < roots.size(); ++i) {
      for (const std::string& r : {roots[i].path, canonical[i]}) {
        near = near || (!r.empty() && (IsUnderOrEqual(asked, r) || IsUnderOrEqual(r, asked)));
      }
    }
    if (!near) std::fprintf(stderr, "looked at %s, outside the roots\n", asked.c_str());
    FUZZ_CHECK(near);
  }

  // Where the kernel would take the path.
  std::optional<Resolved> kernel;
  if (!requested.empty() && requested.find('\0') == std::string::npos) {
    if (requested[0] == '/') {
      kernel = Walk(tree, requested, write, nullptr);
    } else if (std::optional<Resolved> wd = Walk(tree, workdir, false, nullptr)) {
      kernel = Walk(tree, Join(wd->path, requested), write, nullptr);
    }
  }
  if (!got.ok()) {
    const absl::StatusCode code = got.status().code();
    FUZZ_CHECK(code == absl::StatusCode::kInvalidArgument ||
               code == absl::StatusCode::kPermissionDenied || code == absl::StatusCode::kNotFound ||
               code == absl::StatusCode::kFailedPrecondition);
    return 0;
  }
  FUZZ_CHECK(got->root_index < roots.size());
  if (write) FUZZ_CHECK(roots[got->root_index].writable);
  FUZZ_CHECK(kernel.has_value());
  if (kernel->path != got->resolved) {
    std::fprintf(stderr, "'%s' resolves to %s; ConfinePath said %s\n", requested.c_str(),
                 kernel->path.c_str(), got->resolved.c_str());
  }
  FUZZ_CHECK(kernel->path == got->resolved && kernel->exists == got->exists);
  const std::string& root = canonical[got->root_index];
  FUZZ_CHECK(!root.empty() && IsUnderOrEqual(got->resolved, root));
  for (const std::string& other : canonical) {
    if (!other.empty() && IsUnderOrEqual(got->resolved, other))
      FUZZ_CHECK(other.size() <= root.size());
  }
  if (got->relative != "." && Join(root, got->relative) != got->resolved) {
    std::fprintf(stderr, "root %s (resolved %s), relative '%s', resolved %s\n",
                 roots[got->root_index].path.c_str(), root.c_str(), got->relative.c_str(),
                 got->resolved.c_str());
  }
  FUZZ_CHECK(!got->relative.empty() && got->relative[0] != '/');
  FUZZ_CHECK(got->relative == "." ? got->resolved == root
                                  : Join(root, got->relative) == got->resolved);
  for (absl::string_view part : absl::StrSplit(got->relative, '/')) FUZZ_CHECK(part != "..");
  return 0;
}
