//! `make bench`: what the gate costs per call, measured in one run against a bare exec hop (a C
//! program that only execs its target) and the direct call, as ratios of medians of
//! interleaved runs. Scenarios: a call with no skill check, a PR scope check of 10 and 10,000
//! changed files, and the same check with 10 and 1,000 skill files present (200 patterns, and
//! a heavier set with rules in every file); plus the peak memory of each. Writes docs/PERFORMANCE.md. No thresholds: the numbers are for people, and
//! machines are noisy.
//!
//! Under `cargo bench` (which passes `--bench`) it runs the full measurement and writes the
//! file, keeping its "## Release profile" section (written by `make bench-profiles`). Under
//! `cargo test --all-targets` the same program runs a few rounds against the test build as a
//! smoke test (so it cannot rot) and writes nothing.
//!
//! With `TIERSHIM_BENCH_GATES=label=/path/to/tiershim;label=…` (scripts/bench-profiles.sh) it
//! measures only a call with no skill check, once per given binary, interleaved in one run with
//! the direct call and the exec hop, and prints that table: the gate's overhead per build profile.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Rounds of the per-call variants under `cargo bench`, and in the smoke run.
const ROUNDS: usize = 1000;
const SMOKE_ROUNDS: usize = 3;
/// Rounds of the scope-check variants (each runs git).
const SCOPE_ROUNDS: usize = 100;

/// Compile `src` and install the program at `out` as a copy (see [`installed`]).
fn cc(out: &Path, src: &Path, extra: &[&str]) {
    let built = out.with_extension("built");
    let status = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&built)
        .arg(src)
        .args(extra)
        .status()
        .expect("cc");
    assert!(status.success(), "cc {} failed", src.display());
    installed(&built, out);
}

/// A copy of the program `src` at `dst`, as install.sh places the gate (`cp`, then `mv`). Every
/// program measured here runs from a copy: the file a linker wrote is laid out differently in
/// the page cache than one written by `cp` (or read from disk), and costs more to map: the same
/// gate binary measured about 0.2 ms more per call run from the linker's output than from a
/// copy of it.
fn installed(src: &Path, dst: &Path) -> PathBuf {
    std::fs::copy(src, dst).unwrap_or_else(|e| panic!("copy {} to {}: {e}", src.display(), dst.display()));
    std::fs::set_permissions(dst, std::fs::Permissions::from_mode(0o755)).unwrap();
    dst.to_path_buf()
}

fn which(tool: &str) -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).map(|d| d.join(tool)).find(|p| p.is_file()))
        .unwrap_or_else(|| panic!("{tool} is not installed"))
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new(which("git"))
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@example.com")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

struct Variant {
    name: String,
    cmd: Command,
    times: Vec<Duration>,
    /// The minor page faults of each run (before and after exec): on the machines measured each
    /// cost about as much as the rest of a small call's work.
    faults: Vec<i64>,
    /// Peak resident set of any run, KiB.
    max_rss: i64,
    /// The exit status every run must have (checked in the warm-up): a gate that fails early
    /// on its config would be measured as a fast call.
    expect: i32,
}

impl Variant {
    fn new(name: impl Into<String>, mut cmd: Command) -> Variant {
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        Variant {
            name: name.into(),
            cmd,
            times: Vec::new(),
            faults: Vec::new(),
            max_rss: 0,
            expect: 0,
        }
    }

    /// A variant that must end with `code` (a refusal: 77).
    fn exiting(mut self, code: i32) -> Variant {
        self.expect = code;
        self
    }

    /// One fork+exec+wait; the child's rusage gives its peak memory (before and after exec).
    // The child is reaped with wait4 (for its rusage), which clippy cannot see.
    #[allow(clippy::zombie_processes)]
    fn run_once(&mut self) -> (Duration, i32, i64) {
        let start = Instant::now();
        // Reaped by wait4 below, which also returns the child's rusage.
        #[allow(clippy::zombie_processes)]
        let child = self.cmd.spawn().unwrap();
        let mut status = 0;
        // SAFETY: rusage is plain data the kernel fills in; the pid is our own child's.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let pid = child.id() as libc::pid_t;
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        let took = start.elapsed();
        assert_eq!(r, pid, "wait4");
        self.max_rss = self.max_rss.max(ru.ru_maxrss);
        let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -1 };
        (took, code, ru.ru_minflt)
    }
}

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2]
}

fn median_faults(v: &Variant) -> i64 {
    let mut f = v.faults.clone();
    f.sort();
    f.get(f.len() / 2).copied().unwrap_or(0)
}

fn p90(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[((v.len() as f64 - 1.0) * 0.9) as usize]
}

/// Interleave the variants `rounds` times after a warm-up, so drift hits all alike.
fn measure(variants: &mut [Variant], rounds: usize) {
    for v in variants.iter_mut() {
        for _ in 0..rounds.clamp(1, 20) {
            let (_, code, _) = v.run_once();
            assert_eq!(code, v.expect, "{}: exit {code}, not {}", v.name, v.expect);
        }
        v.max_rss = 0;
    }
    for _ in 0..rounds {
        for v in variants.iter_mut() {
            let (t, _, faults) = v.run_once();
            v.times.push(t);
            v.faults.push(faults);
        }
    }
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// What the gate's ELF file says about its start-up cost.
struct Layout {
    /// The entries of `.rela.dyn`.
    relocs: u64,
    /// The size of `.data.rel.ro`, bytes.
    relro: u64,
    /// The size of `.text.hot` (the functions link/hot-text.ld names), bytes.
    hot: u64,
    /// The functions' names of the symbol table.
    functions: Vec<String>,
}

/// The gate's [`Layout`], from its section headers and symbol table.
fn layout(gate: &Path) -> Layout {
    let f = std::fs::read(gate).unwrap();
    let u16_at = |o: usize| u16::from_le_bytes(f[o..o + 2].try_into().unwrap()) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(f[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(f[o..o + 8].try_into().unwrap());
    assert_eq!(&f[..5], b"\x7fELF\x02", "{} is not a 64-bit ELF file", gate.display());
    let (shoff, shentsize, shnum, shstrndx) = (u64_at(0x28) as usize, u16_at(0x3a), u16_at(0x3c), u16_at(0x3e));
    let header = |i: usize| shoff + i * shentsize;
    let names = u64_at(header(shstrndx) + 0x18) as usize;
    let c_str = |at: usize| {
        let end = f[at..].iter().position(|&b| b == 0).unwrap();
        &f[at..at + end]
    };
    let mut l = Layout {
        relocs: 0,
        relro: 0,
        hot: 0,
        functions: Vec::new(),
    };
    for i in 0..shnum {
        let h = header(i);
        let (offset, size) = (u64_at(h + 0x18) as usize, u64_at(h + 0x20));
        match c_str(names + u32_at(h)) {
            b".rela.dyn" => l.relocs += size / 24,
            b".data.rel.ro" => l.relro += size,
            b".text.hot" => l.hot += size,
            _ => {}
        }
        // SHT_SYMTAB: 24-byte entries, their names in the section `sh_link` names.
        if u32_at(h + 4) == 2 {
            let strtab = u64_at(header(u32_at(h + 0x28)) + 0x18) as usize;
            for e in (offset..offset + size as usize).step_by(24) {
                // STT_FUNC
                if f[e + 4] & 0xf == 2 {
                    l.functions.push(String::from_utf8_lossy(c_str(strtab + u32_at(e))).into_owned());
                }
            }
        }
    }
    l
}

/// The function names link/hot-text.ld lists (`*(.text.NAME …)`), and how many of them name no
/// function of `functions`: a list gone stale as the code changed (`make hot-text` rewrites it).
fn hot_text_stale(script: &str, functions: &[String]) -> (usize, usize) {
    let names: Vec<&str> = script
        .lines()
        .filter_map(|l| l.trim().strip_prefix("*(.text."))
        .map(|l| l.split([' ', ')']).next().unwrap_or(""))
        .collect();
    let stale = names.iter().filter(|n| !functions.iter().any(|f| glob(n, f))).count();
    (names.len(), stale)
}

/// Whether `name` fits `pattern`, whose only wildcard is `*` (any run of characters).
fn glob(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// A tier directory with links to the gate and a tiershim.yaml: `config`, with an operator's
/// tool home and without the kernel fence (the benchmark is not started inside a Landlock
/// domain), which a gated call needs before it runs anything.
fn tier_dir(root: &Path, name: &str, gate: &Path, config: &str) -> PathBuf {
    let home = root.join("tool-home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = format!("{config}kernel_fence: off\ntool_home: {}\n", home.display());
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    for t in ["docker", "gh"] {
        std::os::unix::fs::symlink(gate, dir.join(t)).unwrap();
    }
    std::fs::write(dir.join("tiershim.yaml"), &config).unwrap();
    std::fs::set_permissions(dir.join("tiershim.yaml"), std::fs::Permissions::from_mode(0o644)).unwrap();
    dir
}

/// A repository whose feature branch changes `files` runbook files (allowed by the shipped
/// git-pr skill), with origin/HEAD set so the gate can find the base.
fn repo(root: &Path, name: &str, files: usize) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("checks")).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("README.md"), "x\n").unwrap();
    git(&dir, &["add", "README.md"]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    git(&dir, &["remote", "add", "origin", "https://example.com/ops/app.git"]);
    git(&dir, &["update-ref", "refs/remotes/origin/main", "main"]);
    git(&dir, &["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"]);
    git(&dir, &["switch", "-q", "-c", "feat"]);
    for i in 0..files {
        std::fs::write(dir.join("checks").join(format!("c{i}.md")), format!("{i}\n")).unwrap();
    }
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "change"]);
    dir
}

/// A baseline skills directory: the shipped git-pr skill plus `n - 1` more skill files, every
/// `every`-th of them with Scope Rules of two patterns (1,000 skills at every 10th: 200
/// patterns, the count of the large-diff budget).
fn skills_dir(root: &Path, name: &str, manifest: &Path, n: usize, every: usize) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(manifest.join("skills/git-pr.md"), dir.join("git-pr.md")).unwrap();
    for i in 1..n {
        let rules = if i % every == 0 {
            format!("## Scope Rules\n\n```deny\nsvc{i}/*.yaml\n**/secret{i}/**\n```\n")
        } else {
            String::new()
        };
        std::fs::write(
            dir.join(format!("skill-{i}.md")),
            format!(
                "# Skill: Skill {i}\n\n## Purpose\n\nDoes thing {i}.\n\n## Tool Discovery\n\nx\n\n## Execution\n\nx\n\n## Validation\n\nx\n\n{rules}"
            ),
        )
        .unwrap();
    }
    dir
}

/// `TIERSHIM_BENCH_GATES`: the same call through each given gate binary, in one interleaved run.
fn profiles(gates: &str, rounds: usize) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    std::fs::set_permissions(t, std::fs::Permissions::from_mode(0o755)).unwrap();
    let noop = t.join("noop");
    cc(&noop, &root.join("benches/noop.c"), &["-static"]);
    let tramp = t.join("trampoline");
    cc(
        &tramp,
        &root.join("benches/trampoline.c"),
        &[&format!("-DTARGET=\"{}\"", noop.display())],
    );
    let cmd = |prog: &Path, args: &[&str]| {
        let mut c = Command::new(prog);
        c.args(args).env_clear().env("CLAUDEOPS_TIER", "1");
        c
    };
    let mut vs = vec![
        Variant::new("direct call (static no-op)", cmd(&noop, &["ps"])),
        Variant::new("bare exec hop (C trampoline)", cmd(&tramp, &["ps"])),
    ];
    for (i, entry) in gates.split(';').filter(|e| !e.is_empty()).enumerate() {
        let (label, path) = entry
            .split_once('=')
            .unwrap_or_else(|| panic!("TIERSHIM_BENCH_GATES: {entry:?} is not label=path"));
        let size = std::fs::metadata(path).unwrap_or_else(|e| panic!("{path}: {e}")).len();
        let gate = installed(Path::new(path), &t.join(format!("tiershim-{i}")));
        let dir = tier_dir(
            t,
            &format!("gate{i}"),
            &gate,
            &format!("tier: 1\nreal: {{docker: {}}}\n", noop.display()),
        );
        vs.push(Variant::new(
            format!("gate, {label} ({:.1} MiB): docker ps, allowed, exec", size as f64 / 1048576.0),
            cmd(&dir.join("docker"), &["ps"]),
        ));
    }
    measure(&mut vs, rounds);
    let hop = us(median(&vs[1].times));
    println!("| call | median | p90 | vs bare exec hop | gate overhead | page faults | peak RSS |\n|---|---|---|---|---|---|---|");
    for (i, v) in vs.iter().enumerate() {
        let m = us(median(&v.times));
        let over = if i >= 2 {
            format!("{:+.1}%", (m - hop) / hop * 100.0)
        } else {
            String::new()
        };
        println!(
            "| {} | {m:.0} µs | {:.0} µs | {:.2}× | {over} | {} | {:.1} MiB |",
            v.name,
            us(p90(&v.times)),
            m / hop,
            median_faults(v),
            v.max_rss as f64 / 1024.0
        );
    }
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    if let Ok(gates) = std::env::var("TIERSHIM_BENCH_GATES") {
        profiles(&gates, if full { ROUNDS } else { SMOKE_ROUNDS });
        return;
    }
    let rounds = if full { ROUNDS } else { SMOKE_ROUNDS };
    let scope_rounds = if full { SCOPE_ROUNDS } else { SMOKE_ROUNDS };
    let big = if full { 10_000 } else { 200 };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    std::fs::set_permissions(t, std::fs::Permissions::from_mode(0o755)).unwrap();
    let gate = installed(Path::new(env!("CARGO_BIN_EXE_tiershim")), &t.join("tiershim"));
    let noop = t.join("noop");
    cc(&noop, &root.join("benches/noop.c"), &["-static"]);
    let tramp = t.join("trampoline");
    cc(
        &tramp,
        &root.join("benches/trampoline.c"),
        &[&format!("-DTARGET=\"{}\"", noop.display())],
    );
    let real_git = which("git");

    // --- per call: no skill check -------------------------------------------------------------
    let plain = tier_dir(t, "tier1", &gate, &format!("tier: 1\nreal: {{docker: {}}}\n", noop.display()));
    let logged = tier_dir(
        t,
        "logged",
        &gate,
        &format!(
            "tier: 1\nreal: {{docker: {}}}\naudit_log: {}\n",
            noop.display(),
            t.join("audit.jsonl").display()
        ),
    );
    let cmd = |prog: &Path, args: &[&str]| {
        let mut c = Command::new(prog);
        c.args(args).env_clear().env("CLAUDEOPS_TIER", "1");
        c
    };
    let mut per_call = vec![
        Variant::new("direct call (static no-op)", cmd(&noop, &["ps"])),
        Variant::new("bare exec hop (C trampoline)", cmd(&tramp, &["ps"])),
        Variant::new("gate: docker ps, allowed, exec", cmd(&plain.join("docker"), &["ps"])),
        Variant::new("gate: docker ps, allowed, audit log", cmd(&logged.join("docker"), &["ps"])),
        Variant::new("gate: docker restart, refused", cmd(&plain.join("docker"), &["restart", "api"])).exiting(77),
    ];
    measure(&mut per_call, rounds);

    // --- per call: a PR scope check --------------------------------------------------------
    let small = repo(t, "repo-10", 10);
    let large = repo(t, &format!("repo-{big}"), big);
    let many = if full { 1000 } else { 100 };
    let skills10 = skills_dir(t, "skills-10", &root, 10, 10);
    let skills1000 = skills_dir(t, "skills-1000", &root, many, 10);
    let heavy = skills_dir(t, "skills-heavy", &root, many, 1);
    let scope_tier = |name: &str, skills: &Path| {
        tier_dir(
            t,
            name,
            &gate,
            &format!(
                "tier: 3\nreal: {{gh: {}, git: {}}}\nskills: {{baseline: {}}}\n",
                noop.display(),
                real_git.display(),
                skills.display()
            ),
        )
    };
    let with10 = scope_tier("scope-10-skills", &skills10);
    let with1000 = scope_tier("scope-1000-skills", &skills1000);
    let with_heavy = scope_tier("scope-heavy-skills", &heavy);
    let pr = |tier: &Path, dir: &Path| {
        let mut c = Command::new(tier.join("gh"));
        c.args(["pr", "create", "-t", "x", "-b", "y"])
            .env_clear()
            .env("CLAUDEOPS_TIER", "3")
            .current_dir(dir);
        c
    };
    let git_diff = |dir: &Path| {
        let mut c = Command::new(&real_git);
        c.args(["diff", "--name-only", "-z", "--no-renames", "refs/remotes/origin/main...HEAD"])
            .env_clear()
            .current_dir(dir);
        c
    };
    let mut scope = vec![
        Variant::new("bare exec hop (C trampoline)", cmd(&tramp, &["ps"])),
        Variant::new("git's own diff, 10 files", git_diff(&small)),
        Variant::new(format!("git's own diff, {big} files"), git_diff(&large)),
        Variant::new("gate: gh pr create, 10 files, 10 skills", pr(&with10, &small)),
        Variant::new(format!("gate: gh pr create, {big} files, 10 skills"), pr(&with10, &large)),
        Variant::new(
            format!("gate: gh pr create, 10 files, {many} skills ({} patterns)", many / 10 * 2),
            pr(&with1000, &small),
        ),
        Variant::new(
            format!(
                "gate: gh pr create, 10 files, {many} skills, all with rules ({} patterns)",
                many * 2
            ),
            pr(&with_heavy, &small),
        ),
        Variant::new(
            format!("gate: gh pr create, {big} files, {many} skills ({} patterns)", many / 10 * 2),
            pr(&with1000, &large),
        ),
    ];
    measure(&mut scope, scope_rounds);

    let table = |vs: &[Variant], base: f64, base_name: &str, direct: Option<f64>| {
        let mut s = format!(
            "| call | median | p90 | vs {base_name} |{} page faults | peak RSS |\n|---|---|---|---|{}---|---|\n",
            if direct.is_some() { " vs direct |" } else { "" },
            if direct.is_some() { "---|" } else { "" }
        );
        for v in vs {
            let m = us(median(&v.times));
            s.push_str(&format!(
                "| {} | {:.0} µs | {:.0} µs | {:.2}× |{} {} | {:.1} MiB |\n",
                v.name,
                m,
                us(p90(&v.times)),
                m / base,
                direct.map(|d| format!(" {:.2}× |", m / d)).unwrap_or_default(),
                median_faults(v),
                v.max_rss as f64 / 1024.0
            ));
        }
        s
    };
    let med = |vs: &[Variant], i: usize| us(median(&vs[i].times));
    let (direct, hop) = (med(&per_call, 0), med(&per_call, 1));
    let overhead = (med(&per_call, 2) - hop) / hop * 100.0;
    let scope_hop = med(&scope, 0);
    let beyond_git_small = med(&scope, 3) - med(&scope, 1) - scope_hop;
    let beyond_git_large = med(&scope, 4) - med(&scope, 2) - scope_hop;
    // The budget's case: the large diff against the 1,000-skill set (200 patterns at full size).
    let beyond_git_budget = med(&scope, 7) - med(&scope, 2) - scope_hop;
    let skills_ratio = med(&scope, 5) / med(&scope, 3);
    let heavy_ratio = med(&scope, 6) / med(&scope, 3);
    // The gate alone: the per-call variants (the scope variants' peak includes their git).
    let peak = per_call.iter().skip(2).map(|v| v.max_rss).max().unwrap_or(0) as f64 / 1024.0;
    let mib = |v: &Variant| v.max_rss as f64 / 1024.0;
    // In the 10-file rows git stays small, so their peak is the gate's own.
    let (git_small_peak, heavy_peak) = (mib(&scope[1]), mib(&scope[6]));
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let verdict = |ok: bool| if ok { "within budget" } else { "over budget" };
    let l = layout(&gate);
    let (relocs, relro, hot) = (l.relocs, l.relro / 1024, l.hot / 1024);
    let script = std::fs::read_to_string(root.join("link/hot-text.ld")).unwrap();
    let (hot_names, hot_stale) = hot_text_stale(&script, &l.functions);
    let doc = format!(
        "# Performance\n\n\
         Written by `make bench` (benches/gate.rs); re-run it to refresh. Each call is a fork+exec+wait from the \
         benchmark process, the variants interleaved after a warm-up ({rounds} rounds per call variant, \
         {scope_rounds} per scope variant); medians and 90th percentiles. The target of every hop is a static C \
         program that returns at once, so the numbers are the cost of getting there. Every program runs from a \
         copy, as install.sh places the gate: a linker's output file maps more slowly than a copy of it (the \
         same gate measured about 0.2 ms more per call from the linker's file). Machine: {cpus} CPUs, \
         shared; treat differences under ~10% as noise.\n\n\
         ## A call with no skill check\n\n{}\n\
         - Gate overhead over a bare exec hop (`docker ps`, allowed, no audit log): **{overhead:+.1}%** \
         (budget: within 25% of a bare exec hop; {}).\n\n\
         ## A pull-request scope check\n\n\
         `gh pr create` at tier 3 in a real repository: the gate runs the real git to list the changed files \
         (`git diff --name-only origin/main...HEAD`), reads the skills, and checks each file against every pattern \
         (the shipped git-pr skill's 18 deny and 6 allow patterns, plus those of the extra skills: every tenth \
         carries two, or, in the row \"all with rules\", every one).\n\n{}\n\
         - Scope check beyond git's own time and an exec hop: **{beyond_git_small:.0} µs** for 10 files, \
         **{beyond_git_large:.0} µs** for {big} files with 10 skills, and **{beyond_git_budget:.0} µs** for {big} \
         files with {many} skills ({} patterns; budget for a 10,000-file diff against 200 patterns: \
         under 10 ms; {}).\n\
         - {many} skill files cost **{skills_ratio:.2}×** what 10 cost for the same check (budget: at most 2×; {}); \
         with Scope Rules in every one of them, **{heavy_ratio:.2}×**.\n\n\
         ## Memory\n\n\
         - Peak resident memory of the gate for a call with no skill check: **{peak:.1} MiB** (budget: under \
         8 MiB; {}).\n\
         - A scope row's peak is that of the gate or the git it runs, whichever is larger: for {big} files it \
         is git's own diff. In the 10-file rows git peaks at {git_small_peak:.1} MiB, so their figure is the \
         gate's own: with {} patterns from {many} skills it is **{heavy_peak:.1} MiB** ({}); what grows is the \
         compiled patterns (a skill file's text and parse are dropped once its patterns are compiled).\n\n\
         ## Where the time goes\n\n\
         - Most of what the gate costs beyond an exec hop is page faults, not instructions: on the machine \
         measured, a page touched for the first time cost about 1.3 µs, whether copied, zeroed or mapped \
         from the page cache (asking the kernel to fill a range at once, `MADV_POPULATE_WRITE`, cost the \
         same). The page-faults column counts them per call, the hop's and the no-op's included. Two things \
         keep the gate's few: its static data holds few pointers, and the code a call runs sits together.\n\
         - The gate is one static binary, linked as a position-independent executable (static-pie; \
         `.cargo/config.toml`), so the kernel places it at a random address and it relocates itself at \
         start: {relocs} relocations, which write every page of its {relro} KB `.data.rel.ro` (the \
         static data that holds pointers), each page a copy. The same code linked as a non-PIE static \
         executable measured about 1.1x a bare exec hop where the PIE measured about 1.3x; but the gate \
         runs setgid in a hardened install, so it keeps the address-space randomisation, and keeps its \
         tables free of pointers instead: the policy tables' strings are places in one text and lists \
         places in one array (`src/tables.rs`), an option's names are inline (`grammar::opts::Opt`), \
         docker's command tree and the grammars' word lists are packed at compile time \
         (`grammar::docker`, `src/packed.rs`), and pulldown-cmark's table of HTML entities (17 pages of \
         pointers) is packed in a vendored copy (`vendor/README.md`); that took the relocations from \
         30,355 to about 12,500 and `.data.rel.ro` from 608 to 222 KB. Most of what is left is the \
         dependencies' (sqlparser's keywords, about 9 pages, the standard library's formatting tables and \
         panic locations, vtables) and gh's command tree. Relocation packing (`-z pack-relative-relocs`) \
         saves nothing: the writes, not the table, are the cost.\n\
         - The code is about 8 MB, and the kernel maps it in 64 KB pieces as they are first touched. The \
         functions a gated call runs (for eleven common calls, recorded by `make hot-text` under \
         callgrind) are placed together at the start of the code by a linker script (`link/hot-text.ld`, \
         {hot} KB in this build's `.text.hot`; build.rs), so a call touches about 30 pieces fewer than \
         with the linker's own order. A stale list costs speed, never correctness: of the {hot_names} \
         functions it names, {hot_stale} are no function of this build (a name changed or a function \
         went); rerun `make hot-text` when that grows, or after large changes.\n\
         - What the gate does itself is about 340,000 instructions for an allowed `docker ps` (callgrind, \
         up to the exec), half of them the relocation loop: the embedded policy's rules borrow the static \
         tables' strings (copying them had cost 150,000, freeing them 70,000; parsing the policy from JSON, \
         before there were tables, 560,000); `tiershim.yaml` (about 55,000, YAML), the environment \
         (about 100,000: reading it, and the allow-list for the child), the grammar and the decision. `main` is \
         the C entry point, which skips Rust's start-up (its read of `/proc/self/maps` for a stack guard \
         alone was 50,000). A curl or gh call also builds the endpoint rules, their path patterns ranges of \
         the tables' text (about 250,000 more; parsing and validating them as a file had cost 800,000). \
         Redaction uses hand-written scanners and path patterns a small NFA: compiling regular expressions \
         for them had cost ten and, with 1,000 skills, thirty times that.\n\
         - A scope check adds git: two to four runs (`rev-parse`, `for-each-ref`, the diff or log), each a \
         fork and exec of git. Reading many skill files is an open, two reads and a close per file through \
         one reused buffer (`skill::Reader`), the text not copied, and a markdown parse only of the files \
         that may hold Scope Rules (a memchr search for the heading or a fence); each file's patterns are \
         compiled as it is read and the rest of it dropped (`scope::Builder`). A pattern of a common shape \
         (`*.yaml`, `dir/*.md`, `name`) is tested directly and keeps no NFA. The patterns' literals are found \
         in each path by an Aho-Corasick NFA, the cheapest to build; a check of many paths (from 32 per \
         literal) builds a DFA of it, which scans faster; a file in the same directory as the one before \
         takes its directories' answer without a lookup, and the changed files are shared between the facts \
         and the decision's report, not copied. What would make it cheaper still is fewer git runs, \
         fewer skill files with rules, or a build step that compiles the baseline's \
         rules once (not done: a cache the agent could write would be a way around the rules).\n",
        table(&per_call, hop, "bare exec hop", Some(direct)),
        verdict(overhead <= 25.0),
        table(&scope, scope_hop, "bare exec hop", None),
        many / 10 * 2,
        verdict(beyond_git_budget < 10_000.0),
        verdict(skills_ratio <= 2.0),
        verdict(peak < 8.0),
        many * 2,
        verdict(heavy_peak < 8.0),
    );
    if full {
        std::fs::create_dir_all(root.join("docs")).unwrap();
        // The release-profile comparison is measured by scripts/bench-profiles.sh; keep it.
        let path = root.join("docs/PERFORMANCE.md");
        let kept = std::fs::read_to_string(&path)
            .ok()
            .and_then(|old| old.find("\n## Release profile").map(|i| old[i..].to_string()))
            .unwrap_or_default();
        std::fs::write(&path, format!("{doc}{kept}")).unwrap();
    }
    println!("{doc}");
}
