//! `tiershim doctor [--config FILE | --prefix DIR] [--user USER]`: checks an installation and
//! prints one line per check, `✓` or `✗` with the fix. Exit 0 only when every check holds.
//!
//! The checks (per tier directory): the links point at this install's binary; `tiershim.yaml`
//! parses, is trusted as the gate would trust it, and its ceiling matches the directory; the
//! restricted profile is there and names the directory; every real tool exists, is not
//! tiershim, and cannot be executed by the agent's user without the gate (also not as a copy on
//! the system PATH); the passthrough tools are vetted; nothing the gate trusts is writable by the
//! agent's user; the audit log can be appended to by the gate (and, hardened, by nothing else);
//! the cooldown state reads and is written by the gate only; the policy's examples pass; the
//! skills validate. Before the tiers: the binary, and that rbash is installed.
//!
//! It reads metadata and files; it executes nothing.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::access::{self, Principal};
use crate::exit::Exit;
use crate::install::{self, InstallConfig};
use crate::policy::{Policy, check};
use crate::sanitize::escape;
use crate::skill::{Catalog, Sources};
use crate::tool::Tool;
use crate::vet::{self, ExecCapable};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// One tier's tiershim.yaml (checks that tier directory only).
    #[arg(long, value_name = "FILE", conflicts_with = "prefix")]
    config: Option<PathBuf>,
    /// The installation (default: the one this binary belongs to); checks every tier in it.
    #[arg(long, value_name = "DIR")]
    prefix: Option<PathBuf>,
    /// The agent's account (name or uid), whose reach is checked. Default: the caller; for root,
    /// any unprivileged user.
    #[arg(long, value_name = "USER")]
    user: Option<String>,
    /// Directories (colon-separated) searched for other copies of the real tools, which the
    /// agent's user could run without the gate. Default: the standard PATH
    /// (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin) and PostgreSQL's
    /// /usr/lib/postgresql/*/bin.
    #[arg(long, value_name = "DIRS")]
    system_path: Option<String>,
}

const SYSTEM_PATH: &[&str] = &["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/// Programs a real tool runs as the caller, which file modes therefore cannot close: only the
/// restricted shell (no `/` in command names) keeps the agent from naming them.
const HELPERS: &[(&str, &str)] = &[
    ("git", "/usr/lib/git-core"),
    ("git", "/usr/libexec/git-core"),
    ("git", "/usr/local/libexec/git-core"),
    ("docker", "/usr/libexec/docker/cli-plugins"),
    ("docker", "/usr/lib/docker/cli-plugins"),
    ("docker", "/usr/local/lib/docker/cli-plugins"),
];

#[derive(Default)]
struct Report {
    failed: usize,
    /// Collect the failures instead of printing every line (`tiershim launch`).
    collected: Option<Vec<String>>,
}

impl Report {
    fn ok(&mut self, what: impl AsRef<str>) {
        if self.collected.is_none() {
            println!("✓ {}", escape(what.as_ref()));
        }
    }
    fn bad(&mut self, what: impl AsRef<str>, fix: impl AsRef<str>) {
        self.failed += 1;
        let line = format!("✗ {}; fix: {}", escape(what.as_ref()), escape(fix.as_ref()));
        match &mut self.collected {
            Some(v) => v.push(line),
            None => println!("{line}"),
        }
    }
    fn note(&mut self, what: impl AsRef<str>) {
        if self.collected.is_none() {
            println!("  note: {}", escape(what.as_ref()));
        }
    }
}

/// The checks `doctor --prefix PREFIX --user …` makes of one tier directory, as the failed
/// lines (`✗ …; fix: …`); empty when every check holds. `tiershim launch` refuses on any.
pub fn failures(prefix: &Path, tier: u8, agent: Principal, system_path: Option<&str>) -> Vec<String> {
    let table = match ExecCapable::embedded() {
        Ok(t) => t,
        Err(e) => return vec![format!("✗ {e}")],
    };
    let mut r = Report {
        collected: Some(Vec::new()),
        ..Report::default()
    };
    let binary = prefix.join("bin/tiershim");
    let hardened = check_binary(&mut r, &binary, &agent);
    let install = Install {
        binary,
        hardened,
        agent,
        system_path: match system_path {
            Some(s) => s.split(':').filter(|d| !d.is_empty()).map(PathBuf::from).collect(),
            None => default_system_path(),
        },
        table,
    };
    check_rbash(&mut r);
    let dir = prefix.join("lib/tiershim").join(format!("tier{tier}"));
    let cfg = dir.join(install::FILE_NAME);
    check_tier(&mut r, &install, &dir, &cfg, &mut Seen::default());
    r.collected.unwrap_or_default()
}

/// What a check needs to know about the installation as a whole.
struct Install {
    /// The tiershim binary the links must point at.
    binary: PathBuf,
    /// The setgid group, when the binary is installed setgid (hardened).
    hardened: Option<u32>,
    agent: Principal,
    system_path: Vec<PathBuf>,
    table: ExecCapable,
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

fn own_exe() -> PathBuf {
    std::fs::read_link("/proc/self/exe").unwrap_or_else(|_| PathBuf::from("/proc/self/exe"))
}

fn default_system_path() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SYSTEM_PATH.iter().map(PathBuf::from).collect();
    if let Ok(rd) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut versions: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path().join("bin")).collect();
        versions.sort();
        out.extend(versions);
    }
    out
}

pub fn run(a: Args) -> Exit {
    let table = match ExecCapable::embedded() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("tiershim doctor: {e}");
            return Exit::Internal;
        }
    };
    let agent = match &a.user {
        Some(u) => match Principal::lookup(u) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("tiershim doctor: --user {}: {e}", escape(u));
                return Exit::Usage;
            }
        },
        None => {
            let me = Principal::current();
            if me.is_root() { Principal::others() } else { me }
        }
    };
    let system_path = match &a.system_path {
        Some(s) => s.split(':').filter(|d| !d.is_empty()).map(PathBuf::from).collect(),
        None => default_system_path(),
    };
    let (dirs, binary) = match &a.config {
        Some(cfg) => {
            let dir = cfg.parent().unwrap_or(Path::new("/")).to_path_buf();
            let installed = dir.join("../../../bin/tiershim");
            let binary = std::fs::canonicalize(&installed).unwrap_or_else(|_| own_exe());
            (vec![(dir, cfg.clone())], binary)
        }
        None => {
            let prefix = match a
                .prefix
                .clone()
                .or_else(|| own_exe().parent().and_then(Path::parent).map(Path::to_path_buf))
            {
                Some(p) => p,
                None => {
                    eprintln!("tiershim doctor: cannot tell where this binary is installed; pass --prefix DIR");
                    return Exit::Usage;
                }
            };
            let mut dirs = Vec::new();
            for n in 1..=3 {
                let d = prefix.join("lib/tiershim").join(format!("tier{n}"));
                if d.is_dir() {
                    dirs.push((d.clone(), d.join(install::FILE_NAME)));
                }
            }
            (dirs, prefix.join("bin/tiershim"))
        }
    };
    let mut r = Report::default();
    println!("tiershim doctor: checking {} as {}", binary.display(), agent.label);
    if agent.is_root() {
        r.note("the agent's user is root: it can reach and write everything, so nothing below can protect the tools from it");
    }
    let hardened = check_binary(&mut r, &binary, &agent);
    if dirs.is_empty() {
        r.bad(
            format!(
                "no tier directories under {}",
                binary
                    .parent()
                    .and_then(Path::parent)
                    .unwrap_or(Path::new("/"))
                    .join("lib/tiershim")
                    .display()
            ),
            "run install.sh --prefix DIR",
        );
    }
    let install = Install {
        binary,
        hardened,
        agent,
        system_path,
        table,
    };
    check_rbash(&mut r);
    let mut seen = Seen::default();
    for (dir, cfg_path) in &dirs {
        check_tier(&mut r, &install, dir, cfg_path, &mut seen);
    }
    if r.failed == 0 {
        println!("all checks hold");
        Exit::Ok
    } else {
        println!("{} check(s) failed", r.failed);
        Exit::Config
    }
}

/// The binary exists; when it is setgid (hardened), root owns it and the agent is not in its
/// group. Returns the setgid group.
fn check_binary(r: &mut Report, binary: &Path, agent: &Principal) -> Option<u32> {
    let meta = match std::fs::metadata(binary) {
        Ok(m) => m,
        Err(e) => {
            r.bad(format!("binary {}: {e}", binary.display()), "run install.sh");
            return None;
        }
    };
    if meta.mode() & 0o2000 == 0 {
        r.ok(format!(
            "binary {} (not hardened: the real tools are protected by file modes only if you made them so)",
            binary.display()
        ));
        return None;
    }
    let gid = meta.gid();
    let group = access::group_name(gid).unwrap_or_else(|| gid.to_string());
    let mut fine = true;
    if meta.uid() != 0 {
        fine = false;
        r.bad(
            format!("binary {} is setgid but owned by uid {}", binary.display(), meta.uid()),
            format!("chown root {}", binary.display()),
        );
    }
    if agent.gids.contains(&gid) {
        fine = false;
        r.bad(
            format!("{} is in group {group}, so it reaches the real tools without the gate", agent.label),
            format!("remove the agent's user from group {group} (gpasswd -d USER {group})"),
        );
    }
    if fine {
        r.ok(format!("binary {} is setgid {group}, owned by root (hardened)", binary.display()));
    }
    Some(gid)
}

fn check_rbash(r: &mut Report) {
    match ["/usr/bin/rbash", "/bin/rbash"].into_iter().find(|p| Path::new(p).is_file()) {
        Some(p) => r.ok(format!("rbash: {p}")),
        None => r.bad(
            "rbash is not installed, so `tiershim shell` cannot start",
            "install bash (it provides /usr/bin/rbash)",
        ),
    }
}

/// What has been checked once for the whole install (tiers usually share it).
#[derive(Default)]
struct Seen {
    policies: BTreeSet<Option<PathBuf>>,
    skills: BTreeSet<(Option<PathBuf>, Option<PathBuf>)>,
}

fn check_tier(r: &mut Report, inst: &Install, dir: &Path, cfg_path: &Path, seen: &mut Seen) {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dir_tier: Option<u8> = name.strip_prefix("tier").and_then(|n| n.parse().ok());

    check_links(r, inst, dir, &name);

    // The config: parses, trusted as the gate trusts it, ceiling matches the directory.
    let cfg = match InstallConfig::load(cfg_path, true) {
        Ok(c) => Some(c),
        Err(e) => {
            r.bad(format!("{name}: {e}"), "fix the file, or re-run install.sh");
            None
        }
    };
    if let Some(cfg) = &cfg {
        let mut fine = true;
        if inst.hardened.is_some() {
            for p in [cfg_path, dir] {
                if std::fs::metadata(p).is_ok_and(|m| m.uid() != 0) {
                    fine = false;
                    r.bad(
                        format!(
                            "{name}: {} is not owned by root, so the hardened gate refuses every call",
                            p.display()
                        ),
                        format!("chown root {}", p.display()),
                    );
                }
            }
        }
        match dir_tier {
            Some(t) if t != cfg.tier => {
                fine = false;
                r.bad(
                    format!(
                        "{name}: {} says `tier: {}` in the directory of tier {t}",
                        cfg_path.display(),
                        cfg.tier
                    ),
                    "re-run install.sh, which writes each tier's ceiling",
                );
            }
            _ => {}
        }
        if fine {
            r.ok(format!("{name}: {} parses, ceiling {}", cfg_path.display(), cfg.tier));
        }
    }

    check_profile(r, dir, &name, dir_tier);
    if let Some(t) = dir_tier {
        check_claude_shell(r, inst, t, &name);
    }
    if let Some(cfg) = &cfg {
        check_real(r, inst, cfg, &name);
    }
    check_passthrough(r, inst, dir, &name);
    check_not_writable(r, inst, dir, cfg_path, cfg.as_ref(), &name);
    if let Some(cfg) = &cfg {
        check_audit(r, inst, cfg, &name);
        check_cooldown(r, inst, cfg, &name);
        check_fence(r, inst, cfg, &name);
        if seen.policies.insert(cfg.policy.clone()) {
            check_policy(r, cfg.policy.as_deref());
        }
        let sources = Sources::from_config(cfg.skills.as_ref());
        if seen.skills.insert((sources.baseline.clone(), sources.repos.clone())) {
            check_skills(r, &sources, cfg_path);
        }
    }
}

fn check_links(r: &mut Report, inst: &Install, dir: &Path, name: &str) {
    let mut fine = true;
    for tool in Tool::ALL {
        let link = dir.join(tool.name());
        if std::fs::symlink_metadata(&link).is_err() {
            fine = false;
            r.bad(format!("{name}: no link for {tool} in {}", dir.display()), "re-run install.sh");
        } else if !same_file(&link, &inst.binary) {
            let target = std::fs::read_link(&link)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "a file".into());
            fine = false;
            r.bad(
                format!("{name}: {} -> {target} is not {}", link.display(), inst.binary.display()),
                format!("ln -sfn ../../../bin/tiershim {} (or re-run install.sh)", link.display()),
            );
        }
    }
    if fine {
        let names: Vec<&str> = Tool::ALL.iter().map(|t| t.name()).collect();
        r.ok(format!("{name}: links {} -> {}", names.join(", "), inst.binary.display()));
    }
}

fn check_profile(r: &mut Report, dir: &Path, name: &str, tier: Option<u8>) {
    let path = dir.join("profile");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            r.bad(format!("{name}: restricted profile {}: {e}", path.display()), "re-run install.sh");
            return;
        }
    };
    let want_path = format!("PATH='{}'", dir.display());
    let mut missing = Vec::new();
    if !text.lines().any(|l| l.trim() == want_path) {
        missing.push(want_path);
    }
    if let Some(t) = tier {
        let want_tier = format!("CLAUDEOPS_TIER={t}");
        if !text.lines().any(|l| l.trim() == want_tier) {
            missing.push(want_tier);
        }
    }
    if !text.lines().any(|l| l.trim().starts_with("readonly PATH CLAUDEOPS_TIER SHELL")) {
        missing.push("readonly PATH CLAUDEOPS_TIER SHELL".into());
    }
    if missing.is_empty() {
        r.ok(format!("{name}: restricted profile {}", path.display()));
    } else {
        r.bad(
            format!("{name}: restricted profile {} lacks `{}`", path.display(), missing.join("`, `")),
            "re-run install.sh, which writes it from shims/profile",
        );
    }
}

fn check_real(r: &mut Report, inst: &Install, cfg: &InstallConfig, name: &str) {
    let mut fine = true;
    let mut seen_helpers = BTreeSet::new();
    let mut seen_copies = BTreeSet::new();
    for tool in Tool::ALL {
        let real = match crate::exec::resolve_real(cfg, tool) {
            Ok(p) => p,
            Err(e) => {
                fine = false;
                r.bad(
                    format!("{name}: real {tool}: {e}"),
                    format!("install {tool}, or point `real.{tool}` in {} at it", cfg.path.display()),
                );
                continue;
            }
        };
        if same_file(&real, &inst.binary) {
            fine = false;
            r.bad(
                format!("{name}: real {tool} {} is tiershim itself", real.display()),
                format!("point `real.{tool}` in {} at the real binary", cfg.path.display()),
            );
            continue;
        }
        if access::can_execute(&inst.agent, &real) == Some(true) {
            fine = false;
            r.bad(
                format!(
                    "{name}: real {tool} {} can be run by {} without the gate",
                    real.display(),
                    inst.agent.label
                ),
                "run install.sh --harden as root (copies the real tools where only the gate can reach them and takes access off the originals)",
            );
        }
        for d in &inst.system_path {
            let copy = d.join(tool.name());
            if std::fs::symlink_metadata(&copy).is_err() || same_file(&copy, &inst.binary) || same_file(&copy, &real) {
                continue;
            }
            let target = std::fs::canonicalize(&copy).unwrap_or_else(|_| copy.clone());
            if !seen_copies.insert(target.clone()) {
                continue; // the same file under another name (/bin -> /usr/bin)
            }
            if access::can_execute(&inst.agent, &copy) == Some(true) {
                fine = false;
                r.bad(
                    format!(
                        "{name}: {tool} is also at {} ({}), which {} can run without the gate",
                        copy.display(),
                        target.display(),
                        inst.agent.label
                    ),
                    format!("chmod o-rwx {} (install.sh --harden does this), or remove it", target.display()),
                );
            }
        }
        for (t, helper) in HELPERS {
            if *t == tool.name() && Path::new(helper).is_dir() && seen_helpers.insert(*helper) {
                r.note(format!(
                    "{tool} runs its helpers from {helper} as the caller, so file modes cannot close them; only the restricted shell keeps the agent from naming them"
                ));
            }
        }
    }
    if fine {
        r.ok(format!(
            "{name}: every real tool exists, is not tiershim, and {} cannot run it without the gate",
            inst.agent.label
        ));
    }
}

fn check_passthrough(r: &mut Report, inst: &Install, dir: &Path, name: &str) {
    let entries = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            r.bad(format!("{name}: cannot list {}: {e}", dir.display()), "re-run install.sh");
            return;
        }
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut count = 0;
    let mut fine = true;
    for entry in names {
        if entry == install::FILE_NAME || entry == "profile" || Tool::from_name(&entry).is_some() {
            continue;
        }
        count += 1;
        for f in vet::vet_program(&entry, &dir.join(&entry), &inst.table) {
            fine = false;
            r.bad(
                format!("{name}: passthrough {f}"),
                format!("remove {} and its line in shims/passthrough", dir.join(&entry).display()),
            );
        }
    }
    if fine {
        r.ok(format!(
            "{name}: {count} passthrough tools, none of them can run a program or write a file"
        ));
    }
}

fn check_not_writable(r: &mut Report, inst: &Install, dir: &Path, cfg_path: &Path, cfg: Option<&InstallConfig>, name: &str) {
    let mut paths: Vec<PathBuf> = vec![dir.to_path_buf(), cfg_path.to_path_buf(), dir.join("profile"), inst.binary.clone()];
    if let Some(cfg) = cfg {
        if let Some(p) = &cfg.policy {
            paths.push(p.clone());
            if let Ok(rd) = std::fs::read_dir(p) {
                let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
                files.sort();
                paths.extend(files);
            }
        }
        for p in cfg.real.values().chain(cfg.real_dirs.iter()) {
            paths.push(p.clone());
        }
        // The baseline skills (the repositories are the agent's own work: their skills can only
        // add rules).
        if let Some(base) = cfg.skills.as_ref().and_then(|s| s.baseline.clone()) {
            walk(&base, &mut paths);
        }
    }
    let mut fine = true;
    for p in paths {
        if let Some(why) = access::writable_by(&inst.agent, &p) {
            fine = false;
            r.bad(
                format!("{name}: {} can be changed by the agent: {why}", p.display()),
                "make it and the directories above it writable by root only (chown root; chmod go-w)",
            );
        }
    }
    if fine {
        r.ok(format!(
            "{name}: the directory, config, profile, binary, policy, baseline skills and real tools are not writable by {}",
            inst.agent.label
        ));
    }
}

/// `dir` and everything under it.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    out.push(dir.to_path_buf());
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
        && let Ok(rd) = std::fs::read_dir(dir)
    {
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        entries.sort();
        for e in entries {
            walk(&e, out);
        }
    }
}

fn check_skills(r: &mut Report, sources: &Sources, cfg_path: &Path) {
    let catalog = Catalog::load(sources);
    let errors = super::skills::errors(&catalog);
    let shown = match (&sources.baseline, &sources.repos) {
        (Some(b), Some(repos)) => format!("{} and {}/*/.claude-ops/skills", b.display(), repos.display()),
        (Some(b), None) => b.display().to_string(),
        (None, Some(repos)) => format!("the shipped skills and {}/*/.claude-ops/skills", repos.display()),
        (None, None) => "the shipped skills".into(),
    };
    if errors.is_empty() {
        r.ok(format!("skills ({shown}): {} skill files validate", catalog.skills.len()));
        return;
    }
    for e in errors {
        r.bad(
            format!("skills ({shown}): {e}"),
            format!(
                "fix the skill; tiershim skills validate --config {} lists every finding",
                cfg_path.display()
            ),
        );
    }
}

fn check_audit(r: &mut Report, inst: &Install, cfg: &InstallConfig, name: &str) {
    let Some(log) = &cfg.audit_log else {
        r.bad(
            format!("{name}: {} names no audit_log, so decisions are not recorded", cfg.path.display()),
            "re-run install.sh with --audit-log FILE",
        );
        return;
    };
    let agent = &inst.agent;
    match (std::fs::metadata(log), inst.hardened) {
        (Ok(m), Some(gid)) => {
            let gate_can = m.gid() == gid && m.mode() & 0o020 != 0;
            let agent_can = access::writable_by(agent, log);
            if !gate_can {
                r.bad(
                    format!("{name}: audit log {} is not writable by the gate's group", log.display()),
                    format!(
                        "chgrp {} {}; chmod 0660 {}",
                        access::group_name(gid).unwrap_or_else(|| gid.to_string()),
                        log.display(),
                        log.display()
                    ),
                );
            } else if let Some(why) = agent_can {
                r.bad(
                    format!("{name}: audit log {}: the agent could rewrite its own record: {why}", log.display()),
                    format!(
                        "chown root {}; chmod 0660 {}, in a directory only root can write",
                        log.display(),
                        log.display()
                    ),
                );
            } else {
                r.ok(format!("{name}: audit log {} is appended by the gate only", log.display()));
            }
        }
        (Ok(m), None) => {
            if agent.may(&m, access::Perm::Write) {
                r.ok(format!("{name}: audit log {} is writable", log.display()));
            } else {
                r.bad(
                    format!(
                        "{name}: audit log {} is not writable by {}, so every call is refused",
                        log.display(),
                        agent.label
                    ),
                    format!(
                        "give the agent's user write access to {}, or run install.sh --harden",
                        log.display()
                    ),
                );
            }
        }
        (Err(_), _) => {
            let parent = log.parent().unwrap_or(Path::new("/"));
            let creatable = inst.hardened.is_none()
                && std::fs::metadata(parent).is_ok_and(|m| agent.may(&m, access::Perm::Write) && agent.may(&m, access::Perm::Exec));
            if creatable {
                r.ok(format!("{name}: audit log {} will be created on the first call", log.display()));
            } else {
                r.bad(
                    format!("{name}: audit log {} does not exist and the gate cannot create it", log.display()),
                    "re-run install.sh, which creates it",
                );
            }
        }
    }
}

/// The cooldown state file: the budgets load, the file reads (a file the gate cannot use
/// refuses every restart and redeploy), the gate can write it, and who else can. Without
/// `--harden` the gate writes it with the agent's own rights, so the budget is advisory.
fn check_cooldown(r: &mut Report, inst: &Install, cfg: &InstallConfig, name: &str) {
    let Some(path) = &cfg.cooldown_state else {
        r.note(format!(
            "{name}: {} names no cooldown_state, so restart and redeploy budgets are not enforced",
            cfg.path.display()
        ));
        return;
    };
    if let Err(e) = crate::policy::cooldown::Budgets::load(cfg.policy.as_deref()) {
        r.bad(format!("{name}: {e}"), "fix cooldown.yaml in the policy directory");
    }
    let dir = path.parent().unwrap_or(Path::new("/"));
    let shown = path.display();
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        _ => {
            r.bad(
                format!(
                    "{name}: cooldown state {shown}: the directory {} does not exist, so every restart and redeploy is refused",
                    dir.display()
                ),
                "re-run install.sh with --cooldown-state FILE, which creates it",
            );
            return;
        }
    }
    match crate::cooldown::store::read(path) {
        Ok(state) => r.ok(format!(
            "{name}: cooldown state {shown} reads ({} service(s) with counts)",
            state.services().len()
        )),
        Err(e) => r.bad(
            format!("{name}: cooldown state {shown} {e}, so every restart and redeploy is refused"),
            "fix the file, or move it away (a missing file is an empty state)",
        ),
    }
    let agent = &inst.agent;
    let dmeta = std::fs::metadata(dir).ok();
    let reaches = dir
        .ancestors()
        .all(|d| std::fs::metadata(d).is_ok_and(|m| agent.may(&m, access::Perm::Exec)));
    // Replacing the directory (or one above it), or the file itself when the agent reaches it.
    let agent_writes = access::writable_by(agent, dir).or_else(|| if reaches { access::writable_by(agent, path) } else { None });
    match inst.hardened {
        Some(gid) => {
            let group = access::group_name(gid).unwrap_or_else(|| gid.to_string());
            let gate_can = dmeta.as_ref().is_some_and(|m| m.gid() == gid && m.mode() & 0o030 == 0o030);
            if !gate_can {
                r.bad(
                    format!(
                        "{name}: cooldown state {shown}: the gate's group {group} cannot write {}",
                        dir.display()
                    ),
                    format!(
                        "chgrp {group} {0}; chmod 2770 {0} (install.sh --harden --cooldown-state FILE does this)",
                        dir.display()
                    ),
                );
            } else if let Some(why) = agent_writes {
                r.bad(
                    format!("{name}: cooldown state {shown}: the agent could reset its own budget: {why}"),
                    format!(
                        "keep the state file in a directory of its own, root:{group} 2770, inside directories only root can write (install.sh --harden --cooldown-state FILE)"
                    ),
                );
            } else {
                r.ok(format!("{name}: cooldown state {shown} is written by the gate only"));
            }
        }
        None => {
            let gate_can = dmeta
                .as_ref()
                .is_some_and(|m| agent.may(m, access::Perm::Write) && agent.may(m, access::Perm::Exec));
            if !gate_can {
                r.bad(
                    format!(
                        "{name}: cooldown state {shown}: the gate runs as the agent's user, which cannot write {}, so every allowed restart fails",
                        dir.display()
                    ),
                    "give the agent's user write access to the directory, or run install.sh --harden --cooldown-state FILE",
                );
            }
            r.note(format!(
                "{name}: the cooldown budget is advisory: this install is not hardened, so the gate writes {shown} with the agent's own rights and the agent could write it too; install.sh --harden --cooldown-state FILE makes it the gate's alone"
            ));
        }
    }
}

/// The kernel fence (crate::fence): Landlock and the ABI the tier asks for, the probe the gate
/// opens, and the ruleset for the agent's user (printed as notes).
fn check_fence(r: &mut Report, inst: &Install, cfg: &InstallConfig, name: &str) {
    if cfg.kernel_fence == crate::install::KernelFence::Off {
        r.note(format!(
            "{name}: kernel_fence: off: no Landlock domain holds the agent's writes (nor Claude Code's Write and Edit tools); only the gate's grammars and file modes do"
        ));
        return;
    }
    let home = crate::access::account(&inst.agent.uid.to_string())
        .map(|a| a.home)
        .unwrap_or_else(|_| PathBuf::from("/nonexistent"));
    let rs = match crate::fence::plan(cfg, &home, &crate::fence::repos(cfg), &|p| p.exists()) {
        Ok(Some(rs)) => rs,
        Ok(None) => return,
        Err(e) => {
            r.bad(format!("{name}: {e}"), "fix kernel_fence in the tier's tiershim.yaml");
            return;
        }
    };
    let mut fine = true;
    if let Err(e) = crate::fence::check_kernel(&rs) {
        fine = false;
        r.bad(format!("{name}: {e}"), "see the README's \"The kernel fence\"");
    }
    match std::fs::symlink_metadata(&rs.probe) {
        Ok(m) if m.is_file() && m.mode() & 0o7777 == 0o666 => {}
        _ => {
            fine = false;
            r.bad(
                format!(
                    "{name}: the fence probe {} is missing or not a regular file of mode 0666, so every gated call is refused",
                    rs.probe.display()
                ),
                "re-run install.sh, which makes it",
            );
        }
    }
    if fine {
        r.ok(format!(
            "{name}: kernel fence: Landlock ABI {} or later (this kernel: {}); {} writable paths, {} read-only inside them",
            rs.abi,
            crate::fence::kernel_abi(),
            rs.writable.len(),
            rs.read_only.len()
        ));
    }
    for line in crate::fence::describe(&rs).into_iter().skip(1) {
        r.note(format!("{name}: {line}"));
    }
}

/// The shell `tiershim launch` gives Claude Code (`<prefix>/bin/rbash-tier<N>`): Claude Code takes
/// `CLAUDE_CODE_SHELL` only when the path contains `bash` or `zsh` and the agent's user can
/// execute it, and otherwise silently falls back to an unrestricted bash.
fn check_claude_shell(r: &mut Report, inst: &Install, tier: u8, name: &str) {
    let prefix = inst.binary.parent().and_then(Path::parent).unwrap_or(Path::new("/"));
    let shell = prefix.join("bin").join(format!("rbash-tier{tier}"));
    let shown = shell.display().to_string();
    if !shown.contains("bash") {
        r.bad(
            format!("{name}: the tier's shell {shown} does not contain `bash` in its path, so Claude Code would ignore it and fall back to an unrestricted bash"),
            "re-run install.sh, which writes bin/rbash-tier<N>",
        );
    } else if access::can_execute(&inst.agent, &shell) != Some(true) {
        r.bad(
            format!(
                "{name}: {} cannot execute the tier's shell {shown}, so Claude Code would fall back to an unrestricted bash",
                inst.agent.label
            ),
            "re-run install.sh, which writes it mode 0755 in a directory every user can search",
        );
    } else {
        r.ok(format!(
            "{name}: Claude Code's shell {shown} (CLAUDE_CODE_SHELL) can be run by {}",
            inst.agent.label
        ));
    }
}

fn check_policy(r: &mut Report, dir: Option<&Path>) {
    let shown = dir.map(|d| d.display().to_string()).unwrap_or_else(|| "embedded".into());
    let mut rules = 0;
    let mut examples = 0;
    let mut fine = true;
    for tool in Tool::ALL {
        let loaded = match dir {
            None => Policy::embedded_with_examples(tool),
            // An override without this tool's file falls back to the embedded policy.
            Some(d) if d.join(format!("{}.yaml", tool.name())).exists() => Policy::load(tool, Some(d)),
            Some(_) => Policy::embedded_with_examples(tool),
        };
        match loaded {
            Ok(p) => {
                let failures = check::run_examples(&p);
                rules += p.rules.len();
                examples += p.examples.iter().map(|e| e.allow.len() + e.refuse.len()).sum::<usize>();
                for f in failures {
                    fine = false;
                    r.bad(
                        format!("policy ({shown}) {tool}: {f}"),
                        "fix the rule or its example; tiershim policy check shows them all",
                    );
                }
            }
            Err(e) => {
                fine = false;
                r.bad(
                    format!("policy ({shown}) {tool}: {e}"),
                    "fix the policy file; tiershim policy check DIR shows the details",
                );
            }
        }
    }
    if fine {
        r.ok(format!("policy ({shown}): {rules} rules, {examples} examples hold"));
    }
}
