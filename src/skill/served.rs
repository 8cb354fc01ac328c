//! The skills served to an agent that has no native skill support (`tiershim mcp`,
//! `tiershim instructions`, `tiershim skills list --skills-dir/--agent-dirs`): an ordered list
//! of skill directories in which the first copy of a name wins and later copies are shadowed,
//! the session tier that says which skills are available, and a fingerprint of the directories
//! (names, modes, mtimes and sizes; no file is opened) cheap enough to take on every request, so
//! a changed directory is re-read and an unchanged one is not.
//!
//! Files are found and read only through [`super::discover`] and [`super::load`]: the same
//! vetting (a symlink that leaves its directory is skipped and reported), the same limits and
//! the same parser as the gate. Nothing here decides a call, and nothing here is reached from
//! the gate.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Candidate, Layout, Location, Need, Problem, Skill, Sources};

/// The longest skill name a client may ask for, in bytes.
pub const MAX_NAME: usize = 256;

/// Where the served skills come from; turned into directories on every refresh, so a
/// repository that gains `.claude-ops/skills/` while the server runs is picked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The install's skills (`skills:` of a tiershim.yaml), when a config was given.
    pub install: Option<Sources>,
    /// `--skills-dir`, in the order given.
    pub dirs: Vec<PathBuf>,
    /// The working directory and home of the server: the conventional directories, and the
    /// repository whose skills come first.
    pub cwd: PathBuf,
    pub home: Option<PathBuf>,
}

/// One directory skills are served from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceDir {
    /// `None`: the copy of the shipped skills built into the binary.
    pub dir: Option<PathBuf>,
    pub location: Location,
    /// Whether a missing directory is worth a warning (one the operator named), or normal (a
    /// conventional directory that this machine does not use).
    pub named: bool,
}

impl Selection {
    /// The directories in precedence order. With a config: the repository holding the working
    /// directory, the baseline, then every other repository; then each `--skills-dir`. With
    /// neither a config nor `--skills-dir`: `./.agent/skills`, `./.claude/skills`,
    /// `~/.agent/skills`, `~/.claude/skills`.
    pub fn source_dirs(&self) -> Vec<SourceDir> {
        let mut out = Vec::new();
        if let Some(sources) = &self.install {
            let repos = sources.repos();
            let here = sources.repo_of(&self.cwd);
            let repo = |(name, dir): &(String, PathBuf)| SourceDir {
                dir: Some(dir.clone()),
                location: Location::Repo(name.clone()),
                named: false,
            };
            out.extend(repos.iter().filter(|(n, _)| Some(n) == here.as_ref()).map(repo));
            out.push(match sources.baseline.clone().or_else(super::installed_dir) {
                Some(d) => SourceDir {
                    dir: Some(d),
                    location: Location::Baseline,
                    named: sources.baseline.is_some(),
                },
                None => SourceDir {
                    dir: None,
                    location: Location::Embedded,
                    named: false,
                },
            });
            out.extend(repos.iter().filter(|(n, _)| Some(n) != here.as_ref()).map(repo));
        }
        for d in &self.dirs {
            out.push(SourceDir {
                dir: Some(d.clone()),
                location: Location::Dir(d.display().to_string()),
                named: true,
            });
        }
        if self.install.is_none() && self.dirs.is_empty() {
            let mut conventional = vec![self.cwd.join(".agent/skills"), self.cwd.join(".claude/skills")];
            if let Some(h) = &self.home {
                conventional.push(h.join(".agent/skills"));
                conventional.push(h.join(".claude/skills"));
            }
            for d in conventional {
                if !out.iter().any(|o: &SourceDir| o.dir.as_ref() == Some(&d)) {
                    out.push(SourceDir {
                        location: Location::Dir(d.display().to_string()),
                        dir: Some(d),
                        named: false,
                    });
                }
            }
        }
        out
    }
}

/// The tier of the agent the skills are served to, decided as the gate decides it
/// ([`crate::decision::effective_tier`]): the install's ceiling (3 when no config is given,
/// so the environment alone decides) lowered by `CLAUDEOPS_TIER`; unset or anything but
/// exactly 1, 2 or 3 means tier 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub tier: u8,
    /// Why the tier is what it is, when the environment asked for something odd.
    pub note: Option<String>,
}

impl Session {
    pub fn new(ceiling: Option<u8>, env_tier: Option<&str>) -> Session {
        let (tier, note) = crate::decision::effective_tier(ceiling.unwrap_or(3), env_tier);
        Session { tier, note }
    }
}

/// What is kept of a skill between requests: what listings and lookups need, not its text.
/// The text is read again, one file, when the skill is loaded, so memory does not grow with the
/// size of the skills.
#[derive(Debug, Clone)]
pub struct Meta {
    /// The id: the file name without `.md`, or the directory of a `SKILL.md`.
    pub name: String,
    /// The frontmatter `name`, else the title without `Skill:`, else the id.
    pub display_name: String,
    pub description: String,
    /// This copy's own Tier Requirement.
    pub tier: Option<u8>,
    /// The path shown to people.
    pub shown: String,
    pub location: Location,
    pub layout: Layout,
    pub deny: Vec<String>,
    pub allow: Option<Vec<String>>,
}

impl Meta {
    pub fn of(s: &Skill) -> Meta {
        let fm = s.parsed.frontmatter.as_ref().and_then(|f| f.name.clone());
        let title = s.parsed.title.as_ref().map(|t| {
            let t = t.trim();
            match t.get(..6) {
                Some(p) if p.eq_ignore_ascii_case("skill:") => t[6..].trim().to_string(),
                _ => t.to_string(),
            }
        });
        Meta {
            name: s.name.clone(),
            display_name: fm.or(title).filter(|n| !n.trim().is_empty()).unwrap_or_else(|| s.name.clone()),
            description: s.description(),
            tier: s.parsed.tier.map(|t| t.tier),
            shown: s.shown.clone(),
            location: s.location.clone(),
            layout: s.layout,
            deny: s.parsed.deny.iter().map(|p| p.text.clone()).collect(),
            allow: s.parsed.allow.as_ref().map(|a| a.iter().map(|p| p.text.clone()).collect()),
        }
    }
}

/// One served skill: the copy that won, and what it stands for.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Shared with the re-scan cache.
    pub meta: Arc<Meta>,
    candidate: Candidate,
    /// The skill file, absolute; `None` for the embedded copy.
    pub file: Option<PathBuf>,
    /// The directory that holds the skill's `references/`, `scripts/` and `assets/`.
    pub base: Option<PathBuf>,
    /// The highest Tier Requirement of this copy and of every copy it shadows: a nearer copy
    /// replaces the instructions but can only raise the tier, as in the gate.
    pub tier_required: Option<u8>,
    /// The files of the copies it shadows, in precedence order.
    pub shadows: Vec<String>,
}

impl Entry {
    /// The id clients pass to `get_skill` and `skill`.
    pub fn id(&self) -> &str {
        &self.meta.name
    }

    pub fn available(&self, session: &Session) -> bool {
        self.tier_required.is_none_or(|t| t <= session.tier)
    }

    /// Where the file is, for people and for `get_skill`'s `path`.
    pub fn path(&self) -> String {
        match &self.file {
            Some(f) => f.display().to_string(),
            None => self.meta.shown.clone(),
        }
    }

    /// Read and parse this skill's file again, for its text. The caller has just taken the
    /// fingerprint, so this is the file the listing describes; if it changed in between, or now
    /// has an error, that is the answer.
    pub fn load(&self) -> Result<Skill, Problem> {
        let skill = super::load(&self.candidate, Need::All)?;
        match skill.error() {
            Some(err) => Err(Problem {
                path: skill.shown.clone(),
                message: err.to_string(),
            }),
            None => Ok(skill),
        }
    }
}

/// What one scan found.
#[derive(Debug, Clone, Default)]
pub struct Served {
    /// The copy that wins for each name, sorted by id.
    pub entries: Vec<Entry>,
    /// Every other copy: (the copy, the file of the copy that shadows it).
    pub shadowed: Vec<(Arc<Meta>, String)>,
    /// Files that were skipped, and directories that could not be read, with the reason.
    pub problems: Vec<Problem>,
}

impl Served {
    /// The skill a client asked for: an exact id, else the one id equal to it ignoring case.
    pub fn find(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id() == name).or_else(|| {
            let lower = name.to_lowercase();
            self.entries.iter().find(|e| e.id().to_lowercase() == lower)
        })
    }
}

/// Why a requested skill name is refused before any lookup: empty, longer than [`MAX_NAME`]
/// bytes, or holding a path separator, `..` or NUL. Lookups never touch the file system, but a
/// name that could only be an attempt to reach another file is answered as such.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("the skill name is empty".into());
    }
    if name.len() > MAX_NAME {
        return Err(format!("the skill name is {} bytes, over the {MAX_NAME} byte limit", name.len()));
    }
    if name.contains('\0') {
        return Err("the skill name contains a NUL byte".into());
    }
    if name.contains(['/', '\\']) {
        return Err("the skill name contains a path separator; pass a name, not a path".into());
    }
    if name.contains("..") {
        return Err("the skill name contains `..`; pass a name, not a path".into());
    }
    Ok(())
}

/// What identifies a file's content without opening it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    mode: u32,
    size: u64,
    mtime: i64,
    mtime_nsec: i64,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        std::fs::metadata(path).ok().map(|m| Stamp {
            dev: m.dev(),
            ino: m.ino(),
            mode: m.mode(),
            size: m.size(),
            mtime: m.mtime(),
            mtime_nsec: m.mtime_nsec(),
        })
    }
}

/// Every source directory, its entries, and each `SKILL.md` below them, stamped. Equal
/// fingerprints mean nothing a scan would read has changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fingerprint(Vec<(PathBuf, Option<Stamp>)>);

pub fn fingerprint(dirs: &[SourceDir]) -> Fingerprint {
    let mut out = Vec::new();
    for d in dirs {
        let Some(dir) = &d.dir else { continue };
        out.push((dir.clone(), Stamp::of(dir)));
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut names: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.file_name())).collect();
        names.sort();
        for n in names {
            let p = dir.join(&n);
            let stamp = Stamp::of(&p);
            let is_dir = stamp.is_some_and(|s| s.mode & libc::S_IFMT == libc::S_IFDIR);
            out.push((p.clone(), stamp));
            if is_dir {
                let skill_md = p.join("SKILL.md");
                let s = Stamp::of(&skill_md);
                out.push((skill_md, s));
            }
        }
    }
    Fingerprint(out)
}

/// The served skills, re-read only when the fingerprint of their directories changes, and then
/// only the files whose stamp changed are parsed again.
pub struct Scanner {
    pub selection: Selection,
    fingerprint: Option<Fingerprint>,
    cache: HashMap<PathBuf, (Stamp, Arc<Meta>)>,
    pub served: Served,
}

impl Scanner {
    pub fn new(selection: Selection) -> Scanner {
        let mut s = Scanner {
            selection,
            fingerprint: None,
            cache: HashMap::new(),
            served: Served::default(),
        };
        s.refresh();
        s
    }

    /// Take the fingerprint; when it differs from the last one, scan again. Returns whether it
    /// scanned.
    pub fn refresh(&mut self) -> bool {
        let dirs = self.selection.source_dirs();
        let fp = fingerprint(&dirs);
        if self.fingerprint.as_ref() == Some(&fp) {
            return false;
        }
        self.served = self.scan(&dirs);
        self.fingerprint = Some(fp);
        true
    }

    /// The metadata of a candidate: from the cache when its stamp is unchanged, else read and
    /// parsed. A skill with an error-level finding is a problem, not a skill.
    fn meta(&mut self, c: &Candidate) -> Result<Arc<Meta>, Problem> {
        let file = c.file().map(Path::to_path_buf);
        let stamp = file.as_deref().and_then(Stamp::of);
        if let (Some(f), Some(st)) = (&file, stamp)
            && let Some((cached, meta)) = self.cache.get(f)
            && *cached == st
        {
            return Ok(Arc::clone(meta));
        }
        let skill = super::load(c, Need::All).map_err(|p| Problem {
            path: p.path,
            message: format!("{}; skipped", p.message),
        })?;
        if let Some(err) = skill.error() {
            return Err(Problem {
                path: skill.shown.clone(),
                message: format!("{err}; skipped"),
            });
        }
        let meta = Arc::new(Meta::of(&skill));
        if let (Some(f), Some(st)) = (file, stamp) {
            self.cache.insert(f, (st, Arc::clone(&meta)));
        }
        Ok(meta)
    }

    fn scan(&mut self, dirs: &[SourceDir]) -> Served {
        let mut served = Served::default();
        let mut seen_files = HashSet::new();
        // id -> index in served.entries
        let mut by_id: HashMap<String, usize> = HashMap::new();
        for d in dirs {
            let (candidates, problems) = match &d.dir {
                None => (super::embedded(), Vec::new()),
                Some(dir) => {
                    if !dir.is_dir() {
                        if d.named {
                            served.problems.push(Problem {
                                path: dir.display().to_string(),
                                message: "the skills directory does not exist; no skills are served from it".into(),
                            });
                        }
                        continue;
                    }
                    super::discover(dir, &d.location)
                }
            };
            served.problems.extend(problems);
            for c in candidates {
                if let Some(f) = c.file() {
                    seen_files.insert(f.to_path_buf());
                }
                let meta = match self.meta(&c) {
                    Ok(m) => m,
                    Err(p) => {
                        served.problems.push(p);
                        continue;
                    }
                };
                match by_id.get(&meta.name) {
                    Some(&i) => {
                        let winner = &mut served.entries[i];
                        winner.tier_required = winner.tier_required.max(meta.tier);
                        winner.shadows.push(meta.shown.clone());
                        served.shadowed.push((meta, winner.meta.shown.clone()));
                    }
                    None => {
                        // Absolute: every source directory is (the caller makes it so).
                        let file = c.file().map(Path::to_path_buf);
                        let base = file.as_ref().and_then(|f| f.parent().map(Path::to_path_buf));
                        by_id.insert(meta.name.clone(), served.entries.len());
                        served.entries.push(Entry {
                            tier_required: meta.tier,
                            meta,
                            candidate: c,
                            file,
                            base,
                            shadows: Vec::new(),
                        });
                    }
                }
            }
        }
        served.entries.sort_by(|a, b| a.id().cmp(b.id()));
        // Forget files that are gone, so the cache does not grow with renames.
        self.cache.retain(|k, _| seen_files.contains(k));
        served
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn selection(dirs: Vec<PathBuf>) -> Selection {
        Selection {
            install: None,
            dirs,
            cwd: PathBuf::from("/nonexistent"),
            home: None,
        }
    }

    #[test]
    fn the_conventional_directories_come_project_first_then_global() {
        let s = Selection {
            install: None,
            dirs: vec![],
            cwd: PathBuf::from("/w"),
            home: Some(PathBuf::from("/h")),
        };
        let got: Vec<PathBuf> = s.source_dirs().into_iter().filter_map(|d| d.dir).collect();
        assert_eq!(
            got,
            ["/w/.agent/skills", "/w/.claude/skills", "/h/.agent/skills", "/h/.claude/skills"]
                .map(PathBuf::from)
                .to_vec()
        );
        let same = Selection {
            home: Some(PathBuf::from("/w")),
            ..s
        };
        assert_eq!(same.source_dirs().len(), 2);
    }

    #[test]
    fn with_a_config_the_working_repository_comes_first_then_the_baseline_then_other_repositories() {
        let t = tempfile::tempdir().unwrap();
        for r in ["alpha", "infra", "zulu"] {
            std::fs::create_dir_all(t.path().join(format!("repos/{r}/.claude-ops/skills"))).unwrap();
        }
        std::fs::create_dir_all(t.path().join("repos/infra/sub")).unwrap();
        std::fs::create_dir_all(t.path().join("base")).unwrap();
        let s = Selection {
            install: Some(Sources {
                baseline: Some(t.path().join("base")),
                repos: Some(t.path().join("repos")),
            }),
            dirs: vec![PathBuf::from("/extra")],
            cwd: t.path().join("repos/infra/sub"),
            home: Some(t.path().to_path_buf()),
        };
        let got: Vec<String> = s.source_dirs().iter().map(|d| d.location.to_string()).collect();
        assert_eq!(got, vec!["repo infra", "baseline", "repo alpha", "repo zulu", "/extra"]);
    }

    #[test]
    fn the_first_copy_of_a_name_wins_and_can_only_raise_the_tier() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        write(&a.join("deploy.md"), "# Skill: near\n\n## Purpose\n\nNear copy.\n");
        write(
            &b.join("deploy/SKILL.md"),
            "---\nname: deploy\ndescription: Far copy.\n---\n# Deploy\n\n## Tier Requirement\n\nTier 3\n",
        );
        write(&b.join("other.md"), "# Skill: other\n\n## Purpose\n\nOther.\n");
        let s = Scanner::new(selection(vec![a.clone(), b.clone()]));
        let ids: Vec<&str> = s.served.entries.iter().map(Entry::id).collect();
        assert_eq!(ids, vec!["deploy", "other"]);
        let deploy = &s.served.entries[0];
        assert_eq!(deploy.meta.description, "Near copy.");
        assert_eq!(deploy.load().unwrap().body(), "# Skill: near\n\n## Purpose\n\nNear copy.\n");
        assert_eq!(deploy.tier_required, Some(3));
        assert_eq!(deploy.shadows, vec![b.join("deploy/SKILL.md").display().to_string()]);
        assert_eq!(s.served.shadowed.len(), 1);
        assert!(!deploy.available(&Session::new(None, Some("2"))));
        assert!(deploy.available(&Session::new(None, Some("3"))));
        assert!(!deploy.available(&Session::new(Some(2), Some("3"))));
    }

    #[test]
    fn lookups_ignore_case_and_prefer_an_exact_id() {
        let t = tempfile::tempdir().unwrap();
        write(&t.path().join("Mixed.md"), "# Skill: m\n");
        write(&t.path().join("mixed.md"), "# Skill: n\n");
        write(&t.path().join("only.md"), "# Skill: o\n");
        let s = Scanner::new(selection(vec![t.path().to_path_buf()]));
        assert_eq!(s.served.find("mixed").map(Entry::id), Some("mixed"));
        assert_eq!(s.served.find("Mixed").map(Entry::id), Some("Mixed"));
        assert_eq!(s.served.find("ONLY").map(Entry::id), Some("only"));
        assert_eq!(s.served.find("none").map(Entry::id), None);
    }

    #[test]
    fn names_that_could_reach_another_file_are_refused() {
        for (name, why) in [
            ("", "empty"),
            ("  ", "empty"),
            ("a/b", "path separator"),
            ("a\\b", "path separator"),
            ("..", "`..`"),
            ("x..y", "`..`"),
            ("a\0b", "NUL"),
        ] {
            let err = check_name(name).unwrap_err();
            assert!(err.contains(why), "{name:?}: {err}");
        }
        assert!(check_name(&"a".repeat(MAX_NAME + 1)).unwrap_err().contains("256 byte limit"));
        assert_eq!(check_name(&"a".repeat(MAX_NAME)), Ok(()));
        assert_eq!(check_name("git-pr"), Ok(()));
    }

    #[test]
    fn skills_with_errors_are_skipped_and_reported() {
        let t = tempfile::tempdir().unwrap();
        write(&t.path().join("bad/SKILL.md"), "---\nname: [unclosed\n---\n# x\n");
        write(&t.path().join("nodesc/SKILL.md"), "---\nname: nodesc\n---\n# x\n");
        write(&t.path().join("good.md"), "# Skill: good\n");
        let s = Scanner::new(selection(vec![t.path().to_path_buf()]));
        let ids: Vec<&str> = s.served.entries.iter().map(Entry::id).collect();
        assert_eq!(ids, vec!["good"]);
        let msgs: Vec<String> = s.served.problems.iter().map(|p| format!("{}: {}", p.path, p.message)).collect();
        assert_eq!(msgs.len(), 2, "{msgs:?}");
        assert!(msgs[0].contains("bad/SKILL.md") && msgs[0].contains("not valid YAML"), "{msgs:?}");
        assert!(msgs[1].contains("no `description`") && msgs[1].ends_with("skipped"), "{msgs:?}");
    }

    #[test]
    fn a_refresh_rescans_only_when_a_directory_changed() {
        let t = tempfile::tempdir().unwrap();
        write(&t.path().join("a.md"), "# Skill: a\n");
        let mut s = Scanner::new(selection(vec![t.path().to_path_buf()]));
        assert!(!s.refresh());
        write(&t.path().join("b/SKILL.md"), "---\nname: b\ndescription: B.\n---\n");
        assert!(s.refresh());
        assert_eq!(s.served.entries.len(), 2);
        assert!(!s.refresh());
        write(&t.path().join("a.md"), "# Skill: a, longer now\n");
        assert!(s.refresh());
        assert_eq!(s.served.entries[0].meta.display_name, "a, longer now");
    }

    #[test]
    fn a_named_directory_that_is_missing_is_reported_and_a_conventional_one_is_not() {
        let s = Scanner::new(selection(vec![PathBuf::from("/nonexistent/skills")]));
        assert_eq!(s.served.problems.len(), 1);
        let conventional = Scanner::new(Selection {
            dirs: vec![],
            ..selection(vec![])
        });
        assert_eq!(conventional.served.problems, vec![]);
    }
}
