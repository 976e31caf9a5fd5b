#!/usr/bin/env python3
"""docker-compose.yml must start the container bin/code-sandbox starts.

Runs `code-sandbox --dry-run` (a fake engine on PATH, so nothing starts),
parses both docker-compose.yml and docker-compose.override.example.yml, and
fails on every hardening setting where they disagree: read-only root,
capabilities, no-new-privileges, limits, tmpfs mounts, the gate's
resolv.conf, the workspace and home mounts, the environment the launcher
sets. The override may only add volumes, each with an explicit mode. With
--self-test it shows that a compose file with one weakened setting fails.
TAP output."""
import copy
import re
import shutil
import os
import subprocess
import sys
import tempfile

import yaml

SRC = os.environ.get("SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
n = 0
failed = 0


def tap(good, name):
    global n, failed
    n += 1
    if not good:
        failed += 1
    print(("ok" if good else "not ok") + f" {n} - {name}")


def launcher_args():
    """The launcher's run arguments, one per line, from --dry-run."""
    with tempfile.TemporaryDirectory(prefix="cs-compose-check.") as t:
        os.makedirs(f"{t}/bin")
        os.makedirs(f"{t}/proj")
        with open(f"{t}/bin/podman", "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(f"{t}/bin/podman", 0o755)
        env = {"PATH": f"{t}/bin:/usr/bin:/bin", "HOME": f"{t}/home", "XDG_CONFIG_HOME": f"{t}/cfg",
               "XDG_STATE_HOME": f"{t}/state", "CONTAINER_ENGINE": "podman", "HOST_UID": "4242",
               "HOST_GID": "4242", "CODE_SANDBOX_DNS": "198.51.100.53", "ANTHROPIC_API_KEY": "x",
               "EXTRA_ALLOWED_DOMAINS": "example.org", "CODE_SANDBOX_PROFILE": "strict",
               # the rootful form, whoever runs the check (docker-compose.yml
               # has no rootless variant: README.md, "Rootless engines")
               "CODE_SANDBOX_ROOTLESS": "0"}
        out = subprocess.run([f"{SRC}/bin/code-sandbox", "--dry-run", "--no-daemon", "--", "true"], cwd=f"{t}/proj",
                             env=env, check=True, capture_output=True, text=True).stdout
        lines = out.splitlines()
        # the engine by its absolute path (SECURITY.md, "The launcher's own commands")
        assert lines[0] == os.path.realpath(f"{t}/bin/podman") and lines[1] == "run", lines[:2]
    return lines[2:]


def flags(args):
    """--key=value flags into a dict of lists."""
    d = {}
    for a in args:
        if a.startswith("--"):
            k, _, v = a[2:].partition("=")
            d.setdefault(k, []).append(v)
    return d


def size_bytes(s):
    s = str(s).strip().lower().rstrip("b")
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(float(s[:-1]) * mult[s[-1]]) if s and s[-1] in mult else int(s)


def compare(svc, L, label=""):
    """Checks one compose service against the launcher's flags."""
    p = label
    tap(svc.get("read_only") is True and "read-only" in L, f"{p}read-only root in both")
    tap(svc.get("cap_drop") == ["ALL"] and L.get("cap-drop") == ["ALL"], f"{p}cap_drop ALL in both")
    tap(sorted(svc.get("cap_add", [])) == sorted(L.get("cap-add", [])),
        f"{p}the same capabilities ({sorted(svc.get('cap_add', []))} vs {sorted(L.get('cap-add', []))})")
    tap(sorted(svc.get("security_opt", [])) == sorted(L.get("security-opt", [])), f"{p}the same security options")
    tap(str(svc.get("pids_limit")) == L.get("pids-limit", [""])[0], f"{p}the same pids limit")
    tap(size_bytes(svc.get("mem_limit", 0)) == size_bytes(L.get("memory", ["0"])[0]), f"{p}the same memory limit")
    lc, cc = float(L.get("cpus", ["0"])[0]), float(svc.get("cpus", 0))
    tap(lc == cc or (lc == os.cpu_count() and lc < cc), f"{p}the same cpu limit ({cc} vs {lc})")
    # ${VAR:-default}: compose's default is what the launcher gives unset
    dflt = lambda v: re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", v)
    ct = sorted(dflt(t) for t in svc.get("tmpfs", []))
    tap(ct == sorted(L.get("tmpfs", [])), f"{p}the same tmpfs mounts ({ct} vs {sorted(L.get('tmpfs', []))})")
    tap(all("size=" in t for t in ct), f"{p}every tmpfs has a size")
    for k in ("privileged", "pid", "ipc", "uts", "userns_mode", "devices", "network_mode"):
        tap(k not in svc or (k == "privileged" and svc[k] is False), f"{p}compose sets no {k}")
    tap(not any(k in L for k in ("privileged", "device", "pid", "ipc", "uts", "userns")), f"{p}launcher sets none either")
    tap(svc.get("hostname") == L.get("hostname", [""])[0], f"{p}the same hostname")
    tap(svc.get("working_dir") == L.get("workdir", [""])[0], f"{p}the same working directory")
    # ${VAR:?message} may hold colons: a placeholder stands for it.
    plain = lambda v: re.sub(r"\$\{[^}]*\}", "VAR", v)
    targets = lambda vols: sorted(":".join(plain(v).split(":")[1:]) for v in vols)
    cv, lv = targets(svc.get("volumes", [])), targets(L.get("volume", []))
    tap(cv == lv, f"{p}the same mount targets and modes ({cv} vs {lv})")
    tap(any(v.startswith("home:") or v.split(":")[0] == "home" for v in svc.get("volumes", [])),
        f"{p}the home is a named volume")
    env = svc.get("environment", {})
    lenv = {e.partition("=")[0] for e in L.get("env", [])} - {"TERM"}
    missing = sorted(lenv - set(env))
    tap(not missing, f"{p}compose sets every variable the launcher sets (missing: {missing})")
    tap(svc.get("stdin_open") is True and "interactive" in L, f"{p}stdin open in both")
    tap(not any("docker.sock" in str(v) or "podman.sock" in str(v) for v in svc.get("volumes", [])),
        f"{p}no engine socket mounted")
    rc = [v for v in svc.get("volumes", []) if ":/etc/resolv.conf" in v]
    if rc:
        path = os.path.join(SRC, rc[0].split(":")[0])
        with open(path) as f:
            ns = [l.split()[1] for l in f if l.startswith("nameserver")]
        tap(ns == ["127.0.0.1"], f"{p}the compose resolv.conf names only the DNS gate ({ns})")
    else:
        tap(False, f"{p}compose mounts a gate-only resolv.conf")


def check_override(ov):
    svc = ov.get("services", {}).get("sandbox", {})
    tap(set(ov) == {"services"} and set(ov["services"]) == {"sandbox"}, "override: only the sandbox service")
    tap(set(svc) == {"volumes"}, f"override: adds only volumes (keys {sorted(svc)})")
    vols = svc.get("volumes", [])
    tap(len(vols) >= 2 and {v.rsplit(":", 1)[1] for v in vols} == {"ro", "rw"},
        "override: examples of both rw and ro, each explicit")
    tap(all(re.sub(r"\$\{[^}]*\}", "VAR", v).split(":")[1].startswith(("/mnt/", "/opt/", "/workspace/")) for v in vols),
        "override: targets under /mnt, /opt or /workspace")
    bad = [v for v in vols if any(s in v for s in (".ssh", ".aws", ".kube", ".gnupg", ".config/gh", ".sock"))]
    tap(not bad, f"override: no credential store or socket ({bad})")


def main():
    global n, failed
    self_test = "--self-test" in sys.argv
    with open(os.path.join(SRC, "docker-compose.yml")) as f:
        comp = yaml.safe_load(f)
    with open(os.path.join(SRC, "docker-compose.override.example.yml")) as f:
        ov = yaml.safe_load(f)
    L = flags(launcher_args())
    svc = comp["services"]["sandbox"]
    if not self_test:
        compare(svc, L)
        check_override(ov)
        dc = shutil.which("docker-compose")
        if dc:
            env = dict(os.environ, CODE_SANDBOX_WORKSPACE="/tmp", HOST_UID="4242", HOST_GID="4242", HOME="/tmp")
            r = subprocess.run([dc, "-f", "docker-compose.yml", "-f", "docker-compose.override.example.yml", "config", "-q"],
                               cwd=SRC, env=env, capture_output=True, text=True)
            tap(r.returncode == 0, "docker-compose accepts both files" + (f" ({r.stderr.strip()})" if r.returncode else ""))
        else:
            n += 1
            print(f"ok {n} - docker-compose accepts both files # SKIP docker-compose not installed")
    else:
        # Each mutation must make the comparison fail.
        mutations = {
            "read_only false": lambda s: s.__setitem__("read_only", False),
            "one more capability": lambda s: s["cap_add"].append("SYS_ADMIN"),
            "one capability fewer": lambda s: s["cap_add"].remove("KILL"),
            "no no-new-privileges": lambda s: s.__setitem__("security_opt", []),
            "privileged": lambda s: s.__setitem__("privileged", True),
            "host network": lambda s: s.__setitem__("network_mode", "host"),
            "bigger pids limit": lambda s: s.__setitem__("pids_limit", 100000),
            "engine socket": lambda s: s["volumes"].append("/var/run/docker.sock:/var/run/docker.sock"),
            "no HOST_UID": lambda s: s["environment"].pop("HOST_UID"),
            "no gate tmpfs": lambda s: s["tmpfs"].pop(),
            "no /tmp size": lambda s: s.__setitem__("tmpfs", [re.sub(r",size=[^,]*", "", t) for t in s["tmpfs"]]),
        }
        results = []
        for name, mut in mutations.items():
            s = copy.deepcopy(svc)
            mut(s)
            n0, f0 = n, failed
            saved = sys.stdout
            sys.stdout = open(os.devnull, "w")
            try:
                compare(s, L)
            finally:
                sys.stdout.close()
                sys.stdout = saved
            caught = failed > f0
            n, failed = n0, f0
            results.append((name, caught))
        for name, caught in results:
            tap(caught, f"self-test: '{name}' is caught")
        bad_ov = copy.deepcopy(ov)
        bad_ov["services"]["sandbox"]["privileged"] = True
        n0, f0 = n, failed
        saved = sys.stdout
        sys.stdout = open(os.devnull, "w")
        try:
            check_override(bad_ov)
        finally:
            sys.stdout.close()
            sys.stdout = saved
        caught = failed > f0
        n, failed = n0, f0
        tap(caught, "self-test: an override that changes hardening is caught")
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
