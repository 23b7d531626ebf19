#include "broker/cli_launch.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

std::string WriteSpec(const std::string& name, const std::string& json) {
  const std::string path = TempPath(name);
  std::ofstream(path) << json;
  return path;
}

TEST(BuildLaunchRequest, WithoutASpecBindsTheWorkdirUnderAFreshId) {
  absl::StatusOr<v1::LaunchRequest> a = BuildLaunchRequest({}, "/w/tree");
  absl::StatusOr<v1::LaunchRequest> b = BuildLaunchRequest({}, "/w/tree");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(a->spec().bind_mounts_size(), 1);
  EXPECT_EQ(a->spec().bind_mounts(0).host_path(), "/w/tree");
  EXPECT_FALSE(a->spec().bind_mounts(0).read_only());
  EXPECT_EQ(a->spec().guest_workdir(), "/w/tree");
  EXPECT_TRUE(absl::StartsWith(a->spec().session_id(), "cli-")) << a->spec().session_id();
  EXPECT_NE(a->spec().session_id(), b->spec().session_id());
  EXPECT_EQ(a->backend(), "");
  EXPECT_FALSE(a->spec().has_write_deny_patterns());
}

TEST(BuildLaunchRequest, TakesTheSpecFileAndKeepsItsSessionId) {
  const std::string named = WriteSpec("named.json", R"({"sessionId": "s1", "mode": "review",
                                  "bindMounts": [{"hostPath": "/srv", "readOnly": true}]})");
  absl::StatusOr<v1::LaunchRequest> r =
      BuildLaunchRequest({.spec_file = named, .backend = "native"}, "/ignored");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->spec().session_id(), "s1");
  EXPECT_EQ(r->spec().mode(), "review");
  ASSERT_EQ(r->spec().bind_mounts_size(), 1);
  EXPECT_EQ(r->spec().bind_mounts(0).host_path(), "/srv");
  EXPECT_EQ(r->backend(), "native");

  const std::string unnamed = WriteSpec("unnamed.json", R"({"mode": "plan"})");
  absl::StatusOr<v1::LaunchRequest> fresh = BuildLaunchRequest({.spec_file = unnamed}, "/w");
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_TRUE(absl::StartsWith(fresh->spec().session_id(), "cli-"));
  EXPECT_EQ(fresh->spec().bind_mounts_size(), 0);  // the spec's binds, not the workdir
}

TEST(BuildLaunchRequest, TheFilenameOptOutIsAnExplicitEmptyList) {
  const std::string spec =
      WriteSpec("patterns.json", R"({"writeDenyPatterns": {"patterns": ["*.secret"]}})");
  absl::StatusOr<v1::LaunchRequest> r =
      BuildLaunchRequest({.spec_file = spec, .no_filename_denies = true}, "/w");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->spec().has_write_deny_patterns());
  EXPECT_EQ(r->spec().write_deny_patterns().patterns_size(), 0);
  absl::StatusOr<v1::LaunchRequest> by_default =
      BuildLaunchRequest({.no_filename_denies = true}, "/w");
  ASSERT_TRUE(by_default.ok());
  EXPECT_TRUE(by_default->spec().has_write_deny_patterns());
}

TEST(BuildLaunchRequest, RefusesBadSpecsBeforeSending) {
  EXPECT_EQ(BuildLaunchRequest({.spec_file = TempPath("missing.json")}, "/w").status().code(),
            absl::StatusCode::kNotFound);
  const std::string typo = WriteSpec("typo.json", R"({"sesionId": "a"})");
  EXPECT_EQ(BuildLaunchRequest({.spec_file = typo}, "/w").status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::string long_mode =
      WriteSpec("long.json", R"({"mode": ")" + std::string(200, 'a') + R"("})");
  absl::StatusOr<v1::LaunchRequest> r = BuildLaunchRequest({.spec_file = long_mode}, "/w");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(r.status().message(), "mode")) << r.status();
}

TEST(ResolveWorkdir, IsTheCurrentDirectoryOrTheFlagResolved) {
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  EXPECT_EQ(ResolveWorkdir("").value_or(""), std::string(cwd));
  const std::string link = TempPath("workdir-link");
  unlink(link.c_str());
  ASSERT_EQ(symlink(cwd, link.c_str()), 0);
  EXPECT_EQ(ResolveWorkdir(link).value_or(""), std::string(cwd));
  absl::StatusOr<std::string> missing = ResolveWorkdir("/nonexistent/dir");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "--workdir")) << missing.status();
}

TEST(LaunchNotices, SayWhenTheSessionIsWeakenedOrUnsandboxed) {
  v1::SandboxHandle native;
  native.set_backend(v1::SANDBOX_BACKEND_NATIVE);
  (*native.mutable_details()->mutable_fields())["filenamePolicy"].set_string_value(
      "enforced at creation time");
  EXPECT_EQ(LaunchNotices(native), "");

  // The typed field decides, not the note's wording.
  (*native.mutable_details()->mutable_fields())["filenamePolicy"].set_string_value(
      "WEAKENED by request");
  EXPECT_EQ(LaunchNotices(native), "");
  native.set_filename_denies_weakened(true);
  EXPECT_EQ(LaunchNotices(native), "sandboxctl: filename-pattern denies WEAKENED by request\n");

  v1::SandboxHandle none;
  none.set_backend(v1::SANDBOX_BACKEND_NONE);
  EXPECT_EQ(LaunchNotices(none), "sandboxctl: running UNSANDBOXED (backend none)\n");
  (*none.mutable_details()->mutable_fields())["backendNote"].set_string_value("sandbox off");
  EXPECT_EQ(LaunchNotices(none), "sandboxctl: running UNSANDBOXED (sandbox off)\n");

  v1::SandboxHandle vm;
  vm.set_backend(v1::SANDBOX_BACKEND_MICROVM);
  (*vm.mutable_details()->mutable_fields())["backendNote"].set_string_value("probe boot ...");
  EXPECT_EQ(LaunchNotices(vm), "");
  vm.set_backend(v1::SANDBOX_BACKEND_UNSPECIFIED);
  EXPECT_EQ(LaunchNotices(vm), "sandboxctl: running UNSANDBOXED (probe boot ...)\n");
}

}  // namespace
}  // namespace ccsandbox::broker
