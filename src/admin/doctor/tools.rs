//! The binary, rbash, and each gated tool's real binary: it exists, is not tiershim, and the
//! agent's user cannot run it (or a copy of it on the system PATH) without the gate.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{Area, Install, Report, Tier, same_file};
use crate::access::{self, Principal};
use crate::tool::Tool;

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

/// The binary exists; when it is setgid (hardened), root owns it and the agent is not in its
/// group. Returns the setgid group.
pub fn binary(r: &mut Report, binary: &Path, agent: &Principal) -> Option<u32> {
    const AREA: Area = Area::Part("binary");
    let meta = match std::fs::metadata(binary) {
        Ok(m) => m,
        Err(e) => {
            r.bad(AREA, format!("binary {}: {e}", binary.display()), "run install.sh");
            return None;
        }
    };
    if meta.mode() & 0o2000 == 0 {
        r.ok(
            AREA,
            format!(
                "binary {} (not hardened: the real tools are protected by file modes only if you made them so)",
                binary.display()
            ),
        );
        return None;
    }
    let gid = meta.gid();
    let group = access::group_name(gid).unwrap_or_else(|| gid.to_string());
    let mut fine = true;
    if meta.uid() != 0 {
        fine = false;
        r.bad(
            AREA,
            format!("binary {} is setgid but owned by uid {}", binary.display(), meta.uid()),
            format!("chown root {}", binary.display()),
        );
    }
    if agent.gids.contains(&gid) {
        fine = false;
        r.bad(
            AREA,
            format!("{} is in group {group}, so it reaches the real tools without the gate", agent.label),
            format!("remove the agent's user from group {group} (gpasswd -d USER {group})"),
        );
    }
    if fine {
        r.ok(
            AREA,
            format!("binary {} is setgid {group}, owned by root (hardened)", binary.display()),
        );
    }
    Some(gid)
}

pub fn rbash(r: &mut Report) {
    const AREA: Area = Area::Part("rbash");
    match ["/usr/bin/rbash", "/bin/rbash"].into_iter().find(|p| Path::new(p).is_file()) {
        Some(p) => r.ok(AREA, format!("rbash: {p}")),
        None => r.bad(
            AREA,
            "rbash is not installed, so `tiershim shell` cannot start",
            "install bash (it provides /usr/bin/rbash)",
        ),
    }
}

/// A tool that is not installed: not named in `real` and in no `real_dirs` entry (install.sh
/// writes `# <tool>: not found when installed`). Not a fault: the gate answers a call with "No
/// suitable tool found" (exit 127). A `real.<tool>` that is missing is one.
pub fn not_installed(cfg: &crate::install::InstallConfig, tool: Tool) -> bool {
    !cfg.real.contains_key(&tool) && matches!(crate::exec::resolve_real(cfg, tool), Err(crate::error::Error::RealMissing { .. }))
}

/// Each tool's real binary: found, not tiershim, out of the agent's reach; and no copy of it on
/// the system PATH the agent could run instead. Hardened, also closed to the agent's reading
/// ([`environment_closed`]).
pub fn real(r: &mut Report, inst: &Install, t: &Tier) {
    let Some(cfg) = &t.cfg else { return };
    let mut seen_helpers = BTreeSet::new();
    let mut seen_copies = BTreeSet::new();
    for tool in Tool::ALL {
        let area = Area::Tool(tool);
        let real = match crate::exec::resolve_real(cfg, tool) {
            Ok(p) => p,
            // Not installed: the gate answers it as DESIGN §4 says.
            Err(_) if not_installed(cfg, tool) => {
                r.note(
                    area,
                    format!(
                        "{tool} is not installed, so the gate answers `{tool}` with \"No suitable tool found\" (exit 127); \
                         install it and run install.sh again to use it"
                    ),
                );
                continue;
            }
            Err(e) => {
                r.bad(
                    area,
                    format!("real {tool}: {e}"),
                    format!("install {tool}, or point `real.{tool}` in {} at it", cfg.path.display()),
                );
                continue;
            }
        };
        if same_file(&real, &inst.binary) {
            r.bad(
                area,
                format!("real {tool} {} is tiershim itself", real.display()),
                format!("point `real.{tool}` in {} at the real binary", cfg.path.display()),
            );
            continue;
        }
        let mut fine = true;
        if access::can_execute(&inst.agent, &real) == Some(true) {
            fine = false;
            r.bad(
                area,
                format!("real {tool} {} can be run by {} without the gate", real.display(), inst.agent.label),
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
                    area,
                    format!(
                        "{tool} is also at {} ({}), which {} can run without the gate",
                        copy.display(),
                        target.display(),
                        inst.agent.label
                    ),
                    format!("chmod o-rwx {} (install.sh --harden does this), or remove it", target.display()),
                );
            }
        }
        let closed = match inst.hardened {
            Some(gid) => environment_closed(r, area, &real, &inst.agent, gid),
            None => false,
        };
        if fine {
            r.ok(
                area,
                format!(
                    "real {tool} {} exists, is not tiershim, and {} cannot run it without the gate{}",
                    real.display(),
                    inst.agent.label,
                    if closed {
                        " nor read it (so its environment and memory are closed to the agent while it runs)"
                    } else {
                        ""
                    }
                ),
            );
        }
        if tool == Tool::Git
            && let (Some(gid), Some(dir)) = (inst.hardened, cfg.env.get("GIT_EXEC_PATH"))
        {
            git_exec_path(r, area, Path::new(dir), &inst.agent, gid);
        }
        for (name, helper) in HELPERS {
            if *name == tool.name() && Path::new(helper).is_dir() && seen_helpers.insert(*helper) {
                r.note(
                    area,
                    format!(
                        "{tool} runs its helpers from {helper} as the caller, so file modes cannot close them; only the restricted shell keeps the agent from naming them"
                    ),
                );
            }
        }
    }
}

/// Hardened: is the real tool's environment closed to the agent while it runs? The kernel makes
/// a process non-dumpable when its user cannot read the program it executes (`would_dump` in
/// fs/exec.c), and a non-dumpable process's `/proc/<pid>/environ`, `mem` and `fd` are closed to
/// the user's other processes (`ptrace_may_access`). A binary the agent can read runs dumpable,
/// so the pinned secrets in its environment can be read from `/proc` while it runs: a failure
/// (`install.sh --harden` installs binaries 0751 root:<group>). A script must stay readable (its
/// interpreter opens it again as the caller): a note. True when the file is closed.
fn environment_closed(r: &mut Report, area: Area, real: &Path, agent: &Principal, gid: u32) -> bool {
    let Ok(meta) = std::fs::metadata(real) else {
        return false;
    };
    if !agent.may(&meta, access::Perm::Read) {
        return true;
    }
    if access::is_script(real) {
        r.note(
            area,
            format!(
                "{} is a script, which its interpreter opens again as the caller, so {} can read it, and while it runs the agent's other processes can read its environment (the pinned secrets it gets) from /proc",
                real.display(),
                agent.label
            ),
        );
    } else {
        let group = access::group_name(gid).unwrap_or_else(|| gid.to_string());
        r.bad(
            area,
            format!(
                "{} can be read by {}, so while it runs the agent's other processes can read its environment (the pinned secrets it gets) and memory from /proc",
                real.display(),
                agent.label
            ),
            format!(
                "chown root:{group} {0} && chmod 0751 {0} (install.sh --harden does this)",
                real.display()
            ),
        );
    }
    false
}

/// Hardened, with `GIT_EXEC_PATH` pinned (`install.sh --harden` pins its copy of the real git's
/// exec path): the helpers git runs from there get git's environment, and `git-remote-http`
/// holds every HTTP remote's credential, so each binary there must be closed to the agent as a
/// real tool is ([`environment_closed`]).
fn git_exec_path(r: &mut Report, area: Area, dir: &Path, agent: &Principal, gid: u32) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        r.bad(
            area,
            format!(
                "GIT_EXEC_PATH {} (pinned) cannot be read, so git finds none of its helpers",
                dir.display()
            ),
            "re-run install.sh --harden (it copies the real git's exec path there), or pin another",
        );
        return;
    };
    let mut closed = true;
    let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    for f in files {
        // Scripts (git's `git-sh-setup`, `git-filter-branch`, …) must stay readable.
        if std::fs::symlink_metadata(&f).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0) && !access::is_script(&f) {
            closed &= environment_closed(r, area, &f, agent, gid);
        }
    }
    if closed {
        r.ok(
            area,
            format!(
                "git runs its helpers from {} (GIT_EXEC_PATH), whose binaries {} cannot read (closed while they run, as git is)",
                dir.display(),
                agent.label
            ),
        );
    }
}
