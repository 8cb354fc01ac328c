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
//! - tier 3: also `/dev/shm` (POSIX semaphores: ansible's worker queue), given a private, empty
//!   tmpfs in the session's mount namespace, so what the agent leaves there is not the machine's
//!   shared memory (left out when there is no such namespace: a shell not started as root), and
//!   the directories `kernel_fence.writable` names.
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
    /// Directories inside `writable` ones bind-mounted onto themselves, writable, before the
    /// read-only mounts: a mount point cannot be renamed or removed (`EBUSY`), so a git
    /// directory stays where its read-only config and hooks are.
    pub pinned: Vec<Entry>,
    /// Paths inside `writable` ones that are bind-mounted read-only.
    pub read_only: Vec<Entry>,
    /// The probe of this tier, which no entry of `writable` may contain (nor those of the
    /// tiers above it); the probes of the tiers below are in `writable`.
    pub probe: PathBuf,
    /// Directories of `writable` that get a private, empty tmpfs in the session's mount
    /// namespace before the domain is made ([`private_tmpfs`]; tier 3: `/dev/shm`), so the
    /// agent writes there without reaching the rest of the machine. Without a private mount
    /// namespace they are left out of `writable` ([`Ruleset::without_private`]).
    pub private: Vec<Entry>,
}

impl Ruleset {
    /// Leave the [`Ruleset::private`] directories out (a shell that cannot mount them privately
    /// must not open the machine's own to the agent).
    pub fn without_private(&mut self) {
        let private = std::mem::take(&mut self.private);
        self.writable.retain(|w| !private.iter().any(|p| p.path == w.path));
    }
}

fn entry(path: impl Into<PathBuf>, why: &str) -> Entry {
    Entry {
        path: path.into(),
        why: why.into(),
    }
}

/// The git repositories under the workspaces, found when the fence is made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Repos {
    /// The work trees: a workspace that is one, and each directory below one that is (nested
    /// repositories included), down to [`MAX_DEPTH`] levels, hidden directories and symbolic
    /// links not followed.
    pub work_trees: Vec<PathBuf>,
    /// Every git directory they use: each work tree's `.git` directory (or the one its `.git`
    /// file names), the common directory a `commondir` file names, and the git directories of
    /// their submodules (`modules/…`) and linked work trees (`worktrees/…`).
    pub git_dirs: Vec<PathBuf>,
}

/// How deep below a workspace work trees are looked for.
pub const MAX_DEPTH: usize = 4;

/// The directories a tier's domain may write that hold repositories: the workspaces (tier 2
/// and above), and at tier 3 the roots `kernel_fence.writable` names.
pub fn repository_roots(cfg: &InstallConfig) -> Vec<PathBuf> {
    let mut roots = cfg.workspaces.clone();
    if let KernelFence::On { writable, .. } = &cfg.kernel_fence
        && cfg.tier >= 3
    {
        roots.extend(writable.iter().cloned());
    }
    roots
}

/// The repositories under the [`repository_roots`] ([`Repos`]).
pub fn repos(cfg: &InstallConfig) -> Repos {
    let mut out = Repos::default();
    let mut stack: Vec<(PathBuf, usize)> = repository_roots(cfg).into_iter().rev().map(|w| (w, 0)).collect();
    while let Some((dir, depth)) = stack.pop() {
        if std::fs::symlink_metadata(dir.join(".git")).is_ok() && !out.work_trees.contains(&dir) {
            out.work_trees.push(dir.clone());
        }
        if depth >= MAX_DEPTH {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        let mut children: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            .collect();
        children.sort();
        stack.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
    }
    for wt in &out.work_trees {
        if let Some(d) = discover(wt) {
            for g in [d.git_dir, d.common] {
                if !out.git_dirs.contains(&g) {
                    out.git_dirs.push(g);
                }
            }
        }
    }
    // Submodules' and linked work trees' git directories, below each common directory.
    let mut i = 0;
    while i < out.git_dirs.len() {
        let g = out.git_dirs[i].clone();
        i += 1;
        for sub in ["modules", "worktrees"] {
            let mut stack = vec![(g.join(sub), 0)];
            while let Some((d, depth)) = stack.pop() {
                let Ok(rd) = std::fs::read_dir(&d) else { continue };
                for e in rd.filter_map(|e| e.ok()) {
                    if !e.file_type().is_ok_and(|t| t.is_dir()) {
                        continue;
                    }
                    let p = e.path();
                    if p.join("HEAD").is_file() {
                        if !out.git_dirs.contains(&p) {
                            out.git_dirs.push(p.clone());
                        }
                    } else if sub == "modules" && depth < MAX_DEPTH {
                        // A submodule named with slashes: modules/a/b.
                        stack.push((p, depth + 1));
                    }
                }
            }
        }
    }
    out
}

/// A repository as git finds it from a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitDirs {
    pub git_dir: PathBuf,
    /// Where its config, hooks, objects and refs are: the git directory, or the directory its
    /// `commondir` file names.
    pub common: PathBuf,
}

/// The repository git would use from `start`, as its discovery does (setup.c): the first
/// directory upward holding `.git` (a directory, or a file `gitdir: <path>`); a bare layout
/// is not discovered (the gate's git runs with `safe.bareRepository=explicit`). `None` outside
/// any repository.
pub fn discover(start: &Path) -> Option<GitDirs> {
    let start = std::path::absolute(start).ok()?;
    let mut dir = Some(start.as_path());
    while let Some(d) = dir {
        let dot = d.join(".git");
        if let Ok(m) = std::fs::metadata(&dot) {
            let git_dir = if m.is_dir() {
                dot
            } else {
                let text = std::fs::read_to_string(&dot).ok()?;
                let named = text.lines().next()?.strip_prefix("gitdir: ")?.trim_end().to_string();
                d.join(named)
            };
            let common = match std::fs::read_to_string(git_dir.join("commondir")) {
                Ok(t) => git_dir.join(t.trim_end_matches(['\n', '\r'])),
                Err(_) => git_dir.clone(),
            };
            return Some(GitDirs {
                git_dir: lexical(&git_dir),
                common: lexical(&common),
            });
        }
        dir = d.parent();
    }
    None
}

/// `p` with `.` and `..` taken away as written (a git directory is named through the
/// workspace as the operator wrote it, so it compares with `workspaces:`).
fn lexical(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Is `path` on a read-only mount (`statvfs`'s `ST_RDONLY`)? A path that cannot be looked at
/// is not.
pub fn read_only_mount(path: &Path) -> bool {
    nix::sys::statvfs::statvfs(path).is_ok_and(|v| v.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY))
}

/// Why the repository `d` is not held by the fence, if it is not: a git directory inside the
/// writable paths whose `config` and `hooks` are not read-only mounts is one made, moved or
/// retargeted (`commondir`) after the fence was made, whose configuration the agent could
/// have written and which any git (gh's too) would obey.
pub fn unbound(d: &GitDirs, writable: &[PathBuf]) -> Option<String> {
    let inside = |p: &Path| writable.iter().any(|w| p.starts_with(w));
    if !inside(&d.common) && !inside(&d.git_dir) {
        return None;
    }
    for p in [d.common.join("config"), d.common.join("hooks")] {
        if !read_only_mount(&p) {
            return Some(format!(
                "the git directory {} is not one the kernel fence holds ({} is not a read-only mount): a repository made, \
                 moved or retargeted (a `.git` renamed, a `commondir` written) after the agent started, whose configuration \
                 the agent could have written; restart the agent with `tiershim launch`, which binds every repository's \
                 metadata read-only",
                d.common.display(),
                p.display()
            ));
        }
    }
    let wt_config = d.git_dir.join("config.worktree");
    if d.git_dir != d.common && wt_config.exists() && !read_only_mount(&wt_config) {
        return Some(format!(
            "{} is not a read-only mount: a linked work tree's configuration the agent could have written; restart the agent with `tiershim launch`",
            wt_config.display()
        ));
    }
    None
}

/// The ruleset of `cfg`'s tier for an agent whose home is `home`, with `repos` the repositories
/// found under the workspaces and `exists` telling which paths there are (the caller's file
/// system; a path that does not exist cannot be bind-mounted). `None` when the fence is off.
pub fn plan(cfg: &InstallConfig, home: &Path, repos: &Repos, exists: &dyn Fn(&Path) -> bool) -> Result<Option<Ruleset>> {
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
    let mut pinned = Vec::new();
    if cfg.tier >= 2 {
        for ws in &cfg.workspaces {
            writable.push(entry(ws, "a workspace: the repositories' work trees"));
        }
        for repo in &repos.work_trees {
            let p = repo.join(".claude-ops");
            if exists(&p) {
                read_only.push(entry(p, "a repository's skills"));
            }
            let git = repo.join(".git");
            if exists(&git) && !repos.git_dirs.contains(&git) && !exists(&git.join("HEAD")) {
                read_only.push(entry(git, "a `.git` file, which names the git directory"));
            }
        }
        let roots = repository_roots(cfg);
        for g in &repos.git_dirs {
            if !roots.iter().any(|w| g.starts_with(w)) {
                continue; // not writable: nothing to hold
            }
            pinned.push(entry(
                g,
                "a git directory, which cannot be renamed or removed while it is a mount point",
            ));
            for (sub, why) in [
                ("config", "a repository's git config"),
                ("hooks", "a repository's hooks"),
                ("info", "a repository's attributes and excludes"),
                ("commondir", "where a git directory's config and hooks are"),
                ("gitdir", "a linked work tree's location"),
                ("config.worktree", "a work tree's git config"),
            ] {
                let p = g.join(sub);
                if exists(&p) {
                    read_only.push(entry(p, why));
                }
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
    let mut private = Vec::new();
    if cfg.tier >= 3 {
        // A tier-3 run of ansible starts its workers with a queue whose lock is a POSIX
        // semaphore, which the C library creates in /dev/shm: a private one for the session.
        let shm = Path::new("/dev/shm");
        if exists(shm) {
            let e = entry(
                shm,
                "shared memory, private to the session: POSIX semaphores (ansible's worker queue, Python's multiprocessing)",
            );
            writable.push(e.clone());
            private.push(e);
        }
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
        pinned,
        read_only,
        probe,
        private,
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

/// Mount a private, empty tmpfs on each of `paths` (inside [`private_namespace`]): world-writable
/// with the sticky bit, as `/dev/shm` is, without devices, set-id programs or execution.
pub fn private_tmpfs(paths: &[Entry]) -> Result<()> {
    use nix::mount::{MsFlags, mount};
    for e in paths {
        mount(
            Some("tmpfs"),
            &e.path,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some("mode=1777"),
        )
        .map_err(|err| fence_error(format!("cannot mount a private tmpfs on {}: {err}", e.path.display())))?;
    }
    Ok(())
}

/// Bind-mount each path onto itself, writable (inside [`private_namespace`]): a mount point
/// cannot be renamed or removed.
pub fn pin(paths: &[Entry]) -> Result<()> {
    use nix::mount::{MsFlags, mount};
    for e in paths {
        mount(Some(&e.path), &e.path, None::<&str>, MsFlags::MS_BIND, None::<&str>)
            .map_err(|err| fence_error(format!("cannot bind-mount {} onto itself: {err}", e.path.display())))?;
    }
    Ok(())
}

/// Make each git directory's `hooks` and `info` where they are missing (root-owned, mode 0755),
/// so they can be mounted read-only: a missing one the agent could make and fill.
pub fn make_git_metadata(repos: &Repos) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for g in &repos.git_dirs {
        for sub in ["hooks", "info"] {
            let p = g.join(sub);
            if std::fs::symlink_metadata(&p).is_err() {
                std::fs::create_dir(&p)
                    .and_then(|()| std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)))
                    .map_err(|e| fence_error(format!("cannot make {} (to mount it read-only): {e}", p.display())))?;
            }
        }
    }
    Ok(())
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
    for r in &rs.pinned {
        out.push(format!("pinned: {} ({})", r.path.display(), r.why));
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

    fn work_trees(list: &[&str]) -> Repos {
        Repos {
            work_trees: list.iter().map(PathBuf::from).collect(),
            git_dirs: Vec::new(),
        }
    }

    fn paths(v: &[Entry]) -> Vec<String> {
        v.iter().map(|e| e.path.display().to_string()).collect()
    }

    #[test]
    fn tier_1_writes_only_the_agent_s_state_the_terminal_and_what_the_gate_writes() {
        let c = cfg("tier: 1\naudit_log: /var/log/ts/audit.jsonl\ncooldown_state: /var/lib/ts/cd/cooldown.json\nworkspaces: [/repos]\n");
        let rs = plan(&c, Path::new("/home/agent"), &work_trees(&["/repos/app"]), &|_| true)
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
        let rs = plan(&c, Path::new("/home/agent"), &Repos::default(), &|p| {
            p != Path::new("/var/log/ts/audit.jsonl")
        })
        .unwrap()
        .unwrap();
        assert!(paths(&rs.writable).contains(&"/var/log/ts".to_string()));
    }

    #[test]
    fn tier_2_adds_the_work_trees_with_git_metadata_read_only_and_git_directories_pinned() {
        let c = cfg("tier: 2\nworkspaces: [/repos]\npolicy: /repos/policy\n");
        // /repos/wt has a `.git` file (a linked work tree of /repos/app), /repos/app/sub is a
        // nested repository, and /outside/x.git a git directory no workspace holds.
        let repos = Repos {
            work_trees: ["/repos/app", "/repos/app/sub", "/repos/wt"].map(PathBuf::from).to_vec(),
            git_dirs: [
                "/repos/app/.git",
                "/repos/app/sub/.git",
                "/repos/app/.git/worktrees/wt",
                "/outside/x.git",
            ]
            .map(PathBuf::from)
            .to_vec(),
        };
        let missing = [
            "/repos/app/.claude-ops",
            "/repos/app/.git/commondir",
            "/repos/app/.git/gitdir",
            "/repos/app/.git/config.worktree",
            "/repos/app/sub/.git/commondir",
            "/repos/app/sub/.git/gitdir",
            "/repos/app/sub/.git/config.worktree",
            "/repos/app/.git/worktrees/wt/config",
            "/repos/app/.git/worktrees/wt/hooks",
            "/repos/app/.git/worktrees/wt/info",
            "/repos/app/.git/worktrees/wt/config.worktree",
        ];
        let wt_git = Path::new("/repos/wt/.git");
        let exists = |p: &Path| !missing.iter().any(|m| p == Path::new(m)) && (p == wt_git || !p.starts_with(wt_git));
        let rs = plan(&c, Path::new("/home/agent"), &repos, &exists).unwrap().unwrap();
        assert!(paths(&rs.writable).contains(&"/repos".to_string()));
        // The tier-1 probe is writable (so tier 1's gate refuses this domain), its own is not.
        assert!(paths(&rs.writable).contains(&"/opt/ts/lib/tiershim/fence-probe-tier1".to_string()));
        assert_eq!(rs.probe, PathBuf::from("/opt/ts/lib/tiershim/fence-probe-tier2"));
        assert_eq!(
            paths(&rs.pinned),
            ["/repos/app/.git", "/repos/app/sub/.git", "/repos/app/.git/worktrees/wt"]
        );
        assert_eq!(
            paths(&rs.read_only),
            [
                "/repos/app/sub/.claude-ops",
                "/repos/wt/.claude-ops",
                "/repos/wt/.git",
                "/repos/app/.git/config",
                "/repos/app/.git/hooks",
                "/repos/app/.git/info",
                "/repos/app/sub/.git/config",
                "/repos/app/sub/.git/hooks",
                "/repos/app/sub/.git/info",
                "/repos/app/.git/worktrees/wt/commondir",
                "/repos/app/.git/worktrees/wt/gitdir",
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
        // A repository below an operator's root is held as one below a workspace.
        let repos = Repos {
            work_trees: vec![PathBuf::from("/srv/data/app")],
            git_dirs: vec![PathBuf::from("/srv/data/app/.git")],
        };
        let rs = plan(&c, Path::new("/home/agent"), &repos, &|_| true).unwrap().unwrap();
        assert!(paths(&rs.writable).contains(&"/srv/data".to_string()));
        assert_eq!(rs.abi, 5);
        assert_eq!(paths(&rs.pinned), ["/srv/data/app/.git"]);
        assert!(paths(&rs.read_only).contains(&"/srv/data/app/.git/config".to_string()));
        assert_eq!(repository_roots(&c), [PathBuf::from("/srv/data")]);
        let c = InstallConfig::parse(
            Path::new("/opt/ts/lib/tiershim/tier3/tiershim.yaml"),
            "tier: 3\nkernel_fence: {writable: [/opt]}\n",
        )
        .unwrap();
        let e = plan(&c, Path::new("/home/agent"), &Repos::default(), &|_| true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds the install's fence probe"), "{e}");
        let off = cfg("tier: 2\nkernel_fence: off\n");
        assert_eq!(plan(&off, Path::new("/home/agent"), &Repos::default(), &|_| true).unwrap(), None);
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
