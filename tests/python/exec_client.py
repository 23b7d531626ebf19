"""An Exec client that reads only when told to: a stalled (or vanished) client on demand.

Usage: exec_client.py STUBS_DIR unix:BROKER.sock SESSION_ID TIMEOUT_MS ARGV...
Opens the Exec stream, prints "opened", then waits for one line on stdin:
  read    reads the whole stream and prints one JSON summary line
  cancel  cancels the call and exits
  (EOF)   exits without a word, as a client that vanishes
Until that line comes it reads nothing: the broker's writes to it back up.
"""
import json
import sys

import grpc

sys.path.insert(0, sys.argv[1])
from proto import sandbox_pb2 as pb  # noqa: E402

SERVICE = "/ccsandbox.v1.SandboxBroker/"


def main():
    channel = grpc.insecure_channel(sys.argv[2])
    execute = channel.unary_stream(SERVICE + "Exec",
                                   request_serializer=lambda m: m.SerializeToString(),
                                   response_deserializer=pb.SandboxEvent.FromString)
    request = pb.ExecRequest(session_id=sys.argv[3], argv=sys.argv[5:],
                             timeout_ms=int(sys.argv[4]))
    call = execute(request)
    print("opened", flush=True)
    command = sys.stdin.readline().strip()
    if command != "read":
        if command == "cancel":
            call.cancel()
        return
    counts = {}
    stdout_bytes = 0
    last = None
    summary = {}
    try:
        for event in call:
            kind = event.WhichOneof("event")
            counts[kind] = counts.get(kind, 0) + 1
            last = kind
            if kind == "stdout":
                stdout_bytes += len(event.stdout)
            elif kind == "killed":
                summary["killedReason"] = event.killed.reason
                summary["killedDetail"] = event.killed.detail
            elif kind == "exit":
                summary["exitCode"] = event.exit.exit_code
        summary["status"] = "OK"
    except grpc.RpcError as e:
        summary["status"] = e.code().name
        summary["details"] = e.details()
    summary.update({"counts": counts, "last": last, "stdoutBytes": stdout_bytes})
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
