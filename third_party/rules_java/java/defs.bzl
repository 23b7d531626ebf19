"""Offline stand-in for rules_java: Bazel 4.2.3 registers JDK toolchains even for C++ builds."""

java_import = native.java_import
java_binary = native.java_binary
java_library = native.java_library
java_toolchain = native.java_toolchain
java_runtime = native.java_runtime
