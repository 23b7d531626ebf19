"""A second, independent gRPC client (Python grpcio) for the broker's public API.

Usage: client.py STUBS_DIR unix:BROKER.sock WORKDIR
Calls Probe, Launch, Exec (printing every event as one JSON line), GetSession and Destroy,
and prints a final JSON summary line. Uses only the generated message classes (protoc
--python_out) and grpcio's generic stubs, like any third-party client would.
"""
import json
import sys

import grpc
from google.protobuf import json_format

sys.path.insert(0, sys.argv[1])
from proto import sandbox_pb2 as pb  # noqa: E402

SERVICE = "/ccsandbox.v1.SandboxBroker/"


def unary(channel, method, request, response_type):
    call = channel.unary_unary(SERVICE + method,
                               request_serializer=lambda m: m.SerializeToString(),
                               response_deserializer=response_type.FromString)
    return call(request, timeout=30)


def main():
    channel = grpc.insecure_channel(sys.argv[2])
    workdir = sys.argv[3]
    probe = unary(channel, "Probe", pb.ProbeRequest(), pb.ProbeResponse)
    spec = pb.SandboxSpec(session_id="python-client",
                          bind_mounts=[pb.SandboxBindMount(host_path=workdir, guest_path=workdir)],
                          guest_workdir=workdir,
                          write_deny_patterns=pb.FilenameDenyPatterns())
    handle = unary(channel, "Launch", pb.LaunchRequest(spec=spec), pb.SandboxHandle)
    execute = channel.unary_stream(SERVICE + "Exec",
                                   request_serializer=lambda m: m.SerializeToString(),
                                   response_deserializer=pb.SandboxEvent.FromString)
    kinds = []
    output = b""
    exit_code = None
    for event in execute(pb.ExecRequest(session_id=handle.session_id,
                                        argv=["sh", "-c", "cat; echo from-python; exit 5"],
                                        stdin=b"stdin-bytes "), timeout=30):
        kinds.append(event.WhichOneof("event"))
        if event.HasField("stdout"):
            output += event.stdout
        if event.HasField("exit"):
            exit_code = event.exit.exit_code
    got = unary(channel, "GetSession", pb.SessionRequest(session_id=handle.session_id),
                pb.SandboxHandle)
    destroyed = unary(channel, "Destroy", pb.SessionRequest(session_id=handle.session_id),
                      pb.SandboxHandle)
    try:
        unary(channel, "GetSession", pb.SessionRequest(session_id=handle.session_id),
              pb.SandboxHandle)
        after = "found"
    except grpc.RpcError as e:
        after = e.code().name
    print(json.dumps({
        "statusLine": probe.status_line,
        "backend": pb.SandboxBackend.Name(handle.backend),
        "state": pb.SandboxState.Name(handle.state),
        "stateAfterExec": pb.SandboxState.Name(got.state),
        "destroyedState": pb.SandboxState.Name(destroyed.state),
        "afterDestroy": after,
        "kinds": kinds,
        "stdout": output.decode(),
        "exitCode": exit_code,
        "details": json_format.MessageToDict(handle.details),
    }))


if __name__ == "__main__":
    main()
