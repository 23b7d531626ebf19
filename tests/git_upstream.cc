#include "tests/git_upstream.h"

#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/daemon_fixture.h"
#include "tests/poll_until.h"

namespace ccsandbox::testing {
namespace {

// A loopback port free now (lighttpd binds it right after; a clash fails the start loudly).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

bool Accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GitUpstream>> GitUpstream::Start() {
  char dir[] = "/tmp/ccsandbox-upstream.XXXXXX";
  if (mkdtemp(dir) == nullptr) return absl::InternalError("mkdtemp failed");
  auto up = std::unique_ptr<GitUpstream>(new GitUpstream());
  up->dir_ = dir;
  up->token_dir_ = up->dir_ + "/tokens";
  up->port_ = FreePort();
  for (const std::string sub : {"/repos", "/www", "/tokens"}) {
    if (mkdir((up->dir_ + sub).c_str(), 0755) != 0) return absl::InternalError("mkdir failed");
  }
  if (absl::Status started = up->WriteConfigAndRestart(); !started.ok()) return started;
  return up;
}

// lighttpd's configuration for the repositories so far (each with its own token files), and
// lighttpd (re)started with it.
absl::Status GitUpstream::WriteConfigAndRestart() {
  std::string repos;
  for (const std::string& name : repositories_) {
    std::string escaped;
    for (char c : name) {
      if (c == '.') escaped += '\\';
      escaped += c;
    }
    const std::string files = absl::StrCat(token_dir_, "/git_", name);
    absl::StrAppend(&repos, "$HTTP[\"url\"] =~ \"^/git/", escaped, "/\" {\n",
                    "  auth.backend.plain.userfile = \"", files, ".read\"\n",
                    "  $HTTP[\"querystring\"] =~ \"service=git-receive-pack\" {\n",
                    "    auth.backend.plain.userfile = \"", files, ".write\"\n  }\n",
                    "  $HTTP[\"url\"] =~ \"/git-receive-pack$\" {\n",
                    "    auth.backend.plain.userfile = \"", files, ".write\"\n  }\n}\n");
    for (const char* ext : {".read", ".write"}) {
      const std::string file = files + ext;
      if (!PathExists(file)) std::ofstream(file) << "";
    }
  }
  std::ofstream(token_dir_ + "/none") << "";
  std::ofstream(dir_ + "/lighttpd.conf") << absl::StrFormat(
      R"(server.document-root = "%1$s/www"
server.bind = "127.0.0.1"
server.port = %2$d
server.errorlog = "%1$s/error.log"
server.modules = ("mod_auth", "mod_authn_file", "mod_alias", "mod_setenv", "mod_cgi")
alias.url = ("/git/" => "/usr/lib/git-core/git-http-backend/")
auth.backend = "plain"
auth.backend.plain.userfile = "%3$s/none"
$HTTP["url"] =~ "^/git/" {
  cgi.assign = ("" => "")
  setenv.set-environment = ("GIT_PROJECT_ROOT" => "%1$s/repos", "GIT_HTTP_EXPORT_ALL" => "")
  auth.require = ("/git/" => ("method" => "basic", "realm" => "git", "require" => "valid-user"))
}
%4$s)",
      dir_, port_, token_dir_, repos);
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    const int port = port_;
    if (!PollUntil([&] { return !Accepts(port); }, absl::Seconds(10), "lighttpd to stop")) {
      return absl::UnavailableError("lighttpd did not stop");
    }
  }
  const pid_t pid = fork();
  if (pid == 0) {
    execlp("lighttpd", "lighttpd", "-D", "-f", (dir_ + "/lighttpd.conf").c_str(), nullptr);
    _exit(127);
  }
  pid_ = pid;
  const int port = port_;
  if (!PollUntil([&] { return Accepts(port); }, absl::Seconds(10), "lighttpd to listen")) {
    return absl::UnavailableError(
        absl::StrCat("lighttpd did not start: ", ReadFile(dir_ + "/error.log")));
  }
  return absl::OkStatus();
}

bool GitUpstream::WriteTokensLive() const {
  for (const std::string& name : repositories_) {
    if (!ReadFile(absl::StrCat(token_dir_, "/git_", name, ".write")).empty()) return true;
  }
  return false;
}

std::string GitUpstream::AllTokens() const {
  std::string all;
  for (const std::string& name : repositories_) {
    for (const char* ext : {".read", ".write"}) {
      all += ReadFile(absl::StrCat(token_dir_, "/git_", name, ext));
    }
  }
  return all;
}

GitUpstream::~GitUpstream() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  if (!dir_.empty()) RunProgram({"rm", "-rf", dir_});
}

absl::Status GitUpstream::CreateRepository(const std::string& name) {
  const std::string path = absl::StrCat(dir_, "/repos/", name);
  ProgramResult init = RunProgram({"git", "init", "-q", "--bare", path});
  ProgramResult config = RunProgram({"git", "-C", path, "config", "http.receivepack", "true"});
  if (init.exit_code != 0 || config.exit_code != 0) {
    return absl::InternalError(absl::StrCat("git init: ", init.err, config.err));
  }
  repositories_.push_back(name);
  return WriteConfigAndRestart();
}

std::string GitUpstream::Url(const std::string& name) const {
  return absl::StrCat("http://127.0.0.1:", port_, "/git/", name);
}

std::string GitUpstream::Head(const std::string& name, const std::string& ref) const {
  ProgramResult r = RunProgram(
      {"git", "-C", absl::StrCat(dir_, "/repos/", name), "rev-parse", "--verify", "-q", ref});
  return r.exit_code == 0 ? std::string(absl::StripAsciiWhitespace(r.out)) : "";
}

}  // namespace ccsandbox::testing
