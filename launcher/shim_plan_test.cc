#include "launcher/shim_plan.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "base/host_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/shim/shim_args.h"
#include "policy/plan/bwrap_argv.h"

namespace ccsandbox::launcher {
namespace {

using ::testing::HasSubstr;

v1::LaunchPlan Plan(std::vector<std::pair<std::string, bool>> mounts, bool egress, bool guard) {
  v1::LaunchPlan plan;
  plan.set_backend(v1::SANDBOX_BACKEND_NATIVE);
  plan.set_workdir(mounts.empty() ? "/" : mounts[0].first);
  for (const auto& [path, read_only] : mounts) {
    v1::PlanMount* mount = plan.add_mounts();
    mount->set_host_path(path);
    mount->set_guest_path(path);
    mount->set_read_only(read_only);
  }
  if (egress) {
    plan.mutable_egress()->set_http_socket("/run/b/s1/http.sock");
    plan.mutable_egress()->set_socks_socket("/run/b/s1/socks.sock");
  }
  if (guard) plan.mutable_create_guard()->add_deny_patterns(".env");
  plan.add_argv("true");
  return plan;
}

struct Case {
  const char* name;
  v1::LaunchPlan plan;
  int fd;
  std::vector<std::string> want;
};

// The shim's arguments for each kind of plan, exactly.
TEST(ShimArgsFor, RendersWhatThePlanNeeds) {
  const Case cases[] = {
      {"no egress, no guard: nothing but the separator",
       Plan({{"/w", false}}, false, false),
       7,
       {"--"}},
      {"egress: both proxies bridged",
       Plan({{"/w", false}}, true, false),
       7,
       {"--bridge=127.0.0.1:3128=/run/ccsandbox/http.sock",
        "--bridge=127.0.0.1:1080=/run/ccsandbox/socks.sock", "--"}},
      {"guard: channel, the private /tmp free, each writable mount",
       Plan({{"/w", false}, {"/ro", true}}, false, true),
       7,
       {"--create-guard=7", "--free-create=/tmp", "--writable=/w", "--"}},
      {"guard: writable mounts in plan order",
       Plan({{"/work", false}, {"/usr", true}, {"/state", false}}, false, true),
       5,
       {"--create-guard=5", "--free-create=/tmp", "--writable=/work", "--writable=/state", "--"}},
      {"guard with a writable bind beneath /tmp: only sockets free there",
       Plan({{"/tmp/ws", false}}, false, true),
       5,
       {"--create-guard=5", "--writable=/tmp/ws", "--free-sockets=/tmp", "--"}},
      {"egress and guard: bridges first",
       Plan({{"/w", false}, {"/ro", true}}, true, true),
       7,
       {"--bridge=127.0.0.1:3128=/run/ccsandbox/http.sock",
        "--bridge=127.0.0.1:1080=/run/ccsandbox/socks.sock", "--create-guard=7",
        "--free-create=/tmp", "--writable=/w", "--"}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ShimArgs> args = ShimArgsFor(c.plan, c.fd);
    ASSERT_TRUE(args.ok()) << c.name << ": " << args.status();
    const std::vector<std::string> got = RenderShimArgs(*args);
    EXPECT_EQ(got, c.want) << c.name << "\n  got: " << absl::StrJoin(got, " ");
  }
}

TEST(ShimArgsFor, RefusesAGuardWithoutItsChannel) {
  EXPECT_EQ(ShimArgsFor(Plan({{"/w", false}}, false, true), std::nullopt).status().code(),
            absl::StatusCode::kInternal);
  EXPECT_TRUE(ShimArgsFor(Plan({{"/w", false}}, true, false), std::nullopt).ok());
}

class NothingOnTheHost : public HostView {
 public:
  Kind KindOf(const std::string&) const override { return Kind::kMissing; }
  std::string LinkTarget(const std::string&) const override { return ""; }
};

// The whole bwrap argv the launcher renders for a plan with egress and the guard.
TEST(ShimArgsFor, GivesTheBwrapArgvTheShimCommandLine) {
  const v1::LaunchPlan plan = Plan({{"/w", false}, {"/ro", true}}, true, true);
  policy::BwrapConfig config;
  config.shim_path = "/usr/lib/ccsandbox/sandbox_shim";
  absl::StatusOr<ShimArgs> shim = ShimArgsFor(plan, 7);
  ASSERT_TRUE(shim.ok()) << shim.status();
  config.shim_args = RenderShimArgs(*shim);
  absl::StatusOr<std::vector<std::string>> argv =
      policy::RenderBwrapArgv(plan, config, NothingOnTheHost());
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_THAT(absl::StrJoin(*argv, " "),
              HasSubstr("--ro-bind /usr/lib/ccsandbox/sandbox_shim /run/ccsandbox/shim "
                        "--chdir /w -- /run/ccsandbox/shim "
                        "--bridge=127.0.0.1:3128=/run/ccsandbox/http.sock "
                        "--bridge=127.0.0.1:1080=/run/ccsandbox/socks.sock "
                        "--create-guard=7 --free-create=/tmp --writable=/w -- true"));
  // And the shim reads back what it was given.
  const auto shim_word = std::find(argv->rbegin(), argv->rend(), "/run/ccsandbox/shim");
  const std::vector<std::string> after_shim(shim_word.base(), argv->end());
  absl::StatusOr<ShimCommandLine> parsed = ParseShimArgs(after_shim);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->args, *shim);
  EXPECT_EQ(after_shim[parsed->command_start], "true");
}

}  // namespace
}  // namespace ccsandbox::launcher
