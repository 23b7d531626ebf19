"""End-to-end tests against the real daemons: the daemons as data, outside Bazel's sandbox."""

DAEMONS = [
    "//launcher:sandbox_launcherd",
    "//broker:sandbox_brokerd",
    "//broker:sandboxctl",
]

def e2e_test(name, size = "medium", data = [], deps = []):
    """A cc_test NAME.cc with the daemon fixture, the three daemons and gtest_main."""
    native.cc_test(
        name = name,
        size = size,
        srcs = [name + ".cc"],
        data = DAEMONS + data,
        # They fork processes as other uids and inspect the host's /proc.
        tags = ["no-sandbox"],
        deps = [
            ":daemon_fixture",
            "@system//:gtest_main",
        ] + deps,
    )
