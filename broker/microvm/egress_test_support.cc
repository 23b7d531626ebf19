#include "broker/microvm/egress_test_support.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace ccsandbox::broker::microvm {

StandInServer::StandInServer(std::string path, Mode mode, std::string answer)
    : path_(std::move(path)), mode_(mode), answer_(std::move(answer)) {
  listener_ = UniqueFd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un address{.sun_family = AF_UNIX};
  memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
  if (bind(listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(listener_.get(), 512) != 0) {
    abort();
  }
  acceptor_ = std::thread(&StandInServer::Accept, this);
}

StandInServer::StandInServer(UniqueFd listener, Mode mode, std::string answer)
    : mode_(mode), answer_(std::move(answer)), listener_(std::move(listener)) {
  acceptor_ = std::thread(&StandInServer::Accept, this);
}

std::unique_ptr<StandInServer> StandInServer::OnLoopback(Mode mode, std::string answer) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{.sin_family = AF_INET, .sin_addr = {htonl(INADDR_LOOPBACK)}};
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(fd.get(), 512) != 0) {
    abort();
  }
  return std::unique_ptr<StandInServer>(new StandInServer(std::move(fd), mode, std::move(answer)));
}

uint16_t StandInServer::port() const {
  sockaddr_in address{};
  socklen_t size = sizeof(address);
  getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&address), &size);
  return ntohs(address.sin_port);
}

StandInServer::~StandInServer() {
  stopping_ = true;
  shutdown(listener_.get(), SHUT_RDWR);
  acceptor_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_) shutdown(fd, SHUT_RDWR);
  }
  for (std::thread& thread : threads_) thread.join();
  if (!path_.empty()) unlink(path_.c_str());
}

std::string StandInServer::last_request() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_request_;
}

void StandInServer::Accept() {
  while (!stopping_) {
    pollfd p{listener_.get(), POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    UniqueFd fd(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd.valid()) continue;
    ++accepted_;
    std::lock_guard<std::mutex> lock(mu_);
    open_.push_back(fd.get());
    threads_.emplace_back(&StandInServer::Serve, this, std::move(fd));
  }
}

void StandInServer::Serve(UniqueFd fd) {
  char buffer[65536];
  std::string request;
  size_t drained = 0;
  while (mode_ != Mode::kNeverRead) {
    const ssize_t n = read(fd.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (mode_ == Mode::kEcho) {
      if (!WriteAll(fd.get(), std::string(buffer, n))) break;
      continue;
    }
    if (mode_ == Mode::kDrain) {
      drained += n;
      continue;
    }
    request.append(buffer, n);
    if (request.find("\r\n\r\n") != std::string::npos) break;
  }
  if (mode_ == Mode::kAnswer) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_request_ = request;
    }
    WriteAll(fd.get(), answer_);
  }
  if (mode_ == Mode::kDrain) WriteAll(fd.get(), std::to_string(drained));
  if (mode_ == Mode::kEcho) shutdown(fd.get(), SHUT_WR);
  if (mode_ == Mode::kNeverRead) {
    pollfd p{fd.get(), 0, 0};
    while (!stopping_) poll(&p, 1, 100);  // holds it; the destructor shuts it down
  }
  // Waits for the client to close before closing, so the destructor never shuts down a
  // number that was reused.
  while (mode_ == Mode::kEcho && !stopping_) {
    const ssize_t n = read(fd.get(), buffer, sizeof(buffer));
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::erase(open_, fd.get());
  fd.Reset();
}

TempDir::TempDir() {
  char path[] = "/tmp/ccsandbox-egress-XXXXXX";
  if (mkdtemp(path) == nullptr) abort();
  path_ = path;
}

TempDir::~TempDir() { std::filesystem::remove_all(path_); }

int OpenFds() {
  int count = 0;
  DIR* dir = opendir("/proc/self/fd");
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;  // the directory's own
}

bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += n;
  }
  return true;
}

std::string ReadAll(int fd) {
  std::string out;
  char buffer[65536];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buffer, n);
  }
}

}  // namespace ccsandbox::broker::microvm
