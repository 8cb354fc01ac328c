#!/usr/bin/env bash
# `make demo`: install tiershim into ./demo/ with the bundled policy and skills, make a
# throw-away git repository whose remote is served by `git daemon` on 127.0.0.1 (the gate turns
# git's file transport off), and walk through what an agent in the restricted shell of tier 1
# and tier 2 can and cannot do, ending with `tiershim audit` of what happened. Every exit code
# shown is the real one.
#
# git is the real one. gh, tea, docker, psql and ssh are stand-ins that print what they received
# (no GitHub, Gitea, Docker daemon or database is needed, and nothing leaves this machine).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/target/x86_64-unknown-linux-gnu/release/tiershim}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
demo=${DEMO_DIR:-$here/demo}   # the tests run it elsewhere
prefix=$demo/prefix
tiershim=$prefix/bin/tiershim

rm -rf "$demo"
mkdir -p "$demo/stand-ins" "$demo/remote" "$demo/repos"
for t in gh tea docker psql ssh; do
    printf '#!/bin/sh\necho "(%s stand-in) would run: %s $*"\n' "$t" "$t" > "$demo/stand-ins/$t"
    chmod 0755 "$demo/stand-ins/$t"
done

bold=$(tput bold 2>/dev/null || true); dim=$(tput dim 2>/dev/null || true); off=$(tput sgr0 2>/dev/null || true)
say() { printf '\n%s# %s%s\n' "$bold" "$*" "$off"; }

# The remote: a bare repository served over git:// on a free port of 127.0.0.1.
export GIT_AUTHOR_NAME=operator GIT_AUTHOR_EMAIL=operator@example.com
export GIT_COMMITTER_NAME=operator GIT_COMMITTER_EMAIL=operator@example.com
git init -q --bare -b main "$demo/remote/ops.git"
daemon_pid=
cleanup() { [ -z "$daemon_pid" ] || kill "$daemon_pid" 2>/dev/null || true; }
trap cleanup EXIT
for _ in 1 2 3 4 5 6 7 8 9 10; do
    port=$((20000 + RANDOM % 20000))
    "$(git --exec-path)/git-daemon" --reuseaddr --export-all --enable=receive-pack --listen=127.0.0.1 \
        --port="$port" --base-path="$demo/remote" "$demo/remote" </dev/null >/dev/null 2>&1 &
    daemon_pid=$!
    for _ in $(seq 50); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break 2; fi
        kill -0 "$daemon_pid" 2>/dev/null || break
        sleep 0.05
    done
    kill "$daemon_pid" 2>/dev/null || true
    daemon_pid=
done
[ -n "$daemon_pid" ] || { echo "demo: git daemon did not start" >&2; exit 1; }

# The working copy under the repositories directory: main pushed, a feature branch with a new
# check (inside the git-pr skill's allow-list), and one that edits the Dockerfile (denied).
work=$demo/repos/ops
git init -q -b main "$work"
cd "$work"
printf '# ops\n' > README.md
printf 'FROM debian:12\n' > Dockerfile
git add -A && git commit -qm "first"
git remote add origin "git://127.0.0.1:$port/ops.git"
git push -q origin main
git fetch -q origin && git remote set-head origin main >/dev/null
git switch -qc bump-base && printf 'FROM debian:13\n' > Dockerfile && git commit -qam "bump base image"
git switch -q main && git switch -qc fix-disk-check
mkdir -p checks && printf '# Disk check\nAlert at 90%%.\n' > checks/disk.md && git add -A && git commit -qm "disk check"

# The kernel fence is off here: the demo runs as you, and its shells are started straight from
# this script. A real agent is started with `tiershim launch` as root, which puts it in the
# tier's Landlock domain (README, "Starting an agent").
"$here/install.sh" --prefix "$prefix" --binary "$bin" --tiers 1,2 --audit-log "$demo/audit.jsonl" \
    --real-dir "$demo/stand-ins" --repos "$demo/repos" --kernel-fence off >/dev/null

# Run a command line as the agent: inside `tiershim shell` (rbash, PATH = the tier directory).
agent() {
    local tier=$1 cmd=$2 rc
    printf '%s[tier %s]$ %s%s\n' "$dim" "$tier" "$cmd" "$off"
    set +e
    "$tiershim" shell --tier "$tier" --keep-env GIT_AUTHOR_NAME --keep-env GIT_AUTHOR_EMAIL \
        --keep-env GIT_COMMITTER_NAME --keep-env GIT_COMMITTER_EMAIL -c "$cmd" > "$demo/.out" 2>&1
    rc=$?
    set -e
    sed 's/^/    /' "$demo/.out"
    printf '    %s(exit %s)%s\n' "$dim" "$rc" "$off"
}
export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com

say "Installed into $prefix; the agent's shell is rbash with PATH = one tier directory"
agent 1 'echo "PATH=$PATH"; ls -C -w 100 "$PATH"'

say "Tier 1 observes: reads run"
agent 1 'git status --short --branch'
agent 1 'git log --oneline -3 main'
agent 1 'docker ps'
agent 1 'gh pr list'

say "Tier 1 changes nothing"
agent 1 'docker restart api'
agent 1 'git push origin fix-disk-check'
agent 1 "psql -c 'UPDATE users SET admin = true'"
agent 1 'curl -s -X DELETE http://127.0.0.1:9/items/1'

say "Never, at any tier: merges, force pushes, prunes, printing tokens"
agent 2 'gh pr merge 12 --admin'
agent 2 'git push --force origin fix-disk-check'
agent 2 'docker system prune -af'
agent 2 'gh auth token'

say "Tier 2, dry-run first: mutating calls say what they would run, and run nothing"
agent 2 'CLAUDEOPS_DRY_RUN=1 docker restart api'
agent 2 "CLAUDEOPS_DRY_RUN=1 gh pr create -t 'Disk check at 90%' -b 'Adds checks/disk.md'"

say "Tier 2 remediates: push the feature branch (real git, to the git daemon) and open the PR"
agent 2 'git push origin fix-disk-check'
agent 2 "gh pr create -t 'Disk check at 90%' -b 'Adds checks/disk.md'"

say "ssh: the remote command is judged by the same rules, part by part"
agent 1 "ssh ops@ie01 'docker ps --format {{.Names}}'"
agent 1 "ssh ops@ie01 'docker restart jellyfin'"
agent 2 "ssh ops@ie01 'docker restart jellyfin; rm -rf /'"
agent 2 "ssh ops@ie01 'docker restart \$(docker ps -q)'"

say "A PR that touches what the git-pr skill protects is a scope violation"
agent 2 "gh pr create -H bump-base -B main -t 'Bump base image' -b 'Debian 13'"

say "Escape attempts from the restricted shell"
agent 1 "$(command -v git) status"
agent 1 'PATH=/usr/bin git status'
agent 1 'CLAUDEOPS_TIER=3 docker restart api'
agent 1 'env docker restart api'
agent 1 "bash -c 'docker restart api'"
agent 1 "git -c core.pager='sh -c id' log"
agent 1 'cat /etc/hostname > copy'

say "tiershim doctor: what still needs doing (this demo is not hardened; see install.sh --harden)"
set +e
"$tiershim" doctor --config "$prefix/lib/tiershim/tier1/tiershim.yaml" | grep -v '^  note:' | sed 's/^/    /'
rc=${PIPESTATUS[0]}
set -e
printf '    %s(exit %s)%s\n' "$dim" "$rc" "$off"

say "The audit trail: one JSON line per decision, summarised by tiershim audit"
set +e
"$tiershim" audit --config "$prefix/lib/tiershim/tier1/tiershim.yaml" | sed 's/^/    /'
rc=${PIPESTATUS[0]}
set -e
printf '    %s(exit %s)%s\n' "$dim" "$rc" "$off"
echo
echo "Explain any call without running it:  $tiershim explain --tier 2 -- docker compose up -d api"
echo "Enter the tier-1 shell yourself:       $prefix/bin/rbash-tier1"
