//! The I/O a decision needs, gathered before `decide()` and handed to it as data (DESIGN §2):
//! the Tier Requirement of the skills a call belongs to, the path patterns of every skill, the
//! files a pull request, commit, push, replay or API write would change, the answers to a
//! call's probes (is this checkout operand a branch or paths, where does this push land), and
//! the configuration the real git will read, judged for keys the agent could have written.
//!
//! Only what [`Needs`] asks for is read: a call that needs no skills reads none. A skill that
//! cannot be read is an error (exit 78, naming the file); changed files or probe answers that
//! cannot be worked out are a per-action `Err` that `decide()` turns into a refusal saying why.
//!
//! The gate's own git reads exactly the configuration the real git will read: it runs with the
//! environment the real git gets (so the same `HOME`, the install's tool home, and pinned `GIT_CONFIG_*`), the same global
//! options (`-C`, `--git-dir=.git`, the pathspec switches) and the gate's forced settings. What
//! it must not do, it is told not to: no pager, no fsmonitor or hooks, no optional locks (no
//! index refresh written), no external diff or textconv, no replace refs and no grafts (so a
//! `refs/replace/` ref cannot show it other files than the commits hold), no signature program.
//! Repository skills are read from the remote's default branch as fetched (`origin/HEAD`), not
//! from the checkout, which the agent can move.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use crate::access::{self, Principal};
use crate::decision::{Changes, ConfigHit, Facts, Needs, SkillTier};
use crate::error::{Error, Result};
use crate::grammar::gh::Fill;
use crate::grammar::git::{DEFAULT_BRANCHES, config_effect_marks, config_key, patch_paths};
use crate::grammar::{Action, Invocation, Probe, Replay, ScopeTarget};
use crate::scope::Rules;
use crate::skill::{self, Candidate, Layout, Location, Need, Problem, Sources};

/// git's empty tree, the base of a diff in a repository without commits.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Output from one git command larger than this is an error, not a guess.
const MAX_OUTPUT: usize = 64 * 1024 * 1024;

/// Arguments before every fact-gathering git command: no pager, no replace refs, no optional
/// locks, and the gate's forced settings (no fsmonitor, hooks or signature program; bare
/// repositories only when named, as the real git runs).
const GIT_SAFE: &[&str] = &[
    "--no-pager",
    "--no-replace-objects",
    "--no-optional-locks",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "log.showSignature=false",
    "-c",
    "core.quotePath=false",
    "-c",
    "safe.bareRepository=explicit",
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "protocol.fd.allow=never",
    "-c",
    "advice.graftFileDeprecated=false",
];

/// The variables of the real git's environment that choose which configuration and which
/// repository it reads; the gate's git takes exactly these from it.
const CONFIG_VARS: &[&str] = &[
    "HOME",
    "XDG_CONFIG_HOME",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
];

/// How facts reach the real git.
pub struct Git {
    pub bin: PathBuf,
    env: Vec<(OsString, OsString)>,
}

impl Git {
    /// The gate's own git: `bin`, with the configuration-choosing part of `real_env` (the
    /// environment the real git will run with) and what the gate's git must ignore forced.
    pub fn new(bin: PathBuf, real_env: &[(OsString, OsString)]) -> Git {
        let mut env: Vec<(OsString, OsString)> = real_env
            .iter()
            .filter(|(k, _)| {
                let k = k.to_string_lossy();
                CONFIG_VARS.contains(&k.as_ref()) || k.starts_with("GIT_CONFIG_KEY_") || k.starts_with("GIT_CONFIG_VALUE_")
            })
            .cloned()
            .collect();
        for (k, v) in [
            ("LC_ALL", "C"),
            ("PATH", "/usr/bin:/bin"),
            ("GIT_TERMINAL_PROMPT", "0"),
            ("GIT_OPTIONAL_LOCKS", "0"),
            ("GIT_NO_REPLACE_OBJECTS", "1"),
            ("GIT_GRAFT_FILE", "/dev/null"),
            ("GIT_NO_LAZY_FETCH", "1"),
        ] {
            env.push((k.into(), v.into()));
        }
        Git { bin, env }
    }

    /// Run git in `dir` with `globals` before `args`; stdout, or the first line of stderr as
    /// the error.
    fn run(&self, dir: &Path, globals: &[String], args: &[&str]) -> std::result::Result<Vec<u8>, String> {
        let (ok, stdout, err) = self.output(dir, globals, args, None)?;
        if !ok {
            return Err(format!("git {}: {err}", args.join(" ")));
        }
        Ok(stdout)
    }

    /// Run git in `dir`: whether it succeeded, its stdout, and the first line of its stderr.
    fn output(
        &self,
        dir: &Path,
        globals: &[String],
        args: &[&str],
        stdin: Option<&[u8]>,
    ) -> std::result::Result<(bool, Vec<u8>, String), String> {
        if !dir.is_dir() {
            return Err(format!("the directory {} does not exist", dir.display()));
        }
        // In a hardened install the gate holds the tiershim group; git runs without it.
        let (mut cmd, _fd) =
            crate::harden::command(&self.bin, self.bin.as_os_str()).map_err(|e| format!("cannot open {}: {e}", self.bin.display()))?;
        cmd.args(GIT_SAFE)
            .args(globals)
            .args(args)
            .current_dir(dir)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| format!("cannot run {}: {e}", self.bin.display()))?;
        if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
            pipe.write_all(input).map_err(|e| format!("cannot write to git: {e}"))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("cannot run {}: {e}", self.bin.display()))?;
        if out.stdout.len() > MAX_OUTPUT {
            return Err(format!("git {}: more than {MAX_OUTPUT} bytes of output", args.join(" ")));
        }
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("failed").trim().to_string();
        Ok((out.status.success(), out.stdout, first))
    }
}

/// One git call's view: the caller's directory and the call's global options.
struct At<'a> {
    git: &'a Git,
    dir: &'a Path,
    globals: &'a [String],
}

impl At<'_> {
    fn run(&self, args: &[&str]) -> std::result::Result<Vec<u8>, String> {
        self.git.run(self.dir, self.globals, args)
    }

    fn output(&self, args: &[&str]) -> std::result::Result<(bool, Vec<u8>, String), String> {
        self.git.output(self.dir, self.globals, args, None)
    }

    fn text(&self, args: &[&str]) -> std::result::Result<String, String> {
        String::from_utf8(self.run(args)?).map_err(|_| format!("git {}: output is not UTF-8", args.join(" ")))
    }

    /// NUL-separated paths, empty entries dropped; a path that is not UTF-8 is an error.
    fn paths(&self, args: &[&str], into: &mut Vec<String>) -> std::result::Result<(), String> {
        let out = self.run(args)?;
        // Checked whole: a NUL ends no character, so the whole is UTF-8 exactly when every
        // path is.
        let text = std::str::from_utf8(&out).map_err(|_| format!("git {}: a path is not UTF-8", args.join(" ")))?;
        into.extend(text.split('\0').filter(|p| !p.is_empty()).map(str::to_string));
        Ok(())
    }

    /// The directory the call's `-C` options lead to.
    fn work_dir(&self) -> PathBuf {
        let mut d = self.dir.to_path_buf();
        let mut it = self.globals.iter();
        while let Some(g) = it.next() {
            if g == "-C"
                && let Some(c) = it.next()
            {
                d = d.join(c);
            }
        }
        d
    }
}

/// What gh would fill into `gh api` placeholders in `cwd`, one [`Fill`] per repository gh may
/// pick: the pinned `GH_REPO` when the install pins one (gh then uses nothing else), else every
/// repository a remote of the clone names (gh picks one by remote name and host; the gate
/// judges the call for each, and the strictest decides). The branch is `git symbolic-ref HEAD`
/// as gh reads it. What cannot be worked out is an `Err` in the fill, which refuses the call.
pub fn gh_fills(git: Option<&Git>, cwd: &Path, pinned_repo: Option<&str>) -> Vec<Fill> {
    let Some(git) = git else {
        let why = "the real git is not available to the gate".to_string();
        return vec![Fill {
            repo: Err(why.clone()),
            branch: Err(why),
        }];
    };
    let branch = match git.output(cwd, &[], &["symbolic-ref", "--quiet", "HEAD"], None) {
        Ok((true, out, _)) => String::from_utf8(out)
            .map_err(|_| "the current branch's name is not UTF-8".to_string())
            .and_then(|t| {
                t.trim_end_matches('\n')
                    .strip_prefix("refs/heads/")
                    .map(str::to_string)
                    .ok_or_else(|| "HEAD is not a branch".to_string())
            }),
        Ok((false, _, _)) => Err("HEAD is detached or this is not a git work tree, so there is no current branch".into()),
        Err(e) => Err(e),
    };
    let repos: std::result::Result<Vec<(String, String)>, String> = match pinned_repo {
        Some(r) => crate::grammar::gh::owner_repo(r)
            .map(|x| vec![x])
            .ok_or_else(|| format!("the pinned GH_REPO {r:?} is not [HOST/]OWNER/REPO")),
        None => remote_repos(git, cwd),
    };
    match repos {
        Ok(list) if !list.is_empty() => list
            .into_iter()
            .map(|r| Fill {
                repo: Ok(r),
                branch: branch.clone(),
            })
            .collect(),
        Ok(_) => vec![Fill {
            repo: Err("no git remote of the working directory names a repository".into()),
            branch,
        }],
        Err(e) => vec![Fill { repo: Err(e), branch }],
    }
}

/// `(owner, repo)` of every remote URL of the clone at `cwd` (fetch and push URLs, as
/// `git remote -v` shows them and as configured), read as gh's `ghrepo.FromURL` reads a URL:
/// exactly two path segments, `.git` cut from the second.
fn remote_repos(git: &Git, cwd: &Path) -> std::result::Result<Vec<(String, String)>, String> {
    let mut urls = Vec::new();
    let shown = git.run(cwd, &[], &["remote", "-v"])?;
    for line in String::from_utf8_lossy(&shown).lines() {
        if let Some(url) = line.split('\t').nth(1).and_then(|r| r.rsplit_once(' ')).map(|(u, _)| u) {
            urls.push(url.to_string());
        }
    }
    let configured = git
        .run(cwd, &[], &["config", "-z", "--get-regexp", "^remote\\..*\\.(url|pushurl)$"])
        .unwrap_or_default();
    for entry in String::from_utf8_lossy(&configured).split('\0') {
        if let Some((_, url)) = entry.split_once('\n') {
            urls.push(url.to_string());
        }
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for u in urls {
        if let Some(r) = repo_of_url(&u)
            && !out.contains(&r)
        {
            out.push(r);
        }
    }
    Ok(out)
}

/// The `(owner, repo)` a remote URL names: `scheme://host/o/r(.git)` or `user@host:o/r(.git)`.
/// gh decodes the URL's path first, so `%2F` splits too.
fn repo_of_url(url: &str) -> Option<(String, String)> {
    let path = match url.split_once("://") {
        Some((_, rest)) => &rest[rest.find('/')?..],
        None => url.split_once(':')?.1,
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let decoded = crate::grammar::http::percent_decode(path);
    let parts: Vec<&str> = decoded.trim_matches('/').splitn(3, '/').collect();
    match parts.as_slice() {
        [owner, repo] => Some((owner.to_string(), repo.trim_end_matches(".git").to_string())),
        _ => None,
    }
}

/// Gather what `needs` asks for. `cwd` is the caller's working directory.
pub fn gather(sources: &Sources, git: Option<&Git>, cwd: &Path, inv: &Invocation, needs: &Needs) -> Result<Facts> {
    let mut facts = Facts::default();
    let mut repo = sources.repo_of(cwd);
    let no_git = || "no real git is configured, so the gate cannot ask it".to_string();
    for (i, _) in &needs.scope {
        let Some(action) = inv.actions.get(*i) else {
            continue;
        };
        let result = match git {
            Some(git) => changes(git, cwd, action, sources),
            None => Err("no real git is configured, so the files this call changes cannot be worked out".to_string()),
        };
        if let Ok(c) = &result
            && c.repo.is_some()
        {
            repo.clone_from(&c.repo);
        }
        facts.changes.insert(*i, result);
    }
    for i in &needs.probes {
        let Some(probe) = inv.actions.get(*i).and_then(|a| a.probe.as_ref()) else {
            continue;
        };
        let answer = match git {
            Some(git) => self::probe(git, cwd, probe),
            None => Err(no_git()),
        };
        facts.marks.insert(*i, answer);
    }
    if needs.config {
        let at = crate::grammar::git::git_at(&inv.args);
        let read = match git {
            Some(git) => read_config(git, cwd, &at.globals).and_then(|c| {
                let hits = agent_config(&c, git, cwd, &at.globals, &Principal::current())?;
                Ok((c, hits))
            }),
            None => Err(no_git()),
        };
        facts.config = Some(read.as_ref().map(|(_, h)| h.clone()).map_err(Clone::clone));
        // What the configuration decides where argv leaves it open adds to the action's marks.
        if let Ok((c, _)) = &read {
            let entries: Vec<(String, String)> = c.entries.iter().map(|(_, k, v)| (k.clone(), v.clone())).collect();
            for (i, a) in inv.actions.iter().enumerate().filter(|(_, a)| !a.config.is_empty()) {
                let m = config_effect_marks(&a.config, &entries);
                if m.is_empty() {
                    continue;
                }
                if let Ok(marks) = facts.marks.entry(i).or_insert_with(|| Ok(BTreeSet::new())) {
                    marks.extend(m);
                }
            }
        }
    }
    if !needs.skills.is_empty() {
        let mut tiers = BTreeMap::new();
        for name in &needs.skills {
            if let Some(t) = skill_tier(sources, git, name, repo.as_deref())? {
                tiers.insert(name.clone(), t);
            }
        }
        facts.skill_tiers = Some(tiers);
    }
    if !needs.scope.is_empty() {
        facts.scope_rules = Some(Arc::new(scope_rules(sources, git, repo.as_deref())?));
    }
    Ok(facts)
}

fn skill_err(p: Problem) -> Error {
    Error::Skill {
        path: p.path,
        msg: p.message,
    }
}

/// The binding Tier Requirement of skill `name`: the highest of its baseline and repository
/// files (a repository can raise a tier, never lower it).
fn skill_tier(sources: &Sources, git: Option<&Git>, name: &str, repo: Option<&str>) -> Result<Option<SkillTier>> {
    let (mut candidates, mut problems) = sources.baseline_named(name);
    if let Some(r) = repo {
        let (c, p) = repo_skills(sources, git, r, Some(name))?;
        candidates.extend(c);
        problems.extend(p);
    }
    if let Some(p) = problems.into_iter().next() {
        return Err(skill_err(p));
    }
    let mut best: Option<SkillTier> = None;
    for c in &candidates {
        let s = skill::load(c, Need::All).map_err(skill_err)?;
        if let Some(e) = s.error() {
            return Err(Error::Skill {
                path: s.shown.clone(),
                msg: format!("{e}; calls of skill `{name}` are refused until it is fixed (tiershim skills validate)"),
            });
        }
        if let Some(t) = s.parsed.tier
            && best.as_ref().is_none_or(|b| t.tier > b.tier)
        {
            best = Some(SkillTier {
                tier: t.tier,
                file: s.shown.clone(),
            });
        }
    }
    Ok(best)
}

/// The rules of every skill a scope check in `repo` consults.
pub fn scope_rules(sources: &Sources, git: Option<&Git>, repo: Option<&str>) -> Result<Rules> {
    let (mut candidates, mut problems) = sources.baseline();
    if let Some(r) = repo {
        let (c, p) = repo_skills(sources, git, r, None)?;
        candidates.extend(c);
        problems.extend(p);
    }
    if let Some(p) = problems.into_iter().next() {
        return Err(skill_err(p));
    }
    // One skill file at a time: its patterns are compiled and the rest of it dropped.
    let mut reader = skill::Reader::default();
    let mut rules = crate::scope::Builder::default();
    for c in &candidates {
        let parsed = reader.patterns(c).map_err(skill_err)?;
        // A mistake in a skill's path rules (an unclosed or unknown fence, prose in a block, a
        // path a pattern cannot be) would drop rules its author wrote: refuse instead.
        if let Some(e) = parsed.error() {
            return Err(Error::Skill {
                path: c.shown.clone(),
                msg: format!("{e}; calls whose changed files are checked are refused until it is fixed (tiershim skills validate)"),
            });
        }
        rules.add(&c.name, &c.shown, &parsed);
    }
    rules.finish().map_err(skill_err)
}

/// The remote-tracking ref repository skills are read from.
const SKILLS_REF: &str = "refs/remotes/origin/HEAD";

/// The skills of repository `repo` (all, or the files of skill `name`). A git work tree's are
/// read from the commit its remote's default branch points at as fetched (`origin/HEAD`):
/// checking out another branch, or changing the files on disk, changes nothing; what a fetch
/// brings from the remote's default branch does (the fetch rules keep `refs/remotes/` the
/// remote's own values, and nothing lower than tier 3 moves `origin/HEAD`). A directory that is
/// not a git work tree is read from disk: only the operator can change it.
fn repo_skills(sources: &Sources, git: Option<&Git>, repo: &str, name: Option<&str>) -> Result<(Vec<Candidate>, Vec<Problem>)> {
    let Some(root) = sources.repo_root(repo) else {
        return Ok((Vec::new(), Vec::new()));
    };
    if std::fs::symlink_metadata(root.join(".git")).is_err() {
        return Ok(match name {
            Some(n) => sources.repo_named(n, repo),
            None => sources.repo_all(repo),
        });
    }
    let dir = root.join(".claude-ops").join("skills");
    let problem = |message: String| Problem {
        path: dir.display().to_string(),
        message,
    };
    let Some(git) = git else {
        return Err(skill_err(problem(
            "the repository is a git work tree, so its skills are read from origin/HEAD with the real git, and no real git is configured"
                .into(),
        )));
    };
    let at = At {
        git,
        dir: &root,
        globals: &[],
    };
    let target = at
        .text(&["for-each-ref", "--format=%(symref)", SKILLS_REF])
        .map_err(|e| skill_err(problem(e)))?
        .trim()
        .to_string();
    if target.is_empty() {
        return Err(skill_err(problem(format!(
            "repository skills are read from {SKILLS_REF} (the remote's default branch), which is not set in {}; an operator runs git remote set-head origin --auto there",
            root.display()
        ))));
    }
    let short = target.strip_prefix("refs/remotes/").unwrap_or(&target).to_string();
    let listing = at
        .run(&["ls-tree", "-r", "-z", "--full-tree", &target, "--", ".claude-ops/skills/"])
        .map_err(|e| skill_err(problem(e)))?;
    let mut wanted: Vec<(String, String, Layout)> = Vec::new();
    let mut problems = Vec::new();
    for entry in listing.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let entry = String::from_utf8_lossy(entry);
        let Some((meta, path)) = entry.split_once('\t') else {
            continue;
        };
        let Some(rel) = path.strip_prefix(".claude-ops/skills/") else {
            continue;
        };
        let (skill_name, layout) = match rel.split_once('/') {
            None => match rel.strip_suffix(".md") {
                Some(n) => (n, Layout::ClaudeOps),
                None => continue,
            },
            Some((n, "SKILL.md")) => (n, Layout::AgentSkill),
            Some(_) => continue,
        };
        if skill_name.is_empty() || skill_name.starts_with('.') || name.is_some_and(|n| n != skill_name) {
            continue;
        }
        let mut fields = meta.split(' ');
        let (mode, kind, oid) = (
            fields.next().unwrap_or(""),
            fields.next().unwrap_or(""),
            fields.next().unwrap_or(""),
        );
        let shown = format!("{}@{short}", dir.join(rel).display());
        if kind != "blob" || mode == "120000" {
            problems.push(Problem {
                path: shown,
                message: format!("is not a regular file in {short}; skipped"),
            });
            continue;
        }
        wanted.push((skill_name.to_string(), format!("{oid}\t{shown}"), layout));
    }
    let mut out = Vec::new();
    if wanted.is_empty() {
        return Ok((out, problems));
    }
    let input: String = wanted
        .iter()
        .map(|(_, k, _)| format!("{}\n", k.split('\t').next().unwrap_or("")))
        .collect();
    let (ok, raw, err) = git
        .output(&root, &[], &["cat-file", "--batch"], Some(input.as_bytes()))
        .map_err(|e| skill_err(problem(e)))?;
    if !ok {
        return Err(skill_err(problem(format!("git cat-file --batch: {err}"))));
    }
    let mut rest: &[u8] = &raw;
    for (skill_name, key, layout) in wanted {
        let shown = key.split_once('\t').map(|(_, s)| s.to_string()).unwrap_or_default();
        let nl = rest
            .iter()
            .position(|b| *b == b'\n')
            .ok_or_else(|| skill_err(problem("git cat-file --batch: short output".into())))?;
        let header = String::from_utf8_lossy(&rest[..nl]).to_string();
        rest = &rest[nl + 1..];
        let size: usize = header
            .split(' ')
            .nth(2)
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| skill_err(problem(format!("git cat-file --batch: {header}"))))?;
        if rest.len() < size + 1 {
            return Err(skill_err(problem("git cat-file --batch: short output".into())));
        }
        let body = &rest[..size];
        rest = &rest[size + 1..];
        if size as u64 > skill::MAX_FILE {
            problems.push(Problem {
                path: shown,
                message: format!("is larger than {} bytes; not read", skill::MAX_FILE),
            });
            continue;
        }
        match String::from_utf8(body.to_vec()) {
            Ok(text) => out.push(Candidate::from_text(
                &skill_name,
                shown,
                layout,
                Location::Repo(repo.to_string()),
                text,
            )),
            Err(e) => problems.push(Problem {
                path: shown,
                message: format!("is not UTF-8 (at byte {})", e.utf8_error().valid_up_to()),
            }),
        }
    }
    Ok((out, problems))
}

// ---------------------------------------------------------------------------------------------
// Changed files

/// The files `action` would change, worked out with the real git.
pub fn changes(git: &Git, cwd: &Path, action: &Action, sources: &Sources) -> std::result::Result<Changes, String> {
    let Some(target) = &action.scope else {
        return Err("the gate cannot tell which files this call changes".into());
    };
    let mut files = Vec::new();
    let (top, how) = match target {
        ScopeTarget::Contents { owner, repo, path } => {
            return Ok(Changes {
                files: Arc::from([path.clone()]),
                how: format!("the path written through the API ({owner}/{repo})"),
                repo: None,
            });
        }
        ScopeTarget::PullRequest { repo, base, head } => {
            let at = At {
                git,
                dir: cwd,
                globals: &[],
            };
            pull_request(&at, repo.as_ref(), base.as_deref(), head.as_deref(), &mut files)?
        }
        ScopeTarget::Commit {
            all,
            paths,
            include,
            git: g,
        } => {
            let at = At {
                git,
                dir: cwd,
                globals: &g.globals,
            };
            commit(&at, *all, paths, *include, action.has("amend"), &mut files)?
        }
        ScopeTarget::Push { remote, refspecs, git: g } => {
            let at = At {
                git,
                dir: cwd,
                globals: &g.globals,
            };
            push(&at, remote.as_deref(), refspecs, action, &mut files)?
        }
        ScopeTarget::Replay { how, git: g } => {
            let at = At {
                git,
                dir: cwd,
                globals: &g.globals,
            };
            replay(&at, how, &mut files)?
        }
        ScopeTarget::Sequence { git: g } => {
            let at = At {
                git,
                dir: cwd,
                globals: &g.globals,
            };
            sequence(&at, &mut files)?
        }
        ScopeTarget::Patches { files: patched } => {
            files.clone_from(patched.as_ref().map_err(Clone::clone)?);
            (cwd.to_path_buf(), "the files the patches touch".to_string())
        }
    };
    files.sort_unstable();
    files.dedup();
    Ok(Changes {
        files: files.into(),
        how,
        repo: sources.repo_of(&top),
    })
}

/// Paths as every diff and log below lists them: full paths from the top of the work tree,
/// whatever `diff.relative`, renames, external diff drivers or ignored submodules say.
const NAME_ONLY: &[&str] = &[
    "--name-only",
    "-z",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--no-relative",
    "--ignore-submodules=none",
];

/// `git rev-parse --show-toplevel <more…>`: the top of the work tree, the other lines, and
/// whether git succeeded. Not being in a work tree is an error.
fn rev_parse(at: &At, more: &[&str]) -> std::result::Result<(PathBuf, Vec<String>, bool, String), String> {
    let mut args = vec!["rev-parse", "--show-toplevel"];
    args.extend_from_slice(more);
    let (ok, out, err) = at.output(&args)?;
    let text = String::from_utf8(out).map_err(|_| "git rev-parse: output is not UTF-8".to_string())?;
    let mut lines = text.lines().map(str::to_string);
    match lines.next().filter(|t| t.starts_with('/')) {
        Some(top) => Ok((PathBuf::from(top), lines.collect(), ok, err)),
        None => Err(format!("{} is not in a git work tree ({err})", at.work_dir().display())),
    }
}

/// The local branches and remote-tracking refs, with the target of each symbolic ref.
fn refs(at: &At) -> std::result::Result<BTreeMap<String, String>, String> {
    let text = at.text(&["for-each-ref", "--format=%(refname)%00%(symref)", "refs/heads/", "refs/remotes/"])?;
    Ok(text
        .lines()
        .filter_map(|l| l.split_once('\0').map(|(r, s)| (r.to_string(), s.to_string())))
        .collect())
}

/// The configured remotes: name -> its `url` and `pushurl` values.
fn remotes(at: &At) -> std::result::Result<BTreeMap<String, Vec<String>>, String> {
    let out = at.output(&["config", "-z", "--get-regexp", "^remote\\..*\\.(url|pushurl)$"])?.1;
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for entry in String::from_utf8_lossy(&out).split('\0').filter(|e| !e.is_empty()) {
        let (key, url) = entry.split_once('\n').unwrap_or((entry, ""));
        let Some(rest) = key.strip_prefix("remote.") else { continue };
        let name = rest.strip_suffix(".url").or_else(|| rest.strip_suffix(".pushurl"));
        if let Some(name) = name {
            map.entry(name.to_string()).or_default().push(url.to_string());
        }
    }
    Ok(map)
}

/// A URL compared loosely: without a trailing `/` or `.git`, case-insensitive.
fn url_key(u: &str) -> String {
    u.trim_end_matches('/').trim_end_matches(".git").to_ascii_lowercase()
}

/// The configured remote a push or fetch argument names: the remote of that name (names may
/// hold `/` and `.`), or the one remote whose URL it is. `None`: no configured remote.
fn configured_remote(arg: &str, remotes: &BTreeMap<String, Vec<String>>) -> Option<String> {
    if remotes.contains_key(arg) {
        return Some(arg.to_string());
    }
    let want = url_key(arg);
    let hits: Vec<&String> = remotes
        .iter()
        .filter(|(_, urls)| urls.iter().any(|u| url_key(u) == want))
        .map(|(n, _)| n)
        .collect();
    match hits.as_slice() {
        [one] => Some((*one).clone()),
        _ => None,
    }
}

/// The remote a pull request goes to: the one whose URL names `owner/repo` when the call names
/// the repository, else `origin`, else the only remote this clone has tracking refs of.
fn pr_remote(at: &At, repo: Option<&(String, String)>, refs: &BTreeMap<String, String>) -> std::result::Result<String, String> {
    if let Some((owner, name)) = repo {
        let wanted = format!("{owner}/{name}").to_ascii_lowercase();
        for (remote, urls) in remotes(at).unwrap_or_default() {
            for url in urls {
                let u = url_key(&url);
                if u.ends_with(&format!("/{wanted}")) || u.ends_with(&format!(":{wanted}")) {
                    return Ok(remote);
                }
            }
        }
        return Err(format!(
            "the working directory {} is not a clone of {owner}/{name}",
            at.dir.display()
        ));
    }
    let mut names: Vec<&str> = refs
        .keys()
        .filter_map(|r| r.strip_prefix("refs/remotes/")?.split('/').next())
        .collect();
    names.dedup();
    if names.contains(&"origin") {
        return Ok("origin".into());
    }
    match names.as_slice() {
        [one] => Ok((*one).to_string()),
        [] => Err("the repository has no remote-tracking branch, so the pull request's base cannot be found; run git fetch".into()),
        _ => Err("the repository has several remotes and none is `origin`; name the repository with -R/--repo".into()),
    }
}

/// `git diff --name-only <remote>/<base>...<head>`. Returns the top of the work tree.
fn pull_request(
    at: &At,
    repo: Option<&(String, String)>,
    base: Option<&str>,
    head: Option<&str>,
    files: &mut Vec<String>,
) -> std::result::Result<(PathBuf, String), String> {
    let (top, lines, ok, _) = rev_parse(at, &["--symbolic-full-name", "HEAD"])?;
    let refs = refs(at)?;
    let remote = pr_remote(at, repo, &refs)?;
    // The head as the pull request will have it: the branch on the remote, which can differ from
    // the local branch of that name. Both are checked when both exist, and the files of either
    // count.
    let head_refs: Vec<String> = match head {
        Some(h) => {
            // gh accepts `owner:branch` for a fork's branch.
            let branch = h.rsplit_once(':').map(|(_, b)| b).unwrap_or(h);
            let found: Vec<String> = [format!("refs/heads/{branch}"), format!("refs/remotes/{remote}/{branch}")]
                .into_iter()
                .filter(|r| refs.contains_key(r))
                .collect();
            if found.is_empty() {
                return Err(format!("the head branch {branch} is neither a local branch nor {remote}/{branch}"));
            }
            found
        }
        None if ok && lines.first().is_some_and(|l| l.starts_with("refs/heads/")) => {
            let branch = lines[0].trim_start_matches("refs/heads/");
            let tracking = format!("refs/remotes/{remote}/{branch}");
            let mut found = vec!["HEAD".to_string()];
            found.extend(refs.contains_key(&tracking).then_some(tracking));
            found
        }
        None if !ok => return Err("the repository has no commit yet, so there is nothing to propose".into()),
        None => return Err("HEAD is detached, so the pull request's head branch is unknown; pass --head".into()),
    };
    let base_ref = match base {
        Some(b) => {
            let r = format!("refs/remotes/{remote}/{b}");
            if !refs.contains_key(&r) {
                return Err(format!(
                    "the base branch {b} has no remote-tracking ref {remote}/{b}; run git fetch {remote} {b}"
                ));
            }
            r
        }
        None => default_branch(&refs, &remote)?,
    };
    let mut how = Vec::new();
    for head_ref in &head_refs {
        let range = format!("{base_ref}...{head_ref}");
        let mut args = vec!["diff"];
        args.extend_from_slice(NAME_ONLY);
        args.push(&range);
        args.push("--");
        at.paths(&args, files)?;
        how.push(format!("git diff --name-only {range}"));
    }
    files.sort();
    files.dedup();
    Ok((top, how.join(" and ")))
}

/// The remote's default branch as this clone knows it: `<remote>/HEAD`, else the one of
/// `<remote>/main` and `<remote>/master` that exists.
fn default_branch(refs: &BTreeMap<String, String>, remote: &str) -> std::result::Result<String, String> {
    if let Some(target) = refs.get(&format!("refs/remotes/{remote}/HEAD")).filter(|t| !t.is_empty()) {
        return Ok(target.clone());
    }
    let found: Vec<String> = ["main", "master"]
        .iter()
        .map(|b| format!("refs/remotes/{remote}/{b}"))
        .filter(|r| refs.contains_key(r))
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(format!(
            "the default branch of {remote} is unknown ({remote}/HEAD is not set); pass --base, or run git remote set-head {remote} --auto"
        )),
    }
}

/// What `git commit` records: the index (and with `all` the tracked changes; with paths, those
/// paths), plus the files of the commit an `--amend` replaces. Returns the top of the work tree.
fn commit(
    at: &At,
    all: bool,
    paths: &[String],
    include: bool,
    amend: bool,
    files: &mut Vec<String>,
) -> std::result::Result<(PathBuf, String), String> {
    // `--verify -q HEAD` fails quietly (after the top) in a repository without commits.
    let (top, _, has_head, _) = rev_parse(at, &["--verify", "-q", "HEAD"])?;
    let head = if has_head { "HEAD" } else { EMPTY_TREE };
    let mut how = Vec::new();
    if paths.is_empty() || include {
        let mut args = vec!["diff", "--cached"];
        args.extend_from_slice(NAME_ONLY);
        args.push(head);
        at.paths(&args, files)?;
        how.push("the index");
    }
    if all {
        let mut args = vec!["diff"];
        args.extend_from_slice(NAME_ONLY);
        at.paths(&args, files)?;
        how.push("every tracked change");
    }
    if !paths.is_empty() {
        // Pathspecs are read where the commit runs, with the call's pathspec switches, as git
        // commit reads them; the output is relative to the top of the work tree.
        let mut args = vec!["diff"];
        args.extend_from_slice(NAME_ONLY);
        args.push(head);
        args.push("--");
        args.extend(paths.iter().map(String::as_str));
        at.paths(&args, files)?;
        how.push("the named paths");
    }
    if amend && has_head {
        let mut args = vec!["diff-tree", "--no-commit-id", "-r", "--root"];
        args.extend_from_slice(NAME_ONLY);
        args.push("HEAD");
        at.paths(&args, files)?;
        how.push("the amended commit");
    }
    Ok((top, format!("git commit of {}", how.join(", "))))
}

/// The files of the commits `revs` select (`git log` revision arguments, `--not` and `^x`
/// included), merges as `extra` says. A revision that starts with a dash would be read as an
/// option, so it is an error.
fn log_files(at: &At, revs: &[String], extra: &[&str], files: &mut Vec<String>) -> std::result::Result<(), String> {
    if let Some(r) = revs
        .iter()
        .find(|r| r.starts_with('-') && !matches!(r.as_str(), "--not" | "--remotes"))
    {
        return Err(format!("the revision {r} starts with a dash"));
    }
    let mut args = vec!["log", "--format=", "--root"];
    args.extend_from_slice(NAME_ONLY);
    args.extend_from_slice(extra);
    args.extend(revs.iter().map(String::as_str));
    args.push("--");
    at.paths(&args, files)
}

/// What a replaying command changes: the files of each commit `cherry-pick` or `revert` picks
/// (every parent's side of a merge), of each commit a `merge` brings in that no remote has yet,
/// or of each commit a `rebase` replays.
fn replay(at: &At, how: &Replay, files: &mut Vec<String>) -> std::result::Result<(PathBuf, String), String> {
    let (top, _, _, _) = rev_parse(at, &[])?;
    let described = match how {
        Replay::Picks(revs) => {
            log_files(at, revs, &["--no-walk", "--diff-merges=separate"], files)?;
            format!("the files of the picked commits ({})", revs.join(" "))
        }
        Replay::Merge(revs) => {
            let mut sel: Vec<String> = if revs.is_empty() {
                vec!["@{upstream}".into()]
            } else {
                revs.clone()
            };
            sel.extend(["--not".into(), "HEAD".into(), "--remotes".into()]);
            log_files(at, &sel, &["--diff-merges=first-parent"], files)?;
            "the files of the merged commits no remote has".to_string()
        }
        Replay::Rebase { upstream, branch, root } => {
            let tip = branch.clone().unwrap_or_else(|| "HEAD".into());
            let mut sel = vec![tip];
            if !root {
                sel.push("--not".into());
                sel.push(upstream.clone().unwrap_or_else(|| "@{upstream}".into()));
            }
            log_files(at, &sel, &["--diff-merges=first-parent"], files)?;
            "the files of the replayed commits".to_string()
        }
    };
    Ok((top, described))
}

/// What going on with a stopped sequence commits: the index now, every commit the rebase or
/// cherry-pick/revert todo list still names, and every patch `am` has still to apply.
fn sequence(at: &At, files: &mut Vec<String>) -> std::result::Result<(PathBuf, String), String> {
    let (top, lines, has_head, _) = rev_parse(at, &["--absolute-git-dir", "--verify", "-q", "HEAD"])?;
    let gitdir = PathBuf::from(lines.first().cloned().unwrap_or_default());
    let head = if has_head { "HEAD" } else { EMPTY_TREE };
    let mut args = vec!["diff", "--cached"];
    args.extend_from_slice(NAME_ONLY);
    args.push(head);
    at.paths(&args, files)?;
    let mut commits = Vec::new();
    for todo in ["rebase-merge/git-rebase-todo", "sequencer/todo"] {
        let Ok(text) = std::fs::read_to_string(gitdir.join(todo)) else {
            continue;
        };
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let mut w = line.split_whitespace();
            let cmd = w.next().unwrap_or("");
            match cmd {
                "pick" | "p" | "revert" | "edit" | "e" | "reword" | "r" | "squash" | "s" | "fixup" | "f" => {
                    let mut oid = w.next().unwrap_or("");
                    if oid.starts_with('-') {
                        oid = w.next().unwrap_or("");
                    }
                    commits.push(oid.to_string());
                }
                "merge" | "m" => {
                    // `merge [-C <commit> | -c <commit>] <label> [# <oneline>]`: the merged label.
                    let rest: Vec<&str> = w.collect();
                    let label = match rest.as_slice() {
                        ["-C" | "-c", _, label, ..] => label,
                        [label, ..] => label,
                        [] => continue,
                    };
                    commits.push(format!("refs/rewritten/{label}"));
                }
                "exec" | "x" => return Err("the sequence runs commands (exec), which the gate cannot judge".into()),
                "break" | "b" | "label" | "l" | "reset" | "t" | "update-ref" | "u" | "noop" | "drop" | "d" => {}
                other => return Err(format!("the todo list holds `{other}`, which the gate does not know")),
            }
        }
    }
    if !commits.is_empty() {
        log_files(at, &commits, &["--no-walk", "--diff-merges=separate"], files)?;
    }
    // am's remaining patches: rebase-apply/<next>..<last>.
    let apply = gitdir.join("rebase-apply");
    if let (Ok(next), Ok(last)) = (
        std::fs::read_to_string(apply.join("next")),
        std::fs::read_to_string(apply.join("last")),
    ) {
        let (next, last): (usize, usize) = (next.trim().parse().unwrap_or(1), last.trim().parse().unwrap_or(0));
        for n in next..=last {
            let patch = apply.join(format!("{n:04}"));
            let text = std::fs::read_to_string(&patch).map_err(|e| format!("{}: {e}", patch.display()))?;
            files.extend(patch_paths(&text, 1, None)?);
        }
    }
    Ok((top, "the index and what the stopped sequence still commits".into()))
}

/// The files of every commit a push sends: reachable from each source and not yet on the
/// remote's tracking refs (all remotes' when the destination is not a configured remote).
/// Returns the top of the work tree.
fn push(
    at: &At,
    remote: Option<&str>,
    refspecs: &[String],
    action: &Action,
    files: &mut Vec<String>,
) -> std::result::Result<(PathBuf, String), String> {
    let mut named = Vec::new();
    for spec in refspecs {
        let body = spec.trim_start_matches('+');
        let src = body.split_once(':').map(|(s, _)| s).unwrap_or(body);
        if src.is_empty() || src.contains('*') {
            continue; // a deletion sends nothing; a pattern is covered by --branches
        }
        if src.starts_with('-') {
            return Err(format!("the push source {src} starts with a dash"));
        }
        named.push(format!("{src}^{{commit}}"));
    }
    // One rev-parse finds the top and resolves every source to a commit.
    let revs: Vec<&str> = named.iter().map(String::as_str).collect();
    let (top, commits, ok, err) = rev_parse(at, &revs)?;
    if !ok {
        return Err(format!("a push source does not name a commit ({err})"));
    }
    let mut sources: Vec<String> = commits;
    if action.has("all-branches") || action.has("mirror") {
        sources.push("--branches".into());
    }
    if action.has("tags") && refspecs.is_empty() {
        sources.push("--tags".into());
    }
    if sources.is_empty() {
        return Ok((top, "nothing is sent".into()));
    }
    // `--remotes=<name>` for a configured remote (the one a URL names, too); all
    // remote-tracking refs for anything else.
    let configured = match remote {
        Some(r) => configured_remote(r, &remotes(at)?),
        None => None,
    };
    let not = match &configured {
        Some(r) => format!("--remotes={r}"),
        None => "--remotes".to_string(),
    };
    let mut args = vec!["log", "--format=", "--diff-merges=first-parent"];
    args.extend_from_slice(NAME_ONLY);
    args.extend(sources.iter().map(String::as_str));
    args.push("--not");
    args.push(&not);
    args.push("--");
    at.paths(&args, files)?;
    Ok((
        top,
        format!(
            "the files of the commits not yet on {}",
            configured.as_deref().unwrap_or("any remote")
        ),
    ))
}

// ---------------------------------------------------------------------------------------------
// Probes

/// Ask the real git what a probe needs: the marks its answer adds.
pub fn probe(git: &Git, cwd: &Path, probe: &Probe) -> std::result::Result<BTreeSet<String>, String> {
    match probe {
        Probe::CheckoutArg { arg, git: g } => {
            let at = At {
                git,
                dir: cwd,
                globals: &g.globals,
            };
            checkout_arg(&at, arg)
        }
        Probe::PushTarget { remote, refspecs, git: g } => {
            let at = At {
                git,
                dir: cwd,
                globals: &g.globals,
            };
            push_target(&at, remote.as_deref(), refspecs)
        }
    }
}

/// `git checkout <arg>` as `parse_branchname_arg` reads it: a commit (or `-`, the previous
/// branch) is switched to; a name only one remote has a branch of is created from it
/// (`checkout.guess`); anything else is paths, whose uncommitted changes it throws away.
fn checkout_arg(at: &At, arg: &str) -> std::result::Result<BTreeSet<String>, String> {
    let rev = if arg == "-" { "@{-1}".to_string() } else { arg.to_string() };
    let (ok, _, _) = at.output(&["rev-parse", "--verify", "-q", "--end-of-options", &format!("{rev}^{{commit}}")])?;
    if ok {
        return Ok(BTreeSet::new());
    }
    let out = at.text(&["for-each-ref", "--format=%(refname)", "refs/remotes/"])?;
    let guesses = out
        .lines()
        .filter(|r| {
            r.strip_prefix("refs/remotes/")
                .and_then(|x| x.split_once('/'))
                .is_some_and(|(_, b)| b == arg)
        })
        .count();
    if guesses == 1 {
        return Ok(BTreeSet::new());
    }
    Ok(BTreeSet::from(["discard".to_string()]))
}

/// Where a push lands, as far as argv alone could not tell: a branch that is the remote's
/// default as this clone knows it (`<remote>/HEAD`, say `stable`), which the grammar's list of
/// usual names does not know (`default-branch`); a tag given by its plain name (`tags`). A
/// remote that is neither configured nor the URL of one, a remote without `<remote>/HEAD`, and
/// a destination moved by `remote.<name>.push` or `push.default=upstream` are refused: where
/// the push lands is not what argv says.
fn push_target(at: &At, remote: Option<&str>, refspecs: &[String]) -> std::result::Result<BTreeSet<String>, String> {
    let mut marks = BTreeSet::new();
    let Some(arg) = remote else {
        return Ok(marks);
    };
    let configured = remotes(at)?;
    let Some(name) = configured_remote(arg, &configured) else {
        return Err(format!(
            "{arg} is not a configured remote, so its default branch is unknown and the push may land on it; push to a configured remote by name"
        ));
    };
    // One read of the settings that move a push's destination: `remote.<name>.push` (a
    // mapping), and `push.default` = `upstream`/`tracking` (a branch goes to its upstream).
    let escaped: String = name
        .chars()
        .map(|c| {
            if ".^$*+?()[]{}|\\".contains(c) {
                format!("\\{c}")
            } else {
                c.to_string()
            }
        })
        .collect();
    let pattern = format!("^(remote\\.{escaped}\\.push|push\\.default)$");
    let (_, out, _) = at.output(&["config", "-z", "--get-regexp", &pattern])?;
    for entry in String::from_utf8_lossy(&out).split('\0').filter(|e| !e.is_empty()) {
        let (key, value) = entry.split_once('\n').unwrap_or((entry, ""));
        if key.starts_with("remote.") {
            return Err(format!(
                "{key} is configured in this repository, so where the push lands is not what argv says; remove it (an operator), or escalate"
            ));
        }
        if matches!(value.to_ascii_lowercase().as_str(), "upstream" | "tracking") {
            return Err(format!(
                "push.default is {value} here, so a branch is pushed to its upstream, not where argv says; an operator can set it to simple, or escalate"
            ));
        }
    }
    let refs = refs(at)?;
    // Without `<remote>/HEAD` the default branch is unknown, and any destination may be it.
    let Some(default) = refs
        .get(&format!("refs/remotes/{name}/HEAD"))
        .and_then(|t| t.strip_prefix(&format!("refs/remotes/{name}/")))
        .map(str::to_string)
    else {
        return Err(format!(
            "the default branch of {name} is not known here ({name}/HEAD is not set), so the push may land on it; an operator can run git remote set-head {name} --auto"
        ));
    };
    for spec in refspecs {
        let body = spec.trim_start_matches('+');
        let (src, dst) = match body.split_once(':') {
            Some((s, d)) => (s, if d.is_empty() { None } else { Some(d) }),
            None => (body, None),
        };
        // The source as git resolves it locally: a tag sends a tag.
        // (The grammar refuses a refspec that starts with a dash.)
        let src_full = if src.is_empty() || src.starts_with('-') {
            String::new()
        } else {
            let (ok, out, _) = at.output(&["rev-parse", "--symbolic-full-name", src])?;
            if ok {
                String::from_utf8_lossy(&out).trim().to_string()
            } else {
                String::new()
            }
        };
        let branch = match dst {
            Some(d) if d.starts_with("refs/") => d.strip_prefix("refs/heads/").map(str::to_string),
            Some(d) => {
                // An unqualified destination takes the kind of the source (`v3:v3` is a tag),
                // or of a tag of that name.
                let tag_here = at.output(&["rev-parse", "--verify", "-q", &format!("refs/tags/{d}")])?.0;
                if src_full.starts_with("refs/tags/") || tag_here {
                    marks.insert("tags".to_string());
                    None
                } else {
                    Some(d.strip_prefix("heads/").unwrap_or(d).to_string())
                }
            }
            None => {
                if src_full.starts_with("refs/tags/") {
                    marks.insert("tags".to_string());
                    None
                } else if let Some(b) = src_full.strip_prefix("refs/heads/") {
                    Some(b.to_string())
                } else {
                    Some(src.strip_prefix("heads/").unwrap_or(src).to_string())
                }
            }
        };
        if let Some(b) = branch
            && (b.eq_ignore_ascii_case(&default) || DEFAULT_BRANCHES.iter().any(|d| d.eq_ignore_ascii_case(&b)))
        {
            marks.insert("default-branch".to_string());
        }
    }
    Ok(marks)
}

// ---------------------------------------------------------------------------------------------
// Configuration the agent could have written

/// The configuration the real git will read (`git config --list --show-origin --includes`,
/// with the call's global options and the real git's environment), entry by entry in the
/// order git reads them.
pub struct ConfigRead {
    /// `(origin, key, value)`.
    pub entries: Vec<(String, String, String)>,
}

/// Read the configuration the real git of this call will read.
pub fn read_config(git: &Git, cwd: &Path, globals: &[String]) -> std::result::Result<ConfigRead, String> {
    let at = At { git, dir: cwd, globals };
    let (ok, out, err) = at.output(&["config", "--list", "--show-origin", "-z", "--includes"])?;
    if !ok {
        return Err(format!("git config --list: {err}"));
    }
    let mut entries = Vec::new();
    let mut fields = out.split(|b| *b == 0);
    while let (Some(origin), Some(entry)) = (fields.next(), fields.next()) {
        let origin = String::from_utf8_lossy(origin).into_owned();
        let entry = String::from_utf8_lossy(entry);
        let (key, value) = entry.split_once('\n').unwrap_or((&entry, ""));
        entries.push((origin, key.to_string(), value.to_string()));
    }
    Ok(ConfigRead { entries })
}

/// Every key of the configuration `read` that runs a program or redirects a write
/// ([`config_key`]) and comes from a file `who` could have written. The gate's own `-c`
/// settings (origin `command line:`) are the gate's. A relative origin is relative to where
/// the call's git runs (`config_base`, asked only when one is a hit).
pub fn agent_config(
    read: &ConfigRead,
    git: &Git,
    cwd: &Path,
    globals: &[String],
    who: &Principal,
) -> std::result::Result<Vec<ConfigHit>, String> {
    let at = At { git, dir: cwd, globals };
    let mut base: Option<PathBuf> = None;
    let mut hits = Vec::new();
    for (origin, key, value) in &read.entries {
        let Some(why) = config_key(key, value) else {
            continue;
        };
        if origin == "command line:" {
            continue;
        }
        let (file, writable) = match origin.strip_prefix("file:") {
            Some(path) => {
                let mut p = PathBuf::from(path);
                if p.is_relative() {
                    if base.is_none() {
                        base = Some(config_base(&at));
                    }
                    p = base.clone().unwrap_or_default().join(p);
                }
                let writable = match access::writable_by(who, &p) {
                    Some(w) => w,
                    None if !p.exists() => format!("{} does not exist where the gate looked", p.display()),
                    None => continue,
                };
                (p.display().to_string(), writable)
            }
            None => (origin.to_string(), format!("the gate cannot tell who wrote {origin}")),
        };
        hits.push(ConfigHit {
            file,
            key: key.to_string(),
            why: why.to_string(),
            writable,
        });
    }
    Ok(hits)
}

/// The directory git's relative config origins are relative to: the top of the work tree, or
/// the git directory of a bare repository, or (outside a repository) where the call runs.
fn config_base(at: &At) -> PathBuf {
    if let Ok(top) = at.text(&["rev-parse", "--show-toplevel"])
        && !top.trim().is_empty()
    {
        return PathBuf::from(top.trim());
    }
    if let Ok(dir) = at.text(&["rev-parse", "--absolute-git-dir"])
        && !dir.trim().is_empty()
    {
        return PathBuf::from(dir.trim());
    }
    at.work_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_is_named_or_given_by_its_url() {
        let mut r = BTreeMap::new();
        r.insert("origin".to_string(), vec!["https://h/ops/app.git".to_string()]);
        r.insert("gh/up".to_string(), vec!["git://h/up.git".to_string()]);
        assert_eq!(configured_remote("gh/up", &r), Some("gh/up".into()));
        assert_eq!(configured_remote("git://h/up", &r), Some("gh/up".into()));
        assert_eq!(configured_remote("HTTPS://h/ops/app/", &r), Some("origin".into()));
        assert_eq!(configured_remote("git://elsewhere/x.git", &r), None);
    }
}
