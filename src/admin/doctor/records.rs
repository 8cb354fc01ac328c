//! What the gate writes: the audit log (appended by the gate, and hardened by nothing else) and
//! the cooldown state (read, and written by the gate only).

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use super::{Area, Install, Report, Tier, agent_may_write_dir};
use crate::access;

/// The audit log: a file the gate can append to, which (hardened) nothing else can change; each
/// fault named as what it is (a directory, a missing directory, a mode).
pub fn audit_log(r: &mut Report, inst: &Install, t: &Tier) {
    const AREA: Area = Area::Part("audit log");
    let Some(cfg) = &t.cfg else { return };
    let Some(log) = &cfg.audit_log else {
        r.bad(
            AREA,
            format!("{} names no audit_log, so decisions are not recorded", cfg.path.display()),
            "re-run install.sh with --audit-log FILE (make install names one), or add `audit_log: FILE` to it",
        );
        return;
    };
    let shown = log.display();
    let cfg_shown = cfg.path.display();
    let agent = &inst.agent;
    let meta = match std::fs::metadata(log) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = log.parent().unwrap_or(Path::new("/"));
            if !parent.is_dir() {
                r.bad(
                    AREA,
                    format!(
                        "audit log {shown}: its directory {} does not exist, so every call is refused",
                        parent.display()
                    ),
                    format!(
                        "create {}, or point `audit_log:` in {cfg_shown} at a file in a directory that exists",
                        parent.display()
                    ),
                );
            } else if inst.hardened.is_none() && agent_may_write_dir(agent, parent) {
                r.ok(AREA, format!("audit log {shown} will be created on the first call"));
            } else {
                r.bad(
                    AREA,
                    format!(
                        "audit log {shown} does not exist and the gate cannot create it in {}, so every call is refused",
                        parent.display()
                    ),
                    "re-run install.sh, which creates it",
                );
            }
            return;
        }
        Err(e) => {
            r.bad(
                AREA,
                format!("audit log {shown}: {e}, so every call is refused"),
                format!("make it a file the gate can reach, or change `audit_log:` in {cfg_shown}"),
            );
            return;
        }
    };
    if meta.is_dir() {
        r.bad(
            AREA,
            format!("audit log {shown} is a directory, not a file, so every call is refused"),
            format!("point `audit_log:` in {cfg_shown} at a file ({}/audit.jsonl)", shown),
        );
        return;
    }
    if !meta.file_type().is_file() {
        let kind = if meta.file_type().is_fifo() {
            "a FIFO"
        } else if meta.file_type().is_char_device() || meta.file_type().is_block_device() {
            "a device"
        } else {
            "not a regular file"
        };
        r.bad(
            AREA,
            format!("audit log {shown} is {kind}, which keeps no record"),
            format!("point `audit_log:` in {cfg_shown} at a regular file"),
        );
        return;
    }
    match inst.hardened {
        Some(gid) => {
            let gate_can = meta.gid() == gid && meta.mode() & 0o020 != 0;
            if !gate_can {
                r.bad(
                    AREA,
                    format!("audit log {shown} is not writable by the gate's group, so every call is refused"),
                    format!(
                        "chgrp {} {shown}; chmod 0660 {shown}",
                        access::group_name(gid).unwrap_or_else(|| gid.to_string()),
                    ),
                );
            } else if let Some(why) = access::writable_by(agent, log) {
                r.bad(
                    AREA,
                    format!("audit log {shown}: the agent could rewrite its own record: {why}"),
                    format!("chown root {shown}; chmod 0660 {shown}, in a directory only root can write"),
                );
            } else {
                r.ok(AREA, format!("audit log {shown} is appended by the gate only"));
            }
        }
        None => {
            if agent.may(&meta, access::Perm::Write) {
                r.ok(AREA, format!("audit log {shown} is writable"));
            } else {
                r.bad(
                    AREA,
                    format!("audit log {shown} is not writable by {}, so every call is refused", agent.label),
                    format!("give the agent's user write access to {shown}, or run install.sh --harden"),
                );
            }
        }
    }
}

/// The cooldown state file: the budgets load, the file reads (a file the gate cannot use
/// refuses every restart and redeploy), the gate can write it, and who else can. Without
/// `--harden` the gate writes it with the agent's own rights, so the budget is advisory.
pub fn cooldown(r: &mut Report, inst: &Install, t: &Tier) {
    const AREA: Area = Area::Part("cooldown");
    let Some(cfg) = &t.cfg else { return };
    let Some(path) = &cfg.cooldown_state else {
        r.note(
            AREA,
            format!(
                "{} names no cooldown_state, so restart and redeploy budgets are not enforced",
                cfg.path.display()
            ),
        );
        return;
    };
    if let Err(e) = crate::policy::cooldown::Budgets::load(cfg.policy.as_deref()) {
        r.bad(AREA, e.to_string(), "fix cooldown.yaml in the policy directory");
    }
    let dir = path.parent().unwrap_or(Path::new("/"));
    let shown = path.display();
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        _ => {
            r.bad(
                AREA,
                format!(
                    "cooldown state {shown}: the directory {} does not exist, so every restart and redeploy is refused",
                    dir.display()
                ),
                "re-run install.sh with --cooldown-state FILE, which creates it",
            );
            return;
        }
    }
    match crate::cooldown::store::read(path) {
        Ok(state) => r.ok(
            AREA,
            format!("cooldown state {shown} reads ({} service(s) with counts)", state.services().len()),
        ),
        Err(e) => r.bad(
            AREA,
            format!("cooldown state {shown} {e}, so every restart and redeploy is refused"),
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
                    AREA,
                    format!("cooldown state {shown}: the gate's group {group} cannot write {}", dir.display()),
                    format!(
                        "chgrp {group} {0}; chmod 2770 {0} (install.sh --harden --cooldown-state FILE does this)",
                        dir.display()
                    ),
                );
            } else if let Some(why) = agent_writes {
                r.bad(
                    AREA,
                    format!("cooldown state {shown}: the agent could reset its own budget: {why}"),
                    format!(
                        "keep the state file in a directory of its own, root:{group} 2770, inside directories only root can write (install.sh --harden --cooldown-state FILE)"
                    ),
                );
            } else {
                r.ok(AREA, format!("cooldown state {shown} is written by the gate only"));
            }
        }
        None => {
            if !agent_may_write_dir(agent, dir) {
                r.bad(
                    AREA,
                    format!(
                        "cooldown state {shown}: the gate runs as the agent's user, which cannot write {}, so every allowed restart fails",
                        dir.display()
                    ),
                    "give the agent's user write access to the directory, or run install.sh --harden --cooldown-state FILE",
                );
            }
            r.note(
                AREA,
                format!(
                    "the cooldown budget is advisory: this install is not hardened, so the gate writes {shown} with the agent's own rights and the agent could write it too; install.sh --harden --cooldown-state FILE makes it the gate's alone"
                ),
            );
        }
    }
}
