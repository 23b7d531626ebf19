"""A generic gRPC client: it has none of the project's .proto files, and learns everything it
calls through server reflection, as grpcurl or a reflection client of any language would.

Usage:
  reflection_client.py broker unix:BROKER.sock WORKDIR
      lists the services (reflection v1 and v1alpha), fetches the descriptors of
      ccsandbox.v1.SandboxBroker and grpc.health.v1.Health through reflection v1, then calls
      Probe, Launch (a native session binding WORKDIR), Exec (printing its stdout and exit
      code), Destroy and Health/Check.
  reflection_client.py launcher unix:LAUNCHER.sock
      the same discovery for ccsandbox.v1.SandboxLauncher, then Probe and Health/Check.
  reflection_client.py refused unix:SOCKET
      what a caller the daemon refuses gets from health and both reflections.

Every result is printed as one line "KEY VALUE" (VALUE is JSON), for the test to check.
Only grpcio and protobuf are used: the reflection messages' descriptors are built here, in code
(the messages of v1 and v1alpha are the same on the wire, so one set serves both).
"""
import base64
import json
import sys

import grpc
from google.protobuf import descriptor_pb2
from google.protobuf import descriptor_pool
from google.protobuf import json_format
from google.protobuf import message_factory

V1 = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
V1ALPHA = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
HEALTH = "grpc.health.v1.Health"

# grpc.reflection.v1's messages: name -> fields (name, number, type, oneof or None, repeated).
_REFLECTION_MESSAGES = {
    "ServerReflectionRequest": [
        ("host", 1, "string", None, False),
        ("file_by_filename", 3, "string", "message_request", False),
        ("file_containing_symbol", 4, "string", "message_request", False),
        ("file_containing_extension", 5, "ExtensionRequest", "message_request", False),
        ("all_extension_numbers_of_type", 6, "string", "message_request", False),
        ("list_services", 7, "string", "message_request", False),
    ],
    "ExtensionRequest": [
        ("containing_type", 1, "string", None, False),
        ("extension_number", 2, "int32", None, False),
    ],
    "ServerReflectionResponse": [
        ("valid_host", 1, "string", None, False),
        ("original_request", 2, "ServerReflectionRequest", None, False),
        ("file_descriptor_response", 4, "FileDescriptorResponse", "message_response", False),
        ("all_extension_numbers_response", 5, "ExtensionNumberResponse", "message_response",
         False),
        ("list_services_response", 6, "ListServiceResponse", "message_response", False),
        ("error_response", 7, "ErrorResponse", "message_response", False),
    ],
    "FileDescriptorResponse": [("file_descriptor_proto", 1, "bytes", None, True)],
    "ExtensionNumberResponse": [
        ("base_type_name", 1, "string", None, False),
        ("extension_number", 2, "int32", None, True),
    ],
    "ListServiceResponse": [("service", 1, "ServiceResponse", None, True)],
    "ServiceResponse": [("name", 1, "string", None, False)],
    "ErrorResponse": [
        ("error_code", 1, "int32", None, False),
        ("error_message", 2, "string", None, False),
    ],
}

_SCALARS = {
    "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    "bytes": descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
    "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
}


def _message_class(pool, full_name):
    desc = pool.FindMessageTypeByName(full_name)
    get_class = getattr(message_factory, "GetMessageClass", None)  # protobuf >= 4.22
    return get_class(desc) if get_class else message_factory.MessageFactory(pool).GetPrototype(desc)


def _reflection_messages():
    """The request and response classes of grpc.reflection.v1, from descriptors built here."""
    file = descriptor_pb2.FileDescriptorProto(name="client/reflection_v1.proto",
                                              package="grpc.reflection.v1", syntax="proto3")
    for name, fields in _REFLECTION_MESSAGES.items():
        message = file.message_type.add(name=name)
        oneofs = []
        for field_name, number, kind, oneof, repeated in fields:
            field = message.field.add(name=field_name, number=number)
            field.label = (descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED if repeated else
                           descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
            if kind in _SCALARS:
                field.type = _SCALARS[kind]
            else:
                field.type = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
                field.type_name = ".grpc.reflection.v1." + kind
            if oneof is not None:
                if oneof not in oneofs:
                    oneofs.append(oneof)
                    message.oneof_decl.add(name=oneof)
                field.oneof_index = oneofs.index(oneof)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return (_message_class(pool, "grpc.reflection.v1.ServerReflectionRequest"),
            _message_class(pool, "grpc.reflection.v1.ServerReflectionResponse"))


Request, Response = _reflection_messages()


class ReflectionError(Exception):
    pass


class Server:
    """One daemon as a generic client sees it: a channel, and a pool of what it has learnt."""

    def __init__(self, address):
        self.channel = grpc.insecure_channel(address)
        self.pool = descriptor_pool.DescriptorPool()
        self.files = {}  # name -> FileDescriptorProto, every file received

    def reflect(self, request, method=V1):
        """One request on a reflection stream; error_response raises ReflectionError."""
        call = self.channel.stream_stream(method, request_serializer=Request.SerializeToString,
                                          response_deserializer=Response.FromString)
        responses = list(call(iter([request]), timeout=30))
        if len(responses) != 1:
            raise ReflectionError("%d responses to one request" % len(responses))
        response = responses[0]
        if response.HasField("error_response"):
            raise ReflectionError("%d %s" % (response.error_response.error_code,
                                             response.error_response.error_message))
        return response

    def list_services(self, method=V1):
        response = self.reflect(Request(list_services=""), method)
        return sorted(s.name for s in response.list_services_response.service)

    def _learn(self, response):
        """Adds the files of a file_descriptor_response to the pool, dependencies first."""
        names = []
        for data in response.file_descriptor_response.file_descriptor_proto:
            file = descriptor_pb2.FileDescriptorProto.FromString(data)
            names.append(file.name)
            self.files.setdefault(file.name, file)
        for name in names:
            self._add(name)
        return names

    def _add(self, name):
        try:
            self.pool.FindFileByName(name)
            return
        except KeyError:
            pass
        if name not in self.files:  # a dependency the answer left out: ask for it by name
            self.by_filename(name)
        for dependency in self.files[name].dependency:
            self._add(dependency)
        self.pool.Add(self.files[name])

    def by_filename(self, name):
        """Fetches the file `name` (and its dependencies): the names received."""
        return self._learn(self.reflect(Request(file_by_filename=name)))

    def resolve(self, symbol):
        """Fetches the file defining `symbol` (and its dependencies): the names received."""
        return self._learn(self.reflect(Request(file_containing_symbol=symbol)))

    def call(self, service, method, request_json, timeout=60):
        """Calls service/method with a request given as proto3 JSON; unary methods return the
        response as a dict, server-streaming ones a list of dicts."""
        method_desc = self.pool.FindServiceByName(service).FindMethodByName(method)
        shape = descriptor_pb2.MethodDescriptorProto()
        method_desc.CopyToProto(shape)
        request_class = _message_class(self.pool, method_desc.input_type.full_name)
        response_class = _message_class(self.pool, method_desc.output_type.full_name)
        request = json_format.ParseDict(request_json, request_class())
        path = "/%s/%s" % (service, method)
        kwargs = dict(request_serializer=request_class.SerializeToString,
                      response_deserializer=response_class.FromString)
        if shape.client_streaming:
            raise ReflectionError("%s: client streaming is not needed here" % path)
        if shape.server_streaming:
            stream = self.channel.unary_stream(path, **kwargs)(request, timeout=timeout)
            return [json_format.MessageToDict(m) for m in stream]
        return json_format.MessageToDict(self.channel.unary_unary(path, **kwargs)(request,
                                                                                 timeout=timeout))


def say(key, value):
    print(key, json.dumps(value, sort_keys=True), flush=True)


def discover(server, service):
    """Both reflections' service lists, then `service` and health resolved through v1."""
    say("v1.services", server.list_services(V1))
    say("v1alpha.services", server.list_services(V1ALPHA))
    say("resolved." + service, server.resolve(service))
    say("resolved." + HEALTH, server.resolve(HEALTH))
    say("methods." + service,
        [m.name for m in server.pool.FindServiceByName(service).methods])
    first = server.resolve(service)[0]
    say("by_filename", server.by_filename(first)[0] == first)
    try:
        server.resolve("no.such.Symbol")
        say("unknown_symbol", "found")
    except ReflectionError as e:
        say("unknown_symbol", str(e))


def health(server, names):
    for name in names:
        say("health[%s]" % name, server.call(HEALTH, "Check", {"service": name}))


def drive_broker(address, workdir):
    broker = Server(address)
    service = "ccsandbox.v1.SandboxBroker"
    discover(broker, service)
    probe = broker.call(service, "Probe", {})
    say("probe.statusLine", probe.get("statusLine"))
    handle = broker.call(service, "Launch", {
        "backend": "native",
        "spec": {
            "sessionId": "reflection-client",
            "bindMounts": [{"hostPath": workdir, "guestPath": workdir}],
            "guestWorkdir": workdir,
            "writeDenyPatterns": {},
        },
    })
    say("launch.backend", handle.get("backend"))
    events = broker.call(service, "Exec", {
        "sessionId": handle["sessionId"],
        "argv": ["sh", "-c", "echo from-reflection; exit 7"],
    })
    say("exec.kinds", [k for e in events for k in e if k not in ("sessionId", "backend")])
    # bytes fields are base64 in proto3 JSON.
    stdout = b"".join(base64.b64decode(e["stdout"]) for e in events if "stdout" in e)
    say("exec.stdout", stdout.decode())
    say("exec.exitCode", [e["exit"].get("exitCode", 0) for e in events if "exit" in e])
    destroyed = broker.call(service, "Destroy", {"sessionId": handle["sessionId"]})
    say("destroy.state", destroyed.get("state"))
    health(broker, ["", service])


def drive_launcher(address):
    launcher = Server(address)
    service = "ccsandbox.v1.SandboxLauncher"
    discover(launcher, service)
    say("probe.fields", sorted(launcher.call(service, "Probe", {}).keys()))
    health(launcher, ["", service])


def refused(address):
    """What each standard service answers a refused caller (the status code's name)."""
    channel = grpc.insecure_channel(address)
    check = channel.unary_unary("/" + HEALTH + "/Check")
    for key, attempt in [
            ("health", lambda: check(b"", timeout=10)),
            ("v1", lambda: list(channel.stream_stream(V1)(iter([b"\x3a\x00"]), timeout=10))),
            ("v1alpha",
             lambda: list(channel.stream_stream(V1ALPHA)(iter([b"\x3a\x00"]), timeout=10))),
    ]:
        try:
            attempt()
            say("refused." + key, "OK")
        except grpc.RpcError as e:
            say("refused." + key, e.code().name)


def main():
    mode, address = sys.argv[1], sys.argv[2]
    if mode == "broker":
        drive_broker(address, sys.argv[3])
    elif mode == "launcher":
        drive_launcher(address)
    elif mode == "refused":
        refused(address)
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
