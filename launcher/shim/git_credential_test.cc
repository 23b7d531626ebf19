#include "launcher/shim/git_credential.h"

#include "gtest/gtest.h"

namespace ccsandbox::launcher {
namespace {

TEST(CredentialAnswer, PassesOnTheBodyOfAnOkOnly) {
  struct Case {
    const char* response;
    const char* answer;
  };
  const Case cases[] = {
      {"HTTP/1.1 200 OK\r\nContent-Length: 28\r\n\r\nusername=u1\npassword=tok\n",
       "username=u1\npassword=tok\n"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", ""},  // no credential for that repository
      {"HTTP/1.1 404 Not Found\r\n\r\nusername=u1\n", ""},
      {"HTTP/1.0 200 OK\r\n\r\nusername=u1\n", ""},
      {"HTTP/1.1 200 OK\r\nusername=u1\n", ""},  // the head never ended
      {"", ""},
  };
  for (const Case& c : cases) EXPECT_EQ(CredentialAnswer(c.response), c.answer) << c.response;
}

}  // namespace
}  // namespace ccsandbox::launcher
