// The Seatbelt profiles of a matrix of specs, byte for byte against testdata/*.sb (reviewed by
// eye), and read back as S-expressions: rule order (later rules win), no path able to add a rule
// or widen a regex. Regenerate the goldens after a reviewed change with (one line)
//   CCSANDBOX_UPDATE_GOLDENS=$PWD/policy/seatbelt/testdata
//   bazel run //policy/seatbelt:seatbelt_profile_test
#include "policy/seatbelt/seatbelt_profile.h"

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "policy/seatbelt/macos_spellings.h"
#include "policy/seatbelt/sbpl.h"
#include "policy/seatbelt/sexpr_reader.h"

namespace ccsandbox::policy::seatbelt {
namespace {

const std::vector<std::string> kHomes = {"/Users/a"};
const std::vector<std::string> kTemp = {"/var/folders/xy/T/ccsandbox-run"};
const std::vector<ProxyPort> kPorts = {{"HTTP PROXY", 40001}, {"SOCKS PROXY", 40002}};

// Hostile names: quotes, parentheses, backslashes and regex metacharacters.
const char kHostileBind[] = "/tmp/h/a\"b) (allow file-write* (subpath \"/";
const char kHostileProtected[] = "/tmp/h/p(x)\\y\"z";
const char kHostileGlob[] = "/tmp/h/r.e+g$^|{1}*";
const char kHostileRunner[] = "/Users/a/st\\\\ate (x) [y]";
const char kHostileGrant[] = "/Users/a/g\") (allow process-exec (subpath \"/";
const char kHostileName[] = "we\"ird(x)|y+z.\\*";
const char kHostilePattern[] = "a(b)|c$.p\"m";

v1::SandboxSpec BaseSpec(const std::string& mode) {
  v1::SandboxSpec spec;
  spec.set_session_id("s1");
  spec.set_mode(mode);
  auto* work = spec.add_bind_mounts();
  work->set_host_path("/Users/a/work");
  work->set_guest_path("/Users/a/work");
  auto* repos = spec.add_bind_mounts();
  repos->set_host_path("/tmp/conv/repos");
  repos->set_guest_path("/tmp/conv/repos");
  auto* config = spec.add_bind_mounts();
  config->set_host_path("/Users/a/agent-config");
  config->set_guest_path("/Users/a/agent-config");
  config->set_read_only(true);
  spec.add_runner_state_dirs("/Users/a/.cc/runner");
  spec.add_protected_paths("/tmp/checkouts/main");
  spec.add_protected_paths("/Users/a/src/app");
  return spec;
}

struct Case {
  std::string name;
  v1::SandboxSpec spec;
};

v1::SandboxSpec HostileSpec() {
  v1::SandboxSpec spec = BaseSpec("chat");
  auto* bind = spec.add_bind_mounts();
  bind->set_host_path(kHostileBind);
  spec.add_protected_paths(kHostileProtected);
  spec.add_protected_paths(kHostileGlob);
  spec.add_runner_state_dirs(kHostileRunner);
  spec.add_exec_grant_roots(kHostileGrant);
  spec.add_deny_write_names(kHostileName);
  spec.mutable_write_deny_patterns()->add_patterns(kHostilePattern);
  return spec;
}

std::vector<Case> Matrix() {
  std::vector<Case> cases;
  for (const char* mode : {"chat", "review", "plan", "orchestrate"}) {
    cases.push_back({absl::StrCat("mode_", mode), BaseSpec(mode)});
  }
  Case grants{"exec_grant_roots", BaseSpec("chat")};
  grants.spec.add_exec_grant_roots("/Users/a/work/tools");
  grants.spec.add_exec_grant_roots("/var/folders/xy/T/approved");
  cases.push_back(grants);
  Case symlinked{"protected_under_tmp_symlinks", BaseSpec("chat")};
  symlinked.spec.add_protected_paths("/var/folders/xy/T/clone/repo");
  symlinked.spec.add_protected_paths("/tmp/globbed/*/checkout");
  symlinked.spec.add_protected_paths("/private/tmp/already-resolved");
  cases.push_back(symlinked);
  Case off{"network_off", BaseSpec("chat")};
  off.spec.set_network_enabled(false);
  cases.push_back(off);
  Case optout{"filename_patterns_opted_out", BaseSpec("chat")};
  optout.spec.mutable_write_deny_patterns();
  cases.push_back(optout);
  cases.push_back({"hostile_names", HostileSpec()});
  return cases;
}

std::string Render(const v1::SandboxSpec& spec) {
  absl::StatusOr<SeatbeltInputs> in = DispatchInputs(spec, kHomes, kTemp, kPorts);
  EXPECT_TRUE(in.ok()) << in.status();
  if (!in.ok()) return "";
  absl::StatusOr<std::string> profile = RenderDispatchProfile(*in, MacosSpellings());
  EXPECT_TRUE(profile.ok()) << profile.status();
  return profile.ok() ? *profile : "";
}

std::string RenderTerminal() {
  absl::StatusOr<std::string> profile =
      RenderTerminalProfile("/Users/a", "/tmp/project", kTemp, MacosSpellings());
  EXPECT_TRUE(profile.ok()) << profile.status();
  return profile.ok() ? *profile : "";
}

void CheckGolden(const std::string& name, const std::string& actual) {
  const std::string file = name + ".sb";
  if (const char* update = std::getenv("CCSANDBOX_UPDATE_GOLDENS"); update != nullptr) {
    std::ofstream(absl::StrCat(update, "/", file), std::ios::binary) << actual;
  }
  const std::string path =
      absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                   "/policy/seatbelt/testdata/", file);
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "no golden " << path;
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(golden.str(), actual) << name << ": the profile changed; review it and regenerate";
}

TEST(SeatbeltGolden, EverySpecOfTheMatrixRendersItsGolden) {
  for (const Case& c : Matrix()) CheckGolden(c.name, Render(c.spec));
}

TEST(SeatbeltGolden, TheTerminalProfileRendersItsGolden) {
  CheckGolden("terminal", RenderTerminal());
}

// --- Structure ---

std::vector<Sexpr> Forms(const std::string& profile) {
  absl::StatusOr<std::vector<Sexpr>> forms = ReadSexprs(profile);
  EXPECT_TRUE(forms.ok()) << forms.status();
  return forms.ok() ? *forms : std::vector<Sexpr>{};
}

std::string Op(const Sexpr& form) { return form.items.size() > 1 ? form.items[1].text : ""; }
std::string Action(const Sexpr& form) { return form.items.empty() ? "" : form.items[0].text; }
// The filter's kind ("subpath", "regex", "require-all", "" for none).
std::string FilterKind(const Sexpr& form) {
  if (form.items.size() < 3) return "";
  return form.items[2].items.empty() ? "" : form.items[2].items[0].text;
}

// Every string under `e` with the kind of filter that holds it.
void Strings(const Sexpr& e, const std::string& kind,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (e.kind == Sexpr::Kind::kString) out.push_back({kind, e.text});
  if (e.kind != Sexpr::Kind::kList) return;
  const std::string head =
      !e.items.empty() && e.items[0].kind == Sexpr::Kind::kAtom ? e.items[0].text : kind;
  for (const Sexpr& item : e.items) Strings(item, head, out);
}

void CheckStructure(const std::string& name, const std::string& profile) {
  SCOPED_TRACE(name);
  // One complete form per line: a string cannot end a form early or start another.
  for (absl::string_view line : absl::StrSplit(profile, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, ";;")) continue;
    absl::StatusOr<std::vector<Sexpr>> forms = ReadSexprs(line);
    ASSERT_TRUE(forms.ok()) << forms.status() << ": " << line;
    EXPECT_EQ(forms->size(), 1u) << line;
  }
  const std::vector<Sexpr> forms = Forms(profile);
  ASSERT_GE(forms.size(), 3u);
  EXPECT_EQ(forms[0].Shape(), "(version 1)");
  EXPECT_EQ(forms[1].Shape(), "(allow default)");
  int write_reset = -1, last_write_allow = -1, first_write_deny = -1;
  int last_exec_writable = -1, first_exec_grant = -1, last_exec_grant = -1, first_dangerous = -1;
  int net_reset = -1, first_net_allow = -1;
  for (size_t i = 2; i < forms.size(); ++i) {
    const Sexpr& f = forms[i];
    const std::string action = Action(f), op = Op(f), shape = f.Shape();
    ASSERT_TRUE(action == "allow" || action == "deny") << shape;
    ASSERT_LE(f.items.size(), 3u) << "one filter a rule: " << shape;
    const int at = static_cast<int>(i);
    if (shape == "(deny file-write*)") write_reset = at;
    if (action == "allow" && op == "file-write*") last_write_allow = at;
    if (action == "deny" && op == "file-write*" && f.items.size() == 3 && first_write_deny < 0) {
      first_write_deny = at;
    }
    if (action == "deny" && op == "process-exec" && FilterKind(f) == "subpath") {
      last_exec_writable = at;
    }
    if (action == "allow" && op == "process-exec") {
      if (first_exec_grant < 0) first_exec_grant = at;
      last_exec_grant = at;
    }
    if (action == "deny" && op == "process-exec" && FilterKind(f) == "literal" &&
        first_dangerous < 0) {
      first_dangerous = at;
    }
    if (shape == "(deny network-outbound)") net_reset = at;
    if (action == "allow" && op == "network-outbound" && first_net_allow < 0) first_net_allow = at;
    // The only things ever allowed: writes, a granted exec, the proxies and DNS.
    if (action == "allow") {
      EXPECT_TRUE(op == "file-write*" || op == "process-exec" || op == "network-outbound") << shape;
    }
    // Every regex is well formed, every path absolute (or a placeholder).
    std::vector<std::pair<std::string, std::string>> strings;
    Strings(f, "", strings);
    for (const auto& [kind, text] : strings) {
      if (kind == "regex") {
        EXPECT_NO_THROW(std::regex(text, std::regex::extended)) << text;
      } else if (kind == "literal" || kind == "subpath") {
        EXPECT_TRUE(absl::StartsWith(text, "/")) << shape << " " << text;
      }
    }
  }
  // Deny after allow: the reset, then the allows, then every narrowing deny.
  ASSERT_GE(write_reset, 0);
  EXPECT_LT(write_reset, last_write_allow);
  EXPECT_LT(last_write_allow, first_write_deny);
  if (first_exec_grant >= 0) {
    EXPECT_LT(last_exec_writable, first_exec_grant);
    EXPECT_LT(last_exec_grant, first_dangerous);
  }
  if (net_reset >= 0) {
    EXPECT_LT(net_reset, first_net_allow);
  }
}

TEST(SeatbeltStructure, EveryProfileReadsBackInRuleOrder) {
  for (const Case& c : Matrix()) CheckStructure(c.name, Render(c.spec));
  CheckStructure("terminal", RenderTerminal());
}

// Whether a filter matches `path` (vnode-type taken as matching: every path here is one).
bool Eval(const Sexpr& filter, const std::string& path) {
  const std::string& kind = filter.items[0].text;
  if (kind == "regex") {
    return std::regex_search(path, std::regex(filter.items[1].text, std::regex::extended));
  }
  if (kind == "require-not") return !Eval(filter.items[1], path);
  if (kind == "require-all") {
    for (size_t i = 1; i < filter.items.size(); ++i) {
      if (!Eval(filter.items[i], path)) return false;
    }
    return true;
  }
  return kind == "vnode-type";
}

// Whether a regex rule denies `op` on `path`.
bool Matches(const std::string& profile, const std::string& op, const std::string& path) {
  for (const Sexpr& f : Forms(profile)) {
    if (Op(f) != op || Action(f) != "deny") continue;
    const std::string kind = FilterKind(f);
    if ((kind == "regex" || kind == "require-all") && Eval(f.items[2], path)) return true;
  }
  return false;
}

// The decoded string of every filter of `kind` in rules of `action` `op`.
std::vector<std::string> Values(const std::string& profile, const std::string& action,
                                const std::string& op, const std::string& kind) {
  std::vector<std::string> out;
  for (const Sexpr& f : Forms(profile)) {
    if (Action(f) == action && Op(f) == op && FilterKind(f) == kind) {
      out.push_back(f.items[2].items[1].text);
    }
  }
  return out;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(SeatbeltStructure, AHostilePathIsOneStringAndAddsNoRule) {
  const std::string profile = Render(HostileSpec());
  EXPECT_TRUE(Has(Values(profile, "allow", "file-write*", "subpath"), kHostileBind));
  EXPECT_TRUE(Has(Values(profile, "allow", "file-write*", "subpath"), kHostileRunner));
  EXPECT_TRUE(Has(Values(profile, "deny", "file-write*", "subpath"), kHostileProtected));
  EXPECT_TRUE(Has(Values(profile, "deny", "file-write*", "subpath"),
                  std::string("/private") + kHostileProtected));
  EXPECT_TRUE(Has(Values(profile, "allow", "process-exec", "subpath"), kHostileGrant));

  // The same spec with every hostile name spelled harmlessly has the same rules.
  auto tame = [](const std::string& path, bool keep_globs) {
    std::vector<std::string> parts = absl::StrSplit(path, '/');
    for (size_t i = 3; i < parts.size(); ++i) {
      std::string out;
      for (const char c : parts[i]) {
        out += keep_globs && (c == '*' || c == '?') ? std::string(1, c)
                                                    : absl::BytesToHexString(std::string(1, c));
      }
      parts[i] = out;
    }
    return absl::StrJoin(parts, "/");
  };
  v1::SandboxSpec twin = BaseSpec("chat");
  twin.add_bind_mounts()->set_host_path(tame(kHostileBind, false));
  twin.add_protected_paths(tame(kHostileProtected, false));
  twin.add_protected_paths(tame(kHostileGlob, true));
  twin.add_runner_state_dirs(tame(kHostileRunner, false));
  twin.add_exec_grant_roots(tame(kHostileGrant, false));
  twin.add_deny_write_names("x" + absl::BytesToHexString("we\"ird(x)|y+z.") + "\\*");
  twin.mutable_write_deny_patterns()->add_patterns(absl::BytesToHexString(kHostilePattern));
  const std::vector<Sexpr> hostile = Forms(profile), tamed = Forms(Render(twin));
  ASSERT_EQ(hostile.size(), tamed.size());
  for (size_t i = 0; i < hostile.size(); ++i) EXPECT_EQ(hostile[i].Shape(), tamed[i].Shape());
}

TEST(SeatbeltStructure, AHostileRegexMatchesExactlyWhatItNames) {
  const std::string profile = Render(HostileSpec());
  // The glob's '*' is the only wildcard; '.', '+', '$', '^', '|', '{1}' are literal.
  EXPECT_TRUE(Matches(profile, "file-write*", "/tmp/h/r.e+g$^|{1}"));
  EXPECT_TRUE(Matches(profile, "file-write*", "/private/tmp/h/r.e+g$^|{1}zz/beneath"));
  EXPECT_FALSE(Matches(profile, "file-write*", "/tmp/h/rXe+g$^|{1}zz"));
  EXPECT_FALSE(Matches(profile, "file-write*", "/tmp/h/ree+g$^|{1}zz"));
  EXPECT_FALSE(Matches(profile, "file-write*", "/tmp/h/r.eeg$^|{1}zz"));
  // The name rule: '\*' is a literal star, '|' no alternation, case folded.
  EXPECT_TRUE(Matches(profile, "file-write*", "/Users/a/work/WE\"IRD(x)|y+z.*"));
  EXPECT_FALSE(Matches(profile, "file-write*", "/Users/a/work/we\"ird(x)|y+z.a"));
  EXPECT_FALSE(Matches(profile, "file-write*", "/Users/a/work/y+z.*"));
  // The pattern: at any depth, nothing else.
  EXPECT_TRUE(Matches(profile, "file-write*", "/tmp/conv/repos/d/A(B)|C$.P\"M"));
  EXPECT_FALSE(Matches(profile, "file-write*", "/tmp/conv/repos/d/c$.p\"m"));
}

TEST(SeatbeltStructure, TheMandatorySetAndPatternsMatchAtAnyDepth) {
  const std::string profile = Render(BaseSpec("chat"));
  EXPECT_TRUE(Matches(profile, "file-write*", "/Users/a/work/.git/hooks"));
  EXPECT_TRUE(Matches(profile, "file-write*", "/Users/a/work/deep/er/.GIT/hooks/pre-commit"));
  EXPECT_FALSE(Matches(profile, "file-write*", "/Users/a/work/x.gitx/hooks/pre-commit"));
  EXPECT_TRUE(Matches(profile, "file-write*", "/Users/a/work/a/.git/modules/m/n/config"));
  EXPECT_TRUE(Matches(profile, "file-write*", "/tmp/conv/repos/r/.bashrc"));
  EXPECT_TRUE(Matches(profile, "file-write*", "/tmp/conv/repos/r/.env"));
  EXPECT_TRUE(Matches(profile, "file-write*", "/tmp/conv/repos/r/.env.local"));
  EXPECT_TRUE(Matches(profile, "file-write*", "/tmp/conv/repos/r/Server.PEM"));
  EXPECT_FALSE(Matches(profile, "file-write*", "/tmp/conv/repos/r/.envrc.txt"));
  EXPECT_FALSE(Matches(profile, "file-write*", "/tmp/conv/repos/r/main.c"));
  // HEAD is git's to write inside .git, nobody's elsewhere.
  EXPECT_TRUE(Matches(profile, "file-write*", "/Users/a/work/x/HEAD"));
  EXPECT_FALSE(Matches(profile, "file-write*", "/Users/a/work/.git/HEAD"));
  EXPECT_TRUE(Matches(profile, "file-read*", "/Users/a/work/sub/.ssh/id_ed25519"));
  EXPECT_TRUE(Matches(profile, "file-read*", "/private/etc/ssh/ssh_host_rsa_key"));
  // Renaming a directory on the way to a denied name is refused.
  bool ancestor = false;
  for (const Sexpr& f : Forms(profile)) {
    if (Op(f) == "file-write-unlink" && FilterKind(f) == "require-all") {
      const std::string re = f.items[2].items[1].items[1].text;
      ancestor |= std::regex_search("/Users/a/work/.git", std::regex(re, std::regex::extended));
    }
  }
  EXPECT_TRUE(ancestor);
  const std::vector<std::string> unlinks = Values(profile, "deny", "file-write-unlink", "literal");
  EXPECT_TRUE(Has(unlinks, "/tmp/checkouts"));
  EXPECT_TRUE(Has(unlinks, "/private/tmp/checkouts"));
  EXPECT_TRUE(Has(unlinks, "/Users/a/src"));
  EXPECT_TRUE(Has(unlinks, "/Users/a/.config"));
}

TEST(SeatbeltProfile, ReadOnlyModesWriteOnlyRunnerStateAndTemp) {
  for (const char* mode : {"review", "plan", "orchestrate"}) {
    const std::vector<std::string> allowed =
        Values(Render(BaseSpec(mode)), "allow", "file-write*", "subpath");
    EXPECT_FALSE(Has(allowed, "/Users/a/work")) << mode;
    EXPECT_FALSE(Has(allowed, "/tmp/conv/repos")) << mode;
    EXPECT_TRUE(Has(allowed, "/Users/a/.cc/runner")) << mode;
    EXPECT_TRUE(Has(allowed, "/private/var/folders/xy/T/ccsandbox-run")) << mode;
  }
  const std::vector<std::string> chat =
      Values(Render(BaseSpec("chat")), "allow", "file-write*", "subpath");
  EXPECT_TRUE(Has(chat, "/tmp/conv/repos"));
  EXPECT_TRUE(Has(chat, "/private/tmp/conv/repos"));
  EXPECT_FALSE(Has(chat, "/Users/a/agent-config"));
}

TEST(SeatbeltProfile, TheTerminalKeepsTheMandatorySetButNotThePatterns) {
  const std::string profile = RenderTerminal();
  EXPECT_TRUE(Matches(profile, "file-write*", "/Users/a/.bashrc"));
  EXPECT_TRUE(Matches(profile, "file-write*", "/tmp/project/.git/hooks/pre-commit"));
  EXPECT_TRUE(Matches(profile, "file-read*", "/tmp/project/sub/.aws/credentials"));
  EXPECT_FALSE(Matches(profile, "file-write*", "/tmp/project/.env"));
  EXPECT_TRUE(Values(profile, "deny", "process-exec", "subpath").empty());
  EXPECT_TRUE(Values(profile, "allow", "network-outbound", "literal").empty());
}

TEST(SeatbeltProfile, TheNetworkIsTheProxyPortsAndDns) {
  const std::string profile = Render(BaseSpec("chat"));
  int remotes = 0;
  for (const Sexpr& f : Forms(profile)) {
    if (Action(f) == "allow" && Op(f) == "network-outbound" && FilterKind(f) == "remote") {
      ++remotes;
      EXPECT_TRUE(absl::StartsWith(f.items[2].items[2].text, "localhost:4000")) << f.Shape();
    }
  }
  EXPECT_EQ(remotes, 2);
  EXPECT_EQ(Values(profile, "allow", "network-outbound", "literal"),
            std::vector<std::string>{"/private/var/run/mDNSResponder"});
}

TEST(SeatbeltProfile, UnspellablePathsAreRefused) {
  v1::SandboxSpec spec = BaseSpec("chat");
  spec.add_protected_paths("/tmp/new\nline");
  absl::StatusOr<SeatbeltInputs> in = DispatchInputs(spec, kHomes, kTemp, kPorts);
  ASSERT_TRUE(in.ok());
  absl::StatusOr<std::string> profile = RenderDispatchProfile(*in, MacosSpellings());
  EXPECT_EQ(profile.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(profile.status().message(), "control character"));

  v1::SandboxSpec punct = BaseSpec("chat");
  punct.mutable_write_deny_patterns()->add_patterns("*.[!.]");
  in = DispatchInputs(punct, kHomes, kTemp, kPorts);
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(RenderDispatchProfile(*in, MacosSpellings()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Sbpl, StringsAndRegexesEscapeEverythingThatMeansSomething) {
  EXPECT_EQ(*SbplString("a\"b\\c(d)"), "\"a\\\"b\\\\c(d)\"");
  EXPECT_EQ(RegexLiteral("a.b*c+d?e(f)[g]{h}^i$j|k\\l"),
            "a\\.b\\*c\\+d\\?e\\(f\\)\\[g]\\{h}\\^i\\$j\\|k\\\\l");
  EXPECT_EQ(*NameGlobRegex("*.pem"), "[^/]*\\.[pP][eE][mM]");
  EXPECT_EQ(*NameGlobRegex("[ab]?"), "[ABab][^/]");
  EXPECT_EQ(*TrustedRuleRegex(".git/hooks/**"), "(^|/)\\.[gG][iI][tT]/[hH][oO][oO][kK][sS](/.*)?$");
  EXPECT_EQ(*TrustedRuleRegex("a/**/b"), "(^|/)[aA]/(.*/)?[bB]$");
  EXPECT_FALSE(TrustedRuleRegex("/abs").ok());
}

TEST(MacosSpellings, TheFirmlinkedTopLevelDirectories) {
  MacosSpellings macos;
  EXPECT_EQ(*macos.Resolve("/tmp"), "/private/tmp");
  EXPECT_EQ(*macos.Resolve("/var/folders/x"), "/private/var/folders/x");
  EXPECT_EQ(*macos.Resolve("/etc/ssh"), "/private/etc/ssh");
  EXPECT_EQ(*macos.Resolve("/tmpx"), "/tmpx");
  EXPECT_EQ(*macos.Resolve("/Users/a"), "/Users/a");
  EXPECT_FALSE(macos.Resolve("<RUN TMPDIR>").has_value());
}

}  // namespace
}  // namespace ccsandbox::policy::seatbelt
