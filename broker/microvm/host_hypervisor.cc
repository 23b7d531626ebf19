#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "broker/microvm/hypervisor.h"
#include "broker/microvm/hypervisor_process.h"

namespace ccsandbox::broker::microvm {
namespace {

class HostHypervisor : public Hypervisor {
 public:
  explicit HostHypervisor(std::string console_path) : console_path_(std::move(console_path)) {}
  ~HostHypervisor() override { process_.KillAndReap(); }

  HypervisorProcess& process() { return process_; }
  int pid() const override { return process_.pid(); }
  std::optional<std::string> WaitUntil(absl::Time deadline) override {
    const std::optional<int> status = process_.WaitUntil(deadline);
    if (!status.has_value()) return std::nullopt;
    return WaitStatusText(*status);
  }
  void PowerOff() override { process_.Signal(SIGTERM); }
  void Kill() override { process_.KillAndReap(); }
  uint64_t ConsoleSize() const override {
    struct stat st;
    return stat(console_path_.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  }
  std::string ConsoleTail() const override {
    std::ifstream in(console_path_, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string text = buffer.str();
    if (text.size() > kConsoleTail) text.erase(0, text.size() - kConsoleTail);
    return text;
  }

 private:
  std::string console_path_;
  HypervisorProcess process_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Hypervisor>> StartHostHypervisor(
    const std::vector<std::string>& argv, const std::string& state_dir) {
  const std::string console_path = absl::StrCat(state_dir, "/console.log");
  UniqueFd console(open(console_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!console.valid()) {
    return absl::InternalError(absl::StrCat("open ", console_path, ": ", strerror(errno)));
  }
  auto hypervisor = std::make_unique<HostHypervisor>(console_path);
  if (absl::Status spawned = hypervisor->process().Spawn(argv, console.get()); !spawned.ok()) {
    return spawned;
  }
  return std::unique_ptr<Hypervisor>(std::move(hypervisor));
}

}  // namespace ccsandbox::broker::microvm
