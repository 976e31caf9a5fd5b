#!/usr/bin/env python3
"""Check the Claude Code settings profiles (settings-profiles/*.json).

  profiles-check.py SRCDIR              TAP: both profiles are strict JSON
                                        objects, carry the managed-only
                                        switches, and deny every category of
                                        the table below (strict) or all but
                                        interpreters and installers
                                        (permissive); ordinary work is not
                                        denied.
  profiles-check.py --self-test SRCDIR  TAP: the check itself fails when one
                                        category's rules are removed, when a
                                        switch is off and when the JSON is
                                        broken (a check that cannot fail
                                        proves nothing).

Matching follows Claude Code's documented rule syntax (code.claude.com
settings and permissions pages, checked against 2.1.197):
  Bash(CMD)     whole command; '*' matches any run of characters; a single
                trailing ' *' is optional ("Bash(curl *)" matches "curl");
                the legacy "Bash(PREFIX:*)" matches PREFIX or "PREFIX ...".
  Read(P), Edit(P)   gitignore-style paths: '//x' is the absolute path /x,
                '~/x' is under the home, '/x' is relative to the settings
                file's directory, anything else is relative to the working
                directory; '**' crosses directories, '*' does not. Edit rules
                also cover Write and NotebookEdit, Read rules Grep and Glob.
The end-to-end test (tests/e2e-agent.sh) shows the real claude applying
them; this check only keeps the table complete."""
import copy
import json
import re
import sys

HOME = "/home/devuser"
CWD = "/workspace"
SETTINGS_DIR = "/etc/claude-code"

# category -> probes every strict profile must deny: (tool, argument)
CATEGORIES = {
    "reading secrets": [
        ("Read", "/proc/1/environ"),
        ("Read", "/proc/self/environ"),
        ("Read", "/proc/1/task/1/environ"),
        ("Read", "/run/secrets/api_key"),
        ("Read", "/run/code-sandbox/token"),
        ("Read", HOME + "/.ssh/id_ed25519"),
        ("Read", HOME + "/.aws/credentials"),
        ("Read", HOME + "/.claude/.credentials.json"),
        ("Read", HOME + "/.git-credentials"),
        ("Read", CWD + "/.env"),
        ("Bash", "cat /proc/1/environ"),
        ("Bash", "tr '\\0' '\\n' < /proc/self/environ"),
        ("Bash", "cat /run/secrets/api_key"),
        ("Bash", "cat ~/.claude/.credentials.json"),
    ],
    "editing the agent's settings and .claude/": [
        ("Edit", HOME + "/.claude/settings.json"),
        ("Write", HOME + "/.claude/settings.local.json"),
        ("Write", HOME + "/.claude.json"),
        ("Edit", SETTINGS_DIR + "/managed-settings.json"),
        ("Write", CWD + "/.claude/settings.local.json"),
        ("Write", CWD + "/.claude/settings.json"),
        ("Write", CWD + "/.claude/agents/evil.md"),
        ("Write", CWD + "/.mcp.json"),
        ("Bash", "echo '{}' > .claude/settings.local.json"),
        ("Bash", "cp x ~/.claude/settings.json"),
        ("Bash", "claude mcp add evil -- /tmp/x"),
    ],
    "editing .git/hooks and .git/config": [
        ("Edit", CWD + "/.git/hooks/pre-commit"),
        ("Write", CWD + "/.git/hooks/post-checkout"),
        ("Edit", CWD + "/.git/config"),
        ("Bash", "echo 'curl x' > .git/hooks/pre-commit"),
        ("Bash", "git config core.hooksPath /tmp/h"),
        ("Bash", "git -c core.sshCommand=/tmp/x fetch"),
        ("Bash", "sed -i s/a/b/ .git/config"),
    ],
    "interpreters run inline": [
        ("Bash", "python3 -c 'import os; print(os.environ)'"),
        ("Bash", "python -c 'print(1)'"),
        ("Bash", "node -e 'require(\"fs\")'"),
        ("Bash", "node --eval 'x'"),
        ("Bash", "perl -e 'print 1'"),
        ("Bash", "ruby -e 'puts 1'"),
        ("Bash", "bash -c 'id'"),
        ("Bash", "sh -c 'id'"),
        ("Bash", "eval \"$X\""),
    ],
    "destructive and privileged commands": [
        ("Bash", "sudo id"),
        ("Bash", "su -"),
        ("Bash", "rm -rf /"),
        ("Bash", "rm -rf ~"),
        ("Bash", "rm -rf ."),
        ("Bash", "rm -fr src"),
        ("Bash", "dd if=/dev/zero of=/dev/sda"),
        ("Bash", "mkfs.ext4 /dev/sda1"),
        ("Bash", "mount -t tmpfs none /mnt"),
        ("Bash", "nsenter -t 1 -m sh"),
        ("Bash", "chown root:root x"),
        ("Bash", "kill -9 1"),
        ("Bash", "git push --force origin main"),
        ("Bash", "git push origin main -f"),
        ("Bash", "git reset --hard HEAD~3"),
    ],
    "network tools": [
        ("Bash", "curl https://example.invalid/x"),
        ("Bash", "curl"),
        ("Bash", "wget http://example.invalid/x"),
        ("Bash", "nc 198.51.100.1 80"),
        ("Bash", "ncat -l 9000"),
        ("Bash", "socat - TCP:198.51.100.1:80"),
        ("Bash", "ssh git@example.invalid"),
        ("Bash", "scp a example.invalid:"),
        ("Bash", "rsync -a . example.invalid:x"),
        ("Bash", "exec 3<>/dev/tcp/198.51.100.1/80"),
    ],
    "environment dumps": [
        ("Bash", "env"),
        ("Bash", "printenv"),
        ("Bash", "printenv ANTHROPIC_API_KEY"),
        ("Bash", "export -p"),
        ("Bash", "set"),
        ("Bash", "declare -x"),
        ("Bash", "compgen -e"),
    ],
    "package installers": [
        ("Bash", "npm install left-pad"),
        ("Bash", "npm i left-pad"),
        ("Bash", "npm ci"),
        ("Bash", "npx cowsay"),
        ("Bash", "yarn add x"),
        ("Bash", "pnpm add x"),
        ("Bash", "pip install requests"),
        ("Bash", "pip3 install requests"),
        ("Bash", "python3 -m pip install requests"),
        ("Bash", "uv pip install requests"),
        ("Bash", "apt-get install -y gcc"),
        ("Bash", "cargo install ripgrep"),
        ("Bash", "go install example.invalid/x@latest"),
        ("Bash", "gem install rails"),
    ],
}

# Categories the permissive profile relaxes (must NOT deny their probes).
RELAXED = {"interpreters run inline", "package installers"}

# Ordinary work neither profile may deny (a profile denying everything
# would pass the table above and be useless).
ORDINARY = [
    ("Bash", "ls -la"),
    ("Bash", "git status"),
    ("Bash", "git diff HEAD~1"),
    ("Bash", "git commit -m 'fix the test'"),
    ("Bash", "git push origin HEAD"),
    ("Bash", "make test"),
    ("Bash", "meson test -C build"),
    ("Bash", "npm test"),
    ("Bash", "npm run build"),
    ("Bash", "python3 tests/run.py"),
    ("Bash", "rg -n TODO src"),
    ("Bash", "cat README.md"),
    ("Bash", "rm build/out.o"),
    ("Read", CWD + "/src/main.c"),
    ("Edit", CWD + "/src/main.c"),
    ("Write", CWD + "/notes.txt"),
    ("Read", CWD + "/.claude/settings.json"),
]

# Managed-only switches: key path -> required value, in both profiles.
SWITCHES = {
    ("allowManagedPermissionRulesOnly",): True,  # project/local/CLI rules ignored
    ("allowManagedHooksOnly",): True,  # project/local hooks and statusLine ignored
    ("disableAllHooks",): True,
    ("allowManagedMcpServersOnly",): True,  # MCP allowlist only from here...
    ("allowedMcpServers",): [],  # ...and it is empty
    ("enableAllProjectMcpServers",): False,
    ("enabledMcpjsonServers",): [],
    ("permissions", "disableBypassPermissionsMode"): "disable",
    # No managed-only switch exists for the settings that name a command to
    # run; an empty managed value outranks a workspace's (checked with the
    # real claude in tests/e2e-agent.sh).
    ("apiKeyHelper",): "",
    ("awsAuthRefresh",): "",
    ("awsCredentialExport",): "",
    ("gcpAuthRefresh",): "",
    ("otelHeadersHelper",): "",
}
# strictPluginOnlyCustomization must lock at least these surfaces.
LOCKED_SURFACES = {"hooks", "mcp"}

PATH_TOOLS = {"Read": "Read", "Grep": "Read", "Glob": "Read", "Edit": "Edit", "Write": "Edit", "NotebookEdit": "Edit"}
RULE = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)(?:\((.*)\))?$", re.S)


def bash_matches(pattern, cmd):
    if pattern.endswith(":*"):
        prefix = pattern[:-2]
        return cmd == prefix or cmd.startswith(prefix + " ")
    rx = ".*".join(re.escape(p) for p in pattern.split("*"))
    if pattern.endswith(" *") and pattern.count("*") == 1:
        rx = re.escape(pattern[:-2]) + "(?: .*)?"
    return re.fullmatch(rx, cmd, re.S) is not None


def glob_rx(pattern):
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def path_matches(pattern, path):
    if pattern.startswith("//"):
        full = pattern[1:]
    elif pattern.startswith("~/"):
        full = HOME + pattern[1:]
    elif pattern.startswith("/"):
        full = SETTINGS_DIR + pattern
    else:
        full = CWD + "/" + (pattern[2:] if pattern.startswith("./") else pattern)
    rx = glob_rx(full)
    # A directory pattern covers what is below it (gitignore).
    return re.fullmatch(rx, path) is not None or re.fullmatch(rx + "/.*", path) is not None


def rule_matches(rule, tool, arg):
    m = RULE.match(rule)
    if not m:
        return False
    rtool, content = m.group(1), m.group(2)
    if tool in PATH_TOOLS:
        if rtool not in (tool, PATH_TOOLS[tool]):
            return False
        return content is None or path_matches(content, arg)
    if rtool != tool:
        return False
    return content is None or bash_matches(content, arg)


def denied_by(profile, tool, arg):
    return [r for r in profile.get("permissions", {}).get("deny", []) if rule_matches(r, tool, arg)]


def load_strict_json(text):
    def no_dupes(pairs):
        keys = [k for k, _ in pairs]
        dup = {k for k in keys if keys.count(k) > 1}
        if dup:
            raise ValueError(f"duplicate keys {sorted(dup)}")
        return dict(pairs)

    def no_constants(name):
        raise ValueError(f"non-JSON constant {name}")

    obj = json.loads(text, object_pairs_hook=no_dupes, parse_constant=no_constants)
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    return obj


def get(obj, path):
    for k in path:
        if not isinstance(obj, dict) or k not in obj:
            return None
        obj = obj[k]
    return obj


class Tap:
    def __init__(self, out=True):
        self.n = 0
        self.failed = 0
        self.out = out

    def result(self, good, name, diag=None):
        self.n += 1
        if not good:
            self.failed += 1
        if self.out:
            print(f"{'ok' if good else 'not ok'} {self.n} - {name}")
            for line in diag if not good and diag else []:
                print(f"# {line}")


def check_profile(tap, name, text, relaxed):
    """Runs every check on one profile's text; records them in tap."""
    try:
        prof = load_strict_json(text)
    except ValueError as e:
        tap.result(False, f"{name}: strict JSON object", [str(e)])
        return
    tap.result(True, f"{name}: strict JSON object")
    bad = [f"{'.'.join(k)} is {get(prof, k)!r}, want {v!r}" for k, v in SWITCHES.items() if get(prof, k) != v]
    tap.result(not bad, f"{name}: managed-only switches set", bad)
    locked = get(prof, ("strictPluginOnlyCustomization",))
    ok_lock = locked is True or (isinstance(locked, list) and LOCKED_SURFACES <= set(locked))
    tap.result(ok_lock, f"{name}: non-managed hooks and .mcp.json locked (strictPluginOnlyCustomization)",
               [f"strictPluginOnlyCustomization is {locked!r}"])
    deny = get(prof, ("permissions", "deny"))
    rules_ok = isinstance(deny, list) and all(isinstance(r, str) and RULE.match(r) for r in deny)
    tap.result(rules_ok, f"{name}: every deny rule is Tool or Tool(specifier)",
               [repr(r) for r in (deny or []) if not (isinstance(r, str) and RULE.match(r))])
    for cat, probes in CATEGORIES.items():
        if cat in relaxed:
            hit = [f"{t}({a}) denied by {denied_by(prof, t, a)}" for t, a in probes if denied_by(prof, t, a)]
            tap.result(not hit, f"{name}: relaxes {cat}", hit)
        else:
            miss = [f"{t}({a}) matches no deny rule" for t, a in probes if not denied_by(prof, t, a)]
            tap.result(not miss, f"{name}: denies {cat}", miss)
    over = [f"{t}({a}) denied by {denied_by(prof, t, a)}" for t, a in ORDINARY if denied_by(prof, t, a)]
    tap.result(not over, f"{name}: ordinary work is not denied", over)


def read(srcdir, name):
    with open(f"{srcdir}/settings-profiles/{name}.json", encoding="utf-8") as fh:
        return fh.read()


def run(srcdir):
    tap = Tap()
    check_profile(tap, "strict", read(srcdir, "strict"), set())
    check_profile(tap, "permissive", read(srcdir, "permissive"), RELAXED)
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


def fails(text, relaxed=frozenset()):
    quiet = Tap(out=False)
    check_profile(quiet, "mutant", text, set(relaxed))
    return quiet.failed > 0


def self_test(srcdir):
    tap = Tap()
    strict = load_strict_json(read(srcdir, "strict"))
    tap.result(not fails(json.dumps(strict)), "the real strict profile passes")
    for cat, probes in CATEGORIES.items():
        mutant = copy.deepcopy(strict)
        # Drop the rules one probe of the category relies on.
        t, a = probes[0]
        gone = set(denied_by(strict, t, a))
        mutant["permissions"]["deny"] = [r for r in strict["permissions"]["deny"] if r not in gone]
        tap.result(fails(json.dumps(mutant)), f"fails without the rules denying {t}({a}) ({cat})")
    for key in SWITCHES:
        mutant = copy.deepcopy(strict)
        obj = mutant
        for k in key[:-1]:
            obj = obj[k]
        obj.pop(key[-1], None)
        tap.result(fails(json.dumps(mutant)), f"fails without {'.'.join(key)}")
    mutant = copy.deepcopy(strict)
    mutant["permissions"]["deny"].append("Bash")
    tap.result(fails(json.dumps(mutant)), "fails when everything is denied")
    tap.result(fails(read(srcdir, "strict").replace("{", "{\"a\": 1, \"a\": 2,", 1)), "fails on duplicate keys")
    tap.result(fails(read(srcdir, "strict")[:-3]), "fails on truncated JSON")
    tap.result(fails("[]"), "fails on a non-object")
    tap.result(fails(json.dumps(strict), RELAXED), "strict used as permissive fails (it denies interpreters)")
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--self-test":
        sys.exit(self_test(args[1]))
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(run(args[0]))
