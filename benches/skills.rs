//! `make bench` (second part): what serving skills over MCP costs with 100 and 1,000 skills.
//! In process: a cold scan (find, read and parse every skill) and a rescan that finds nothing
//! changed (what a change event or the 30-second cycle costs). Over the wire: a real
//! `tiershim mcp` process, driven with JSON-RPC lines on its stdin, timed per `skill` lookup,
//! per `tools/list` and per `list_skills`, the bytes of the `initialize` and `tools/list`
//! answers (the skill list is sent once, in `tools/list`), and its peak resident memory. Writes
//! docs/PERFORMANCE-MCP.md. No thresholds: the targets are printed beside the numbers for people
//! to compare.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tiershim::skill::served::{Scanner, Selection};

/// Under `cargo bench` (which passes `--bench`); under `cargo test --all-targets` a smoke run
/// with few skills and rounds that writes nothing.
const SIZES: &[usize] = &[100, 1000];
const SMOKE_SIZES: &[usize] = &[10];
const ROUNDS: usize = 200;
const SMOKE_ROUNDS: usize = 3;

/// A skill of a realistic size (about 2 KiB): every section, a tier, scope rules.
fn skill_text(i: usize) -> String {
    format!(
        "# Skill: Service {i}\n\n## Purpose\n\nKeep service {i} healthy: check it, restart it when it stops answering, \
         and report what was done.\n\n## Tier Requirement\n\nTier {}\n\n## Tool Discovery\n\n1. **MCP**: `mcp__docker__list`\n\
         2. **CLI**: `docker`\n\n## Execution\n\n{}\n\n## Validation\n\n1. `docker ps` shows it up.\n2. Its health check passes.\n\n\
         ## Scope Rules\n\n```deny\nservices/{i}/secrets/\n*.pem\n```\n\n## Dry-Run Behavior\n\nPrint what would run.\n",
        1 + i % 3,
        "Run `docker restart service-N` and wait for the health check. ".repeat(20)
    )
}

/// Half the skills directly in the directory, half one collection deeper
/// (`collection/skills/<name>/SKILL.md`), each with a stray markdown file beside it.
fn make_skills(dir: &Path, n: usize) {
    for i in 0..n {
        let d = if i % 2 == 0 {
            dir.join(format!("service-{i}"))
        } else {
            dir.join(format!("collection/skills/service-{i}"))
        };
        std::fs::create_dir_all(&d).unwrap();
        let body = skill_text(i);
        let text = format!("---\nname: service-{i}\ndescription: Keep service {i} healthy.\n---\n{body}");
        std::fs::write(d.join("SKILL.md"), text).unwrap();
        std::fs::write(d.join("reference.md"), "# Reference\n").unwrap();
    }
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn p90(v: &[Duration]) -> Duration {
    v[((v.len() as f64 - 1.0) * 0.9) as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// A `tiershim mcp` child spoken to in newline-delimited JSON-RPC.
struct Server {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Server {
    /// Start and initialize; also the length of the `initialize` answer.
    fn start(bin: &Path, dir: &Path) -> (Server, usize) {
        let mut child = Command::new(bin)
            .args(["mcp", "--skills-dir"])
            .arg(dir)
            .env("CLAUDEOPS_TIER", "2")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut s = Server { child, out, next: 0 };
        let (_, size) = s.request_sized(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}),
        );
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        (s, size)
    }

    fn send(&mut self, v: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    /// Send a request; return its result (skipping notifications).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_sized(method, params).0
    }

    /// Send a request; return its result and the length of the answer's line.
    fn request_sized(&mut self, method: &str, params: Value) -> (Value, usize) {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.out.read_line(&mut line).unwrap() > 0, "server closed its output");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{v}");
                return (v["result"].clone(), line.len());
            }
        }
    }

    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    }

    fn stop(mut self) {
        drop(self.child.stdin.take());
        self.child.wait().unwrap();
    }
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (sizes, rounds) = if full { (SIZES, ROUNDS) } else { (SMOKE_SIZES, SMOKE_ROUNDS) };
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_tiershim"));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut table = String::from(
        "| skills | cold scan (parse all) | rescan, nothing changed | `skill` lookup over MCP, median / p90 | `tools/list` over MCP | `list_skills` over MCP | `initialize` / `tools/list` answer | server peak RSS |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for &n in sizes {
        let tmp = tempfile::tempdir().unwrap();
        make_skills(tmp.path(), n);
        let selection = Selection {
            install: None,
            dirs: vec![tmp.path().to_path_buf()],
            cwd: tmp.path().to_path_buf(),
            home: None,
        };

        let mut scans: Vec<Duration> = (0..rounds.clamp(3, 10))
            .map(|_| {
                let t = Instant::now();
                let s = Scanner::new(selection.clone());
                assert_eq!(s.served.entries.len(), n);
                t.elapsed()
            })
            .collect();
        let mut scanner = Scanner::new(selection.clone());
        let mut checks: Vec<Duration> = (0..rounds.clamp(3, 50))
            .map(|_| {
                let t = Instant::now();
                scanner.rescan();
                let took = t.elapsed();
                assert_eq!(scanner.served.entries.len(), n);
                took
            })
            .collect();

        let (mut server, init_bytes) = Server::start(&bin, tmp.path());
        let mut lookups: Vec<Duration> = (0..rounds)
            .map(|i| {
                let name = format!("SERVICE-{}", (i * 7919) % n);
                let t = Instant::now();
                let r = server.request("tools/call", json!({"name": "skill", "arguments": {"name": name}}));
                let took = t.elapsed();
                assert_eq!(r["isError"], json!(false), "{r}");
                took
            })
            .collect();
        let mut tools_bytes = 0;
        let mut tool_lists: Vec<Duration> = (0..rounds.clamp(3, 20))
            .map(|_| {
                let t = Instant::now();
                let (r, size) = server.request_sized("tools/list", json!({}));
                let took = t.elapsed();
                assert_eq!(r["tools"].as_array().unwrap().len(), 3);
                tools_bytes = size;
                took
            })
            .collect();
        let mut lists: Vec<Duration> = (0..rounds.clamp(3, 20))
            .map(|_| {
                let t = Instant::now();
                let r = server.request("tools/call", json!({"name": "list_skills", "arguments": {}}));
                let took = t.elapsed();
                let rows: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
                assert_eq!(rows.as_array().unwrap().len(), n);
                took
            })
            .collect();
        let rss = server.peak_rss_kib();
        server.stop();

        let lookup_p90 = {
            lookups.sort();
            p90(&lookups)
        };
        table.push_str(&format!(
            "| {n} | {} | {} | {} / {} | {} | {} | {:.1} KiB / {:.1} KiB | {:.1} MiB |\n",
            ms(median(&mut scans)),
            ms(median(&mut checks)),
            ms(median(&mut lookups)),
            ms(lookup_p90),
            ms(median(&mut tool_lists)),
            ms(median(&mut lists)),
            init_bytes as f64 / 1024.0,
            tools_bytes as f64 / 1024.0,
            rss as f64 / 1024.0
        ));
    }
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let doc = format!(
        "# Performance: skills over MCP\n\n\
         Written by `make bench` (benches/skills.rs); re-run it to refresh. Skills of about 2 KiB each \
         (`name/SKILL.md`, half of them one collection deeper, each with a stray markdown file beside it) in one \
         `--skills-dir`. Machine: {cpus} CPUs, shared; treat differences under ~10% as noise.\n\n{table}\n\
         - **Cold scan**: find, read and parse every skill (the server does this at start). Target (universal-skills \
         contract): under 1 s.\n\
         - **Rescan, nothing changed**: list the directories and stat every skill file, parsing none. The server \
         pays this only after a change event that matters, and every 30 seconds (the contract's refresh cycle); \
         a request reads the change events queued since the last one (one `read` that returns nothing when \
         nothing changed) and looks the skill up in a hash map, so its cost does not grow with the number of skills. \
         Target: under 1 s.\n\
         - **`skill` lookup over MCP**: one `tools/call` of `skill` with a name in another case, from the \
         request written to the response read, through a real `tiershim mcp` process ({rounds} calls). \
         Target: under 100 ms.\n\
         - **`tools/list`**: built once per change of the listing and kept; its size is the `skill` tool's \
         description, which lists every skill (the contract's `<available_skills>`). The `initialize` answer \
         carries the usage guide and no list, so a client receives the list once.\n\
         - **Server peak RSS**: `VmHWM` of that process after all calls. Target: under 10 MB.\n\n\
         The gate itself never reaches this code: a gated call starts no async runtime and reads no skill it \
         does not need (see PERFORMANCE.md for the gate).\n"
    );
    if full {
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/PERFORMANCE-MCP.md"), &doc).unwrap();
    }
    println!("{doc}");
}
