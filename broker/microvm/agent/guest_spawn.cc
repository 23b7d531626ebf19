#include "broker/microvm/agent/guest_spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "broker/microvm/agent/guest_root.h"

namespace ccsandbox::broker::microvm {

void WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += n;
  }
}

pid_t SpawnInGuest(const ExecRequest& request, const GuestSetup* root,
                   const std::function<void()>& wire_stdio, std::string* error) {
  int status[2];
  if (pipe2(status, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + strerror(errno);
    return -1;
  }
  std::vector<char*> args, envp;
  for (const std::string& a : request.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : request.env) envp.push_back(const_cast<char*>(e.c_str()));
  if (request.env.empty()) envp.push_back(const_cast<char*>("PATH=/bin"));
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    wire_stdio();
    signal(SIGPIPE, SIG_DFL);
    const std::string workdir =
        !request.workdir.empty() || root == nullptr ? request.workdir : root->workdir;
    std::string entered;
    if (!EnterGuestRoot(root != nullptr, &entered)) {
      WriteAll(status[1], entered);
      _exit(127);
    }
    const char* step = "chdir";
    if (workdir.empty() || chdir(workdir.c_str()) == 0) {
      step = "exec";
      environ = envp.data();
      execvp(args[0], args.data());
    }
    const std::string why = std::string(step) + " " + (step[0] == 'c' ? workdir : request.argv[0]) +
                            ": " + strerror(errno);
    WriteAll(status[1], why);
    _exit(127);
  }
  close(status[1]);
  if (pid < 0) {
    *error = std::string("fork: ") + strerror(errno);
    close(status[0]);
    return -1;
  }
  std::string why;
  char buffer[512];
  ssize_t n;
  while ((n = read(status[0], buffer, sizeof(buffer))) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) why.append(buffer, n);
  }
  close(status[0]);
  if (!why.empty()) {
    waitpid(pid, nullptr, 0);
    *error = why;
    return -1;
  }
  return pid;
}

}  // namespace ccsandbox::broker::microvm
