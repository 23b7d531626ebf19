#include "policy/plan/input_limits.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/stubs/common.h"

namespace ccsandbox::policy {
namespace {

using google::protobuf::RepeatedPtrField;

// Length of the UTF-8 character starting at `at`, or 0 when the bytes there are not one.
// Validity is protobuf's own, so "valid here" is exactly "parses on the other side".
size_t Utf8CharLength(absl::string_view text, size_t at) {
  const unsigned char lead = static_cast<unsigned char>(text[at]);
  size_t length = 1;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
  } else if (lead >= 0x80) {
    return 0;
  }
  if (at + length > text.size()) return 0;
  const absl::string_view sequence = text.substr(at, length);
  return google::protobuf::internal::IsStructurallyValidUTF8(
             google::protobuf::StringPiece(sequence.data(), sequence.size()))
             ? length
             : 0;
}

// Offset of the first byte that is not part of a valid UTF-8 character, or npos.
size_t FirstInvalidUtf8(absl::string_view text) {
  if (google::protobuf::internal::IsStructurallyValidUTF8(
          google::protobuf::StringPiece(text.data(), text.size()))) {
    return absl::string_view::npos;
  }
  for (size_t at = 0; at < text.size();) {
    const size_t length = Utf8CharLength(text, at);
    if (length == 0) return at;
    at += length;
  }
  return absl::string_view::npos;
}

absl::Status Invalid(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

absl::Status TooMany(absl::string_view field, int count, int limit, absl::string_view why) {
  return Invalid(field, absl::StrCat(count, " entries; at most ", limit, " (", why, ")"));
}

absl::Status TooLong(absl::string_view field, size_t size, size_t limit, absl::string_view why) {
  return Invalid(field, absl::StrCat(size, " bytes; at most ", limit, " (", why, ")"));
}

// UTF-8 and NUL: what every string that reaches a file name, execve or a proto3 string must be.
absl::Status CheckText(absl::string_view field, absl::string_view text, absl::string_view nul_why,
                       absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  if (const size_t nul = text.find('\0'); nul != absl::string_view::npos) {
    return absl::Status(code, absl::StrCat(field, ": contains a NUL byte at offset ", nul, " (",
                                           nul_why, "): ", QuoteInput(text)));
  }
  if (const size_t bad = FirstInvalidUtf8(text); bad != absl::string_view::npos) {
    return absl::Status(
        code, absl::StrCat(field, ": is not valid UTF-8 at offset ", bad,
                           " (proto3 string fields carry UTF-8 text only): ", QuoteInput(text)));
  }
  return absl::OkStatus();
}

absl::Status CheckPath(absl::string_view field, absl::string_view path,
                       absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  if (path.size() > kMaxPathBytes) {
    return absl::Status(code, absl::StrCat(field, ": ", path.size(), " bytes; a path has at most ",
                                           kMaxPathBytes, " (PATH_MAX)"));
  }
  if (absl::Status s = CheckText(field, path, "the kernel would cut the path there", code);
      !s.ok()) {
    return s;
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == absl::string_view::npos) end = path.size();
    if (end - start > kMaxPathComponentBytes) {
      return absl::Status(
          code, absl::StrCat(field, ": the component at offset ", start, " is ", end - start,
                             " bytes; a file name has at most ", kMaxPathComponentBytes,
                             " (NAME_MAX): ", QuoteInput(path.substr(start, end - start))));
    }
    start = end + 1;
  }
  return absl::OkStatus();
}

absl::Status CheckBounded(absl::string_view field, absl::string_view text, size_t limit,
                          absl::string_view why) {
  if (text.size() > limit) return TooLong(field, text.size(), limit, why);
  return CheckText(field, text, "nothing after it would be seen");
}

// One repeated string field and its limits: how many entries, and what each may be.
struct ListLimit {
  absl::string_view field;
  const RepeatedPtrField<std::string>* entries;
  int max_entries;
  absl::string_view count_why;
  // 0: each entry is a path (CheckPath: PATH_MAX, NAME_MAX, NUL, UTF-8); else text of at most
  // this many bytes (CheckBounded).
  size_t max_entry_bytes = 0;
  absl::string_view entry_why = "";
};

absl::Status CheckList(const ListLimit& list) {
  if (list.entries->size() > list.max_entries) {
    return TooMany(list.field, list.entries->size(), list.max_entries, list.count_why);
  }
  for (int i = 0; i < list.entries->size(); ++i) {
    const std::string field = absl::StrCat(list.field, "[", i, "]");
    const std::string& entry = (*list.entries)[i];
    absl::Status s = list.max_entry_bytes == 0
                         ? CheckPath(field, entry)
                         : CheckBounded(field, entry, list.max_entry_bytes, list.entry_why);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// The lists in order; the first problem.
absl::Status CheckLists(std::initializer_list<ListLimit> lists) {
  for (const ListLimit& list : lists) {
    if (absl::Status s = CheckList(list); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// Single text fields with their byte limits, in order; the first problem.
struct TextLimit {
  absl::string_view field;
  absl::string_view text;
  size_t max_bytes;
  absl::string_view why;
};

absl::Status CheckTexts(std::initializer_list<TextLimit> texts) {
  for (const TextLimit& text : texts) {
    if (absl::Status s = CheckBounded(text.field, text.text, text.max_bytes, text.why); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// Single paths, in order; the first problem.
absl::Status CheckPaths(
    std::initializer_list<std::pair<absl::string_view, absl::string_view>> paths) {
  for (const auto& [field, path] : paths) {
    if (absl::Status s = CheckPath(field, path); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// Bind mounts (SandboxBindMount or PlanMount): how many, and both paths of each.
template <typename Mount>
absl::Status CheckMounts(absl::string_view field, const RepeatedPtrField<Mount>& mounts, int limit,
                         absl::string_view why) {
  if (mounts.size() > limit) return TooMany(field, mounts.size(), limit, why);
  for (int i = 0; i < mounts.size(); ++i) {
    const std::string prefix = absl::StrCat(field, "[", i, "]");
    if (absl::Status s = CheckPaths({{prefix + ".hostPath", mounts[i].host_path()},
                                     {prefix + ".guestPath", mounts[i].guest_path()}});
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// argv and env as the command will get them from execve.
absl::Status CheckCommandLine(const RepeatedPtrField<std::string>& argv,
                              const google::protobuf::Map<std::string, std::string>& env) {
  if (argv.size() > kMaxArgvEntries) {
    return TooMany("argv", argv.size(), kMaxArgvEntries,
                   "bwrap accepts 9000 arguments for its mounts and the command together");
  }
  if (env.size() > static_cast<size_t>(kMaxEnvEntries)) {
    return TooMany("env", static_cast<int>(env.size()), kMaxEnvEntries,
                   "the environment shares execve's ARG_MAX with argv");
  }
  size_t total = 0;
  for (int i = 0; i < argv.size(); ++i) {
    const std::string field = absl::StrCat("argv[", i, "]");
    const size_t limit = i == 0 ? kMaxPathBytes : kMaxArgBytes;
    if (argv[i].size() > limit) {
      return TooLong(field, argv[i].size(), limit,
                     i == 0 ? "the command is a program name or path (PATH_MAX)"
                            : "execve's MAX_ARG_STRLEN per argument");
    }
    if (absl::Status s = CheckText(field, argv[i], "execve would cut the argument there");
        !s.ok()) {
      return s;
    }
    total += argv[i].size() + 1;
  }
  // Sorted, so the first refusal is the same on every run.
  std::vector<const std::string*> names;
  names.reserve(env.size());
  for (const auto& [name, value] : env) names.push_back(&name);
  std::sort(names.begin(), names.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  for (const std::string* name : names) {
    const std::string& value = env.at(*name);
    const std::string field = absl::StrCat("env[", QuoteInput(*name), "]");
    if (name->empty()) return Invalid(field, "the variable name is empty");
    if (name->size() + 1 + value.size() > kMaxArgBytes) {
      return TooLong(field, name->size() + 1 + value.size(), kMaxArgBytes,
                     "execve's MAX_ARG_STRLEN per NAME=value");
    }
    if (name->find('=') != std::string::npos) {
      return Invalid(field, "the variable name contains '='; execve would split it there");
    }
    if (absl::Status s = CheckText(field, *name, "execve would cut the name there"); !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckText(field, value, "execve would cut the value there"); !s.ok()) {
      return s;
    }
    total += name->size() + value.size() + 2;
  }
  if (total > kMaxArgvEnvBytes) {
    return Invalid("argv", absl::StrCat("argv and env are ", total, " bytes together; at most ",
                                        kMaxArgvEnvBytes,
                                        " (half of execve's ARG_MAX; bwrap's mounts need the "
                                        "rest): pass big data on stdin or in a file"));
  }
  return absl::OkStatus();
}

absl::Status CheckStdinAndTimeout(size_t stdin_bytes, uint64_t timeout_ms) {
  if (stdin_bytes > kMaxStdinBytes) {
    return TooLong("stdin", stdin_bytes, kMaxStdinBytes,
                   "a run's stdin travels in one gRPC message of at most 16 MiB: put bigger "
                   "input in a file under a bind mount");
  }
  if (timeout_ms > kMaxTimeoutMs) {
    return Invalid("timeoutMs", absl::StrCat(timeout_ms, " is more than ", kMaxTimeoutMs,
                                             " (7 days); 0 means no timeout"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string CutInput(absl::string_view input) {
  std::string out;
  size_t at = 0;
  while (at < input.size()) {
    const size_t length = Utf8CharLength(input, at);
    std::string piece;
    const unsigned char byte = static_cast<unsigned char>(input[at]);
    if (length == 0 || (length == 1 && (byte < 0x20 || byte == 0x7f))) {
      piece = absl::StrFormat("\\x%02x", byte);
    } else {
      piece = std::string(input.substr(at, length));
    }
    if (out.size() + piece.size() > kMaxQuotedBytes) break;
    out += piece;
    at += length == 0 ? 1 : length;
  }
  if (at < input.size()) out += "…";
  return out;
}

std::string QuoteInput(absl::string_view input) { return absl::StrCat("'", CutInput(input), "'"); }

absl::Status CheckSpecLimits(const v1::SandboxSpec& spec) {
  if (absl::Status s =
          CheckBounded("mode", spec.mode(), kMaxModeBytes, "chat, review, plan or orchestrate");
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckMounts("bindMounts", spec.bind_mounts(), kMaxBindMounts,
                      "each costs bwrap 3 or 4 of its 9000 arguments; bind a common parent");
      !s.ok()) {
    return s;
  }
  if (spec.has_guest_workdir()) {
    if (absl::Status s = CheckPath("guestWorkdir", spec.guest_workdir()); !s.ok()) return s;
  }
  constexpr absl::string_view kMatchedOnEveryCreation =
      "every creation in a writable mount is matched against each";
  return CheckLists({
      {"protectedPaths", &spec.protected_paths(), kMaxProtectedPaths,
       "each becomes deny paths in two spellings for bwrap"},
      {"runnerStateDirs", &spec.runner_state_dirs(), kMaxRunnerStateDirs,
       "each is one more bwrap mount"},
      {"execGrantRoots", &spec.exec_grant_roots(), kMaxExecGrantRoots,
       "operator-approved roots are few"},
      {"egressAllowlist", &spec.egress_allowlist(), kMaxEgressAllowlistEntries,
       "use a wildcard such as *.example.com", kMaxEgressEntryBytes,
       "a host name is at most 253 bytes, plus a port"},
      {"writeDenyPatterns.patterns", &spec.write_deny_patterns().patterns(), kMaxWriteDenyPatterns,
       kMatchedOnEveryCreation, kMaxPathComponentBytes,
       "a pattern matches one file name (NAME_MAX)"},
      {"denyWriteNames", &spec.deny_write_names(), kMaxDenyWriteNames, kMatchedOnEveryCreation,
       kMaxPathBytes, "a rule is a relative path (PATH_MAX)"},
      {"connectableSockets", &spec.connectable_sockets(), kMaxConnectableSockets,
       "each stays one more visible file"},
  });
}

absl::Status CheckExecLimits(const v1::ExecRequest& request) {
  if (request.session_id().size() > kMaxIdBytes) {
    return TooLong("sessionId", request.session_id().size(), kMaxIdBytes, "ids are short");
  }
  if (absl::Status s = CheckCommandLine(request.argv(), request.env()); !s.ok()) return s;
  if (request.has_guest_workdir()) {
    if (absl::Status s = CheckPath("guestWorkdir", request.guest_workdir()); !s.ok()) return s;
  }
  return CheckStdinAndTimeout(request.stdin().size(), request.timeout_ms());
}

absl::Status CheckPlanLimits(const v1::LaunchPlan& plan) {
  if (absl::Status s = CheckTexts({{"runId", plan.run_id(), 2 * kMaxIdBytes, "ids are short"},
                                   {"sessionId", plan.session_id(), kMaxIdBytes, "ids are short"}});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckMounts("mounts", plan.mounts(), kMaxBindMounts + kMaxRunnerStateDirs,
                                   "bindMounts plus runnerStateDirs");
      !s.ok()) {
    return s;
  }
  for (const auto& [field, paths] : {std::pair{"denyReadPaths", &plan.deny_read_paths()},
                                     std::pair{"denyWritePaths", &plan.deny_write_paths()}}) {
    if (absl::Status s = CheckHostPaths(field, {paths->begin(), paths->end()}); !s.ok()) return s;
  }
  if (absl::Status s = CheckCommandLine(plan.argv(), plan.env()); !s.ok()) return s;
  if (absl::Status s = CheckPath("workdir", plan.workdir()); !s.ok()) return s;
  constexpr int kMaxForbiddenDirs = 64;
  if (absl::Status s = CheckList({"forbiddenDirs", &plan.forbidden_dirs(), kMaxForbiddenDirs,
                                  "the daemons' own directories are few"});
      !s.ok()) {
    return s;
  }
  if (plan.has_egress()) {
    if (absl::Status s = CheckPaths({{"egress.httpSocket", plan.egress().http_socket()},
                                     {"egress.socksSocket", plan.egress().socks_socket()},
                                     {"egress.pushSocket", plan.egress().push_socket()}});
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = CheckLists({
          // The spec's own patterns plus the standard set.
          {"createGuard.denyPatterns", &plan.create_guard().deny_patterns(),
           2 * kMaxWriteDenyPatterns, "writeDenyPatterns plus the standard set",
           kMaxPathComponentBytes, "a pattern matches one file name (NAME_MAX)"},
          {"createGuard.trustedNames", &plan.create_guard().trusted_names(), kMaxDenyWriteNames,
           "the spec's denyWriteNames", kMaxPathBytes, "a rule is a relative path"},
          {"createGuard.protectedPaths", &plan.create_guard().protected_paths(),
           kMaxProtectedPaths + 64, "the spec's protectedPaths and a few per home"},
      });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckStdinAndTimeout(plan.stdin().size(), plan.timeout_ms()); !s.ok()) {
    return s;
  }
  if (const size_t size = plan.ByteSizeLong(); size > static_cast<size_t>(kMaxGrpcMessageBytes)) {
    return Invalid("LaunchPlan", absl::StrCat(size, " bytes; the launcher accepts at most ",
                                              kMaxGrpcMessageBytes, " per message"));
  }
  return absl::OkStatus();
}

absl::Status CheckHostPaths(absl::string_view field, const std::vector<std::string>& paths) {
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string name = absl::StrCat(field, "[", i, "]");
    if (absl::Status s = CheckPath(name, paths[i], absl::StatusCode::kFailedPrecondition);
        !s.ok()) {
      // A file name on the host, not the caller's text: say what to do about it.
      return absl::Status(s.code(),
                          absl::StrCat(s.message(), "; rename it, or leave its tree unbound"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBwrapArgv(const std::vector<std::string>& argv,
                            const std::vector<std::string>& envp, size_t arg_max) {
  const size_t args = argv.empty() ? 0 : argv.size() - 1;
  if (args > static_cast<size_t>(kBwrapMaxArgs)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bindMounts, deny paths and argv: the sandbox needs ", args,
                     " bwrap arguments; bwrap accepts at most ", kBwrapMaxArgs,
                     ": bind fewer, larger trees, or pass fewer arguments"));
  }
  // The kernel caps ARG_MAX at 3/4 of _STK_LIM (6 MiB) whatever the stack limit.
  const size_t limit = std::min<size_t>(arg_max, 6 << 20);
  size_t bytes = (argv.size() + envp.size()) * sizeof(char*);
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i].size() + 1 > kMaxArgBytes + 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bwrap argument ", i, " is ", argv[i].size(), " bytes; execve accepts at most ",
          kMaxArgBytes, " per argument (MAX_ARG_STRLEN): ", QuoteInput(argv[i])));
    }
    bytes += argv[i].size() + 1;
  }
  for (const std::string& entry : envp) bytes += entry.size() + 1;
  if (bytes > limit) {
    return absl::InvalidArgumentError(
        absl::StrCat("bindMounts, deny paths, argv and env: the bwrap command line is ", bytes,
                     " bytes with its environment; execve accepts at most ", limit,
                     " (ARG_MAX): bind fewer paths or pass big data on stdin"));
  }
  return absl::OkStatus();
}

}  // namespace ccsandbox::policy
