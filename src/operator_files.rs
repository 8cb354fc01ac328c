//! Who could have written the files a real tool takes as instructions ([`Claim::Operator`]: a
//! playbook and everything beside it, an inventory, `-e @file`, a manifest, a chart), for
//! `decide()` to refuse what the agent could have written (DESIGN §3.2: the agent must not be
//! able to write what the tool will run).
//!
//! A file is the agent's when the agent's real uid could write it or replace it (a writable
//! directory above it, `access::writable_by`); a tree is the agent's when that holds for its
//! directory or any entry below it (symlinks judged where they lead as well). A path that does not
//! exist is the agent's when the agent could create it (the nearest directory that exists above
//! it is writable): the tool may find it there by the time it looks. A tree larger than
//! [`MAX_ENTRIES`] cannot be checked, and is refused.
//!
//! I/O, gathered before `decide()`; it decides nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::access::{self, Perm, Principal};
use crate::grammar::{Claim, Invocation};

/// The most entries a tree may hold to be checked (a playbook directory, a chart).
pub const MAX_ENTRIES: usize = 20_000;

/// Per path as written: `Ok(None)` the operator's, `Ok(Some(why))` the agent could have written
/// it, `Err(why)` it could not be checked.
pub type Owners = BTreeMap<String, Result<Option<String>, String>>;

/// The owners of every [`Claim::Operator`] path of `inv`, for the agent `who`, relative paths
/// against `cwd`. None when the call claims no such file.
pub fn check(inv: &Invocation, cwd: &Path, who: &Principal) -> Option<Owners> {
    let mut out = Owners::new();
    for c in &inv.claims {
        if let Claim::Operator { path, tree, .. } = c {
            let full = if Path::new(path).is_absolute() {
                PathBuf::from(path)
            } else {
                cwd.join(path)
            };
            out.entry(path.clone()).or_insert_with(|| judge(&full, *tree, who));
        }
    }
    (!out.is_empty()).then_some(out)
}

fn judge(path: &Path, tree: bool, who: &Principal) -> Result<Option<String>, String> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(creatable(path, who));
    };
    if let Some(why) = access::writable_by(who, path) {
        return Ok(Some(why));
    }
    // A symlink is read where it leads.
    if meta.file_type().is_symlink() {
        let target = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if let Some(why) = access::writable_by(who, &target) {
            return Ok(Some(why));
        }
    }
    if !tree {
        return Ok(None);
    }
    // The tree: a directory itself, or the directory a file is in (a playbook's roles and vars).
    let root = if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        path.to_path_buf()
    } else {
        match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    };
    if let Some(why) = access::writable_by(who, &root) {
        return Ok(Some(why));
    }
    walk(&root, who)
}

/// The nearest directory that exists above a missing path, when the agent could write it.
fn creatable(path: &Path, who: &Principal) -> Option<String> {
    let mut dir = path.parent();
    while let Some(d) = dir {
        if std::fs::metadata(d).is_ok() {
            return access::writable_by(who, d).map(|why| format!("{} does not exist and {why}", path.display()));
        }
        dir = d.parent();
    }
    None
}

fn walk(root: &Path, who: &Principal) -> Result<Option<String>, String> {
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for e in entries {
            let e = e.map_err(|e| format!("{}: {e}", dir.display()))?;
            seen += 1;
            if seen > MAX_ENTRIES {
                return Err(format!(
                    "{} holds more than {MAX_ENTRIES} entries, too many to check",
                    root.display()
                ));
            }
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            if meta.file_type().is_symlink() {
                // Read where it leads: that file (and the directories above it) must be the
                // operator's too. A dangling link is read as nothing.
                if let Ok(target) = std::fs::canonicalize(&p)
                    && let Some(why) = access::writable_by(who, &target)
                {
                    return Ok(Some(format!("{} leads to {}: {why}", p.display(), target.display())));
                }
                continue;
            }
            if who.may(&meta, Perm::Write) {
                return Ok(Some(format!("{} can write {}", who.label, p.display())));
            }
            if meta.is_dir() {
                stack.push(p);
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn nobody() -> Principal {
        Principal::others()
    }

    #[test]
    fn a_tree_with_one_writable_entry_is_the_agents() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("play");
        std::fs::create_dir_all(root.join("roles/web/tasks")).unwrap();
        std::fs::write(root.join("site.yml"), "- hosts: all\n").unwrap();
        std::fs::write(root.join("roles/web/tasks/main.yml"), "[]\n").unwrap();
        for p in [
            d.path(),
            &root,
            &root.join("roles"),
            &root.join("roles/web"),
            &root.join("roles/web/tasks"),
        ] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let site = root.join("site.yml");
        assert_eq!(judge(&site, true, &nobody()), Ok(None));
        std::fs::set_permissions(root.join("roles/web/tasks/main.yml"), std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(matches!(judge(&site, true, &nobody()), Ok(Some(_))));
        // The file alone is still the operator's.
        assert_eq!(judge(&site, false, &nobody()), Ok(None));
    }

    #[test]
    fn a_missing_path_is_the_agents_when_it_could_create_it() {
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(judge(&d.path().join("nope/chart"), true, &nobody()), Ok(None));
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(judge(&d.path().join("nope/chart"), true, &nobody()), Ok(Some(_))));
    }
}
