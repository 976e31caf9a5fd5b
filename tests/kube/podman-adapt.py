#!/usr/bin/env python3
"""Turns the Pod that `code-sandbox kube` prints into what podman 4.3's
`kube play` can run on this machine, changing only what podman does not
implement the Kubernetes way (measured, see docs/kubernetes.md "Tested with
podman kube play"), and prints every change on stderr:

  - configMap `subPath` and `items` are ignored by podman (the whole map is
    mounted as a directory): the agent's /etc/resolv.conf becomes a hostPath
    file holding the ConfigMap's resolv.conf;
  - `dnsConfig` gives no resolv.conf on `--network none`: the sidecar gets a
    hostPath /etc/resolv.conf written from the pod's dnsConfig, as kubelet
    writes it;
  - an optional Secret that does not exist fails the play: the credentials
    volume becomes a hostPath directory of test credentials;
  - the workspace (PVC or emptyDir) becomes a hostPath directory the test
    prepared; stdin/tty are dropped (no terminal in CI);
  - no Job and no native sidecar: a Job's pod template becomes a Pod, its
    native sidecar a regular container, and init containers that use the
    sidecar (they mount the socket: the clone through the git relay) regular
    containers too, since podman runs init containers before any other; the
    test then starts the containers in the Kubernetes order (sidecar, its
    startupProbe's command until it succeeds, each such init container to
    its exit, the agent). The startupProbe is removed (podman 4.3 ignores
    it); its command is written to WORKDIR/startup-probe.json.

Everything else (security contexts, capabilities, env, args, other volumes,
the ConfigMap) is passed through untouched.

  podman-adapt.py IN OUT WORKDIR WORKSPACE CREDENTIALS
"""
import json
import os
import sys

import yaml


def log(msg):
    print(f"podman-adapt: {msg}", file=sys.stderr)


def main():
    src, dst, workdir, workspace, creds = sys.argv[1:6]
    docs = [d for d in yaml.safe_load_all(open(src)) if d]
    cm = next(d for d in docs if d["kind"] == "ConfigMap")
    job = next((d for d in docs if d["kind"] == "Job"), None)
    if job:
        # podman 4.3 plays no Job: the Job's pod template becomes a Pod.
        spec = job["spec"]["template"]["spec"]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": job["metadata"], "spec": spec}
        docs[docs.index(job)] = pod
        log("Job -> its pod template as a Pod")
    pod = next(d for d in docs if d["kind"] == "Pod")
    spec = pod["spec"]
    # No native sidecar either: it (restartPolicy: Always) becomes a regular
    # container, and so do the init containers that need it.
    inits = spec.get("initContainers", [])
    native = [c for c in inits if c.get("restartPolicy") == "Always"]
    if native:
        relayed = [c for c in inits if c not in native and
                   any(m["name"] == "execd-socket" for m in c.get("volumeMounts", []))]
        spec["initContainers"] = [c for c in inits if c not in native and c not in relayed]
        if not spec["initContainers"]:
            del spec["initContainers"]
        for c in native:
            del c["restartPolicy"]
            probe = c.pop("startupProbe", None)
            if probe:
                with open(f"{workdir}/startup-probe.json", "w") as f:
                    json.dump(probe["exec"]["command"], f)
                log(f"{c['name']}: startupProbe removed, its command in {workdir}/startup-probe.json")
        spec["containers"] = native + relayed + spec["containers"]
        log("native sidecar(s) %s and the init container(s) using it %s -> containers "
            "(the test starts them in the Kubernetes order)"
            % (", ".join(c["name"] for c in native), ", ".join(c["name"] for c in relayed) or "none"))
    vols = {v["name"]: v for v in spec["volumes"]}

    agent_resolv = f"{workdir}/agent-resolv.conf"
    with open(agent_resolv, "w") as f:
        f.write(cm["data"]["resolv.conf"])
    vols["agent-resolv"].clear()
    vols["agent-resolv"].update(
        {"name": "agent-resolv", "hostPath": {"path": agent_resolv, "type": "File"}})
    for c in spec["containers"] + spec.get("initContainers", []):
        for m in c.get("volumeMounts", []):
            if m["name"] == "agent-resolv":
                m.pop("subPath", None)
    log("agent /etc/resolv.conf: configMap subPath -> hostPath file " + agent_resolv)

    dns = spec["dnsConfig"]
    side_resolv = f"{workdir}/sidecar-resolv.conf"
    with open(side_resolv, "w") as f:
        for ns in dns["nameservers"]:
            f.write(f"nameserver {ns}\n")
        if dns.get("searches"):
            f.write("search " + " ".join(dns["searches"]) + "\n")
        for o in dns.get("options", []):
            f.write(f"options {o['name']}:{o['value']}\n")
    spec["volumes"].append(
        {"name": "sidecar-resolv", "hostPath": {"path": side_resolv, "type": "File"}})
    sidecar = next(c for c in spec["containers"] if c["name"] == "execd")
    sidecar["volumeMounts"].append(
        {"name": "sidecar-resolv", "mountPath": "/etc/resolv.conf", "readOnly": True})
    log("sidecar /etc/resolv.conf: dnsConfig -> hostPath file " + side_resolv)

    vols["credentials"].clear()
    vols["credentials"].update(
        {"name": "credentials", "hostPath": {"path": creds, "type": "Directory"}})
    log("credentials: Secret -> hostPath directory " + creds)

    vols["workspace"].clear()
    vols["workspace"].update(
        {"name": "workspace", "hostPath": {"path": workspace, "type": "Directory"}})
    log("workspace -> hostPath directory " + workspace)

    # Kubernetes creates an emptyDir world-writable (0777); podman 4.3 makes
    # a root-owned 0755 volume that the sidecar's UID and the agent cannot
    # write. Directories the test made with the Kubernetes modes instead.
    for name, mode in (("execd-socket", 0o777), ("audit", 0o777), ("execd-tmp", 0o1777), ("tmp", 0o1777)):
        path = f"{workdir}/emptydir-{name}"
        os.mkdir(path)
        os.chmod(path, mode)
        vols[name].clear()
        vols[name].update({"name": name, "hostPath": {"path": path, "type": "Directory"}})
        log(f"{name}: emptyDir -> hostPath directory {path} mode {mode:o} (the Kubernetes mode)")

    for c in spec["containers"]:
        for k in ("stdin", "tty"):
            if c.pop(k, None) is not None:
                log(f"{c['name']}: {k} dropped")

    with open(dst, "w") as f:
        yaml.safe_dump_all(docs, f, sort_keys=False)


if __name__ == "__main__":
    main()
