// curl, a real client, through a session's proxies: absolute-form, CONNECT (-p) and SOCKS5 with
// remote name resolution (--socks5-hostname), against a local origin on 127.0.0.1.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "policy/egress/allowlist.h"
#include "proxy/event_loop.h"
#include "proxy/proxy_test_support.h"
#include "proxy/session_proxies.h"
#include "proxy/static_resolver.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::proxy {
namespace {

constexpr char kCurl[] = "/usr/bin/curl";

struct CurlResult {
  int exit_code = -1;
  std::string output;
};

// Runs curl with a clean environment (no inherited *_proxy variables).
CurlResult Curl(const std::vector<std::string>& args) {
  std::string command =
      absl::StrCat("env -i PATH=/usr/bin:/bin ", kCurl, " --silent --show-error --max-time 20 ");
  for (const std::string& arg : args) absl::StrAppend(&command, "'", arg, "' ");
  absl::StrAppend(&command, "2>&1");
  CurlResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) result.output.append(buf, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class CurlClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kCurl, X_OK) != 0) CCSANDBOX_SKIP_OR_FAIL_IN_CI("curl is not installed");
    resolver_->Add("allowed.test", {"127.0.0.1"});
    absl::StatusOr<policy::EgressAllowlist> list = policy::EgressAllowlist::Resolve(
        true, std::vector<std::string>{absl::StrCat("allowed.test:", origin_.port())});
    ASSERT_TRUE(list.ok());
    SessionProxiesOptions options;
    options.session_id = "curl";
    options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(list));
    options.resolver = resolver_;
    options.on_violation = [this](const EgressViolation& v) {
      absl::MutexLock lock(&mu_);
      violations_.push_back(v.target);
    };
    absl::StatusOr<std::unique_ptr<SessionProxies>> proxies =
        SessionProxies::Start(loop_, std::move(options));
    ASSERT_TRUE(proxies.ok());
    proxies_ = *std::move(proxies);
  }

  std::string Url(const std::string& path) {
    return absl::StrCat("http://allowed.test:", origin_.port(), path);
  }

  std::vector<std::string> violations() {
    absl::MutexLock lock(&mu_);
    return violations_;
  }

  EventLoop loop_;
  std::shared_ptr<StaticResolver> resolver_ = std::make_shared<StaticResolver>();
  testing::HttpOrigin origin_;
  std::unique_ptr<SessionProxies> proxies_;
  absl::Mutex mu_;
  std::vector<std::string> violations_;
};

TEST_F(CurlClientTest, AbsoluteFormThroughTheHttpProxy) {
  CurlResult r = Curl({"-x", proxies_->http_proxy_url(), Url("/plain?x=1")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "GET /plain?x=1|");
}

TEST_F(CurlClientTest, ConnectTunnelThroughTheHttpProxy) {
  CurlResult r = Curl({"-p", "-x", proxies_->http_proxy_url(), "-d", "payload", Url("/tunnel")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "POST /tunnel|payload");
}

TEST_F(CurlClientTest, Socks5WithRemoteNameResolution) {
  CurlResult r = Curl(
      {"--socks5-hostname", absl::StrCat("127.0.0.1:", proxies_->socks_port()), Url("/socks")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "GET /socks|");
  r = Curl({"-x", proxies_->socks_proxy_url(), Url("/socks5h")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "GET /socks5h|");
}

TEST_F(CurlClientTest, RefusedHostsSee403AndSocksRefusal) {
  CurlResult r = Curl({"-o", "/dev/null", "-w", "%{http_code}", "-x", proxies_->http_proxy_url(),
                       "http://evil.test/"});
  EXPECT_EQ(r.output, "403");
  r = Curl({"-p", "-x", proxies_->http_proxy_url(), "https://evil.test/"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("403"), std::string::npos) << r.output;
  r = Curl({"--socks5-hostname", absl::StrCat("127.0.0.1:", proxies_->socks_port()),
            "http://evil.test/"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(violations(),
            (std::vector<std::string>{"evil.test:80", "evil.test:443", "evil.test:80"}));
  EXPECT_EQ(origin_.accepted(), 0);
}

}  // namespace
}  // namespace ccsandbox::proxy
