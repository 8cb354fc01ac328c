//! Skills: finding skill files (the baseline directory and every repository's
//! `.claude-ops/skills/`), reading one, and the two things a decision takes from them: the Tier
//! Requirement of one named skill, and the path patterns of all of them.
//!
//! Discovery runs on each call that needs skills and reads only what that call needs: a call
//! with no scope check and no tier to raise reads no skill at all; a tier lookup reads the files
//! of one name; a scope check reads every skill file, but parses only those that have a Scope
//! Rules section. Nothing here decides; errors name the file.
//!
//! Both layouts are skills: `name.md` (Claude Ops) and `name/SKILL.md` (Agent Skills). A symlink
//! is followed only when it stays inside the directory it was found in.

pub mod parse;
pub mod served;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::install::SkillsConfig;
pub use parse::{Finding, Level, Origin, Parsed, Pattern};

/// A skill file larger than this is not read.
pub const MAX_FILE: u64 = 1024 * 1024;

/// The shipped skills, embedded at build time: (path under `skills/`, text). Used when no
/// installed copy is found beside the binary and the config names no baseline directory.
pub const EMBEDDED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/skills.rs"));

/// Where a skill was found.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "name")]
pub enum Location {
    /// The install's baseline directory (`skills.baseline`).
    Baseline,
    /// `<repos>/<repo>/.claude-ops/skills/`.
    Repo(String),
    /// A directory served by `tiershim mcp`: named with `--skills-dir`, or one of the
    /// conventional agent skill directories. Holds the directory as shown to people.
    Dir(String),
    /// The copy built into this binary.
    Embedded,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Baseline => f.write_str("baseline"),
            Location::Repo(r) => write!(f, "repo {r}"),
            Location::Dir(d) => f.write_str(d),
            Location::Embedded => f.write_str("embedded"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// `name.md` (Claude Ops).
    ClaudeOps,
    /// `name/SKILL.md` (Agent Skills).
    AgentSkill,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    File(PathBuf),
    Embedded(&'static str),
    /// Read by the gate from somewhere other than a file (a git ref's blob).
    Text(String),
}

/// A skill file found by discovery, not yet read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub name: String,
    /// The path shown to people (and in SCOPE VIOLATION lines).
    pub shown: String,
    pub layout: Layout,
    pub location: Location,
    source: Source,
}

impl Candidate {
    /// The file on disk, as discovery found it (not resolved); `None` for the embedded copy.
    pub fn file(&self) -> Option<&Path> {
        match &self.source {
            Source::File(p) => Some(p),
            Source::Embedded(_) | Source::Text(_) => None,
        }
    }

    /// A skill whose text the gate already read (from a git ref: `facts::repo_skills`).
    pub fn from_text(name: &str, shown: String, layout: Layout, location: Location, text: String) -> Candidate {
        Candidate {
            name: name.to_string(),
            shown,
            layout,
            location,
            source: Source::Text(text),
        }
    }
}

/// Something discovery could not use: reported by `skills validate`, and an error for a
/// decision that needs what it might hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

/// One skill file, read and parsed.
#[derive(Debug, Clone)]
pub struct Skill {
    pub name: String,
    pub shown: String,
    pub layout: Layout,
    pub location: Location,
    pub text: String,
    pub parsed: Parsed,
}

impl Skill {
    /// The first error-level finding: a skill with one cannot decide a tier.
    pub fn error(&self) -> Option<&str> {
        self.parsed.error()
    }

    /// The frontmatter description, else the first paragraph of Purpose.
    pub fn description(&self) -> String {
        if let Some(d) = self.parsed.frontmatter.as_ref().and_then(|f| f.description.clone()) {
            return d.trim().to_string();
        }
        self.section_text("Purpose")
            .and_then(|t| t.split("\n\n").map(str::trim).find(|p| !p.is_empty()).map(|p| p.replace('\n', " ")))
            .unwrap_or_default()
    }

    pub fn section_text(&self, name: &str) -> Option<&str> {
        self.parsed.section(name).and_then(|s| self.text.get(s.range.clone()))
    }

    /// The file's text without frontmatter.
    pub fn body(&self) -> &str {
        self.text.get(self.parsed.body.clone()).unwrap_or("")
    }
}

// ---------------------------------------------------------------------------------------------
// Discovery

/// Every skill file directly in `dir`: `*.md` (not README.md) and `*/SKILL.md`, sorted by name.
/// A missing directory has no skills and no problems; the caller decides whether that is fine.
pub fn discover(dir: &Path, location: &Location) -> (Vec<Candidate>, Vec<Problem>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (out, problems),
        Err(e) => {
            problems.push(Problem {
                path: dir.display().to_string(),
                message: format!("cannot list the skills directory: {e}"),
            });
            return (out, problems);
        }
    };
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    // The entry's type comes with the listing: no stat for the common case of plain files.
    let mut names: Vec<(std::ffi::OsString, Option<std::fs::FileType>)> = entries
        .filter_map(|e| e.ok().map(|e| (e.file_name(), e.file_type().ok())))
        .collect();
    // Names in a directory are unique, so an unstable sort gives the one order.
    names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (file_name, kind) in names {
        let Some(n) = file_name.to_str() else {
            problems.push(Problem {
                path: dir.join(&file_name).display().to_string(),
                message: "file name is not UTF-8; skipped".into(),
            });
            continue;
        };
        if n.starts_with('.') {
            continue;
        }
        let path = dir.join(n);
        let plain_file = kind.is_some_and(|k| k.is_file());
        let plain_dir = kind.is_some_and(|k| k.is_dir());
        if let Some(stem) = n.strip_suffix(".md") {
            if n.eq_ignore_ascii_case("README.md") {
                continue;
            }
            if plain_file {
                out.push(candidate(stem, path, Layout::ClaudeOps, location));
            } else if let Some(c) = vet(&root, &path, stem, Layout::ClaudeOps, location, &mut problems) {
                out.push(c);
            }
        } else if plain_dir || kind.is_some_and(|k| k.is_symlink()) {
            let skill_md = path.join("SKILL.md");
            let Ok(meta) = std::fs::symlink_metadata(&skill_md) else {
                continue; // a directory that is not a skill (references/, assets/ …)
            };
            if plain_dir && meta.is_file() {
                out.push(candidate(n, skill_md, Layout::AgentSkill, location));
            } else if let Some(c) = vet(&root, &skill_md, n, Layout::AgentSkill, location, &mut problems) {
                out.push(c);
            }
        }
    }
    (out, problems)
}

/// A file found with no symlink between the directory and it: inside by construction.
fn candidate(name: &str, path: PathBuf, layout: Layout, location: &Location) -> Candidate {
    Candidate {
        name: name.to_string(),
        shown: shown(&path),
        layout,
        location: location.clone(),
        source: Source::File(path),
    }
}

/// `path` as shown to people: `Path::display`, without its formatting machinery for the common
/// case of a UTF-8 path.
fn shown(path: &Path) -> String {
    match path.to_str() {
        Some(s) => s.to_string(),
        None => path.display().to_string(),
    }
}

/// The files of skill `name` in `dir` (either layout), vetted like discovery does.
pub fn named(dir: &Path, name: &str, location: &Location) -> (Vec<Candidate>, Vec<Problem>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    if name.is_empty() || name.starts_with('.') || name.contains(['/', '\\', '\0']) {
        return (out, problems);
    }
    let root = match std::fs::canonicalize(dir) {
        Ok(r) => r,
        Err(_) => return (out, problems),
    };
    for (path, layout) in [
        (dir.join(format!("{name}.md")), Layout::ClaudeOps),
        (dir.join(name).join("SKILL.md"), Layout::AgentSkill),
    ] {
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        if let Some(c) = vet(&root, &path, name, layout, location, &mut problems) {
            out.push(c);
        }
    }
    (out, problems)
}

/// A candidate when `path` is a regular file whose real location is inside `root`.
fn vet(root: &Path, path: &Path, name: &str, layout: Layout, location: &Location, problems: &mut Vec<Problem>) -> Option<Candidate> {
    let shown = shown(path);
    let real = match std::fs::canonicalize(path) {
        Ok(r) => r,
        Err(e) => {
            let why = if e.raw_os_error() == Some(libc::ELOOP) {
                "is a symlink loop".to_string()
            } else {
                format!("cannot be resolved: {e}")
            };
            problems.push(Problem {
                path: shown,
                message: format!("{why}; skipped"),
            });
            return None;
        }
    };
    if !real.starts_with(root) {
        problems.push(Problem {
            path: shown,
            message: format!("is a symlink to {}, outside {}; skipped", real.display(), root.display()),
        });
        return None;
    }
    if !std::fs::metadata(&real).is_ok_and(|m| m.is_file()) {
        problems.push(Problem {
            path: shown,
            message: "is not a regular file; skipped".into(),
        });
        return None;
    }
    Some(Candidate {
        name: name.to_string(),
        shown,
        layout,
        location: location.clone(),
        source: Source::File(path.to_path_buf()),
    })
}

/// The embedded copy of the shipped skills.
pub fn embedded() -> Vec<Candidate> {
    let mut out = Vec::new();
    for (rel, text) in EMBEDDED {
        let (name, layout) = match rel.strip_suffix("/SKILL.md") {
            Some(dir) => (dir, Layout::AgentSkill),
            None => (rel.trim_end_matches(".md"), Layout::ClaudeOps),
        };
        out.push(Candidate {
            name: name.to_string(),
            shown: format!("(embedded)/skills/{rel}"),
            layout,
            location: Location::Embedded,
            source: Source::Embedded(text),
        });
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Reading

/// What the caller needs from a file: everything, or only its path patterns (then a file
/// without a Scope Rules section is not parsed at all, and the skill keeps no text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    All,
    /// The path patterns and the findings about them; [`Skill::text`] is left empty.
    Patterns,
}

/// Read and parse one candidate. Errors (unreadable, too large, not UTF-8) name the file.
pub fn load(c: &Candidate, need: Need) -> Result<Skill, Problem> {
    Reader::default().load(c, need)
}

/// Reads many skill files through one buffer: each file is one open, a read or two and a
/// close, and its bytes are not copied again unless the skill keeps its text.
#[derive(Debug, Default)]
pub struct Reader {
    buf: Vec<u8>,
}

impl Reader {
    /// [`load`], reusing this reader's buffer.
    pub fn load(&mut self, c: &Candidate, need: Need) -> Result<Skill, Problem> {
        let (parsed, text) = match need {
            Need::Patterns => (self.patterns(c)?, String::new()),
            Need::All => {
                let text = self.text(c)?;
                (parse::parse(text, c.layout == Layout::AgentSkill), text.to_string())
            }
        };
        Ok(Skill {
            name: c.name.clone(),
            shown: c.shown.clone(),
            layout: c.layout,
            location: c.location.clone(),
            text,
            parsed,
        })
    }

    /// A [`Need::Patterns`] read of `c` without the rest of a [`Skill`]: the path patterns and
    /// the findings about them (nothing at all for a file that cannot hold any).
    pub fn patterns(&mut self, c: &Candidate) -> Result<Parsed, Problem> {
        let agent_skill = c.layout == Layout::AgentSkill;
        let text = self.text(c)?;
        Ok(if may_hold_rules(text) {
            parse::parse_patterns(text, agent_skill)
        } else {
            Parsed::default()
        })
    }

    fn text<'a>(&'a mut self, c: &'a Candidate) -> Result<&'a str, Problem> {
        match &c.source {
            Source::Embedded(t) => Ok(t),
            Source::Text(t) => Ok(t),
            Source::File(p) => read_text(p, &mut self.buf).map_err(|message| Problem {
                path: c.shown.clone(),
                message,
            }),
        }
    }
}

/// The text of file `p`, read into `buf` (which stays allocated from one file to the next;
/// only the bytes read this time are looked at): at most [`MAX_FILE`] bytes, UTF-8, without a byte order mark.
fn read_text<'b>(p: &Path, buf: &'b mut Vec<u8>) -> Result<&'b str, String> {
    const LIMIT: usize = MAX_FILE as usize + 1;
    let mut f = std::fs::File::open(p).map_err(|e| format!("cannot read: {e}"))?;
    if buf.is_empty() {
        // One read fills a skill file of common size; the next one sees the end.
        buf.resize(16 * 1024, 0);
    }
    let mut filled = 0;
    loop {
        if filled == buf.len() && filled < LIMIT {
            buf.resize((buf.len() * 2).min(LIMIT), 0);
        }
        let n = match f.read(&mut buf[filled..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("cannot read: {e}")),
        };
        filled += n;
        if filled > MAX_FILE as usize {
            return Err(format!("is larger than {MAX_FILE} bytes; not read"));
        }
        if n == 0 {
            break;
        }
    }
    let read = &buf[..filled];
    // A UTF-8 byte order mark is not text: editors on some systems write one, and frontmatter
    // must start the file.
    let text = read.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(read);
    std::str::from_utf8(text).map_err(|e| format!("is not UTF-8 (at byte {})", e.valid_up_to()))
}

/// Whether a file can hold path rules, or a mistake about them: a Scope Rules section, or a
/// `deny`/`allow` fence anywhere (under a misspelt heading it is an error, not nothing).
fn may_hold_rules(text: &str) -> bool {
    contains_ascii_ci(text, b"scope rules")
        // A fence opens with three backticks or tildes: a file without either has none.
        || (has_fence_run(text.as_bytes())
            && text.lines().any(|l| {
                let l = l.trim_start();
                let rest = l.trim_start_matches('`');
                let rest = if rest.len() == l.len() { l.trim_start_matches('~') } else { rest };
                l.len() - rest.len() >= 3 && matches!(rest.split_whitespace().next(), Some("deny" | "allow"))
            }))
}

/// Whether `h` holds three backticks or three tildes in a row.
fn has_fence_run(h: &[u8]) -> bool {
    memchr::memchr2_iter(b'`', b'~', h).any(|i| h.get(i + 1..i + 3).is_some_and(|w| w[0] == h[i] && w[1] == h[i]))
}

/// Whether `hay` holds `needle` (lower-case ASCII, not empty) in any ASCII case: the first
/// byte found with memchr, the rest compared.
fn contains_ascii_ci(hay: &str, needle: &[u8]) -> bool {
    let h = hay.as_bytes();
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), h)
        .any(|i| h.get(i + 1..i + needle.len()).is_some_and(|w| w.eq_ignore_ascii_case(rest)))
}

// ---------------------------------------------------------------------------------------------
// The skills of an install

/// The directories an install's skills come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sources {
    /// `None`: the shipped skills (installed beside the binary, else the embedded copy).
    pub baseline: Option<PathBuf>,
    pub repos: Option<PathBuf>,
}

impl Sources {
    pub fn from_config(cfg: Option<&SkillsConfig>) -> Sources {
        Sources {
            baseline: cfg.and_then(|c| c.baseline.clone()),
            repos: cfg.and_then(|c| c.repos.clone()),
        }
    }

    /// The repository (a directory name under `repos`) that holds `path`, if any.
    pub fn repo_of(&self, path: &Path) -> Option<String> {
        let repos = std::fs::canonicalize(self.repos.as_ref()?).ok()?;
        let real = std::fs::canonicalize(path).ok()?;
        let rest = real.strip_prefix(&repos).ok()?;
        rest.components().next().and_then(|c| c.as_os_str().to_str()).map(str::to_string)
    }

    /// Every repository under `repos` that has a `.claude-ops/skills/` directory.
    pub fn repos(&self) -> Vec<(String, PathBuf)> {
        let Some(repos) = &self.repos else {
            return Vec::new();
        };
        let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(repos)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_str()?.to_string();
                let dir = e.path().join(".claude-ops").join("skills");
                dir.is_dir().then_some((name, dir))
            })
            .collect();
        out.sort();
        out
    }

    /// The directory of repository `repo` under `repos`.
    pub fn repo_root(&self, repo: &str) -> Option<PathBuf> {
        Some(self.repos.as_ref()?.join(repo))
    }

    fn repo_dir(&self, repo: &str) -> Option<PathBuf> {
        Some(self.repos.as_ref()?.join(repo).join(".claude-ops").join("skills"))
    }

    /// The baseline candidates: the configured directory (which must exist), else the installed
    /// shipped skills, else the embedded copy.
    pub fn baseline(&self) -> (Vec<Candidate>, Vec<Problem>) {
        match &self.baseline {
            Some(dir) => {
                if !dir.is_dir() {
                    return (
                        Vec::new(),
                        vec![Problem {
                            path: dir.display().to_string(),
                            message: "the baseline skills directory (skills.baseline in tiershim.yaml) does not exist".into(),
                        }],
                    );
                }
                discover(dir, &Location::Baseline)
            }
            None => match installed_dir() {
                Some(dir) => discover(&dir, &Location::Baseline),
                None => (embedded(), Vec::new()),
            },
        }
    }

    pub fn baseline_named(&self, name: &str) -> (Vec<Candidate>, Vec<Problem>) {
        match &self.baseline {
            Some(dir) if !dir.is_dir() => self.baseline(),
            Some(dir) => named(dir, name, &Location::Baseline),
            None => match installed_dir() {
                Some(dir) => named(&dir, name, &Location::Baseline),
                None => (embedded().into_iter().filter(|c| c.name == name).collect(), Vec::new()),
            },
        }
    }

    /// The skill files of repository `repo`'s directory on disk.
    pub fn repo_all(&self, repo: &str) -> (Vec<Candidate>, Vec<Problem>) {
        match self.repo_dir(repo) {
            Some(dir) => discover(&dir, &Location::Repo(repo.to_string())),
            None => (Vec::new(), Vec::new()),
        }
    }

    /// The files of skill `name` in repository `repo`'s directory on disk.
    pub fn repo_named(&self, name: &str, repo: &str) -> (Vec<Candidate>, Vec<Problem>) {
        match self.repo_dir(repo) {
            Some(dir) => named(&dir, name, &Location::Repo(repo.to_string())),
            None => (Vec::new(), Vec::new()),
        }
    }

    /// Every skill a scope check in `repo` consults: the baseline and that repository's.
    pub fn all_for(&self, repo: Option<&str>) -> (Vec<Candidate>, Vec<Problem>) {
        let (mut out, mut problems) = self.baseline();
        if let Some(dir) = repo.and_then(|r| self.repo_dir(r)) {
            let (c, p) = discover(&dir, &Location::Repo(repo.unwrap_or_default().to_string()));
            out.extend(c);
            problems.extend(p);
        }
        (out, problems)
    }

    /// The files of one skill: the baseline's and, when the call is in a repository, that
    /// repository's override.
    pub fn named_for(&self, name: &str, repo: Option<&str>) -> (Vec<Candidate>, Vec<Problem>) {
        let (mut out, mut problems) = self.baseline_named(name);
        if let Some(dir) = repo.and_then(|r| self.repo_dir(r)) {
            let (c, p) = named(&dir, name, &Location::Repo(repo.unwrap_or_default().to_string()));
            out.extend(c);
            problems.extend(p);
        }
        (out, problems)
    }
}

/// The shipped skills as installed: `<prefix>/lib/tiershim/skills/` beside `<prefix>/bin/tiershim`.
pub fn installed_dir() -> Option<PathBuf> {
    let exe = std::fs::read_link("/proc/self/exe").ok()?;
    let dir = exe.parent()?.parent()?.join("lib").join("tiershim").join("skills");
    dir.is_dir().then_some(dir)
}

/// Every skill of an install, for `tiershim skills`: each location's files, loaded in full.
pub struct Catalog {
    pub skills: Vec<Skill>,
    pub problems: Vec<Problem>,
}

impl Catalog {
    pub fn load(sources: &Sources) -> Catalog {
        let (mut candidates, mut problems) = sources.baseline();
        for (repo, dir) in sources.repos() {
            let (c, p) = discover(&dir, &Location::Repo(repo));
            candidates.extend(c);
            problems.extend(p);
        }
        let mut skills = Vec::new();
        let mut reader = Reader::default();
        for c in &candidates {
            match reader.load(c, Need::All) {
                Ok(s) => skills.push(s),
                Err(p) => problems.push(p),
            }
        }
        for (name, paths) in duplicates(&skills) {
            problems.push(Problem {
                path: paths.join(", "),
                message: format!("skill `{name}` is defined twice in one directory (name.md and name/SKILL.md); both are read"),
            });
        }
        Catalog { skills, problems }
    }
}

impl Catalog {
    /// Every skill file in these directories (the embedded copy for `dir: None`), loaded in
    /// full, in order; for `tiershim skills show/validate --skills-dir`.
    pub fn from_dirs(dirs: &[served::SourceDir]) -> Catalog {
        let mut skills = Vec::new();
        let mut problems = Vec::new();
        let mut reader = Reader::default();
        for d in dirs {
            let (candidates, p) = served::candidates(d);
            problems.extend(p);
            for c in &candidates {
                match reader.load(c, Need::All) {
                    Ok(s) => skills.push(s),
                    Err(p) => problems.push(p),
                }
            }
        }
        Catalog { skills, problems }
    }
}

/// Names defined twice in the same location.
fn duplicates(skills: &[Skill]) -> Vec<(String, Vec<String>)> {
    let mut seen: BTreeMap<(&Location, &str), Vec<String>> = BTreeMap::new();
    for s in skills {
        seen.entry((&s.location, &s.name)).or_default().push(s.shown.clone());
    }
    seen.into_iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|((_, n), v)| (n.to_string(), v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn both_layouts_are_found_and_other_files_are_not() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        write(&d.join("git-pr.md"), "# Skill: a\n");
        write(&d.join("my-skill/SKILL.md"), "---\nname: my-skill\ndescription: d\n---\n");
        write(&d.join("README.md"), "# readme\n");
        write(&d.join("notes.txt"), "x");
        write(&d.join("assets/logo.svg"), "x");
        let (c, p) = discover(d, &Location::Baseline);
        let got: Vec<(&str, Layout)> = c.iter().map(|c| (c.name.as_str(), c.layout)).collect();
        assert_eq!(got, vec![("git-pr", Layout::ClaudeOps), ("my-skill", Layout::AgentSkill)]);
        assert_eq!(p, vec![]);
    }

    #[test]
    fn symlinks_that_leave_the_directory_and_loops_are_reported_not_followed() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("skills");
        write(&t.path().join("outside.md"), "# Skill: outside\n");
        write(&d.join("real.md"), "# Skill: real\n");
        std::os::unix::fs::symlink(t.path().join("outside.md"), d.join("escape.md")).unwrap();
        std::os::unix::fs::symlink(d.join("real.md"), d.join("alias.md")).unwrap();
        std::os::unix::fs::symlink(d.join("loop-b.md"), d.join("loop-a.md")).unwrap();
        std::os::unix::fs::symlink(d.join("loop-a.md"), d.join("loop-b.md")).unwrap();
        let (c, p) = discover(&d, &Location::Baseline);
        let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, vec!["alias", "real"]);
        let msgs: Vec<String> = p.iter().map(|p| format!("{}: {}", p.path, p.message)).collect();
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert!(msgs.iter().any(|m| m.contains("escape.md") && m.contains("outside")), "{msgs:?}");
        assert!(msgs.iter().filter(|m| m.contains("symlink loop")).count() == 2, "{msgs:?}");
    }

    #[test]
    fn unreadable_large_and_non_utf8_files_are_errors_naming_the_file() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::write(d.join("bin.md"), b"# Skill: x\n\xff\xfe").unwrap();
        std::fs::write(d.join("big.md"), vec![b'a'; MAX_FILE as usize + 1]).unwrap();
        let (c, _) = discover(d, &Location::Baseline);
        let errs: Vec<String> = c.iter().map(|c| load(c, Need::All).unwrap_err().message).collect();
        assert!(errs[0].contains("larger than"), "{errs:?}");
        assert!(errs[1].contains("not UTF-8"), "{errs:?}");
    }

    #[test]
    fn one_reader_reads_each_file_as_if_it_were_the_only_one() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        let long = format!("# Skill: a\n\n## Purpose\n\n{}\n", "word ".repeat(10_000));
        write(&d.join("a.md"), &long);
        std::fs::write(d.join("b.md"), b"# Skill: b\n\xff").unwrap();
        std::fs::write(d.join("c.md"), vec![b'a'; MAX_FILE as usize + 1]).unwrap();
        std::fs::write(d.join("d.md"), vec![b'a'; MAX_FILE as usize]).unwrap();
        write(&d.join("e.md"), "# Skill: e\n\n## Scope Rules\n\n```deny\n*.pem\n```\n");
        let (c, _) = discover(d, &Location::Baseline);
        let mut reader = Reader::default();
        for need in [Need::All, Need::Patterns] {
            for c in &c {
                let (alone, shared) = (load(c, need), reader.load(c, need));
                match (alone, shared) {
                    (Ok(a), Ok(b)) => {
                        assert_eq!(a.text, b.text, "{}", c.shown);
                        assert_eq!(format!("{:?}", a.parsed), format!("{:?}", b.parsed), "{}", c.shown);
                    }
                    (Err(a), Err(b)) => assert_eq!(a, b),
                    (a, b) => panic!("{}: alone {a:?}, shared {b:?}", c.shown),
                }
            }
        }
        assert_eq!(reader.load(&c[0], Need::All).unwrap().text, long);
        assert!(reader.load(&c[2], Need::All).unwrap_err().message.contains("larger than"));
        assert_eq!(reader.load(&c[3], Need::All).unwrap().text.len(), MAX_FILE as usize);
        let e = reader.patterns(&c[4]).unwrap();
        assert_eq!(e.deny.iter().map(|p| p.text.as_str()).collect::<Vec<_>>(), vec!["*.pem"]);
        assert!(reader.load(&c[4], Need::Patterns).unwrap().text.is_empty());
    }

    #[test]
    fn a_file_may_hold_rules_when_it_names_scope_rules_or_opens_a_rule_fence() {
        for (text, may) in [
            ("## SCOPE Rules", true),
            ("x scope rules", true),
            ("## Scope rule", false),
            ("s", false),
            ("", false),
            ("```deny\n", true),
            ("  ~~~ allow x\n", true),
            ("\u{a0}````deny", true),
            ("``deny", false),
            ("```yaml\n", false),
            ("`~~deny", false),
            ("text ```deny", false),
        ] {
            assert_eq!(may_hold_rules(text), may, "{text:?}");
        }
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_text() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("bom")).unwrap();
        std::fs::write(
            t.path().join("bom/SKILL.md"),
            "\u{FEFF}---\nname: bom\ndescription: d\n---\n# Bom\n",
        )
        .unwrap();
        let (c, _) = discover(t.path(), &Location::Baseline);
        let s = load(&c[0], Need::All).unwrap();
        assert_eq!(s.text, "---\nname: bom\ndescription: d\n---\n# Bom\n");
        assert_eq!(s.error(), None);
        assert_eq!(s.description(), "d");
    }

    #[test]
    fn a_pattern_only_read_skips_files_without_scope_rules() {
        let t = tempfile::tempdir().unwrap();
        write(&t.path().join("a.md"), "# Skill: a\n\n## Purpose\n\n- `x.yaml`\n");
        write(&t.path().join("b.md"), "# Skill: b\n\n## Scope rules\n\n- `y.yaml`\n");
        let (c, _) = discover(t.path(), &Location::Baseline);
        let a = load(&c[0], Need::Patterns).unwrap();
        let b = load(&c[1], Need::Patterns).unwrap();
        assert!(a.parsed.sections.is_empty());
        assert_eq!(b.parsed.deny.iter().map(|p| p.text.as_str()).collect::<Vec<_>>(), vec!["y.yaml"]);
    }

    #[test]
    fn the_repository_of_a_path_is_its_first_directory_under_repos() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("repos/infra/sub")).unwrap();
        let s = Sources {
            baseline: None,
            repos: Some(t.path().join("repos")),
        };
        assert_eq!(s.repo_of(&t.path().join("repos/infra/sub")), Some("infra".to_string()));
        assert_eq!(s.repo_of(t.path()), None);
    }

    #[test]
    fn every_shipped_skill_loads_with_every_section_and_no_finding() {
        let shipped = embedded();
        assert_eq!(shipped.len(), 11);
        for c in &shipped {
            let s = load(c, Need::All).unwrap();
            assert_eq!(s.parsed.findings, vec![], "{}", c.shown);
            for section in parse::REQUIRED.iter().chain(parse::OPTIONAL) {
                assert!(s.parsed.section(section).is_some(), "{} lacks {section}", c.shown);
            }
            assert!(s.parsed.tier.is_some(), "{}", c.shown);
            assert!(!s.description().is_empty(), "{}", c.shown);
            crate::scope::Rules::build(std::slice::from_ref(&s)).unwrap();
        }
    }

    #[test]
    fn the_shipped_git_pr_skill_carries_the_legacy_scope_guarantees() {
        let c = embedded().into_iter().find(|c| c.name == "git-pr").unwrap();
        let s = load(&c, Need::All).unwrap();
        let deny: Vec<&str> = s.parsed.deny.iter().map(|p| p.text.as_str()).collect();
        for legacy in [
            "prompts/*.md",
            "CLAUDE.md",
            "entrypoint.sh",
            "*.yaml",
            "*.yml",
            "Dockerfile*",
            "*.go",
            "*.env*",
        ] {
            assert!(deny.contains(&legacy), "{legacy} in {deny:?}");
        }
        let allow: Vec<&str> = s.parsed.allow.as_ref().unwrap().iter().map(|p| p.text.as_str()).collect();
        assert_eq!(
            allow,
            vec![
                "checks/*.md",
                "playbooks/*.md",
                ".claude-ops/checks/*.md",
                ".claude-ops/playbooks/*.md",
                ".claude-ops/skills/*.md",
                "CLAUDE-OPS.md"
            ]
        );
        let rules = crate::scope::Rules::build(&[s]).unwrap();
        for ok in ["checks/http.md", ".claude-ops/skills/x.md", "CLAUDE-OPS.md"] {
            assert_eq!(rules.check("git-pr", &[ok.into()]), vec![], "{ok}");
        }
        for bad in [
            "CLAUDE.md",
            "prompts/a.md",
            "entrypoint.sh",
            "x.yaml",
            "Dockerfile",
            "main.go",
            ".env",
            "README.md",
        ] {
            assert_eq!(rules.check("git-pr", &[bad.into()]).len(), 1, "{bad}");
        }
    }

    #[test]
    fn the_shipped_skills_are_embedded() {
        let names: Vec<String> = embedded().into_iter().map(|c| c.name).collect();
        for want in [
            "git-pr",
            "container-health",
            "container-ops",
            "database-query",
            "http-request",
            "issue-tracking",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
        }
    }
}
