#!/bin/sh
# A Claude Ops container's entrypoint with tiershim: lay out and harden the installation, write
# the session inventory, and start Claude Code as the agent's user with `tiershim launch`.
# Runs as root. Copy it into the image beside the tiershim source tree (or install the Debian
# package) and set the variables below; docs/claude-code.md explains each step.
#
#   entrypoint.sh "check the containers and fix what is down"     # the prompt (or $PROMPT)
#
# The tests run this file with the real Claude Code (tests/it/claude.rs), so it stays true.
set -eu

here=$(cd "$(dirname "$0")" && pwd)

# --- What the operator sets --------------------------------------------------------------------
TIER=${TIER:-2}                                  # the agent's tier: 1 observe, 2 safe remediation, 3 full
AGENT_USER=${AGENT_USER:-agent}                  # not root, in neither group tiershim nor docker
PREFIX=${PREFIX:-/opt/tiershim}                  # where the installation goes
REPOS=${REPOS:-/repos}                           # the repositories' work trees (each may carry .claude-ops/skills/)
WORKDIR=${WORKDIR:-$REPOS}                       # where the agent starts
AUDIT_LOG=${AUDIT_LOG:-/var/log/tiershim/audit.jsonl}
COOLDOWN_STATE=${COOLDOWN_STATE:-/var/lib/tiershim/cooldown/cooldown.json}  # restart budgets; its directory holds nothing else
INVENTORY=${INVENTORY:-/var/lib/tiershim/inventory.json}
HOSTS=${HOSTS:-}                                 # the hosts ssh may reach, separated by spaces (empty: any)
MCP_CONFIGS=${MCP_CONFIGS:-}                     # Claude Code MCP config files (GitHub, Gitea, …), separated by spaces
CLAUDE=${CLAUDE:-claude}                         # the Claude Code command, looked up on this PATH
# Variables passed on to the agent when they are set (the API key, a gateway's URL).
KEEP_ENV=${KEEP_ENV:-ANTHROPIC_API_KEY ANTHROPIC_BASE_URL CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC}
# More install.sh options (--real-dir DIR, --secret NAME=VALUE, --env NAME=VALUE, --policy DIR,
# --group NAME, …) and more `tiershim launch` options, separated by spaces.
INSTALL_ARGS=${INSTALL_ARGS:-}
LAUNCH_ARGS=${LAUNCH_ARGS:-}

# install.sh from the source tree this example sits in, else the Debian package's (which
# installs the packaged binary). BINARY names a built binary; without it, install.sh from a
# source tree builds one (`cargo build --release`).
INSTALL_SH=${INSTALL_SH:-}
if [ -z "$INSTALL_SH" ]; then
    if [ -x "$here/../../install.sh" ]; then INSTALL_SH=$here/../../install.sh
    else INSTALL_SH=/usr/share/tiershim/install.sh; fi
fi
BINARY=${BINARY:-}

prompt=${1:-${PROMPT:-}}
if [ -z "$prompt" ]; then
    echo "entrypoint.sh: no prompt: pass it as the first argument or in PROMPT" >&2
    exit 2
fi

# --- 1. The installation, hardened: the real tools out of the agent's reach --------------------
set -- --prefix "$PREFIX" --audit-log "$AUDIT_LOG" --repos "$REPOS" \
    --cooldown-state "$COOLDOWN_STATE" --inventory "$INVENTORY" --harden
if [ -n "$BINARY" ]; then set -- "$@" --binary "$BINARY"; fi
for h in $HOSTS; do set -- "$@" --host "$h"; done
for f in $MCP_CONFIGS; do set -- "$@" --mcp-config "$f"; done
# shellcheck disable=SC2086 # word splitting is the point
"$INSTALL_SH" "$@" $INSTALL_ARGS

tiershim=$PREFIX/bin/tiershim
config=$PREFIX/lib/tiershim/tier$TIER/tiershim.yaml

# --- 2. The session inventory: which MCP servers and CLIs each domain has, at the session's tier
CLAUDEOPS_TIER=$TIER "$tiershim" inventory --config "$config" --write

# --- 3. The agent: Claude Code in the tier's restricted shell and kernel fence ------------------
# The skills reach Claude Code over MCP from the same files the gate enforces.
skills_mcp='{"mcpServers": {"skills": {"command": "'$tiershim'", "args": ["mcp", "--config", "'$config'"]}}}'
set -- launch --tier "$TIER" --user "$AGENT_USER" --cwd "$WORKDIR"
for v in $KEEP_ENV; do set -- "$@" --keep-env "$v"; done
# shellcheck disable=SC2086
set -- "$@" $LAUNCH_ARGS -- "$CLAUDE" --mcp-config "$skills_mcp"
for f in $MCP_CONFIGS; do set -- "$@" "$f"; done
exec "$tiershim" "$@" -p "$prompt" --output-format stream-json --verbose --dangerously-skip-permissions
