#!/bin/sh
# Lay out a tiershim installation:
#   <prefix>/bin/tiershim                      the gate and admin CLI
#   <prefix>/bin/rbash-tier<N>                 the restricted shell of tier N (CLAUDE_CODE_SHELL)
#   <prefix>/lib/tiershim/tier<N>/             the agent's whole PATH at tier N:
#       gh, tea, docker, psql, mysql, … -> ../../../bin/tiershim   (the gated tools, from shims/tools)
#       cat, ls, grep, …   -> /usr/bin/…              (vetted passthrough tools, shims/passthrough)
#       tiershim.yaml                                 (ceiling N, real tools, audit log, pinned env)
#       profile                                       (the rbash profile, from shims/profile)
#   <prefix>/lib/tiershim/skills/              the shipped baseline skills (from skills/)
#   <prefix>/lib/tiershim/tiershim.schema.json the JSON Schema of tiershim.yaml (from dist/),
#                                              named by each tiershim.yaml for editors
#   <prefix>/lib/tiershim/fence-probe-tier<N>  the kernel fence's probes (mode 0666, empty): the gate
#                                              opens them for writing to tell the tier of its Landlock domain
#   <prefix>/lib/tiershim/home/                the real tools' HOME (unless --tool-home names one)
#   <prefix>/lib/tiershim/secrets.yaml         (--secret: pinned credentials, only the gate reads them)
#   <prefix>/lib/tiershim/git-core/            (--harden: a copy of the real git's exec path, its
#                                              binaries 0751 root:tiershim; GIT_EXEC_PATH is pinned to it)
#   <prefix>/lib/tiershim/real/                (--harden: the real tools, 0710 root:tiershim; each
#                                              binary 0751 root:tiershim, so the agent's user runs
#                                              it only through the gate and cannot read it, which
#                                              keeps its /proc/<pid>/environ closed; scripts 0755)
#
# POSIX sh, idempotent, no network. Re-running converges: what it wrote before is rewritten
# (files whose content is unchanged are left alone) and what it wrote before but would not write
# now is removed. It never deletes or overwrites anything it did not create: every path it
# creates is recorded in <prefix>/lib/tiershim/.install-manifest, and a path that exists but is
# not recorded there stops the install before anything is changed.
set -eu

usage() {
    cat <<'USAGE'
usage: install.sh --prefix DIR [options]
       install.sh --uninstall --prefix DIR

  --prefix DIR       where to install (required); letters, digits and . _ / + - only
  --binary FILE      the tiershim binary to install (default: build it with cargo; run
                     from a package, /usr/share/tiershim/install.sh, the packaged
                     /usr/bin/tiershim)
  --real-dir DIR     a directory holding the real tools, searched first (repeatable);
                     otherwise each real tool is looked up on the current PATH
  --audit-log FILE   the JSONL audit log every tier appends to
  --cooldown-state FILE
                     Claude Ops' cooldown state (cooldown.json), where every tier counts
                     restarts and redeployments against the budgets of policy/cooldown.yaml;
                     with --harden its directory must hold nothing else: it becomes
                     root:tiershim 2770 and the file root:tiershim 0660, so only the gate
                     (holding the group) and root can reach or change it
  --skills DIR       the baseline skills directory (default: the shipped skills, installed
                     into <prefix>/lib/tiershim/skills)
  --repos DIR        the directory holding the repositories; each
                     <repos>/<repo>/.claude-ops/skills/ adds that repository's skills
  --policy DIR       an override policy directory (default: the embedded policy)
  --host NAME        a host ssh may reach (repeatable); without it, any host
  --inventory FILE   the session inventory the entrypoint writes (tiershim inventory --write)
                     and the gate reads for its MCP fallback lines
  --mcp-config FILE  a Claude Code MCP config the inventory lists servers from (repeatable)
  --cooldown-lock-wait SECONDS
                     how long a gate waits for the cooldown state's lock (default 10)
  --env NAME=VALUE   pin a variable in every tier's tiershim.yaml (repeatable); not for
                     credentials (the agent can read tiershim.yaml): use --secret
  --secret NAME=VALUE
                     pin a credential (a token, a password) in the secrets file, which only
                     the gate reads: root:tiershim 0640 with --harden, else 0600 (repeatable)
  --secrets-file FILE
                     read more NAME=VALUE lines for the secrets file from FILE (# comments)
  --tool-home DIR    the directory every real tool runs with as HOME (and XDG_CONFIG_HOME,
                     XDG_DATA_HOME, XDG_STATE_HOME, XDG_CACHE_HOME below it), so ~/.gitconfig,
                     ~/.docker/, ~/.config/gh/ are the operator's (default
                     <prefix>/lib/tiershim/home, created empty); with --harden it is made
                     root-owned and not writable by group or others
  --tiers LIST       which tier directories to write (default 1,2,3)
  --dry-run-pin      pin dry-run on in every tier's tiershim.yaml
  --harden           (root only) create group tiershim, copy the real tools into
                     <prefix>/lib/tiershim/real (0710 root:tiershim; binaries 0751
                     root:tiershim, so a running tool's environment is closed to the
                     agent's other processes; scripts 0755) and the real git's exec
                     path into <prefix>/lib/tiershim/git-core (GIT_EXEC_PATH pinned to
                     it unless --env names one), take "others" access
                     off the originals, install tiershim setgid tiershim, make everything
                     root-owned, and create the audit log root:tiershim 0660
  --group NAME       the group --harden uses (default tiershim)
  --kernel-fence on|off
                     off writes `kernel_fence: off` in every tier's tiershim.yaml: no Landlock
                     domain is made by `tiershim launch`/`shell` nor required by the gate
                     (default on)
  --uninstall        undo an installation at --prefix: put back every owner and mode --harden
                     changed (from its record), remove the group if install.sh created it, and
                     remove every path install.sh created (its manifest); the audit log and
                     the cooldown state are data and are kept
USAGE
}

die() { echo "install.sh: $*" >&2; exit 1; }
bad_usage() { echo "install.sh: $*" >&2; usage >&2; exit 2; }

nl='
'
prefix= binary= audit= tiers=1,2,3 real_dirs= dry_pin= policy= harden= group=tiershim envs= skills= repos= cooldown=
hosts= inventory= mcp_configs= lock_wait= secrets= secrets_file= tool_home= uninstall= kernel_fence=on
while [ $# -gt 0 ]; do
    case $1 in
        --prefix|--binary|--real-dir|--audit-log|--policy|--env|--tiers|--group|--skills|--repos|--cooldown-state|--host|--inventory|--mcp-config|--cooldown-lock-wait|--secret|--secrets-file|--tool-home|--kernel-fence)
            [ $# -ge 2 ] || bad_usage "$1 needs a value"
            opt=$1 val=$2; shift 2 ;;
        --prefix=*|--binary=*|--real-dir=*|--audit-log=*|--policy=*|--env=*|--tiers=*|--group=*|--skills=*|--repos=*|--cooldown-state=*|--host=*|--inventory=*|--mcp-config=*|--cooldown-lock-wait=*|--secret=*|--secrets-file=*|--tool-home=*|--kernel-fence=*)
            opt=${1%%=*} val=${1#*=}; shift ;;
        --dry-run-pin) dry_pin=1; shift; continue ;;
        --harden) harden=1; shift; continue ;;
        --uninstall) uninstall=1; shift; continue ;;
        -h|--help) usage; exit 0 ;;
        *) bad_usage "unknown argument $1" ;;
    esac
    case $opt in
        --prefix) prefix=$val ;;
        --binary) binary=$val ;;
        --real-dir) real_dirs="$real_dirs$nl$val" ;;
        --audit-log) audit=$val ;;
        --policy) policy=$val ;;
        --env) envs="$envs$nl$val" ;;
        --secret) secrets="$secrets$nl$val" ;;
        --secrets-file) secrets_file=$val ;;
        --tool-home) tool_home=$val ;;
        --tiers) tiers=$val ;;
        --group) group=$val ;;
        --skills) skills=$val ;;
        --repos) repos=$val ;;
        --cooldown-state) cooldown=$val ;;
        --host)
            case $val in ''|-*|*[!A-Za-z0-9._:-]*) bad_usage "--host $val: a host name or address (letters, digits and . _ : - only)" ;; esac
            hosts="$hosts$nl$val" ;;
        --inventory) inventory=$val ;;
        --mcp-config) mcp_configs="$mcp_configs$nl$val" ;;
        --cooldown-lock-wait)
            case $val in ''|*[!0-9]*) bad_usage "--cooldown-lock-wait $val: a whole number of seconds" ;; esac
            lock_wait=$val ;;
        --kernel-fence)
            case $val in on|off) kernel_fence=$val ;; *) bad_usage "--kernel-fence $val: on or off" ;; esac ;;
    esac
done
[ -n "$prefix" ] || bad_usage "--prefix is required"

here=$(cd "$(dirname "$0")" && pwd)
abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$(pwd)" "$1" ;; esac; }
prefix=$(abs "$prefix")
prefix=${prefix%/}
# The prefix ends up in the agent's PATH and in its profile: a colon, quote or space would break
# one or the other.
case $prefix in *[!A-Za-z0-9._/+-]*) bad_usage "--prefix $prefix: use letters, digits and . _ / + - only" ;; esac
lib=$prefix/lib/tiershim
manifest=$lib/.install-manifest
# What --harden found before it changed an owner or a mode it did not create, and what it made
# that is not in the manifest (the group; the audit log and cooldown state, which are data):
#   was MODE UID GID PATH    created PATH    group NAME
# Written before each change, kept across re-runs, read by --uninstall.
record=$lib/.install-original

if [ -n "$uninstall" ]; then
    [ -f "$manifest" ] || die "--uninstall: no installation made by install.sh at $prefix ($manifest does not exist); nothing was changed"
    # Putting back another user's ownership, or removing a group, takes root.
    if [ -f "$record" ] && [ "$(id -u)" != 0 ] \
        && awk -v me="$(id -u)" '$1 == "group" || ($1 == "was" && $3 != me) { found = 1 } END { exit !found }' "$record"; then
        die "--uninstall: $prefix was installed with --harden; run it as root to put owners and modes back (nothing was changed)"
    fi
    restored=0 removed=0 kept= group_made=
    # Owners and modes first: chown clears set-id bits, so the mode comes after it.
    if [ -f "$record" ]; then
        while IFS= read -r line; do
            kind=${line%% *} rest=${line#* }
            case $kind in
                was)
                    mode=${rest%% *} rest=${rest#* }
                    owner=${rest%% *} rest=${rest#* }
                    grp=${rest%% *} path=${rest#* }
                    if [ -e "$path" ]; then
                        chown "$owner:$grp" "$path" && chmod "$mode" "$path" && restored=$((restored + 1))
                    fi ;;
                created) [ -e "$rest" ] && kept="$kept$rest$nl" ;;
                group) group_made=$rest ;;
            esac
        done < "$record"
    fi
    # An installation from before the record: the originals' modes from real/ORIGINAL-MODES.
    if [ -f "$lib/real/ORIGINAL-MODES" ] && [ ! -f "$record" ]; then
        while read -r mode path; do
            case $mode in ''|'#'*) continue ;; esac
            [ -e "$path" ] && chmod "$mode" "$path" && restored=$((restored + 1))
        done < "$lib/real/ORIGINAL-MODES"
    fi
    rm -f "$lib/real/ORIGINAL-MODES" "$record"
    # Every path it created, deepest first; a directory that holds someone else's files stays.
    paths=$(sed '1!G;h;$!d' "$manifest")
    rm -f "$manifest"
    old_ifs=$IFS
    IFS=$nl
    for p in $paths; do
        IFS=$old_ifs
        if [ -d "$p" ] && [ ! -L "$p" ]; then
            if rmdir "$p" 2>/dev/null; then
                removed=$((removed + 1))
            elif [ -e "$p" ]; then
                echo "install.sh: left $p (it holds files install.sh did not create)" >&2
            fi
        elif [ -e "$p" ] || [ -L "$p" ]; then
            rm -f "$p" && removed=$((removed + 1))
        fi
    done
    IFS=$old_ifs
    # The group it created, once nothing it made is left in it: data it keeps goes to root's.
    if [ -n "$group_made" ] && getent group "$group_made" >/dev/null 2>&1; then
        IFS=$nl
        for k in $kept; do
            IFS=$old_ifs
            [ -n "$k" ] || continue
            chgrp root "$k"
            [ -d "$k" ] && chmod g-s "$k"
        done
        IFS=$old_ifs
        groupdel "$group_made" || echo "install.sh: could not remove group $group_made (groupdel $group_made)" >&2
    fi
    echo "uninstalled tiershim from $prefix: put back $restored owner(s) and mode(s), removed $removed path(s)${group_made:+ and group $group_made}"
    if [ -n "$kept" ]; then
        printf 'install.sh: kept (data, not installation): %s\n' "$(printf '%s' "$kept" | tr '\n' ' ')" >&2
    fi
    exit 0
fi

[ -z "$audit" ] || audit=$(abs "$audit")
[ -z "$policy" ] || policy=$(abs "$policy")
[ -z "$skills" ] || skills=$(abs "$skills")
[ -z "$repos" ] || repos=$(abs "$repos")
[ -z "$cooldown" ] || cooldown=$(abs "$cooldown")
[ -z "$inventory" ] || inventory=$(abs "$inventory")
[ -z "$tool_home" ] || tool_home=$(abs "$tool_home")
case $tool_home in /|*/../*|*/..) bad_usage "--tool-home $tool_home: name a directory of its own" ;; esac
[ -z "$lock_wait" ] || [ -n "$cooldown" ] || bad_usage "--cooldown-lock-wait needs --cooldown-state (the file whose lock it waits for)"
[ -z "$skills" ] || [ -d "$skills" ] || bad_usage "--skills $skills is not a directory"
[ -z "$repos" ] || [ -d "$repos" ] || bad_usage "--repos $repos is not a directory"
for n in $(echo "$tiers" | tr ',' ' '); do
    case $n in 1|2|3) ;; *) bad_usage "tier $n is not 1, 2 or 3" ;; esac
done
case $group in ''|*[!a-z0-9_-]*) bad_usage "--group $group: use lower-case letters, digits, _ and - only" ;; esac
# A credential's name (the gate's own test, install.rs is_secret_name): it belongs in the
# secrets file, never in tiershim.yaml, which the agent's shell can read.
is_secret_name() {
    case $(printf '%s' "$1" | tr '[:lower:]' '[:upper:]') in
        *TOKEN*|*PASSWORD*|*PASSWD*|*SECRET*|*_PWD|DOCKER_AUTH_CONFIG) return 0 ;;
    esac
    return 1
}
if [ -n "$secrets_file" ]; then
    [ -f "$secrets_file" ] && [ -r "$secrets_file" ] || bad_usage "--secrets-file $secrets_file is not a readable file"
    while IFS= read -r line || [ -n "$line" ]; do
        case $line in ''|'#'*) continue ;; esac
        secrets="$secrets$nl$line"
    done < "$secrets_file"
fi
old_ifs=$IFS; IFS=$nl
for kv in $envs; do
    case $kv in
        [A-Za-z_]*=*) name=${kv%%=*}; case $name in *[!A-Za-z0-9_]*) bad_usage "--env $kv: $name is not a variable name" ;; esac ;;
        *) bad_usage "--env $kv: not NAME=VALUE" ;;
    esac
    if is_secret_name "$name"; then
        bad_usage "--env $name=…: a credential; the agent can read tiershim.yaml, so pin it with --secret $name=… (the secrets file only the gate reads)"
    fi
    case ${kv#*=} in *://*:*@*) bad_usage "--env $name=…: the value holds a URL password; pin it with --secret $name=…" ;; esac
done
for kv in $secrets; do
    case $kv in
        [A-Za-z_]*=*) name=${kv%%=*}; case $name in *[!A-Za-z0-9_]*) bad_usage "--secret $name=…: $name is not a variable name" ;; esac ;;
        *) bad_usage "--secret: a line is not NAME=VALUE" ;;
    esac
    case $nl$envs in *"$nl$name="*) bad_usage "--secret $name=… is also given as --env $name" ;; esac
done
IFS=$old_ifs
if [ -n "$harden" ] && [ "$(id -u)" != 0 ]; then
    bad_usage "--harden must run as root (it creates a group and changes ownership)"
fi
# Hardened, the cooldown state's directory becomes reachable by root and the group only: it
# must hold nothing but the state file, its lock and the gate's temporary files.
if [ -n "$harden" ] && [ -n "$cooldown" ] && [ -d "$(dirname "$cooldown")" ]; then
    base=$(basename "$cooldown")
    for f in "$(dirname "$cooldown")"/* "$(dirname "$cooldown")"/.[!.]*; do
        [ -e "$f" ] || [ -L "$f" ] || continue
        case ${f##*/} in
            "$base"|"$base.lock"|".$base".*.tmp) ;;
            *) die "--cooldown-state $cooldown: with --harden its directory becomes reachable by root and group $group only, and it holds other files ($f); give the state file a directory of its own (nothing was changed)" ;;
        esac
    done
fi

# Run from a package's copy (/usr/share/tiershim/install.sh, no source tree beside it): the
# packaged binary.
if [ -z "$binary" ] && [ ! -f "$here/Cargo.toml" ] && [ -x "$here/../../bin/tiershim" ]; then
    binary=$(cd "$here/../../bin" && pwd)/tiershim
fi
if [ -z "$binary" ]; then
    (cd "$here" && cargo build --release --quiet)
    binary=$(cd "$here" && ls target/*/release/tiershim target/release/tiershim 2>/dev/null | head -n 1)
    [ -n "$binary" ] || die "cargo built no tiershim binary under $here/target"
    binary=$here/$binary
fi
binary=$(abs "$binary")
[ -f "$binary" ] && [ -x "$binary" ] || die "no tiershim binary at $binary"

# Refuse a passthrough list holding a program that can run programs or write files, before
# anything is linked.
if ! out=$("$binary" policy check --passthrough "$here/shims/passthrough" 2>&1); then
    printf '%s\n' "$out" >&2
    die "shims/passthrough or the policy does not pass \`tiershim policy check\`; nothing was installed"
fi

tools=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/shims/tools")
old_manifest=
[ -f "$manifest" ] && old_manifest=$(cat "$manifest")
new_manifest=

# Membership tests without a process per path: the list is wrapped in newlines.
in_list() { case "$nl$2$nl" in *"$nl$1$nl"*) return 0 ;; esac; return 1; }
in_old() { in_list "$1" "$old_manifest"; }
# Record a path as ours. A path that exists and was not ours stops the install.
claim() {
    if { [ -e "$1" ] || [ -L "$1" ]; } && ! in_old "$1"; then
        if [ -d "$1" ] && [ ! -L "$1" ]; then
            return 0 # an existing directory is used, never removed
        fi
        die "$1 exists and was not made by install.sh; move it away and re-run (nothing was changed)"
    fi
    new_manifest="$new_manifest$1$nl"
}

# Find a real tool: the --real-dir directories first, then PATH; never a tiershim link.
find_real() {
    IFS=$nl
    for d in $real_dirs $(printf '%s\n' "$PATH" | tr ':' '\n'); do
        IFS=$old_ifs
        case $d in ''|"$prefix"|"$prefix"/*) continue ;; esac
        if [ -f "$d/$1" ] && [ -x "$d/$1" ] && ! cmp -s "$d/$1" "$binary"; then
            printf '%s\n' "$d/$1"
            return 0
        fi
    done
    IFS=$old_ifs
    return 1
}

# The passthrough tools, each found in the system directories only (not the caller's PATH):
# one `NAME TIERS PATH` line per tool that is installed.
passthrough=
while read -r name ptiers _; do
    case $name in ''|'#'*) continue ;; esac
    found=
    for d in /usr/local/bin /usr/bin /bin /usr/local/sbin /usr/sbin /sbin; do
        if [ -f "$d/$name" ] && [ -x "$d/$name" ]; then found=$d/$name; break; fi
    done
    if [ -n "$found" ]; then
        passthrough="$passthrough$name $ptiers $found$nl"
    else
        echo "install.sh: passthrough $name is not installed; the tiers go without it" >&2
    fi
done < "$here/shims/passthrough"

# What --harden copies for a tool: the file itself, except Debian's psql, which is a link to
# the pg_wrapper Perl script. pg_wrapper picks the program from its own name ($0), which is
# /dev/fd/N when the gate executes it from an open descriptor, and then runs the real psql
# from a directory the agent can reach; so the newest real psql is copied instead.
harden_source() {
    src=$(readlink -f "$1")
    if [ "$2" = psql ] && [ "${src##*/}" = pg_wrapper ]; then
        newest=$(ls -d /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V | tail -n 1)
        [ -n "$newest" ] && src=$newest
    fi
    printf '%s\n' "$src"
}

# Single-quoted YAML scalar.
yq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/''/g")"; }

# Put $1 (a temporary file) at $2 unless $2 already has the same content and mode.
place() {
    if [ -f "$2" ] && [ ! -L "$2" ] && cmp -s "$1" "$2" \
        && [ "$(stat -c %a:%u:%g "$1")" = "$(stat -c %a:%u:%g "$2")" ]; then
        rm -f "$1"
    else
        mv -f "$1" "$2"
    fi
}

# A symlink $2 -> $1, rewritten only when it points elsewhere.
link() {
    if [ -L "$2" ] && [ "$(readlink "$2")" = "$1" ]; then return 0; fi
    ln -sfn "$1" "$2"
}

# Every path this run will write, checked before anything changes. The prefix and the
# directories above the tiers are ours only when this install made them.
for d in "$prefix" "$prefix/bin" "$prefix/lib" "$lib"; do claim "$d"; done
claim "$prefix/bin/tiershim"
for n in $(echo "$tiers" | tr ',' ' '); do
    claim "$prefix/bin/rbash-tier$n"
    claim "$lib/tier$n"
    for t in $tools; do claim "$lib/tier$n/$t"; done
    while read -r name ptiers _; do
        [ -n "$name" ] || continue
        case ",$ptiers," in *",$n,"*) claim "$lib/tier$n/$name" ;; esac
    done <<EOF
$passthrough
EOF
    claim "$lib/tier$n/tiershim.yaml"
    claim "$lib/tier$n/profile"
done
# The shipped skills (unless --skills names another baseline): every file under skills/.
shipped_skills=
if [ -z "$skills" ] && [ -d "$here/skills" ]; then
    claim "$lib/skills"
    shipped_skills=$(cd "$here/skills" && find . -mindepth 1 | sed 's|^\./||' | sort)
    IFS=$nl
    for f in $shipped_skills; do claim "$lib/skills/$f"; done
    IFS=$old_ifs
    skills=$lib/skills
fi
# The schema of tiershim.yaml, for editors (each tiershim.yaml names it by a relative path).
schema=
if [ -f "$here/dist/tiershim.schema.json" ]; then
    schema=$here/dist/tiershim.schema.json
    claim "$lib/tiershim.schema.json"
fi
# The tool home: ours when it is the default; an existing directory is used as it is.
if [ -z "$tool_home" ]; then
    tool_home=$lib/home
    claim "$lib/home"
fi
secrets_path=
if [ -n "$secrets" ]; then
    secrets_path=$lib/secrets.yaml
    claim "$secrets_path"
fi
for n in 1 2 3; do claim "$lib/fence-probe-tier$n"; done
# Hardened: git's exec path, copied to <lib>/git-core with the real tools' modes, and
# GIT_EXEC_PATH pinned to it. git runs its helpers from there as the caller, and
# git-remote-http, which gets git's environment and holds the credential of every HTTP remote,
# is then closed to the agent's other processes as git is. Only a git binary (a script
# stand-in is not run) whose exec path has git-remote-http.
git_core= git_exec_path=
if [ -n "$harden" ] && found=$(find_real git) && [ "$(head -c 2 "$found")" != '#!' ] \
    && git_exec_path=$("$found" --exec-path 2>/dev/null) \
    && [ -d "$git_exec_path" ] && [ -f "$git_exec_path/git-remote-http" ]; then
    case $nl$envs in
        *"${nl}GIT_EXEC_PATH="*) ;; # the operator's own pin wins
        *)
            git_core=$lib/git-core
            claim "$git_core"
            IFS=$nl
            for f in $(cd "$git_exec_path" && find . -mindepth 1 | sed 's|^\./||' | sort); do claim "$git_core/$f"; done
            IFS=$old_ifs
            envs="$envs${nl}GIT_EXEC_PATH=$git_core"
            ;;
    esac
fi
if [ -n "$harden" ]; then
    claim "$lib/real"
    for t in $tools; do find_real "$t" >/dev/null && claim "$lib/real/$t"; done
    # real/ORIGINAL-MODES is not claimed: it records system files' modes and is never removed.
fi

umask 022
mkdir -p "$prefix/bin" "$lib"

# Before install.sh changes a path it did not create: its owner and mode, once (the first run's).
remember() {
    [ -e "$1" ] || return 0
    in_list "$1" "$new_manifest" && return 0
    [ -f "$record" ] || { : > "$record" && chmod 0600 "$record"; }
    grep -Fqx "created $1" "$record" && return 0
    awk -v p="$1" '/^was / { l = $0; sub(/^was [^ ]+ [^ ]+ [^ ]+ /, "", l); if (l == p) found = 1 } END { exit !found }' "$record" && return 0
    printf 'was %s %s\n' "$(stat -c '%a %u %g' "$1")" "$1" >> "$record"
}
# What --harden made that is data, not installation (kept by --uninstall).
made() {
    grep -Fqx "created $1" "$record" 2>/dev/null || printf 'created %s\n' "$1" >> "$record"
}

if [ -n "$harden" ]; then
    [ -f "$record" ] || : > "$record"
    chmod 0600 "$record"
    remember "$prefix/bin"
    remember "$lib"
    chown root:root "$prefix/bin" "$lib"
    chmod go-w "$prefix/bin" "$lib"
    if ! getent group "$group" >/dev/null 2>&1; then
        groupadd --system "$group" || die "cannot create group $group"
        grep -Fqx "group $group" "$record" || printf 'group %s\n' "$group" >> "$record"
    fi
fi

# The binary: copied under a temporary name and renamed, so a running gate never sees a
# half-written file. Hardened, it is setgid the group (chown first: chown clears set-id bits).
cp "$binary" "$prefix/bin/.tiershim.new"
if [ -n "$harden" ]; then
    chown "root:$group" "$prefix/bin/.tiershim.new"
    chmod 2755 "$prefix/bin/.tiershim.new"
else
    chmod 0755 "$prefix/bin/.tiershim.new"
fi
place "$prefix/bin/.tiershim.new" "$prefix/bin/tiershim"

# Hardened: the real tools, copied where only the group can search.
real_map=
if [ -n "$harden" ]; then
    mkdir -p "$lib/real"
    chown "root:$group" "$lib/real"
    chmod 0710 "$lib/real"
    modes=$lib/real/ORIGINAL-MODES
    [ -f "$modes" ] || printf '# Modes install.sh --harden found on the originals before it took access off them.\n' > "$modes"
    chmod 0600 "$modes"
    for t in $tools; do
        found=$(find_real "$t") || continue
        src=$(harden_source "$found" "$t")
        cp "$src" "$lib/real/.$t.new"
        # A binary is executable by the agent's user but readable by the group only: the gate
        # opens it holding the group and executes the open file without it, and the kernel
        # marks a process whose user cannot read its program non-dumpable, which closes its
        # /proc/<pid>/environ (the pinned secrets), mem and fd to the agent's other processes.
        # A script (#!) stays readable: its interpreter opens it again as the caller.
        if [ "$(head -c 2 "$lib/real/.$t.new")" = '#!' ]; then
            chown root:root "$lib/real/.$t.new"
            chmod 0755 "$lib/real/.$t.new"
        else
            chown "root:$group" "$lib/real/.$t.new"
            chmod 0751 "$lib/real/.$t.new"
        fi
        place "$lib/real/.$t.new" "$lib/real/$t"
        real_map="$real_map$t $lib/real/$t$nl"
        # The original stays where it was, without access for others (root still runs it).
        # A file with several names is left alone: git's is also its own helper programs,
        # which the real git runs as the caller.
        if [ "$(stat -c %h "$src")" -gt 1 ]; then
            echo "install.sh: $src has $(stat -c %h "$src") names (hard links); left as is, so it stays reachable outside the gate" >&2
        elif [ "$(( $(stat -c '0%a' "$src") & 7 ))" -ne 0 ]; then
            grep -Fq " $src" "$modes" || printf '%s %s\n' "$(stat -c %a "$src")" "$src" >> "$modes"
            remember "$src"
            chmod o-rwx "$src"
        fi
    done
else
    for t in $tools; do
        found=$(find_real "$t") && real_map="$real_map$t $found$nl"
    done
fi
# Hardened: git's exec path (above), each program as the real tools are: a binary 0751
# root:<group>, a script or data file root-owned as it was (scripts stay readable), links as
# they are (git's builtins are links to git).
if [ -n "$git_core" ]; then
    mkdir -p "$git_core"
    chown root:root "$git_core"
    chmod 0755 "$git_core"
    IFS=$nl
    for f in $(cd "$git_exec_path" && find . -mindepth 1 | sed 's|^\./||' | sort); do
        from=$git_exec_path/$f to=$git_core/$f
        if [ -L "$from" ]; then
            link "$(readlink "$from")" "$to"
        elif [ -d "$from" ]; then
            mkdir -p "$to"
            chown root:root "$to"
            chmod 0755 "$to"
        elif [ -f "$from" ]; then
            cp -p "$from" "$to.new"
            if [ -x "$from" ] && [ "$(head -c 2 "$from")" != '#!' ]; then
                chown "root:$group" "$to.new"
                chmod 0751 "$to.new"
            else
                chown root:root "$to.new"
                chmod go-w "$to.new"
            fi
            place "$to.new" "$to"
        fi
    done
    IFS=$old_ifs
fi
# The tools not found are linked all the same: the gate answers them with "No suitable tool
# found" (exit 127), which an agent takes as "use something else"; doctor notes them.
not_found=
for t in $tools; do
    printf '%s' "$real_map" | grep -q "^$t " || not_found="$not_found $t"
done

# The kernel fence's probes, one per tier: every user may open them for writing; a Landlock
# domain of tier N may open only the lower tiers' (they lie beneath no tier's writable paths),
# so the gate of tier N tells a caller in the domain of tier N by open(O_WRONLY). Emptied on
# every run: nothing reads what anyone wrote into them. (An earlier release's single probe goes.)
rm -f "$lib/fence-probe"
for n in 1 2 3; do
    p=$lib/fence-probe-tier$n
    if [ ! -f "$p" ] || [ -s "$p" ]; then : > "$p"; fi
    [ -z "$harden" ] || chown root:root "$p"
    chmod 0666 "$p"
done

# The audit log. Hardened: created root:group 0660, so only the gate (holding the group)
# appends to it and the agent can neither write nor truncate it.
if [ -n "$audit" ]; then
    mkdir -p "$(dirname "$audit")"
    if [ -n "$harden" ]; then
        if [ -e "$audit" ]; then remember "$audit"; else : > "$audit"; made "$audit"; fi
        chown "root:$group" "$audit"
        chmod 0660 "$audit"
    fi
fi

# The cooldown state. Hardened: its directory is root:group 2770 and the file and its lock
# root:group 0660, so only the gate (holding the group) and root reach them: the agent can
# neither read nor reset its budget. The gate replaces the file by rename, so the directory,
# not the file's mode, is what keeps the agent out; it must therefore hold nothing else.
if [ -n "$cooldown" ]; then
    cdir=$(dirname "$cooldown")
    if [ -n "$harden" ]; then
        if [ -d "$cdir" ]; then remember "$cdir"; else mkdir -p "$cdir"; made "$cdir"; fi
    else
        mkdir -p "$cdir"
    fi
    if [ -n "$harden" ]; then
        chown "root:$group" "$cdir"
        chmod 2770 "$cdir"
        if [ -e "$cooldown" ]; then remember "$cooldown"; else printf '{"services": {}}\n' > "$cooldown"; made "$cooldown"; fi
        if [ -e "$cooldown.lock" ]; then remember "$cooldown.lock"; else : > "$cooldown.lock"; made "$cooldown.lock"; fi
        chown "root:$group" "$cooldown" "$cooldown.lock"
        chmod 0660 "$cooldown" "$cooldown.lock"
    fi
fi

# The tool home: the real tools' HOME, the operator's. Hardened, it and everything in it are
# root's and writable by no one else, so no agent can plant a ~/.gitconfig, ~/.docker/ or
# ~/.config/gh/ there.
# An operator's own tool home that existed: the owners and modes of what is changed in it are
# recorded first, for --uninstall.
if [ -d "$tool_home" ]; then
    if [ -n "$harden" ]; then
        find "$tool_home" > "$lib/.tool-home.list"
        while IFS= read -r p; do remember "$p"; done < "$lib/.tool-home.list"
        rm -f "$lib/.tool-home.list"
    else
        remember "$tool_home"
    fi
fi
mkdir -p "$tool_home"
if [ -n "$harden" ]; then
    chown -R root:root "$tool_home"
    chmod -R go-w "$tool_home"
fi
chmod 0755 "$tool_home"

# The secrets file: pinned credentials, read by the gate only (holding the group when hardened).
if [ -n "$secrets_path" ]; then
    {
        echo "# Written by install.sh: pinned credentials, read by the gate only. Re-running install.sh rewrites it."
        IFS=$nl
        for kv in $secrets; do
            [ -n "$kv" ] && echo "${kv%%=*}: $(yq "${kv#*=}")"
        done
        IFS=$old_ifs
    } > "$lib/.secrets.yaml.new"
    if [ -n "$harden" ]; then
        chown "root:$group" "$lib/.secrets.yaml.new"
        chmod 0640 "$lib/.secrets.yaml.new"
    else
        chmod 0600 "$lib/.secrets.yaml.new"
    fi
    place "$lib/.secrets.yaml.new" "$secrets_path"
fi

if [ -n "$shipped_skills" ]; then
    mkdir -p "$lib/skills"
    [ -z "$harden" ] || chown root:root "$lib/skills"
    chmod 0755 "$lib/skills"
    IFS=$nl
    for f in $shipped_skills; do
        IFS=$old_ifs
        if [ -d "$here/skills/$f" ]; then
            mkdir -p "$lib/skills/$f"
            chmod 0755 "$lib/skills/$f"
        else
            cp "$here/skills/$f" "$lib/skills/.new"
            chmod 0644 "$lib/skills/.new"
            place "$lib/skills/.new" "$lib/skills/$f"
        fi
    done
    IFS=$old_ifs
fi

if [ -n "$schema" ]; then
    cp "$schema" "$lib/.tiershim.schema.json.new"
    chmod 0644 "$lib/.tiershim.schema.json.new"
    place "$lib/.tiershim.schema.json.new" "$lib/tiershim.schema.json"
fi

for n in $(echo "$tiers" | tr ',' ' '); do
    dir=$lib/tier$n
    mkdir -p "$dir"
    [ -z "$harden" ] || chown root:root "$dir"
    chmod 0755 "$dir"
    for t in $tools; do
        link ../../../bin/tiershim "$dir/$t"
    done
    while read -r name ptiers p; do
        [ -n "$name" ] || continue
        case ",$ptiers," in *",$n,"*) link "$p" "$dir/$name" ;; esac
    done <<EOF
$passthrough
EOF

    {
        [ -z "$schema" ] || echo "# yaml-language-server: \$schema=../tiershim.schema.json"
        echo "# Written by install.sh; re-running it rewrites this file."
        echo "tier: $n"
        [ -z "$dry_pin" ] || echo "dry_run: true"
        [ -z "$policy" ] || echo "policy: $(yq "$policy")"
        [ -z "$audit" ] || echo "audit_log: $(yq "$audit")"
        [ -z "$cooldown" ] || echo "cooldown_state: $(yq "$cooldown")"
        [ -z "$lock_wait" ] || echo "cooldown_lock_wait: $lock_wait"
        [ "$kernel_fence" = on ] || echo "kernel_fence: off"
        [ -z "$inventory" ] || echo "inventory: $(yq "$inventory")"
        echo "tool_home: $(yq "$tool_home")"
        [ -z "$secrets_path" ] || echo "secrets: $(yq "$secrets_path")"
        if [ -n "$mcp_configs" ]; then
            echo "mcp_configs:"
            IFS=$nl
            for m in $mcp_configs; do
                [ -n "$m" ] && echo "  - $(yq "$(abs "$m")")"
            done
            IFS=$old_ifs
        fi
        if [ -n "$hosts" ]; then
            echo "hosts:"
            IFS=$nl
            for h in $hosts; do
                [ -n "$h" ] && echo "  - $(yq "$h")"
            done
            IFS=$old_ifs
        fi
        if [ -n "$skills" ] || [ -n "$repos" ]; then
            echo "skills:"
            [ -z "$skills" ] || echo "  baseline: $(yq "$skills")"
            [ -z "$repos" ] || echo "  repos: $(yq "$repos")"
        fi
        echo "real:"
        for t in $tools; do
            p=$(printf '%s' "$real_map" | sed -n "s|^$t ||p")
            if [ -n "$p" ]; then echo "  $t: $(yq "$p")"; else echo "  # $t: not found when installed"; fi
        done
        if [ -n "$envs" ]; then
            echo "env:"
            IFS=$nl
            for kv in $envs; do
                [ -n "$kv" ] && echo "  ${kv%%=*}: $(yq "${kv#*=}")"
            done
            IFS=$old_ifs
        fi
    } > "$dir/.tiershim.yaml.new"
    chmod 0644 "$dir/.tiershim.yaml.new"
    place "$dir/.tiershim.yaml.new" "$dir/tiershim.yaml"

    sed -e "s|@DIR@|$dir|g" -e "s|@TIER@|$n|g" "$here/shims/profile" > "$dir/.profile.new"
    chmod 0644 "$dir/.profile.new"
    place "$dir/.profile.new" "$dir/profile"

    printf '#!/bin/sh\n# The restricted shell of tier %s (written by install.sh): point CLAUDE_CODE_SHELL here.\nexec %s/bin/tiershim shell --tier %s "$@"\n' \
        "$n" "$prefix" "$n" > "$prefix/bin/.rbash-tier$n.new"
    chmod 0755 "$prefix/bin/.rbash-tier$n.new"
    place "$prefix/bin/.rbash-tier$n.new" "$prefix/bin/rbash-tier$n"
done

# Converge: remove what an earlier run created and this one did not (deepest paths first). A
# directory that still holds someone else's files stays, and stays ours.
stale=$(printf '%s' "$old_manifest" | sed '1!G;h;$!d')
IFS=$nl
for p in $stale; do
    IFS=$old_ifs
    in_list "$p" "$new_manifest" && continue
    if [ -d "$p" ] && [ ! -L "$p" ]; then
        if ! rmdir "$p" 2>/dev/null; then
            echo "install.sh: left $p (it holds files install.sh did not create)" >&2
            new_manifest="$new_manifest$p$nl"
        fi
    elif [ -e "$p" ] || [ -L "$p" ]; then
        rm -f "$p"
    fi
done
IFS=$old_ifs
printf '%s' "$new_manifest" > "$manifest.new"
chmod 0644 "$manifest.new"
place "$manifest.new" "$manifest"

[ -z "$not_found" ] || echo "install.sh: not installed, so the gate answers them with \"No suitable tool found\" (exit 127):$not_found; install one and run install.sh again to use it" >&2
echo "installed tiershim into $prefix (tiers $tiers${harden:+, hardened with group $group}); check it with: $prefix/bin/tiershim doctor --prefix $prefix"
