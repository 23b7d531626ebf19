// Privilege escalation (sudo, su, doas, pkexec, run0, account and capability tools, kernel
// modules): denied in every mode, and the payload of a wrapper classified too, so the decision
// names everything the line would do.
#include <vector>

#include "policy/command/program_util.h"

namespace ccsandbox::policy::programs {
namespace {

void Sudo(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1,
                       {"ugpCDrRtTUh",
                        "user group prompt close-from chdir role type other-user "
                        "host chroot command-timeout"},
                       /*stop_at_operand=*/true);
  c.Add(R::kPrivilegeEscalation, "runs a command as another user (root by default)");
  if (s.HasAny({"-e", "--edit"})) return;  // sudoedit: the operands are files
  c.Run(s.stop);
}

void Doas(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"uC", ""}, true);
  c.Add(R::kPrivilegeEscalation, "runs a command as another user (root by default)");
  c.Run(s.stop);
}

void Pkexec(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"", "user"}, true);
  c.Add(R::kPrivilegeEscalation, "runs a command as another user (root by default)");
  c.Run(s.stop);
}

void Run0(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1,
                       {"ugD",
                        "user group nice chdir setenv unit property description slice "
                        "slice-inherit background"},
                       true);
  c.Add(R::kPrivilegeEscalation, "runs a command as another user (root by default)");
  c.Run(s.stop);
}

void Su(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1,
                       {"csgGwC",
                        "command session-command shell group supp-group "
                        "whitelist-environment"},
                       false);
  c.Add(R::kPrivilegeEscalation, "switches to another user (root by default)");
  for (const Opt& o : s.opts) {
    if (!OneOf(o.name, {"-c", "--command", "--session-command"}) || !o.has_value) continue;
    ShellWord code;
    if (o.value_word != nullptr) {
      code = *o.value_word;
    } else {
      code.text = o.value;
    }
    c.Code(code, "su -c");
  }
}

void PrivilegeOnly(const Call& c) {
  c.Add(R::kPrivilegeEscalation, "changes users, groups, capabilities or who may become root");
}

void KernelModule(const Call& c) {
  if (c.name == "modprobe" &&
      AnyWord(c.argv, 1, {"-n", "--dry-run", "-c", "--showconfig", "--show-depends", "-D"})) {
    c.Add(R::kReadOnly, "shows module information");
    return;
  }
  c.Add(R::kPrivilegeEscalation, "loads or unloads kernel code");
}

}  // namespace

std::vector<ProgramGroup> PrivilegePrograms() {
  return {
      // Privilege escalation.
      {"sudo", H(Sudo)},
      {"doas", H(Doas)},
      {"pkexec", H(Pkexec)},
      {"run0", H(Run0)},
      {"su runuser", H(Su)},
      {"sudoedit ksu pfexec", S(R::kPrivilegeEscalation, "runs as another user")},
      {"setcap setpriv capsh visudo vipw vigr usermod useradd adduser userdel deluser groupadd "
       "groupmod groupdel addgroup delgroup gpasswd passwd chpasswd chage chsh chfn newgrp sg",
       H(PrivilegeOnly)},
      {"insmod rmmod modprobe", H(KernelModule)},
  };
}

}  // namespace ccsandbox::policy::programs
