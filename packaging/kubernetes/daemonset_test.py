#!/usr/bin/python3
"""What can be checked of the DaemonSet without a cluster: it is valid YAML, and it is the shape
docs/fleet.md describes, consistent with itself and with the daemons' flags.

Usage: daemonset_test.py packaging/kubernetes/daemonset.yaml docs/flags.md
"""
import re
import sys

import yaml

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def flags(container):
    """--name=value arguments of a container, as a dict."""
    return dict(re.fullmatch(r"--([a-z-]+)=(.*)", a).groups() for a in container["args"])


def documented_flags(flags_md, binary):
    """The flags docs/flags.md lists in the section of `binary`."""
    section = re.search(r"^## %s\b.*?(?=^## |\Z)" % binary, flags_md, re.M | re.S).group(0)
    return set(re.findall(r"^\| `--([a-z-]+)`", section, re.M))


def mounts(container):
    return {m["mountPath"]: m["name"] for m in container["volumeMounts"]}


def main(manifest_path, flags_path):
    with open(manifest_path) as f:
        documents = list(yaml.safe_load_all(f))
    with open(flags_path) as f:
        flags_md = f.read()
    kinds = [d["kind"] for d in documents]
    check(kinds == ["Namespace", "DaemonSet"], "documents: %s" % kinds)
    daemonset = documents[kinds.index("DaemonSet")]
    pod = daemonset["spec"]["template"]["spec"]
    check(daemonset["spec"]["selector"]["matchLabels"].items() <=
          daemonset["spec"]["template"]["metadata"]["labels"].items(),
          "the selector does not match the pod's labels")
    check(pod.get("shareProcessNamespace") is True,
          "the daemons refuse peers in another pid namespace: shareProcessNamespace must be true")
    containers = {c["name"]: c for c in pod["containers"]}
    check(sorted(containers) == ["broker", "launcher"], "containers: %s" % sorted(containers))
    launcher, broker = containers["launcher"], containers["broker"]

    check(launcher["command"][0].endswith("/sandbox_launcherd"), "launcher command")
    check(broker["command"][0].endswith("/sandbox_brokerd"), "broker command")
    lsec, bsec = launcher["securityContext"], broker["securityContext"]
    check(lsec.get("privileged") is True and lsec.get("runAsUser") == 0,
          "the launcher must be privileged root")
    check(lsec.get("seccompProfile", {}).get("type") == "Unconfined",
          "the launcher's seccomp profile must let bwrap unshare and mount")
    check(bsec.get("runAsUser", 0) != 0 and bsec.get("runAsNonRoot") is True,
          "the broker must run as a non-root user")
    check(not bsec.get("privileged") and bsec.get("allowPrivilegeEscalation") is False and
          bsec.get("capabilities", {}).get("drop") == ["ALL"], "the broker must hold no privilege")

    lflags, bflags = flags(launcher), flags(broker)
    for name, given, binary in [("launcher", lflags, "sandbox_launcherd"),
                                ("broker", bflags, "sandbox_brokerd")]:
        unknown = set(given) - documented_flags(flags_md, binary)
        check(not unknown, "%s flags not in docs/flags.md: %s" % (name, sorted(unknown)))
    check(bflags.get("launcher") == "unix:" + lflags.get("socket", ""),
          "the broker's --launcher is not the launcher's --socket")
    check(lflags.get("allowed-uids") == str(bsec.get("runAsUser")),
          "the launcher's --allowed-uids is not the broker's uid")
    check(lflags.get("socket-group") == str(bsec.get("runAsGroup")) and
          lflags.get("socket-mode") == "0660", "the broker's group cannot open the launcher socket")
    check(bflags.get("listen", "").startswith("unix:"), "the broker listens on a Unix socket only")

    # Every directory one daemon names and the other uses is the same volume at the same path in
    # both: the launcher's socket, the broker's socket and session proxy sockets (bound into
    # sandboxes by the launcher), the trees sessions bind.
    volumes = {v["name"] for v in pod["volumes"]}
    lmounts, bmounts = mounts(launcher), mounts(broker)
    for name, m in [("launcher", lmounts), ("broker", bmounts)]:
        check(set(m.values()) <= volumes, "%s mounts an undeclared volume" % name)
    check(lmounts == bmounts, "the two containers see different trees: %s vs %s" %
          (lmounts, bmounts))
    for path in [lflags.get("socket", ""), bflags.get("listen", "")[len("unix:"):],
                 bflags.get("runtime-dir", "")]:
        check(any(path.startswith(p + "/") for p in lmounts), "%r is on no shared volume" % path)

    for failure in failures:
        print("FAIL:", failure)
    print("%d documents, %d failures" % (len(documents), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
