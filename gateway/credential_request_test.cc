#include "gateway/credential_request.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ccsandbox::gateway {
namespace {

const std::vector<std::string> kUrls = {"https://github.com/owner/repo.git",
                                        "http://git.internal.example:8080/team/tool"};

TEST(CredentialRequest, ReadsGitsLines) {
  const CredentialRequest r = ParseCredentialRequest(
      "protocol=https\nhost=github.com\npath=owner/repo.git\nusername=x\nwwwauth[]=Basic\n");
  EXPECT_EQ(r.protocol, "https");
  EXPECT_EQ(r.host, "github.com");
  EXPECT_EQ(r.path, "owner/repo");
}

TEST(CredentialRequest, NamesOnlyTheSessionsRepositories) {
  struct Case {
    const char* request;
    std::optional<size_t> repository;
  };
  const Case cases[] = {
      {"protocol=https\nhost=github.com\npath=owner/repo.git\n", 0},
      {"protocol=https\nhost=github.com\npath=owner/repo\n", 0},
      {"protocol=https\nhost=github.com\npath=owner/repo.git/\n", 0},
      {"host=git.internal.example:8080\nprotocol=http\npath=team/tool.git\n", 1},
      {"protocol=https\nhost=github.com\npath=owner/other.git\n", std::nullopt},
      {"protocol=http\nhost=github.com\npath=owner/repo.git\n", std::nullopt},
      {"protocol=https\nhost=github.com\n", std::nullopt},  // no path: git's useHttpPath unset
      {"protocol=https\nhost=github.com\r\npath=owner/repo\n", std::nullopt},
      {"protocol=https\nhost=evil.example\nhost=github.com\npath=owner/repo\n", 0},  // last wins
      {"", std::nullopt},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(RepositoryAsked(ParseCredentialRequest(c.request), kUrls), c.repository) << c.request;
  }
}

}  // namespace
}  // namespace ccsandbox::gateway
