#!/bin/sh
# Lay out a tiershim installation:
#   <prefix>/bin/tiershim
#   <prefix>/lib/tiershim/tier<N>/{gh,tea,docker,psql,mysql,curl,git -> ../../../bin/tiershim, tiershim.yaml}
#
# POSIX sh, idempotent, no network. Re-running converges: links and tiershim.yaml are rewritten,
# nothing else is touched.
set -eu

usage() {
    cat <<'USAGE'
usage: install.sh --prefix DIR [--binary FILE] [--real-dir DIR]... [--audit-log FILE] [--tiers 1,2,3] [--dry-run-pin]

  --prefix DIR      where to install (required)
  --binary FILE     the tiershim binary to install (default: build it with cargo)
  --real-dir DIR    a directory holding the real tools, searched first (repeatable);
                    otherwise each real tool is looked up on the current PATH
  --audit-log FILE  the JSONL audit log every tier appends to
  --tiers LIST      which tier directories to write (default 1,2,3)
  --dry-run-pin     pin dry-run on in every tier's tiershim.yaml
USAGE
}

prefix= binary= audit= tiers=1,2,3 real_dirs= dry_pin=
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=${2:?--prefix needs a value}; shift 2 ;;
        --prefix=*) prefix=${1#*=}; shift ;;
        --binary) binary=${2:?--binary needs a value}; shift 2 ;;
        --binary=*) binary=${1#*=}; shift ;;
        --real-dir) real_dirs="$real_dirs ${2:?--real-dir needs a value}"; shift 2 ;;
        --real-dir=*) real_dirs="$real_dirs ${1#*=}"; shift ;;
        --audit-log) audit=${2:?--audit-log needs a value}; shift 2 ;;
        --audit-log=*) audit=${1#*=}; shift ;;
        --tiers) tiers=${2:?--tiers needs a value}; shift 2 ;;
        --tiers=*) tiers=${1#*=}; shift ;;
        --dry-run-pin) dry_pin=1; shift ;;
        -h|--help) usage; exit 0 ;;
        --skills|--repos|--harden|--skills=*|--repos=*)
            echo "install.sh: $1 is not supported by this version yet (skills, path scope and hardening are not built)" >&2; exit 2 ;;
        *) echo "install.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] || { usage >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
case $prefix in /*) ;; *) prefix=$(pwd)/$prefix ;; esac
if [ -z "$binary" ]; then
    (cd "$here" && cargo build --release --quiet)
    binary=$(cd "$here" && ls target/*/release/tiershim 2>/dev/null | head -n 1)
    binary=$here/$binary
fi
[ -x "$binary" ] || { echo "install.sh: no tiershim binary at $binary" >&2; exit 1; }

umask 022
mkdir -p "$prefix/bin" "$prefix/lib/tiershim"
# Copy to a temporary name and rename, so a running gate never sees a half-written binary.
cp "$binary" "$prefix/bin/.tiershim.new"
chmod 0755 "$prefix/bin/.tiershim.new"
mv -f "$prefix/bin/.tiershim.new" "$prefix/bin/tiershim"

tools=$(grep -v '^#' "$here/shims/tools" | grep -v '^$')

# Find a real tool: the --real-dir directories first, then PATH, never a tiershim link.
find_real() {
    for d in $real_dirs $(echo "$PATH" | tr ':' ' '); do
        case $d in "$prefix"/*) continue ;; esac
        if [ -x "$d/$1" ] && [ ! -d "$d/$1" ]; then
            if ! cmp -s "$d/$1" "$prefix/bin/tiershim"; then
                echo "$d/$1"
                return 0
            fi
        fi
    done
    return 1
}

for n in $(echo "$tiers" | tr ',' ' '); do
    case $n in 1|2|3) ;; *) echo "install.sh: tier $n is not 1, 2 or 3" >&2; exit 2 ;; esac
    dir=$prefix/lib/tiershim/tier$n
    mkdir -p "$dir"
    chmod 0755 "$dir"
    for t in $tools; do
        ln -sfn ../../../bin/tiershim "$dir/$t"
    done
    cfg=$dir/.tiershim.yaml.new
    {
        echo "# Written by install.sh; re-running it rewrites this file."
        echo "tier: $n"
        [ -n "$dry_pin" ] && echo "dry_run: true"
        [ -n "$audit" ] && echo "audit_log: $audit"
        echo "real:"
        for t in $tools; do
            if p=$(find_real "$t"); then echo "  $t: $p"; else echo "  # $t: not found when installed"; fi
        done
    } > "$cfg"
    chmod 0644 "$cfg"
    mv -f "$cfg" "$dir/tiershim.yaml"
done
echo "installed tiershim into $prefix (tiers $tiers)"
