#include "policy/seatbelt/seatbelt_profile.h"

#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "policy/mode.h"
#include "policy/plan/deny_sets.h"
#include "policy/plan/path_spellings.h"
#include "policy/plan/trusted_names.h"
#include "policy/seatbelt/sbpl.h"

namespace ccsandbox::policy::seatbelt {
namespace {

// What every shell writes to whatever the policy: the null device, terminals, dtrace's helper.
constexpr const char* kDeviceLiterals[] = {"/dev/null", "/dev/zero", "/dev/tty",
                                           "/dev/dtracehelper"};
constexpr const char* kDeviceSubpaths[] = {"/dev/fd"};
constexpr const char* kDeviceRegexes[] = {"^/dev/ttys[0-9]+$"};
// macOS resolves names through mDNSResponder's socket, the one Unix socket a run may reach.
constexpr const char* kDnsSocket = "/private/var/run/mDNSResponder";

// A glob with its glob-free parent directory resolved (/etc/ssh/x_* -> /private/etc/ssh/x_*),
// or nullopt: the kernel matches the resolved path and a rule against /etc never fires on macOS.
std::optional<std::string> ResolvedGlob(const std::string& path, const PathResolver& resolver) {
  if (!IsGlob(path)) return std::nullopt;
  const size_t slash = path.rfind('/', path.find_first_of("*?"));
  if (slash == std::string::npos || slash == 0) return std::nullopt;
  std::optional<std::string> parent = resolver.Resolve(path.substr(0, slash));
  if (!parent.has_value() || *parent == path.substr(0, slash)) return std::nullopt;
  return absl::StrCat(*parent, path.substr(slash));
}

// Every spelling of every path (path_spellings.h), a glob's resolved parent included.
std::vector<std::string> AllPathSpellings(const std::vector<std::string>& paths,
                                          const PathResolver& resolver) {
  std::vector<std::string> expanded;
  for (const std::string& path : paths) {
    expanded.push_back(path);
    if (std::optional<std::string> glob = ResolvedGlob(path, resolver)) expanded.push_back(*glob);
  }
  return AllSpellings(expanded, resolver);
}

// The strict ancestors of an absolute path's glob-free part, "/" excluded.
std::vector<std::string> Ancestors(const std::string& path) {
  std::string dir = path.substr(0, IsGlob(path) ? path.find_first_of("*?") : path.size());
  std::vector<std::string> out;
  for (size_t slash = dir.rfind('/'); slash != std::string::npos && slash > 0;
       slash = dir.rfind('/', slash - 1)) {
    out.push_back(dir.substr(0, slash));
  }
  return out;
}

// The profile's text, one rule a line; every string goes through SbplString.
class ProfileText {
 public:
  void Comment(absl::string_view fixed_text) { absl::StrAppend(&text_, ";; ", fixed_text, "\n"); }
  void Line(absl::string_view form) { absl::StrAppend(&text_, form, "\n"); }

  // (ACTION OP (KIND "value"))
  void Rule(absl::string_view action, absl::string_view op, absl::string_view kind,
            absl::string_view value) {
    Form(action, op, Filter(kind, value));
  }
  // A path and everything beneath it: (subpath ...) or, for a glob, an anchored regex.
  void PathRule(absl::string_view action, absl::string_view op, const std::string& path) {
    if (!IsGlob(path)) return Rule(action, op, "subpath", path);
    absl::StatusOr<std::string> re = PathGlobRegex(path);
    if (!re.ok()) return Fail(re.status());
    Rule(action, op, "regex", *re);
  }
  void RegexRule(absl::string_view action, absl::string_view op,
                 const absl::StatusOr<std::string>& re) {
    if (!re.ok()) return Fail(re.status());
    Rule(action, op, "regex", *re);
  }
  void Form(absl::string_view action, absl::string_view op, absl::string_view filter) {
    if (!status_.ok()) return;
    absl::StrAppend(&text_, "(", action, " ", op, " ", filter, ")\n");
  }
  std::string Filter(absl::string_view kind, absl::string_view value) {
    absl::StatusOr<std::string> quoted = SbplString(value);
    if (!quoted.ok()) {
      Fail(quoted.status());
      return "";
    }
    return absl::StrCat("(", kind, " ", *quoted, ")");
  }
  void Fail(const absl::Status& status) {
    if (status_.ok()) status_ = status;
  }
  absl::StatusOr<std::string> Finish() {
    if (!status_.ok()) return status_;
    return text_;
  }

 private:
  std::string text_;
  absl::Status status_;
};

void Preamble(ProfileText& p, absl::string_view kind) {
  p.Line("(version 1)");
  p.Comment(absl::StrCat("ccsandbox Seatbelt profile: ", kind,
                         ". Generated from the spec; later rules win."));
  p.Line("(allow default)");
}

void AllowWrites(ProfileText& p, const std::vector<std::string>& writable) {
  p.Comment("2. writes: none, then the writable subpaths and the terminal devices");
  p.Line("(deny file-write*)");
  for (const std::string& path : writable) p.Rule("allow", "file-write*", "subpath", path);
  for (const char* device : kDeviceLiterals) p.Rule("allow", "file-write*", "literal", device);
  for (const char* device : kDeviceSubpaths) p.Rule("allow", "file-write*", "subpath", device);
  for (const char* device : kDeviceRegexes) p.Rule("allow", "file-write*", "regex", device);
}

// Renames of a directory on the way to a denied path: each literal ancestor, and each
// directory a rule's regex ancestor matches.
void DenyAncestorUnlinks(ProfileText& p, const std::vector<std::string>& denied,
                         const std::vector<std::string>& regex_ancestors) {
  p.Comment("4. no rename or removal of a denied path's ancestors");
  std::set<std::string> seen;
  for (const std::string& path : denied) {
    for (const std::string& dir : Ancestors(path)) {
      if (seen.insert(dir).second) p.Rule("deny", "file-write-unlink", "literal", dir);
    }
  }
  for (const std::string& re : regex_ancestors) {
    if (!seen.insert(re).second) continue;
    p.Form("deny", "file-write-unlink",
           absl::StrCat("(require-all ", p.Filter("regex", re), " (vnode-type DIRECTORY))"));
  }
}

std::vector<std::string> HomeSecrets(const std::vector<std::string>& homes) {
  std::vector<std::string> out;
  for (const std::string& home : homes) {
    for (const std::string& rel : HomeSecretPaths()) out.push_back(absl::StrCat(home, "/", rel));
  }
  return out;
}

// Sections 1 to 4, the file system: what a dispatch and a terminal share.
void RenderFileSections(ProfileText& p, const SeatbeltInputs& in, const PathResolver& resolver) {
  const std::vector<std::string> home_secrets =
      AllPathSpellings(HomeSecrets(in.home_dirs), resolver);
  const std::vector<std::string> system_secrets = AllPathSpellings(SystemSecretPaths(), resolver);
  std::vector<std::string> regex_ancestors;

  p.Comment("1. reads: the secrets, by name at any depth, under each home, of the system");
  for (const std::string& name : SecretNames()) {
    p.RegexRule("deny", "file-read*", TrustedRuleRegex(absl::StrCat(name, "/**")));
  }
  for (const std::string& path : home_secrets) p.PathRule("deny", "file-read*", path);
  for (const std::string& path : system_secrets) p.PathRule("deny", "file-read*", path);

  AllowWrites(p, AllPathSpellings(in.writable, resolver));

  p.Comment("3. writes denied again inside the writable subpaths: the mandatory set at any depth,");
  p.Comment("   home trusted paths, protected paths, filename patterns, secrets");
  auto add_ancestors = [&](const std::string& rule, absl::string_view anchor) {
    absl::StatusOr<std::vector<std::string>> up = TrustedRuleAncestorRegexes(rule, anchor);
    if (!up.ok()) return p.Fail(up.status());
    regex_ancestors.insert(regex_ancestors.end(), up->begin(), up->end());
  };
  for (const TrustedName& name : StandardTrustedNames()) {
    absl::StatusOr<std::string> re = TrustedRuleRegex(name.rule);
    if (name.unless == nullptr || !re.ok()) {
      p.RegexRule("deny", "file-write*", re);
    } else {
      absl::StatusOr<std::string> unless = TrustedRuleRegex(name.unless);
      if (!unless.ok()) return p.Fail(unless.status());
      p.Form("deny", "file-write*",
             absl::StrCat("(require-all ", p.Filter("regex", *re), " (require-not ",
                          p.Filter("regex", *unless), "))"));
    }
    add_ancestors(name.rule, "");
  }
  for (const std::string& rule : in.extra_trusted_rules) {
    p.RegexRule("deny", "file-write*", TrustedRuleRegex(rule));
    add_ancestors(rule, "");
  }
  std::vector<std::string> denied_paths = home_secrets;
  for (const std::string& home : AllPathSpellings(in.home_dirs, resolver)) {
    const std::string anchor = absl::StrCat("^", RegexLiteral(home));
    for (const TrustedName& path : HomeTrustedPaths()) {
      const std::string rule = absl::StrCat(path.rule, "/**");
      p.RegexRule("deny", "file-write*", TrustedRuleRegex(rule, anchor));
      add_ancestors(rule, anchor);
    }
  }
  const std::vector<std::string> protected_paths = AllPathSpellings(in.protected_paths, resolver);
  for (const std::string& path : protected_paths) p.PathRule("deny", "file-write*", path);
  denied_paths.insert(denied_paths.end(), protected_paths.begin(), protected_paths.end());
  for (const std::string& pattern : in.filename_patterns) {
    absl::StatusOr<std::string> name = NameGlobRegex(pattern);
    if (!name.ok()) return p.Fail(name.status());
    p.Rule("deny", "file-write*", "regex", absl::StrCat("(^|/)", *name, "$"));
  }
  for (const std::string& path : home_secrets) p.PathRule("deny", "file-write*", path);
  for (const std::string& path : system_secrets) p.PathRule("deny", "file-write*", path);
  denied_paths.insert(denied_paths.end(), system_secrets.begin(), system_secrets.end());

  DenyAncestorUnlinks(p, denied_paths, regex_ancestors);
}

}  // namespace

const std::vector<std::string>& DangerousBinaries() {
  static const auto* binaries = new std::vector<std::string>{
      "/usr/bin/sudo",          // root, with a cached credential
      "/usr/bin/su",            // another user
      "/usr/bin/login",         // another user
      "/usr/bin/security",      // reads and changes the keychains
      "/usr/bin/osascript",     // drives other, unsandboxed applications (Terminal, Finder)
      "/bin/launchctl",         // starts jobs outside the sandbox
      "/usr/bin/open",          // asks LaunchServices to start an app outside the sandbox
      "/usr/sbin/sysadminctl",  // user accounts
      "/usr/bin/dscl",          // directory services (accounts, groups)
      "/usr/bin/tccutil",       // privacy permissions
      "/usr/bin/csrutil",       // System Integrity Protection
      "/usr/sbin/spctl",        // Gatekeeper
      "/usr/sbin/systemsetup",  // system settings
  };
  return *binaries;
}

absl::StatusOr<SeatbeltInputs> DispatchInputs(const v1::SandboxSpec& spec,
                                              const std::vector<std::string>& home_dirs,
                                              const std::vector<std::string>& temp_dirs,
                                              const std::vector<ProxyPort>& proxy_ports) {
  absl::StatusOr<Mode> mode = ParseMode(spec.mode());
  if (!mode.ok()) return mode.status();
  SeatbeltInputs in;
  in.home_dirs = home_dirs;
  if (!ModeIsReadOnly(*mode)) {
    for (const v1::SandboxBindMount& bind : spec.bind_mounts()) {
      if (!bind.read_only()) in.writable.push_back(bind.host_path());
    }
  }
  in.writable.insert(in.writable.end(), spec.runner_state_dirs().begin(),
                     spec.runner_state_dirs().end());
  in.writable.insert(in.writable.end(), temp_dirs.begin(), temp_dirs.end());
  in.protected_paths.assign(spec.protected_paths().begin(), spec.protected_paths().end());
  in.exec_grant_roots.assign(spec.exec_grant_roots().begin(), spec.exec_grant_roots().end());
  in.extra_trusted_rules.assign(spec.deny_write_names().begin(), spec.deny_write_names().end());
  in.filename_patterns = EffectiveFilenameDenyPatterns(spec);
  in.proxy_ports = proxy_ports;
  in.network_enabled = !spec.has_network_enabled() || spec.network_enabled();
  return in;
}

absl::StatusOr<std::string> RenderDispatchProfile(const SeatbeltInputs& in,
                                                  const PathResolver& resolver) {
  ProfileText p;
  Preamble(p, "dispatch");
  RenderFileSections(p, in, resolver);

  p.Comment("5. exec: nothing under a writable subpath except under execGrantRoots; never the");
  p.Comment("   always-dangerous binaries");
  for (const std::string& path : AllPathSpellings(in.writable, resolver)) {
    p.Rule("deny", "process-exec", "subpath", path);
  }
  for (const std::string& path : AllPathSpellings(in.exec_grant_roots, resolver)) {
    p.Rule("allow", "process-exec", "subpath", path);
  }
  for (const std::string& path : DangerousBinaries()) {
    p.Rule("deny", "process-exec", "literal", path);
  }

  p.Comment("6. network: the session's proxies on localhost and DNS, nothing else");
  if (!in.network_enabled) {
    p.Comment("   networkEnabled is false: the proxies refuse every connection");
  }
  p.Line("(deny network-outbound)");
  for (const ProxyPort& proxy : in.proxy_ports) {
    const std::string port =
        proxy.port > 0 ? std::to_string(proxy.port) : absl::StrCat("<", proxy.name, " PORT>");
    p.Form("allow", "network-outbound",
           absl::StrCat("(remote ip ", *SbplString(absl::StrCat("localhost:", port)), ")"));
  }
  p.Rule("allow", "network-outbound", "literal", kDnsSocket);
  return p.Finish();
}

absl::StatusOr<std::string> RenderTerminalProfile(const std::string& home,
                                                  const std::string& workdir,
                                                  const std::vector<std::string>& temp_dirs,
                                                  const PathResolver& resolver) {
  ProfileText p;
  Preamble(p, "terminal");
  SeatbeltInputs in;
  in.home_dirs = {home};
  in.writable = {home, workdir};
  in.writable.insert(in.writable.end(), temp_dirs.begin(), temp_dirs.end());
  RenderFileSections(p, in, resolver);
  p.Comment("5. exec and 6. network: open (a person's shell, not an agent run)");
  return p.Finish();
}

}  // namespace ccsandbox::policy::seatbelt
