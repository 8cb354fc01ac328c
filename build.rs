//! Turns `policy/*.yaml` into the compact form embedded in the binary: JSON without the rule
//! examples. A gated call then parses a small JSON document instead of YAML. The YAML itself is
//! also embedded (for `tiershim policy check` and the tests, which run the examples). Also
//! embeds the shipped skills (`skills/`), the baseline when none is installed or configured.
//! And it names the build for `tiershim --version`: the commit and the build date.
#![allow(clippy::expect_used, clippy::panic)]

use std::fs;
use std::path::Path;

fn main() {
    embed_skills();
    name_the_build();
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

/// `TIERSHIM_COMMIT` and `TIERSHIM_BUILD_DATE` for `tiershim --version`.
///
/// The commit comes from git when the source is a git work tree of its own; from a tarball made
/// by `git archive` (the `export-subst` line of `.git-archive-commit`); from a crate package
/// (`.cargo_vcs_info.json`); otherwise it is `unknown`. The date is `SOURCE_DATE_EPOCH`
/// when set (reproducible builds: the same source and epoch give the same binary), else the day
/// this script ran, in UTC.
fn name_the_build() {
    let dir = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set by cargo"));
    let commit = commit_from_git(&dir)
        .or_else(|| commit_from_archive(&dir))
        .or_else(|| commit_from_crate(&dir))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=TIERSHIM_COMMIT={commit}");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    let secs = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) => match v.trim().parse::<i64>() {
            Ok(s) => s,
            Err(_) => panic!("SOURCE_DATE_EPOCH={v:?} is not a number of seconds since 1970"),
        },
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
    };
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    println!("cargo:rustc-env=TIERSHIM_BUILD_DATE={y:04}-{m:02}-{d:02}");
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// HEAD's commit, when `dir` is the top of a git work tree (not a tarball unpacked inside some
/// other repository). The build script runs again when HEAD or the branch it names moves.
fn commit_from_git(dir: &Path) -> Option<String> {
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    if fs::canonicalize(&top).ok()? != fs::canonicalize(dir).ok()? {
        return None;
    }
    let commit = git(dir, &["rev-parse", "--short=12", "HEAD"])?;
    let mut watch = vec![git(dir, &["rev-parse", "--git-path", "HEAD"])?];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        watch.extend(git(dir, &["rev-parse", "--git-path", &branch]));
        watch.extend(git(dir, &["rev-parse", "--git-path", "packed-refs"]));
    }
    for p in watch {
        let p = if Path::new(&p).is_absolute() {
            Path::new(&p).to_path_buf()
        } else {
            dir.join(p)
        };
        // A path that does not exist would make cargo run this script on every build.
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    Some(commit)
}

/// `.git-archive-commit` holds `$Format:%H$`, which `git archive` replaces with the commit
/// (`export-subst` in `.gitattributes`).
fn commit_from_archive(dir: &Path) -> Option<String> {
    let path = dir.join(".git-archive-commit");
    println!("cargo:rerun-if-changed={}", path.display());
    let text = fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| !l.starts_with('#'))?.trim();
    (!line.is_empty() && !line.contains('$')).then(|| line.chars().take(12).collect())
}

/// A crate package records the commit it was made from in `.cargo_vcs_info.json`.
fn commit_from_crate(dir: &Path) -> Option<String> {
    let text = fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let sha = v.get("git")?.get("sha1")?.as_str()?;
    Some(sha.chars().take(12).collect())
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}
