// A terminal in the guest (docs/microvm.md, "Terminals"): a PTY whose slave is the shell's
// stdio and controlling terminal, the shell started the way every run starts (guest_spawn.h:
// chrooted in the guest's root, capabilities dropped), its output relayed as kStdout frames
// and its end as kExit. The agent serves one run or terminal at a time.
//
//   GuestPty pty;
//   pty.Start(request, root, &error);          // then kStarted
//   pty.Fill(&fds);  poll;  pty.Handle(fd, send);   // output, and once the shell ended, kExit
//
// The end sweeps the guest: once the shell has exited (or was killed), every process but the
// agent is SIGKILLed and reaped, then the PTY's last output is read and the exit sent. The
// guest runs nothing else meanwhile, so these are all the terminal's, background jobs and
// processes that left its session included.
#ifndef CCSANDBOX_BROKER_MICROVM_AGENT_GUEST_PTY_H_
#define CCSANDBOX_BROKER_MICROVM_AGENT_GUEST_PTY_H_

#include <poll.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "broker/microvm/agent_frame.h"
#include "broker/microvm/guest_setup.h"

namespace ccsandbox::broker::microvm {

class GuestPty {
 public:
  using Send = std::function<void(FrameType, const std::string&)>;

  GuestPty() = default;
  GuestPty(const GuestPty&) = delete;
  GuestPty& operator=(const GuestPty&) = delete;
  ~GuestPty() { Close(); }

  bool open() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // A PTY of the request's size from the guest's root's devpts (`root` set: the shell's
  // /dev/pts/N is its own terminal) or the agent's (mounted on /dev/pts on first use); the
  // request's command on its slave as a session leader with it as controlling terminal. False
  // and why when it could not start (the PTY, entering the root, chdir, exec).
  bool Start(const TerminalRequest& request, const GuestSetup* root, std::string* error);

  // This terminal's fds to poll.
  void Fill(std::vector<pollfd>* fds) const;
  // One polled fd; fds not this terminal's are ignored. Output goes out as kStdout; the
  // shell's end as the sweep, the last output and kExit (the terminal is then closed).
  void Handle(const pollfd& p, const Send& send);

  // Bytes typed: written as the shell reads them; at most 1 MiB waits, more is dropped (as a
  // full line discipline drops it).
  void Input(const std::string& bytes);
  void Resize(uint16_t rows, uint16_t cols);
  // To the foreground job, as the line discipline sends ^C (TIOCSIG).
  void Signal(int sig);
  // As a closed terminal window: SIGHUP and SIGCONT to the shell's and the foreground job's
  // process groups.
  void Hangup();
  // SIGKILL to every process but the agent (the terminal then ends as its shell dies).
  void Kill();

 private:
  void Flush();
  void Finish(const Send& send);
  void Close();

  pid_t pid_ = -1;
  int master_ = -1;
  int pidfd_ = -1;  // readable once the shell has exited
  bool master_done_ = false;
  std::string pending_;
};

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_AGENT_GUEST_PTY_H_
