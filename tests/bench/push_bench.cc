// push_bench: what a push costs through the push gateway, next to the same push straight to the
// upstream. A program that prints figures and asserts nothing.
//
// The upstream is lighttpd + git-http-backend on loopback (tests/git_upstream.h); the gateway
// runs in this process on a loopback port, minting tokens the upstream honours. Each round
// pushes a commit holding --mib of random bytes to a fresh bare repository, once through the
// gateway and once directly (with a write token in the URL), alternating; every push sends the
// whole pack. The gateway's memory is this process's peak RSS growth while it streams (the pack
// lives in git's processes, so what grows here is what the gateway buffers).
//
//   bazel run //tests/bench:push_bench -- --mib=50 --rounds=5
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gateway/credentials.h"
#include "gateway/push_gateway.h"
#include "tests/bench/bench_stats.h"
#include "tests/bench/bench_table.h"
#include "tests/daemon_fixture.h"
#include "tests/git_upstream.h"

ABSL_FLAG(int, mib, 50, "size of the pushed blob in MiB (random, so the pack is as large)");
ABSL_FLAG(int, rounds, 5, "measured pushes of each kind");

namespace ccsandbox::bench {
namespace {

long PeakRssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

absl::StatusOr<double> TimedPush(const std::string& work, const std::string& url,
                                 const std::string& ref) {
  const Clock::time_point start = Clock::now();
  testing::ProgramResult push =
      testing::RunProgram({"env", "GIT_TERMINAL_PROMPT=0", "git", "-C", work, "-c",
                           "credential.helper=", "push", "-q", url, "HEAD:" + ref});
  if (push.exit_code != 0) return absl::InternalError(absl::StrCat("git push: ", push.err));
  return MsSince(start);
}

absl::Status Run() {
  const int mib = std::max(1, absl::GetFlag(FLAGS_mib));
  const int rounds = std::max(1, absl::GetFlag(FLAGS_rounds));
  absl::StatusOr<std::unique_ptr<testing::GitUpstream>> up = testing::GitUpstream::Start();
  if (!up.ok()) return up.status();
  const int warmup = 1;
  std::vector<gateway::GatewayRepository> repos;
  for (int i = 0; i < 2 * (rounds + warmup); ++i) {
    const std::string name = absl::StrCat("r", i, ".git");
    if (absl::Status made = (*up)->CreateRepository(name); !made.ok()) return made;
    repos.push_back({absl::StrCat("/r", i, ".git"), (*up)->Url(name)});
  }
  gateway::LocalCredentialBroker credentials((*up)->token_dir());
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return absl::InternalError("cannot bind a loopback port");
  }
  const int port = ntohs(addr.sin_port);
  gateway::PushGatewayOptions options;
  options.session_id = "bench";
  options.repositories = repos;
  absl::StatusOr<policy::GuardrailRuleSet> rules =
      policy::ParseGuardrailRules({"allow push_to_remote"});
  options.rules = *rules;
  options.credentials = &credentials;
  absl::StatusOr<std::unique_ptr<gateway::PushGateway>> gw =
      gateway::PushGateway::Start(UniqueFd(fd), std::move(options));
  if (!gw.ok()) return gw.status();

  const std::string work = (*up)->dir() + "/work";
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{"git", "init", "-q", work},
        {"sh", "-c", absl::StrCat("head -c ", mib, "M /dev/urandom > ", work, "/blob")},
        {"git", "-C", work, "add", "blob"},
        {"git", "-C", work, "-c", "user.email=b@example.com", "-c", "user.name=b", "commit", "-q",
         "-m", "blob"}}) {
    testing::ProgramResult r = testing::RunProgram(argv);
    if (r.exit_code != 0) return absl::InternalError(absl::StrCat(argv[0], ": ", r.err));
  }
  int next = 0;
  const long rss_before = PeakRssKib();
  std::vector<Side> sides = {
      {"gateway",
       [&]() -> absl::StatusOr<double> {
         const int i = next++;
         return TimedPush(work, absl::StrCat("http://127.0.0.1:", port, repos[i].path),
                          "refs/heads/b");
       }},
      {"direct", [&]() -> absl::StatusOr<double> {
         const int i = next++;
         absl::StatusOr<gateway::Credential> token =
             credentials.Mint("direct", repos[i].upstream_url, gateway::CredentialScope::kWrite);
         if (!token.ok()) return token.status();
         absl::StatusOr<double> ms =
             TimedPush(work,
                       absl::StrCat("http://", token->username, ":", token->password, "@",
                                    repos[i].upstream_url.substr(sizeof("http://") - 1)),
                       "refs/heads/b");
         credentials.Revoke("direct", *token);
         return ms;
       }}};
  if (absl::Status done = Alternate(warmup, rounds, sides); !done.ok()) return done;
  PrintSides(
      absl::StrFormat("push of a %d MiB pack: through the gateway vs straight upstream", mib),
      sides);
  PrintRatio(absl::StrFormat("push of %d MiB via the gateway", mib), sides[0], sides[1], 1.2);
  const double grew_mib = (PeakRssKib() - rss_before) / 1024.0;
  absl::PrintF(
      "  gateway memory: peak RSS of this process grew %.1f MiB while streaming %d "
      "pushes of %d MiB (streams, not buffers: should stay far below %d MiB)\n",
      grew_mib, rounds + warmup, mib, mib);
  ReportRow({.figure = "gateway peak RSS growth while streaming",
             .ours = grew_mib,
             .unit = "MiB",
             .baseline_name = "the pack",
             .baseline = static_cast<double>(mib)});
  return absl::OkStatus();
}

}  // namespace
}  // namespace ccsandbox::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status status = ccsandbox::bench::Run();
  if (!status.ok()) {
    absl::FPrintF(stderr, "push_bench: %s\n", status.ToString());
    return 1;
  }
  return 0;
}
