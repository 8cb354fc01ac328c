//! Local files a call names (curl's `-o`, `-d @f`, `gh api --input f`, `gh release download
//! -D`, …): where they really are and whether the call may touch them. This is the local-write
//! model of DESIGN §3.2: every grammar declares the files a call reads or writes as
//! [`LocalFile`]s, and `decide()` judges each one here, whatever the tool.
//!
//! Two halves, kept apart on purpose (in two files: this one is pure, `gather.rs` does I/O):
//! - [`gather`] and [`Fence::of`] do the I/O, in the gate (and in `tiershim explain`) before
//!   `decide()`: each path is resolved against the working directory, following symlinks
//!   component by component; for a write, the directories along its real path are looked at for
//!   the entries that make a git directory; the files whose contents the decision needs are read
//!   (bounded, and only when the path passed the checks); the install's workspaces and the paths
//!   no call may touch are made canonical;
//! - [`check`] is pure and runs inside `decide()`.
//!
//! Every file lies inside the working directory, both as written and where its symlinks lead,
//! with no hidden component (`.git/`, `.ssh/`, `.bashrc`) below it and no `..`, and is none of
//! the install's own files (its tier directory, skills, policy, real tools, tool home, secrets,
//! audit log and state). A file read into a request is not a credential file either.
//!
//! Writes (the fence): tier 1 writes no file; tier 2 writes only below a workspace
//! (`workspaces:` in tiershim.yaml, the repositories' work trees); a write outside them, or of
//! files whose names the server chooses (`curl -J`, an archive unpacked), needs tier 3. At every
//! tier a write never goes inside a git directory, nor names an entry that makes a directory
//! one (`HEAD`, `commondir`, or `objects`/`refs` beside a `HEAD`: git takes any directory
//! holding them for a bare repository and runs what its `config` says).
//!
//! Without facts (policy examples) the check is lexical: relative paths are inside the working
//! directory and a workspace, absolute ones only where they name one.
//!
//! Symlinks: a path is judged where it really leads. A symlink that points at a hidden or
//! protected file, or out of the working directory for a read, is refused; a dangling one is
//! refused (writing through it would create its target wherever it points). The check runs
//! before the real tool opens the file, so an agent that swaps a link in between wins the race;
//! the restricted shell keeps it from running anything alongside, and the kernel fence (Landlock)
//! holds the same line underneath.

mod gather;

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

pub use gather::gather;

use crate::grammar::{Access, Contents, Invocation, LocalFile};
use crate::packed::words;
use crate::policy::Required;

/// The most a file read for a decision may hold; a larger one is "not readable" and the call
/// is judged without its contents.
pub const MAX_CONTENT: u64 = 1 << 20;

words! {
    /// Names of files that hold credentials (compared case-insensitively; `*` is a wildcard). A
    /// call may not send them; hidden files are refused anyway.
    static CREDENTIAL_NAMES = &[
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
}

/// Entry names that make the directory holding them a git directory: git's `is_git_directory`
/// (setup.c) takes a directory with a valid `HEAD` and either `commondir` or both `objects/`
/// and `refs/` for a repository, and runs what its `config` names. No call writes `HEAD` or
/// `commondir`, so no call completes one; `objects` and `refs` only where no `HEAD` is.
const GIT_DIR_KEYS: &[&str] = &["HEAD", "commondir"];
const GIT_DIR_PARTS: &[&str] = &["objects", "refs"];

/// Where calls may write, from the install config (DESIGN §3.2): the workspaces, and the paths
/// no call touches. Made by [`Fence::of`] (I/O: paths are made canonical) and handed to
/// `decide()` as data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fence {
    /// `workspaces:`, each as written and canonical: tier 2 writes only below one of them.
    pub workspaces: Vec<PathBuf>,
    /// What no call writes (or reads), and what it is, each as written and canonical.
    pub protected: Vec<(PathBuf, String)>,
    /// The kernel fence is on (`kernel_fence`): at tier 1 no repository may be written, by the
    /// real tool's own side effects either (a fetch's objects and refs).
    pub kernel_fence: bool,
}

/// Which of the entries that make a git directory an existing directory holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GitMarks {
    pub head: bool,
    pub commondir: bool,
    pub objects: bool,
    pub refs: bool,
}

impl GitMarks {
    /// git would take the directory for a repository.
    pub fn is_git_dir(self) -> bool {
        self.head && (self.commondir || (self.objects && self.refs))
    }
}

/// What the gate found out about the call's files, before `decide()`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalFacts {
    /// The working directory as the process sees it.
    pub workdir: Option<PathBuf>,
    /// The same, symlinks resolved.
    pub workdir_real: Option<PathBuf>,
    /// Per path as written: where it really leads, or why that could not be found out.
    pub resolved: BTreeMap<String, Result<PathBuf, String>>,
    /// For every existing directory along the real path of a write: the git entries it holds.
    pub dirs: BTreeMap<PathBuf, GitMarks>,
    /// The files read for their contents ([`LocalFile::content`]), as read: what the decision
    /// was made on, and what the tool is handed at exec (`crate::script_input::seal_contents`).
    pub contents: Contents,
}

/// How a file of the call stands against the fence: what it needs (a tier, or never) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    pub file: LocalFile,
    pub required: Required,
    pub why: String,
}

pub(super) fn has_dotdot(p: &str) -> bool {
    Path::new(p).components().any(|c| c == Component::ParentDir)
}

/// Every file of `inv` with what it needs: a write at least tier 2; a write outside the
/// workspaces, or of names the server chooses, tier 3; a file the call may not touch, never.
/// Reads that pass are not listed. Pure.
pub fn check(inv: &Invocation, facts: &LocalFacts, fence: &Fence) -> Vec<Judged> {
    inv.files
        .iter()
        .filter_map(|f| {
            let (required, why) = if f.access.writes() {
                write_requirement(f, facts, fence)
            } else {
                (Required::Never, read_problem(f, facts).or_else(|| protected(f, facts, fence))?)
            };
            Some(Judged {
                file: f.clone(),
                required,
                why,
            })
        })
        .collect()
}

/// One of the install's own paths that `f` touches (or, for a write into a directory, holds).
fn protected(f: &LocalFile, facts: &LocalFacts, fence: &Fence) -> Option<String> {
    let given = Path::new(&f.path);
    let mut paths = Vec::new();
    if given.is_absolute() {
        paths.push(given.to_path_buf());
    } else if let Some(w) = &facts.workdir {
        paths.push(w.join(given));
    }
    if let Some(Ok(real)) = facts.resolved.get(&f.path) {
        paths.push(real.clone());
    }
    let into_dir = matches!(f.access, Access::WriteNamed | Access::WriteTree);
    for p in &paths {
        for (q, what) in &fence.protected {
            if p.starts_with(q) || (into_dir && q.starts_with(p)) {
                return Some(format!("{what} ({})", q.display()));
            }
        }
    }
    None
}

/// A read the call may not make, and why.
pub(super) fn read_problem(f: &LocalFile, facts: &LocalFacts) -> Option<String> {
    place_problem(f, facts, true)
}

/// Why the file is not one a call may name: not inside the working directory (as written and
/// where its symlinks lead), a hidden component below it, `..`, and for reads a credential file.
fn place_problem(f: &LocalFile, facts: &LocalFacts, reading: bool) -> Option<String> {
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
    let bad = |r: &Path| hidden(r).or_else(|| if reading { credential(r) } else { None });
    if let Some(why) = bad(&rel) {
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
                Ok(r) => bad(r).map(|why| format!("a path that leads to {} ({why})", real.display())),
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

/// What a write needs, and why: never (the first reason found), else tier 3, else tier 2.
fn write_requirement(f: &LocalFile, facts: &LocalFacts, fence: &Fence) -> (Required, String) {
    let never = |why: String| (Required::Never, why);
    if let Some(why) = place_problem(f, facts, false) {
        return never(why);
    }
    if let Some(why) = protected(f, facts, fence) {
        return never(format!("a path into {why}"));
    }
    // Where the tool will write: where the path's symlinks lead.
    let real = match facts.resolved.get(&f.path) {
        Some(Ok(r)) if facts.workdir.is_some() => r.clone(),
        // Without facts (policy examples): a relative path below the working directory.
        _ => {
            if let Some(why) = git_entry(Path::new(&f.path), facts) {
                return never(why);
            }
            return lexical_kind(f);
        }
    };
    if let Some(dir) = real.ancestors().find(|d| facts.dirs.get(*d).is_some_and(|m| m.is_git_dir())) {
        return never(format!("a path inside the git directory {}", dir.display()));
    }
    if let Some(why) = git_entry(Path::new(&f.path), facts).or_else(|| git_entry(&real, facts)) {
        return never(why);
    }
    let workspace = fence.workspaces.iter().find(|w| real.starts_with(w));
    match (f.access, workspace) {
        (Access::WriteNamed, _) => (
            Required::Tier(3),
            format!(
                "the server names the files written into {}, so they could be hidden files or a git directory",
                real.display()
            ),
        ),
        (Access::WriteTree, _) => (
            Required::Tier(3),
            format!(
                "the server chooses every name unpacked into {}, hidden files and git directories included",
                real.display()
            ),
        ),
        (_, None) => (Required::Tier(3), outside_workspaces(&real, fence)),
        (_, Some(w)) => (Required::Tier(2), format!("a file below the workspace {}", w.display())),
    }
}

/// Without facts: a relative write is inside a workspace; the kind decides.
fn lexical_kind(f: &LocalFile) -> (Required, String) {
    match f.access {
        Access::WriteNamed | Access::WriteTree => (Required::Tier(3), "the server names the files written".into()),
        _ => (Required::Tier(2), "a file below the working directory".into()),
    }
}

fn outside_workspaces(real: &Path, fence: &Fence) -> String {
    if fence.workspaces.is_empty() {
        format!(
            "{} is outside the workspaces (tiershim.yaml names none: `workspaces:` or `skills.repos`)",
            real.display()
        )
    } else {
        let mut names: Vec<String> = fence.workspaces.iter().map(|w| w.display().to_string()).collect();
        names.dedup();
        format!("{} is outside the workspaces ({})", real.display(), names.join(", "))
    }
}

/// An entry of `path` that makes the directory holding it a git directory: `HEAD` or
/// `commondir` anywhere, `objects` or `refs` in a directory that already holds a `HEAD`.
fn git_entry(path: &Path, facts: &LocalFacts) -> Option<String> {
    let mut dir = PathBuf::new();
    for c in path.components() {
        let name = c.as_os_str().to_string_lossy();
        if let Component::Normal(_) = c {
            if GIT_DIR_KEYS.iter().any(|k| name.eq_ignore_ascii_case(k)) {
                return Some(format!(
                    "{name} would make {} a git directory (git runs what a repository's config names)",
                    shown_dir(&dir)
                ));
            }
            if GIT_DIR_PARTS.iter().any(|k| name.eq_ignore_ascii_case(k)) && facts.dirs.get(&dir).is_some_and(|m| m.head) {
                return Some(format!(
                    "{name} beside {}/HEAD would make it a git directory (git runs what a repository's config names)",
                    dir.display()
                ));
            }
        }
        dir.push(c);
    }
    None
}

fn shown_dir(dir: &Path) -> String {
    if dir.as_os_str().is_empty() {
        "the working directory".into()
    } else {
        dir.display().to_string()
    }
}

/// A hidden component (`.git`, `.bashrc`).
fn hidden(rel: &Path) -> Option<String> {
    rel.components().find_map(|c| match c {
        Component::Normal(name) if name.to_string_lossy().starts_with('.') => {
            Some(format!("a hidden file or directory ({})", name.to_string_lossy()))
        }
        _ => None,
    })
}

/// A credential file's name (for reads).
fn credential(rel: &Path) -> Option<String> {
    let name = rel.file_name()?.to_string_lossy().to_ascii_lowercase();
    CREDENTIAL_NAMES
        .iter()
        .any(|p| wildcard(p.as_bytes(), name.as_bytes()))
        .then(|| format!("a credential file ({name})"))
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
    use super::gather::push_both;
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
                at: None,
            })
            .collect();
        i
    }

    /// What a file needs, and why (None: a read that passes).
    fn judged(path: &str, access: Access, facts: &LocalFacts, fence: &Fence) -> Option<(Required, String)> {
        check(&inv(&[(path, access, false)]), facts, fence)
            .pop()
            .map(|j| (j.required, j.why))
    }

    fn why(path: &str, access: Access, facts: &LocalFacts) -> Option<String> {
        judged(path, access, facts, &Fence::default())
            .filter(|(r, _)| *r == Required::Never)
            .map(|(_, w)| w)
    }

    fn needs(path: &str, access: Access, facts: &LocalFacts) -> Required {
        judged(path, access, facts, &Fence::default()).map_or(Required::Tier(1), |(r, _)| r)
    }

    #[test]
    fn without_facts_a_relative_write_needs_tier_2_and_an_absolute_one_is_never() {
        let none = LocalFacts::default();
        assert_eq!(needs("out.json", Access::Write, &none), Required::Tier(2));
        assert_eq!(needs("./d/out.json", Access::Write, &none), Required::Tier(2));
        assert_eq!(needs("d", Access::WriteNamed, &none), Required::Tier(3));
        assert_eq!(needs("d", Access::WriteTree, &none), Required::Tier(3));
        assert!(why("/tmp/x", Access::Write, &none).unwrap().contains("absolute"));
        assert!(why("/tmp/x", Access::Read, &none).unwrap().contains("absolute"));
        assert!(why("../x", Access::Write, &none).unwrap().contains(".."));
        assert!(why("a/../../x", Access::Read, &none).unwrap().contains(".."));
        assert!(why(".bashrc", Access::Write, &none).unwrap().contains("hidden"));
        assert!(why("d/.git/hooks/pre-commit", Access::Write, &none).unwrap().contains("hidden"));
        assert!(why("", Access::Write, &none).is_some());
    }

    #[test]
    fn no_write_names_the_entry_that_makes_a_git_directory() {
        let none = LocalFacts::default();
        for p in ["bare/HEAD", "HEAD", "x/head", "wt/commondir"] {
            assert!(why(p, Access::Write, &none).unwrap().contains("would make"), "{p}");
        }
        assert_eq!(needs("bare/config", Access::Write, &none), Required::Tier(2));
        assert_eq!(needs("bare/objects/ab/cd", Access::Write, &none), Required::Tier(2));
    }

    #[test]
    fn credential_files_may_not_be_read_but_may_be_named_by_writes() {
        let none = LocalFacts::default();
        for name in ["id_ed25519", "k/server.PEM", "prod.env", "credentials.json", "hosts.yml"] {
            assert!(why(name, Access::Read, &none).unwrap().contains("credential"), "{name}");
        }
        assert_eq!(why("server.pem", Access::Write, &none), None);
        assert_eq!(judged("body.json", Access::Read, &none, &Fence::default()), None);
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
        fn fence(&self) -> Fence {
            let mut f = Fence::default();
            push_both(&mut f.workspaces, &self.work());
            f
        }
        fn judge_with(&self, path: &str, access: Access, fence: &Fence) -> Option<(Required, String)> {
            let i = inv(&[(path, access, false)]);
            let (facts, _) = gather(&i, &self.work());
            check(&i, &facts, fence).pop().map(|j| (j.required, j.why))
        }
        fn judge(&self, path: &str, access: Access) -> Option<String> {
            self.judge_with(path, access, &self.fence())
                .filter(|(r, _)| *r == Required::Never)
                .map(|(_, w)| w)
        }
        fn needs(&self, path: &str, access: Access) -> Required {
            self.judge_with(path, access, &self.fence()).map_or(Required::Tier(1), |(r, _)| r)
        }
    }

    #[test]
    fn writes_below_a_workspace_need_tier_2_elsewhere_tier_3_and_outside_the_working_directory_never() {
        let d = Dir::new();
        assert_eq!(d.needs("out.json", Access::Write), Required::Tier(2));
        assert_eq!(d.needs("sub/new/out.json", Access::Write), Required::Tier(2));
        let abs = d.work().join("sub/x.txt");
        assert_eq!(d.needs(abs.to_str().unwrap(), Access::Write), Required::Tier(2));
        let out = d.tmp.path().join("elsewhere.txt");
        assert!(
            d.judge(out.to_str().unwrap(), Access::Write)
                .unwrap()
                .contains("outside the working directory")
        );
        // A working directory outside every workspace.
        let mut narrow = Fence::default();
        push_both(&mut narrow.workspaces, &d.work().join("sub"));
        let (req, why) = d.judge_with("out.json", Access::Write, &narrow).unwrap();
        assert_eq!(req, Required::Tier(3));
        assert!(why.contains("outside the workspaces"), "{why}");
        assert_eq!(d.judge_with("sub/out.json", Access::Write, &narrow).unwrap().0, Required::Tier(2));
        let (req, why) = d.judge_with("out.json", Access::Write, &Fence::default()).unwrap();
        assert_eq!(req, Required::Tier(3));
        assert!(why.contains("names none"), "{why}");
        assert_eq!(d.needs("sub", Access::WriteNamed), Required::Tier(3));
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
        assert_eq!(d.needs("alias/out.txt", Access::Write), Required::Tier(2));
    }

    #[test]
    fn a_git_directory_is_never_written_into_nor_completed() {
        let d = Dir::new();
        let bare = d.work().join("bare");
        std::fs::create_dir_all(bare.join("objects")).unwrap();
        std::fs::create_dir_all(bare.join("refs")).unwrap();
        // objects and refs alone are not a repository; a HEAD beside them would be.
        assert_eq!(d.needs("bare/config", Access::Write), Required::Tier(2));
        assert!(d.judge("bare/HEAD", Access::Write).unwrap().contains("would make"));
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let why = d.judge("bare/config", Access::Write).unwrap();
        assert!(why.contains("inside the git directory"), "{why}");
        assert!(d.judge("bare", Access::WriteNamed).unwrap().contains("inside the git directory"));
        // A HEAD alone: objects or refs beside it would make one.
        let half = d.work().join("half");
        std::fs::create_dir_all(&half).unwrap();
        std::fs::write(half.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(d.judge("half/refs/heads/main", Access::Write).unwrap().contains("beside"));
        assert_eq!(d.needs("half/notes.txt", Access::Write), Required::Tier(2));
    }

    #[test]
    fn the_installs_own_files_are_never_touched() {
        let d = Dir::new();
        let mut fence = d.fence();
        let skills = d.work().join("skills");
        std::fs::create_dir_all(&skills).unwrap();
        fence.protected.push((skills.clone(), "the baseline skills".into()));
        let (req, why) = d.judge_with("skills/x.md", Access::Write, &fence).unwrap();
        assert_eq!(req, Required::Never);
        assert!(why.contains("the baseline skills"), "{why}");
        // An archive unpacked above them could reach them.
        assert_eq!(d.judge_with(".", Access::WriteTree, &fence).unwrap().0, Required::Never);
        std::fs::write(skills.join("s.md"), "x").unwrap();
        assert_eq!(d.judge_with("skills/s.md", Access::Read, &fence).unwrap().0, Required::Never);
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
        let needs: Vec<Required> = check(&i, &facts, &d.fence()).into_iter().map(|j| j.required).collect();
        assert_eq!(needs, vec![Required::Tier(2)]);
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
