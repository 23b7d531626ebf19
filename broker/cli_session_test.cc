#include "broker/cli_session.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker {
namespace {

using Args = std::vector<std::string>;

TEST(ParseSessionArgs, TakesAVerbAndAnIdWhereOneIsNeeded) {
  struct Case {
    Args args;
    const char* verb;  // "" = refused
    const char* id_or_error;
  };
  const Case cases[] = {
      {{"start"}, "start", ""},
      {{"ls"}, "ls", ""},
      {{"show", "s1"}, "show", "s1"},
      {{"stop", "cli-1-0a"}, "stop", "cli-1-0a"},
      {{}, "", "session: missing verb: start, ls, show, stop, suspend or resume"},
      {{"list"},
       "",
       "session: unknown verb 'list': expected start, ls, show, stop, suspend or resume"},
      {{"show"}, "", "session show: missing session id"},
      {{"stop"}, "", "session stop: missing session id"},
      {{"stop", ""}, "", "session stop: empty session id"},
      {{"suspend"}, "", "session suspend: missing session id"},
      {{"stop", "a", "b"}, "", "session stop: unexpected argument 'b' (one session id at a time)"},
      {{"ls", "x"}, "", "session ls: unexpected argument 'x' (it takes no arguments)"},
      {{"start", "--", "sh"}, "", "session start: unexpected argument '--'"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<SessionCommand> parsed = ParseSessionArgs(c.args);
    if (std::string(c.verb).empty()) {
      EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument)
          << ::testing::PrintToString(c.args);
      EXPECT_TRUE(absl::StartsWith(parsed.status().message(), c.id_or_error))
          << ::testing::PrintToString(c.args) << " -> " << parsed.status();
    } else {
      ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(c.args) << parsed.status();
      EXPECT_EQ(parsed->verb, c.verb);
      EXPECT_EQ(parsed->session_id, c.id_or_error);
    }
  }
}

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
