//! Turns `policy/*.yaml` into static tables embedded in the binary (`src/tables.rs`): the
//! rules, the environment lists and the endpoint rules as Rust data, without the examples, so a
//! gated call parses nothing to read its policy (the cooldown budgets, read only by a call that
//! counts against one, stay compact JSON). The YAML itself is also embedded (for `tiershim
//! policy check` and the tests, which run the examples and check that the tables equal it).
//! Also embeds the shipped skills (`skills/`), the baseline when none is installed or
//! configured. And it names the build for `tiershim --version`: the commit and the build date.
#![allow(clippy::expect_used, clippy::panic)]

use std::fs;
use std::path::Path;

fn main() {
    embed_skills();
    name_the_build();
    hot_text();
    println!("cargo:rerun-if-changed=policy");
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo")).join("policy");
    fs::create_dir_all(&out).expect("create OUT_DIR/policy");
    let mut entries: Vec<_> = fs::read_dir("policy").expect("read policy/").filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    let mut t = Tables::default();
    let mut statics = String::new();
    for entry in entries {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        println!("cargo:rerun-if-changed={}", path.display());
        let text = fs::read_to_string(&path).expect("read policy file");
        let value: serde_json::Value = match serde_yaml_ng::from_str(&text) {
            Ok(v) => v,
            Err(e) => panic!("{}: {e}", path.display()),
        };
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("utf-8 file name");
        if stem == "common" {
            let env = t.env(&value["env"]);
            statics.push_str(&format!("pub static COMMON: Env = {env};\n"));
        } else if stem == "endpoints" {
            let endpoints = t.endpoints(&value);
            statics.push_str(&format!("pub static ENDPOINTS: Endpoints = {endpoints};\n"));
        } else if stem == "cooldown" {
            // The budgets are read only by a call that counts against one: as JSON.
            fs::write(out.join("cooldown.json"), value.to_string()).expect("write cooldown json");
        } else if value.get("rules").is_some() {
            // `ansible-playbook.yaml` is `ANSIBLE_PLAYBOOK`.
            let name = stem.to_uppercase().replace('-', "_");
            let policy = t.policy(&value);
            statics.push_str(&format!("pub static {name}: Policy = {policy};\n"));
        }
    }
    fs::write(out.join("tables.rs"), t.write(&statics)).expect("write policy tables");
}

// The policy files as Rust data of the types in src/tables.rs: every string a place in one
// text, every list a place in one array per kind of item, so the tables hold no pointers. Only
// the shape is read here; whether the values are valid is the crate's business (the tests load
// the YAML and compare).

/// The text and the arrays being written.
#[derive(Default)]
struct Tables {
    text: String,
    /// Each string's place in `text`, so a string is stored once.
    placed: std::collections::HashMap<String, (usize, usize)>,
    strs: Vec<String>,
    pairs: Vec<String>,
    sizes: Vec<String>,
    by_tier: Vec<String>,
    bodies: Vec<String>,
    rules: Vec<String>,
    endpoint_rules: Vec<String>,
}

/// `List { at, len }` of the `items` just pushed onto `array`.
fn push(array: &mut Vec<String>, items: Vec<String>) -> String {
    let at = array.len();
    let len = items.len();
    array.extend(items);
    format!("List {{ at: {at}, len: {len}, item: PhantomData }}")
}

fn array(name: &str, item: &str, items: &[String]) -> String {
    format!("static {name}: [{item}; {}] = [\n{}\n];\n", items.len(), items.join(",\n"))
}

impl Tables {
    fn write(self, statics: &str) -> String {
        let mut out = String::from("// Written by build.rs from policy/*.yaml. Do not edit.\n");
        out.push_str(&format!("const TEXT: &str = {:?};\n", self.text));
        out.push_str(&array("STRS", "Str", &self.strs));
        out.push_str(&array("PAIRS", "(Str, Str)", &self.pairs));
        out.push_str(&array("SIZES", "(u8, usize)", &self.sizes));
        out.push_str(&array("BY_TIER", "(u8, List<(Str, Str)>)", &self.by_tier));
        out.push_str(&array("BODIES", "(Str, List<Str>)", &self.bodies));
        out.push_str(&array("RULES", "Rule", &self.rules));
        out.push_str(&array("ENDPOINT_RULES", "Endpoint", &self.endpoint_rules));
        out.push_str(statics);
        out
    }

    fn str(&mut self, s: &str) -> String {
        let (at, len) = match self.placed.get(s) {
            Some(p) => *p,
            None => {
                let p = (self.text.len(), s.len());
                self.text.push_str(s);
                self.placed.insert(s.to_string(), p);
                p
            }
        };
        assert!(u32::try_from(at + len).is_ok(), "policy tables: the text outgrew u32");
        format!("Str {{ at: {at}, len: {len} }}")
    }

    fn text(&mut self, v: &serde_json::Value) -> String {
        match v {
            serde_json::Value::String(s) => self.str(s),
            serde_json::Value::Null => panic!("policy: a string is missing"),
            other => self.str(&other.to_string()),
        }
    }

    fn opt(&mut self, v: Option<&serde_json::Value>) -> String {
        match v {
            None | Some(serde_json::Value::Null) => "None".into(),
            Some(x) => format!("Some({})", self.text(x)),
        }
    }

    fn strs(&mut self, v: Option<&serde_json::Value>) -> String {
        let items: Vec<String> = v.and_then(|v| v.as_array()).into_iter().flatten().map(|x| self.text(x)).collect();
        push(&mut self.strs, items)
    }

    fn pairs(&mut self, v: Option<&serde_json::Value>) -> String {
        let items: Vec<String> = v
            .and_then(|v| v.as_object())
            .into_iter()
            .flatten()
            .map(|(k, v)| format!("({}, {})", self.str(k), self.text(v)))
            .collect();
        push(&mut self.pairs, items)
    }

    fn max_files(&mut self, v: Option<&serde_json::Value>) -> String {
        let items: Vec<String> = v
            .and_then(|v| v.as_object())
            .into_iter()
            .flatten()
            .map(|(k, v)| format!("({k}, {v})"))
            .collect();
        push(&mut self.sizes, items)
    }

    fn env(&mut self, v: &serde_json::Value) -> String {
        let by_tier: Vec<String> = v
            .get("set_by_tier")
            .and_then(|v| v.as_object())
            .into_iter()
            .flatten()
            .map(|(t, vars)| format!("({t}, {})", self.pairs(Some(vars))))
            .collect();
        let by_tier = push(&mut self.by_tier, by_tier);
        let credentials = match v.get("credentials") {
            None | Some(serde_json::Value::Null) => "None".to_string(),
            Some(c) => format!("Some(({}, {}))", self.strs(c.get("secrets")), self.strs(c.get("destination"))),
        };
        format!(
            "Env {{ pass: {}, pinned: {}, must_match: {}, set: {}, set_by_tier: {by_tier}, credentials: {credentials} }}",
            self.strs(v.get("pass")),
            self.strs(v.get("pinned")),
            self.strs(v.get("must_match")),
            self.pairs(v.get("set")),
        )
    }

    fn policy(&mut self, v: &serde_json::Value) -> String {
        let rules: Vec<String> = v["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                format!(
                    "Rule {{ id: {}, verbs: {}, when: {}, tier: {}, skill: {}, what: {}, instead: {}, scope: {}, max_files: {}, cooldown: {} }}",
                    self.text(&r["id"]),
                    self.strs(r.get("verbs")),
                    self.strs(r.get("when")),
                    tier(&r["tier"]),
                    self.opt(r.get("skill")),
                    self.opt(r.get("what")),
                    self.opt(r.get("instead")),
                    self.opt(r.get("scope")),
                    self.max_files(r.get("max_files")),
                    self.opt(r.get("cooldown")),
                )
            })
            .collect();
        let rules = push(&mut self.rules, rules);
        let no_env = serde_json::Value::Object(Default::default());
        format!(
            "Policy {{ tool: {}, skill: {}, env: {}, rules: {rules} }}",
            self.text(&v["tool"]),
            self.text(&v["skill"]),
            self.env(v.get("env").unwrap_or(&no_env)),
        )
    }

    fn endpoints(&mut self, v: &serde_json::Value) -> String {
        let rules: Vec<String> = v["endpoints"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                let body: Vec<String> = r
                    .get("body")
                    .and_then(|b| b.as_object())
                    .into_iter()
                    .flatten()
                    .map(|(k, vals)| format!("({}, {})", self.str(k), self.strs(Some(vals))))
                    .collect();
                let body = push(&mut self.bodies, body);
                format!(
                    "Endpoint {{ id: {}, methods: {}, path: {}, body: {body}, mutations: {}, tier: {}, skill: {}, what: {}, instead: {}, scope: {}, max_files: {} }}",
                    self.text(&r["id"]),
                    self.strs(r.get("methods")),
                    self.opt(r.get("path")),
                    self.strs(r.get("mutations")),
                    tier(&r["tier"]),
                    self.opt(r.get("skill")),
                    self.opt(r.get("what")),
                    self.opt(r.get("instead")),
                    self.opt(r.get("scope")),
                    self.max_files(r.get("max_files")),
                )
            })
            .collect();
        let rules = push(&mut self.endpoint_rules, rules);
        format!("Endpoints {{ skill: {}, endpoints: {rules} }}", self.text(&v["skill"]))
    }
}

fn tier(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::String(w) if w == "never" => "0".into(),
        other => panic!("policy: tier {other} is not 1, 2, 3 or never"),
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

/// The functions a gated call runs, placed together at the start of the gate's code
/// (`link/hot-text.ld`, written by `make hot-text`): a call then touches fewer 64 KB pieces of the
/// 8 MB of code, each a page fault. A linker script with INSERT only adds an output section
/// before `.text` and keeps the default layout for the rest (GNU ld and LLD alike); it is given to
/// the tiershim binary only, on Linux.
fn hot_text() {
    println!("cargo:rerun-if-changed=link/hot-text.ld");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set by cargo");
    let script = Path::new(&dir).join("link/hot-text.ld");
    println!("cargo:rustc-link-arg-bin=tiershim=-Wl,-T,{}", script.display());
}
