// The gRPC settings the daemons share: one message-size bound on every server and channel
// (policy::kMaxGrpcMessageBytes, both directions), and a readable refusal for a request that
// does not parse. Without it, a proto3 string field holding invalid UTF-8 (which a C++ client
// happily serialises) fails deserialisation inside gRPC and the caller gets INTERNAL with an
// empty message; with it the caller gets INVALID_ARGUMENT naming the field:
//
//   CaptureProtobufParseErrors();         // once, in main, before any server or channel
//   grpc::ServerBuilder builder;
//   ApplyServerLimits(builder);           // sizes + the parse-error interceptor
//   grpc::ChannelArguments args;
//   ApplyChannelLimits(args);             // sizes, for channels to the other daemon
//
// How the field is known: protobuf logs "String field 'pkg.Msg.field' contains invalid UTF-8
// data when parsing" on the thread that parses; the capture keeps the name per thread, and the
// interceptor, which gRPC runs on that same thread right after deserialising a unary or
// server-streaming request, turns the failed call's status into the refusal.
#ifndef CCSANDBOX_PROTO_GRPC_LIMITS_H_
#define CCSANDBOX_PROTO_GRPC_LIMITS_H_

#include <string>

#include "grpcpp/grpcpp.h"

namespace ccsandbox {

// Installs the protobuf log handler that records UTF-8 parse failures (and still prints every
// message as before). Not thread-safe: call before starting threads.
void CaptureProtobufParseErrors();

// The proto3 JSON name ("SandboxBindMount.hostPath") of the last string field this thread
// failed to parse as UTF-8, then forgets it; "" when there was none. For client-side reads.
std::string TakeUtf8ParseFailure();

// Max receive and send message size, and the interceptor that refuses unparseable requests
// with INVALID_ARGUMENT.
void ApplyServerLimits(grpc::ServerBuilder& builder);

// Max receive and send message size of a channel.
void ApplyChannelLimits(grpc::ChannelArguments& args);

}  // namespace ccsandbox

#endif  // CCSANDBOX_PROTO_GRPC_LIMITS_H_
