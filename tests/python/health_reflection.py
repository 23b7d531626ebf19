"""Checks that the broker is grpcurl-compatible: grpc.health.v1 answers SERVING and server
reflection (v1alpha) lists the SandboxBroker service. Raw bytes, no generated stubs.

Usage: health_reflection.py unix:BROKER.sock
"""
import sys

import grpc

channel = grpc.insecure_channel(sys.argv[1])
check = channel.unary_unary("/grpc.health.v1.Health/Check")
# HealthCheckResponse{status: SERVING(1)} is field 1, varint 1.
print("health", check(b"", timeout=10).hex())
reflect = channel.stream_stream("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
# ServerReflectionRequest{list_services: ""} is field 7, length-delimited, empty.
replies = reflect(iter([b"\x3a\x00"]), timeout=10)
names = b"".join(replies)
print("reflection", "ccsandbox.v1.SandboxBroker" in names.decode("latin-1"))
