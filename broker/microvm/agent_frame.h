// The wire between the broker's QEMU runtime and the in-guest agent (docs/microvm.md, "The
// agent's frames"): one virtio-serial byte stream each way, cut into frames of
//   1 byte type | 4 bytes payload length, big-endian | payload (at most kMaxFramePayload)
// The decoder fails closed: an unknown type, an oversized or malformed payload, or a frame
// from the wrong side ends the stream for good; nothing after it is trusted.
// Plain C++ (no absl): the agent is a static binary built from the same file.
#ifndef CCSANDBOX_BROKER_MICROVM_AGENT_FRAME_H_
#define CCSANDBOX_BROKER_MICROVM_AGENT_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ccsandbox::broker::microvm {

inline constexpr size_t kFrameHeader = 5;
inline constexpr uint32_t kMaxFramePayload = 1 << 20;
inline constexpr char kAgentVersion[] = "ccsandbox-agent 1";

enum class FrameType : uint8_t {
  // host -> guest
  kHello = 'H',     // empty; answered by kHelloReply
  kExec = 'X',      // an ExecRequest (EncodeExec); one run at a time
  kStdin = 'I',     // bytes for the run's stdin
  kStdinEof = 'E',  // empty; closes the run's stdin
  kKill = 'K',      // empty; SIGKILLs the run's process group (a terminal: every process but
                    // the agent's)
  kSetup = 'S',     // a GuestSetup (guest_setup.h): build the guest's root; once, before runs
  kTerminal = 'T',  // a TerminalRequest (EncodeTerminal): a shell on a PTY; one run or terminal
  kWindow = 'W',    // 4 bytes (EncodeWindow): the terminal's rows and cols
  kSignal = 'G',    // 4 bytes: a signal for the terminal's foreground job (IsTerminalFrameSignal)
  kHangup = 'U',    // empty; the terminal's session gets SIGHUP and SIGCONT
  // guest -> host
  kHelloReply = 'h',  // the agent's version (kAgentVersion)
  kStarted = 's',     // 4 bytes: the run's pid in the guest
  kStdout = 'o',      // bytes (a terminal's: its output)
  kStderr = 'e',      // bytes
  kExit = 'x',        // 4 bytes, signed: the exit code, or -signal
  kFailed = 'f',      // text: the run could not start (chdir, exec), or the setup failed
  kSetupDone = 'k',   // empty: the guest's root is built
};

enum class FrameSide { kFromHost, kFromGuest };

struct Frame {
  FrameType type;
  std::string payload;
};

struct ExecRequest {
  std::vector<std::string> argv;  // at least one; no NUL bytes
  std::vector<std::string> env;   // "NAME=value", NAME non-empty; no NUL bytes
  std::string workdir;            // empty: the agent's own
};

// The bytes of one frame. The caller keeps payloads within kMaxFramePayload (SplitPayload).
std::string EncodeFrame(FrameType type, const std::string& payload);
std::string EncodeU32(uint32_t value);
std::string EncodeExec(const ExecRequest& request);
// A payload's string field: u32 length, then the bytes. ReadFrameString advances `at`; false
// when the field runs past the end of `in`.
void AppendFrameString(std::string* out, const std::string& value);
bool ReadFrameString(const std::string& in, size_t* at, std::string* out);

// A terminal: the command (argv never empty: the host picks the shell) and its window size.
struct TerminalRequest {
  ExecRequest exec;
  uint16_t rows = 0;
  uint16_t cols = 0;
};
// Rows and cols of a terminal, each 1..kMaxTerminalSide (policy::ValidTerminalSize's bounds).
inline constexpr uint16_t kMaxTerminalSide = 1000;

std::string EncodeTerminal(const TerminalRequest& request);
// The kWindow payload: rows in the high 16 bits, cols in the low.
std::string EncodeWindow(uint16_t rows, uint16_t cols);
// The signals a terminal's user sends (policy::IsTerminalSignal's): INT, QUIT, TERM, HUP, KILL,
// TSTP, CONT, WINCH.
bool IsTerminalFrameSignal(int sig);

// Parses a kExec payload: false (and why in `error`) unless it is exactly a valid request.
bool DecodeExec(const std::string& payload, ExecRequest* request, std::string* error);
// Parses a kTerminal payload: its window size (DecodeWindow) and then exactly an exec request.
bool DecodeTerminal(const std::string& payload, TerminalRequest* request, std::string* error);
// Parses a kWindow payload: false unless rows and cols are each 1..kMaxTerminalSide.
bool DecodeWindow(const std::string& payload, uint16_t* rows, uint16_t* cols, std::string* error);
// Parses a kSignal payload: false unless it is one of IsTerminalFrameSignal's.
bool DecodeSignal(const std::string& payload, int* sig, std::string* error);
// The 4-byte payload of kStarted / kExit.
uint32_t DecodeU32(const std::string& payload);

// Cuts a stream into frames sent by `from`. Feed bytes as they come; Next returns them.
class FrameDecoder {
 public:
  enum class Result { kFrame, kNeedMore, kBad };
  explicit FrameDecoder(FrameSide from) : from_(from) {}
  void Feed(const char* data, size_t size);
  // kFrame: `frame` is the next one. kBad: the stream is broken (`error` says how) and stays so.
  Result Next(Frame* frame, std::string* error);

 private:
  FrameSide from_;
  std::string buffer_;
  size_t offset_ = 0;
  std::string bad_;
};

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_AGENT_FRAME_H_
