//! Local files a call names (curl's `-o`, `-d @f`, `gh api --input f`, …): where they really
//! are and whether the call may touch them.
//!
//! Two halves, kept apart on purpose:
//! - [`gather`] does the I/O, in the gate (and in `tiershim explain`) before `decide()`: it
//!   resolves each path against the working directory, following symlinks component by
//!   component, and reads the files whose contents the decision needs (bounded, and only when
//!   the path passed the checks);
//! - [`check`] is pure and runs inside `decide()`: every file must lie inside the working
//!   directory, both as written and where its symlinks lead, with no hidden component (`.git/`,
//!   `.ssh/`, `.bashrc`) below it and no `..`; a file read into a request must not be a
//!   credential file either. Without facts (policy examples) the check is lexical: relative
//!   paths are inside, absolute ones are not.
//!
//! Symlinks: a path is judged where it really leads. A symlink inside the working directory
//! that points inside it (and not at a hidden file) is fine; one that points out, or at a
//! hidden or credential file, is refused; a dangling one is refused (writing through it would
//! create its target wherever it points). The check runs before the real tool opens the file,
//! so an agent that swaps a link in between wins the race; the restricted shell keeps it from
//! running anything alongside.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use crate::grammar::{Access, Contents, Invocation, LocalFile};

/// The most a file read for a decision may hold; a larger one is "not readable" and the call
/// is judged without its contents.
pub const MAX_CONTENT: u64 = 1 << 20;

/// Names of files that hold credentials (compared case-insensitively; `*` is a wildcard). A
/// call may not send them; hidden files are refused anyway.
const CREDENTIAL_NAMES: &[&str] = &[
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.ppk",
    "*.gpg",
    "*.asc",
    "*.tfstate",
    "*.tfvars",
    "*.env",
    "credentials",
    "credentials.*",
    "secrets",
    "secrets.*",
    "hosts.yml",
    "netrc",
    "_netrc",
    "authorized_keys",
    "known_hosts",
    "htpasswd",
    "shadow",
];

/// What the gate found out about the call's files, before `decide()`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalFacts {
    /// The working directory as the process sees it.
    pub workdir: Option<PathBuf>,
    /// The same, symlinks resolved.
    pub workdir_real: Option<PathBuf>,
    /// Per path as written: where it really leads, or why that could not be found out.
    pub resolved: BTreeMap<String, Result<PathBuf, String>>,
}

/// A file the call may not touch, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub file: LocalFile,
    pub why: String,
}

/// Resolve every file of `inv` against `cwd`, and read the ones whose contents the decision
/// needs. I/O; only the gate and `explain` call it.
pub fn gather(inv: &Invocation, cwd: &Path) -> (LocalFacts, Contents) {
    let mut facts = LocalFacts {
        workdir: Some(cwd.to_path_buf()),
        workdir_real: std::fs::canonicalize(cwd).ok(),
        resolved: BTreeMap::new(),
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
    for f in inv.files.iter().filter(|f| f.content && f.access == Access::Read) {
        if contents.contains_key(&f.path) {
            continue;
        }
        let text = if problem(f, &facts).is_some() {
            Err("not read: the gate refuses this file".to_string())
        } else {
            match facts.resolved.get(&f.path) {
                Some(Ok(real)) => read_bounded(real),
                _ => Err("not resolved".to_string()),
            }
        };
        contents.insert(f.path.clone(), text);
    }
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

fn has_dotdot(p: &str) -> bool {
    Path::new(p).components().any(|c| c == Component::ParentDir)
}

/// The files of `inv` the call may not touch. Pure.
pub fn check(inv: &Invocation, facts: &LocalFacts) -> Vec<Violation> {
    inv.files
        .iter()
        .filter_map(|f| problem(f, facts).map(|why| Violation { file: f.clone(), why }))
        .collect()
}

fn problem(f: &LocalFile, facts: &LocalFacts) -> Option<String> {
    if f.path.is_empty() {
        return Some("an empty file name".into());
    }
    if has_dotdot(&f.path) {
        return Some("a path with `..`".into());
    }
    let given = Path::new(&f.path);
    let rel: PathBuf = if given.is_absolute() {
        let inside = [&facts.workdir, &facts.workdir_real]
            .into_iter()
            .flatten()
            .find_map(|w| given.strip_prefix(w).ok());
        match inside {
            Some(r) => r.to_path_buf(),
            None => return Some(outside(facts)),
        }
    } else {
        given.to_path_buf()
    };
    if let Some(why) = bad_components(&rel, f.access) {
        return Some(why);
    }
    // Without a working directory (policy examples) the lexical checks are all there is.
    facts.workdir.as_ref()?;
    match facts.resolved.get(&f.path) {
        None => Some("a file the gate did not resolve".into()),
        Some(Err(e)) => Some(e.clone()),
        Some(Ok(real)) => {
            let Some(wr) = &facts.workdir_real else {
                return Some("the working directory cannot be resolved".into());
            };
            match real.strip_prefix(wr) {
                Err(_) => Some(format!("a path that leads to {}, {}", real.display(), outside(facts))),
                Ok(r) => bad_components(r, f.access).map(|why| format!("a path that leads to {} ({why})", real.display())),
            }
        }
    }
}

fn outside(facts: &LocalFacts) -> String {
    match &facts.workdir {
        Some(w) => format!("outside the working directory {}", w.display()),
        None => "an absolute path (only paths inside the working directory are allowed)".into(),
    }
}

/// A hidden component anywhere below the working directory; for reads, a credential file.
fn bad_components(rel: &Path, access: Access) -> Option<String> {
    for c in rel.components() {
        let Component::Normal(name) = c else {
            continue;
        };
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            return Some(format!("a hidden file or directory ({name})"));
        }
    }
    if access == Access::Read
        && let Some(name) = rel.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase())
        && CREDENTIAL_NAMES.iter().any(|p| wildcard(p.as_bytes(), name.as_bytes()))
    {
        return Some(format!("a credential file ({name})"));
    }
    None
}

fn wildcard(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|k| wildcard(rest, &s[k..])),
        Some((c, rest)) => s.first() == Some(c) && wildcard(rest, &s[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::Tool;

    fn inv(files: &[(&str, Access, bool)]) -> Invocation {
        let mut i = Invocation::new(Tool::Curl, &[]);
        i.files = files
            .iter()
            .map(|(p, a, c)| LocalFile {
                path: p.to_string(),
                access: *a,
                flag: "-o".into(),
                content: *c,
            })
            .collect();
        i
    }

    fn why(path: &str, access: Access, facts: &LocalFacts) -> Option<String> {
        check(&inv(&[(path, access, false)]), facts).pop().map(|v| v.why)
    }

    #[test]
    fn without_facts_relative_plain_names_pass_and_the_rest_does_not() {
        let none = LocalFacts::default();
        assert_eq!(why("out.json", Access::Write, &none), None);
        assert_eq!(why("./d/out.json", Access::Write, &none), None);
        assert!(why("/tmp/x", Access::Write, &none).unwrap().contains("absolute"));
        assert!(why("../x", Access::Write, &none).unwrap().contains(".."));
        assert!(why("a/../../x", Access::Read, &none).unwrap().contains(".."));
        assert!(why(".bashrc", Access::Write, &none).unwrap().contains("hidden"));
        assert!(why("d/.git/hooks/pre-commit", Access::Write, &none).unwrap().contains("hidden"));
        assert!(why("", Access::Write, &none).is_some());
    }

    #[test]
    fn credential_files_may_not_be_read_but_may_be_named_by_writes() {
        let none = LocalFacts::default();
        for name in ["id_ed25519", "k/server.PEM", "prod.env", "credentials.json", "hosts.yml"] {
            assert!(why(name, Access::Read, &none).unwrap().contains("credential"), "{name}");
        }
        assert_eq!(why("server.pem", Access::Write, &none), None);
        assert_eq!(why("body.json", Access::Read, &none), None);
    }

    struct Dir {
        tmp: tempfile::TempDir,
    }

    impl Dir {
        fn new() -> Dir {
            let tmp = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(tmp.path().join("work/sub")).unwrap();
            std::fs::create_dir_all(tmp.path().join("work/.git")).unwrap();
            std::fs::write(tmp.path().join("secret.txt"), "s").unwrap();
            std::fs::write(tmp.path().join("work/body.json"), "{\"a\":1}").unwrap();
            Dir { tmp }
        }
        fn work(&self) -> PathBuf {
            self.tmp.path().join("work")
        }
        fn link(&self, target: &Path, name: &str) {
            std::os::unix::fs::symlink(target, self.work().join(name)).unwrap();
        }
        fn judge(&self, path: &str, access: Access) -> Option<String> {
            let i = inv(&[(path, access, false)]);
            let (facts, _) = gather(&i, &self.work());
            check(&i, &facts).pop().map(|v| v.why)
        }
    }

    #[test]
    fn paths_inside_the_working_directory_pass_written_either_way() {
        let d = Dir::new();
        assert_eq!(d.judge("out.json", Access::Write), None);
        assert_eq!(d.judge("sub/new/out.json", Access::Write), None);
        let abs = d.work().join("sub/x.txt");
        assert_eq!(d.judge(abs.to_str().unwrap(), Access::Write), None);
        assert!(d.judge("/etc/passwd", Access::Read).unwrap().contains("outside"));
        assert!(d.judge(".git/config", Access::Read).unwrap().contains("hidden"));
    }

    #[test]
    fn symlinks_are_judged_where_they_lead() {
        let d = Dir::new();
        d.link(&d.tmp.path().join("secret.txt"), "innocent.txt");
        d.link(&d.tmp.path().join("nowhere/evil"), "dangling.txt");
        d.link(&d.work().join("sub"), "alias");
        d.link(&d.work().join(".git"), "gitdir");
        d.link(d.tmp.path(), "up");
        assert!(d.judge("innocent.txt", Access::Read).unwrap().contains("outside"));
        assert!(d.judge("innocent.txt", Access::Write).unwrap().contains("outside"));
        assert!(d.judge("dangling.txt", Access::Write).unwrap().contains("does not exist"));
        assert!(d.judge("up/secret.txt", Access::Read).unwrap().contains("outside"));
        assert!(d.judge("gitdir/config", Access::Write).unwrap().contains("hidden"));
        assert_eq!(d.judge("alias/out.txt", Access::Write), None);
    }

    #[test]
    fn a_working_directory_reached_through_a_symlink_still_holds_its_files() {
        let d = Dir::new();
        let via = d.tmp.path().join("via");
        std::os::unix::fs::symlink(d.work(), &via).unwrap();
        let i = inv(&[
            ("body.json", Access::Read, true),
            (via.join("sub/o").to_str().unwrap(), Access::Write, false),
        ]);
        let (facts, contents) = gather(&i, &via);
        assert_eq!(check(&i, &facts), vec![]);
        assert_eq!(contents.get("body.json"), Some(&Ok("{\"a\":1}".to_string())));
    }

    #[test]
    fn contents_are_read_only_for_files_that_pass_and_only_up_to_the_bound() {
        let d = Dir::new();
        d.link(&d.tmp.path().join("secret.txt"), "innocent.txt");
        std::fs::write(d.work().join("big.json"), vec![b'x'; MAX_CONTENT as usize + 1]).unwrap();
        let i = inv(&[
            ("innocent.txt", Access::Read, true),
            ("big.json", Access::Read, true),
            ("missing.json", Access::Read, true),
            ("body.json", Access::Read, false),
        ]);
        let (_, contents) = gather(&i, &d.work());
        assert!(contents["innocent.txt"].as_ref().unwrap_err().contains("refuses"));
        assert!(contents["big.json"].as_ref().unwrap_err().contains("larger"));
        assert!(contents["missing.json"].is_err());
        assert!(!contents.contains_key("body.json"));
    }
}
