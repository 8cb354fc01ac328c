//! The kernel fence of a tier (crate::fence) and the shell `tiershim launch` gives Claude Code:
//! Landlock with the ABI the tier asks for, the probe the gate opens, the ruleset for the agent's
//! user (as notes), and that `bin/rbash-tier<N>` is a path Claude Code takes as
//! `CLAUDE_CODE_SHELL`.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{Area, Install, Report, Tier};
use crate::access;
use crate::install::KernelFence;

const FENCE: Area = Area::Part("kernel fence");
const SHELL: Area = Area::Part("claude shell");

/// Landlock and the ABI the tier asks for, the probe, and the ruleset (notes).
pub fn kernel_fence(r: &mut Report, inst: &Install, t: &Tier) {
    let Some(cfg) = &t.cfg else { return };
    if cfg.kernel_fence == KernelFence::Off {
        r.note(
            FENCE,
            "kernel_fence: off: no Landlock domain holds the agent's writes (nor Claude Code's Write and Edit tools); only the gate's grammars and file modes do",
        );
        return;
    }
    let home = access::account(&inst.agent.uid.to_string())
        .map(|a| a.home)
        .unwrap_or_else(|_| PathBuf::from("/nonexistent"));
    let rs = match crate::fence::plan(cfg, &home, &crate::fence::repos(cfg), &|p| p.exists()) {
        Ok(Some(rs)) => rs,
        Ok(None) => return,
        Err(e) => {
            r.bad(FENCE, e.to_string(), "fix kernel_fence in the tier's tiershim.yaml");
            return;
        }
    };
    let mut fine = true;
    if let Err(e) = crate::fence::check_kernel(&rs) {
        fine = false;
        r.bad(FENCE, e.to_string(), "see docs/hardening.md, \"The kernel fence\"");
    }
    let lib = crate::fence::lib_dir(cfg);
    for probe in (1..=3).map(|n| crate::fence::probe(&lib, n)) {
        match std::fs::symlink_metadata(&probe) {
            Ok(m) if m.is_file() && m.mode() & 0o7777 == 0o666 => {}
            _ => {
                fine = false;
                r.bad(
                    FENCE,
                    format!(
                        "the fence probe {} is missing or not a regular file of mode 0666, so every gated call is refused",
                        probe.display()
                    ),
                    "re-run install.sh, which makes it",
                );
            }
        }
    }
    if fine {
        r.ok(
            FENCE,
            format!(
                "Landlock ABI {} or later (this kernel: {}, domains made with the rights of ABI {}); {} writable paths, {} read-only inside them",
                rs.abi,
                crate::fence::kernel_abi(),
                crate::fence::applied_abi(crate::fence::kernel_abi()),
                rs.writable.len(),
                rs.read_only.len()
            ),
        );
    }
    for line in crate::fence::describe(&rs).into_iter().skip(1) {
        r.note(FENCE, line);
    }
}

/// Claude Code takes `CLAUDE_CODE_SHELL` only when its path contains `bash` or `zsh` and the
/// agent's user can execute it; otherwise it silently falls back to an unrestricted bash.
pub fn claude_shell(r: &mut Report, inst: &Install, t: &Tier) {
    let Some(n) = t.number else { return };
    let prefix = inst.binary.parent().and_then(Path::parent).unwrap_or(Path::new("/"));
    let shell = prefix.join("bin").join(format!("rbash-tier{n}"));
    let shown = shell.display().to_string();
    if !shown.contains("bash") {
        r.bad(
            SHELL,
            format!(
                "the tier's shell {shown} has no `bash` in its path, so Claude Code would ignore it and fall back to an unrestricted bash"
            ),
            "re-run install.sh, which writes bin/rbash-tier<N>",
        );
    } else if access::can_execute(&inst.agent, &shell) != Some(true) {
        r.bad(
            SHELL,
            format!(
                "{} cannot execute the tier's shell {shown}, so Claude Code would fall back to an unrestricted bash",
                inst.agent.label
            ),
            "re-run install.sh, which writes it mode 0755 in a directory every user can search",
        );
    } else {
        r.ok(SHELL, format!("{shown} (CLAUDE_CODE_SHELL) can be run by {}", inst.agent.label));
    }
}
