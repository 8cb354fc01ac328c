#!/usr/bin/env bash
# `make bench-profiles`: what each release profile costs to build and what the gate then costs
# per call. Each profile is built from nothing in a target directory of its own (as a fresh clone
# builds it), one after the other, then rebuilt after one source file changes (what a developer
# waits for). The 1-minute load average is recorded before and after each build, because the
# machine may be shared and a figure taken under load means little. Then one interleaved run of
# benches/gate.rs measures a call with no skill check through every profile's binary.
#
# Writes the "## Release profile" section at the end of docs/PERFORMANCE.md (make bench keeps
# it). Cargo.toml's [profile.release] says which profile is chosen and why. Takes a long time:
# four clean release builds.
set -euo pipefail
cd "$(dirname "$0")/.."
host=$(rustc --print host-tuple)
out=target/profiles
variants=(
    "fat LTO, 1 codegen unit|fat|1"
    "thin LTO, 16 codegen units|thin|16"
    "thin LTO, 1 codegen unit|thin|1"
    "no LTO, 16 codegen units|off|16"
)
load() { cut -d' ' -f1 /proc/loadavg; }
secs() { awk -v s="$1" 'BEGIN { printf "%d min %02d s", s / 60, s % 60 }'; }

rows=
gates=
for v in "${variants[@]}"; do
    IFS='|' read -r label lto cgu <<< "$v"
    dir=$out/$lto-$cgu
    rm -rf "$dir"
    export CARGO_TARGET_DIR=$dir CARGO_PROFILE_RELEASE_LTO=$lto CARGO_PROFILE_RELEASE_CODEGEN_UNITS=$cgu
    echo "bench-profiles: building $label (load $(load))" >&2
    l0=$(load); t0=$(date +%s)
    cargo build --release --locked --quiet
    t1=$(date +%s); l1=$(load)
    touch src/decision.rs
    cargo build --release --locked --quiet
    t2=$(date +%s); l2=$(load)
    bin=$dir/$host/release/tiershim
    size=$(stat -c %s "$bin")
    rows="$rows| $label | $(secs $((t1 - t0))) (load $l0 → $l1) | $(secs $((t2 - t1))) (load → $l2) | $(awk -v b="$size" 'BEGIN { printf "%.1f MiB", b / 1048576 }') |"$'\n'
    gates="$gates$label=$(pwd)/$bin;"
done

# The benchmark program itself is built with the last profile (no LTO): it only times processes.
echo "bench-profiles: measuring the gate of each profile (load $(load))" >&2
lb=$(load)
table=$(TIERSHIM_BENCH_GATES=$gates cargo bench --locked --quiet --bench gate -- --bench)
la=$(load)
unset CARGO_TARGET_DIR CARGO_PROFILE_RELEASE_LTO CARGO_PROFILE_RELEASE_CODEGEN_UNITS

section="## Release profile

Written by \`make bench-profiles\` (scripts/bench-profiles.sh) on $(date -u +%Y-%m-%d), $(nproc) CPUs. Each
profile was built from nothing in a target directory of its own, one after the other, then rebuilt
after one source file changed (\`src/decision.rs\`). Beside each build time is the machine's
1-minute load average before and after it: on a shared machine a build under load takes longer
than it would alone, so compare rows taken under similar load. Cargo.toml's \`[profile.release]\`
says which profile is chosen and why.

| profile | clean build | rebuild after one change | binary |
|---|---|---|---|
$rows
A call with no skill check (\`docker ps\`, allowed, exec) through each profile's binary, in one
interleaved run (load $lb → $la):

$table
"
doc=docs/PERFORMANCE.md
{
    if grep -q '^## Release profile' "$doc"; then sed '/^## Release profile/,$d' "$doc"; else cat "$doc"; echo; fi
    printf '%s' "$section"
} > "$doc.new"
mv "$doc.new" "$doc"
printf '%s' "$section"
