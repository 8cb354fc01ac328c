//! The I/O a decision needs, gathered before `decide()` and handed to it as data (DESIGN §2):
//! the Tier Requirement of the skills a call belongs to, the path patterns of every skill, and
//! the files a pull request, commit, push or API write would change, worked out with the real
//! git.
//!
//! Only what [`Needs`] asks for is read: a call that needs no skills reads none. A skill that
//! cannot be read is an error (exit 78, naming the file); changed files that cannot be worked
//! out are a per-action `Err` that `decide()` turns into a refusal saying why.
//!
//! git runs with a clean environment and the gate's own safety overrides, so a hostile
//! repository config cannot make fact-gathering run a program (fsmonitor, hooks, external diff,
//! textconv, signature programs) or write the index.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use crate::decision::{Changes, Facts, Needs, SkillTier};
use crate::error::{Error, Result};
use crate::grammar::{Action, Invocation, ScopeTarget};
use crate::scope::Rules;
use crate::skill::{self, Need, Sources};

/// git's empty tree, the base of a diff in a repository without commits.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Output from one git command larger than this is an error, not a guess.
const MAX_OUTPUT: usize = 64 * 1024 * 1024;

/// Arguments before every fact-gathering git command: no pager, no fsmonitor or hooks, no
/// optional locks (no index refresh written), no signature program.
const GIT_SAFE: &[&str] = &[
    "--no-pager",
    "--no-optional-locks",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "log.showSignature=false",
    "-c",
    "core.quotePath=false",
];

/// How facts reach the real git.
pub struct Git {
    pub bin: PathBuf,
}

impl Git {
    fn env() -> Vec<(OsString, OsString)> {
        [
            ("LC_ALL", "C"),
            ("PATH", "/usr/bin:/bin"),
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("GIT_CONFIG_GLOBAL", "/dev/null"),
            ("GIT_TERMINAL_PROMPT", "0"),
            ("GIT_OPTIONAL_LOCKS", "0"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect()
    }

    /// Run git in `dir`; stdout, or the first line of stderr as the error.
    pub fn run(&self, dir: &Path, args: &[&str]) -> std::result::Result<Vec<u8>, String> {
        if !dir.is_dir() {
            return Err(format!("the directory {} does not exist", dir.display()));
        }
        // In a hardened install the gate holds the tiershim group; git runs without it.
        let (mut cmd, _fd) =
            crate::harden::command(&self.bin, self.bin.as_os_str()).map_err(|e| format!("cannot open {}: {e}", self.bin.display()))?;
        let out = cmd
            .args(GIT_SAFE)
            .args(args)
            .current_dir(dir)
            .env_clear()
            .envs(Git::env())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.bin.display()))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let first = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("failed").trim().to_string();
            return Err(format!("git {}: {first}", args.join(" ")));
        }
        if out.stdout.len() > MAX_OUTPUT {
            return Err(format!("git {}: more than {MAX_OUTPUT} bytes of output", args.join(" ")));
        }
        Ok(out.stdout)
    }

    fn text(&self, dir: &Path, args: &[&str]) -> std::result::Result<String, String> {
        let out = self.run(dir, args)?;
        String::from_utf8(out)
            .map(|s| s.trim_end_matches('\n').to_string())
            .map_err(|_| format!("git {}: output is not UTF-8", args.join(" ")))
    }

    /// Whether `rev` names an object (quietly).
    fn resolves(&self, dir: &Path, rev: &str) -> bool {
        self.run(dir, &["rev-parse", "--verify", "-q", &format!("{rev}^{{commit}}")])
            .is_ok()
    }

    /// NUL-separated paths, empty entries dropped; a path that is not UTF-8 is an error.
    fn paths(&self, dir: &Path, args: &[&str], into: &mut BTreeSet<String>) -> std::result::Result<(), String> {
        for raw in self.run(dir, args)?.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            let p = std::str::from_utf8(raw).map_err(|_| format!("git {}: a path is not UTF-8", args.join(" ")))?;
            into.insert(p.to_string());
        }
        Ok(())
    }
}

/// Gather what `needs` asks for. `cwd` is the caller's working directory.
pub fn gather(sources: &Sources, git: Option<&Git>, cwd: &Path, inv: &Invocation, needs: &Needs) -> Result<Facts> {
    let mut facts = Facts::default();
    let mut repo = sources.repo_of(cwd);
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
    if !needs.skills.is_empty() {
        let mut tiers = BTreeMap::new();
        for name in &needs.skills {
            if let Some(t) = skill_tier(sources, name, repo.as_deref())? {
                tiers.insert(name.clone(), t);
            }
        }
        facts.skill_tiers = Some(tiers);
    }
    if !needs.scope.is_empty() {
        facts.scope_rules = Some(Arc::new(scope_rules(sources, repo.as_deref())?));
    }
    Ok(facts)
}

fn skill_err(p: skill::Problem) -> Error {
    Error::Skill {
        path: p.path,
        msg: p.message,
    }
}

/// The binding Tier Requirement of skill `name`: the highest of its baseline and repository
/// files (a repository can raise a tier, never lower it).
fn skill_tier(sources: &Sources, name: &str, repo: Option<&str>) -> Result<Option<SkillTier>> {
    let (candidates, problems) = sources.named_for(name, repo);
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
pub fn scope_rules(sources: &Sources, repo: Option<&str>) -> Result<Rules> {
    let (candidates, problems) = sources.all_for(repo);
    if let Some(p) = problems.into_iter().next() {
        return Err(skill_err(p));
    }
    let mut skills = Vec::with_capacity(candidates.len());
    for c in &candidates {
        skills.push(skill::load(c, Need::Patterns).map_err(skill_err)?);
    }
    Rules::build(&skills).map_err(skill_err)
}

/// The directory a git call works in: the caller's, then each `-C`.
fn work_dir(cwd: &Path, chdir: &[String]) -> PathBuf {
    chdir.iter().fold(cwd.to_path_buf(), |d, c| d.join(c))
}

/// The files `action` would change, worked out with the real git.
pub fn changes(git: &Git, cwd: &Path, action: &Action, sources: &Sources) -> std::result::Result<Changes, String> {
    let Some(target) = &action.scope else {
        return Err("the gate cannot tell which files this call changes".into());
    };
    if let ScopeTarget::Contents { owner, repo, path } = target {
        return Ok(Changes {
            files: vec![path.clone()],
            how: format!("the path written through the API ({owner}/{repo})"),
            repo: None,
        });
    }
    let dir = match target {
        ScopeTarget::Commit { chdir, .. } | ScopeTarget::Push { chdir, .. } => work_dir(cwd, chdir),
        _ => cwd.to_path_buf(),
    };
    let top = git
        .text(&dir, &["rev-parse", "--show-toplevel"])
        .map_err(|e| format!("{} is not in a git work tree ({e})", dir.display()))?;
    let top = PathBuf::from(top);
    let mut files = BTreeSet::new();
    let how = match target {
        ScopeTarget::PullRequest { repo, base, head } => {
            pull_request(git, &top, repo.as_ref(), base.as_deref(), head.as_deref(), &mut files)?
        }
        ScopeTarget::Commit { all, paths, include, .. } => commit(git, &top, &dir, *all, paths, *include, action.has("amend"), &mut files)?,
        ScopeTarget::Push { remote, refspecs, .. } => push(git, &top, remote.as_deref(), refspecs, action, &mut files)?,
        ScopeTarget::Contents { .. } => return Err("an API write is not a git change".into()),
    };
    Ok(Changes {
        files: files.into_iter().collect(),
        how,
        repo: sources.repo_of(&top),
    })
}

const NAME_ONLY: &[&str] = &["--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv"];

/// The remote a pull request goes to: the one whose URL names `owner/repo` when the call names
/// the repository, else `origin`, else the only remote.
fn pr_remote(git: &Git, top: &Path, repo: Option<&(String, String)>) -> std::result::Result<String, String> {
    let listing = git.text(top, &["remote", "-v"])?;
    let mut remotes: Vec<(String, String)> = listing
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            Some((parts.next()?.to_string(), parts.next()?.to_string()))
        })
        .collect();
    remotes.dedup();
    if let Some((owner, name)) = repo {
        let wanted = format!("{owner}/{name}").to_ascii_lowercase();
        return remotes
            .iter()
            .find(|(_, url)| {
                let u = url.trim_end_matches('/').trim_end_matches(".git").to_ascii_lowercase();
                u.ends_with(&format!("/{wanted}")) || u.ends_with(&format!(":{wanted}"))
            })
            .map(|(n, _)| n.clone())
            .ok_or_else(|| format!("the working directory {} is not a clone of {owner}/{name}", top.display()));
    }
    if remotes.iter().any(|(n, _)| n == "origin") {
        return Ok("origin".into());
    }
    let mut names: Vec<&String> = remotes.iter().map(|(n, _)| n).collect();
    names.dedup();
    match names.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err("the repository has no remote, so the pull request's base cannot be found".into()),
        _ => Err("the repository has several remotes and none is `origin`; name the repository with -R/--repo".into()),
    }
}

/// `git diff --name-only <remote>/<base>...<head>`.
fn pull_request(
    git: &Git,
    top: &Path,
    repo: Option<&(String, String)>,
    base: Option<&str>,
    head: Option<&str>,
    files: &mut BTreeSet<String>,
) -> std::result::Result<String, String> {
    let remote = pr_remote(git, top, repo)?;
    let head_ref = match head {
        Some(h) => {
            // gh accepts `owner:branch` for a fork's branch.
            let branch = h.rsplit_once(':').map(|(_, b)| b).unwrap_or(h);
            let local = format!("refs/heads/{branch}");
            let tracking = format!("refs/remotes/{remote}/{branch}");
            if git.resolves(top, &local) {
                local
            } else if git.resolves(top, &tracking) {
                tracking
            } else {
                return Err(format!("the head branch {branch} is neither a local branch nor {remote}/{branch}"));
            }
        }
        None => {
            git.text(top, &["symbolic-ref", "-q", "HEAD"])
                .map_err(|_| "HEAD is detached, so the pull request's head branch is unknown; pass --head".to_string())?;
            "HEAD".to_string()
        }
    };
    let base_ref = match base {
        Some(b) => {
            let r = format!("refs/remotes/{remote}/{b}");
            if !git.resolves(top, &r) {
                return Err(format!(
                    "the base branch {b} has no remote-tracking ref {remote}/{b}; run git fetch {remote} {b}"
                ));
            }
            r
        }
        None => default_branch(git, top, &remote)?,
    };
    let range = format!("{base_ref}...{head_ref}");
    let mut args = vec!["diff"];
    args.extend_from_slice(NAME_ONLY);
    args.push(&range);
    args.push("--");
    git.paths(top, &args, files)?;
    Ok(format!("git diff --name-only {range}"))
}

/// The remote's default branch as this clone knows it: `<remote>/HEAD`, else the one of
/// `<remote>/main` and `<remote>/master` that exists.
fn default_branch(git: &Git, top: &Path, remote: &str) -> std::result::Result<String, String> {
    if let Ok(r) = git.text(top, &["symbolic-ref", "-q", &format!("refs/remotes/{remote}/HEAD")])
        && !r.is_empty()
    {
        return Ok(r);
    }
    let found: Vec<String> = ["main", "master"]
        .iter()
        .map(|b| format!("refs/remotes/{remote}/{b}"))
        .filter(|r| git.resolves(top, r))
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(format!(
            "the default branch of {remote} is unknown ({remote}/HEAD is not set); pass --base, or run git remote set-head {remote} --auto"
        )),
    }
}

/// What `git commit` records: the index (and with `all` the tracked changes; with paths, those
/// paths), plus the files of the commit an `--amend` replaces.
#[allow(clippy::too_many_arguments)]
fn commit(
    git: &Git,
    top: &Path,
    dir: &Path,
    all: bool,
    paths: &[String],
    include: bool,
    amend: bool,
    files: &mut BTreeSet<String>,
) -> std::result::Result<String, String> {
    let head = if git.resolves(top, "HEAD") { "HEAD" } else { EMPTY_TREE };
    let mut how = Vec::new();
    if paths.is_empty() || include {
        let mut args = vec!["diff", "--cached"];
        args.extend_from_slice(NAME_ONLY);
        args.push(head);
        git.paths(top, &args, files)?;
        how.push("the index");
    }
    if all {
        let mut args = vec!["diff"];
        args.extend_from_slice(NAME_ONLY);
        git.paths(top, &args, files)?;
        how.push("every tracked change");
    }
    if !paths.is_empty() {
        // Pathspecs are relative to where the commit runs, as git commit reads them; the
        // output is relative to the top of the work tree.
        let mut args = vec!["diff"];
        args.extend_from_slice(NAME_ONLY);
        args.push(head);
        args.push("--");
        args.extend(paths.iter().map(String::as_str));
        git.paths(dir, &args, files)?;
        how.push("the named paths");
    }
    if amend && head == "HEAD" {
        let mut args = vec!["diff-tree", "--no-commit-id", "-r", "--root"];
        args.extend_from_slice(NAME_ONLY);
        args.push("HEAD");
        git.paths(top, &args, files)?;
        how.push("the amended commit");
    }
    Ok(format!("git commit of {}", how.join(", ")))
}

/// The files of every commit a push sends: reachable from each source and not yet on the
/// remote's tracking refs (all remotes' when the destination is a URL).
fn push(
    git: &Git,
    top: &Path,
    remote: Option<&str>,
    refspecs: &[String],
    action: &Action,
    files: &mut BTreeSet<String>,
) -> std::result::Result<String, String> {
    let mut sources: Vec<String> = Vec::new();
    if action.has("all-branches") || action.has("mirror") {
        sources.push("--branches".into());
    }
    if action.has("tags") && refspecs.is_empty() {
        sources.push("--tags".into());
    }
    for spec in refspecs {
        let body = spec.trim_start_matches('+');
        let src = body.split_once(':').map(|(s, _)| s).unwrap_or(body);
        if src.is_empty() || src.contains('*') {
            continue; // a deletion sends nothing; a pattern was covered by --branches
        }
        if !git.resolves(top, src) {
            return Err(format!("the push source {src} does not name a commit"));
        }
        sources.push(format!("{src}^{{commit}}"));
    }
    if sources.is_empty() {
        return Ok("nothing is sent".into());
    }
    let names = git.text(top, &["remote"]).unwrap_or_default();
    let not = match remote {
        Some(r) if names.lines().any(|n| n == r) => format!("--remotes={r}"),
        _ => "--remotes".to_string(),
    };
    let mut args = vec![
        "log",
        "--format=",
        "--name-only",
        "-z",
        "--no-renames",
        "--diff-merges=first-parent",
    ];
    args.extend(sources.iter().map(String::as_str));
    args.push("--not");
    args.push(&not);
    args.push("--");
    git.paths(top, &args, files)?;
    Ok(format!("the files of the commits not yet on {}", remote.unwrap_or("any remote")))
}
