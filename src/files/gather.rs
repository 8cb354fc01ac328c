//! The I/O half of the local-write model: where the call's files really are, the git entries
//! along each write, the contents the decision reads, and the install's fence made canonical.
//! Done by the gate (and `explain`) before `decide()`; nothing here judges.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use super::{Fence, GitMarks, LocalFacts, MAX_CONTENT, has_dotdot, read_problem};
use crate::grammar::{Access, Contents, Invocation};
use crate::install::InstallConfig;

impl Fence {
    /// The fence of an install: its workspaces, and its own files (the directory holding
    /// `tiershim.yaml` and the links, install.sh's library directory, the skills, the policy,
    /// the real tools, the audit log, the cooldown state, the inventory and MCP configs, the
    /// tool home and the secrets file).
    pub fn of(cfg: &InstallConfig) -> Fence {
        let mut f = Fence {
            kernel_fence: cfg.kernel_fence != crate::install::KernelFence::Off,
            ..Fence::default()
        };
        for w in &cfg.workspaces {
            push_both(&mut f.workspaces, w);
        }
        let mut protect = |p: &Path, what: &str| {
            // `explain` without a config has no install directory ("(none)").
            if !p.is_absolute() {
                return;
            }
            let mut both = Vec::new();
            push_both(&mut both, p);
            for b in both {
                f.protected.push((b, what.to_string()));
            }
        };
        let dir = cfg.dir();
        protect(dir, "the install's tier directory");
        if let Some(lib) = dir.parent().filter(|l| l.join(".install-manifest").exists()) {
            protect(lib, "the install's library directory");
        }
        if let Ok(exe) = std::fs::read_link("/proc/self/exe")
            && let Some(bin) = exe.parent()
        {
            protect(bin, "the directory of the tiershim binary");
        }
        if let Some(s) = &cfg.skills
            && let Some(b) = &s.baseline
        {
            protect(b, "the baseline skills");
        }
        if let Some(p) = &cfg.policy {
            protect(p, "the policy directory");
        }
        for p in cfg.real.values() {
            protect(p, "a real tool");
        }
        for d in &cfg.real_dirs {
            protect(d, "a directory of real tools");
        }
        if let Some(a) = &cfg.audit_log {
            protect(a, "the audit log");
        }
        if let Some(c) = &cfg.cooldown_state {
            protect(c, "the cooldown state");
            protect(&crate::cooldown::store::lock_path(c), "the cooldown state's lock");
        }
        if let Some(i) = &cfg.inventory {
            protect(i, "the session inventory");
        }
        for m in &cfg.mcp_configs {
            protect(m, "an MCP config");
        }
        if let Some(h) = &cfg.tool_home {
            protect(h, "the tool home (the real tools' HOME)");
        }
        if let Some(s) = &cfg.secrets {
            protect(s, "the secrets file");
        }
        f
    }
}

/// `p` as given, and canonical when that differs (the part that exists resolved, the rest as
/// written).
pub(super) fn push_both(out: &mut Vec<PathBuf>, p: &Path) {
    out.push(p.to_path_buf());
    if let Ok(c) = resolve(Path::new("/"), p)
        && c != p
    {
        out.push(c);
    }
}

impl GitMarks {
    /// The git entries `dir` holds.
    pub(super) fn of(dir: &Path) -> GitMarks {
        let is_dir = |n: &str| std::fs::metadata(dir.join(n)).is_ok_and(|m| m.is_dir());
        let exists = |n: &str| std::fs::symlink_metadata(dir.join(n)).is_ok();
        GitMarks {
            head: exists("HEAD"),
            commondir: exists("commondir"),
            objects: is_dir("objects"),
            refs: is_dir("refs"),
        }
    }
}

/// Resolve every file of `inv` against `cwd`, look at the directories along each write, and
/// read the files whose contents the decision needs. I/O; only the gate and `explain` call it.
pub fn gather(inv: &Invocation, cwd: &Path) -> (LocalFacts, Contents) {
    let mut facts = LocalFacts {
        workdir: Some(cwd.to_path_buf()),
        workdir_real: std::fs::canonicalize(cwd).ok(),
        resolved: BTreeMap::new(),
        dirs: BTreeMap::new(),
        contents: Contents::new(),
    };
    let mut contents = Contents::new();
    if inv.files.is_empty() {
        return (facts, contents);
    }
    for f in &inv.files {
        if facts.resolved.contains_key(&f.path) || has_dotdot(&f.path) || f.path.is_empty() {
            continue;
        }
        let r = match &facts.workdir_real {
            Some(real) => resolve(real, Path::new(&f.path)),
            None => Err(format!("the working directory {} cannot be resolved", cwd.display())),
        };
        facts.resolved.insert(f.path.clone(), r);
    }
    for f in inv.files.iter().filter(|f| f.access.writes()) {
        let Some(Ok(real)) = facts.resolved.get(&f.path) else { continue };
        for dir in real.ancestors().skip(usize::from(f.access == Access::Write)) {
            if facts.dirs.contains_key(dir) {
                continue;
            }
            if std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
                facts.dirs.insert(dir.to_path_buf(), GitMarks::of(dir));
            }
        }
    }
    for f in inv.files.iter().filter(|f| f.content && f.access == Access::Read) {
        if contents.contains_key(&f.path) {
            continue;
        }
        let text = if read_problem(f, &facts).is_some() {
            Err("not read: the gate refuses this file".to_string())
        } else {
            match facts.resolved.get(&f.path) {
                Some(Ok(real)) => read_bounded(real),
                _ => Err("not resolved".to_string()),
            }
        };
        contents.insert(f.path.clone(), text);
    }
    facts.contents = contents.clone();
    (facts, contents)
}

fn read_bounded(p: &Path) -> Result<String, String> {
    let file = std::fs::File::open(p).map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    file.take(MAX_CONTENT + 1).read_to_end(&mut buf).map_err(|e| e.to_string())?;
    if buf.len() as u64 > MAX_CONTENT {
        return Err(format!("larger than {MAX_CONTENT} bytes"));
    }
    String::from_utf8(buf).map_err(|_| "not UTF-8 text".to_string())
}

/// Where `path` (relative to `base`, or absolute) really leads: each existing component is
/// looked at, a symlink is replaced by where it resolves, the part that does not exist yet is
/// appended as written. A dangling symlink is an error.
fn resolve(base: &Path, path: &Path) -> Result<PathBuf, String> {
    let mut cur = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        base.to_path_buf()
    };
    let comps: Vec<Component> = path
        .components()
        .filter(|c| !matches!(c, Component::RootDir | Component::CurDir))
        .collect();
    for (i, c) in comps.iter().enumerate() {
        let next = cur.join(c);
        match std::fs::symlink_metadata(&next) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                for rest in &comps[i..] {
                    cur.push(rest);
                }
                return Ok(cur);
            }
            Err(e) => return Err(format!("cannot look at {}: {e}", next.display())),
            Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(&next) {
                Ok(t) => cur = t,
                Err(_) => return Err(format!("{} is a symlink to something that does not exist", next.display())),
            },
            Ok(_) => cur = next,
        }
    }
    Ok(cur)
}
