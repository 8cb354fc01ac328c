//! The I/O a decision needs, gathered before `decide()` and handed to it as data (DESIGN §2):
//! the Tier Requirement of the skills a call belongs to, the path patterns of every skill, and
//! the files a pull request, commit, push or API write would change, worked out with the real
//! git.
//!
//! Only what [`Needs`] asks for is read: a call that needs no skills reads none. A skill that
//! cannot be read is an error (exit 78, naming the file); changed files that cannot be worked
//! out are a per-action `Err` that `decide()` turns into a refusal saying why.
//!
//! git runs with a clean environment (its HOME the install's tool home, so it reads the same
//! global config as the real git of the agent's calls) and the gate's own safety overrides, so a
//! hostile repository config cannot make fact-gathering run a program (fsmonitor, hooks,
//! external diff, textconv, signature programs) or write the index.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use crate::decision::{Changes, Facts, Needs, SkillTier};
use crate::error::{Error, Result};
use crate::grammar::gh::Fill;
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
    /// The install's tool home: the gate's git reads the same `~/.gitconfig` as the real git the
    /// agent's calls run (`push.default`, `branch.<b>.merge` decide what a push sends). Without
    /// one, no global config is read.
    pub home: Option<PathBuf>,
}

impl Git {
    fn env(&self) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = [
            ("LC_ALL", "C"),
            ("PATH", "/usr/bin:/bin"),
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("GIT_TERMINAL_PROMPT", "0"),
            ("GIT_OPTIONAL_LOCKS", "0"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
        match &self.home {
            Some(home) => env.extend(
                crate::exec::home_vars(home)
                    .into_iter()
                    .map(|(k, v)| (k.into(), v.into_os_string())),
            ),
            None => env.push(("GIT_CONFIG_GLOBAL".into(), "/dev/null".into())),
        }
        env
    }

    /// Run git in `dir`; stdout, or the first line of stderr as the error.
    pub fn run(&self, dir: &Path, args: &[&str]) -> std::result::Result<Vec<u8>, String> {
        let (ok, stdout, err) = self.output(dir, args)?;
        if !ok {
            return Err(format!("git {}: {err}", args.join(" ")));
        }
        Ok(stdout)
    }

    /// Run git in `dir`: whether it succeeded, its stdout, and the first line of its stderr.
    fn output(&self, dir: &Path, args: &[&str]) -> std::result::Result<(bool, Vec<u8>, String), String> {
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
            .envs(self.env())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.bin.display()))?;
        if out.stdout.len() > MAX_OUTPUT {
            return Err(format!("git {}: more than {MAX_OUTPUT} bytes of output", args.join(" ")));
        }
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("failed").trim().to_string();
        Ok((out.status.success(), out.stdout, first))
    }

    /// NUL-separated paths, empty entries dropped; a path that is not UTF-8 is an error.
    fn paths(&self, dir: &Path, args: &[&str], into: &mut Vec<String>) -> std::result::Result<(), String> {
        for raw in self.run(dir, args)?.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            let p = std::str::from_utf8(raw).map_err(|_| format!("git {}: a path is not UTF-8", args.join(" ")))?;
            into.push(p.to_string());
        }
        Ok(())
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
    let branch = match git.output(cwd, &["symbolic-ref", "--quiet", "HEAD"]) {
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
    let shown = git.run(cwd, &["remote", "-v"])?;
    for line in String::from_utf8_lossy(&shown).lines() {
        if let Some(url) = line.split('\t').nth(1).and_then(|r| r.rsplit_once(' ')).map(|(u, _)| u) {
            urls.push(url.to_string());
        }
    }
    let configured = git
        .run(cwd, &["config", "-z", "--get-regexp", "^remote\\..*\\.(url|pushurl)$"])
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
        let s = skill::load(c, Need::Patterns).map_err(skill_err)?;
        // A mistake in a skill's path rules (an unclosed or unknown fence, prose in a block, a
        // path a pattern cannot be) would drop rules its author wrote: refuse instead.
        if let Some(e) = s.error() {
            return Err(Error::Skill {
                path: s.shown.clone(),
                msg: format!("{e}; calls whose changed files are checked are refused until it is fixed (tiershim skills validate)"),
            });
        }
        skills.push(s);
    }
    Rules::build(&skills).map_err(skill_err)
}

/// The directory a git call works in: the caller's, then each `-C`.
fn work_dir(cwd: &Path, chdir: &[String]) -> PathBuf {
    chdir.iter().fold(cwd.to_path_buf(), |d, c| d.join(c))
}

/// The files `action` would change, worked out with the real git (two to four git runs).
pub fn changes(git: &Git, cwd: &Path, action: &Action, sources: &Sources) -> std::result::Result<Changes, String> {
    let Some(target) = &action.scope else {
        return Err("the gate cannot tell which files this call changes".into());
    };
    let dir = match target {
        ScopeTarget::Contents { owner, repo, path } => {
            return Ok(Changes {
                files: vec![path.clone()],
                how: format!("the path written through the API ({owner}/{repo})"),
                repo: None,
            });
        }
        ScopeTarget::Commit { chdir, .. } | ScopeTarget::Push { chdir, .. } => work_dir(cwd, chdir),
        ScopeTarget::PullRequest { .. } => cwd.to_path_buf(),
    };
    let mut files = Vec::new();
    let (top, how) = match target {
        ScopeTarget::PullRequest { repo, base, head } => {
            pull_request(git, &dir, repo.as_ref(), base.as_deref(), head.as_deref(), &mut files)?
        }
        ScopeTarget::Commit { all, paths, include, .. } => commit(git, &dir, *all, paths, *include, action.has("amend"), &mut files)?,
        ScopeTarget::Push { remote, refspecs, .. } => push(git, &dir, remote.as_deref(), refspecs, action, &mut files)?,
        ScopeTarget::Contents { .. } => return Err("an API write is not a git change".into()),
    };
    files.sort_unstable();
    files.dedup();
    Ok(Changes {
        files,
        how,
        repo: sources.repo_of(&top),
    })
}

const NAME_ONLY: &[&str] = &["--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv"];

/// `git rev-parse --show-toplevel <more…>` in `dir`: the top of the work tree, the other lines,
/// and whether git succeeded. Not being in a work tree is an error.
fn rev_parse(git: &Git, dir: &Path, more: &[&str]) -> std::result::Result<(PathBuf, Vec<String>, bool, String), String> {
    let mut args = vec!["rev-parse", "--show-toplevel"];
    args.extend_from_slice(more);
    let (ok, out, err) = git.output(dir, &args)?;
    let text = String::from_utf8(out).map_err(|_| "git rev-parse: output is not UTF-8".to_string())?;
    let mut lines = text.lines().map(str::to_string);
    match lines.next().filter(|t| t.starts_with('/')) {
        Some(top) => Ok((PathBuf::from(top), lines.collect(), ok, err)),
        None => Err(format!("{} is not in a git work tree ({err})", dir.display())),
    }
}

/// The local branches and remote-tracking refs, with the target of each symbolic ref.
fn refs(git: &Git, top: &Path) -> std::result::Result<BTreeMap<String, String>, String> {
    let out = git.run(
        top,
        &["for-each-ref", "--format=%(refname)%00%(symref)", "refs/heads/", "refs/remotes/"],
    )?;
    let text = String::from_utf8(out).map_err(|_| "git for-each-ref: output is not UTF-8".to_string())?;
    Ok(text
        .lines()
        .filter_map(|l| l.split_once('\0').map(|(r, s)| (r.to_string(), s.to_string())))
        .collect())
}

/// The remote a pull request goes to: the one whose URL names `owner/repo` when the call names
/// the repository, else `origin`, else the only remote this clone has tracking refs of.
fn pr_remote(
    git: &Git,
    top: &Path,
    repo: Option<&(String, String)>,
    refs: &BTreeMap<String, String>,
) -> std::result::Result<String, String> {
    if let Some((owner, name)) = repo {
        let out = git
            .run(top, &["config", "-z", "--get-regexp", "^remote\\..*\\.url$"])
            .unwrap_or_default();
        let wanted = format!("{owner}/{name}").to_ascii_lowercase();
        for entry in String::from_utf8_lossy(&out).split('\0') {
            let Some((key, url)) = entry.split_once('\n') else { continue };
            let Some(remote) = key.strip_prefix("remote.").and_then(|k| k.strip_suffix(".url")) else {
                continue;
            };
            let u = url.trim_end_matches('/').trim_end_matches(".git").to_ascii_lowercase();
            if u.ends_with(&format!("/{wanted}")) || u.ends_with(&format!(":{wanted}")) {
                return Ok(remote.to_string());
            }
        }
        return Err(format!("the working directory {} is not a clone of {owner}/{name}", top.display()));
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
    git: &Git,
    dir: &Path,
    repo: Option<&(String, String)>,
    base: Option<&str>,
    head: Option<&str>,
    files: &mut Vec<String>,
) -> std::result::Result<(PathBuf, String), String> {
    let (top, lines, ok, _) = rev_parse(git, dir, &["--symbolic-full-name", "HEAD"])?;
    let refs = refs(git, &top)?;
    let remote = pr_remote(git, &top, repo, &refs)?;
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
        git.paths(&top, &args, files)?;
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
#[allow(clippy::too_many_arguments)]
fn commit(
    git: &Git,
    dir: &Path,
    all: bool,
    paths: &[String],
    include: bool,
    amend: bool,
    files: &mut Vec<String>,
) -> std::result::Result<(PathBuf, String), String> {
    // `--verify -q HEAD` fails quietly (after the top) in a repository without commits.
    let (top, _, has_head, _) = rev_parse(git, dir, &["--verify", "-q", "HEAD"])?;
    let head = if has_head { "HEAD" } else { EMPTY_TREE };
    let mut how = Vec::new();
    if paths.is_empty() || include {
        let mut args = vec!["diff", "--cached"];
        args.extend_from_slice(NAME_ONLY);
        args.push(head);
        git.paths(&top, &args, files)?;
        how.push("the index");
    }
    if all {
        let mut args = vec!["diff"];
        args.extend_from_slice(NAME_ONLY);
        git.paths(&top, &args, files)?;
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
    if amend && has_head {
        let mut args = vec!["diff-tree", "--no-commit-id", "-r", "--root"];
        args.extend_from_slice(NAME_ONLY);
        args.push("HEAD");
        git.paths(&top, &args, files)?;
        how.push("the amended commit");
    }
    Ok((top, format!("git commit of {}", how.join(", "))))
}

/// The files of every commit a push sends: reachable from each source and not yet on the
/// remote's tracking refs (all remotes' when the destination is not a plain remote name).
/// Returns the top of the work tree.
/// A configured remote's name, not a URL or a path.
fn is_remote_name(r: &str) -> bool {
    !r.is_empty() && !r.starts_with('-') && r.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// Where a push to the remote `remote` lands, as far as the grammar could not tell: a branch
/// that is the remote's default as this clone knows it (`<remote>/HEAD`, say `stable`), which
/// the grammar's list of usual names (`main`, `master`, …) does not know; or a destination
/// rewritten by `remote.<remote>.push`, which argv does not show. Either refuses the push.
fn landing(git: &Git, top: &Path, remote: &str, refspecs: &[String]) -> std::result::Result<(), String> {
    // One read of the settings that move a push's destination: `remote.<name>.push` (a
    // mapping), and `push.default` = `upstream`/`tracking` (a branch goes to its upstream).
    let escaped: String = remote
        .chars()
        .map(|c| if c == '.' { "\\.".to_string() } else { c.to_string() })
        .collect();
    let pattern = format!("^(remote\\.{escaped}\\.push|push\\.default)$");
    let (_, out, _) = git.output(top, &["config", "-z", "--get-regexp", &pattern])?;
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
    let refs = refs(git, top)?;
    // Without `<remote>/HEAD` the default branch is unknown, and any destination may be it.
    let Some(default) = refs
        .get(&format!("refs/remotes/{remote}/HEAD"))
        .and_then(|t| t.strip_prefix(&format!("refs/remotes/{remote}/")))
        .map(str::to_string)
    else {
        return Err(format!(
            "the default branch of {remote} is not known here ({remote}/HEAD is not set), so the push may land on it; an operator can run git remote set-head {remote} --auto"
        ));
    };
    for spec in refspecs {
        let body = spec.trim_start_matches('+');
        let dst = match body.split_once(':') {
            Some((_, d)) => d,
            None => body,
        };
        let branch = dst
            .strip_prefix("refs/heads/")
            .or_else(|| dst.strip_prefix("heads/"))
            .unwrap_or(dst);
        if branch.eq_ignore_ascii_case(&default) {
            return Err(format!(
                "the push lands on {branch}, the default branch of {remote} ({remote}/HEAD); push a feature branch and open a pull request"
            ));
        }
    }
    Ok(())
}

fn push(
    git: &Git,
    dir: &Path,
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
    let (top, commits, ok, err) = rev_parse(git, dir, &revs)?;
    if !ok {
        return Err(format!("a push source does not name a commit ({err})"));
    }
    if let Some(r) = remote.filter(|r| is_remote_name(r)) {
        landing(git, &top, r, refspecs)?;
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
    // `--remotes=<name>` for a plain remote name (one that does not exist matches nothing, so
    // every commit counts); all remote-tracking refs for a URL or anything else.
    let not = match remote.filter(|r| is_remote_name(r)) {
        Some(r) => format!("--remotes={r}"),
        None => "--remotes".to_string(),
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
    git.paths(&top, &args, files)?;
    Ok((
        top,
        format!("the files of the commits not yet on {}", remote.unwrap_or("any remote")),
    ))
}
