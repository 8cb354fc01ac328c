#!/usr/bin/env python3
"""Writes link/hot-text.ld: the functions a gated call runs, placed together at the start of the
gate's code (`make hot-text`; needs valgrind).

Why: the gate's code is about 8 MB, and a call runs a few hundred functions spread across it;
the kernel maps a program's code in pieces of 64 KB as they are first touched, and on the
machines measured each first touch cost about 1.3 us, as much as the rest of a small call's
work. With the functions a call runs side by side, a call touches about 30 pieces fewer
(docs/PERFORMANCE.md).

How: each call below runs through the release gate under callgrind, which records every function
that ran before the gate executes the real tool (`--dump-before=execve`; the real tools are a
no-op). The functions are written as input-section patterns of a linker script that build.rs
passes to the linker for the tiershim binary (it adds an output section `.text.hot` before
`.text`: INSERT keeps the default layout for everything else). Names are v0-mangled
(.cargo/config.toml), so a generic function's instances are told apart by their type arguments;
the one part of a name that changes from build to build, a crate's disambiguator hash, is a
wildcard. The C library's functions are named by the archive member that holds them.

A stale list costs speed, never correctness: a function it does not name is laid out where the
linker would put it anyway. `make bench` says how much of the list the gate it measured matched.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "link", "hot-text.ld")

# Each call is (tier, argv); what a call at each tier runs most often: reads, an allowed and a
# refused change, one call per tool family.
CALLS = [
    (1, ["docker", "ps"]),
    (1, ["docker", "logs", "--tail", "50", "web"]),
    (1, ["docker", "restart", "web"]),
    (2, ["docker", "restart", "web"]),
    (1, ["git", "status"]),
    (1, ["git", "log", "-1", "--oneline"]),
    (1, ["curl", "-s", "https://example.com/health"]),
    (1, ["gh", "pr", "list"]),
    (1, ["gh", "api", "repos/o/r/pulls"]),
    (1, ["psql", "-c", "select 1"]),
    (1, ["kubectl", "get", "pods"]),
]
TOOLS = sorted({argv[0] for _, argv in CALLS})


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def main():
    valgrind = shutil.which("valgrind")
    if not valgrind:
        sys.exit("hot-text: valgrind is not installed (Debian: apt-get install valgrind)")
    host = subprocess.check_output(["rustc", "--print", "host-tuple"], text=True).strip()
    run(["cargo", "build", "--release"], cwd=ROOT)
    gate = os.path.join(ROOT, "target", host, "release", "tiershim")
    # For each function, the calls that ran it.
    calls = {}
    with tempfile.TemporaryDirectory() as t:
        os.chmod(t, 0o755)
        noop = os.path.join(t, "noop")
        run(["cc", "-O2", "-static", "-o", noop, os.path.join(ROOT, "benches", "noop.c")])
        home = os.path.join(t, "home")
        os.mkdir(home)
        installed = os.path.join(t, "tiershim")
        shutil.copy(gate, installed)
        for tier in (1, 2):
            d = os.path.join(t, f"tier{tier}")
            os.mkdir(d)
            for tool in TOOLS:
                os.symlink(installed, os.path.join(d, tool))
            real = ", ".join(f"{tool}: {noop}" for tool in TOOLS)
            with open(os.path.join(d, "tiershim.yaml"), "w") as f:
                f.write(f"tier: {tier}\nreal: {{{real}}}\nkernel_fence: off\ntool_home: {home}\n")
        for i, (tier, argv) in enumerate(CALLS):
            out = os.path.join(t, f"cg.{i}")
            env = {"CLAUDEOPS_TIER": str(tier), "PATH": os.path.join(t, f"tier{tier}"), "HOME": home}
            p = subprocess.run(
                [valgrind, "--tool=callgrind", "--demangle=no", "--dump-before=execve",
                 f"--callgrind-out-file={out}", os.path.join(t, f"tier{tier}", argv[0])] + argv[1:],
                env=env, cwd=t, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            code = p.returncode
            print(f"tier {tier}: {' '.join(argv)}: exit {code}")
            if code not in (0, 77):
                sys.exit(f"hot-text: the call ended {code}, not 0 (ran) or 77 (refused): {p.stderr[-2000:]}")
            names = set()
            for f in sorted(os.listdir(t)):
                if f.startswith(f"cg.{i}"):
                    for line in open(os.path.join(t, f), errors="replace"):
                        m = re.match(r"c?fn=\(\d+\) (.+)$", line)
                        if m:
                            names.add(m.group(1).split("'")[0])
            for n in names:
                calls.setdefault(n, set()).add(i)
    libc = subprocess.check_output(["cc", "-print-file-name=libc.a"], text=True).strip()
    member = {}
    for line in subprocess.check_output(["nm", "-A", "--defined-only", libc], text=True, stderr=subprocess.DEVNULL).splitlines():
        m = re.match(r"[^:]+:([^:]+\.o):\s*[0-9a-f]*\s+[TtWi]\s+(\S+)$", line)
        if m:
            member.setdefault(m.group(2), m.group(1))
    patterns = []
    # Ordered by which calls run them, the first call weighing most: everything the first call
    # runs is one stretch (what every call runs at its start), then within it and after it the
    # second call's, and so on; so the calls listed first, the most common, touch the fewest
    # pieces of code.
    for n in sorted(calls, key=lambda n: ([i not in calls[n] for i in range(len(CALLS))], n)):
        if n.startswith("_R"):
            # LLVM puts a function it thinks cold in `.text.unlikely.<name>`.
            s = re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", n)
            p = f"*(.text.{s} .text.unlikely.{s})"
        elif n.startswith("_ZN"):
            sys.exit(f"hot-text: {n} is not v0-mangled: is `-C symbol-mangling-version=v0` in .cargo/config.toml?")
        elif n == "_start":
            p = "*crt1.o(.text .text.*)"
        elif n in member:
            m = member[n]
            # A string function has one variant per instruction set, chosen at start for the
            # machine (valgrind shows an older one than the machine may run): all of them.
            v = re.match(r"^([a-z_]+)-(sse|ssse|avx|evex|erms)", m)
            p = f"*libc.a:{v.group(1)}-*.o(.text .text.*)" if v else f"*libc.a:{m}(.text .text.*)"
        elif re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", n):
            p = f"*(.text.{n} .text.unlikely.{n})"
        else:
            continue
        if p not in patterns:
            patterns.append(p)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("/* Written by `make hot-text` (scripts/hot-text.py): the functions a gated call runs, placed\n"
                "   together at the start of the code. Do not edit; rerun it. */\n")
        f.write("SECTIONS {\n  .text.hot : {\n")
        for p in patterns:
            f.write(f"    {p}\n")
        f.write("  }\n} INSERT BEFORE .text;\n")
    print(f"wrote {os.path.relpath(OUT, ROOT)}: {len(patterns)} patterns from {len(CALLS)} calls")


if __name__ == "__main__":
    main()
