#!/usr/bin/env python3
"""Schema and policy check of the Kubernetes manifests (no validator for
the Kubernetes API types is packaged in Debian 12: no kubeconform, no
kubeval). Two layers, TAP output, one line per manifest and check:

  1. schema: every mapping key the manifests use must be a field of its
     Kubernetes API type (a strict subset of the v1/batch-v1 OpenAPI types,
     written out below for the fields code-sandbox relies on) with the right
     JSON type, as `kubectl apply --validate=strict` would insist; cross
     references (volumeMounts -> volumes, configMap keys, the ConfigMap's
     name) must resolve.
  2. policy: what docs/kubernetes.md promises about the pod (the agent's
     capabilities, read-only root and its emptyDirs, the sidecar's UID and
     where the Secret and the audit volume are mounted, no service account
     token, no host namespaces, ...).

  manifests-check.py FILE...            check files
  manifests-check.py --self-test FILE   every mutation in MUTATIONS must fail
  manifests-check.py --in-step SRC      deploy/kubernetes/*.yaml are what
                                        bin/code-sandbox-kube prints
"""
import copy
import os
import subprocess
import sys

import yaml

CAPS = {"NET_ADMIN", "NET_BIND_SERVICE", "SETUID", "SETGID", "SETPCAP", "CHOWN", "DAC_OVERRIDE", "KILL"}

# --- a strict subset of the API types: field -> type or nested schema -------
S, I, B = "string", "integer", "boolean"
QUANTITY = "quantity"  # string or number
ANY_STR_MAP = "map[string]string"

OBJECT_META = {"name": S, "namespace": S, "labels": ANY_STR_MAP, "annotations": ANY_STR_MAP}
SECCOMP = {"type": S, "localhostProfile": S}
CAPABILITIES = {"add": [S], "drop": [S]}
SECURITY_CONTEXT = {
    "runAsUser": I, "runAsGroup": I, "runAsNonRoot": B, "privileged": B,
    "allowPrivilegeEscalation": B, "readOnlyRootFilesystem": B, "capabilities": CAPABILITIES,
    "seccompProfile": SECCOMP, "procMount": S,
}
POD_SECURITY_CONTEXT = {
    "runAsUser": I, "runAsGroup": I, "runAsNonRoot": B, "fsGroup": I, "supplementalGroups": [I],
    "fsGroupChangePolicy": S, "seccompProfile": SECCOMP,
}
KEY_REF = {"name": S, "key": S, "optional": B}
ENV_VAR = {"name": S, "value": S,
           "valueFrom": {"configMapKeyRef": KEY_REF, "secretKeyRef": KEY_REF}}
RESOURCES = {"requests": {"cpu": QUANTITY, "memory": QUANTITY, "ephemeral-storage": QUANTITY},
             "limits": {"cpu": QUANTITY, "memory": QUANTITY, "ephemeral-storage": QUANTITY}}
VOLUME_MOUNT = {"name": S, "mountPath": S, "subPath": S, "readOnly": B}
CONTAINER = {
    "name": S, "image": S, "imagePullPolicy": S, "command": [S], "args": [S], "workingDir": S,
    "env": [ENV_VAR], "securityContext": SECURITY_CONTEXT, "resources": RESOURCES,
    "volumeMounts": [VOLUME_MOUNT], "stdin": B, "tty": B, "restartPolicy": S,
    "startupProbe": {"exec": {"command": [S]}, "periodSeconds": I, "failureThreshold": I,
                     "timeoutSeconds": I, "initialDelaySeconds": I},
}
KEY_TO_PATH = {"key": S, "path": S, "mode": I}
VOLUME = {
    "name": S,
    "emptyDir": {"medium": S, "sizeLimit": QUANTITY},
    "configMap": {"name": S, "items": [KEY_TO_PATH], "defaultMode": I, "optional": B},
    "secret": {"secretName": S, "items": [KEY_TO_PATH], "defaultMode": I, "optional": B},
    "persistentVolumeClaim": {"claimName": S, "readOnly": B},
}
POD_SPEC = {
    "restartPolicy": S, "shareProcessNamespace": B, "hostNetwork": B, "hostPID": B, "hostIPC": B,
    "automountServiceAccountToken": B, "enableServiceLinks": B, "hostname": S,
    "terminationGracePeriodSeconds": I, "dnsPolicy": S,
    "dnsConfig": {"nameservers": [S], "searches": [S], "options": [{"name": S, "value": S}]},
    "securityContext": POD_SECURITY_CONTEXT, "initContainers": [CONTAINER], "containers": [CONTAINER],
    "volumes": [VOLUME], "runtimeClassName": S, "serviceAccountName": S,
}
KINDS = {
    ("v1", "ConfigMap"): {"apiVersion": S, "kind": S, "metadata": OBJECT_META, "data": ANY_STR_MAP},
    ("v1", "Pod"): {"apiVersion": S, "kind": S, "metadata": OBJECT_META, "spec": POD_SPEC},
    ("batch/v1", "Job"): {
        "apiVersion": S, "kind": S, "metadata": OBJECT_META,
        "spec": {"completions": I, "parallelism": I, "completionMode": S, "backoffLimit": I,
                 "ttlSecondsAfterFinished": I, "activeDeadlineSeconds": I,
                 "template": {"metadata": OBJECT_META, "spec": POD_SPEC}}},
}


def schema_errors(value, schema, path):
    if schema == S:
        return [] if isinstance(value, str) else [f"{path}: expected a string, got {type(value).__name__}"]
    if schema == I:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected an integer"]
    if schema == B:
        return [] if isinstance(value, bool) else [f"{path}: expected a boolean"]
    if schema == QUANTITY:
        ok = isinstance(value, (str, int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected a quantity"]
    if schema == ANY_STR_MAP:
        if not isinstance(value, dict):
            return [f"{path}: expected a map"]
        return [f"{path}.{k}: expected a string value" for k, v in value.items()
                if not isinstance(k, str) or not isinstance(v, str)]
    if isinstance(schema, list):
        if not isinstance(value, list):
            return [f"{path}: expected a list"]
        out = []
        for i, v in enumerate(value):
            out += schema_errors(v, schema[0], f"{path}[{i}]")
        return out
    if not isinstance(value, dict):
        return [f"{path}: expected an object"]
    out = []
    for k, v in value.items():
        if k not in schema:
            out.append(f"{path}.{k}: unknown field")
        else:
            out += schema_errors(v, schema[k], f"{path}.{k}")
    return out


def check_schema(docs):
    errs = []
    for n, d in enumerate(docs):
        key = (d.get("apiVersion"), d.get("kind")) if isinstance(d, dict) else None
        if key not in KINDS:
            errs.append(f"document {n}: unsupported apiVersion/kind {key}")
            continue
        if not d.get("metadata", {}).get("name"):
            errs.append(f"document {n}: metadata.name missing")
        errs += schema_errors(d, KINDS[key], d["kind"])
    return errs


# --- policy ------------------------------------------------------------------
def env_map(c):
    return {e["name"]: e for e in c.get("env", [])}


def check_policy(docs):
    errs = []
    cms = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
    workloads = [d for d in docs if d["kind"] in ("Pod", "Job")]
    if len(workloads) != 1:
        return [f"expected one Pod or Job, found {len(workloads)}"]
    w = workloads[0]
    spec = w["spec"] if w["kind"] == "Pod" else w["spec"]["template"]["spec"]
    if w["kind"] == "Job":
        if w["spec"].get("backoffLimit") != 0:
            errs.append("Job: backoffLimit must be 0 (a failed agent is not retried with the same prompt)")
    for k, want in (("shareProcessNamespace", False), ("hostNetwork", False), ("hostPID", False),
                    ("hostIPC", False), ("automountServiceAccountToken", False),
                    ("enableServiceLinks", False), ("restartPolicy", "Never")):
        if spec.get(k) != want:
            errs.append(f"pod spec: {k} must be {want!r} (is {spec.get(k)!r})")
    if spec.get("securityContext", {}).get("seccompProfile", {}).get("type") != "RuntimeDefault":
        errs.append("pod securityContext.seccompProfile must be RuntimeDefault")
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    allc = spec.get("initContainers", []) + spec.get("containers", [])
    by = {c["name"]: c for c in allc}
    agent, side = by.get("agent"), by.get("execd")
    if not agent or not side:
        return errs + ["containers 'agent' and 'execd' are required"]
    if agent not in spec.get("containers", []):
        errs.append("agent must be a regular container")
    if w["kind"] == "Job":
        if side not in spec.get("initContainers", []) or side.get("restartPolicy") != "Always":
            errs.append("Job: execd must be a native sidecar (initContainers, restartPolicy: Always)")

    # every mount names a volume; configMap keys exist
    for c in allc:
        for m in c.get("volumeMounts", []):
            if m["name"] not in vols:
                errs.append(f"{c['name']}: mount of undefined volume {m['name']!r}")
    for v in vols.values():
        ref = v.get("configMap")
        if ref:
            cm = cms.get(ref["name"])
            if not cm:
                errs.append(f"volume {v['name']}: ConfigMap {ref['name']!r} not in the manifests")
                continue
            for it in ref.get("items", []):
                if it["key"] not in cm.get("data", {}):
                    errs.append(f"volume {v['name']}: key {it['key']!r} not in ConfigMap {ref['name']}")
    for c in allc:
        for e in c.get("env", []):
            r = e.get("valueFrom", {}).get("configMapKeyRef")
            if r and (r["name"] not in cms or r["key"] not in cms[r["name"]].get("data", {})):
                errs.append(f"{c['name']}: env {e['name']} names a missing ConfigMap key")

    # the agent container
    sc = agent.get("securityContext", {})
    caps = sc.get("capabilities", {})
    if caps.get("drop") != ["ALL"]:
        errs.append("agent: capabilities.drop must be [ALL]")
    if set(caps.get("add", [])) != CAPS or len(caps.get("add", [])) != len(CAPS):
        errs.append(f"agent: capabilities.add must be exactly {sorted(CAPS)}")
    for k, want in (("allowPrivilegeEscalation", False), ("readOnlyRootFilesystem", True),
                    ("privileged", False), ("runAsNonRoot", False)):
        if sc.get(k) != want:
            errs.append(f"agent: securityContext.{k} must be {want!r}")
    if sc.get("runAsUser", 0) != 0 or sc.get("runAsGroup", 0) != 0:
        errs.append("agent: sandbox-init runs as root (runAsUser/runAsGroup absent or 0)")
    if sc.get("seccompProfile", {}).get("type") != "RuntimeDefault":
        errs.append("agent: seccompProfile must be RuntimeDefault")
    if "command" in agent:
        errs.append("agent: no command (sandbox-init, the image's ENTRYPOINT, is PID 1; use args)")
    res = agent.get("resources", {})
    for k in ("requests", "limits"):
        for r in ("cpu", "memory"):
            if r not in res.get(k, {}):
                errs.append(f"agent: resources.{k}.{r} missing")
    env = env_map(agent)
    for k in ("HOST_UID", "HOST_GID"):
        if "value" not in env.get(k, {}) or not str(env[k]["value"]).isdigit() or env[k]["value"] == "0":
            errs.append(f"agent: {k} must be a plain non-zero value")
    mounts = {m["mountPath"]: m for m in agent.get("volumeMounts", [])}
    for p in ("/workspace", "/home/devuser", "/tmp", "/run/sandbox-init", "/etc/resolv.conf",
              "/run/code-sandbox"):
        if p not in mounts:
            errs.append(f"agent: {p} must be mounted (read-only root)")
    if mounts.get("/run/code-sandbox", {}).get("readOnly") is not True:
        errs.append("agent: the socket volume must be read-only in the agent")
    if mounts.get("/etc/resolv.conf", {}).get("readOnly") is not True:
        errs.append("agent: /etc/resolv.conf must be read-only")
    for p, name in (("/tmp", "tmp"), ("/run/sandbox-init", "init-runtime"), ("/home/devuser", "home")):
        m = mounts.get(p)
        if m and "emptyDir" not in vols.get(m["name"], {}):
            errs.append(f"agent: {p} must be an emptyDir")

    # the sidecar
    ssc = side.get("securityContext", {})
    suid = ssc.get("runAsUser")
    huid = env.get("HOST_UID", {}).get("value")
    hgid = env.get("HOST_GID", {}).get("value")
    if not isinstance(suid, int) or suid in (0, 1000, 65534) or str(suid) in (huid, hgid):
        errs.append("execd: runAsUser must be set, non-zero, not the agent's IDs, 1000 or 65534")
    if ssc.get("runAsNonRoot") is not True or ssc.get("allowPrivilegeEscalation") is not False \
            or ssc.get("readOnlyRootFilesystem") is not True or ssc.get("privileged") not in (None, False):
        errs.append("execd: runAsNonRoot, no privilege escalation, read-only root")
    if ssc.get("capabilities", {}).get("drop") != ["ALL"] or ssc.get("capabilities", {}).get("add"):
        errs.append("execd: capabilities drop ALL, add none")
    if str(ssc.get("runAsGroup")) != str(hgid):
        errs.append("execd: runAsGroup must be HOST_GID (the socket and token are opened to that group)")
    if env.get("CODE_SANDBOX_SIDECAR_UID", {}).get("value") != str(suid):
        errs.append("agent: CODE_SANDBOX_SIDECAR_UID must equal the sidecar's runAsUser")
    if spec.get("securityContext", {}).get("fsGroup") != suid:
        errs.append("pod securityContext.fsGroup must be the sidecar's UID (reads the Secret)")
    smounts = {m["name"]: m for m in side.get("volumeMounts", [])}
    sock_vol = mounts.get("/run/code-sandbox", {}).get("name")
    if sock_vol not in smounts or "emptyDir" not in vols.get(sock_vol, {}):
        errs.append("the socket must be shared through an emptyDir mounted in both containers")
    secret_vols = [n for n, v in vols.items() if "secret" in v]
    for c in allc:
        for m in c.get("volumeMounts", []):
            if m["name"] in secret_vols and c is not side:
                errs.append(f"{c['name']}: mounts Secret volume {m['name']!r} (only execd may)")
            if m["name"] == "audit" and c is not side:
                errs.append(f"{c['name']}: mounts the audit volume (only execd may)")
        for e in c.get("env", []):
            if "secretKeyRef" in e.get("valueFrom", {}) and not (c is agent and e["name"] == "ANTHROPIC_API_KEY"):
                errs.append(f"{c['name']}: env {e['name']} from a Secret")
    if not secret_vols or not any(smounts.get(n, {}).get("readOnly") for n in secret_vols):
        errs.append("execd: the credentials Secret must be mounted read-only")
    if "audit" not in smounts:
        errs.append("execd: the audit log needs its own volume")

    # the clone init container goes through the sidecar's relay
    clone = by.get("clone")
    if clone:
        inits = spec.get("initContainers", [])
        if clone not in inits or side not in inits or inits.index(side) > inits.index(clone) \
                or side.get("restartPolicy") != "Always":
            errs.append("clone: an init container after the native sidecar execd (it clones through the relay)")
        if "exec" not in side.get("startupProbe", {}):
            errs.append("execd: a startupProbe, which the clone waits for (the socket is open)")
        cmounts = {m["mountPath"]: m for m in clone.get("volumeMounts", [])}
        if cmounts.get("/run/code-sandbox", {}).get("readOnly") is not True \
                or cmounts["/run/code-sandbox"]["name"] != sock_vol:
            errs.append("clone: the socket volume mounted read-only at /run/code-sandbox")
        cenv = env_map(clone)
        if any(k.startswith("GIT_CONFIG") for k in cenv):
            errs.append("clone: no GIT_CONFIG* (the image's system config routes git through the relay)")
        csc = clone.get("securityContext", {})
        if csc.get("runAsUser") in (None, 0) or csc.get("capabilities", {}).get("drop") != ["ALL"] \
                or csc.get("capabilities", {}).get("add"):
            errs.append("clone: non-root, no capabilities")
    return errs


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def check_docs(docs):
    return check_schema(docs) or check_policy(docs)


# Mutations of a good manifest that the check must reject.
def _agent(d):
    return next(c for c in _spec(d)["containers"] if c["name"] == "agent")


def _side(d):
    s = _spec(d)
    return next(c for c in s.get("initContainers", []) + s["containers"] if c["name"] == "execd")


def _clone(d):
    """The clone init container, or None: then the mutation does not apply."""
    return next((c for c in _spec(d).get("initContainers", []) if c["name"] == "clone"), None)


def _spec(d):
    return d["spec"] if d["kind"] == "Pod" else d["spec"]["template"]["spec"]


MUTATIONS = {
    "an unknown field": lambda d: _agent(d).__setitem__("securityContxt", {}),
    "a capability too many": lambda d: _agent(d)["securityContext"]["capabilities"]["add"].append("SYS_ADMIN"),
    "a capability missing": lambda d: _agent(d)["securityContext"]["capabilities"]["add"].remove("KILL"),
    "privilege escalation": lambda d: _agent(d)["securityContext"].__setitem__("allowPrivilegeEscalation", True),
    "a writable root": lambda d: _agent(d)["securityContext"].__setitem__("readOnlyRootFilesystem", False),
    "a command replacing sandbox-init": lambda d: _agent(d).__setitem__("command", ["bash"]),
    "no /run/sandbox-init emptyDir": lambda d: _agent(d)["volumeMounts"].pop(
        next(i for i, m in enumerate(_agent(d)["volumeMounts"]) if m["mountPath"] == "/run/sandbox-init")),
    "the sidecar as root": lambda d: _side(d)["securityContext"].__setitem__("runAsUser", 0),
    "the sidecar as HOST_UID": lambda d: _side(d)["securityContext"].__setitem__(
        "runAsUser", int(env_map(_agent(d))["HOST_UID"]["value"])),
    "the Secret in the agent": lambda d: _agent(d)["volumeMounts"].append(
        {"name": "credentials", "mountPath": "/home/execd", "readOnly": True}),
    "a service account token": lambda d: _spec(d).__setitem__("automountServiceAccountToken", True),
    "the host network": lambda d: _spec(d).__setitem__("hostNetwork", True),
    "a shared PID namespace": lambda d: _spec(d).__setitem__("shareProcessNamespace", True),
    "HOST_UID from a ConfigMap": lambda d: env_map(_agent(d))["HOST_UID"].__setitem__("value", "x"),
    "an exemption for another UID": lambda d: env_map(_agent(d))["CODE_SANDBOX_SIDECAR_UID"].__setitem__(
        "value", "4242"),
    "a wrong type": lambda d: _agent(d)["securityContext"].__setitem__("runAsNonRoot", "false"),
    "the agent container as a non-root user": lambda d: _agent(d)["securityContext"].__setitem__("runAsUser", 4242),
    "a mount of no volume": lambda d: _agent(d)["volumeMounts"].append({"name": "nope", "mountPath": "/x"}),
    "the clone before the sidecar": lambda d: _clone(d) and _spec(d)["initContainers"].reverse(),
    "the clone bypassing the relay": lambda d: _clone(d) and _clone(d)["env"].append(
        {"name": "GIT_CONFIG_NOSYSTEM", "value": "1"}),
    "the clone without the socket": lambda d: _clone(d) and _clone(d)["volumeMounts"].pop(),
    "the sidecar without a startupProbe": lambda d: _clone(d) and _side(d).pop("startupProbe"),
    "a socket writable by the agent": lambda d: next(
        m for m in _agent(d)["volumeMounts"] if m["mountPath"] == "/run/code-sandbox").__setitem__("readOnly", False),
}


def tap(results):
    print(f"1..{len(results)}")
    bad = 0
    for i, (name, errs) in enumerate(results, 1):
        if errs:
            bad += 1
            print(f"not ok {i} - {name}")
            for e in errs:
                print(f"#   {e}")
        else:
            print(f"ok {i} - {name}")
    return 1 if bad else 0


def main(argv):
    if argv[:1] == ["--self-test"]:
        results = []
        for path in argv[1:]:
            base = load(path)
            results.append((f"{path}: the unmodified manifest passes", check_docs(base)))
            w = next(i for i, d in enumerate(base) if d["kind"] in ("Pod", "Job"))
            for name, mut in MUTATIONS.items():
                docs = copy.deepcopy(base)
                if name.startswith(("the clone", "the sidecar without")) and not _clone(docs[w]):
                    continue
                mut(docs[w])
                errs = check_docs(docs)
                results.append((f"{os.path.basename(path)}: {name} is rejected",
                                [] if errs else ["the check passed a broken manifest"]))
        return tap(results)
    if argv[:1] == ["--in-step"]:
        src = argv[1]
        gen = os.path.join(src, "bin", "code-sandbox-kube")
        results = []
        for fname, args in (("pod.yaml", ["pod"]), ("job.yaml", JOB_ARGS)):
            path = os.path.join(src, "deploy", "kubernetes", fname)
            env = {k: v for k, v in os.environ.items() if not k.startswith("CS_KUBE_")}
            out = subprocess.run([gen] + args, capture_output=True, text=True, env=env)
            with open(path) as f:
                same = out.returncode == 0 and f.read() == out.stdout
            results.append((f"deploy/kubernetes/{fname} is `code-sandbox-kube {' '.join(args)}`",
                            [] if same else [f"regenerate: bin/code-sandbox-kube {' '.join(args)} > {path}",
                                             out.stderr.strip()]))
        return tap(results)
    return tap([(path, check_docs(load(path))) for path in argv])


JOB_ARGS = ["job", "--repo", "https://git.example/team/project.git", "--parallel", "4",
            "--prompt", "Fix the failing test and commit the fix."]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
