//! What compose makes of a call that the grammar can say without reading a file: the marks a
//! `compose up` gets from what its files come to ([`mark`], the judgement itself is
//! `crate::compose`'s, which reads them), the project a service belongs to by text on a remote
//! host ([`resolve_remote`]), and compose's normalised project names.
//!
//! Must not: read anything. `crate::compose` reads the local files and fills what is left
//! ([`resolve_targets`] with its resolver).

use std::path::{Component, Path, PathBuf};

use crate::grammar::{Action, ComposeFiles, Invocation, Project, Target};
use crate::sanitize::escape;

/// The mark of a `compose up` in an ssh command whose files the gate has not read over ssh (or
/// could not): it may start anything.
pub const REMOTE: &str = "compose-remote";
/// The files ask for something `docker run` needs tier 3 for.
pub const ESCALATES: &str = "compose-escalates";
/// The agent can change the files (or a bind source).
pub const WRITABLE: &str = "compose-writable";
/// The files could not be read or parsed.
pub const UNREAD: &str = "compose-unread";
/// The marks a `compose up` gets from what its files come to (or from not reading them).
pub const FILE_MARKS: [&str; 4] = [ESCALATES, WRITABLE, REMOTE, UNREAD];

/// Compose's `NormalizeProjectName`: lower-case, keep `[a-z0-9_-]`, trim leading `_` and `-`.
pub fn normalize(s: &str) -> String {
    let kept: String = s
        .to_lowercase()
        .chars()
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-'))
        .collect();
    kept.trim_start_matches(['_', '-']).to_string()
}

/// How a project is worked out from `--project-directory`, `-f` and `--env-file`.
pub type Resolver<'a> = &'a dyn Fn(&ComposeFiles) -> Result<String, String>;

/// Replace every [`Project::Implied`] in the call's targets with what `resolve` makes of it.
pub fn resolve_targets(inv: &mut Invocation, resolve: Resolver) {
    for action in &mut inv.actions {
        for t in &mut action.targets {
            if let Target::Service { project, .. } = t
                && let Project::Implied(files) = project
            {
                *project = match resolve(files) {
                    Ok(p) => Project::Named(p),
                    Err(why) => Project::Unknown(why),
                };
            }
        }
    }
}

/// What the files a local `compose up` reads come to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    /// What they ask for that `docker run` needs tier 3 or more for, one line each
    /// (`service web: privileged`).
    pub escalates: Vec<String>,
    /// What of it the agent can change (a compose file, `.env`, the project directory where it
    /// could add an override file, a bind source): then the agent, not the operator, decides
    /// what `compose up` starts.
    pub changeable: Vec<String>,
}

/// Mark a `compose up` by what its files come to: `compose-escalates`, `compose-writable`, or
/// `compose-unread` when they could not be read.
pub fn mark(a: &mut Action, found: &Result<Judged, String>) {
    match found {
        Ok(j) => {
            if !j.escalates.is_empty() {
                a.add(ESCALATES);
            }
            if !j.changeable.is_empty() {
                a.add(WRITABLE);
                // What the agent can change, named (file and key) in a refusal.
                for c in &j.changeable {
                    a.add(format!("{WRITABLE}: {c}"));
                }
            }
        }
        Err(_) => a.add(UNREAD),
    }
}

/// The project name on a remote host, from what the command shows: `-p` is handled by the
/// grammar; here the directory is `--project-directory`, else that of the first `-f`, else the
/// `cd` in front of the command. Relative paths are taken from the `cd`.
pub fn resolve_remote(cd: Option<&str>, dir: &Option<String>, files: &[String]) -> Result<String, String> {
    let join = |p: &str| -> Option<PathBuf> {
        if p.starts_with('/') {
            Some(lexical(Path::new(p)))
        } else {
            cd.map(|c| lexical(&Path::new(c).join(p)))
        }
    };
    let unknown = || {
        "on a remote host the gate cannot tell the compose project; name it with -p, or cd into its directory in front (cd /srv/shop && docker compose …)"
            .to_string()
    };
    let project_dir = match (dir, files.first()) {
        (Some(d), _) => join(d).ok_or_else(unknown)?,
        (None, Some(f)) => join(f).and_then(|f| f.parent().map(Path::to_path_buf)).ok_or_else(unknown)?,
        (None, None) => lexical(Path::new(cd.ok_or_else(unknown)?)),
    };
    from_dir(&project_dir).map_err(|_| unknown())
}

/// The normalised base name of a project directory.
pub fn from_dir(dir: &Path) -> Result<String, String> {
    match dir.components().next_back() {
        Some(Component::Normal(n)) => {
            let n = normalize(&n.to_string_lossy());
            if n.is_empty() {
                Err(format!("the directory {} gives no compose project name", shown(dir)))
            } else {
                Ok(n)
            }
        }
        _ => Err(format!("the directory {} gives no compose project name", shown(dir))),
    }
}

/// `.` and `..` resolved by text, as compose does with `filepath.Abs`/`Clean`.
pub fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

pub fn shown(p: &Path) -> String {
    escape(&p.to_string_lossy()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn normalize_is_composes() {
        assert_eq!(normalize("My App.v2"), "myappv2");
        assert_eq!(normalize("__-shop"), "shop");
        assert_eq!(normalize("web_1-x"), "web_1-x");
        assert_eq!(normalize("ÄÖ"), "");
    }

    #[test]
    fn remote_projects_come_from_the_cd_or_an_absolute_path() {
        let r = |cd, dir: Option<&str>, files: &[&str]| {
            resolve_remote(cd, &dir.map(String::from), &files.iter().map(|x| x.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(r(Some("/srv/media"), None, &[]), Ok("media".into()));
        assert_eq!(r(Some("apps/Media"), None, &[]), Ok("media".into()));
        assert_eq!(r(None, None, &["/srv/shop/compose.yaml"]), Ok("shop".into()));
        assert_eq!(r(Some("/srv"), None, &["shop/compose.yaml"]), Ok("shop".into()));
        assert_eq!(r(Some("/srv/x"), Some("../shop"), &[]), Ok("shop".into()));
        assert!(r(None, None, &[]).unwrap_err().contains("name it with -p"));
        assert!(r(None, None, &["compose.yaml"]).is_err());
        assert!(r(Some("/"), None, &[]).is_err());
        assert!(r(Some("/srv/x"), None, &["../compose.yaml"]).is_ok());
        assert!(r(Some(".."), None, &[]).is_err());
    }
}
