//! Who could reach or change a file: a [`Principal`] (a uid and its groups) and the permission
//! bits along a path, judged the way the kernel judges them (owner bits, else group bits, else
//! other bits; search permission on every directory; the sticky bit protecting entries of
//! others). `tiershim doctor` uses this to answer "can the agent's user run this real tool, or
//! rewrite this config?" without becoming that user.
//!
//! It reads metadata only (and `/etc/passwd`, `/etc/group` to name a user); it never opens a
//! file for writing or executes anything. ACLs and capabilities are not modelled: the mode bits
//! are what an install controls.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A user the checks are made for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub uid: u32,
    /// The primary group first, then supplementary groups.
    pub gids: Vec<u32>,
    /// How the principal is named in messages.
    pub label: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Perm {
    Read,
    Write,
    Exec,
}

impl Perm {
    fn bit(self) -> u32 {
        match self {
            Perm::Read => 4,
            Perm::Write => 2,
            Perm::Exec => 1,
        }
    }
}

/// The uid `nobody` has on Debian; used for "any other user" when no account is named.
const NOBODY: u32 = 65534;

impl Principal {
    /// Any user that is neither root, nor an owner, nor in a group of the files checked.
    pub fn others() -> Principal {
        Principal {
            uid: NOBODY,
            gids: Vec::new(),
            label: "any unprivileged user".into(),
        }
    }

    /// This process's real user and groups (the setgid group of a hardened install is not
    /// among them once dropped).
    pub fn current() -> Principal {
        let uid = nix::unistd::getuid().as_raw();
        let mut gids = vec![nix::unistd::getgid().as_raw()];
        if let Ok(groups) = nix::unistd::getgroups() {
            for g in groups {
                if !gids.contains(&g.as_raw()) {
                    gids.push(g.as_raw());
                }
            }
        }
        Principal {
            uid,
            gids,
            label: format!("uid {uid}"),
        }
    }

    /// A user by name or number, from `/etc/passwd` and `/etc/group` (no NSS: this binary is
    /// static). A number without a passwd entry has no groups.
    pub fn lookup(user: &str) -> Result<Principal, String> {
        let passwd = std::fs::read_to_string("/etc/passwd").map_err(|e| format!("cannot read /etc/passwd: {e}"))?;
        let group = std::fs::read_to_string("/etc/group").unwrap_or_default();
        lookup_in(user, &passwd, &group)
    }

    pub fn is_root(&self) -> bool {
        self.uid == 0
    }

    /// May this principal do `want` to a file with this metadata (mode bits only)?
    pub fn may(&self, meta: &std::fs::Metadata, want: Perm) -> bool {
        if self.is_root() {
            // Root may do anything, except execute a file no one may execute.
            return want != Perm::Exec || meta.is_dir() || meta.mode() & 0o111 != 0;
        }
        let mode = meta.mode();
        let bits = if meta.uid() == self.uid {
            mode >> 6
        } else if self.gids.contains(&meta.gid()) {
            mode >> 3
        } else {
            mode
        };
        bits & want.bit() != 0
    }
}

fn lookup_in(user: &str, passwd: &str, group: &str) -> Result<Principal, String> {
    let entry = passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        if f.len() < 4 {
            return None;
        }
        let matches = f[0] == user || (user.parse::<u32>().ok().map(|n| n.to_string()).as_deref() == Some(f[2]));
        if !matches {
            return None;
        }
        Some((f[0].to_string(), f[2].parse::<u32>().ok()?, f[3].parse::<u32>().ok()?))
    });
    let (name, uid, gid) = match entry {
        Some(e) => e,
        None => match user.parse::<u32>() {
            Ok(uid) => {
                return Ok(Principal {
                    uid,
                    gids: Vec::new(),
                    label: format!("uid {uid}"),
                });
            }
            Err(_) => return Err(format!("no user `{user}` in /etc/passwd")),
        },
    };
    let mut gids = vec![gid];
    for l in group.lines() {
        let f: Vec<&str> = l.split(':').collect();
        if f.len() < 4 {
            continue;
        }
        if f[3].split(',').any(|m| m == name)
            && let Ok(g) = f[2].parse::<u32>()
            && !gids.contains(&g)
        {
            gids.push(g);
        }
    }
    Ok(Principal {
        uid,
        gids,
        label: format!("user {name} (uid {uid})"),
    })
}

/// A login account as `/etc/passwd` names it: what `tiershim launch` becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub uid: u32,
    /// The primary group: the only group the agent keeps.
    pub gid: u32,
    pub home: PathBuf,
}

/// The account `user` (a name, or a uid with a passwd entry) from `/etc/passwd` (no NSS).
pub fn account(user: &str) -> Result<Account, String> {
    let passwd = std::fs::read_to_string("/etc/passwd").map_err(|e| format!("cannot read /etc/passwd: {e}"))?;
    account_in(user, &passwd)
}

fn account_in(user: &str, passwd: &str) -> Result<Account, String> {
    passwd
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            if f.len() < 6 || !(f[0] == user || f[2] == user) {
                return None;
            }
            Some(Account {
                name: f[0].to_string(),
                uid: f[2].parse().ok()?,
                gid: f[3].parse().ok()?,
                home: PathBuf::from(f[5]),
            })
        })
        .ok_or_else(|| format!("no user `{user}` in /etc/passwd"))
}

/// The name of a group by gid, from `/etc/group`.
pub fn group_name(gid: u32) -> Option<String> {
    let group = std::fs::read_to_string("/etc/group").ok()?;
    group.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 3 && f[2].parse::<u32>().ok() == Some(gid)).then(|| f[0].to_string())
    })
}

/// Every directory above `path` (its canonical form), from `/` down to its parent.
fn ancestors(path: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = path.ancestors().skip(1).map(Path::to_path_buf).collect();
    out.reverse();
    out
}

/// Can `p` execute the file at `path`: search permission on every directory down to it and
/// execute permission on the file (and read, for a script, whose interpreter opens it). The
/// path is judged where it really lives (symlinks resolved). `None` when it does not exist.
pub fn can_execute(p: &Principal, path: &Path) -> Option<bool> {
    let real = std::fs::canonicalize(path).ok()?;
    let meta = std::fs::metadata(&real).ok()?;
    if !meta.is_file() {
        return Some(false);
    }
    for dir in ancestors(&real) {
        match std::fs::metadata(&dir) {
            Ok(m) if p.may(&m, Perm::Exec) => {}
            _ => return Some(false),
        }
    }
    let script = is_script(&real);
    Some(p.may(&meta, Perm::Exec) && (!script || p.may(&meta, Perm::Read)))
}

/// Does the file start with `#!`?
pub fn is_script(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == b"#!")
}

/// Why `p` could change what is at `path`, if it could: write the file itself, or replace it
/// (or a directory above it) through a writable directory. A sticky directory (`/tmp`) only lets
/// a user replace its own entries. `path` is judged as named (not through a symlink at the end),
/// because the gate reads it through that name.
pub fn writable_by(p: &Principal, path: &Path) -> Option<String> {
    if p.is_root() {
        return Some("root can write anything".into());
    }
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return None;
    };
    if !meta.file_type().is_symlink() && p.may(&meta, Perm::Write) {
        return Some(format!(
            "{} can write {} (mode {:o}, owner uid {})",
            p.label,
            path.display(),
            meta.mode() & 0o7777,
            meta.uid()
        ));
    }
    // Walk up: a directory the principal can write (and search) lets it rename the entry
    // below it, unless the directory is sticky and the entry belongs to someone else.
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut child = abs.clone();
    let mut child_meta = meta;
    while let Some(dir) = child.parent().map(Path::to_path_buf) {
        let Ok(dmeta) = std::fs::metadata(&dir) else {
            break;
        };
        if p.may(&dmeta, Perm::Write) && p.may(&dmeta, Perm::Exec) {
            let sticky = dmeta.mode() & 0o1000 != 0;
            if !sticky || child_meta.uid() == p.uid || dmeta.uid() == p.uid {
                return Some(format!(
                    "{} can write the directory {} (mode {:o}, owner uid {}) and so replace {}",
                    p.label,
                    dir.display(),
                    dmeta.mode() & 0o7777,
                    dmeta.uid(),
                    child.display()
                ));
            }
        }
        if dir == Path::new("/") {
            break;
        }
        child_meta = dmeta;
        child = dir;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWD: &str =
        "root:x:0:0:root:/root:/bin/bash\nagent:x:1000:1000::/home/agent:/bin/sh\nnobody:x:65534:65534::/:/usr/sbin/nologin\n";
    const GROUP: &str = "root:x:0:\nagent:x:1000:\ndocker:x:999:agent,ops\ntiershim:x:998:\n";

    #[test]
    fn a_user_is_found_by_name_or_number_with_its_groups() {
        let p = lookup_in("agent", PASSWD, GROUP).unwrap();
        assert_eq!(p.uid, 1000);
        assert_eq!(p.gids, vec![1000, 999]);
        assert_eq!(p.label, "user agent (uid 1000)");
        assert_eq!(lookup_in("1000", PASSWD, GROUP).unwrap(), p);
        let n = lookup_in("4242", PASSWD, GROUP).unwrap();
        assert_eq!((n.uid, n.gids.len()), (4242, 0));
        assert!(lookup_in("ghost", PASSWD, GROUP).unwrap_err().contains("no user `ghost`"));
    }

    #[test]
    fn owner_bits_then_group_bits_then_other_bits_decide() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, "x").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o604)).unwrap();
        let meta = std::fs::metadata(&f).unwrap();
        let owner = Principal {
            uid: meta.uid(),
            gids: vec![],
            label: "owner".into(),
        };
        let member = Principal {
            uid: meta.uid().wrapping_add(1),
            gids: vec![meta.gid()],
            label: "member".into(),
        };
        let other = Principal {
            uid: meta.uid().wrapping_add(1),
            gids: vec![],
            label: "other".into(),
        };
        if owner.is_root() {
            // Root's own files: the owner model still holds for others.
            assert!(!member.may(&meta, Perm::Read));
        } else {
            assert!(owner.may(&meta, Perm::Write));
            assert!(!member.may(&meta, Perm::Read), "group bits are 0 even though others may read");
        }
        assert!(other.may(&meta, Perm::Read));
        assert!(!other.may(&meta, Perm::Write));
        assert!(!other.may(&meta, Perm::Exec));
    }
}
