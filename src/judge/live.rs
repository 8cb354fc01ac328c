//! The fact sources that read the world: [`Live`] for the gate (the cooldown counts under the
//! state file's lock, which it keeps; the remote host asked over the call's own connection; the
//! parent process looked up) and [`Unlocked`] for `explain` (the counts as they are, no remote
//! host). Both read skills from the install's sources and ask the install's real git, with the
//! environment the real tool would run with, so its git reads the configuration the real git
//! reads.
//!
//! Owns: which I/O answers which of a decision's `Needs`. Must not: decide, count, or exec.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::Source;
use crate::cooldown;
use crate::decision::{self, Decision, Facts, Request};
use crate::error::Result;
use crate::exec;
use crate::facts::{self, Git};
use crate::grammar::{self, Claim, Invocation};
use crate::install::InstallConfig;
use crate::policy::Policy;
use crate::skill::Sources;
use crate::tool::Tool;

/// The gate's facts: everything read for real, the cooldown state under its lock.
pub struct Live<'a> {
    pub cfg: &'a InstallConfig,
    /// The caller's environment (the real tool's is made from it).
    pub env: &'a [(OsString, OsString)],
    /// The caller's working directory.
    pub cwd: &'a Path,
    /// The caller's parent process.
    pub ppid: u32,
    /// The time of the call, which budgets are judged at.
    pub now: SystemTime,
    /// The state file's lock, once taken: held from the read the decision is made on until the
    /// count and the audit line are written (the gate takes it).
    pub locked: Option<cooldown::store::Locked>,
}

impl Source for Live<'_> {
    fn parents(&mut self, inv: &Invocation) -> Vec<Tool> {
        parents(self.cfg, inv, self.ppid)
    }

    fn facts(&mut self, inv: &Invocation, policy: &Policy, _req: &Request, first: &Decision) -> Result<Facts> {
        // The environment the real git would get, for the gate's git to read the same config.
        let (real_env, _) = real_env(self.cfg, self.env, policy, first.effective_tier);
        let mut facts = gather(self.cfg, self.cwd, inv, &first.needs, &real_env)?;
        // Read before the cooldown lock is taken: the read waits on the network.
        if first.needs.remote {
            facts.remote = Some(remote_facts(self.cfg, self.env, policy, inv, first.effective_tier));
        }
        (self.locked, facts.cooldown) = cooldown(self.cfg, &first.needs, self.now, true)?;
        Ok(facts)
    }
}

/// `explain`'s facts: what the gate would read, except the remote host (explain connects to
/// none) and the cooldown lock (explain records nothing).
pub struct Unlocked<'a> {
    pub cfg: &'a InstallConfig,
    pub env: &'a [(OsString, OsString)],
    pub cwd: &'a Path,
    pub now: SystemTime,
}

impl Source for Unlocked<'_> {
    fn facts(&mut self, inv: &Invocation, policy: &Policy, _req: &Request, first: &Decision) -> Result<Facts> {
        let (real_env, _) = real_env(self.cfg, self.env, policy, first.effective_tier);
        let mut facts = gather(self.cfg, self.cwd, inv, &first.needs, &real_env)?;
        // explain connects to no remote host: what the gate would read there is unknown here.
        if first.needs.remote {
            facts.remote = Some(Err(
                "tiershim explain does not connect to remote hosts (the gate reads them over ssh when it runs the call)".into(),
            ));
        }
        // The cooldown counts as they are now (no lock: explain records nothing).
        (_, facts.cooldown) = cooldown(self.cfg, &first.needs, self.now, false)?;
        Ok(facts)
    }
}

/// The real git as the gate runs it for facts: with the install's tool home as HOME, so it
/// reads the same global config as the real git of the agent's calls.
fn gate_git(cfg: &InstallConfig) -> Option<Git> {
    let home: Vec<(OsString, OsString)> = cfg
        .tool_home()
        .ok()
        .map(exec::home_vars)
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k.into(), v.into_os_string()))
        .collect();
    exec::resolve_real(cfg, Tool::Git).ok().map(|bin| Git::new(bin, &home))
}

/// The environment the real tool of this call would run with (`exec::child_env` with the
/// install's pins and tool home), for the gate's own git to read the configuration the real
/// git reads. Without a trusted tool home the real tool does not run at all; the gate's git
/// then reads no global configuration.
pub fn real_env(
    cfg: &InstallConfig,
    caller: &[(OsString, OsString)],
    policy: &Policy,
    tier: u8,
) -> (Vec<(OsString, OsString)>, Vec<crate::audit::EnvReset>) {
    let pins = cfg.pins().unwrap_or_default();
    exec::child_env(caller, policy, &pins, cfg.tool_home().ok(), tier)
}

/// A `gh api` call with its placeholders filled, once for every repository gh could pick: the
/// actions of all of them, so the strictest decides. A fill that fails, or a filled call the
/// grammar cannot read, is the call's problem.
pub(super) fn gh_filled(
    cfg: &InstallConfig,
    args: &[String],
    contents: &grammar::Contents,
    cwd: &Path,
    first: Invocation,
    fill_with: crate::spec::Fill,
) -> Invocation {
    let git = gate_git(cfg);
    let pinned = cfg.env.get("GH_REPO").map(String::as_str);
    let mut out: Option<Invocation> = None;
    for fill in facts::gh_fills(git.as_ref(), cwd, pinned) {
        let inv = fill_with(args, contents, Some(&fill));
        if inv.problem.is_some() {
            return inv;
        }
        match &mut out {
            None => out = Some(inv),
            Some(o) => {
                for a in inv.actions {
                    if !o.actions.contains(&a) {
                        o.actions.push(a);
                    }
                }
            }
        }
    }
    out.unwrap_or(first)
}

/// Gather the facts a first decision asked for: skills from the install's sources (a
/// repository's from its remote's default branch), changed files, probe answers and the
/// configuration with the install's real git. `env` is the environment the real tool would
/// run with (`exec::child_env`), so the gate's git reads the configuration the real git reads.
pub fn gather(cfg: &InstallConfig, cwd: &Path, inv: &Invocation, needs: &decision::Needs, env: &[(OsString, OsString)]) -> Result<Facts> {
    let sources = Sources::from_config(cfg.skills.as_ref());
    let git = exec::resolve_real(cfg, Tool::Git).ok().map(|bin| Git::new(bin, env));
    facts::gather(&sources, git.as_ref(), cwd, inv, needs)
}

/// The state file's lock (when taken) and the cooldown facts for `decide()`.
pub type CooldownFacts = (
    Option<cooldown::store::Locked>,
    Option<std::result::Result<cooldown::Facts, String>>,
);

/// The cooldown facts a decision asked for: the budgets (the install's policy) and the state
/// file's counts. With `lock`, the state file's lock is taken (within `cooldown_lock_wait`) and
/// returned, to be held until the count is recorded; without, the file is read as it is
/// (`explain`). A state file that cannot be used is a fact (the decision refuses), not an error.
fn cooldown(cfg: &InstallConfig, needs: &decision::Needs, now: SystemTime, lock: bool) -> Result<CooldownFacts> {
    let (true, Some(path)) = (needs.cooldown, &cfg.cooldown_state) else {
        return Ok((None, None));
    };
    let budgets = std::sync::Arc::new(crate::policy::cooldown::Budgets::load(cfg.policy.as_deref())?);
    let (locked, state) = if lock {
        match cooldown::store::lock(path, cfg.cooldown_lock_wait) {
            Ok(l) => {
                let s = l.state.clone();
                (Some(l), Ok(s))
            }
            Err(e) => (None, Err(e)),
        }
    } else {
        (None, cooldown::store::read(path))
    };
    let file = path.display().to_string();
    let facts = state
        .map(|s| cooldown::Facts {
            budgets,
            state: std::sync::Arc::new(s),
            file: file.clone(),
            now,
        })
        .map_err(|e| format!("{file} {e}"));
    Ok((locked, Some(facts)))
}

/// What a decision asked to read on the remote host of an ssh call: a gate-built read-only
/// command over the call's own connection (the call's own options, `inv.args`), with the environment the real ssh gets for the call
/// (`crate::remote_facts`). Failing to read is a fact (the decision refuses below tier 3).
fn remote_facts(
    cfg: &InstallConfig,
    caller: &[(OsString, OsString)],
    policy: &Policy,
    inv: &Invocation,
    tier: u8,
) -> std::result::Result<decision::RemoteFacts, String> {
    let Some(remote) = inv.remote.as_deref() else {
        return Err("the call has no remote command".into());
    };
    let real = exec::resolve_real(cfg, Tool::Ssh).map_err(|e| e.to_string())?;
    let home = cfg.tool_home().map_err(|e| e.to_string())?;
    let pins = cfg.pins().map_err(|e| e.to_string())?;
    let (env, _) = exec::child_env(caller, policy, &pins, Some(home), tier);
    let conn = crate::remote_facts::Connection::of(real, &inv.args, remote, env);
    crate::remote_facts::facts(&conn, remote, &cfg.remote)
}

/// Which of the real tools named by the call's [`Claim::Parent`] claims the parent process is:
/// the same file (device and inode) as that tool's real binary in this install. Looked up only
/// for calls that make such a claim (git's nested `git-receive-pack`, ssh's own `-J` hop).
fn parents(cfg: &InstallConfig, inv: &Invocation, ppid: u32) -> Vec<Tool> {
    use std::os::unix::fs::MetadataExt;
    let parts = inv.remote.iter().flat_map(|r| r.parts.iter().map(|p| &p.inv));
    let wanted: Vec<Tool> = std::iter::once(inv)
        .chain(parts)
        .flat_map(|i| i.claims.iter())
        .filter_map(|c| match c {
            Claim::Parent { tool, .. } => Some(*tool),
            _ => None,
        })
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let Ok(parent) = std::fs::metadata(PathBuf::from(format!("/proc/{ppid}/exe"))) else {
        return Vec::new();
    };
    wanted
        .into_iter()
        .filter(|t| {
            exec::resolve_real(cfg, *t)
                .ok()
                .and_then(|p| std::fs::metadata(p).ok())
                .is_some_and(|m| m.dev() == parent.dev() && m.ino() == parent.ino())
        })
        .collect()
}
