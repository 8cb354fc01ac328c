//! Turns `policy/*.yaml` into the compact form embedded in the binary: JSON without the rule
//! examples. A gated call then parses a small JSON document instead of YAML. The YAML itself is
//! also embedded (for `tiershim policy check` and the tests, which run the examples). Also
//! embeds the shipped skills (`skills/`), the baseline when none is installed or configured.
#![allow(clippy::expect_used, clippy::panic)]

use std::fs;
use std::path::Path;

fn main() {
    embed_skills();
    println!("cargo:rerun-if-changed=policy");
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo")).join("policy");
    fs::create_dir_all(&out).expect("create OUT_DIR/policy");
    let mut entries: Vec<_> = fs::read_dir("policy").expect("read policy/").filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        println!("cargo:rerun-if-changed={}", path.display());
        let text = fs::read_to_string(&path).expect("read policy file");
        let mut value: serde_json::Value = match serde_yaml_ng::from_str(&text) {
            Ok(v) => v,
            Err(e) => panic!("{}: {e}", path.display()),
        };
        for key in ["rules", "endpoints"] {
            if let Some(rules) = value.get_mut(key).and_then(|r| r.as_array_mut()) {
                for rule in rules {
                    if let Some(obj) = rule.as_object_mut() {
                        obj.remove("examples");
                    }
                }
            }
        }
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("utf-8 file name");
        fs::write(out.join(format!("{stem}.json")), value.to_string()).expect("write policy json");
    }
}

/// The shipped skills (`skills/*.md` and `skills/*/SKILL.md`) as a Rust slice of
/// `(path under skills/, text)`, included by `src/skill/mod.rs`.
fn embed_skills() {
    println!("cargo:rerun-if-changed=skills");
    let root = Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set by cargo")).join("skills");
    let mut files: Vec<(String, std::path::PathBuf)> = Vec::new();
    let mut entries: Vec<_> = fs::read_dir(&root).expect("read skills/").filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        if name.ends_with(".md") && !name.eq_ignore_ascii_case("README.md") && path.is_file() {
            files.push((name, path));
        } else if path.join("SKILL.md").is_file() {
            files.push((format!("{name}/SKILL.md"), path.join("SKILL.md")));
        }
    }
    let mut out = String::from("&[\n");
    for (rel, path) in files {
        println!("cargo:rerun-if-changed={}", path.display());
        out.push_str(&format!("    ({rel:?}, include_str!({:?})),\n", path.display().to_string()));
    }
    out.push(']');
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo")).join("skills.rs");
    fs::write(dest, out).expect("write skills.rs");
}
