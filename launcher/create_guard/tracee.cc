#include "launcher/create_guard/tracee.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::launcher {
namespace {

// A missing /proc entry means the thread is gone.
int Gone(int error) { return error == ENOENT ? ESRCH : error; }

}  // namespace

bool ParseTraceeStatus(absl::string_view status, TraceeIdentity* identity) {
  // Each line is "Key:\tv1\tv2...". We need: Umask (octal), Uid and Gid (the
  // 4th value is the fs id), Groups (any number), NStgid and NSpid (the last
  // value: innermost pid ns).
  auto values = [](absl::string_view rest, auto&& each) {
    size_t i = 0;
    int index = 0;
    while (i < rest.size()) {
      while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t')) ++i;
      size_t j = i;
      while (j < rest.size() && rest[j] != ' ' && rest[j] != '\t') ++j;
      if (j > i) each(index++, rest.substr(i, j - i));
      i = j;
    }
    return index;
  };
  auto number = [](absl::string_view word, int base, unsigned long* out) {
    unsigned long value = 0;
    if (word.empty()) return false;
    for (char c : word) {
      const int digit = c - '0';
      if (digit < 0 || digit >= base) return false;
      value = value * base + digit;
    }
    *out = value;
    return true;
  };
  int found = 0;
  while (!status.empty()) {
    const size_t end = status.find('\n');
    // The kernel ends every line: one without its '\n' is a read cut short (a status larger
    // than the buffer), whose last number may be cut too ("NSpid: 12" of "NSpid: 1234").
    if (end == absl::string_view::npos) break;
    const absl::string_view line = status.substr(0, end);
    status = status.substr(end + 1);
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view key = line.substr(0, colon), rest = line.substr(colon + 1);
    unsigned long value = 0;
    if (key == "Umask") {
      values(rest, [&](int i, absl::string_view w) {
        if (i == 0 && number(w, 8, &value)) {
          identity->umask = static_cast<mode_t>(value & 0777);
          found |= 1;
        }
      });
    } else if (key == "Uid" || key == "Gid") {
      values(rest, [&](int i, absl::string_view w) {
        if (i != 3 || !number(w, 10, &value)) return;
        if (key == "Uid") {
          identity->fsuid = static_cast<uid_t>(value);
          found |= 2;
        } else {
          identity->fsgid = static_cast<gid_t>(value);
          found |= 4;
        }
      });
    } else if (key == "Groups") {
      identity->groups.clear();
      values(rest, [&](int, absl::string_view w) {
        if (number(w, 10, &value)) identity->groups.push_back(static_cast<gid_t>(value));
      });
      found |= 8;
    } else if (key == "NStgid" || key == "NSpid") {
      absl::string_view last;
      values(rest, [&](int, absl::string_view w) { last = w; });
      if (!number(last, 10, &value)) continue;
      if (key == "NStgid") {
        identity->ns_tgid = static_cast<pid_t>(value);
        found |= 16;
      } else {
        identity->ns_tid = static_cast<pid_t>(value);
        found |= 32;
      }
    }
  }
  return found == 63;
}

int TraceeIdentityReader::Read(pid_t tid, TraceeIdentity* identity) {
  char buf[8192];
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto it = open_.find(tid);
    if (it == open_.end()) {
      // Bounded: threads come and go; drop every cached file now and then.
      if (open_.size() >= 256) open_.clear();
      UniqueFd fd(openat(host_proc_, absl::StrCat(tid, "/status").c_str(), O_RDONLY | O_CLOEXEC));
      if (!fd.valid()) return Gone(errno);
      it = open_.emplace(tid, std::move(fd)).first;
    }
    ssize_t n;
    do {
      n = pread(it->second.get(), buf, sizeof(buf) - 1, 0);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
      // A status without these lines is a kernel we do not understand: refuse
      // the call.
      return ParseTraceeStatus(absl::string_view(buf, n), identity) ? 0 : EPERM;
    }
    // The file is of a thread that has exited (its tid may now name another):
    // reopen once.
    open_.erase(it);
  }
  return ESRCH;
}

int ReadTraceeString(pid_t tid, uint64_t address, std::string* out) {
  out->clear();
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  char chunk[PATH_MAX];
  while (out->size() < PATH_MAX) {
    // Never across a page boundary: the next page may be unmapped while this
    // one holds the terminating NUL.
    const uint64_t here = address + out->size();
    size_t want = std::min<uint64_t>(page - here % page, PATH_MAX - out->size());
    iovec local{chunk, want};
    iovec remote{reinterpret_cast<void*>(here), want};
    ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
    if (n <= 0) return n == 0 || errno == EFAULT || errno == EIO ? EFAULT : Gone(errno);
    const void* nul = memchr(chunk, '\0', n);
    if (nul != nullptr) {
      out->append(chunk, static_cast<const char*>(nul) - chunk);
      return 0;
    }
    out->append(chunk, n);
  }
  return ENAMETOOLONG;
}

int OpenTraceeFd(int host_proc, pid_t tid, int fd_number, UniqueFd* out) {
  const std::string path =
      fd_number == AT_FDCWD ? absl::StrCat(tid, "/cwd") : absl::StrCat(tid, "/fd/", fd_number);
  if (fd_number != AT_FDCWD && fd_number < 0) return EBADF;
  UniqueFd fd(openat(host_proc, path.c_str(), O_PATH | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno != ENOENT) return errno;
    // No such fd, or no such thread: tell them apart.
    UniqueFd thread(openat(host_proc, absl::StrCat(tid).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    return thread.valid() ? EBADF : ESRCH;
  }
  *out = std::move(fd);
  return 0;
}

}  // namespace ccsandbox::launcher
