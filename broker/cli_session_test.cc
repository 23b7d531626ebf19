#include "broker/cli_session.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker {
namespace {

v1::SandboxHandle Handle(const std::string& id, v1::SandboxBackend backend,
                         v1::SandboxState state) {
  v1::SandboxHandle handle;
  handle.set_session_id(id);
  handle.set_backend(backend);
  handle.set_state(state);
  return handle;
}

TEST(EnumText, IsTheEnumNameInLowerCase) {
  EXPECT_EQ(BackendText(v1::SANDBOX_BACKEND_NATIVE), "native");
  EXPECT_EQ(BackendText(v1::SANDBOX_BACKEND_NONE), "none");
  EXPECT_EQ(BackendText(v1::SANDBOX_BACKEND_UNSPECIFIED), "unspecified");
  EXPECT_EQ(StateText(v1::SANDBOX_STATE_WARM), "warm");
  EXPECT_EQ(StateText(v1::SANDBOX_STATE_ACTIVE), "active");
  EXPECT_EQ(StateText(v1::SANDBOX_STATE_DESTROYED), "destroyed");
}

TEST(FormatSessionLines, OneAlignedLinePerSession) {
  EXPECT_EQ(FormatSessionLines({}), "");
  EXPECT_EQ(FormatSessionLines(
                {Handle("cli-1-0a1b2c3d", v1::SANDBOX_BACKEND_NATIVE, v1::SANDBOX_STATE_WARM),
                 Handle("s1", v1::SANDBOX_BACKEND_NONE, v1::SANDBOX_STATE_ACTIVE)}),
            "cli-1-0a1b2c3d  native  warm\n"
            "s1              none    active\n");
}

TEST(FormatSessionHandle, PrintsStateBackendErrorAndSortedDetails) {
  v1::SandboxHandle handle = Handle("s1", v1::SANDBOX_BACKEND_NATIVE, v1::SANDBOX_STATE_WARM);
  EXPECT_EQ(FormatSessionHandle(handle),
            "session: s1\n"
            "state: warm\n"
            "backend: native (requested: unspecified)\n");
  handle.set_requested_backend(v1::SANDBOX_BACKEND_NATIVE);
  auto& fields = *handle.mutable_details()->mutable_fields();
  fields["workingDirectory"].set_string_value("/w");
  fields["backendNote"].set_string_value("bubblewrap");
  fields["count"].set_number_value(2);
  handle.set_state(v1::SANDBOX_STATE_ERROR);
  handle.mutable_error()->set_code("FAILED_PRECONDITION");
  handle.mutable_error()->set_message("gone");
  EXPECT_EQ(FormatSessionHandle(handle),
            "session: s1\n"
            "state: error\n"
            "backend: native (requested: native)\n"
            "error: FAILED_PRECONDITION: gone\n"
            "details:\n"
            "  backendNote: bubblewrap\n"
            "  count: 2\n"
            "  workingDirectory: /w\n");
}

TEST(HandleJson, IsOneLineWithTheSpecSpellings) {
  const std::string json =
      HandleJson(Handle("s1", v1::SANDBOX_BACKEND_NATIVE, v1::SANDBOX_STATE_DESTROYED));
  EXPECT_EQ(json.find('\n'), std::string::npos);
  EXPECT_TRUE(absl::StrContains(json, R"("sessionId":"s1")")) << json;
  EXPECT_TRUE(absl::StrContains(json, R"("backend":"SANDBOX_BACKEND_NATIVE")")) << json;
  EXPECT_TRUE(absl::StrContains(json, R"("state":"SANDBOX_STATE_DESTROYED")")) << json;
  EXPECT_TRUE(absl::StrContains(json, R"("requestedBackend":"SANDBOX_BACKEND_UNSPECIFIED")"))
      << json;
}

TEST(NoSessionMessage, NamesTheSessionQuotedAndSaysWhatToDo) {
  EXPECT_EQ(NoSessionMessage("s1"),
            "no session 's1': it was stopped or never started (sandboxctl session ls lists the "
            "sessions)");
  EXPECT_TRUE(absl::StrContains(NoSessionMessage("a\nb"), R"('a\x0ab')"))
      << NoSessionMessage("a\nb");
}

}  // namespace
}  // namespace ccsandbox::broker
