// Linux denial telemetry (spec: "Denials on macOS are observable"): turns a
// sandboxed command's stderr into SandboxViolation events. Pure: text in,
// events out; no de-duplication.
//
//   ViolationScanner scanner;
//   for (auto& v : scanner.Feed(chunk)) Emit(v);  // each stderr chunk
//   for (auto& v : scanner.Finish()) Emit(v);     // at EOF
//
// Which lines: those reporting EACCES, EPERM or EROFS in an error position,
// i.e. "Permission denied", "Operation not permitted" or "Read-only file
// system" (any case) after ": ", "] ", " - ", "(" or at the line's start, and
// followed by the line's end, '.', ':', ',', ')', '"' or " (os error N)"; plus
// Node's "spawn X EACCES" and "listen EACCES ..." forms. So "0 errors, no
// 'Permission denied' seen" is not a violation, while "note: Permission
// denied: see docs" is (it is shaped like an error report). SSH login failures
// ("Permission denied (publickey).", "..., please try again.") never match.
//
// `action`, in Seatbelt spelling where one exists:
//   file-write*   EROFS, always. Or the verb creates, removes, renames, writes,
//                 truncates, locks or changes metadata: touch, cp "cannot
//                 create", mv, rm, mkdir, ln, chmod, tee, sed -i, git "could
//                 not lock", Node mkdir/unlink/rename, "open X for writing".
//   file-read*    The verb reads, lists, stats or enters: cat, ls, "cannot
//                 access", "open X for reading", find, cd, `.`, Node scandir.
//   process-exec  The verb executes: "cannot execute", "failed to run
//                 command", env, xargs, Node spawn, the shells' exec.
//                 dash words failed redirections "cannot create X" / "cannot
//                 open X", so its bare "sh: 1: X: Permission denied" is an
//                 exec. bash prints "bash: [line N: ]X: Permission denied" for
//                 `> X`, `< X`, `bash X` and an exec of X alike: we call it an
//                 exec only when X starts with "./" or "../" (how scripts are
//                 run; redirections rarely spell it), else file-access*.
//   file-access*  Only when the verb is truly undeterminable: Node/Python
//                 "open" (reads and writes look the same), Python's one-path
//                 PermissionError, copies (source or destination?), bash's
//                 bare form above, programs without a verb we know.
//   file-mount    mount, umount.            signal          kill.
//   network-bind  Node listen, bind.        network-outbound  Node connect.
//   syscall       A non-file call (ptrace, unshare, setns, chroot, netlink,
//                 setpriority...): Seatbelt has no word for seccomp or
//                 namespace denials. The target is the call's name.
//
// `target`: the operand the failing call named. The first quoted operand ('X',
// "X", ‘X’, `X`; locale and shell-escape quoting undone), except in two-path
// messages ("cannot move A to B", Node and Python "A -> B", git "cannot copy
// A to B"): there the destination, the path being created. Else the path in
// "prog: X: error", "prog: line N: X: error", Node's ", <op> 'X'", Python's
// ": 'X'"; host:port for network actions. Empty when the line names none.
// `raw` is the line without its terminator. All strings are valid UTF-8
// (invalid bytes become U+FFFD), as proto3 requires.
#ifndef CCSANDBOX_POLICY_VIOLATIONS_PARSER_H_
#define CCSANDBOX_POLICY_VIOLATIONS_PARSER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

inline constexpr absl::string_view kActionFileRead = "file-read*";
inline constexpr absl::string_view kActionFileWrite = "file-write*";
inline constexpr absl::string_view kActionFileAccess = "file-access*";
inline constexpr absl::string_view kActionProcessExec = "process-exec";
inline constexpr absl::string_view kActionFileMount = "file-mount";
inline constexpr absl::string_view kActionSignal = "signal";
inline constexpr absl::string_view kActionNetworkBind = "network-bind";
inline constexpr absl::string_view kActionNetworkOutbound = "network-outbound";
inline constexpr absl::string_view kActionSyscall = "syscall";

// Longest line the scanner keeps; the rest of a longer line is dropped.
inline constexpr size_t kMaxViolationLineBytes = 4096;

// `s` with every byte that does not start a valid UTF-8 sequence replaced by U+FFFD: proto3
// strings must be UTF-8, and stderr or host file names need not be.
std::string SanitizeUtf8(absl::string_view s);

// The violation one stderr line reports, or nullopt. A trailing "\n", "\r\n" or
// "\r" is ignored.
std::optional<v1::SandboxViolation> ParseViolationLine(absl::string_view line);

// Splits a stream of stderr chunks (cut anywhere) into lines at '\n' or '\r'
// and parses each. Memory is bounded: a line longer than kMaxViolationLineBytes
// is parsed as its first kMaxViolationLineBytes (cut on a UTF-8 boundary) as
// soon as they arrive.
class ViolationScanner {
 public:
  // Violations reported by the lines `chunk` completes, in order.
  std::vector<v1::SandboxViolation> Feed(absl::string_view chunk);
  // Parses a last line left without a terminator; the scanner is then empty and
  // reusable.
  std::vector<v1::SandboxViolation> Finish();

 private:
  void EmitPending(std::vector<v1::SandboxViolation>& out);

  std::string pending_;
  bool discarding_ = false;  // past the cap of an over-long line, until its terminator
};

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_VIOLATIONS_PARSER_H_
