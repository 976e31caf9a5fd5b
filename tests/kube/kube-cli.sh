#!/usr/bin/env bash
# tests/kube/kube-cli.sh: `code-sandbox kube` takes the project's settings
# (the per-project file and the launcher's variables) into the manifests,
# and refuses what sandbox-init would refuse. No root, no engine. TAP.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/support/tap.sh
. "$SRC/tests/support/tap.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/cs-kube-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/home/.config/code-sandbox/projects" "$T/proj"
cd "$T/proj"
id=$(printf 'proj-%s' "$(printf '%s' "$(pwd -P)" | sha256sum | cut -c1-12)")
printf 'profile = permissive\nallow = one.example.test\nallow = two.example.test\nmemory = 8g\ncpus = 1.5\nimage = registry.example.test/cs:1\n' \
	>"$T/home/.config/code-sandbox/projects/$id.conf"
run() { env -i PATH="$PATH" HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config" "$@"; }
y=$T/out.yaml
yq() { python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
print(eval(sys.argv[2], {"d": docs}))' "$y" "$1"; }
A='[c for c in d[1]["spec"]["containers"] if c["name"] == "agent"][0]'

st=0
run "$SRC/bin/code-sandbox" kube >"$y" || st=$?
check "code-sandbox kube prints manifests for the project" "$st" -eq 0
ok "they pass the manifest check" python3 "$SRC/tests/kube/manifests-check.py" "$y"
check "the project's profile" "$(yq 'd[0]["data"]["profile"]')" = permissive
check "the project's allowed domains" "$(yq 'd[0]["data"]["extra-allowed-domains"]')" = one.example.test,two.example.test
check "the project's image" "$(yq "${A}[\"image\"]")" = registry.example.test/cs:1
check "the project's memory limit" "$(yq "${A}[\"resources\"][\"limits\"][\"memory\"]")" = 8Gi
check "the project's CPU limit" "$(yq "${A}[\"resources\"][\"limits\"][\"cpu\"]")" = 1.5
check "objects named after the project" "$(yq 'd[1]["metadata"]["name"]')" = "code-sandbox-$id"
check "the baked allowlist in the ConfigMap" -n "$(yq 'd[0]["data"]["allowlist"]' | grep -x '@anthropic' || true)"
run CODE_SANDBOX_PROFILE=strict EXTRA_ALLOWED_DOMAINS=env.example.test CODE_SANDBOX_MEMORY=2g "$SRC/bin/code-sandbox" kube >"$y"
check "CODE_SANDBOX_PROFILE outranks the project file" "$(yq 'd[0]["data"]["profile"]')" = strict
check "EXTRA_ALLOWED_DOMAINS joins the project's domains" "$(yq 'd[0]["data"]["extra-allowed-domains"]')" = env.example.test,one.example.test,two.example.test
check "CODE_SANDBOX_MEMORY outranks the project file" "$(yq "${A}[\"resources\"][\"limits\"][\"memory\"]")" = 2Gi
run "$SRC/bin/code-sandbox" kube job --parallel 3 --prompt 'say "hi"' >"$y"
check "a Job of 3 agents running claude -p" "$(yq 'd[1]["spec"]["completions"], d[1]["spec"]["parallelism"], [c for c in d[1]["spec"]["template"]["spec"]["containers"] if c["name"] == "agent"][0]["args"]')" = "(3, 3, ['claude', '-p', 'say \"hi\"'])"
run "$SRC/bin/code-sandbox-kube" --git-repo git.example.test/team/app >"$y"
check "--git-repo: the policy allows fetch and new branches of that repository, not its default branch" \
	"$(yq 'd[0]["data"]["policy.conf"]' | grep -c -x -E 'allow git ls-remote,fetch dest=git.example.test/team/app|allow git push dest=git.example.test/team/app ref=refs/heads/\*|deny git push default=yes .*')" -eq 3
check "without --git-repo the policy denies git" "$(run "$SRC/bin/code-sandbox-kube" | grep -c -x '    deny git reason=.*')" -eq 1
for bad in "--git-repo https://git.example.test/x" "--git-repo git.example.test" "--git-repo a,b/c" "--sidecar-uid 0" "--sidecar-uid 1000" "--host-uid 0" "--sidecar-uid 4242 --host-uid 4242" \
	"--profile ../x" "--memory lots" "--cpus two" "--parallel 0" "--name ---" "--bogus" \
	"--workspace-pvc a --repo b"; do
	# shellcheck disable=SC2086 # the words of one case
	nok "refused: code-sandbox kube $bad" run "$SRC/bin/code-sandbox-kube" $bad
done
nok "refused: a value with a newline" run "$SRC/bin/code-sandbox-kube" job --prompt "$(printf 'a\nb')"
ok "control: the same without the newline is accepted" run "$SRC/bin/code-sandbox-kube" job --prompt "a b"
tap_done
