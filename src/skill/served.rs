//! The skills served to an agent that has no native skill support (`tiershim mcp`,
//! `tiershim instructions`, `tiershim skills list --skills-dir/--agent-dirs`): an ordered list
//! of skill directories in which the first copy of a skill wins and later copies are shadowed,
//! the session tier that says which skills are available, O(1) lookups by name and by id, and
//! the list of paths whose changes matter (so a server can watch them instead of re-reading
//! every skill on every request).
//!
//! Two kinds of directory. The install's (the baseline and each repository's
//! `.claude-ops/skills/`) are read exactly as the gate reads them ([`super::discover`]: `name.md`
//! and `name/SKILL.md`, links kept inside the directory), so what is served is what the gate
//! judges. Agent skill directories (`--skills-dir`, `./.agent/skills`, `~/.claude/skills`, …)
//! follow the Skills MCP and universal-skills contracts: every `SKILL.md` at any depth is a skill
//! and nothing else is (a stray `NOTES.md` beside one is not), and symlinked directories are
//! followed wherever they lead, because skill installers link `~/.claude/skills/<name>` to a
//! canonical copy elsewhere. The server reads those files with its own user's rights, so a link
//! reaches nothing that user could not read anyway.
//!
//! Files are read only through [`super::load`]: the same limits and the same parser as the gate.
//! Nothing here decides a call, and nothing here is reached from the gate.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Candidate, Layout, Level, Location, Need, Problem, Skill, Sources};

/// The longest skill name a client may ask for, in bytes.
pub const MAX_NAME: usize = 256;
/// The longest frontmatter `description`, in characters (the Skills MCP format).
pub const MAX_DESCRIPTION: usize = 1024;
/// How deep below an agent skill directory `SKILL.md` files are looked for.
pub const MAX_DEPTH: usize = 12;
/// How many directories one agent skill directory may hold before the search stops there.
pub const MAX_DIRS: usize = 20_000;

/// Where the served skills come from; turned into directories on every scan, so a repository
/// that gains `.claude-ops/skills/` while the server runs is picked up.
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

/// What counts as a skill in a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The install's directories, read as the gate reads them: `name.md` and `name/SKILL.md`.
    ClaudeOps,
    /// An agent skill directory: every `SKILL.md` at any depth, and nothing else.
    Agent,
}

/// The `<location>` of the universal-skills contract: whether a skill belongs to the project
/// the agent works in or to the user (or the machine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Project,
    Global,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::Global => "global",
        }
    }
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
    pub kind: Kind,
    pub scope: Scope,
}

impl Selection {
    /// The directories in precedence order. With a config: the repository holding the working
    /// directory, the baseline, then every other repository; then each `--skills-dir`. With
    /// neither a config nor `--skills-dir`, the universal-skills order: `./.agent/skills`,
    /// `~/.agent/skills`, `./.claude/skills`, `~/.claude/skills`.
    pub fn source_dirs(&self) -> Vec<SourceDir> {
        let mut out = Vec::new();
        if let Some(sources) = &self.install {
            let repos = sources.repos();
            let here = sources.repo_of(&self.cwd);
            let repo = |(name, dir): &(String, PathBuf)| SourceDir {
                dir: Some(dir.clone()),
                location: Location::Repo(name.clone()),
                named: false,
                kind: Kind::ClaudeOps,
                scope: if Some(name) == here.as_ref() {
                    Scope::Project
                } else {
                    Scope::Global
                },
            };
            out.extend(repos.iter().filter(|(n, _)| Some(n) == here.as_ref()).map(repo));
            out.push(match sources.baseline.clone().or_else(super::installed_dir) {
                Some(d) => SourceDir {
                    dir: Some(d),
                    location: Location::Baseline,
                    named: sources.baseline.is_some(),
                    kind: Kind::ClaudeOps,
                    scope: Scope::Global,
                },
                None => SourceDir {
                    dir: None,
                    location: Location::Embedded,
                    named: false,
                    kind: Kind::ClaudeOps,
                    scope: Scope::Global,
                },
            });
            out.extend(repos.iter().filter(|(n, _)| Some(n) != here.as_ref()).map(repo));
        }
        for d in &self.dirs {
            out.push(SourceDir {
                dir: Some(d.clone()),
                location: Location::Dir(d.display().to_string()),
                named: true,
                kind: Kind::Agent,
                scope: Scope::Global,
            });
        }
        if self.install.is_none() && self.dirs.is_empty() {
            let mut conventional = Vec::new();
            for sub in [".agent/skills", ".claude/skills"] {
                conventional.push((self.cwd.join(sub), Scope::Project));
                if let Some(h) = &self.home {
                    conventional.push((h.join(sub), Scope::Global));
                }
            }
            for (d, scope) in conventional {
                if !out.iter().any(|o: &SourceDir| o.dir.as_ref() == Some(&d)) {
                    out.push(SourceDir {
                        location: Location::Dir(d.display().to_string()),
                        dir: Some(d),
                        named: false,
                        kind: Kind::Agent,
                        scope,
                    });
                }
            }
        }
        out
    }

    /// The directory that holds the install's repositories, when there is one: a repository
    /// added there may bring skills.
    fn repos_dir(&self) -> Option<&Path> {
        self.install.as_ref().and_then(|s| s.repos.as_deref())
    }
}

/// The tier of the agent the skills are served to, decided as the gate decides it
/// ([`crate::tier::effective_tier`]): the install's ceiling (3 when no config is given,
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
        let (tier, note) = crate::tier::effective_tier(ceiling.unwrap_or(3), env_tier);
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
    /// The name the `skill` tool knows it by: the frontmatter `name`, else the id.
    pub skill_name: String,
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
        let fm = s
            .parsed
            .frontmatter
            .as_ref()
            .and_then(|f| f.name.as_deref())
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string);
        let title = s.parsed.title.as_ref().map(|t| {
            let t = t.trim();
            match t.get(..6) {
                Some(p) if p.eq_ignore_ascii_case("skill:") => t[6..].trim().to_string(),
                _ => t.to_string(),
            }
        });
        Meta {
            name: s.name.clone(),
            skill_name: fm.clone().unwrap_or_else(|| s.name.clone()),
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
    /// The skill file, absolute, as found (through any link); `None` for the embedded copy.
    pub file: Option<PathBuf>,
    /// The directory that holds the skill's `references/`, `scripts/` and `assets/`.
    pub base: Option<PathBuf>,
    pub scope: Scope,
    /// The highest Tier Requirement of this copy and of every copy with its id that it
    /// shadows: a nearer copy replaces the instructions but can only raise the tier, as in the
    /// gate.
    pub tier_required: Option<u8>,
    /// The files of the copies it shadows, in precedence order.
    pub shadows: Vec<String>,
}

impl Entry {
    /// The id clients pass to `get_skill`.
    pub fn id(&self) -> &str {
        &self.meta.name
    }

    /// The name the `skill` tool lists and loads it by.
    pub fn skill_name(&self) -> &str {
        &self.meta.skill_name
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

    /// Read and parse this skill's file again, for its text. A file that became unreadable, or
    /// lost what makes it a skill, since the scan is that answer.
    pub fn load(&self) -> Result<Skill, Problem> {
        let skill = super::load(&self.candidate, Need::All)?;
        match unservable(&skill) {
            Some(message) => Err(Problem {
                path: skill.shown.clone(),
                message,
            }),
            None => Ok(skill),
        }
    }
}

/// What one scan found, indexed for lookups.
#[derive(Debug, Clone, Default)]
pub struct Served {
    /// The copy that wins for each skill, sorted by id.
    pub entries: Vec<Entry>,
    /// Every other copy: (the copy, the file of the copy that shadows it).
    pub shadowed: Vec<(Arc<Meta>, String)>,
    /// Files that were skipped or served with a fault, and directories that could not be read,
    /// with the reason.
    pub problems: Vec<Problem>,
    by_name: HashMap<String, usize>,
    by_id: HashMap<String, usize>,
    by_folded_id: HashMap<String, usize>,
}

/// A name as the `skill` tool compares it: trimmed, in lower case.
pub fn fold(name: &str) -> String {
    name.trim().to_lowercase()
}

impl Served {
    /// The skill the `skill` tool was asked for: by its name ignoring case and surrounding
    /// space (the universal-skills lookup), else by its id, exact, then ignoring case.
    pub fn find(&self, name: &str) -> Option<&Entry> {
        let folded = fold(name);
        self.by_name
            .get(&folded)
            .or_else(|| self.by_id.get(name.trim()))
            .or_else(|| self.by_folded_id.get(&folded))
            .and_then(|&i| self.entries.get(i))
    }

    /// The skill `get_skill` was asked for: by id, exact, then ignoring case, else by name.
    pub fn find_id(&self, id: &str) -> Option<&Entry> {
        let folded = fold(id);
        self.by_id
            .get(id)
            .or_else(|| self.by_folded_id.get(&folded))
            .or_else(|| self.by_name.get(&folded))
            .and_then(|&i| self.entries.get(i))
    }

    /// Sort the entries by id and build the indexes.
    fn index(&mut self) {
        self.entries.sort_by(|a, b| a.id().cmp(b.id()));
        self.by_name.clear();
        self.by_id.clear();
        self.by_folded_id.clear();
        for (i, e) in self.entries.iter().enumerate() {
            self.by_name.insert(fold(e.skill_name()), i);
            self.by_id.insert(e.id().to_string(), i);
            self.by_folded_id.entry(e.id().to_lowercase()).or_insert(i);
        }
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

/// Why a `SKILL.md` cannot be served at all: what both contracts require of its frontmatter
/// (YAML, a `name` of 1-64 characters on one line, a `description` of 1-1024 characters). A
/// `name.md` of the install's directories needs none. Every other fault (a Tier Requirement
/// that names no tier, a scope rule the gate cannot use) leaves the skill served: it is
/// instructions for the agent, and the gate refuses the calls that would need the fault.
fn unservable(s: &Skill) -> Option<String> {
    if s.layout != Layout::AgentSkill {
        return None;
    }
    let Some(fm) = s.parsed.frontmatter.as_ref() else {
        return Some(
            s.parsed
                .findings
                .iter()
                .find(|f| f.level == Level::Error && f.message.contains("frontmatter"))
                .map(|f| f.message.clone())
                .unwrap_or_else(|| "SKILL.md has no YAML frontmatter".into()),
        );
    };
    match fm.name.as_deref() {
        None => return Some("frontmatter has no `name`".into()),
        Some(n) if !super::parse::readable_name(n) => {
            return Some(format!(
                "frontmatter name `{}` must be 1-{} characters on one line",
                n.escape_debug(),
                super::parse::MAX_NAME
            ));
        }
        _ => {}
    }
    match fm.description.as_deref().map(str::trim) {
        None | Some("") => Some("frontmatter has no `description`".into()),
        Some(d) if d.chars().count() > MAX_DESCRIPTION => Some(format!(
            "frontmatter description is {} characters, over the {MAX_DESCRIPTION} character limit",
            d.chars().count()
        )),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Finding the files, and what to watch

/// The paths whose changes can change what is served, as a scan found them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchSet {
    /// Directories whose entries matter: a skill file or a directory appearing, going or
    /// changing in one of them changes the skills.
    pub dirs: Vec<PathBuf>,
    /// Skill files reached through a symlink: the file they lead to (a watch on the link's
    /// directory does not see the target change).
    pub files: Vec<PathBuf>,
    /// A skills directory (or the install's repositories) that does not exist yet: its nearest
    /// existing ancestor, and the name there that leads to it.
    pub ancestors: Vec<(PathBuf, OsString)>,
    /// Symlinks that were followed: removing one is a change, though it is not a directory.
    pub links: HashSet<PathBuf>,
}

impl WatchSet {
    /// Watch the nearest existing ancestor of `path` for the name that leads to it.
    fn ancestor_of(&mut self, path: &Path) {
        let mut child = path;
        while let Some(parent) = child.parent() {
            if parent.is_dir() {
                if let Some(name) = child.file_name() {
                    self.ancestors.push((parent.to_path_buf(), name.to_os_string()));
                }
                return;
            }
            child = parent;
        }
    }
}

/// Whether a name that appeared in, or left, a watched directory can change the skills: a
/// directory, a markdown file (`SKILL.md`, or the install's `name.md`), or a symlink (one to a
/// skill directory is how installers add skills). Dot files are never skills.
pub fn matters(dir: &Path, name: &OsStr, is_dir: bool, links: &HashSet<PathBuf>) -> bool {
    if name.as_bytes().starts_with(b".") {
        return false;
    }
    if is_dir || name.as_bytes().ends_with(b".md") {
        return true;
    }
    let path = dir.join(name);
    links.contains(&path) || std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink())
}

/// What one directory holds: its candidates in precedence order, the problems found on the
/// way, and the paths to watch.
struct Found {
    candidates: Vec<Candidate>,
    problems: Vec<Problem>,
}

/// Every skill file of one source directory, in precedence order (for `tiershim skills show`
/// and `validate`, which read every copy).
pub fn candidates(d: &SourceDir) -> (Vec<Candidate>, Vec<Problem>) {
    let mut watch = WatchSet::default();
    let found = find(d, &mut watch);
    (found.candidates, found.problems)
}

fn find(d: &SourceDir, watch: &mut WatchSet) -> Found {
    let Some(dir) = &d.dir else {
        return Found {
            candidates: super::embedded(),
            problems: Vec::new(),
        };
    };
    // A link to the skills directory itself can be re-pointed: its parent sees that.
    watch.ancestor_of(dir);
    if !dir.is_dir() {
        let mut problems = Vec::new();
        if d.named {
            problems.push(Problem {
                path: dir.display().to_string(),
                message: "the skills directory does not exist; no skills are served from it".into(),
            });
        }
        return Found {
            candidates: Vec::new(),
            problems,
        };
    }
    match d.kind {
        Kind::ClaudeOps => {
            // Read as the gate reads it. Any subdirectory may hold (or gain) a SKILL.md.
            watch.dirs.push(dir.clone());
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                if !e.file_name().as_bytes().starts_with(b".") && p.is_dir() {
                    watch.dirs.push(p);
                }
            }
            let (candidates, problems) = super::discover(dir, &d.location);
            Found { candidates, problems }
        }
        Kind::Agent => {
            let mut walk = Walk {
                location: &d.location,
                watch,
                found: Found {
                    candidates: Vec::new(),
                    problems: Vec::new(),
                },
                seen: HashSet::new(),
                dirs: 0,
            };
            walk.dir(dir, 0);
            walk.found
        }
    }
}

/// The search of one agent skill directory for `**/SKILL.md`: depth first, entries in name
/// order, the `SKILL.md` of a directory before those below it; symlinked directories followed,
/// each directory visited once (so a link back up is no loop); dot entries skipped, as a glob
/// skips them.
struct Walk<'a> {
    location: &'a Location,
    watch: &'a mut WatchSet,
    found: Found,
    seen: HashSet<(u64, u64)>,
    dirs: usize,
}

impl Walk<'_> {
    fn problem(&mut self, path: &Path, message: impl Into<String>) {
        self.found.problems.push(Problem {
            path: path.display().to_string(),
            message: message.into(),
        });
    }

    fn dir(&mut self, dir: &Path, depth: usize) {
        let Ok(meta) = std::fs::metadata(dir) else { return };
        if !self.seen.insert((meta.dev(), meta.ino())) {
            return;
        }
        if self.dirs == MAX_DIRS {
            self.problem(
                dir,
                format!(
                    "the search for SKILL.md stopped after {MAX_DIRS} directories; skills in this and later directories are not served"
                ),
            );
        }
        self.dirs += 1;
        if self.dirs > MAX_DIRS {
            return;
        }
        self.watch.dirs.push(dir.to_path_buf());
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                let what = if depth == 0 { "the skills directory" } else { "this directory" };
                self.problem(dir, format!("cannot list {what}: {e}; skills in it are not served"));
                return;
            }
        };
        let mut names: Vec<(OsString, Option<std::fs::FileType>)> = entries
            .filter_map(|e| e.ok().map(|e| (e.file_name(), e.file_type().ok())))
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        let mut below = Vec::new();
        for (name, kind) in names {
            let path = dir.join(&name);
            if name == "SKILL.md" {
                self.skill_file(dir, path, kind);
                continue;
            }
            if name.as_bytes().starts_with(b".") {
                continue;
            }
            match kind {
                Some(k) if k.is_dir() => below.push(path),
                Some(k) if k.is_symlink() => match std::fs::metadata(&path) {
                    Ok(m) if m.is_dir() => {
                        self.watch.links.insert(path.clone());
                        below.push(path);
                    }
                    Ok(_) => {}
                    // A broken link where skill directories live is a skill an installer lost;
                    // deeper down it is the skill's own business.
                    Err(e) if depth == 0 => {
                        self.watch.links.insert(path.clone());
                        let why = if e.raw_os_error() == Some(libc::ELOOP) {
                            "is a symlink loop".to_string()
                        } else {
                            format!("is a symlink that cannot be followed: {e}")
                        };
                        self.problem(&path, format!("{why}; skipped"));
                    }
                    Err(_) => {}
                },
                _ => {}
            }
        }
        if depth >= MAX_DEPTH {
            if let Some(first) = below.first() {
                let first = first.clone();
                self.problem(
                    &first,
                    format!("is more than {MAX_DEPTH} levels below the skills directory; SKILL.md files below it are not served"),
                );
            }
            return;
        }
        for b in below {
            self.dir(&b, depth + 1);
        }
    }

    fn skill_file(&mut self, dir: &Path, path: PathBuf, kind: Option<std::fs::FileType>) {
        let Some(id) = dir.file_name().and_then(OsStr::to_str) else {
            self.problem(&path, "the name of its directory is not UTF-8; skipped");
            return;
        };
        let regular = match kind {
            Some(k) if k.is_file() => true,
            Some(k) if k.is_symlink() => match std::fs::metadata(&path) {
                Ok(m) => {
                    self.watch.files.push(path.clone());
                    self.watch.links.insert(path.clone());
                    m.is_file()
                }
                Err(e) => {
                    let why = if e.raw_os_error() == Some(libc::ELOOP) {
                        "is a symlink loop".to_string()
                    } else {
                        format!("cannot be resolved: {e}")
                    };
                    self.problem(&path, format!("{why}; skipped"));
                    return;
                }
            },
            _ => false,
        };
        if !regular {
            self.problem(&path, "is not a regular file; skipped");
            return;
        }
        self.found
            .candidates
            .push(super::candidate(id, path, Layout::AgentSkill, self.location));
    }
}

// ---------------------------------------------------------------------------------------------
// Scanning

/// What identifies a file's content without opening it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    mode: u32,
    size: u64,
    mtime: i64,
    mtime_nsec: i64,
    ctime: i64,
    ctime_nsec: i64,
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
            ctime: m.ctime(),
            ctime_nsec: m.ctime_nsec(),
        })
    }
}

/// A parsed skill kept between scans, with the faults it is served with.
struct Cached {
    stamp: Stamp,
    meta: Arc<Meta>,
    warnings: Vec<Problem>,
}

/// The served skills. A scan lists the directories and stats each skill file; only files whose
/// stamp changed are read and parsed again. When to scan is the caller's choice: `tiershim mcp`
/// scans when something under [`Scanner::watch`] changed, and every 30 seconds.
pub struct Scanner {
    pub selection: Selection,
    cache: HashMap<PathBuf, Cached>,
    pub served: Served,
    /// What the last scan read.
    pub watch: WatchSet,
}

impl Scanner {
    pub fn new(selection: Selection) -> Scanner {
        let mut s = Scanner {
            selection,
            cache: HashMap::new(),
            served: Served::default(),
            watch: WatchSet::default(),
        };
        s.rescan();
        s
    }

    /// Find and read the skills again (parsing only what changed).
    pub fn rescan(&mut self) {
        let dirs = self.selection.source_dirs();
        let mut watch = WatchSet::default();
        if let Some(repos) = self.selection.repos_dir() {
            // A repository added there may bring skills, and one that has none yet may gain them.
            if repos.is_dir() {
                watch.dirs.push(repos.to_path_buf());
                for repo in std::fs::read_dir(repos).into_iter().flatten().flatten() {
                    let skills = repo.path().join(".claude-ops").join("skills");
                    if repo.path().is_dir() && !skills.is_dir() {
                        watch.ancestor_of(&skills);
                    }
                }
            } else {
                watch.ancestor_of(repos);
            }
        }
        self.served = self.scan(&dirs, &mut watch);
        self.watch = watch;
    }

    /// The metadata of a candidate: from the cache when its stamp is unchanged, else read and
    /// parsed. A skill that cannot be served is a problem, not a skill.
    fn meta(&mut self, c: &Candidate) -> Result<(Arc<Meta>, Vec<Problem>), Problem> {
        let file = c.file().map(Path::to_path_buf);
        let stamp = file.as_deref().and_then(Stamp::of);
        if let (Some(f), Some(st)) = (&file, stamp)
            && let Some(cached) = self.cache.get(f)
            && cached.stamp == st
        {
            return Ok((Arc::clone(&cached.meta), cached.warnings.clone()));
        }
        let skill = super::load(c, Need::All).map_err(|p| Problem {
            path: p.path,
            message: format!("{}; skipped", p.message),
        })?;
        if let Some(why) = unservable(&skill) {
            return Err(Problem {
                path: skill.shown.clone(),
                message: format!("{why}; skipped"),
            });
        }
        let warnings: Vec<Problem> = skill
            .parsed
            .findings
            .iter()
            .filter(|f| f.level == Level::Error)
            .map(|f| Problem {
                path: skill.shown.clone(),
                message: format!(
                    "{}; served, but the gate refuses the calls that need this skill until it is fixed",
                    f.message
                ),
            })
            .collect();
        let meta = Arc::new(Meta::of(&skill));
        if let (Some(f), Some(st)) = (file, stamp) {
            self.cache.insert(
                f,
                Cached {
                    stamp: st,
                    meta: Arc::clone(&meta),
                    warnings: warnings.clone(),
                },
            );
        }
        Ok((meta, warnings))
    }

    fn scan(&mut self, dirs: &[SourceDir], watch: &mut WatchSet) -> Served {
        let mut served = Served::default();
        let mut seen_files = HashSet::new();
        // id -> index in served.entries; folded skill name -> index.
        let mut by_id: HashMap<String, usize> = HashMap::new();
        let mut by_name: HashMap<String, usize> = HashMap::new();
        for d in dirs {
            let found = find(d, watch);
            served.problems.extend(found.problems);
            for c in found.candidates {
                if let Some(f) = c.file() {
                    seen_files.insert(f.to_path_buf());
                }
                let (meta, warnings) = match self.meta(&c) {
                    Ok(m) => m,
                    Err(p) => {
                        served.problems.push(p);
                        continue;
                    }
                };
                served.problems.extend(warnings);
                let winner = by_id.get(&meta.name).or_else(|| by_name.get(&fold(&meta.skill_name))).copied();
                match winner {
                    Some(i) => {
                        let winner = &mut served.entries[i];
                        // Only a copy of the same skill (same id) raises its tier: that is what
                        // the gate reads.
                        if winner.meta.name == meta.name {
                            winner.tier_required = winner.tier_required.max(meta.tier);
                        }
                        winner.shadows.push(meta.shown.clone());
                        served.shadowed.push((meta, winner.meta.shown.clone()));
                    }
                    None => {
                        // Absolute: every source directory is (the caller makes it so).
                        let file = c.file().map(Path::to_path_buf);
                        let base = file.as_ref().and_then(|f| f.parent().map(Path::to_path_buf));
                        by_id.insert(meta.name.clone(), served.entries.len());
                        by_name.insert(fold(&meta.skill_name), served.entries.len());
                        served.entries.push(Entry {
                            tier_required: meta.tier,
                            meta,
                            candidate: c,
                            file,
                            base,
                            scope: d.scope,
                            shadows: Vec::new(),
                        });
                    }
                }
            }
        }
        served.index();
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

    fn skill_md(name: &str, description: &str) -> String {
        format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n")
    }

    fn ids(s: &Scanner) -> Vec<&str> {
        s.served.entries.iter().map(Entry::id).collect()
    }

    #[test]
    fn the_conventional_directories_come_in_the_universal_skills_order() {
        let s = Selection {
            install: None,
            dirs: vec![],
            cwd: PathBuf::from("/w"),
            home: Some(PathBuf::from("/h")),
        };
        let got: Vec<(PathBuf, Scope)> = s.source_dirs().into_iter().map(|d| (d.dir.unwrap(), d.scope)).collect();
        assert_eq!(
            got,
            vec![
                (PathBuf::from("/w/.agent/skills"), Scope::Project),
                (PathBuf::from("/h/.agent/skills"), Scope::Global),
                (PathBuf::from("/w/.claude/skills"), Scope::Project),
                (PathBuf::from("/h/.claude/skills"), Scope::Global),
            ]
        );
        let same = Selection {
            home: Some(PathBuf::from("/w")),
            ..s
        };
        let got: Vec<Scope> = same.source_dirs().iter().map(|d| d.scope).collect();
        assert_eq!(got, vec![Scope::Project, Scope::Project]);
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
        let got: Vec<(String, Kind, Scope)> = s.source_dirs().iter().map(|d| (d.location.to_string(), d.kind, d.scope)).collect();
        assert_eq!(
            got,
            vec![
                ("repo infra".into(), Kind::ClaudeOps, Scope::Project),
                ("baseline".into(), Kind::ClaudeOps, Scope::Global),
                ("repo alpha".into(), Kind::ClaudeOps, Scope::Global),
                ("repo zulu".into(), Kind::ClaudeOps, Scope::Global),
                ("/extra".into(), Kind::Agent, Scope::Global),
            ]
        );
    }

    #[test]
    fn the_first_copy_of_a_skill_wins_and_can_only_raise_the_tier() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        write(&a.join("deploy/SKILL.md"), &skill_md("deploy", "Near copy."));
        write(
            &b.join("deploy/SKILL.md"),
            "---\nname: deploy\ndescription: Far copy.\n---\n# Deploy\n\n## Tier Requirement\n\nTier 3\n",
        );
        write(&b.join("other/SKILL.md"), &skill_md("other", "Other."));
        let s = Scanner::new(selection(vec![a.clone(), b.clone()]));
        assert_eq!(ids(&s), vec!["deploy", "other"]);
        let deploy = &s.served.entries[0];
        assert_eq!(deploy.meta.description, "Near copy.");
        assert_eq!(deploy.load().unwrap().body(), "# deploy\n");
        assert_eq!(deploy.tier_required, Some(3));
        assert_eq!(deploy.shadows, vec![b.join("deploy/SKILL.md").display().to_string()]);
        assert_eq!(s.served.shadowed.len(), 1);
        assert!(!deploy.available(&Session::new(None, Some("2"))));
        assert!(deploy.available(&Session::new(None, Some("3"))));
        assert!(!deploy.available(&Session::new(Some(2), Some("3"))));
    }

    #[test]
    fn lookups_go_by_name_ignoring_case_and_space_then_by_id() {
        let t = tempfile::tempdir().unwrap();
        write(&t.path().join("pdf-processing/SKILL.md"), &skill_md("PDF Processing", "P."));
        write(&t.path().join("tools/SKILL.md"), &skill_md("My_Tool", "T."));
        write(&t.path().join("Mixed/SKILL.md"), &skill_md("Mixed", "M."));
        let s = Scanner::new(selection(vec![t.path().to_path_buf()]));
        let found = |n: &str| s.served.find(n).map(Entry::id);
        assert_eq!(found("pdf processing"), Some("pdf-processing"));
        assert_eq!(found("  PDF PROCESSING "), Some("pdf-processing"));
        assert_eq!(found("pdf-processing"), Some("pdf-processing"));
        assert_eq!(found("my_tool"), Some("tools"));
        assert_eq!(found("TOOLS"), Some("tools"));
        assert_eq!(found("mixed"), Some("Mixed"));
        assert_eq!(found("none"), None);
        assert_eq!(s.served.find_id("pdf-processing").map(|e| e.skill_name()), Some("PDF Processing"));
        assert_eq!(s.served.find_id("Tools").map(Entry::id), Some("tools"));
    }

    #[test]
    fn a_later_skill_with_the_same_name_in_another_case_is_shadowed() {
        let t = tempfile::tempdir().unwrap();
        write(&t.path().join("a/SKILL.md"), &skill_md("Deploy", "First."));
        write(&t.path().join("b/SKILL.md"), &skill_md("deploy", "Second."));
        let s = Scanner::new(selection(vec![t.path().to_path_buf()]));
        assert_eq!(ids(&s), vec!["a"]);
        assert_eq!(s.served.shadowed[0].1, t.path().join("a/SKILL.md").display().to_string());
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
        assert_eq!(check_name("PDF Processing"), Ok(()));
    }

    #[test]
    fn only_skill_md_files_at_any_depth_are_skills_in_an_agent_directory() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        write(&d.join("README.md"), "# A collection\n");
        write(&d.join("NOTES.md"), "# Skill: notes\n");
        write(&d.join("collection/skills/pdf/SKILL.md"), &skill_md("pdf", "PDF."));
        write(&d.join("collection/skills/pdf/forms.md"), "# Forms\n");
        write(&d.join("collection/skills/pdf/CHANGELOG.md"), "# Changes\n");
        write(&d.join("collection/template/SKILL.md"), &skill_md("template-skill", "T."));
        write(&d.join(".hidden/SKILL.md"), &skill_md("hidden", "H."));
        let s = Scanner::new(selection(vec![d.to_path_buf()]));
        assert_eq!(ids(&s), vec!["pdf", "template"]);
        assert_eq!(s.served.problems, vec![]);
        assert_eq!(
            s.served.find("template-skill").and_then(|e| e.base.clone()),
            Some(d.join("collection/template"))
        );
    }

    #[test]
    fn symlinked_skill_directories_are_followed_wherever_they_lead_and_loops_are_not() {
        let t = tempfile::tempdir().unwrap();
        let canonical = t.path().join("canonical/pdf");
        write(&canonical.join("SKILL.md"), &skill_md("pdf", "PDF."));
        let skills = t.path().join("home/.claude/skills");
        std::fs::create_dir_all(&skills).unwrap();
        std::os::unix::fs::symlink(&canonical, skills.join("pdf")).unwrap();
        std::os::unix::fs::symlink(&skills, skills.join("again")).unwrap();
        std::os::unix::fs::symlink(t.path().join("gone"), skills.join("lost")).unwrap();
        let s = Scanner::new(selection(vec![skills.clone()]));
        assert_eq!(ids(&s), vec!["pdf"]);
        assert_eq!(s.served.entries[0].base, Some(skills.join("pdf")));
        let msgs: Vec<String> = s.served.problems.iter().map(|p| format!("{}: {}", p.path, p.message)).collect();
        assert_eq!(msgs.len(), 1, "{msgs:?}");
        assert!(msgs[0].starts_with(&format!("{}: is a symlink that cannot be followed", skills.join("lost").display())));
        assert!(s.watch.links.contains(&skills.join("pdf")));
        assert!(s.watch.dirs.contains(&skills.join("pdf")));
    }

    #[test]
    fn skills_that_cannot_be_served_are_skipped_and_other_faults_are_served_and_reported() {
        let t = tempfile::tempdir().unwrap();
        write(&t.path().join("bad/SKILL.md"), "---\nname: [unclosed\n---\n# x\n");
        write(&t.path().join("nodesc/SKILL.md"), "---\nname: nodesc\n---\n# x\n");
        write(
            &t.path().join("third-party/SKILL.md"),
            "---\nname: Third Party\ndescription: Not ours.\n---\n# T\n\n## Tier Requirement\n\nA paid plan.\n",
        );
        write(&t.path().join("bom/SKILL.md"), "\u{FEFF}---\nname: bom\ndescription: B.\n---\n");
        let s = Scanner::new(selection(vec![t.path().to_path_buf()]));
        assert_eq!(ids(&s), vec!["bom", "third-party"]);
        assert_eq!(s.served.entries[1].tier_required, None);
        let msgs: Vec<String> = s.served.problems.iter().map(|p| format!("{}: {}", p.path, p.message)).collect();
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert!(msgs[0].contains("bad/SKILL.md") && msgs[0].contains("not valid YAML"), "{msgs:?}");
        assert!(msgs[1].contains("no `description`") && msgs[1].ends_with("skipped"), "{msgs:?}");
        assert!(
            msgs[2].contains("Tier Requirement names no tier") && msgs[2].contains("; served, but the gate refuses"),
            "{msgs:?}"
        );
    }

    #[test]
    fn a_rescan_parses_only_what_changed() {
        let t = tempfile::tempdir().unwrap();
        write(&t.path().join("a/SKILL.md"), &skill_md("a", "A."));
        let mut s = Scanner::new(selection(vec![t.path().to_path_buf()]));
        let before = Arc::clone(&s.served.entries[0].meta);
        write(&t.path().join("b/SKILL.md"), &skill_md("b", "B."));
        s.rescan();
        assert_eq!(ids(&s), vec!["a", "b"]);
        assert!(Arc::ptr_eq(&before, &s.served.entries[0].meta), "a was parsed again");
        write(&t.path().join("a/SKILL.md"), &skill_md("a", "A, longer now."));
        s.rescan();
        assert_eq!(s.served.entries[0].meta.description, "A, longer now.");
    }

    #[test]
    fn a_named_directory_that_is_missing_is_reported_and_watched_through_its_ancestor() {
        let t = tempfile::tempdir().unwrap();
        let missing = t.path().join("later/skills");
        let s = Scanner::new(selection(vec![missing.clone()]));
        assert_eq!(s.served.problems.len(), 1);
        assert!(s.watch.ancestors.contains(&(t.path().to_path_buf(), OsString::from("later"))));
        let conventional = Scanner::new(Selection {
            dirs: vec![],
            ..selection(vec![])
        });
        assert_eq!(conventional.served.problems, vec![]);
    }

    #[test]
    fn the_install_directories_are_read_as_the_gate_reads_them() {
        let t = tempfile::tempdir().unwrap();
        write(&t.path().join("base/restart.md"), "# Skill: Restart\n\n## Purpose\n\nRestart it.\n");
        write(&t.path().join("base/deploy/SKILL.md"), &skill_md("deploy", "D."));
        write(&t.path().join("base/deploy/notes.md"), "# not a skill\n");
        let s = Scanner::new(Selection {
            install: Some(Sources {
                baseline: Some(t.path().join("base")),
                repos: Some(t.path().join("repos")),
            }),
            ..selection(vec![])
        });
        assert_eq!(ids(&s), vec!["deploy", "restart"]);
        assert_eq!(s.served.entries[1].skill_name(), "restart");
        assert_eq!(s.served.entries[1].meta.display_name, "Restart");
        assert!(s.watch.dirs.contains(&t.path().join("base/deploy")));
        assert!(s.watch.ancestors.contains(&(t.path().to_path_buf(), OsString::from("repos"))));
        // A repository without skills yet is watched for the directory that would hold them.
        std::fs::create_dir_all(t.path().join("repos/infra")).unwrap();
        let mut s = s;
        s.rescan();
        assert!(s.watch.dirs.contains(&t.path().join("repos")));
        assert!(
            s.watch
                .ancestors
                .contains(&(t.path().join("repos/infra"), OsString::from(".claude-ops")))
        );
    }
}
