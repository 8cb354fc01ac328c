//! The local-write model on the remote side of ssh (DESIGN §3.2): where a remote command may
//! write, judged from the text the gate can see.
//!
//! A remote host has no working directory the gate knows and no work trees it can inspect, so
//! the rule is the operator's: `remote.<host>.workspaces` in `tiershim.yaml` names the remote
//! directories where a tier-2 call may write. Below tier 3, a remote write (a file option such
//! as curl's `-o`, or a git command that changes a work tree) must lie inside one of them, with
//! no hidden component below it (`.git/`, `.ssh/`, `.bashrc`) and no `..`; anything else, or a
//! host without workspaces, needs tier 3. A relative path counts only when the leading `cd` is
//! absolute: the login directory is the remote user's, which the gate does not know. A file
//! named `HEAD` or `commondir` (which make their directory a git directory) is never written
//! below tier 3, and files whose names the server chooses need tier 3. Where a
//! path really leads (symlinks) is read over ssh before a tier-2 call runs
//! (`crate::remote_facts`), and judged again by [`judge`].
//!
//! Owns also what `tiershim.yaml` says of a host (`remote.<host>`: [`RemoteHostFile`], validated
//! into [`RemoteHost`]).
//!
//! Must not: do I/O, or decide tiers. `decide()` turns what this module finds into findings.

use serde::Deserialize;

/// `remote.<host>:` in tiershim.yaml: what the operator says about one ssh host.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RemoteHostFile {
    /// Remote directories where tier-2 calls on this host may write.
    #[serde(default)]
    pub workspaces: Vec<String>,
    /// Compose project directories the operator vouches for although the login user can write
    /// them.
    #[serde(default)]
    pub compose: Vec<String>,
    /// The systemd units an agent may start, stop or restart at tier 2 on this host.
    #[serde(default)]
    pub units: Option<Vec<String>>,
}

/// One host's entry of `remote:`, validated. Paths are the remote host's, absolute and without
/// `..` or a trailing `/`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RemoteHost {
    /// Where a tier-2 remote call may write (and a remote git may change a work tree). Empty:
    /// nowhere, so every remote write needs tier 3.
    pub workspaces: Vec<String>,
    /// Compose project directories whose files the login user may write and the operator
    /// vouches for: a `compose up` there is still judged by what the files ask for, but not
    /// refused because the login user could change them.
    pub compose: Vec<String>,
    /// The units restartable at tier 2 (full names, `nginx` read as `nginx.service`). None:
    /// every unit but the host's access paths and plumbing; Some: only these.
    pub units: Option<Vec<String>>,
}

/// One host's entry validated; Err starts with the key it is about (`workspaces` entry …).
pub fn remote_host(h: &RemoteHostFile) -> std::result::Result<RemoteHost, String> {
    let dir =
        |key: &str, p: &str| -> std::result::Result<String, String> { normalize_dir(p).map_err(|why| format!("{key}` entry {p:?} {why}")) };
    let workspaces = h
        .workspaces
        .iter()
        .map(|p| dir("workspaces", p))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let compose = h
        .compose
        .iter()
        .map(|p| dir("compose", p))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    for c in &compose {
        if let Some(w) = workspaces.iter().find(|w| within(c, w).is_some()) {
            return Err(format!(
                "compose` entry {c} is inside the workspace {w}, where a tier-2 call may write: the gate cannot vouch for files the agent can change"
            ));
        }
    }
    let units = match &h.units {
        None => None,
        Some(list) => Some(
            list.iter()
                .map(|u| crate::grammar::systemd::listed_unit(u).map_err(|why| format!("units` entry {u:?} {why}")))
                .collect::<std::result::Result<Vec<_>, _>>()?,
        ),
    };
    Ok(RemoteHost {
        workspaces,
        compose,
        units,
    })
}

/// A remote directory named in `tiershim.yaml`: absolute, without `.`/`..` components, not `/`,
/// without a trailing `/`.
pub fn normalize_dir(p: &str) -> Result<String, String> {
    if !p.starts_with('/') {
        return Err("is not an absolute path".into());
    }
    let n = normalize(p).ok_or_else(|| "holds `..`".to_string())?;
    if n == "/" {
        return Err("is `/`: name the directory that holds the work".into());
    }
    if n.chars().any(char::is_control) {
        return Err("holds a control character".into());
    }
    Ok(n)
}

/// An absolute path with `.` and empty components dropped; None when it holds `..`.
fn normalize(p: &str) -> Option<String> {
    let mut out = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => return None,
            other => out.push(other),
        }
    }
    Some(format!("/{}", out.join("/")))
}

/// The rest of `path` below `dir` (`""` when they are the same), compared component by
/// component; None when `path` is not inside `dir`.
pub fn within<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
    let rest = path.strip_prefix(dir)?;
    if rest.is_empty() { Some("") } else { rest.strip_prefix('/') }
}

/// Where a path named in a remote command is on the remote host, by text: an absolute path as
/// it is, a relative one below an absolute `cd`. Err says why the gate cannot tell.
pub fn locate(path: &str, cd: Option<&str>) -> Result<String, String> {
    if path.is_empty() {
        return Err("an empty path".into());
    }
    if path.chars().any(char::is_control) {
        return Err("a path with a control character".into());
    }
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        match cd {
            Some(c) if c.starts_with('/') => format!("{c}/{path}"),
            Some(_) => return Err("a path relative to a relative `cd`, below the remote login directory the gate does not know".into()),
            None => {
                return Err(
                    "a relative path without an absolute `cd` in front, so below the remote login directory the gate does not know".into(),
                );
            }
        }
    };
    normalize(&joined).ok_or_else(|| "a path with `..`".to_string())
}

/// Whether a located remote path may be written below tier 3: inside one of `workspaces`, with
/// no hidden component below it. A repository directory (`repository`) may be the workspace
/// itself; a file must be below it. Ok names the workspace.
pub fn judge<'a>(path: &str, workspaces: &'a [String], repository: bool) -> Result<&'a str, String> {
    if workspaces.is_empty() {
        return Err(
            "this host has no workspaces in tiershim.yaml (`remote.<host>.workspaces`), so nothing is written there below tier 3".into(),
        );
    }
    for w in workspaces {
        let Some(rest) = within(path, w) else { continue };
        if rest.is_empty() && !repository {
            return Err(format!("it is the workspace {w} itself"));
        }
        if let Some(hidden) = rest.split('/').find(|c| c.starts_with('.')) {
            return Err(format!("{hidden} below the workspace {w} is hidden (a dotfile or a git directory)"));
        }
        // As locally (files.rs): a `HEAD` or `commondir` makes its directory a git directory.
        if !repository && let Some(key) = rest.rsplit('/').next().filter(|n| matches!(*n, "HEAD" | "commondir")) {
            return Err(format!("it names {key}, which makes its directory a git directory"));
        }
        return Ok(w);
    }
    Err(format!("it is outside this host's workspaces ({})", workspaces.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> Vec<String> {
        vec!["/srv/work".to_string(), "/data/agent".to_string()]
    }

    #[test]
    fn configured_directories_are_absolute_and_plain() {
        assert_eq!(normalize_dir("/srv/work/"), Ok("/srv/work".into()));
        assert_eq!(normalize_dir("//srv/./work"), Ok("/srv/work".into()));
        assert!(normalize_dir("srv/work").unwrap_err().contains("absolute"));
        assert!(normalize_dir("/srv/../etc").unwrap_err().contains(".."));
        assert!(normalize_dir("/").unwrap_err().contains("`/`"));
        assert!(normalize_dir("/srv/a\nb").unwrap_err().contains("control"));
    }

    #[test]
    fn a_path_is_located_from_an_absolute_cd_only() {
        assert_eq!(locate("/srv/work/x", None), Ok("/srv/work/x".into()));
        assert_eq!(locate("out/x.json", Some("/srv/work")), Ok("/srv/work/out/x.json".into()));
        assert_eq!(locate("./x", Some("/srv/work/")), Ok("/srv/work/x".into()));
        assert!(locate("x", None).unwrap_err().contains("login directory"));
        assert!(locate("x", Some("work")).unwrap_err().contains("relative `cd`"));
        assert!(locate("../x", Some("/srv/work")).unwrap_err().contains(".."));
        assert!(locate("/srv/work/../../etc/passwd", None).is_err());
        assert!(locate("", Some("/srv")).is_err());
    }

    #[test]
    fn writes_land_inside_a_workspace_below_no_hidden_name() {
        assert_eq!(judge("/srv/work/app/out.json", &ws(), false), Ok("/srv/work"));
        assert_eq!(judge("/data/agent/r", &ws(), true), Ok("/data/agent"));
        assert_eq!(judge("/srv/work", &ws(), true), Ok("/srv/work"));
        assert!(judge("/srv/work", &ws(), false).unwrap_err().contains("workspace /srv/work itself"));
        assert!(judge("/srv/workshop/x", &ws(), false).unwrap_err().contains("outside"));
        assert!(judge("/etc/cron.d/x", &ws(), false).unwrap_err().contains("outside"));
        assert!(judge("/srv/work/app/.git/config", &ws(), false).unwrap_err().contains(".git"));
        assert!(judge("/srv/work/.bashrc", &ws(), false).unwrap_err().contains("hidden"));
        assert!(judge("/srv/work/x", &[], false).unwrap_err().contains("no workspaces"));
        assert!(judge("/srv/work/x/HEAD", &ws(), false).unwrap_err().contains("git directory"));
        assert!(judge("/srv/work/x/commondir", &ws(), false).unwrap_err().contains("git directory"));
    }
}
