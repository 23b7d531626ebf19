#include "workspace/tree_manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <functional>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/unique_fd.h"
#include "workspace/directory_listing.h"

namespace ccsandbox::workspace::testing {
namespace {

int64_t Nanoseconds(const timespec& t) { return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

absl::StatusOr<uint64_t> HashContents(int fd, const std::string& path) {
  std::string contents;
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0) return absl::ErrnoToStatus(errno, "read " + path);
    if (n == 0) break;
    contents.append(buffer, static_cast<size_t>(n));
  }
  return absl::HashOf(contents);
}

absl::Status Walk(int dir, const std::string& root, const std::string& relative,
                  const std::function<bool(const std::string&)>& skip, Manifest& manifest) {
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(dir);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    const std::string child = relative.empty() ? name : absl::StrCat(relative, "/", name);
    if (skip && skip(child)) continue;
    const std::string path = absl::StrCat(root, "/", child);
    struct stat st;
    if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return absl::ErrnoToStatus(errno, "lstat " + path);
    }
    ManifestEntry entry{st.st_mode,
                        st.st_uid,
                        st.st_gid,
                        static_cast<uint64_t>(st.st_size),
                        Nanoseconds(st.st_mtim),
                        Nanoseconds(st.st_atim),
                        st.st_ino};
    if (S_ISLNK(st.st_mode)) {
      char target[PATH_MAX];
      const ssize_t n = readlinkat(dir, name.c_str(), target, sizeof(target));
      if (n < 0) return absl::ErrnoToStatus(errno, "readlink " + path);
      entry.link_target.assign(target, static_cast<size_t>(n));
      entry.atime_ns = 0;
    } else if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
      UniqueFd fd(openat(
          dir, name.c_str(),
          O_RDONLY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC | (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0)));
      if (!fd.valid()) return absl::ErrnoToStatus(errno, "open " + path);
      if (S_ISDIR(st.st_mode)) {
        if (absl::Status walked = Walk(fd.get(), root, child, skip, manifest); !walked.ok()) {
          return walked;
        }
      } else {
        absl::StatusOr<uint64_t> hash = HashContents(fd.get(), path);
        if (!hash.ok()) return hash.status();
        entry.content_hash = *hash;
      }
    }
    manifest[child] = entry;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Manifest> TakeManifest(const std::string& root,
                                      const std::function<bool(const std::string&)>& skip) {
  UniqueFd top(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOATIME | O_CLOEXEC));
  if (!top.valid()) return absl::ErrnoToStatus(errno, "open " + root);
  Manifest manifest;
  if (absl::Status walked = Walk(top.get(), root, "", skip, manifest); !walked.ok()) {
    return walked;
  }
  struct stat st;
  if (fstat(top.get(), &st) != 0) return absl::ErrnoToStatus(errno, "fstat " + root);
  manifest[""] = ManifestEntry{st.st_mode,
                               st.st_uid,
                               st.st_gid,
                               static_cast<uint64_t>(st.st_size),
                               Nanoseconds(st.st_mtim),
                               Nanoseconds(st.st_atim),
                               st.st_ino,
                               0,
                               ""};
  return manifest;
}

Manifest Portable(Manifest manifest) {
  for (auto& [path, entry] : manifest) {
    entry.inode = 0;
    if (S_ISDIR(entry.mode)) entry.size = 0;
  }
  return manifest;
}

Manifest AsCloned(Manifest manifest, uid_t uid, gid_t gid) {
  for (auto& [path, entry] : manifest) {
    entry.mode &= ~static_cast<mode_t>(S_ISUID | S_ISGID);
    entry.uid = uid;
    entry.gid = gid;
  }
  return manifest;
}

std::string DescribeDifference(const Manifest& expected, const Manifest& actual) {
  auto show = [](const ManifestEntry& e) {
    return absl::StrFormat("mode %o uid %d gid %d size %d mtime %d atime %d ino %d hash %x -> '%s'",
                           e.mode, e.uid, e.gid, e.size, e.mtime_ns, e.atime_ns, e.inode,
                           e.content_hash, e.link_target);
  };
  std::string out;
  int lines = 0;
  auto add = [&](const std::string& line) {
    if (++lines <= 20) absl::StrAppend(&out, line, "\n");
  };
  for (const auto& [path, entry] : expected) {
    auto it = actual.find(path);
    if (it == actual.end()) {
      add(absl::StrCat("missing '", path, "': ", show(entry)));
    } else if (!(it->second == entry)) {
      add(absl::StrCat("differs '", path, "': expected ", show(entry), "; got ", show(it->second)));
    }
  }
  for (const auto& [path, entry] : actual) {
    if (!expected.contains(path)) add(absl::StrCat("extra '", path, "': ", show(entry)));
  }
  if (lines > 20) absl::StrAppend(&out, "... ", lines - 20, " more\n");
  return out;
}

}  // namespace ccsandbox::workspace::testing
