#include "policy/command/programs.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "policy/command/program_util.h"
#include "policy/plan/env_scrub.h"

namespace ccsandbox::policy {

using programs::InList;
using programs::Normalize;
using programs::NormalPath;
using programs::OneOf;
using programs::Quote;
using R = CommandRule;

namespace {

bool HasGlobChars(absl::string_view s) { return s.find_first_of("*?[") != absl::string_view::npos; }

// Removing any of these recursively takes the system (or every user's files) with it.
constexpr absl::string_view kSystemTopDirs =
    "bin boot dev etc home lib lib32 lib64 libx32 opt proc root run sbin srv sys usr var mnt "
    "media snap nix System Library Applications Users private Volumes cores";

bool IsSystemTopDir(absl::string_view name) { return InList(name, kSystemTopDirs); }

bool IsBlockDevicePath(const NormalPath& p) {
  if (!p.known || p.home || p.parts.size() < 2 || p.parts[0] != "dev") return false;
  if (p.parts[1] == "mapper" || p.parts[1] == "disk" || p.parts[1] == "md") return true;
  if (p.parts.size() != 2) return false;
  const std::string& d = p.parts[1];
  // Raw disks, partitions, RAID, LVM, loop, NBD and physical memory: writing these destroys
  // file systems (or the running kernel) below any permission the sandbox checks on files.
  for (absl::string_view prefix :
       {"sd",  "hd",  "vd", "xvd",  "nvme",  "mmcblk", "md",   "dm-",  "loop", "sr",
        "nbd", "rbd", "zd", "disk", "rdisk", "mem",    "kmem", "port", "fd0",  "ram"}) {
    if (absl::StartsWith(d, prefix)) return true;
  }
  return false;
}

}  // namespace

bool IsCriticalPath(const ShellWord& word) {
  NormalPath p = Normalize(word);
  if (!p.known) return false;
  if (p.parts.empty()) return true;  // "/" or "~"
  const std::string& first = p.parts[0];
  const bool glob = (word.flags & kWordGlob) != 0;
  if (p.home) {
    // ~/* and ~/.* take the whole home directory.
    return p.parts.size() == 1 && glob && absl::StrContains(first, '*') &&
           first.find_first_not_of("*.") == std::string::npos;
  }
  if (p.parts.size() == 1) return IsSystemTopDir(first) || (glob && HasGlobChars(first));
  if (p.parts.size() == 2) {
    return (IsSystemTopDir(first) || (glob && HasGlobChars(first))) && glob &&
           p.parts[1].find_first_not_of("*") == std::string::npos;
  }
  return false;
}

WriteTarget ClassifyWriteTarget(const ShellWord& target) {
  const std::string& t = target.text;
  if (absl::StartsWith(t, "/dev/tcp/") || absl::StartsWith(t, "/dev/udp/")) {
    return WriteTarget::kNetwork;
  }
  NormalPath p = Normalize(target);
  if (!p.known) return WriteTarget::kFile;
  const std::string joined = absl::StrJoin(p.parts, "/");
  if (p.home) {
    // Keys in authorized_keys let anyone holding them log in as this user.
    if (joined == ".ssh/authorized_keys" || joined == ".ssh/authorized_keys2") {
      return WriteTarget::kAccountFile;
    }
    return WriteTarget::kFile;
  }
  if (OneOf(joined, {"dev/null", "dev/stdout", "dev/stderr", "dev/tty", "dev/zero", "dev/full"}) ||
      absl::StartsWith(joined, "dev/fd/") || absl::StartsWith(joined, "dev/pts/") ||
      (absl::StartsWith(joined, "proc/self/fd/"))) {
    return WriteTarget::kDiscard;
  }
  if (IsBlockDevicePath(p)) return WriteTarget::kBlockDevice;
  // Who may log in, who may become root, what every process preloads.
  if (OneOf(joined, {"etc/sudoers", "etc/passwd", "etc/shadow", "etc/group", "etc/gshadow",
                     "etc/doas.conf", "etc/ld.so.preload", "root/.ssh/authorized_keys"}) ||
      absl::StartsWith(joined, "etc/sudoers.d/") || absl::StartsWith(joined, "etc/pam.d/") ||
      absl::StartsWith(joined, "etc/security/") || absl::StartsWith(joined, "etc/polkit-1/") ||
      (p.parts.size() == 4 && p.parts[0] == "home" && p.parts[2] == ".ssh" &&
       p.parts[3] == "authorized_keys")) {
    return WriteTarget::kAccountFile;
  }
  // The running kernel, its next boot, its sysctls.
  if (joined == "proc/sysrq-trigger" || absl::StartsWith(joined, "proc/sys/") ||
      (!p.parts.empty() && (p.parts[0] == "sys" || p.parts[0] == "boot"))) {
    return WriteTarget::kSystemControl;
  }
  return WriteTarget::kFile;
}

void ClassifyAssignment(const ShellWord& assignment, ProgramSink& sink) {
  const size_t eq = assignment.text.find('=');
  if (eq == std::string::npos || eq == 0) return;
  absl::string_view name = absl::string_view(assignment.text).substr(0, eq);
  absl::ConsumeSuffix(&name, "+");
  name = name.substr(0, name.find('['));
  if (IsScrubbedEnvName(name) || name == "PATH") {
    sink.Add(R::kOpaqueProgram, absl::StrCat("sets ", name, ", which changes what code runs"));
  }
  absl::string_view literal_value = absl::string_view(assignment.text).substr(eq + 1);
  // A stored command substitution runs when the value is evaluated later — by eval, by
  // arithmetic (`x='a[$(cmd)]'; (( x ))`), by a prompt: classify it now, without failing
  // closed on values that only look like code.
  if (assignment.literal() && literal_value.find_first_of("`$") != absl::string_view::npos &&
      (absl::StrContains(literal_value, "$(") || absl::StrContains(literal_value, "`")) &&
      ParseShell(literal_value).ok()) {
    sink.RunCode(literal_value, absl::StrCat("the value stored in ", name),
                 /*substitutions_only=*/true);
  }
  // Programs run these through a shell: `PAGER='git push' git log` pushes.
  if (!InList(name,
              "PAGER MANPAGER GIT_PAGER SYSTEMD_PAGER GH_PAGER AWS_PAGER BAT_PAGER "
              "PSQL_PAGER MYSQL_PAGER DELTA_PAGER EDITOR VISUAL GIT_EDITOR "
              "GIT_SEQUENCE_EDITOR SUDO_EDITOR FCEDIT GH_EDITOR BROWSER GH_BROWSER "
              "GIT_SSH_COMMAND GIT_SSH GIT_EXTERNAL_DIFF GIT_PROXY_COMMAND SSH_ASKPASS "
              "SUDO_ASKPASS GIT_ASKPASS PROMPT_COMMAND LESSOPEN LESSCLOSE RSYNC_RSH "
              "CVS_RSH")) {
    return;
  }
  absl::string_view value = absl::string_view(assignment.text).substr(eq + 1);
  const std::string how = absl::StrCat(name, "=");
  if (!assignment.literal()) {
    sink.Add(R::kDynamicCode, absl::StrCat(how, " sets a command only known at run time"));
    return;
  }
  while (absl::ConsumePrefix(&value, "|")) {
  }
  if (!value.empty()) sink.RunCode(value, how);
}

bool DescribeWrite(const ShellWord& target, absl::string_view how, CommandRule* rule,
                   std::string* reason) {
  switch (ClassifyWriteTarget(target)) {
    case WriteTarget::kDiscard:
      return false;
    case WriteTarget::kFile:
      *rule = R::kMutating;
      *reason = absl::StrCat(how, " ", Quote(target.text));
      return true;
    case WriteTarget::kBlockDevice:
      *rule = R::kSystemDestruction;
      *reason = absl::StrCat(how, " the block device ", Quote(target.text), ", overwriting a disk");
      return true;
    case WriteTarget::kAccountFile:
      *rule = R::kPrivilegeEscalation;
      *reason = absl::StrCat(how, " ", Quote(target.text),
                             ", which decides who may log in or become root");
      return true;
    case WriteTarget::kNetwork:
      *rule = R::kNetworkWrite;
      *reason = absl::StrCat(how, " the network socket ", Quote(target.text));
      return true;
    case WriteTarget::kSystemControl:
      *rule = R::kSystemDestruction;
      *reason = absl::StrCat(how, " ", Quote(target.text), ", which controls the running system");
      return true;
  }
  return false;
}

namespace {

// ---------------------------------------------------------------------------------------------
// The table.

std::vector<programs::ProgramGroup> GenericPrograms() {
  using programs::Call;
  using programs::H;
  using programs::S;
  return {
      {"man", H([](const Call& c) {
         // -P/--pager and -H/--html name a program man runs through a shell.
         programs::ArgScan s = programs::ScanArgs(c.argv, 1, {"PHLMmpSsCeR", "pager html"}, false);
         for (const programs::Opt& o : s.opts) {
           if (OneOf(o.name, {"-P", "--pager", "-H", "--html"}) && o.has_value) {
             c.Code(programs::OptWord(o), "man --pager");
           }
         }
         c.Add(R::kReadOnly, "only shows manual pages");
       })},
      // Read-only tools.
      {"ls dir vdir ll la cat tac nl head tail less more most pg grep egrep fgrep zgrep zegrep "
       "zfgrep ag ack ugrep locate plocate mlocate which whereis file stat wc cut tr paste join "
       "comm diff diff3 cmp sdiff colordiff column fold fmt pr expand unexpand rev od hexdump "
       "hd strings base32 base64 basenc md5sum sha1sum sha224sum sha256sum sha384sum sha512sum "
       "b2sum cksum sum shasum md5 pwd cal whoami id groups users who w last lastlog uname "
       "arch nproc lscpu lsblk lsusb lspci lsmod blkid df du free uptime vmstat iostat mpstat "
       "top htop btop atop ps pstree pgrep pidof lsof ss netstat printenv locale getconf tty "
       "stty tput clear reset seq sleep yes expr bc dc factor numfmt jq gron tree exa eza lsd "
       "bat batcat highlight pygmentize info apropos whatis tldr realpath readlink "
       "basename dirname pathchk namei getent ldd nm objdump readelf size otool c++filt "
       "addr2line shellcheck hadolint cloc tokei scc tsort look zcat bzcat xzcat zstdcat zless "
       "zmore lz4cat journalctl dmesg findmnt lslocks ipcs sw_vers system_profiler nvidia-smi "
       "vm_stat mdfind mdls xmllint tig diffstat wdiff pv flake8 pylint mypy pyright pyflakes "
       "pycodestyle bandit semgrep staticcheck cppcheck golangci-lint route iconv envsubst "
       "cowsay figlet lolcat sha3sum tabs",
       S(R::kReadOnly, "only reads")},
  };
}

const absl::flat_hash_map<absl::string_view, programs::ProgramEntry>& Table() {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<absl::string_view, programs::ProgramEntry>();
    for (auto family : {programs::PrivilegePrograms, programs::WrapperPrograms,
                        programs::ShellPrograms, programs::GitPrograms, programs::PackagePrograms,
                        programs::SystemPackagePrograms, programs::NetworkPrograms,
                        programs::SystemPrograms, programs::TextPrograms, GenericPrograms}) {
      for (const programs::ProgramGroup& g : family()) {
        for (absl::string_view name : absl::StrSplit(g.names, ' ', absl::SkipEmpty())) {
          t->emplace(name, g.entry);
        }
      }
    }
    return t;
  }();
  return *table;
}

}  // namespace

void ClassifyProgram(absl::string_view name, absl::Span<const ShellWord> argv, ProgramSink& sink) {
  programs::Call call{name, argv, sink};
  const auto& table = Table();
  auto it = table.find(name);
  if (it == table.end()) {
    // Versioned names: python3.12, pip3.11, mkfs.ext4.
    if (absl::StartsWith(name, "python") || absl::StartsWith(name, "pypy")) {
      return programs::Interpreter(call);
    }
    if (absl::StartsWith(name, "pip")) return programs::PipProgram(call);
    if (absl::StartsWith(name, "mkfs")) return programs::DestroysDisks(call);
    call.Add(R::kUnknownProgram, "is not a program this policy knows");
    return;
  }
  if (it->second.fn != nullptr) {
    it->second.fn(call);
  } else {
    call.Add(it->second.rule, it->second.what);
  }
}

}  // namespace ccsandbox::policy
