"""Checks that the broker is grpcurl-compatible: grpc.health.v1 answers SERVING and server
reflection, v1alpha and v1, lists the SandboxBroker service. Raw bytes, no generated stubs
(tests/python/reflection_client.py goes further: descriptors through reflection, then calls).

Usage: health_reflection.py unix:BROKER.sock
"""
import sys

import grpc

channel = grpc.insecure_channel(sys.argv[1])
check = channel.unary_unary("/grpc.health.v1.Health/Check")
# HealthCheckResponse{status: SERVING(1)} is field 1, varint 1.
print("health", check(b"", timeout=10).hex())
for version, key in [("v1alpha", "reflection"), ("v1", "reflection_v1")]:
    reflect = channel.stream_stream(
        "/grpc.reflection.%s.ServerReflection/ServerReflectionInfo" % version)
    # ServerReflectionRequest{list_services: ""} is field 7, length-delimited, empty.
    replies = reflect(iter([b"\x3a\x00"]), timeout=10)
    names = b"".join(replies)
    print(key, "ccsandbox.v1.SandboxBroker" in names.decode("latin-1"))
