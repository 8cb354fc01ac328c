#!/usr/bin/env bash
# `make demo`: install tiershim into ./demo/prefix with the bundled policy, then walk through
# allowed, refused, dry-run and escape-attempt calls for each tool (ssh included), as an agent at
# tier 1 and 2 would make them. Real git, curl, docker and psql clients are used where installed; tea (not
# packaged here) and gh (if missing) get a stand-in that prints what it received.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/target/x86_64-unknown-linux-gnu/release/tiershim}
demo=$here/demo
prefix=$demo/prefix
rm -rf "$demo"
mkdir -p "$demo/stand-ins"
for t in tea gh; do
    if ! command -v "$t" >/dev/null 2>&1; then
        printf '#!/bin/sh\necho "(%s stand-in) would talk to the server with: $*"\n' "$t" > "$demo/stand-ins/$t"
        chmod +x "$demo/stand-ins/$t"
    fi
done
"$here/install.sh" --prefix "$prefix" --binary "$bin" --audit-log "$demo/audit.jsonl" --real-dir "$demo/stand-ins" >/dev/null

# A throw-away repository with a remote, and a feature branch with one change.
export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.com GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@example.com
git init -q --bare -b main "$demo/remote.git"
git init -q -b main "$demo/repo"
cd "$demo/repo"
echo "# ops repo" > README.md && git add README.md && git commit -qm "first"
git remote add origin "$demo/remote.git" && git push -q origin main
git checkout -qb fix-check && echo "check" > checks.md && git add checks.md

bold=$(tput bold 2>/dev/null || true); dim=$(tput dim 2>/dev/null || true); off=$(tput sgr0 2>/dev/null || true)
say() { printf '\n%s# %s%s\n' "$bold" "$*" "$off"; }
# Run a command as the agent: PATH is the tier directory and nothing else.
agent() {
    local tier=$1; shift
    printf '%s[tier %s]$ %s%s\n' "$dim" "$tier" "$*" "$off"
    env -i HOME="$demo" PATH="$prefix/lib/tiershim/tier$tier" CLAUDEOPS_TIER="${TIER_ENV:-$tier}" \
        GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com \
        ${DRY:+CLAUDEOPS_DRY_RUN=1} "$@" 2>&1 | sed 's/^/    /' || true
    printf '    %s(exit %s)%s\n' "$dim" "${PIPESTATUS[0]}" "$off"
}

say "Tier 1 observes: reads run for real"
agent 1 git status --short --branch
agent 1 git log --oneline -1
agent 1 psql --version
say "Tier 1 cannot change anything"
agent 1 docker restart api
agent 1 git commit -m "fix check"
agent 1 curl -s -X DELETE http://127.0.0.1:9/items/1
agent 1 psql -c "UPDATE users SET admin = true"
say "Never, at any tier: merges, force pushes, prunes, token printing"
agent 2 gh pr merge 12 --admin
agent 2 git push --force-w origin fix-check:main
agent 2 docker system prune -af
agent 2 gh auth token
agent 2 tea pulls --repo ops/app merge 5
say "Tier 2 remediates safely: commit and push a feature branch"
agent 2 git commit -m "fix check"
agent 2 git push origin fix-check
say "Dry-run: mutating calls print what they would do, and run nothing"
DRY=1 agent 2 docker restart api
DRY=1 agent 2 tea issues create --title "disk full on ie01"
say "ssh: the remote command is judged by the same rules, part by part"
agent 1 ssh -o BatchMode=yes -o ConnectTimeout=2 ops@ie01.invalid "docker ps --format '{{.Names}}'"   # allowed; the host does not exist
agent 1 ssh ops@ie01 "docker restart api"
agent 2 ssh ops@ie01 "docker restart api; rm -rf /"
agent 2 ssh ops@ie01 'docker restart $(docker ps -q)'
agent 2 ssh -o ProxyCommand='sh -c id' ops@ie01 uptime
DRY=1 agent 2 ssh ops@ie01 "cd /srv/media && docker compose up -d jellyfin"
say "Escape attempts"
TIER_ENV=3 agent 1 docker restart api     # the environment asks for tier 3 in a tier-1 directory
agent 1 env docker ps                      # no env, shells or interpreters on the agent's PATH
agent 1 git -c core.pager='sh -c id' log
agent 1 gh -R ops/app pr merge 1
agent 1 docker -H tcp://10.0.0.9:2375 ps

say "The audit trail: one JSON line per decision (${demo#$here/}/audit.jsonl)"
wc -l < "$demo/audit.jsonl" | sed 's/^/    decisions logged: /'
tail -n 2 "$demo/audit.jsonl" | cut -c1-220 | sed 's/^/    /'
echo
echo "Explain any call without running it:  $prefix/bin/tiershim explain --tier 2 -- docker compose up -d api"
