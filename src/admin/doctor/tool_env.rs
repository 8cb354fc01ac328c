//! What the real tools run with (DESIGN §3.2): the tool home (their HOME, the operator's), the
//! secrets file (pinned credentials only the gate reads), the pins in `env:` (each reaching a
//! tool), the workspaces (where tier-2 calls may write), and the gh and docker configuration
//! the agent could have written. Each is its own check, under its own part of the summary.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{Area, Install, Report, Tier};
use crate::access::{self, Perm};
use crate::policy::Policy;
use crate::tool::Tool;

const HOME: Area = Area::Part("tool home");
const SECRETS: Area = Area::Part("secrets");
const PINS: Area = Area::Part("pins");
const WORKSPACES: Area = Area::Part("workspaces");

/// The most entries of the tool home looked at for what the agent could write.
const MAX_WALK: usize = 5000;

/// Files in the tool home that hold credentials: the agent can read what the real tools read.
const CREDENTIAL_FILES: &[&str] = &[
    ".git-credentials",
    ".netrc",
    ".pgpass",
    ".my.cnf",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".config/tea/config.yml",
];

/// The tool home: named, a directory, trusted as the gate trusts it, nothing in it writable by
/// the agent's user, and no credential file in it (notes).
pub fn tool_home(r: &mut Report, inst: &Install, t: &Tier) {
    let Some(cfg) = &t.cfg else { return };
    let Some(home) = cfg.tool_home.as_deref() else {
        r.bad(
            HOME,
            format!(
                "{} names no tool_home, so the gate runs no real tool (they would read the agent's ~/.gitconfig, ~/.docker/, ~/.config/gh/)",
                t.cfg_path.display()
            ),
            "re-run install.sh (it always writes tool_home), or add `tool_home:` naming an operator-owned directory",
        );
        return;
    };
    if let Err(e) = cfg.tool_home() {
        r.bad(
            HOME,
            e.to_string(),
            format!("chown root {0} and chmod go-w {0}, or re-run install.sh --harden", home.display()),
        );
        return;
    }
    if !r.first_time(format!("tool home {}", home.display())) {
        return;
    }
    r.shared(|r| {
        let mut writable = Vec::new();
        let mut seen = 0;
        walk(home, 0, &mut |p| {
            seen += 1;
            if seen > MAX_WALK {
                return false;
            }
            if let Some(why) = access::writable_by(&inst.agent, p) {
                writable.push(why);
            }
            true
        });
        match writable.first() {
            Some(why) => r.bad(
                HOME,
                format!("the tool home {}: {why} (the real tools read it as their HOME)", home.display()),
                format!("chown -R root {0}; chmod -R go-w {0} (install.sh --harden does)", home.display()),
            ),
            None => r.ok(
                HOME,
                format!(
                    "the tool home {} is the real tools' HOME, and nothing in it is writable by {}",
                    home.display(),
                    inst.agent.label
                ),
            ),
        }
        for f in CREDENTIAL_FILES {
            let p = home.join(f);
            if p.is_file() {
                r.note(
                    HOME,
                    format!(
                        "{} is in the tool home: the real tools run as the agent's user, so the agent can read it; pin credentials as secrets (install.sh --secret) instead",
                        p.display()
                    ),
                );
            }
        }
    });
}

/// Depth-first over `dir` (at most 8 levels), calling `f` on every entry until it says stop;
/// symlinks are not followed.
fn walk(dir: &Path, depth: usize, f: &mut dyn FnMut(&Path) -> bool) -> bool {
    if !f(dir) {
        return false;
    }
    if depth >= 8 || std::fs::symlink_metadata(dir).map_or(true, |m| !m.is_dir()) {
        return true;
    }
    let Ok(rd) = std::fs::read_dir(dir) else { return true };
    for e in rd.flatten() {
        if !walk(&e.path(), depth + 1, f) {
            return false;
        }
    }
    true
}

/// The secrets file: the gate reads it as it would, and the agent's user cannot read it.
pub fn secrets(r: &mut Report, inst: &Install, t: &Tier) {
    let Some(cfg) = &t.cfg else { return };
    let Some(path) = &cfg.secrets else {
        r.ok(SECRETS, "no secrets file: no credential is pinned");
        return;
    };
    if !r.first_time(format!("secrets {}", path.display())) {
        return;
    }
    r.shared(|r| {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) => {
                r.bad(
                    SECRETS,
                    format!("the secrets file {}: {e}", path.display()),
                    "re-run install.sh with --secret NAME=VALUE, or remove `secrets:`",
                );
                return;
            }
        };
        let mode = meta.mode() & 0o7777;
        let mut fine = true;
        if inst.agent.may(&meta, Perm::Read) && !inst.agent.is_root() {
            fine = false;
            r.bad(
                SECRETS,
                format!("{} can read the secrets file {} (mode {mode:o})", inst.agent.label, path.display()),
                "chmod 0640 it, owned by root and the gate's group (install.sh --harden does)",
            );
        }
        if let Some(gid) = inst.hardened
            && (meta.uid() != 0 || meta.gid() != gid || mode & 0o137 != 0)
        {
            fine = false;
            r.bad(
                SECRETS,
                format!(
                    "the secrets file {} is {mode:o} {}:{}, not 0640 root and the gate's group, so the hardened gate refuses every call that would use it",
                    path.display(),
                    meta.uid(),
                    meta.gid()
                ),
                format!("chown root:<group> {0}; chmod 0640 {0}", path.display()),
            );
        }
        if inst.hardened.is_none() && mode & 0o077 != 0 {
            fine = false;
            r.bad(
                SECRETS,
                format!("the secrets file {} is mode {mode:o}; the gate refuses it unless only its owner can read it", path.display()),
                format!("chmod 0600 {}", path.display()),
            );
        }
        if fine {
            r.ok(
                SECRETS,
                format!(
                    "the secrets file {} ({mode:o}) is read by the gate only{}",
                    path.display(),
                    if inst.hardened.is_some() { "" } else { " (not hardened: the gate runs as the agent's user)" }
                ),
            );
        }
    });
}

/// Every pin in `env:` reaches a tool (a pin no policy names is dropped before exec).
pub fn pins(r: &mut Report, _inst: &Install, t: &Tier) {
    let Some(cfg) = &t.cfg else { return };
    let policies: Vec<Policy> = Tool::ALL
        .iter()
        .filter_map(|tool| crate::judge::policy_in(*tool, cfg.policy.as_deref()).ok())
        .collect();
    let mut fine = true;
    for var in cfg.env.keys() {
        let takers: Vec<&str> = policies.iter().filter(|p| p.takes_pin(var)).map(|p| p.tool.name()).collect();
        if takers.is_empty() {
            fine = false;
            r.bad(
                PINS,
                format!("the pin {var} reaches no tool: no policy's env.pass or env.pinned names it, so it is dropped"),
                "remove it, or name it in the tool's policy (an override policy directory)",
            );
        }
    }
    if fine {
        r.ok(
            PINS,
            format!("{} pinned variables, each reaching the tools whose policy names it", cfg.env.len()),
        );
    }
}

/// The workspaces: where tier-2 calls may write. They exist, and none is the install's.
pub fn workspaces(r: &mut Report, _inst: &Install, t: &Tier) {
    let Some(cfg) = &t.cfg else { return };
    if cfg.workspaces.is_empty() {
        r.note(
            WORKSPACES,
            "no workspaces (`workspaces:` or `skills.repos`): a call that writes a local file needs tier 3",
        );
        return;
    }
    let fence = crate::files::Fence::of(cfg);
    let mut fine = true;
    for w in &cfg.workspaces {
        if !w.is_dir() {
            fine = false;
            r.bad(
                WORKSPACES,
                format!("the workspace {} is not a directory", w.display()),
                "create it or fix `workspaces:`",
            );
        }
        if let Some((p, what)) = fence.protected.iter().find(|(p, _)| w.starts_with(p) || p.starts_with(w)) {
            fine = false;
            r.bad(
                WORKSPACES,
                format!("the workspace {} overlaps {what} ({})", w.display(), p.display()),
                "name the directory that holds the work trees only",
            );
        }
    }
    if fine {
        let names: Vec<String> = cfg.workspaces.iter().map(|w| w.display().to_string()).collect();
        r.ok(WORKSPACES, format!("tier 2 writes only below {}", names.join(", ")));
    }
}

/// The per-user configuration of the tools that read one (gh's, docker's), as the gate looks at
/// it before each call: what of it the
/// agent could have written that runs a program or redirects a call.
pub fn tool_configs(r: &mut Report, inst: &Install, t: &Tier) {
    let Some(cfg) = &t.cfg else { return };
    let Some(home) = cfg.tool_home.as_deref() else { return };
    let hardened = inst.hardened.is_some();
    for tool in Tool::ALL {
        let Some(user) = &tool.spec().user_config else { continue };
        if super::tools::not_installed(cfg, tool) {
            continue;
        }
        let found = user.agent_written(home, &cfg.env, hardened);
        if found.is_empty() {
            r.ok(Area::Tool(tool), format!("{tool} reads no configuration the agent can change"));
        }
        for f in found {
            r.bad(
                Area::Tool(tool),
                format!("{f}: the agent could have written it, so the gate refuses every {tool} call"),
                "make the file and its directory writable by their owner only (root's when hardened), or remove the key",
            );
        }
    }
}
