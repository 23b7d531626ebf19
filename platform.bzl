"""Where each piece builds (issue 19; docs/macos.md "Building for macOS").

A target that needs the Linux kernel (namespaces, pidfds, Landlock, seccomp, cgroups, openat2)
says `target_compatible_with = LINUX_ONLY`: on a macOS target platform Bazel skips it, and every
target that depends on it, instead of failing to compile it.
"""

LINUX_ONLY = ["@platforms//os:linux"]
