#include "launcher/shim/shim_args.h"

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace ccsandbox::launcher {
namespace {

struct RoundTrip {
  const char* name;
  ShimArgs args;
  std::vector<std::string> rendered;  // without the command
};

// Every valid configuration renders to these exact arguments and parses back to itself.
TEST(ShimArgs, RendersAndParsesBackIdentically) {
  const RoundTrip cases[] = {
      {"nothing: just the command", {}, {"--"}},
      {"egress: the two proxy bridges",
       {.bridges = {{"127.0.0.1", 3128, "/run/ccsandbox/http.sock"},
                    {"127.0.0.1", 1080, "/run/ccsandbox/socks.sock"}}},
       {"--bridge=127.0.0.1:3128=/run/ccsandbox/http.sock",
        "--bridge=127.0.0.1:1080=/run/ccsandbox/socks.sock", "--"}},
      {"an IPv6 bridge is bracketed; port 0 picks one",
       {.bridges = {{"::1", 0, "/run/s.sock"}}},
       {"--bridge=[::1]:0=/run/s.sock", "--"}},
      {"a unix path may hold '=' and ':'",
       {.bridges = {{"127.0.0.2", 65535, "/run/a=b:c"}}},
       {"--bridge=127.0.0.2:65535=/run/a=b:c", "--"}},
      {"create guard: channel, free dir, writable mounts",
       {.create_guard = {.channel_fd = 7, .free_dirs = {"/tmp"}, .writable_dirs = {"/w", "/s"}}},
       {"--create-guard=7", "--free-create=/tmp", "--writable=/w", "--writable=/s", "--"}},
      {"create guard without a free dir: sockets stay free in /tmp",
       {.create_guard = {.channel_fd = 3, .writable_dirs = {"/tmp/ws"}, .socket_dirs = {"/tmp"}}},
       {"--create-guard=3", "--writable=/tmp/ws", "--free-sockets=/tmp", "--"}},
      {"create guard of a read-only run: the channel alone",
       {.create_guard = {.channel_fd = 12}},
       {"--create-guard=12", "--"}},
      {"a free dir may be / and a writable mount too",
       {.create_guard = {.channel_fd = 5, .free_dirs = {"/"}, .writable_dirs = {"/"}}},
       {"--create-guard=5", "--free-create=/", "--writable=/", "--"}},
      {"egress and the guard: one shim does both, bridges first",
       {.bridges = {{"127.0.0.1", 3128, "/run/ccsandbox/http.sock"}},
        .create_guard = {.channel_fd = 7, .free_dirs = {"/tmp"}, .writable_dirs = {"/w"}}},
       {"--bridge=127.0.0.1:3128=/run/ccsandbox/http.sock", "--create-guard=7",
        "--free-create=/tmp", "--writable=/w", "--"}},
  };
  for (const RoundTrip& c : cases) {
    std::vector<std::string> argv = RenderShimArgs(c.args);
    EXPECT_EQ(argv, c.rendered) << c.name << "\n  got: " << absl::StrJoin(argv, " ");
    argv.push_back("cmd");
    argv.push_back("--");  // the command's own arguments are not the shim's
    absl::StatusOr<ShimCommandLine> parsed = ParseShimArgs(argv);
    ASSERT_TRUE(parsed.ok()) << c.name << ": " << parsed.status();
    EXPECT_EQ(parsed->args, c.args) << c.name;
    EXPECT_EQ(parsed->command_start, c.rendered.size()) << c.name;
  }
}

// The shim accepts its flags in any order; repeated lists keep their order.
TEST(ShimArgs, ParsesFlagsInAnyOrder) {
  const std::vector<std::string> argv = {"--writable=/a",
                                         "--create-guard=9",
                                         "--bridge=127.0.0.1:1=/x",
                                         "--writable=/b",
                                         "--free-create=/tmp",
                                         "--",
                                         "sh",
                                         "-c",
                                         "true"};
  absl::StatusOr<ShimCommandLine> parsed = ParseShimArgs(argv);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const ShimArgs want = {
      .bridges = {{"127.0.0.1", 1, "/x"}},
      .create_guard = {.channel_fd = 9, .free_dirs = {"/tmp"}, .writable_dirs = {"/a", "/b"}}};
  EXPECT_EQ(parsed->args, want);
  EXPECT_EQ(parsed->command_start, 6u);
}

// A warm sandbox's init: flags only, the guard's channel comes with each Exec.
TEST(ShimArgs, InitModeRendersAndParsesBackWithoutACommand) {
  const ShimArgs args = {
      .init_fd = 5,
      .bridges = {{"127.0.0.1", 3128, "/run/ccsandbox/http.sock"}},
      .create_guard = {
          .channel_fd = kPerExecGuardChannel, .free_dirs = {"/tmp"}, .writable_dirs = {"/w"}}};
  const std::vector<std::string> argv = RenderShimArgs(args);
  EXPECT_EQ(argv, (std::vector<std::string>{
                      "--init=5", "--bridge=127.0.0.1:3128=/run/ccsandbox/http.sock",
                      "--create-guard=per-exec", "--free-create=/tmp", "--writable=/w"}));
  absl::StatusOr<ShimCommandLine> parsed = ParseShimArgs(argv);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->args, args);
  absl::StatusOr<ShimCommandLine> bare = ParseShimArgs({"--init=3"});
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->args, ShimArgs{.init_fd = 3});
}

struct Malformed {
  std::vector<std::string> argv;
  std::string message;
};

// Each malformed command line is refused, the first bad argument named.
TEST(ShimArgs, RefusesMalformedArguments) {
  const Malformed cases[] = {
      {{}, "no command given"},
      {{"--"}, "no command given"},
      {{"--bridge=127.0.0.1:3128=/s"}, "no command given"},
      {{"cmd"},
       "unknown argument 'cmd' (usage: sandbox_shim [--bridge=...] [--create-guard=FD ...] -- "
       "CMD)"},
      {{"--bridges=127.0.0.1:1=/s", "--", "cmd"},
       "unknown argument '--bridges=127.0.0.1:1=/s' (usage: sandbox_shim [--bridge=...] "
       "[--create-guard=FD ...] -- CMD)"},
      {{"--bridge=garbage", "--", "cmd"}, "bridge: 'garbage' is not ADDRESS:PORT=UNIX_PATH"},
      {{"--bridge=:80=/s", "--", "cmd"}, "bridge: ':80=/s' is not ADDRESS:PORT=UNIX_PATH"},
      {{"--bridge=0.0.0.0:3128=/run/x", "--", "cmd"},
       "bridge: '0.0.0.0' is not a loopback address"},
      {{"--bridge=10.0.0.1:3128=/run/x", "--", "cmd"},
       "bridge: '10.0.0.1' is not a loopback address"},
      {{"--bridge=localhost:3128=/run/x", "--", "cmd"},
       "bridge: 'localhost' is not a loopback address"},
      {{"--bridge=127.0.0.1:99999=/run/x", "--", "cmd"},
       "bridge: bad port in '127.0.0.1:99999=/run/x'"},
      {{"--bridge=127.0.0.1:http=/run/x", "--", "cmd"},
       "bridge: bad port in '127.0.0.1:http=/run/x'"},
      {{"--bridge=127.0.0.1:80=relative", "--", "cmd"},
       "bridge: '127.0.0.1:80=relative' needs an absolute path"},
      {{"--bridge=127.0.0.1:80=", "--", "cmd"}, "bridge: '127.0.0.1:80=' needs an absolute path"},
      {{"--create-guard=1", "--", "cmd"}, "--create-guard: bad fd '1'"},
      {{"--create-guard=x", "--", "cmd"}, "--create-guard: bad fd 'x'"},
      {{"--create-guard=", "--", "cmd"}, "--create-guard: bad fd ''"},
      {{"--create-guard=4", "--free-create=tmp", "--", "cmd"},
       "--free-create=: 'tmp' is relative; an absolute path is required"},
      {{"--create-guard=4", "--writable=/w/../etc", "--", "cmd"},
       "--writable=: '/w/../etc' contains '.' or '..'; write it normalised"},
      {{"--create-guard=4", "--free-sockets=/tmp/", "--", "cmd"},
       "--free-sockets=: '/tmp/' has a trailing '/'; write it normalised"},
      {{"--create-guard=4", "--writable=", "--", "cmd"},
       "--writable=: '' is empty; an absolute path is required"},
      {{"--free-create=/tmp", "--", "cmd"}, "--free-create and --writable need --create-guard"},
      {{"--writable=/w", "--", "cmd"}, "--free-create and --writable need --create-guard"},
      {{"--init=2"}, "--init: bad fd '--init=2'"},
      {{"--init=4", "--", "cmd"}, "--init takes no command: each Exec comes over its fd"},
      {{"--init=4", "--"}, "--init takes no command: each Exec comes over its fd"},
      {{"--init=4", "--create-guard=6"}, "--init needs --create-guard=per-exec, not a fixed fd"},
      {{"--create-guard=per-exec", "--", "cmd"}, "--create-guard=per-exec needs --init"},
      // The first bad argument is reported, even before a missing command.
      {{"--create-guard=x", "--bogus"}, "--create-guard: bad fd 'x'"},
  };
  for (const Malformed& c : cases) {
    absl::StatusOr<ShimCommandLine> parsed = ParseShimArgs(c.argv);
    EXPECT_FALSE(parsed.ok()) << absl::StrJoin(c.argv, " ");
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument)
        << absl::StrJoin(c.argv, " ");
    EXPECT_EQ(parsed.status().message(), c.message) << absl::StrJoin(c.argv, " ");
  }
}

}  // namespace
}  // namespace ccsandbox::launcher
