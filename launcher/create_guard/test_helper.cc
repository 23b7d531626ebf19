// Runs inside a test sandbox as the command: performs file-system operations
// named on its command line and prints one line per operation, "OK [detail]" or
// "ERR <ERRNO NAME>", so create_guard_test can check what the sandboxed process
// saw.
//
//   create_guard_test_helper "umask 027" "open /work/ok.txt" "mkdir
//   /work/keys.pem" ...
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace {

std::string Result(long rc) {
  if (rc >= 0) return "OK";
  const char* name = strerrorname_np(errno);
  return absl::StrCat("ERR ", name != nullptr ? name : std::to_string(errno));
}

// Opens with O_CREAT and closes: "OK" or the error.
long OpenCreate(const std::string& path, int extra) {
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY | extra, 0666);
  if (fd >= 0) close(fd);
  return fd;
}

long Tmpfile(const std::string& dir, const std::string& name, bool via_proc) {
  const int fd = open(dir.c_str(), O_TMPFILE | O_WRONLY, 0640);
  if (fd < 0) return -1;
  long rc;
  if (via_proc) {
    const std::string self = absl::StrCat("/proc/self/fd/", fd);
    rc = linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW);
  } else {
    rc = linkat(fd, "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH);
  }
  const int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

long BindUnix(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const long rc = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

// One thread flips an 8-byte name buffer between an allowed and a denied name,
// with single atomic stores; this thread creates through it. Prints how each
// attempt ended.
std::string BufferRace(const std::string& dir, long attempts) {
  if (chdir(dir.c_str()) != 0) return Result(-1);
  alignas(8) static char name[8];
  uint64_t ok, bad;
  memcpy(&ok, "ok.txt\0\0", 8);
  memcpy(&bad, "x.pem\0\0\0", 8);
  auto* word = reinterpret_cast<std::atomic<uint64_t>*>(name);
  word->store(ok);
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      word->store(bad, std::memory_order_relaxed);
      word->store(ok, std::memory_order_relaxed);
    }
  });
  std::map<std::string, long> outcomes;
  for (long i = 0; i < attempts; ++i) {
    const int fd = open(name, O_CREAT | O_WRONLY, 0644);
    if (fd >= 0) {
      close(fd);
      unlink("ok.txt");  // never x.pem: a bypass must stay visible
      ++outcomes["created"];
    } else {
      ++outcomes[strerrorname_np(errno)];
    }
  }
  stop = true;
  flipper.join();
  std::string out = "OK";
  for (const auto& [what, count] : outcomes) absl::StrAppend(&out, " ", what, "=", count);
  return out;
}

// One thread keeps making "ok.txt" a dangling symlink to "x.pem" and removing
// it; this thread creates "ok.txt".
std::string SymlinkRace(const std::string& dir, long attempts) {
  if (chdir(dir.c_str()) != 0) return Result(-1);
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      (void)!symlink("x.pem", "ok.txt");
      unlink("ok.txt");
    }
  });
  std::map<std::string, long> outcomes;
  for (long i = 0; i < attempts; ++i) {
    const int fd = open("ok.txt", O_CREAT | O_WRONLY, 0644);
    if (fd >= 0) {
      close(fd);
      ++outcomes["created"];
    } else {
      ++outcomes[strerrorname_np(errno)];
    }
  }
  stop = true;
  swapper.join();
  std::string out = "OK";
  for (const auto& [what, count] : outcomes) absl::StrAppend(&out, " ", what, "=", count);
  return out;
}

double MicrosSince(std::chrono::steady_clock::time_point start, long n) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
             .count() /
         n;
}

// Microseconds per operation, best of 3 rounds of n, each round in a fresh
// directory and nothing deleted (ext4 makes creating after deleting slow,
// guarded or not): creating and closing a new file (trapped), opening and
// closing an existing one, stat (not trapped).
std::string Bench(const std::string& what, const std::string& dir, long n) {
  double best = 1e9;
  for (int round = 0; round < 3; ++round) {
    const std::string sub = absl::StrCat(dir, "/bench-", what, "-", round);
    if (mkdir(sub.c_str(), 0755) != 0) return Result(-1);
    std::vector<std::string> names;
    for (long i = 0; i < n; ++i) names.push_back(absl::StrCat(sub, "/f", i));
    if (what != "create") {
      for (const std::string& name : names) close(open(name.c_str(), O_CREAT | O_WRONLY, 0644));
    }
    const auto start = std::chrono::steady_clock::now();
    for (const std::string& name : names) {
      if (what == "create") {
        const int fd = open(name.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
        if (fd < 0) return Result(-1);
        close(fd);
      } else if (what == "open") {
        const int fd = open(name.c_str(), O_RDONLY);
        if (fd < 0) return Result(-1);
        close(fd);
      } else {
        struct stat st;
        if (stat(name.c_str(), &st) != 0) return Result(-1);
      }
    }
    best = std::min(best, MicrosSince(start, n));
  }
  return absl::StrCat("OK ", best);
}

// One operation's words after its name; a missing word reads as "".
class Args {
 public:
  explicit Args(std::vector<std::string> words) : words_(std::move(words)) {}
  const std::string& operator[](size_t i) const { return i < words_.size() ? words_[i] : none_; }
  const char* c(size_t i) const { return (*this)[i].c_str(); }
  mode_t Mode(size_t i) const { return static_cast<mode_t>(strtoul(c(i), nullptr, 8)); }
  long Number(size_t i) const { return std::stol((*this)[i]); }

 private:
  std::vector<std::string> words_;
  std::string none_;
};

// Closes `fd` if it is one and returns the call's result, errno kept.
long Closed(long fd) {
  const int saved = errno;
  if (fd >= 0) close(static_cast<int>(fd));
  errno = saved;
  return fd;
}

long OpenAt(const std::string& dir, const std::string& name) {
  const int dirfd = open(dir.c_str(), O_DIRECTORY | O_RDONLY);
  if (dirfd < 0) return -1;
  const long fd = Closed(openat(dirfd, name.c_str(), O_CREAT | O_WRONLY, 0666));
  Closed(dirfd);
  return fd;
}

// The injected fd carries close-on-exec as asked.
std::string OpenCloexec(const std::string& path) {
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) return Result(-1);
  const int flags = fcntl(fd, F_GETFD);
  close(fd);
  return (flags & FD_CLOEXEC) ? "OK cloexec" : "OK no-cloexec";
}

// open(O_CREAT|O_TRUNC), write the text, close.
long WriteFile(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0666);
  if (fd < 0) return -1;
  const long n = write(fd, text.data(), text.size());
  Closed(fd);
  return n;
}

// O_CREAT through a /proc (or /dev/fd) magic link to a pipe.
long ReopenPipe(const std::string& prefix) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const long rc = OpenCreate(absl::StrCat(prefix.empty() ? "/proc/self/fd/" : prefix, fds[1]), 0);
  Closed(fds[0]);
  Closed(fds[1]);
  return rc;
}

// Another process's memory, for writing ("parent" = getppid()).
long OpenMem(const std::string& who) {
  const std::string pid = who == "parent" ? std::to_string(getppid()) : who;
  return Closed(open(absl::StrCat("/proc/", pid, "/mem").c_str(), O_RDWR));
}

long OpenAt2(const std::string& path) {
  open_how how{};
  how.flags = O_CREAT | O_WRONLY;
  how.mode = 0644;
  return Closed(syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof(how)));
}

// Until the test writes a line to stdin.
std::string WaitForInput() {
  std::string line;
  std::getline(std::cin, line);
  return "OK";
}

using OpFunction = std::function<std::string(const Args&)>;

// Every operation, by name: "<name> ARG...". "<op>-mode PATH OCTAL": the call with that mode.
const std::map<std::string, OpFunction>& Ops() {
  static const auto* ops = new std::map<std::string, OpFunction>{
      {"umask",
       [](const Args& a) {
         umask(a.Mode(1));
         return std::string("OK");
       }},
      {"open", [](const Args& a) { return Result(OpenCreate(a[1], 0)); }},
      {"open-excl", [](const Args& a) { return Result(OpenCreate(a[1], O_EXCL)); }},
      {"open-nofollow", [](const Args& a) { return Result(OpenCreate(a[1], O_NOFOLLOW)); }},
      // O_PATH | O_CREAT: the kernel creates nothing.
      {"open-path",
       [](const Args& a) { return Result(Closed(open(a.c(1), O_PATH | O_CREAT, 0666))); }},
      {"openat", [](const Args& a) { return Result(OpenAt(a[1], a[2])); }},
      {"cloexec", [](const Args& a) { return OpenCloexec(a[1]); }},
      {"write", [](const Args& a) { return Result(WriteFile(a[1], a[2])); }},
      {"reopen-pipe", [](const Args& a) { return Result(ReopenPipe(a[1])); }},
      {"open-mem", [](const Args& a) { return Result(OpenMem(a[1])); }},
      {"creat", [](const Args& a) { return Result(Closed(creat(a.c(1), 0666))); }},
      {"mkdir", [](const Args& a) { return Result(mkdir(a.c(1), 0777)); }},
      {"open-mode",
       [](const Args& a) { return Result(Closed(open(a.c(1), O_CREAT | O_WRONLY, a.Mode(2)))); }},
      {"mkdir-mode", [](const Args& a) { return Result(mkdir(a.c(1), a.Mode(2))); }},
      {"chmod-mode", [](const Args& a) { return Result(syscall(SYS_chmod, a.c(1), a.Mode(2))); }},
      {"fchmod-mode",
       [](const Args& a) {
         const int fd = open(a.c(1), O_RDONLY | O_CLOEXEC);
         if (fd < 0) return Result(-1);
         const long rc = syscall(SYS_fchmod, fd, a.Mode(2));
         Closed(fd);
         return Result(rc);
       }},
      {"fchmodat-mode",
       [](const Args& a) { return Result(syscall(SYS_fchmodat, AT_FDCWD, a.c(1), a.Mode(2))); }},
      {"tmpfile-mode",
       [](const Args& a) { return Result(Closed(open(a.c(1), O_TMPFILE | O_WRONLY, a.Mode(2)))); }},
      {"mknod-mode", [](const Args& a) { return Result(mknod(a.c(1), S_IFREG | a.Mode(2), 0)); }},
      {"mkfifo", [](const Args& a) { return Result(mknod(a.c(1), S_IFIFO | 0666, 0)); }},
      {"mknod-reg",
       [](const Args& a) { return Result(mknodat(AT_FDCWD, a.c(1), S_IFREG | 0666, 0)); }},
      {"mknod-chr",
       [](const Args& a) { return Result(mknod(a.c(1), S_IFCHR | 0666, makedev(1, 3))); }},
      {"symlink", [](const Args& a) { return Result(symlink(a.c(1), a.c(2))); }},
      {"link", [](const Args& a) { return Result(link(a.c(1), a.c(2))); }},
      {"rename", [](const Args& a) { return Result(rename(a.c(1), a.c(2))); }},
      {"noreplace",
       [](const Args& a) {
         return Result(renameat2(AT_FDCWD, a.c(1), AT_FDCWD, a.c(2), RENAME_NOREPLACE));
       }},
      {"exchange",
       [](const Args& a) {
         return Result(renameat2(AT_FDCWD, a.c(1), AT_FDCWD, a.c(2), RENAME_EXCHANGE));
       }},
      {"tmpfile-proc", [](const Args& a) { return Result(Tmpfile(a[1], a[2], true)); }},
      {"tmpfile-empty", [](const Args& a) { return Result(Tmpfile(a[1], a[2], false)); }},
      {"openat2", [](const Args& a) { return Result(OpenAt2(a[1])); }},
      {"io_uring",
       [](const Args&) {
         char params[120] = {};
         return Result(syscall(SYS_io_uring_setup, 1, params));
       }},
      {"bind", [](const Args& a) { return Result(BindUnix(a[1])); }},
      {"chdir", [](const Args& a) { return Result(chdir(a.c(1))); }},
      {"wait", [](const Args&) { return WaitForInput(); }},
      {"bench", [](const Args& a) { return Bench(a[1], a[2], a.Number(3)); }},
      {"race", [](const Args& a) { return BufferRace(a[1], a.Number(2)); }},
      {"symrace", [](const Args& a) { return SymlinkRace(a[1], a.Number(2)); }},
  };
  return *ops;
}

std::string Run(std::vector<std::string> words) {
  auto op = Ops().find(words[0]);
  if (op == Ops().end()) return "ERR unknown-op";
  return op->second(Args(std::move(words)));
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::vector<std::string> words = absl::StrSplit(argv[i], ' ', absl::SkipEmpty());
    if (words.empty()) continue;
    std::cout << Run(std::move(words)) << std::endl;
  }
  return 0;
}
