#!/usr/bin/env bash
# `make demo`: install tiershim into ./demo/ with the bundled policy and skills, make a
# throw-away git repository whose remote is served by `git daemon` on 127.0.0.1 (the gate turns
# git's file transport off), and walk through what an agent in the restricted shell of tier 1
# and tier 2 can and cannot do. After each command it says, in plain words, what the gate
# decided (read back from the audit record the gate wrote) or that the restricted shell refused
# it before any tool ran. It shows `tiershim explain`, a restart budget running out, `tiershim
# doctor` on the demo install, and ends with `tiershim audit` of what happened. Every exit code
# shown is the real one.
#
# git is the real one. gh, tea, docker, psql and ssh are stand-ins that say so and print the
# arguments the gate handed them (no GitHub, Gitea, Docker daemon or database is needed, and
# nothing leaves this machine).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/target/$(rustc --print host-tuple)/release/tiershim}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
demo=${DEMO_DIR:-$here/demo}   # the tests run it elsewhere
prefix=$demo/prefix
tiershim=$prefix/bin/tiershim
audit=$demo/audit.jsonl

rm -rf "$demo"
mkdir -p "$demo/stand-ins" "$demo/remote" "$demo/repos" "$demo/state"
for t in gh tea docker psql ssh; do
    printf '#!/bin/sh\necho "[%s stand-in: there is no real %s in this demo; it received: $*]"\n' "$t" "$t" > "$demo/stand-ins/$t"
    chmod 0755 "$demo/stand-ins/$t"
done

# Bold and dim only on a terminal: redirected output carries no escape codes.
bold= dim= off=
if [ -t 1 ]; then
    bold=$(tput bold 2>/dev/null || true); dim=$(tput dim 2>/dev/null || true); off=$(tput sgr0 2>/dev/null || true)
fi
say() { printf '\n%s# %s%s\n' "$bold" "$*" "$off"; }
note() { printf '%s\n' "$*" | fold -s -w 96 | sed 's/^/  /'; }

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
"$here/install.sh" --prefix "$prefix" --binary "$bin" --tiers 1,2 --audit-log "$audit" \
    --real-dir "$demo/stand-ins" --repos "$demo/repos" --cooldown-state "$demo/state/cooldown.json" \
    --kernel-fence off >/dev/null
: > "$audit"

# One audit record field (a string, or null), from the record's top level.
field() { printf '%s\n' "$1" | grep -o "\"$2\":\\(\"[^\"]*\"\\|null\\|[0-9]*\\)" | head -n 1 | sed -e "s/^\"$2\"://" -e 's/^"//' -e 's/"$//'; }

# What happened to the last command, in plain words: the gate's decision for every gated call
# it made (from the audit records it appended), or the restricted shell's refusal.
verdicts() {
    local rc=$1 from=$2 out=$3 rec verdict tool rule real tier
    local new
    new=$(tail -n +"$((from + 1))" "$audit")
    if [ -z "$new" ]; then
        if [ "$rc" = 0 ]; then
            note "→ no gated tool ran: only the shell and its vetted passthrough tools."
        else
            note "→ REFUSED by the restricted shell before any tool ran: $(head -n 1 "$out" | sed 's/^rbash: line [0-9]*: //'). Nothing reached the gate or a real tool."
        fi
        return
    fi
    if grep -q 'readonly variable' "$out"; then
        note "→ The shell refused the assignment (the tier's PATH and CLAUDEOPS_TIER are read-only), so the command ran with the tier's own PATH and tier, through the gate:"
    fi
    while IFS= read -r rec; do
        verdict=$(field "$rec" verdict); tool=$(field "$rec" tool); rule=$(field "$rec" rule)
        real=$(field "$rec" real); tier=$(printf '%s\n' "$rec" | grep -o '"effective":[0-9]' | head -n 1 | cut -d: -f2)
        case $verdict in
            allow)
                case $real in
                    "$demo/stand-ins/"*) note "→ ALLOWED at tier $tier (rule $rule): the gate ran the $tool stand-in in place of the real $tool." ;;
                    *) note "→ ALLOWED at tier $tier (rule $rule): the gate ran the real $tool ($real)." ;;
                esac ;;
            dry-run) note "→ DRY RUN (rule $rule): the gate printed what it would run and ran nothing." ;;
            refuse)
                if printf '%s' "$rec" | grep -q 'SCOPE VIOLATION'; then
                    note "→ SCOPE VIOLATION (rule $rule): the change touches a path a skill protects. Nothing ran."
                elif printf '%s' "$rec" | grep -q '"cooldown":'; then
                    note "→ REFUSED by the restart budget (rule $rule): this service has used its restarts for the window. Nothing ran."
                elif printf '%s' "$rec" | grep -q 'is never allowed'; then
                    note "→ REFUSED (rule $rule): never allowed at any tier. Nothing ran."
                else
                    note "→ REFUSED (rule $rule): needs a higher tier than $tier. Nothing ran."
                fi ;;
            *) note "→ ERROR ($verdict): the gate could not run it; see the message above." ;;
        esac
    done <<EOF
$new
EOF
}

# Run a command line as the agent: inside `tiershim shell` (rbash, PATH = the tier directory).
agent() {
    local tier=$1 cmd=$2 rc from
    printf '%s[agent, tier %s]$ %s%s\n' "$dim" "$tier" "$cmd" "$off"
    from=$(wc -l < "$audit")
    set +e
    "$tiershim" shell --tier "$tier" --keep-env GIT_AUTHOR_NAME --keep-env GIT_AUTHOR_EMAIL \
        --keep-env GIT_COMMITTER_NAME --keep-env GIT_COMMITTER_EMAIL -c "$cmd" > "$demo/.out" 2>&1
    rc=$?
    set -e
    sed 's/^/    /' "$demo/.out"
    printf '    %s(exit %s)%s\n' "$dim" "$rc" "$off"
    verdicts "$rc" "$from" "$demo/.out"
}

# Run an admin command as the operator (outside the agent's shell), showing its real exit code.
operator() {
    local shown=$1 rc
    shift
    printf '%s[operator]$ %s%s\n' "$dim" "$shown" "$off"
    set +e
    "$@" > "$demo/.out" 2>&1
    rc=$?
    set -e
    sed 's/^/    /' "$demo/.out"
    printf '    %s(exit %s)%s\n' "$dim" "$rc" "$off"
}
export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com

say "What this is"
note "Installed into $prefix. Each [agent] command runs as an agent would: inside the restricted shell (rbash) of tier 1 or 2, whose PATH is one tier directory. After each, a line says what happened: ALLOWED (the gate ran the tool), REFUSED (and why), DRY RUN (nothing ran), SCOPE VIOLATION, or refused by the shell itself."
note "git is real. gh, tea, docker, psql and ssh are stand-ins: they say so and print the arguments the gate handed them, where the real tool would run."
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

say "Before running anything, ask: tiershim explain prints the gate's decision and runs nothing"
operator "tiershim explain --tier 1 -- docker restart api" "$tiershim" explain --tier 1 -- docker restart api
operator "tiershim explain --tier 2 -- docker restart api" "$tiershim" explain --tier 2 -- docker restart api

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

say "Restart budgets: two restarts of a service in 4 hours (policy/cooldown.yaml), then refused"
agent 2 'docker restart api'
agent 2 'docker restart api'
agent 2 'docker restart api'
operator "tiershim cooldown --config …/tier2/tiershim.yaml" "$tiershim" cooldown --config "$prefix/lib/tiershim/tier2/tiershim.yaml"

say "ssh: the remote command is judged by the same rules, part by part"
agent 1 "ssh ops@ie01 'docker ps --format {{.Names}}'"
agent 1 "ssh ops@ie01 'docker restart jellyfin'"
agent 2 "ssh ops@ie01 'docker restart jellyfin; rm -rf /'"
agent 2 "ssh ops@ie01 'docker restart \$(docker ps -q)'"

say "A PR that touches what the git-pr skill protects is a scope violation"
agent 2 "gh pr create -H bump-base -B main -t 'Bump base image' -b 'Debian 13'"

say "Escape attempts from the restricted shell: none gets past it"
agent 1 "$(command -v git) status"
agent 1 'PATH=/usr/bin git status'
agent 1 'CLAUDEOPS_TIER=3 docker restart api'
agent 1 'env docker restart api'
agent 1 "bash -c 'docker restart api'"
agent 1 "git -c core.pager='sh -c id' log"
agent 1 'cat /etc/hostname > copy'

me=$(id -un)
say "tiershim doctor: what this demo install still lacks"
note "The agent's commands above ran as $me, so the doctor checks what $me can reach.$([ "$(id -u)" != 0 ] || echo " (A real agent runs as an unprivileged user; root can reach and change everything, which the doctor reports too.)") This demo is not hardened: the real tools (and the stand-ins) stay reachable by their paths, which an rbash PATH alone does not prevent. install.sh --harden, as root, moves them where only the gate can reach them. The summary (tiershim doctor without the filter shows each finding with its fix):"
printf '%s[operator]$ tiershim doctor --user %s%s\n' "$dim" "$me" "$off"
set +e
"$tiershim" doctor --user "$me" > "$demo/.out" 2>&1
rc=$?
set -e
sed -e '/^details:/,$d' -e 's/^/    /' "$demo/.out"
printf '    %s(exit %s)%s\n' "$dim" "$rc" "$off"
[ "$rc" = 0 ] || note "→ exit $rc: the checks marked ✗ failed; each line of the full report says how to fix it."

say "The audit trail: one JSON line per decision, summarised by tiershim audit"
operator "tiershim audit --config …/tier1/tiershim.yaml" "$tiershim" audit --config "$prefix/lib/tiershim/tier1/tiershim.yaml"
echo
echo "Explain any call without running it:  $tiershim explain --tier 2 -- docker compose up -d api"
echo "Enter the tier-1 shell yourself:       $prefix/bin/rbash-tier1"
