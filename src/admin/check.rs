//! `tiershim check [--config FILE]… [--prefix DIR] [--policy DIR]… [--skills DIR]… [--json]`:
//! like `visudo -c`, parse and validate what the gate reads — each tier's `tiershim.yaml`
//! (trusted as that gate would trust it), the override policy directory it names (every file,
//! every example), and every skill it reads — and report each fault as `file:line:column:` where
//! known, with a did-you-mean for an unknown key. Exit 0 when nothing is an error, 78 otherwise.
//!
//! It uses the gate's own loaders (`install`, `policy`, `skill`, `scope`), so what it accepts the
//! gate accepts. It reads files; it writes and executes nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use crate::error::Error;
use crate::exit::Exit;
use crate::install::{self, InstallConfig, InstallFile};
use crate::policy::{self, cooldown::Budgets};
use crate::sanitize::escape;
use crate::scope::Rules;
use crate::skill::served::{Kind, Scope, SourceDir};
use crate::skill::{Catalog, Level, Location, Sources};
use crate::tool::Tool;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A tier's tiershim.yaml to check, with the policy directory and the skills it names
    /// (repeatable). Default, when no --policy or --skills is given either: every tier of the
    /// installation this binary belongs to.
    #[arg(long, value_name = "FILE")]
    config: Vec<PathBuf>,
    /// The installation whose tiers to check (default: the one this binary belongs to).
    #[arg(long, value_name = "DIR", conflicts_with = "config")]
    prefix: Option<PathBuf>,
    /// A policy directory to check on its own, as `policy:` would name it (repeatable).
    #[arg(long, value_name = "DIR")]
    policy: Vec<PathBuf>,
    /// A skills directory to check on its own (repeatable).
    #[arg(long, value_name = "DIR")]
    skills: Vec<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
struct Finding {
    file: String,
    line: Option<usize>,
    column: Option<usize>,
    level: Level,
    message: String,
}

impl Finding {
    fn shown(&self) -> String {
        let mut at = self.file.clone();
        if let Some(l) = self.line {
            at.push_str(&format!(":{l}"));
            if let Some(c) = self.column {
                at.push_str(&format!(":{c}"));
            }
        }
        let level = match self.level {
            Level::Error => "error",
            Level::Warning => "warning",
        };
        format!("{}: {level}: {}", escape(&at), escape(&self.message))
    }
}

#[derive(Default)]
struct Report {
    findings: Vec<Finding>,
    checked: Vec<String>,
    /// Policy and skill sources already checked (tiers usually share them).
    done: BTreeSet<String>,
}

impl Report {
    fn add(&mut self, file: &str, at: Option<(usize, usize)>, level: Level, message: impl Into<String>) {
        let f = Finding {
            file: file.to_string(),
            line: at.map(|a| a.0),
            column: at.and_then(|a| (a.1 > 0).then_some(a.1)),
            level,
            message: message.into(),
        };
        if !self.findings.contains(&f) {
            self.findings.push(f);
        }
    }
    fn error(&mut self, file: &str, at: Option<(usize, usize)>, message: impl Into<String>) {
        self.add(file, at, Level::Error, message);
    }
}

pub fn run(a: Args) -> Exit {
    let mut r = Report::default();
    let mut configs = a.config.clone();
    if configs.is_empty() && a.policy.is_empty() && a.skills.is_empty() {
        let prefix = a.prefix.clone().or_else(|| {
            std::fs::read_link("/proc/self/exe")
                .ok()
                .and_then(|e| e.parent()?.parent().map(Path::to_path_buf))
        });
        let found: Vec<PathBuf> = prefix
            .iter()
            .flat_map(|p| (1..=3).map(move |n| p.join("lib/tiershim").join(format!("tier{n}")).join(install::FILE_NAME)))
            .filter(|p| p.is_file())
            .collect();
        if found.is_empty() {
            eprintln!(
                "tiershim check: no installed tiershim.yaml under {}; name what to check (--config FILE, --policy DIR, --skills DIR) or the installation (--prefix DIR)",
                prefix.map(|p| p.join("lib/tiershim").display().to_string()).unwrap_or_default()
            );
            return Exit::Usage;
        }
        configs = found;
    }
    for c in &configs {
        // Made absolute as the gate sees it: the file's directory is the tier directory.
        let c = std::path::absolute(c).unwrap_or_else(|_| c.clone());
        let c = match (c.parent().map(std::fs::canonicalize), c.file_name()) {
            (Some(Ok(dir)), Some(name)) => dir.join(name),
            _ => c,
        };
        check_config(&mut r, &c);
    }
    for d in &a.policy {
        check_policy(&mut r, d);
    }
    for d in &a.skills {
        check_skill_dir(&mut r, d);
    }
    print(&r, a.json)
}

fn print(r: &Report, as_json: bool) -> Exit {
    let errors = r.findings.iter().filter(|f| f.level == Level::Error).count();
    let warnings = r.findings.len() - errors;
    if as_json {
        let v = json!({
            "ok": errors == 0,
            "errors": errors,
            "warnings": warnings,
            "checked": r.checked,
            "findings": r.findings,
        });
        println!("{v}");
    } else {
        for c in &r.checked {
            println!("checked {}", escape(c));
        }
        for f in &r.findings {
            println!("{}", f.shown());
        }
        println!("{errors} error(s), {warnings} warning(s)");
    }
    if errors == 0 { Exit::Ok } else { Exit::Config }
}

/// `at line 3 column 1` in a serde message: (3, 1).
fn location(msg: &str) -> Option<(usize, usize)> {
    let rest = msg.split_once(" at line ")?.1;
    let (line, rest) = rest.split_once(" column ")?;
    let col: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((line.trim().parse().ok()?, col.parse().ok()?))
}

/// A message without serde's ` at line N column M` (which the `file:line:column:` prefix says).
fn strip_location(msg: &str) -> String {
    let Some(start) = msg.find(" at line ") else {
        return msg.to_string();
    };
    let rest = &msg[start + " at line ".len()..];
    let Some(col) = rest.find(" column ") else {
        return msg.to_string();
    };
    let after = &rest[col + " column ".len()..];
    let digits = after.chars().take_while(char::is_ascii_digit).count();
    format!("{}{}", &msg[..start], &after[digits..])
}

/// The line (and column) of the key a validation message names first (`` `tier: 4` ``,
/// `` `env.PGSERVICE` ``, `` `hosts:` entry ``): the top-level key, then the nested one under it.
fn key_line(text: &str, msg: &str) -> Option<(usize, usize)> {
    let token = msg.split('`').nth(1)?;
    let head = token.split([':', ' ']).next()?;
    let (key, sub) = match head.split_once('.') {
        Some((k, s)) => (k, Some(s)),
        None => (head, None),
    };
    let lines: Vec<&str> = text.lines().collect();
    let top = lines.iter().position(|l| l.starts_with(&format!("{key}:")))?;
    if let Some(sub) = sub {
        for (i, l) in lines.iter().enumerate().skip(top + 1) {
            if !l.starts_with([' ', '\t']) && !l.trim().is_empty() {
                break;
            }
            let indent = l.len() - l.trim_start().len();
            if l.trim_start().starts_with(&format!("{sub}:")) {
                return Some((i + 1, indent + 1));
            }
        }
    }
    Some((top + 1, 1))
}

fn check_config(r: &mut Report, path: &Path) {
    let shown = path.display().to_string();
    r.checked.push(shown.clone());
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            r.error(&shown, None, format!("cannot read: {e}"));
            return;
        }
    };
    // The YAML and its keys, with where a fault is.
    if let Err(e) = serde_yaml_ng::from_str::<InstallFile>(&text) {
        let msg = e.to_string();
        let hint = crate::suggest::for_serde(&msg);
        let at = e.location().map(|l| (l.line(), l.column()));
        r.error(&shown, at, format!("{}{hint}", strip_location(&msg)));
        return;
    }
    // Validation and trust, as the gate of this tier directory does them.
    let cfg = match InstallConfig::load_as_gate(path, install::hardened_gate(path)) {
        Ok(c) => c,
        Err(e) => {
            let (file, msg) = match &e {
                Error::ConfigInvalid { msg, .. } => (shown.clone(), msg.clone()),
                Error::ConfigUnsafe { path: p, msg } => (p.display().to_string(), msg.clone()),
                other => (shown.clone(), other.to_string()),
            };
            let at = if file == shown { key_line(&text, &msg) } else { None };
            r.error(&file, at, msg);
            return;
        }
    };
    if let Some(dir) = &cfg.policy {
        check_policy(r, dir);
    }
    let sources = Sources::from_config(cfg.skills.as_ref());
    if r.done.insert(format!("skills {:?} {:?}", sources.baseline, sources.repos)) {
        check_catalog(r, &Catalog::load(&sources));
    }
}

/// An override policy directory: it exists, holds only files the policy knows, and every tool's
/// policy loads from it (its own file or the embedded one, with the directory's common.yaml
/// and endpoints.yaml) with every example holding; and its budgets load.
fn check_policy(r: &mut Report, dir: &Path) {
    if !r.done.insert(format!("policy {}", dir.display())) {
        return;
    }
    r.checked.push(format!("policy {}", dir.display()));
    let mut errors = Vec::new();
    match policy::check_dir(dir) {
        Err(e) => errors.push(e),
        Ok(()) => {
            for tool in Tool::ALL {
                if let Err(e) = crate::judge::policy_in(tool, Some(dir)) {
                    errors.push(e);
                }
            }
            if let Err(e) = Budgets::load(Some(dir)) {
                errors.push(e);
            }
        }
    }
    for e in errors {
        let (source, msg) = match &e {
            Error::Policy { source_name, msg } => (source_name.clone(), msg.clone()),
            other => (dir.display().to_string(), other.to_string()),
        };
        // A file named without its directory is one of the directory's.
        let file = if source.contains('/') {
            source
        } else {
            dir.join(&source).display().to_string()
        };
        let at = location(&msg).or_else(|| rule_line(&file, &msg));
        r.error(&file, at, strip_location(&msg));
    }
}

/// For an example that disagrees (`… first: rule docker.ps: …`), the line of that rule's `id:`.
fn rule_line(file: &str, msg: &str) -> Option<(usize, usize)> {
    let id = msg
        .split_once("rule ")
        .or_else(|| msg.split_once("endpoint "))?
        .1
        .split([':', ' '])
        .next()?;
    let text = std::fs::read_to_string(file).ok()?;
    text.lines()
        .position(|l| {
            let t = l.trim_start().trim_start_matches("- ").trim();
            t == format!("id: {id}") || t == format!("id: \"{id}\"")
        })
        .map(|i| (i + 1, 0))
}

/// A skills directory on its own (`--skills DIR`): every skill in it.
fn check_skill_dir(r: &mut Report, dir: &Path) {
    if !r.done.insert(format!("skills dir {}", dir.display())) {
        return;
    }
    if !dir.is_dir() {
        r.error(&dir.display().to_string(), None, "is not a directory");
        return;
    }
    let catalog = Catalog::from_dirs(&[SourceDir {
        dir: Some(dir.to_path_buf()),
        location: Location::Dir(dir.display().to_string()),
        named: true,
        // Read as the gate reads a skills directory (`name.md` and `name/SKILL.md`).
        kind: Kind::ClaudeOps,
        scope: Scope::Global,
    }]);
    check_catalog(r, &catalog);
}

/// Every skill of a catalog: its findings (`line N: …`), whether its patterns compile, and what
/// discovery could not use.
fn check_catalog(r: &mut Report, catalog: &Catalog) {
    for s in &catalog.skills {
        r.checked.push(s.shown.clone());
        for f in &s.parsed.findings {
            let (at, msg) = line_prefix(&f.message);
            r.add(&s.shown, at, f.level, msg);
        }
        if let Err(p) = Rules::build(std::slice::from_ref(s)) {
            let (at, msg) = line_prefix(&p.message);
            r.error(&s.shown, at, msg);
        }
    }
    for p in &catalog.problems {
        r.error(&p.path, None, p.message.clone());
    }
}

/// `line 12: message` → ((12, 0), `message`).
fn line_prefix(msg: &str) -> (Option<(usize, usize)>, String) {
    if let Some(rest) = msg.strip_prefix("line ")
        && let Some((n, m)) = rest.split_once(": ")
        && let Ok(n) = n.parse()
    {
        return (Some((n, 0)), m.to_string());
    }
    (None, msg.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_come_from_serde_messages_and_named_keys() {
        assert_eq!(location("unknown field `x`, expected `a` at line 4 column 3"), Some((4, 3)));
        assert_eq!(
            location("did not find expected ',' at line 2 column 1, while parsing"),
            Some((2, 1))
        );
        assert_eq!(location("no location"), None);
        assert_eq!(
            strip_location("x: unknown field `a` at line 4 column 3 (did you mean `b`?)"),
            "x: unknown field `a` (did you mean `b`?)"
        );
        assert_eq!(strip_location("plain"), "plain");
        let text = "tier: 4\nenv:\n  DOCKER_HOST: x\n  PGSERVICE: y\nhosts: [a]\n";
        assert_eq!(key_line(text, "`tier: 4` is not 1, 2 or 3"), Some((1, 1)));
        assert_eq!(key_line(text, "`env.PGSERVICE` is pinned without"), Some((4, 3)));
        assert_eq!(key_line(text, "`hosts:` entry \"a b\" is not"), Some((5, 1)));
        assert_eq!(key_line(text, "`nothing` here"), None);
        assert_eq!(line_prefix("line 12: a thing"), (Some((12, 0)), "a thing".to_string()));
        assert_eq!(line_prefix("no line"), (None, "no line".to_string()));
    }
}
