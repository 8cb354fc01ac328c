//! The files of a tier directory: its config (parsed and trusted as the gate would), its links,
//! its restricted profile, its passthrough tools, and that nothing the gate trusts is writable
//! by the agent's user.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{Area, Install, Report, Tier, same_file};
use crate::access;
use crate::install::{self, InstallConfig};
use crate::tool::Tool;
use crate::vet;

const CONFIG: Area = Area::Part("config");

/// Read the tier's config: it parses, is trusted as the gate trusts it, and its ceiling matches
/// the directory. Returns the tier to check, with the config when it parsed.
pub fn config(r: &mut Report, inst: &Install, dir: &Path, cfg_path: &Path) -> Tier {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let number: Option<u8> = name.strip_prefix("tier").and_then(|n| n.parse().ok());
    r.tier = Some(name.clone());
    let cfg = match InstallConfig::load(cfg_path, true) {
        Ok(c) => Some(c),
        Err(e) => {
            r.bad(
                CONFIG,
                e.to_string(),
                "fix the file (tiershim check shows where), or re-run install.sh",
            );
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
                        CONFIG,
                        format!("{} is not owned by root, so the hardened gate refuses every call", p.display()),
                        format!("chown root {}", p.display()),
                    );
                }
            }
        }
        if let Some(t) = number.filter(|t| *t != cfg.tier) {
            fine = false;
            r.bad(
                CONFIG,
                format!("{} says `tier: {}` in the directory of tier {t}", cfg_path.display(), cfg.tier),
                "re-run install.sh, which writes each tier's ceiling",
            );
        }
        if fine {
            r.ok(CONFIG, format!("{} parses, ceiling {}", cfg_path.display(), cfg.tier));
        }
    }
    r.tier = None;
    Tier {
        name,
        dir: dir.to_path_buf(),
        cfg_path: cfg_path.to_path_buf(),
        number,
        cfg,
    }
}

/// Every gated tool has a link in the directory, and it is this install's binary.
pub fn links(r: &mut Report, inst: &Install, t: &Tier) {
    let mut fine = true;
    for tool in Tool::ALL {
        let link = t.dir.join(tool.name());
        if std::fs::symlink_metadata(&link).is_err() {
            fine = false;
            r.bad(
                Area::Tool(tool),
                format!("no link for {tool} in {}", t.dir.display()),
                "re-run install.sh",
            );
        } else if !same_file(&link, &inst.binary) {
            let target = std::fs::read_link(&link)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "a file".into());
            fine = false;
            r.bad(
                Area::Tool(tool),
                format!("{} -> {target} is not {}", link.display(), inst.binary.display()),
                format!("ln -sfn ../../../bin/tiershim {} (or re-run install.sh)", link.display()),
            );
        }
    }
    if fine {
        let names: Vec<&str> = Tool::ALL.iter().map(|t| t.name()).collect();
        r.ok(
            Area::Part("links"),
            format!("links {} -> {}", names.join(", "), inst.binary.display()),
        );
    }
}

/// The restricted profile is there and names the directory, the tier, and makes them read-only.
pub fn profile(r: &mut Report, _inst: &Install, t: &Tier) {
    const AREA: Area = Area::Part("profile");
    let path = t.dir.join("profile");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            r.bad(AREA, format!("restricted profile {}: {e}", path.display()), "re-run install.sh");
            return;
        }
    };
    let want_path = format!("PATH='{}'", t.dir.display());
    let mut missing = Vec::new();
    if !text.lines().any(|l| l.trim() == want_path) {
        missing.push(want_path);
    }
    if let Some(n) = t.number {
        let want_tier = format!("CLAUDEOPS_TIER={n}");
        if !text.lines().any(|l| l.trim() == want_tier) {
            missing.push(want_tier);
        }
    }
    if !text.lines().any(|l| l.trim().starts_with("readonly PATH CLAUDEOPS_TIER SHELL")) {
        missing.push("readonly PATH CLAUDEOPS_TIER SHELL".into());
    }
    if missing.is_empty() {
        r.ok(AREA, format!("restricted profile {}", path.display()));
    } else {
        r.bad(
            AREA,
            format!("restricted profile {} lacks `{}`", path.display(), missing.join("`, `")),
            "re-run install.sh, which writes it from shims/profile",
        );
    }
}

/// Every other entry of the directory is a vetted passthrough tool.
pub fn passthrough(r: &mut Report, inst: &Install, t: &Tier) {
    const AREA: Area = Area::Part("passthrough");
    let entries = match std::fs::read_dir(&t.dir) {
        Ok(rd) => rd,
        Err(e) => {
            r.bad(AREA, format!("cannot list {}: {e}", t.dir.display()), "re-run install.sh");
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
        for f in vet::vet_program(&entry, &t.dir.join(&entry), &inst.table) {
            fine = false;
            r.bad(
                AREA,
                format!("passthrough {f}"),
                format!("remove {} and its line in shims/passthrough", t.dir.join(&entry).display()),
            );
        }
    }
    if fine {
        r.ok(
            AREA,
            format!("{count} passthrough tools, none of them can run a program or write a file"),
        );
    }
}

/// Nothing the gate trusts (the directory, config, profile, binary, policy, baseline skills,
/// real tools) can be changed by the agent's user.
pub fn not_writable(r: &mut Report, inst: &Install, t: &Tier) {
    const AREA: Area = Area::Part("permissions");
    let mut paths: Vec<PathBuf> = vec![t.dir.clone(), t.cfg_path.clone(), t.dir.join("profile"), inst.binary.clone()];
    if let Some(cfg) = &t.cfg {
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
                AREA,
                format!("{} can be changed by the agent: {why}", p.display()),
                "make it and the directories above it writable by root only (chown root; chmod go-w)",
            );
        }
    }
    if fine {
        r.ok(
            AREA,
            format!(
                "the directory, config, profile, binary, policy, baseline skills and real tools are not writable by {}",
                inst.agent.label
            ),
        );
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
