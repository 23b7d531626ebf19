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
    rc = linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(),
                AT_SYMLINK_FOLLOW);
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
  for (const auto& [what, count] : outcomes)
    absl::StrAppend(&out, " ", what, "=", count);
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
  for (const auto& [what, count] : outcomes)
    absl::StrAppend(&out, " ", what, "=", count);
  return out;
}

double MicrosSince(std::chrono::steady_clock::time_point start, long n) {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - start)
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
      for (const std::string& name : names)
        close(open(name.c_str(), O_CREAT | O_WRONLY, 0644));
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

std::string Run(const std::vector<std::string>& w) {
  const std::string& op = w[0];
  auto arg = [&w](size_t i) { return i < w.size() ? w[i] : std::string(); };
  if (op == "umask") {
    umask(static_cast<mode_t>(strtoul(arg(1).c_str(), nullptr, 8)));
    return "OK";
  }
  if (op == "open") return Result(OpenCreate(arg(1), 0));
  if (op == "open-excl") return Result(OpenCreate(arg(1), O_EXCL));
  if (op == "open-nofollow") return Result(OpenCreate(arg(1), O_NOFOLLOW));
  if (op == "open-path") {  // O_PATH | O_CREAT: the kernel creates nothing
    const int fd = open(arg(1).c_str(), O_PATH | O_CREAT, 0666);
    if (fd >= 0) close(fd);
    return Result(fd);
  }
  if (op == "openat") {
    const int dir = open(arg(1).c_str(), O_DIRECTORY | O_RDONLY);
    if (dir < 0) return Result(-1);
    const int fd = openat(dir, arg(2).c_str(), O_CREAT | O_WRONLY, 0666);
    const int saved = errno;
    close(dir);
    if (fd >= 0) close(fd);
    errno = saved;
    return Result(fd);
  }
  if (op == "cloexec") {  // the injected fd carries close-on-exec as asked
    const int fd = open(arg(1).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0) return Result(-1);
    const int flags = fcntl(fd, F_GETFD);
    close(fd);
    return (flags & FD_CLOEXEC) ? "OK cloexec" : "OK no-cloexec";
  }
  if (op == "write") {  // open(O_CREAT|O_TRUNC), write the text, close
    const int fd = open(arg(1).c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0666);
    if (fd < 0) return Result(-1);
    const long n = write(fd, arg(2).data(), arg(2).size());
    close(fd);
    return Result(n);
  }
  if (op == "reopen-pipe") {  // O_CREAT through a /proc (or /dev/fd) magic link
                              // to a pipe
    int fds[2];
    if (pipe(fds) != 0) return Result(-1);
    const std::string self =
        absl::StrCat(arg(1).empty() ? "/proc/self/fd/" : arg(1), fds[1]);
    const long rc = OpenCreate(self, 0);
    const int saved = errno;
    close(fds[0]);
    close(fds[1]);
    errno = saved;
    return Result(rc);
  }
  if (op == "open-mem") {  // another process's memory, for writing ("parent" = getppid())
    const std::string pid =
        arg(1) == "parent" ? std::to_string(getppid()) : arg(1);
    const int fd = open(absl::StrCat("/proc/", pid, "/mem").c_str(), O_RDWR);
    if (fd >= 0) close(fd);
    return Result(fd);
  }
  if (op == "creat") {
    const int fd = creat(arg(1).c_str(), 0666);
    if (fd >= 0) close(fd);
    return Result(fd);
  }
  if (op == "mkdir") return Result(mkdir(arg(1).c_str(), 0777));
  // "<op>-mode PATH OCTAL": the same calls with the mode given.
  const mode_t mode = static_cast<mode_t>(strtoul(arg(2).c_str(), nullptr, 8));
  if (op == "open-mode") {
    const int fd = open(arg(1).c_str(), O_CREAT | O_WRONLY, mode);
    if (fd >= 0) close(fd);
    return Result(fd);
  }
  if (op == "mkdir-mode") return Result(mkdir(arg(1).c_str(), mode));
  if (op == "mknod-mode")
    return Result(mknod(arg(1).c_str(), S_IFREG | mode, 0));
  if (op == "mkfifo") return Result(mknod(arg(1).c_str(), S_IFIFO | 0666, 0));
  if (op == "mknod-reg")
    return Result(mknodat(AT_FDCWD, arg(1).c_str(), S_IFREG | 0666, 0));
  if (op == "mknod-chr")
    return Result(mknod(arg(1).c_str(), S_IFCHR | 0666, makedev(1, 3)));
  if (op == "symlink") return Result(symlink(arg(1).c_str(), arg(2).c_str()));
  if (op == "link") return Result(link(arg(1).c_str(), arg(2).c_str()));
  if (op == "rename") return Result(rename(arg(1).c_str(), arg(2).c_str()));
  if (op == "noreplace") {
    return Result(renameat2(AT_FDCWD, arg(1).c_str(), AT_FDCWD, arg(2).c_str(),
                            RENAME_NOREPLACE));
  }
  if (op == "exchange") {
    return Result(renameat2(AT_FDCWD, arg(1).c_str(), AT_FDCWD, arg(2).c_str(),
                            RENAME_EXCHANGE));
  }
  if (op == "tmpfile-proc") return Result(Tmpfile(arg(1), arg(2), true));
  if (op == "tmpfile-empty") return Result(Tmpfile(arg(1), arg(2), false));
  if (op == "openat2") {
    open_how how{};
    how.flags = O_CREAT | O_WRONLY;
    how.mode = 0644;
    const long fd =
        syscall(SYS_openat2, AT_FDCWD, arg(1).c_str(), &how, sizeof(how));
    if (fd >= 0) close(static_cast<int>(fd));
    return Result(fd);
  }
  if (op == "io_uring") {
    char params[120] = {};
    return Result(syscall(SYS_io_uring_setup, 1, params));
  }
  if (op == "bind") return Result(BindUnix(arg(1)));
  if (op == "chdir") return Result(chdir(arg(1).c_str()));
  if (op == "wait") {  // until the test writes a line to stdin
    std::string line;
    std::getline(std::cin, line);
    return "OK";
  }
  if (op == "bench") return Bench(arg(1), arg(2), std::stol(arg(3)));
  if (op == "race") return BufferRace(arg(1), std::stol(arg(2)));
  if (op == "symrace") return SymlinkRace(arg(1), std::stol(arg(2)));
  return "ERR unknown-op";
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::vector<std::string> words =
        absl::StrSplit(argv[i], ' ', absl::SkipEmpty());
    if (words.empty()) continue;
    std::cout << Run(words) << std::endl;
  }
  return 0;
}
