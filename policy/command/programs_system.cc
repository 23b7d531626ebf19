// Chat mode's fixed deny list — system and disk destruction, container and namespace escape —
// plus docker and the tools that change local files and system state.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "policy/command/program_util.h"

namespace ccsandbox::policy::programs {
namespace {

// ---------------------------------------------------------------------------------------------
// System and disk destruction, container and namespace escape.

// rm -r of /, ~, /usr, /*: the whole system or home directory.
void Rm(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {}, false);
  const bool recursive = s.HasAny({"-r", "-R", "--recursive"}) || s.dynamic;
  const bool no_preserve = s.Has("--no-preserve-root");
  for (const ShellWord* w : Operands(c.argv, s)) {
    if ((recursive && IsCriticalPath(*w)) || (no_preserve && recursive)) {
      c.Add(R::kSystemDestruction, absl::StrCat("recursively deletes ", Quote(w->text),
                                                ", destroying the system or the home directory"));
      return;
    }
  }
  c.Add(R::kMutating, "deletes files");
}

void Mv(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"tS", "target-directory suffix"}, false);
  std::vector<const ShellWord*> ops = Operands(c.argv, s);
  const bool has_target_opt = s.HasAny({"-t", "--target-directory"});
  const size_t sources = has_target_opt ? ops.size() : (ops.empty() ? 0 : ops.size() - 1);
  for (size_t i = 0; i < sources; ++i) {
    if (IsCriticalPath(*ops[i])) {
      c.Add(R::kSystemDestruction,
            absl::StrCat("moves ", Quote(ops[i]->text), " away, destroying the system or home"));
      return;
    }
  }
  if (!has_target_opt && ops.size() >= 2) c.AddWrite(*ops.back(), "moves files to");
  c.Add(R::kMutating, "moves files");
}

void Cp(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"tS", "target-directory suffix"}, false);
  std::vector<const ShellWord*> ops = Operands(c.argv, s);
  const Opt* target = s.Find("-t");
  if (target == nullptr) target = s.Find("--target-directory");
  if (target != nullptr && target->has_value) {
    ShellWord w = OptWord(*target);
    c.AddWrite(w, "copies files to");
  } else if (ops.size() >= 2) {
    c.AddWrite(*ops.back(), "copies files to");
  }
  c.Add(R::kMutating, "copies files");
}

// Numeric modes with the 4000 (setuid) or 2000 (setgid) bit, or symbolic modes adding `s`.
bool IsSetuidMode(absl::string_view mode) {
  if (!mode.empty() && absl::ascii_isdigit(mode[0])) {
    if (mode.size() < 4) return false;
    const char special = mode[mode.size() - 4];
    return special >= '0' && special <= '7' && ((special - '0') & 6) != 0;
  }
  for (absl::string_view clause : absl::StrSplit(mode, ',')) {
    size_t op = clause.find_first_of("+=");
    if (op != absl::string_view::npos && clause.substr(op).find('s') != absl::string_view::npos) {
      return true;
    }
  }
  return false;
}

void ChmodChown(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"", "reference from"}, false);
  std::vector<const ShellWord*> ops = Operands(c.argv, s);
  if (c.name == "chmod" && !ops.empty() && IsSetuidMode(ops[0]->text)) {
    c.Add(R::kPrivilegeEscalation,
          absl::StrCat("sets the setuid or setgid bit (", ops[0]->text,
                       "), so the program runs with its owner's privileges"));
  }
  if (s.HasAny({"-R", "--recursive"})) {
    for (size_t i = 1; i < ops.size(); ++i) {
      if (IsCriticalPath(*ops[i])) {
        c.Add(R::kSystemDestruction, absl::StrCat("recursively changes ", Quote(ops[i]->text),
                                                  ", breaking the system or home"));
        return;
      }
    }
  }
  c.Add(R::kMutating, "changes file permissions or ownership");
}

void InstallProgram(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"mogtS", "mode owner group target-directory suffix"}, false);
  for (const Opt& o : s.opts) {
    if ((o.name == "-m" || o.name == "--mode") && IsSetuidMode(o.value)) {
      c.Add(R::kPrivilegeEscalation,
            absl::StrCat("installs a setuid or setgid program (", o.value, ")"));
    }
  }
  std::vector<const ShellWord*> ops = Operands(c.argv, s);
  if (ops.size() >= 2) c.AddWrite(*ops.back(), "installs files to");
  c.Add(R::kMutating, "installs files");
}

void Dd(const Call& c) {
  bool writes = false;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const ShellWord& w = c.argv[i];
    if (absl::StartsWith(w.text, "of=")) {
      ShellWord target = w;
      target.text = w.text.substr(3);
      c.AddWrite(target, "writes");
      writes = true;
    }
  }
  if (!writes) c.Add(R::kReadOnly, "copies data to standard output");
}

void Shred(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"nsx", "iterations size random-source"}, false);
  for (const ShellWord* w : Operands(c.argv, s)) c.AddWrite(*w, "overwrites");
  c.Add(R::kMutating, "overwrites files");
}

void Truncate(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {"rs", "reference size"}, false);
  for (const ShellWord* w : Operands(c.argv, s)) c.AddWrite(*w, "truncates");
  c.Add(R::kMutating, "truncates files");
}

void Tee(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1, {}, false);
  for (const ShellWord* w : Operands(c.argv, s)) c.AddWrite(*w, "writes");
  c.Add(R::kReadOnly, "copies its input to standard output");
}

void Find(const Call& c) {
  size_t i = 1;
  std::vector<const ShellWord*> starts;
  while (i < c.argv.size() && OneOf(c.argv[i].text, {"-H", "-L", "-P", "-D", "-O"})) {
    if (c.argv[i].text == "-D" || c.argv[i].text == "-O") ++i;
    ++i;
  }
  for (; i < c.argv.size(); ++i) {
    const std::string& t = c.argv[i].text;
    if (absl::StartsWith(t, "-") || t == "(" || t == "!" || t == ",") break;
    starts.push_back(&c.argv[i]);
  }
  bool deletes = false;
  bool writes = false;
  for (; i < c.argv.size(); ++i) {
    const std::string& t = c.argv[i].text;
    if (t == "-delete") deletes = true;
    if (OneOf(t, {"-fprint", "-fprint0", "-fprintf", "-fls"}) && i + 1 < c.argv.size()) {
      c.AddWrite(c.argv[i + 1], "writes");
      writes = true;
    }
    if (OneOf(t, {"-exec", "-execdir", "-ok", "-okdir"})) {
      size_t end = i + 1;
      while (end < c.argv.size() && c.argv[end].text != ";" && c.argv[end].text != "+") ++end;
      if (end > i + 1) {
        bool destroys = false;
        const std::string prog = absl::AsciiStrToLower(c.argv[i + 1].text);
        if ((prog == "rm" || absl::EndsWith(prog, "/rm")) && c.argv[i + 1].literal()) {
          for (const ShellWord* st : starts) destroys = destroys || IsCriticalPath(*st);
        }
        if (destroys) {
          c.Add(R::kSystemDestruction, "deletes everything below a system or home directory");
        }
        // `{}` is a file name found at run time: `-exec sh -c {} \;` runs files as code.
        std::vector<ShellWord> payload;
        for (size_t k = i + 1; k < end; ++k) {
          payload.push_back(c.argv[k].text == "{}" ? RunTimeWord("file found by find") : c.argv[k]);
        }
        c.sink.RunArgv(payload);
      }
      i = end;
    }
  }
  if (deletes) {
    for (const ShellWord* st : starts) {
      if (IsCriticalPath(*st)) {
        c.Add(R::kSystemDestruction,
              absl::StrCat("-delete removes everything below ", Quote(st->text)));
        return;
      }
    }
    c.Add(R::kMutating, "-delete removes files");
    return;
  }
  if (!writes) c.Add(R::kReadOnly, "only lists files");
}

void Fd(const Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    if (OneOf(c.argv[i].text, {"-x", "--exec", "-X", "--exec-batch"})) {
      c.Run(i + 1);
      return;
    }
  }
  c.Add(R::kReadOnly, "only lists files");
}

void Rg(const Call& c) {
  if (AnyWord(c.argv, 1, {"--pre"}) || AnyWordStartsWith(c.argv, 1, "--pre=")) {
    return c.Add(R::kOpaqueProgram, "--pre runs a preprocessor command on every file");
  }
  c.Add(R::kReadOnly, "only reads files");
}

void DiskTool(const Call& c) {
  if (AnyWord(c.argv, 1,
              {"-l", "--list", "-d", "--dump", "print", "-s", "--show-size", "--version", "-V",
               "-h", "--help", "-p"}) &&
      !AnyWord(c.argv, 1, {"mklabel", "mkpart", "rm", "resizepart"})) {
    return c.Add(R::kReadOnly, "only lists partitions");
  }
  c.Add(R::kSystemDestruction, "rewrites partition tables or file systems");
}

void PowerControl(const Call& c) {
  if (AnyWord(c.argv, 1, {"--help", "--version", "-c"}) && c.name == "shutdown") {
    return c.Add(R::kReadOnly, "cancels or describes a shutdown");
  }
  c.Add(R::kSystemDestruction, "shuts down or restarts the machine");
}

void Init(const Call& c) {
  if (c.argv.size() >= 2 && OneOf(c.argv[1].text, {"0", "6", "1", "s", "S", "q", "Q"})) {
    return c.Add(R::kSystemDestruction, "changes the runlevel (halts or restarts the machine)");
  }
  c.Add(R::kMutating, "talks to the init system");
}

void Systemctl(const Call& c) {
  size_t i = 0;
  const std::string sub = SubWord(c, &i, "-H --host -M --machine -t --type -p --property");
  if (OneOf(sub, {"poweroff", "reboot", "halt", "kexec", "rescue", "emergency", "suspend",
                  "hibernate", "hybrid-sleep", "suspend-then-hibernate", "soft-reboot", "default",
                  "isolate", "exit"})) {
    return c.Add(R::kSystemDestruction, absl::StrCat(sub, " stops or restarts the machine"));
  }
  if (OneOf(sub, {"", "status", "show", "cat", "list-units", "list-unit-files", "list-timers",
                  "list-sockets", "list-dependencies", "list-jobs", "is-active", "is-enabled",
                  "is-failed", "is-system-running", "help", "--version", "get-default",
                  "show-environment", "list-machines"})) {
    return c.Add(R::kReadOnly, absl::StrCat(sub, " only reads"));
  }
  c.Add(R::kMutating, absl::StrCat(sub, " changes services"));
}

void Kill(const Call& c) {
  // Signalling pid 1 (init) or -1 (every process the user may signal) takes the system down.
  bool after_signal = false;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& t = c.argv[i].text;
    if (t == "-s" || t == "-n" || t == "--signal") {
      ++i;
      continue;
    }
    if (t == "-1" && after_signal) {
      return c.Add(R::kSystemDestruction, "signals every process");
    }
    if (t == "1" || (t == "-1" && i + 1 == c.argv.size())) {
      return c.Add(R::kSystemDestruction,
                   t == "1" ? "signals init (pid 1)" : "signals every process");
    }
    if (absl::StartsWith(t, "-") && (t.size() > 1)) {
      if (OneOf(t, {"-l", "-L", "--list", "--table"})) {
        return c.Add(R::kReadOnly, "lists signals");
      }
      after_signal = true;
    }
  }
  c.Add(R::kMutating, "signals processes");
}

void Escape(const Call& c) {
  if (c.name == "mount" || c.name == "umount") {
    if (c.argv.size() == 1 ||
        (c.argv.size() == 2 && OneOf(c.argv[1].text, {"-l", "--list", "-V", "-h"}))) {
      return c.Add(R::kReadOnly, "lists mounts");
    }
  }
  c.Add(R::kContainerEscape, "changes mounts, namespaces or the root directory");
}

void IpTool(const Call& c) {
  if (AnyWord(c.argv, 1, {"netns"}) && AnyWord(c.argv, 1, {"exec"})) {
    return c.Add(R::kContainerEscape, "netns exec runs a command in another network namespace");
  }
  if (AnyWord(c.argv, 1,
              {"add", "del", "delete", "set", "flush", "change", "replace", "append", "prepend",
               "exec", "attach", "detach"})) {
    return c.Add(R::kMutating, "changes network configuration");
  }
  c.Add(R::kReadOnly, "shows network configuration");
}

// A container run option and its value: `--flag value`, `--flag=value`, `-vSRC:DST`.
struct RunOption {
  std::string flag;
  std::string value;
};

RunOption ReadRunOption(Args argv, size_t k) {
  const std::string& t = argv[k].text;
  RunOption o{t, ""};
  const size_t eq = t.find('=');
  if (absl::StartsWith(t, "--") && eq != std::string::npos) {
    o.flag = t.substr(0, eq);
    o.value = t.substr(eq + 1);
  } else if (k + 1 < argv.size()) {
    o.value = argv[k + 1].text;
  }
  if (absl::StartsWith(t, "-v") && t.size() > 2 && t[2] != '-') {
    o.flag = "-v";
    o.value = t.substr(t[2] == '=' ? 3 : 2);
  }
  return o;
}

// The host path a -v, --volume or --mount option binds into the container.
ShellWord MountSource(const RunOption& o) {
  std::string source;
  if (o.flag == "--mount") {
    for (absl::string_view kv : absl::StrSplit(o.value, ',')) {
      if (absl::ConsumePrefix(&kv, "source=") || absl::ConsumePrefix(&kv, "src=")) {
        source = std::string(kv);
      }
    }
  } else {
    source = o.value.substr(0, o.value.find(':'));
  }
  ShellWord src{source, source, 0};
  if (absl::StartsWith(source, "~")) src.flags |= kWordTilde;
  return src;
}

// A bind of the host's root, home, /etc, /root or a container daemon's socket: the container
// can rewrite the host or start privileged containers of its own.
bool ExposesHost(const ShellWord& source) {
  NormalPath p = Normalize(source);
  const std::string joined = absl::StrJoin(p.parts, "/");
  return p.known &&
         (IsCriticalPath(source) || absl::EndsWith(joined, "docker.sock") ||
          absl::EndsWith(joined, "podman.sock") || absl::EndsWith(joined, "containerd.sock") ||
          (p.home && p.parts.size() <= 1) || joined == "etc" || absl::StartsWith(joined, "etc/") ||
          absl::StartsWith(joined, "root"));
}

// Why a run option hands the container the host itself; nullopt when it does not.
std::optional<std::string> HostEscape(const RunOption& o) {
  if (o.flag == "--privileged") {
    return "--privileged gives the container the host's devices and capabilities";
  }
  if (OneOf(o.flag, {"--pid", "--net", "--network", "--ipc", "--uts", "--userns", "--cgroupns"}) &&
      o.value == "host") {
    return absl::StrCat(o.flag, "=host shares the host's namespace with the container");
  }
  if (o.flag == "--cap-add" &&
      OneOf(absl::AsciiStrToUpper(o.value), {"ALL", "SYS_ADMIN", "SYS_MODULE", "SYS_PTRACE",
                                             "DAC_READ_SEARCH", "SYS_RAWIO", "CAP_SYS_ADMIN"})) {
    return absl::StrCat("--cap-add ", o.value, " lets the container reach the host");
  }
  if (o.flag == "--security-opt" &&
      (absl::StrContains(o.value, "unconfined") || absl::StrContains(o.value, "disable"))) {
    return "--security-opt turns off the container's confinement";
  }
  if (o.flag == "--device" || o.flag == "--device-cgroup-rule") {
    return "--device hands a host device to the container";
  }
  if (OneOf(o.flag, {"-v", "--volume", "--mount"})) {
    const ShellWord source = MountSource(o);
    if (ExposesHost(source)) {
      return absl::StrCat("mounts the host's ", Quote(source.text), " into the container");
    }
  }
  return std::nullopt;
}

// `docker container run`, `docker compose up` and the like count as their verb.
std::string GroupVerb(const Call& c, const std::string& sub, size_t sub_index) {
  if (!OneOf(sub, {"container", "image", "buildx", "manifest", "compose"})) return sub;
  size_t j = 0;
  std::string verb = SubWord(c, &j, "-f --file -p --project-name", sub_index + 1);
  return OneOf(verb, {"run", "create", "exec", "push", "up"}) ? verb : sub;
}

// docker/podman: every invocation talks to a daemon with root privileges on the host; some
// run options hand the container the host itself.
void Docker(const Call& c) {
  size_t i = 0;
  std::string sub = SubWord(c, &i, "-H --host -c --context --config -l --log-level");
  if (DynamicSub(c, sub)) return;
  if (sub.empty() || OneOf(sub, {"--version", "-v", "version", "--help", "help"})) {
    return c.Add(R::kReadOnly, "prints its version or usage");
  }
  sub = GroupVerb(c, sub, i);
  if (sub == "push" || (sub == "build" && AnyWord(c.argv, i + 1, {"--push"}))) {
    return Publish(c, "push");
  }
  if (OneOf(sub, {"run", "create", "exec", "up"})) {
    for (size_t k = i + 1; k < c.argv.size(); ++k) {
      if (std::optional<std::string> escape = HostEscape(ReadRunOption(c.argv, k))) {
        return c.Add(R::kContainerEscape, *escape);
      }
    }
  }
  c.Add(R::kMutating, absl::StrCat(sub,
                                   " acts through a container daemon with root privileges "
                                   "on the host"));
}

}  // namespace

void DestroysDisks(const Call& c) {
  c.Add(R::kSystemDestruction, "erases or reformats disks and volumes");
}

std::vector<ProgramGroup> SystemPrograms() {
  return {
      {"kill pkill killall skill", H(Kill)},
      {"killall5", S(R::kSystemDestruction, "signals every process")},
      // System and disk destruction, container escape.
      {"rm", H(Rm)},
      {"mv", H(Mv)},
      {"cp", H(Cp)},
      {"chmod chown chgrp", H(ChmodChown)},
      {"install", H(InstallProgram)},
      {"dd", H(Dd)},
      {"shred", H(Shred)},
      {"truncate", H(Truncate)},
      {"tee", H(Tee)},
      {"find", H(Find)},
      {"fd fdfind", H(Fd)},
      {"rg", H(Rg)},
      {"fdisk sfdisk cfdisk gdisk sgdisk parted", H(DiskTool)},
      {"mke2fs mkswap mkntfs mkdosfs mkexfatfs wipefs blkdiscard lvremove vgremove pvremove "
       "badblocks",
       H(DestroysDisks)},
      {"zfs zpool diskutil", H([](const Call& c) {
         const std::string sub = SubWord(c, nullptr);
         if (absl::StartsWith(sub, "destroy") || absl::StartsWith(sub, "erase") ||
             OneOf(sub, {"partitionDisk", "zeroDisk", "randomDisk", "secureErase", "labelclear"})) {
           return DestroysDisks(c);
         }
         if (OneOf(sub, {"list", "get", "status", "info", "iostat", "history", "", "activity"})) {
           return c.Add(R::kReadOnly, absl::StrCat(sub, " only reads"));
         }
         c.Add(R::kMutating, absl::StrCat(sub, " changes volumes"));
       })},
      {"kexec", S(R::kSystemDestruction, "boots into another kernel")},
      {"shutdown reboot halt poweroff", H(PowerControl)},
      {"init telinit", H(Init)},
      {"systemctl", H(Systemctl)},
      {"nsenter unshare chroot pivot_root switch_root mount umount systemd-nspawn bwrap "
       "lxc-attach lxc-execute lxc-unshare",
       H(Escape)},
      {"ip", H(IpTool)},
      {"docker podman nerdctl docker-compose podman-compose", H(Docker)},
      {"sysctl", H([](const Call& c) {
         for (size_t i = 1; i < c.argv.size(); ++i) {
           if (c.argv[i].text == "-w" || c.argv[i].text == "-p" ||
               absl::StrContains(c.argv[i].text, "=")) {
             return c.Add(R::kMutating, "changes kernel parameters");
           }
         }
         c.Add(R::kReadOnly, "reads kernel parameters");
       })},
      // Local changes.
      {"mkdir rmdir touch ln link unlink mkfifo mknod mktemp fallocate split csplit rename "
       "chattr setfacl at batch atrm sponge renice ssh-keygen ssh-add launchctl service "
       "update-alternatives ldconfig locale-gen hwclock timedatectl hostnamectl "
       "systemd-run crontab-edit",
       S(R::kMutating, "changes local files or system state")},
      {"patch", H([](const Call& c) {
         if (AnyWord(c.argv, 1, {"--dry-run", "-C", "--check"})) {
           return c.Add(R::kReadOnly, "--dry-run only checks the patch");
         }
         c.Add(R::kMutating, "changes files");
       })},
      {"crontab", H([](const Call& c) {
         if (AnyWord(c.argv, 1, {"-l"})) return c.Add(R::kReadOnly, "-l lists the crontab");
         c.Add(R::kMutating, "changes scheduled jobs");
       })},
      {"hostname", H([](const Call& c) {
         if (FirstOperand(c.argv, 1) < c.argv.size()) {
           return c.Add(R::kMutating, "changes the host name");
         }
         c.Add(R::kReadOnly, "prints the host name");
       })},
      {"date", H([](const Call& c) {
         if (AnyWord(c.argv, 1, {"-s", "--set"}) || AnyWordStartsWith(c.argv, 1, "--set=")) {
           return c.Add(R::kMutating, "sets the clock");
         }
         c.Add(R::kReadOnly, "prints the date");
       })},
      {"ifconfig", H([](const Call& c) {
         if (c.argv.size() > 2) return c.Add(R::kMutating, "changes network interfaces");
         c.Add(R::kReadOnly, "shows network interfaces");
       })},
      {"fuser", H([](const Call& c) {
         if (AnyWordStartsWith(c.argv, 1, "-k")) return c.Add(R::kMutating, "-k kills processes");
         c.Add(R::kReadOnly, "lists processes using files");
       })},
      {"yq", H([](const Call& c) {
         if (AnyWord(c.argv, 1, {"-i", "--inplace"})) return c.Add(R::kMutating, "-i edits files");
         c.Add(R::kReadOnly, "only reads files");
       })},
  };
}

}  // namespace ccsandbox::policy::programs
