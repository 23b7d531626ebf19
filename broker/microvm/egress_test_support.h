// Test stand-ins for the session's proxies (and upstreams) in the egress tests: servers on a
// Unix socket or a loopback TCP port that echo, answer once, or never read; and the count of
// this process's open fds.
#ifndef CCSANDBOX_BROKER_MICROVM_EGRESS_TEST_SUPPORT_H_
#define CCSANDBOX_BROKER_MICROVM_EGRESS_TEST_SUPPORT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/unique_fd.h"

namespace ccsandbox::broker::microvm {

class StandInServer {
 public:
  enum class Mode {
    kEcho,       // echoes every byte; shuts down its write side at the client's EOF
    kAnswer,     // reads up to an empty line (or EOF), writes `answer`, closes
    kNeverRead,  // accepts and holds the connection, reads nothing
    kDrain,      // reads to EOF, then writes how many bytes it read (decimal) and closes
  };
  // Listens on the Unix socket `path` now.
  StandInServer(std::string path, Mode mode, std::string answer = "");
  // Listens on 127.0.0.1, an ephemeral port (port()).
  static std::unique_ptr<StandInServer> OnLoopback(Mode mode, std::string answer = "");
  ~StandInServer();
  const std::string& path() const { return path_; }
  uint16_t port() const;
  int accepted() const { return accepted_; }
  // Bytes a kAnswer server read before answering, of the last connection.
  std::string last_request() const;

 private:
  StandInServer(UniqueFd listener, Mode mode, std::string answer);
  void Accept();
  void Serve(UniqueFd fd);

  std::string path_;
  Mode mode_;
  std::string answer_;
  UniqueFd listener_;
  std::atomic<bool> stopping_ = false;
  std::atomic<int> accepted_ = 0;
  mutable std::mutex mu_;
  std::vector<int> open_;  // connections being served, shut down on destruction
  std::vector<std::thread> threads_;
  std::string last_request_;
  std::thread acceptor_;
};

// A fresh directory under /tmp, removed with what it holds.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

int OpenFds();
// Writes all of `bytes`; false on an error.
bool WriteAll(int fd, const std::string& bytes);
// Reads until EOF (or an error).
std::string ReadAll(int fd);

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_EGRESS_TEST_SUPPORT_H_
