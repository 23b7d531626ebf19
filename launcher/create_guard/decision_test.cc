// The create guard's decision, route by route and outcome by outcome: one row per check of
// decision.h's order, with the facts the emulator would have gathered.
#include "launcher/create_guard/decision.h"

#include <fcntl.h>
#include <linux/fs.h>

#include <cctype>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "policy/plan/create_guard_plan.h"

namespace ccsandbox::launcher {
namespace {

using Action = CreateAction;
using Reason = CreateReason;

// Facts about a name at `guest` (a name in /work maps to /host/work).
NameFacts At(const std::string& guest, NameHolds holds = NameHolds::kNothing) {
  NameFacts facts;
  facts.name = guest.substr(guest.rfind('/') + 1);
  facts.guest_path = guest;
  facts.holds = holds;
  return facts;
}
NameFacts Free(const std::string& guest, NameHolds holds = NameHolds::kNothing) {
  NameFacts facts = At(guest, holds);
  facts.in_free_dir = true;
  return facts;
}
// A directory the supervisor could not name: only its last component is known.
NameFacts Unnamed(const std::string& name) {
  NameFacts facts;
  facts.name = name;
  return facts;
}
NameFacts TrailingSlash(const std::string& guest) {
  NameFacts facts = At(guest);
  facts.trailing_slash = true;
  return facts;
}
NameFacts InProc(const std::string& guest) {
  NameFacts facts = At(guest, NameHolds::kSymlink);
  facts.in_procfs = true;
  return facts;
}

CreateRequest Open(NameFacts name, int flags = O_CREAT | O_WRONLY, mode_t mode = 0666) {
  CreateRequest r;
  r.route = CreateRoute::kOpen;
  r.open_flags = flags;
  r.mode = mode;
  r.resolved = true;
  r.name = std::move(name);
  return r;
}
CreateRequest Make(CreateRoute route, NameFacts name, mode_t mode = 0755) {
  CreateRequest r;
  r.route = route;
  r.mode = mode;
  r.resolved = true;
  r.name = std::move(name);
  return r;
}
CreateRequest Link(NameFacts to, bool source_found = true) {
  CreateRequest r;
  r.route = CreateRoute::kLink;
  r.resolved = true;
  r.link_source_found = source_found;
  r.name = std::move(to);
  return r;
}
CreateRequest Rename(NameFacts from, NameFacts to, unsigned flags = 0) {
  CreateRequest r;
  r.route = CreateRoute::kRename;
  r.rename_flags = flags;
  r.resolved = true;
  r.name = std::move(to);
  r.source = std::move(from);
  return r;
}
CreateRequest Unresolved(CreateRequest r) {
  r.resolved = false;
  r.name = NameFacts();
  r.source = NameFacts();
  return r;
}

constexpr NameHolds kFile = NameHolds::kOtherFile;
constexpr NameHolds kDir = NameHolds::kDirectory;
constexpr NameHolds kLink = NameHolds::kSymlink;
constexpr NameHolds kUnknown = NameHolds::kUnknown;

struct Case {
  const char* what;
  CreateRequest request;
  Action action;
  Reason reason;
  std::string rule = "";    // kDeny, and kFail on an existing match
  std::string target = "";  // kDeny: the violation's target
  int error = 0;            // kFail
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.what; }

Case Kernel(const char* what, CreateRequest r, Reason reason) {
  return {what, std::move(r), Action::kKernel, reason};
}
Case Perform(const char* what, CreateRequest r) {
  return {what, std::move(r), Action::kPerform, Reason::kAllowed};
}
Case Fail(const char* what, CreateRequest r, Reason reason, int error, std::string rule = "") {
  return {what, std::move(r), Action::kFail, reason, std::move(rule), "", error};
}
Case Deny(const char* what, CreateRequest r, Reason reason, std::string rule, std::string target) {
  return {what, std::move(r), Action::kDeny, reason, std::move(rule), std::move(target), EACCES};
}
// EPERM and a violation naming the object (empty when it could not be named).
Case DenySetId(const char* what, CreateRequest r, std::string target) {
  return {
      what, std::move(r), Action::kDeny, Reason::kSetIdMode, "S_ISUID/S_ISGID", std::move(target),
      EPERM};
}
CreateRequest Chmod(NameFacts name, mode_t mode) {
  CreateRequest r;
  r.route = CreateRoute::kChmod;
  r.mode = mode;
  r.resolved = true;
  r.name = std::move(name);
  return r;
}

std::vector<Case> Cases() {
  const Reason kPattern = Reason::kFilenamePattern, kTrusted = Reason::kTrustedName,
               kProtected = Reason::kProtectedPath;
  return {
      // open, creat, openat with O_CREAT
      DenySetId("open setuid", Open(At("/work/u"), O_CREAT | O_WRONLY, 04755), "/host/work/u"),
      DenySetId("open setgid", Open(At("/work/g"), O_CREAT | O_WRONLY, 02755), "/host/work/g"),
      DenySetId("open setuid, unresolved", Unresolved(Open(At("/work/u"), O_CREAT, 04755)), ""),
      DenySetId("open setuid with O_PATH (as the baseline: EPERM)",
                Open(At("/work/u"), O_CREAT | O_PATH, 04755), "/host/work/u"),
      Kernel("open O_PATH", Open(At("/work/x.pem"), O_CREAT | O_PATH), Reason::kOpenPath),
      Kernel("open unresolved", Unresolved(Open(At("/work/x.pem"))), Reason::kUnresolved),
      Kernel("open magic link in /proc", Open(InProc("/proc/7/fd/1")), Reason::kProcfs),
      Kernel("open in a free dir", Open(Free("/tmp/x.pem")), Reason::kFreeDir),
      DenySetId("open setuid in a free dir", Open(Free("/tmp/t"), O_CREAT | O_WRONLY, 04755),
                "/tmp/t"),
      DenySetId("open O_TMPFILE setgid", Open(At("/work"), O_TMPFILE | O_RDWR, 02600),
                "/host/work"),
      Kernel("open an existing match", Open(At("/work/.env", kFile)), Reason::kNameExists),
      Kernel("open a name it cannot look at", Open(At("/work/.env", kUnknown)),
             Reason::kNameExists),
      Kernel("open name/", Open(TrailingSlash("/work/x.pem")), Reason::kTrailingSlash),
      Deny("open .env", Open(At("/work/.env")), kPattern, ".env", "/host/work/.env"),
      Deny("open with O_EXCL", Open(At("/work/sub/x.pem"), O_CREAT | O_EXCL), kPattern, "*.pem",
           "/host/work/sub/x.pem"),
      Deny("open, case folded", Open(At("/work/rel.PEM")), kPattern, "*.pem", "/host/work/rel.PEM"),
      Deny("open .bashrc", Open(At("/work/.bashrc")), kTrusted, ".bashrc", "/host/work/.bashrc"),
      Deny("open a git hook", Open(At("/work/r/.git/hooks/pre-commit")), kTrusted, ".git/hooks/**",
           "/host/work/r/.git/hooks/pre-commit"),
      Deny("open beneath a protected path", Open(At("/home/u/bin/tool")), kProtected, "/home/u/bin",
           "/host/home/bin/tool"),
      Deny("open a protected path in a state dir", Open(At("/work/state/keep")), kProtected,
           "/work/state/keep", "/host/state/keep"),
      Deny("open a pattern in a state dir", Open(At("/work/state/x.key")), kPattern, "*.key",
           "/host/state/x.key"),
      Perform("open a trusted name in a state dir", Open(At("/work/state/.bashrc"))),
      Deny("open in a directory it cannot name", Open(Unnamed("ok.txt")), Reason::kUnnamedDirectory,
           "(a directory the supervisor cannot name)", "ok.txt"),
      Deny("open outside every mount", Open(At("/opt/x.pem")), kPattern, "*.pem", "/opt/x.pem"),
      Perform("open ok.txt", Open(At("/work/ok.txt"))),
      Perform("creat ok.txt", Open(At("/work/ok.txt"), O_CREAT | O_WRONLY | O_TRUNC)),

      // mkdir
      Kernel("mkdir unresolved", Unresolved(Make(CreateRoute::kMkdir, At("/work/d.pem"))),
             Reason::kUnresolved),
      Kernel("mkdir in a free dir", Make(CreateRoute::kMkdir, Free("/tmp/d.key")),
             Reason::kFreeDir),
      Deny("mkdir keys.pem", Make(CreateRoute::kMkdir, At("/work/keys.pem")), kPattern, "*.pem",
           "/host/work/keys.pem"),
      Fail("mkdir an existing match", Make(CreateRoute::kMkdir, At("/work/e.pem", kDir)),
           Reason::kExistsAndMatches, EEXIST, "*.pem"),
      Deny("mkdir where it cannot look", Make(CreateRoute::kMkdir, At("/work/e.pem", kUnknown)),
           kPattern, "*.pem", "/host/work/e.pem"),
      Deny("mkdir .git/hooks", Make(CreateRoute::kMkdir, At("/work/r/.git/hooks")), kTrusted,
           ".git/hooks/**", "/host/work/r/.git/hooks"),
      Deny("mkdir a protected path", Make(CreateRoute::kMkdir, At("/home/u/bin")), kProtected,
           "/home/u/bin", "/host/home/bin"),
      Perform("mkdir above a protected path", Make(CreateRoute::kMkdir, At("/home/u/new"))),
      Deny("mkdir a new match of a glob protected path",
           Make(CreateRoute::kMkdir, At("/work/out/build-x")), kProtected, "/work/out/build-*",
           "/host/work/out/build-x"),
      Deny("open beneath a match of a glob protected path", Open(At("/work/out/build-y/o")),
           kProtected, "/work/out/build-*", "/host/work/out/build-y/o"),
      Perform("mkdir a name the glob does not match",
              Make(CreateRoute::kMkdir, At("/work/out/builds"))),
      Deny("rename a directory to where a glob protected path's matches would be",
           Rename(At("/work/d", kDir), At("/work/out")), kProtected, "/work/out/build-*",
           "/host/work/out"),
      Perform("mkdir .config (empty: nothing beneath)",
              Make(CreateRoute::kMkdir, At("/work/.config"))),
      Perform("mkdir with set-id bits (the kernel drops them)",
              Make(CreateRoute::kMkdir, At("/work/d"), 06755)),
      Perform("mkdir d", Make(CreateRoute::kMkdir, At("/work/d"))),

      // mknod (FIFOs, sockets, files, devices)
      DenySetId("mknod setuid", Make(CreateRoute::kMknod, At("/work/m"), S_IFREG | 06755),
                "/host/work/m"),
      DenySetId("mknod setgid, unresolved",
                Unresolved(Make(CreateRoute::kMknod, At("/work/m"), S_IFIFO | 02644)), ""),
      Kernel("mknod unresolved", Unresolved(Make(CreateRoute::kMknod, At("/work/p.pem"))),
             Reason::kUnresolved),
      Kernel("mknod in a free dir", Make(CreateRoute::kMknod, Free("/tmp/f.pem"), S_IFIFO),
             Reason::kFreeDir),
      Deny("mknod p.pem", Make(CreateRoute::kMknod, At("/work/p.pem"), S_IFIFO | 0644), kPattern,
           "*.pem", "/host/work/p.pem"),
      Fail("mknod an existing match", Make(CreateRoute::kMknod, At("/work/m.key", kFile)),
           Reason::kExistsAndMatches, EEXIST, "*.key"),
      Perform("mknod p.fifo", Make(CreateRoute::kMknod, At("/work/p.fifo"), S_IFIFO | 0644)),

      // symlink: the link's own name counts, and what it could point to beneath it
      Kernel("symlink unresolved", Unresolved(Make(CreateRoute::kSymlink, At("/work/l.pem"))),
             Reason::kUnresolved),
      Kernel("symlink in a free dir", Make(CreateRoute::kSymlink, Free("/tmp/l.pem")),
             Reason::kFreeDir),
      Deny("symlink l.pem", Make(CreateRoute::kSymlink, At("/work/l.pem")), kPattern, "*.pem",
           "/host/work/l.pem"),
      Fail("symlink an existing match", Make(CreateRoute::kSymlink, At("/work/l.pem", kLink)),
           Reason::kExistsAndMatches, EEXIST, "*.pem"),
      Deny("symlink .config (git config beneath it)",
           Make(CreateRoute::kSymlink, At("/work/.config")), kTrusted, ".config/git/config",
           "/host/work/.config"),
      Deny("symlink above a protected path", Make(CreateRoute::kSymlink, At("/home")), kProtected,
           "/home/u/bin", "/home"),
      Perform("symlink .config in a state dir",
              Make(CreateRoute::kSymlink, At("/work/state/.config"))),
      Perform("symlink okl", Make(CreateRoute::kSymlink, At("/work/okl"))),

      // link, linkat (O_TMPFILE included)
      Kernel("link unresolved", Unresolved(Link(At("/work/hard.key"))), Reason::kUnresolved),
      Kernel("link into a free dir", Link(Free("/tmp/z.key")), Reason::kFreeDir),
      Deny("link hard.key", Link(At("/work/hard.key")), kPattern, "*.key", "/host/work/hard.key"),
      Deny("link hard.key, no source (refused first)", Link(At("/work/hard.key"), false), kPattern,
           "*.key", "/host/work/hard.key"),
      Fail("link an existing match", Link(At("/work/hard.key", kFile)), Reason::kExistsAndMatches,
           EEXIST, "*.key"),
      Deny("link .bashrc", Link(At("/work/.bashrc")), kTrusted, ".bashrc", "/host/work/.bashrc"),
      Kernel("link, no source", Link(At("/work/hard.txt"), false), Reason::kNoLinkSource),
      Perform("link .config (a file: nothing beneath)", Link(At("/work/.config"))),
      Perform("link hard.txt", Link(At("/work/hard.txt"))),

      // rename, renameat, renameat2
      Kernel("rename exchange|noreplace",
             Rename(At("/work/a"), At("/work/b.pem"), RENAME_EXCHANGE | RENAME_NOREPLACE),
             Reason::kRenameFlags),
      Kernel("rename unknown flag", Rename(At("/work/a"), At("/work/b.pem"), 1u << 7),
             Reason::kRenameFlags),
      Fail("rename whiteout", Rename(At("/work/a", kFile), At("/work/b"), RENAME_WHITEOUT),
           Reason::kWhiteout, EPERM),
      Kernel("rename unresolved", Unresolved(Rename(At("/work/r.txt"), At("/work/r.pem"))),
             Reason::kUnresolved),
      Kernel("rename within free dirs", Rename(Free("/tmp/x.pem"), Free("/tmp/d.key/y.pem")),
             Reason::kFreeDir),
      Kernel("rename out to a free dir", Rename(At("/work/x.pem", kFile), Free("/tmp/y.pem")),
             Reason::kFreeDir),
      Deny("rename to r.pem", Rename(At("/work/r.txt", kFile), At("/work/r.pem")), kPattern,
           "*.pem", "/host/work/r.pem"),
      Deny("rename over an existing match",
           Rename(At("/work/r.txt", kFile), At("/work/e.pem", kFile)), kPattern, "*.pem",
           "/host/work/e.pem"),
      Deny("rename noreplace to a match",
           Rename(At("/work/r.txt", kFile), At("/work/r.pem"), RENAME_NOREPLACE), kPattern, "*.pem",
           "/host/work/r.pem"),
      Deny("exchange: the destination matches",
           Rename(At("/work/a.txt", kFile), At("/work/e.pem", kFile), RENAME_EXCHANGE), kPattern,
           "*.pem", "/host/work/e.pem"),
      Deny("exchange: the source matches",
           Rename(At("/work/e.pem", kFile), At("/work/a.txt", kFile), RENAME_EXCHANGE), kPattern,
           "*.pem", "/host/work/e.pem"),
      Perform("rename: only the destination counts",
              Rename(At("/work/e.pem", kFile), At("/work/a.txt", kFile))),
      Perform("exchange: the source in a free dir",
              Rename(Free("/tmp/e.pem", kFile), At("/work/a.txt", kFile), RENAME_EXCHANGE)),
      Deny("rename a directory to .config", Rename(At("/work/d", kDir), At("/work/.config")),
           kTrusted, ".config/git/config", "/host/work/.config"),
      Deny("rename a symlink to .config", Rename(At("/work/l", kLink), At("/work/.config")),
           kTrusted, ".config/git/config", "/host/work/.config"),
      Deny("rename what it cannot look at to .config",
           Rename(At("/work/l", kUnknown), At("/work/.config")), kTrusted, ".config/git/config",
           "/host/work/.config"),
      // Checked as a directory too: a racing writer can swap the file for one before the rename.
      Deny("rename a file to .config", Rename(At("/work/f", kFile), At("/work/.config")), kTrusted,
           ".config/git/config", "/host/work/.config"),
      Deny("exchange: a directory lands at .config",
           Rename(At("/work/.config", kFile), At("/work/d", kDir), RENAME_EXCHANGE), kTrusted,
           ".config/git/config", "/host/work/.config"),
      Deny("rename to .bashrc", Rename(At("/work/f", kFile), At("/work/.bashrc")), kTrusted,
           ".bashrc", "/host/work/.bashrc"),
      Deny("rename a directory above a protected path", Rename(At("/work/d", kDir), At("/home/u")),
           kProtected, "/home/u/bin", "/host/home"),
      Deny("rename a file above a protected path", Rename(At("/work/f", kFile), At("/home/u")),
           kProtected, "/home/u/bin", "/host/home"),
      Deny("rename into a directory it cannot name", Rename(At("/work/f", kFile), Unnamed("f2")),
           Reason::kUnnamedDirectory, "(a directory the supervisor cannot name)", "f2"),
      Perform("rename to .bashrc in a state dir",
              Rename(At("/work/f", kFile), At("/work/state/.bashrc"))),
      Perform("rename r.txt to r2.txt", Rename(At("/work/r.txt", kFile), At("/work/r2.txt"))),
      Perform("exchange a.txt and b.txt",
              Rename(At("/work/a.txt", kFile), At("/work/b.txt", kFile), RENAME_EXCHANGE)),

      // chmod, fchmod, fchmodat, fchmodat2 (trapped only with a set-id mode)
      DenySetId("chmod setuid", Chmod(At("/work/x", kFile), 04755), "/host/work/x"),
      DenySetId("chmod setgid on a directory", Chmod(At("/work/d", kDir), 02775), "/host/work/d"),
      DenySetId("chmod setuid in a free dir", Chmod(Free("/tmp/x", kFile), 04755), "/tmp/x"),
      DenySetId("chmod setuid, unnamed", Unresolved(Chmod(At("/work/x"), 06755)), ""),
      Kernel("chmod 0755", Chmod(At("/work/x", kFile), 0755), Reason::kPlainMode),
  };
}

class DecideCreateTest : public ::testing::TestWithParam<Case> {
 protected:
  static CreateRules Rules() {
    absl::StatusOr<CreateRules> rules = CreateRules::Create(
        {".env", ".env.*", "*.pem", "*.key"}, {".bashrc", ".git/hooks/**", ".config/git/config"},
        {"/home/u/bin", "/work/state/keep", "/work/out/build-*"},
        {{"/work", "/host/work", true, false},
         {"/work/state", "/host/state", true, /*trusted_exempt=*/true},
         {"/home/u", "/host/home", true, false}});
    EXPECT_TRUE(rules.ok()) << rules.status();
    return std::move(*rules);
  }
};

TEST_P(DecideCreateTest, Decides) {
  const Case& c = GetParam();
  const CreateDecision d = DecideCreate(c.request, Rules());
  EXPECT_EQ(CreateActionName(d.action), std::string(CreateActionName(c.action)));
  EXPECT_EQ(CreateReasonName(d.reason), std::string(CreateReasonName(c.reason)));
  EXPECT_EQ(d.error, c.error);
  EXPECT_EQ(d.rule, c.rule);
  EXPECT_EQ(d.target, c.target);
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = absl::StrCat(info.index, "_");
  for (const char* p = info.param.what; *p != '\0'; ++p) {
    name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryRouteAndOutcome, DecideCreateTest, ::testing::ValuesIn(Cases()),
                         CaseName);

// Every route meets every outcome it can have somewhere in the table.
TEST(DecideCreateTable, CoversEveryRouteWithEveryAction) {
  std::set<std::pair<CreateRoute, Action>> seen;
  for (const Case& c : Cases()) seen.insert({c.request.route, c.action});
  const Action kAll[] = {Action::kKernel, Action::kDeny, Action::kPerform, Action::kFail};
  // kFail: refusals of existing matches (EEXIST) or whiteouts (EPERM); open has neither. chmod
  // only refuses set-id modes or leaves the call to the kernel.
  const std::vector<std::pair<CreateRoute, std::vector<Action>>> routes = {
      {CreateRoute::kOpen, {Action::kKernel, Action::kDeny, Action::kPerform}},
      {CreateRoute::kMkdir, {kAll, kAll + 4}},
      {CreateRoute::kMknod, {kAll, kAll + 4}},
      {CreateRoute::kSymlink, {kAll, kAll + 4}},
      {CreateRoute::kLink, {kAll, kAll + 4}},
      {CreateRoute::kRename, {kAll, kAll + 4}},
      {CreateRoute::kChmod, {Action::kKernel, Action::kDeny}},
  };
  for (const auto& [route, actions] : routes) {
    for (Action action : actions) {
      EXPECT_TRUE(seen.count({route, action}))
          << static_cast<int>(route) << " " << CreateActionName(action);
    }
  }
}

}  // namespace
}  // namespace ccsandbox::launcher
