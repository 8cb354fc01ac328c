//! The kernel fence (DESIGN §3.2): the Landlock domain every tier's agent runs in, so that what
//! the gate's grammars miss, and what never passes through the gate (Claude Code's Write and
//! Edit tools), still cannot write outside the tier's writable paths.
//!
//! Owns: deriving a tier's ruleset from `tiershim.yaml` ([`plan`]: pure, given the repositories
//! found by [`repos`]), making the domain ([`restrict`]), the read-only bind mounts inside
//! writable work trees ([`bind_read_only`], in a private mount namespace, as root), and the
//! gate's check that it runs inside a domain ([`fenced`]).
//!
//! Reads stay as they are: the ruleset handles write rights only (writing, truncating,
//! creating, removing, renaming, linking, device ioctls), never reading or executing, and not
//! the network. What each tier may write:
//!
//! - every tier: the agent's own state (`~/.claude`, where `tiershim launch` also puts Claude
//!   Code's config file and temporary directory), `/dev/null`, the terminal, and what the gate
//!   itself writes: the audit log and the cooldown state's directory (file modes keep the agent
//!   out of those in a hardened install);
//! - tier 2: also the `workspaces` (the repositories' work trees), with each repository's
//!   `.git/config`, `.git/hooks/`, `.git/info/`, a `.git` file, and `.claude-ops/`, and the
//!   skills, policy and install directories where they lie inside a workspace, bind-mounted
//!   read-only (Landlock cannot carve a hole out of a writable tree);
//! - tier 3: also the directories `kernel_fence.writable` names.
//!
//! The real tools inherit the domain. At tier 1 that means a `git fetch` cannot update a
//! repository (objects, `FETCH_HEAD`), and a tool's caches under the operator's tool home
//! (gh's state, ssh's `known_hosts`, psql's history) are not written: tier 1 writes no file.
//!
//! Must not: decide a call (the gate does), or weaken a domain it finds itself in.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::install::{InstallConfig, KernelFence};

/// The probe files of an installation, one per tier: `<prefix>/lib/tiershim/fence-probe-tier<N>`,
/// mode 0666, so any process may open them for writing. A domain of tier `k` may write the
/// probes of the tiers below `k` and none other (they lie beneath no writable path; the lower
/// tiers' are added as files of their own), so which probes a process may open tells the tier of
/// the domain it runs in ([`domain_tier`]), and the gate of tier `N` runs only inside a domain of
/// tier `N`: never outside one, never in a looser one (a tier-3 domain calling a tier-2 link)
/// nor a stricter one (a tier-1 agent that reached a tier-3 link).
pub fn probe(lib: &Path, tier: u8) -> PathBuf {
    lib.join(format!("fence-probe-tier{tier}"))
}

/// The Landlock ABI a domain is made with on a kernel of ABI `kernel`: the rights of ABI 5 at
/// most (6 to 9 add no write right the fence handles; see [`restrict`]).
pub fn applied_abi(kernel: u8) -> u8 {
    kernel.min(5)
}

/// The install's library directory (`<prefix>/lib/tiershim`), which holds the tier directories
/// and the probe.
pub fn lib_dir(cfg: &InstallConfig) -> PathBuf {
    cfg.dir().parent().unwrap_or(Path::new("/")).to_path_buf()
}

/// The agent's own state directory: Claude Code's `~/.claude` (with `CLAUDE_CONFIG_DIR`
/// pointing there, its config file too).
pub fn state_dir(home: &Path) -> PathBuf {
    home.join(".claude")
}

/// The agent's private temporary directory (`TMPDIR`), inside its state.
pub fn tmp_dir(home: &Path) -> PathBuf {
    state_dir(home).join("tmp")
}

/// One path of a ruleset and why it is there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub path: PathBuf,
    pub why: String,
}

/// A tier's ruleset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ruleset {
    pub tier: u8,
    /// The lowest Landlock ABI accepted (`kernel_fence.abi`).
    pub abi: u8,
    /// Where the domain allows writing (with everything beneath a directory).
    pub writable: Vec<Entry>,
    /// Paths inside `writable` ones that are bind-mounted read-only.
    pub read_only: Vec<Entry>,
    /// The probe of this tier, which no entry of `writable` may contain (nor those of the
    /// tiers above it); the probes of the tiers below are in `writable`.
    pub probe: PathBuf,
}

fn entry(path: impl Into<PathBuf>, why: &str) -> Entry {
    Entry {
        path: path.into(),
        why: why.into(),
    }
}

/// The git work trees under the workspaces: a workspace that is one, and each directory directly
/// inside one that is (as `skills.repos` holds `<repos>/<repo>`).
pub fn repos(cfg: &InstallConfig) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for ws in &cfg.workspaces {
        if ws.join(".git").exists() {
            out.push(ws.clone());
        }
        let Ok(rd) = std::fs::read_dir(ws) else { continue };
        let mut children: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .filter(|p| std::fs::symlink_metadata(p.join(".git")).is_ok())
            .collect();
        children.sort();
        out.extend(children);
    }
    out
}

/// The ruleset of `cfg`'s tier for an agent whose home is `home`, with `repos` the work trees
/// found under the workspaces and `exists` telling which paths there are (the caller's file
/// system; a path that does not exist cannot be bind-mounted). `None` when the fence is off.
pub fn plan(cfg: &InstallConfig, home: &Path, repos: &[PathBuf], exists: &dyn Fn(&Path) -> bool) -> Result<Option<Ruleset>> {
    let KernelFence::On { abi, writable: extra } = &cfg.kernel_fence else {
        return Ok(None);
    };
    let lib = lib_dir(cfg);
    let probe = probe(&lib, cfg.tier);
    let mut writable = vec![
        entry(
            state_dir(home),
            "the agent's own state (Claude Code's config, sessions, temporary files)",
        ),
        entry("/dev/null", "the null device"),
        entry("/dev/tty", "the terminal"),
        entry("/dev/pts", "the terminal"),
    ];
    if let Some(log) = &cfg.audit_log {
        if exists(log) {
            writable.push(entry(log, "the audit log, appended by the gate"));
        } else if let Some(dir) = log.parent() {
            writable.push(entry(dir, "the audit log's directory, where the gate creates the log"));
        }
    }
    if let Some(dir) = cfg.cooldown_state.as_deref().and_then(Path::parent) {
        writable.push(entry(dir, "the cooldown state's directory, rewritten by the gate"));
    }
    let mut read_only = Vec::new();
    if cfg.tier >= 2 {
        for ws in &cfg.workspaces {
            writable.push(entry(ws, "a workspace: the repositories' work trees"));
        }
        for repo in repos {
            for (sub, why) in [
                (".git/config", "a repository's git config"),
                (".git/hooks", "a repository's hooks"),
                (".git/info", "a repository's attributes and excludes"),
                (".claude-ops", "a repository's skills"),
            ] {
                let p = repo.join(sub);
                if exists(&p) {
                    read_only.push(entry(p, why));
                }
            }
            let git = repo.join(".git");
            if exists(&git) && !exists(&git.join("config")) {
                read_only.push(entry(git, "a `.git` file, which names the git directory"));
            }
        }
        let inside = |p: &Path| cfg.workspaces.iter().any(|w| p.starts_with(w));
        let mut fixed: Vec<(PathBuf, &str)> = vec![(lib_dir(cfg), "the installation")];
        if let Some(b) = cfg.skills.as_ref().and_then(|s| s.baseline.clone()) {
            fixed.push((b, "the baseline skills"));
        }
        if let Some(p) = &cfg.policy {
            fixed.push((p.clone(), "the policy"));
        }
        for (p, why) in fixed {
            if inside(&p) && exists(&p) {
                read_only.push(entry(p, why));
            }
        }
    }
    if cfg.tier >= 3 {
        for w in extra {
            writable.push(entry(w, "named by kernel_fence.writable"));
        }
    }
    for w in &writable {
        for p in (cfg.tier..=3).map(|t| self::probe(&lib, t)) {
            if p.starts_with(&w.path) {
                return Err(Error::ConfigInvalid {
                    path: cfg.path.clone(),
                    msg: format!(
                        "the kernel fence would make {} writable, which holds the install's fence probe {}: \
                         the gate could no longer tell a fenced process from one outside the fence; name narrower directories",
                        w.path.display(),
                        p.display()
                    ),
                });
            }
        }
    }
    // The probes of the tiers below: what tells this domain from theirs.
    for t in 1..cfg.tier {
        writable.push(entry(
            self::probe(&lib, t),
            "the fence probe of a lower tier (so its gate refuses calls from this domain)",
        ));
    }
    Ok(Some(Ruleset {
        tier: cfg.tier,
        abi: *abi,
        writable,
        read_only,
        probe,
    }))
}

/// The Landlock ABI of the running kernel: 0 when it has none (not built in, or not enabled).
pub fn kernel_abi() -> u8 {
    // SAFETY: landlock_create_ruleset with a null attribute, size 0 and the VERSION flag only
    // returns the ABI version (or -1 with errno); it reads and writes no memory of ours.
    let v = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, 1u32) };
    u8::try_from(v).unwrap_or(0)
}

fn abi_of(n: u8) -> landlock::ABI {
    use landlock::ABI;
    match applied_abi(n) {
        0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        // 5 to 8 add no write right beyond device ioctls; 9 adds connecting to a unix socket by
        // path, which the fence leaves alone (the real docker reaches its socket), as reads.
        _ => ABI::V5,
    }
}

/// Refuse when the kernel's Landlock is missing or older than the ruleset asks for.
pub fn check_kernel(rs: &Ruleset) -> Result<u8> {
    let k = kernel_abi();
    if k == 0 {
        return Err(fence_error(format!(
            "this kernel has no Landlock, so the kernel fence of tier {} cannot be made; run on a kernel with Landlock \
             (Linux 6.2 or later, with `landlock` in the lsm= boot list), or opt out with `kernel_fence: off` in tiershim.yaml",
            rs.tier
        )));
    }
    if k < rs.abi {
        return Err(fence_error(format!(
            "the kernel fence asks for Landlock ABI {} (kernel_fence.abi) and this kernel offers ABI {k}; \
             run on a newer kernel, lower kernel_fence.abi, or opt out with `kernel_fence: off`",
            rs.abi
        )));
    }
    Ok(k)
}

fn fence_error(msg: String) -> Error {
    Error::Fence(msg)
}

/// Make the domain for this process and everything it will start. `no_new_privs`: set it first
/// (needed without CAP_SYS_ADMIN; it also stops a setgid gate from getting its group, so
/// `launch`, running as root, does not). Returns the ABI the domain was made with.
pub fn restrict(rs: &Ruleset, no_new_privs: bool) -> Result<u8> {
    use landlock::{AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset as Ll, RulesetAttr, RulesetCreatedAttr};
    let k = check_kernel(rs)?;
    let abi = abi_of(k);
    let all = AccessFs::from_write(abi);
    let file_rights: BitFlags<AccessFs> = all & (AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev);
    let fail = |what: &str, e: &dyn std::fmt::Display| fence_error(format!("Landlock: {what}: {e}"));
    let mut created = Ll::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(|e| fail("handling the write rights", &e))?
        .create()
        .map_err(|e| fail("creating the ruleset", &e))?;
    for w in &rs.writable {
        let Ok(meta) = std::fs::metadata(&w.path) else {
            continue; // nothing there to write to (a terminal that does not exist, …)
        };
        let rights = if meta.is_dir() { all } else { file_rights };
        let fd = PathFd::new(&w.path).map_err(|e| fail(&format!("opening {}", w.path.display()), &e))?;
        created = created
            .add_rule(PathBeneath::new(fd, rights))
            .map_err(|e| fail(&format!("adding {}", w.path.display()), &e))?;
    }
    let status = created
        .no_new_privs(no_new_privs)
        .restrict_self()
        .map_err(|e| fail("restricting this process", &e))?;
    if status.ruleset != landlock::RulesetStatus::FullyEnforced {
        return Err(fence_error(format!(
            "Landlock enforced the ruleset only partly ({:?}) on a kernel of ABI {k}",
            status.ruleset
        )));
    }
    Ok(k)
}

/// In a private mount namespace (made here; root only), bind-mount each of `paths` onto itself
/// read-only. Mounts made here do not propagate to the rest of the system.
pub fn private_namespace() -> Result<()> {
    use nix::mount::{MsFlags, mount};
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS)
        .map_err(|e| fence_error(format!("cannot make a private mount namespace: {e}")))?;
    mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>)
        .map_err(|e| fence_error(format!("cannot make / private in the new mount namespace: {e}")))
}

/// Bind-mount each path onto itself read-only (inside [`private_namespace`]).
pub fn bind_read_only(paths: &[Entry]) -> Result<()> {
    use nix::mount::{MsFlags, mount};
    for e in paths {
        let p = &e.path;
        mount(Some(p), p, None::<&str>, MsFlags::MS_BIND | MsFlags::MS_REC, None::<&str>)
            .map_err(|err| fence_error(format!("cannot bind-mount {} read-only: {err}", p.display())))?;
        mount(
            None::<&str>,
            p,
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY,
            None::<&str>,
        )
        .map_err(|err| fence_error(format!("cannot remount {} read-only: {err}", p.display())))?;
    }
    Ok(())
}

/// Is this process inside a Landlock domain that denies writing the install's probe? The probe
/// is opened for writing (nothing is written): a domain answers `EACCES`; outside one the open
/// succeeds. A probe that is missing or not what the install made is an error, never "fenced".
///
/// The environment cannot forge the answer: only a Landlock domain (or a seccomp filter, or a
/// user namespace) can make the open fail, and each of those needs `no_new_privs` or a new user
/// namespace, under which the setgid gate of a hardened install gets no group and so reaches
/// no real tool.
pub fn fenced(probe: &Path) -> Result<bool> {
    use std::os::unix::fs::OpenOptionsExt;
    let broken = |why: String| {
        fence_error(format!(
            "the fence probe {} {why}; re-run install.sh, which makes it (mode 0666, empty)",
            probe.display()
        ))
    };
    let meta = std::fs::symlink_metadata(probe).map_err(|e| broken(format!("cannot be read: {e}")))?;
    if !meta.is_file() || meta.mode() & 0o7777 != 0o666 {
        return Err(broken(format!(
            "is not a regular file of mode 0666 (mode {:o})",
            meta.mode() & 0o7777
        )));
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(probe)
    {
        Ok(_) => Ok(false),
        Err(e) if e.raw_os_error() == Some(libc::EACCES) => Ok(true),
        Err(e) => Err(broken(format!("cannot be opened: {e}"))),
    }
}

/// The tier of the Landlock domain this process runs in, told by the install's probes (see
/// [`probe`]): the lowest tier whose probe it may not open for writing; `None` outside any
/// domain (it may open them all). A missing or altered probe is an error.
pub fn domain_tier(lib: &Path) -> Result<Option<u8>> {
    for t in 1..=3 {
        if fenced(&probe(lib, t))? {
            return Ok(Some(t));
        }
    }
    Ok(None)
}

/// The ruleset as lines for people (`doctor`, `explain --fence`, `launch --dry-run`).
pub fn describe(rs: &Ruleset) -> Vec<String> {
    let mut out = vec![format!(
        "tier {}: Landlock ABI {} or later (this kernel: {}; domains are made with the rights of ABI {}); write rights handled: write, truncate, create, remove, rename, link, device ioctls; reads and the network are not fenced",
        rs.tier,
        rs.abi,
        match kernel_abi() {
            0 => "none".to_string(),
            k => k.to_string(),
        },
        applied_abi(kernel_abi())
    )];
    for w in &rs.writable {
        out.push(format!("writable: {} ({})", w.path.display(), w.why));
    }
    for r in &rs.read_only {
        out.push(format!("read-only: {} ({})", r.path.display(), r.why));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(text: &str) -> InstallConfig {
        InstallConfig::parse(Path::new("/opt/ts/lib/tiershim/tier2/tiershim.yaml"), text).unwrap()
    }

    fn paths(v: &[Entry]) -> Vec<String> {
        v.iter().map(|e| e.path.display().to_string()).collect()
    }

    #[test]
    fn tier_1_writes_only_the_agent_s_state_the_terminal_and_what_the_gate_writes() {
        let c = cfg("tier: 1\naudit_log: /var/log/ts/audit.jsonl\ncooldown_state: /var/lib/ts/cd/cooldown.json\nworkspaces: [/repos]\n");
        let rs = plan(&c, Path::new("/home/agent"), &[PathBuf::from("/repos/app")], &|_| true)
            .unwrap()
            .unwrap();
        assert_eq!(
            paths(&rs.writable),
            [
                "/home/agent/.claude",
                "/dev/null",
                "/dev/tty",
                "/dev/pts",
                "/var/log/ts/audit.jsonl",
                "/var/lib/ts/cd"
            ]
        );
        assert!(rs.read_only.is_empty());
        assert_eq!(rs.abi, 3);
        assert_eq!(rs.probe, PathBuf::from("/opt/ts/lib/tiershim/fence-probe-tier1"));
        // An audit log not made yet: the gate creates it in its directory.
        let rs = plan(&c, Path::new("/home/agent"), &[], &|p| p != Path::new("/var/log/ts/audit.jsonl"))
            .unwrap()
            .unwrap();
        assert!(paths(&rs.writable).contains(&"/var/log/ts".to_string()));
    }

    #[test]
    fn tier_2_adds_the_work_trees_with_git_config_hooks_and_skills_read_only() {
        let c = cfg("tier: 2\nworkspaces: [/repos]\npolicy: /repos/policy\n");
        let repos = [PathBuf::from("/repos/app"), PathBuf::from("/repos/wt")];
        // /repos/wt has a `.git` file (a linked work tree), so no .git/config beneath it.
        let exists =
            |p: &Path| (p == Path::new("/repos/wt/.git") || !p.starts_with("/repos/wt/.git")) && p != Path::new("/repos/app/.claude-ops");
        let rs = plan(&c, Path::new("/home/agent"), &repos, &exists).unwrap().unwrap();
        assert!(paths(&rs.writable).contains(&"/repos".to_string()));
        // The tier-1 probe is writable (so tier 1's gate refuses this domain), its own is not.
        assert!(paths(&rs.writable).contains(&"/opt/ts/lib/tiershim/fence-probe-tier1".to_string()));
        assert_eq!(rs.probe, PathBuf::from("/opt/ts/lib/tiershim/fence-probe-tier2"));
        assert_eq!(
            paths(&rs.read_only),
            [
                "/repos/app/.git/config",
                "/repos/app/.git/hooks",
                "/repos/app/.git/info",
                "/repos/wt/.claude-ops",
                "/repos/wt/.git",
                "/repos/policy"
            ]
        );
    }

    #[test]
    fn tier_3_adds_the_operator_s_roots_and_no_root_may_hold_the_probe() {
        let c = InstallConfig::parse(
            Path::new("/opt/ts/lib/tiershim/tier3/tiershim.yaml"),
            "tier: 3\nkernel_fence: {abi: 5, writable: [/srv/data]}\n",
        )
        .unwrap();
        let rs = plan(&c, Path::new("/home/agent"), &[], &|_| true).unwrap().unwrap();
        assert!(paths(&rs.writable).contains(&"/srv/data".to_string()));
        assert_eq!(rs.abi, 5);
        let c = InstallConfig::parse(
            Path::new("/opt/ts/lib/tiershim/tier3/tiershim.yaml"),
            "tier: 3\nkernel_fence: {writable: [/opt]}\n",
        )
        .unwrap();
        let e = plan(&c, Path::new("/home/agent"), &[], &|_| true).unwrap_err().to_string();
        assert!(e.contains("holds the install's fence probe"), "{e}");
        let off = cfg("tier: 2\nkernel_fence: off\n");
        assert_eq!(plan(&off, Path::new("/home/agent"), &[], &|_| true).unwrap(), None);
    }

    #[test]
    fn kernel_fence_settings_are_checked_when_the_config_loads() {
        let parse = |t: &str| InstallConfig::parse(Path::new("/i/tier2/tiershim.yaml"), t).map(|c| c.kernel_fence);
        assert_eq!(parse("tier: 2\n").unwrap(), KernelFence::On { abi: 3, writable: vec![] });
        assert_eq!(parse("tier: 2\nkernel_fence: off\n").unwrap(), KernelFence::Off);
        for (text, want) in [
            ("tier: 2\nkernel_fence: maybe\n", "is not `off`, `on`"),
            ("tier: 2\nkernel_fence: {writable: [/srv]}\n", "for tier 3 only"),
            ("tier: 2\nkernel_fence: {abi: 0}\n", "is not a Landlock ABI"),
            ("tier: 2\nkernel_fence: {abi: 3, typo: 1}\n", "tiershim.yaml"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }
}
