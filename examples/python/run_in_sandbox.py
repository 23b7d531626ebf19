#!/usr/bin/env python3
"""Runs one command in a ccsandbox session: a minimal client of ccsandbox.v1.SandboxBroker.

    run_in_sandbox.py [--broker ADDRESS] [--proto FILE] WORKDIR -- COMMAND [ARGS...]

Probes the broker, launches a session that binds WORKDIR read-write (the command starts there),
runs COMMAND in it streaming its stdout, stderr and violations, and destroys the session however
the run ends. Exits with the command's exit code, 128+signal when it was killed, 125 when the
broker refused or failed.

The broker's address: --broker, else $CCSANDBOX_BROKER, else the installed service's socket.
The stubs: sandbox_pb2 / sandbox_pb2_grpc when they are importable (generated once, as a real
project would), otherwise generated now into a temporary directory from proto/sandbox.proto with
protoc and grpc_python_plugin (Debian: protobuf-compiler, protobuf-compiler-grpc) or, failing
those, grpcio-tools (`python3 -m grpc_tools.protoc`). Needs grpcio and protobuf.
"""
import argparse
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import uuid

import grpc

DEFAULT_BROKER = "unix:/run/ccsandbox-broker/broker.sock"
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PROTO = os.path.join(HERE, "..", "..", "proto", "sandbox.proto")


def load_stubs(proto):
    """Returns the modules (sandbox_pb2, sandbox_pb2_grpc), generating them when needed."""
    try:
        return importlib.import_module("sandbox_pb2"), importlib.import_module("sandbox_pb2_grpc")
    except ImportError:
        pass
    proto = os.path.abspath(proto)
    plugin = shutil.which("grpc_python_plugin")
    if shutil.which("protoc") and plugin:
        command = ["protoc", "--plugin=protoc-gen-grpc_python=" + plugin]
    else:
        command = [sys.executable, "-m", "grpc_tools.protoc"]
    with tempfile.TemporaryDirectory(prefix="ccsandbox-stubs-") as out:
        command += ["-I" + os.path.dirname(proto), "--python_out=" + out,
                    "--grpc_python_out=" + out, proto]
        if subprocess.run(command).returncode != 0:
            note("could not generate the stubs from " + proto)
            sys.exit(125)
        sys.path.insert(0, out)
        stubs = importlib.import_module("sandbox_pb2"), importlib.import_module("sandbox_pb2_grpc")
        sys.path.remove(out)
    return stubs


def note(text):
    """A line of this client's own, on stderr, apart from the command's output."""
    print("run_in_sandbox: " + text, file=sys.stderr, flush=True)


def run(stub, pb, workdir, argv):
    """Probe, Launch, Exec, Destroy; returns the exit code to leave with."""
    probe = stub.Probe(pb.ProbeRequest(), timeout=30)
    note(probe.status_line)

    spec = pb.SandboxSpec(
        session_id="example-" + uuid.uuid4().hex[:12],
        bind_mounts=[pb.SandboxBindMount(host_path=workdir, guest_path=workdir)],
        guest_workdir=workdir,
    )
    handle = stub.Launch(pb.LaunchRequest(spec=spec), timeout=60)
    note("session %s on %s, %s" % (handle.session_id, pb.SandboxBackend.Name(handle.backend),
                                   pb.SandboxState.Name(handle.state)))
    try:
        code = 125  # the stream ended without saying how the command ended
        events = stub.Exec(pb.ExecRequest(session_id=handle.session_id, argv=argv))
        for event in events:
            kind = event.WhichOneof("event")
            if kind == "stdout":
                sys.stdout.buffer.write(event.stdout)
                sys.stdout.flush()
            elif kind == "stderr":
                sys.stderr.buffer.write(event.stderr)
                sys.stderr.flush()
            elif kind == "violation":
                note("violation %s %s" % (event.violation.action, event.violation.target))
            elif kind == "exit":
                code = event.exit.exit_code
                note("exit %d" % code)
            elif kind == "killed":
                code = 128 + event.killed.signal
                note("killed (%s): %s" % (event.killed.reason, event.killed.detail))
            elif kind == "error":
                note("error %s: %s" % (event.error.code, event.error.message))
        return code
    finally:
        try:
            stub.Destroy(pb.SessionRequest(session_id=handle.session_id), timeout=30)
            note("session %s destroyed" % handle.session_id)
        except grpc.RpcError as e:
            note("Destroy: %s: %s" % (e.code().name, e.details()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--broker", default=os.environ.get("CCSANDBOX_BROKER") or DEFAULT_BROKER,
                        help="unix:PATH or a socket's path (default: $CCSANDBOX_BROKER, else "
                        + DEFAULT_BROKER + ")")
    parser.add_argument("--proto", default=DEFAULT_PROTO,
                        help="proto/sandbox.proto, to generate the stubs from when they are not "
                        "importable")
    parser.add_argument("workdir", help="directory to bind read-write and run the command in")
    parser.add_argument("command", nargs="+", help="-- COMMAND [ARGS...]")
    args = parser.parse_args()

    address = args.broker if ":" in args.broker else "unix:" + args.broker
    workdir = os.path.abspath(args.workdir)  # the broker refuses relative paths
    pb, pb_grpc = load_stubs(args.proto)
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.SandboxBrokerStub(channel)
        try:
            return run(stub, pb, workdir, args.command)
        except grpc.RpcError as e:
            note("%s: %s" % (e.code().name, e.details()))
            return 125
        except KeyboardInterrupt:  # the cancelled Exec ends the run; the session is destroyed
            return 130


if __name__ == "__main__":
    sys.exit(main())
