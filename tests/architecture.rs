//! The invariants of ARCHITECTURE.md that the compiler does not check, checked on the source:
//!
//! - the pure modules (the grammars, `decide()`, the scope and glob matchers, the cooldown
//!   arithmetic, the local and remote write models, …) touch no file, process, environment,
//!   network or clock;
//! - a module imports only modules of a lower layer ([`LAYERS`]): no loops, no reaching up;
//! - `rmcp` and `tokio` appear only in `src/mcp/`;
//! - exit numbers live only in `src/exit.rs`, and only `main` exits.
//!
//! The source is read as code: comments, string and character literals, and `#[cfg(test)]`
//! items are taken out first, so a doc comment or a test may mention anything.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

/// The crate's top-level modules, lowest layer first. A module may use the modules of the
/// layers before its own, never one of its own layer or a later one. A new module goes in the
/// lowest layer its imports allow.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "leaves: values and words",
        &[
            "access",
            "claude",
            "context",
            "exit",
            "glob",
            "packed",
            "sanitize",
            "suggest",
            "tables",
            "tool",
            "tool_config",
        ],
    ),
    (
        "errors, the tier, the grammars",
        &["dispatch", "error", "grammar", "tier", "time", "vet"],
    ),
    (
        "what a call is, beyond argv",
        &["compose", "harden", "operator_files", "remote_fence", "spec"],
    ),
    ("the policy", &["policy", "script_input"]),
    ("the budgets", &["cooldown"]),
    ("the install", &["install"]),
    ("what the install holds", &["fence", "files", "skill"]),
    ("path rules, and the MCP server", &["mcp", "scope"]),
    ("the decision", &["decision"]),
    ("what a decision needs and leaves", &["audit", "facts", "remote_facts"]),
    ("exec", &["exec"]),
    ("what exec needs opened", &["ansible_ssh"]),
    ("the driver", &["judge"]),
    ("the session inventory", &["inventory"]),
    ("the entry points", &["admin", "gate"]),
];

/// The modules that do no I/O: files (or directories) under `src/`.
const PURE: &[&str] = &[
    "grammar",
    "decision.rs",
    "scope.rs",
    "glob.rs",
    "cooldown/mod.rs",
    "files/mod.rs",
    "remote_fence.rs",
    "tier.rs",
    "time.rs",
    "spec.rs",
    "suggest.rs",
    "tables.rs",
    "packed.rs",
    "sanitize.rs",
    "claude.rs",
    "policy/endpoints.rs",
    "skill/parse.rs",
    "tool.rs",
    "dispatch.rs",
    "exit.rs",
    "mcp/guide.rs",
];

/// What reaches the file system, processes, the environment, the network or the clock.
const IMPURE: &str = r"\b(std::fs|fs::|std::process|process::|std::env|env::|std::net|File::|OpenOptions|Command::new|nix::|libc::|read_link|canonicalize|std::os::unix|stdin\(\)|stdout\(\)|stderr\(\)|print!|println!|eprint!|eprintln!)|::now\(\)";

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The code of a Rust file without comments, string and character literals (each left as an
/// empty `""` or `' '`) and `#[cfg(test)]` items.
fn code(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let ident = |i: usize| i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |j| j + 2);
        } else if (rest.starts_with("r#") || rest.starts_with("r\"") || rest.starts_with("br#") || rest.starts_with("br\"")) && !ident(i) {
            let start = rest.find(['#', '"']).unwrap();
            let hashes = rest[start..].bytes().take_while(|c| *c == b'#').count();
            let open = start + hashes + 1;
            let close = format!("\"{}", "#".repeat(hashes));
            i += open + rest[open..].find(&close).unwrap() + close.len();
            out.push_str("\"\"");
        } else if b[i] == b'"' || (rest.starts_with("b\"") && !ident(i)) {
            let mut j = i + if b[i] == b'b' { 2 } else { 1 };
            while b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            i = j + 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && rest.starts_with("'\\") {
            i += 2 + rest[2..].find('\'').unwrap() + 1;
            out.push_str("' '");
        } else if b[i] == b'\'' && rest.chars().nth(2) == Some('\'') {
            i += rest.chars().take(3).map(char::len_utf8).sum::<usize>();
            out.push_str("' '");
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    // `#[cfg(test)]` items: up to the `;` of a one-line item, or the end of its block.
    while let Some(k) = out.find("#[cfg(test)]") {
        let semi = out[k..].find(';').map(|j| k + j);
        let brace = out[k..].find('{').map(|j| k + j);
        let end = match (semi, brace) {
            (Some(s), Some(o)) if s < o => s + 1,
            (Some(s), None) => s + 1,
            (_, Some(o)) => {
                let mut depth = 0;
                let mut j = o;
                loop {
                    match out.as_bytes()[j] {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                break j + 1;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
            }
            (None, None) => out.len(),
        };
        out.replace_range(k..end, "");
    }
    out
}

/// Every file under `src/` (but `main.rs` and `lib.rs`) as (top-level module, path, code).
fn modules() -> Vec<(String, PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files
        .into_iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(src()).unwrap();
            let first = rel.components().next().unwrap().as_os_str().to_string_lossy();
            let top = first.trim_end_matches(".rs").to_string();
            if top == "main" || top == "lib" {
                return None;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            Some((top, p, code(&text)))
        })
        .collect()
}

fn shown(p: &Path) -> String {
    p.strip_prefix(src().parent().unwrap()).unwrap().display().to_string()
}

#[test]
fn the_code_reader_leaves_comments_strings_and_tests_out() {
    let c = code(
        "use crate::a; // crate::b\n/* crate::c */ let s = \"crate::d \\\" std::fs\"; let r = r#\"std::fs\"#; let q = '\"'; let l: &'static str = x;\n#[cfg(test)]\nmod tests { fn f() { std::fs::read(\"x\"); } }\n#[cfg(test)]\nuse crate::e;\nfn g() {}\n",
    );
    assert!(c.contains("crate::a") && c.contains("fn g()") && c.contains("&'static str"), "{c}");
    for gone in ["crate::b", "crate::c", "crate::d", "std::fs", "crate::e", "mod tests"] {
        assert!(!c.contains(gone), "{gone} in {c}");
    }
}

#[test]
fn pure_modules_touch_no_file_process_environment_network_or_clock() {
    let impure = Regex::new(IMPURE).unwrap();
    let mut found = Vec::new();
    let mut checked = 0;
    for (_, path, code) in modules() {
        let rel = path.strip_prefix(src()).unwrap().to_string_lossy().into_owned();
        if !PURE.iter().any(|p| rel == *p || rel.starts_with(&format!("{p}/"))) {
            continue;
        }
        checked += 1;
        for (n, line) in code.lines().enumerate() {
            if let Some(m) = impure.find(line) {
                found.push(format!("{}:{}: `{}` in a pure module", shown(&path), n + 1, m.as_str()));
            }
        }
    }
    assert!(checked >= PURE.len(), "{checked} pure files found");
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn modules_import_only_from_the_layers_below_theirs() {
    let layer: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, (_, mods))| mods.iter().map(move |m| (*m, i)))
        .collect();
    let uses = Regex::new(r"\bcrate::([a-z_]+)").unwrap();
    let spec = Regex::new(r"\.spec\(\)").unwrap();
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for (top, path, code) in modules() {
        seen.insert(top.clone());
        let Some(&mine) = layer.get(top.as_str()) else {
            wrong.push(format!(
                "{}: module `{top}` is in no layer of LAYERS; add it to the lowest its imports allow",
                shown(&path)
            ));
            continue;
        };
        for (n, line) in code.lines().enumerate() {
            let mut used: Vec<String> = uses.captures_iter(line).map(|c| c[1].to_string()).collect();
            // `Tool::spec` is defined in spec.rs: calling it uses that module.
            if spec.is_match(line) {
                used.push("spec".into());
            }
            for u in used.into_iter().filter(|u| *u != top) {
                match layer.get(u.as_str()) {
                    Some(&theirs) if theirs < mine => {}
                    Some(&theirs) => wrong.push(format!(
                        "{}:{}: `{top}` ({}) uses `{u}` ({}), which is not below it",
                        shown(&path),
                        n + 1,
                        LAYERS[mine].0,
                        LAYERS[theirs].0
                    )),
                    None => wrong.push(format!("{}:{}: `{u}` is in no layer of LAYERS", shown(&path), n + 1)),
                }
            }
        }
    }
    for m in layer.keys() {
        if !seen.contains(*m) {
            wrong.push(format!("LAYERS names `{m}`, which is no module under src/"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn rmcp_and_tokio_appear_only_in_the_mcp_module() {
    let async_rt = Regex::new(r"\b(rmcp|tokio)\b").unwrap();
    let mut found = Vec::new();
    for (top, path, code) in modules() {
        if top == "mcp" {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            if async_rt.is_match(line) {
                found.push(format!("{}:{}: {}", shown(&path), n + 1, line.trim()));
            }
        }
    }
    let lib = code(&std::fs::read_to_string(src().join("lib.rs")).unwrap());
    let main = code(&std::fs::read_to_string(src().join("main.rs")).unwrap());
    for (name, c) in [("src/lib.rs", lib), ("src/main.rs", main)] {
        if async_rt.is_match(&c) {
            found.push(format!("{name} names rmcp or tokio"));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn exit_numbers_live_only_in_exit_rs_and_only_main_exits() {
    let number = Regex::new(r"\b(70|77|78|127)\b").unwrap();
    let exits = Regex::new(r"process::exit|ExitCode|\bexit\(\s*\d|libc::_exit").unwrap();
    let mut found = Vec::new();
    for (top, path, code) in modules() {
        if top == "exit" {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            if number.is_match(line) || exits.is_match(line) {
                found.push(format!("{}:{}: {}", shown(&path), n + 1, line.trim()));
            }
        }
    }
    let main = code(&std::fs::read_to_string(src().join("main.rs")).unwrap());
    assert_eq!(main.matches("process::exit").count(), 1, "{main}");
    assert!(!number.is_match(&main), "{main}");
    assert!(found.is_empty(), "{}", found.join("\n"));
}
