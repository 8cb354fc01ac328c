//! The real git as an oracle (issue 18's evidence). Generated git argv variants (a fixed seed;
//! every option spelling the generator knows: unique abbreviations, `--opt=v` and `--opt v`,
//! options after operands, `--end-of-options`, `--`, and the global options that choose the
//! repository and pathspec rules) are judged by `tiershim explain` at tiers 1 to 3, and each is
//! run by the real git, with the gate's forced settings, in a fresh copy of a fixture: a work
//! tree with uncommitted changes and a bare remote served by `git daemon` whose default branch
//! is `stable`, not `main`. Recording hooks on both sides (the remote's `pre-receive`, `update`
//! and `reference-transaction`, the work tree's `reference-transaction`) and snapshots of the
//! work tree, the configuration and the files around it say what git really did. That effect
//! has a tier (a push to the default branch or a forced one: never; a tag pushed, a local
//! branch rewritten, uncommitted work lost: 3; a commit, a branch, a tracking setting: 2;
//! nothing but remote-tracking refs set to the remote's own values: 1), and no verdict may
//! allow a call above it. Over-refusals (the gate asks more than the effect needs) are counted
//! and printed, not failed: a refusal is always safe, and many are on purpose (`git -c`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::harness::write_exec;
use crate::real_tools::{GitDaemon, git, which};

/// The fixed seed of the generator.
const SEED: u64 = 0x5EED_0018;
/// How many generated variants run, besides the base calls themselves.
const VARIANTS: usize = 120;

/// Base calls: `{URL}` is the variant's remote, `{NOWHERE}` a URL no remote has. A base that
/// starts with `@key=value ` (any number) runs with that setting in the work tree's
/// configuration, as an operator's (the real git and the gate read the same file); one that
/// starts with `!<git args> ;; ` runs that git command in the copy first (a bisect started).
const BASES: &[&str] = &[
    // pushes
    "push origin feat",
    "push origin feat:stable",
    "push origin feat:refs/heads/stable",
    "push origin feat:Stable",
    "push origin +feat:feat-r",
    "push --force origin feat:feat-r",
    "push --force-with-lease origin feat:feat-r",
    "push origin feat:newbranch",
    "push -u origin feat:newbranch",
    "push origin HEAD:refs/heads/newbranch",
    "push gh/up feat:stable",
    "push gh/up feat:newbranch",
    "push {URL} feat:stable",
    "push {URL} feat:newbranch",
    "push {NOWHERE} feat:newbranch",
    "push origin v2",
    "push origin v2:v2",
    "push origin feat:refs/tags/t9",
    "push origin feat:refs/notes/x",
    "push origin :feat-r",
    "push --delete origin feat-r",
    "push -d origin stable",
    "push --tags origin",
    "push --follow-tags origin feat",
    "push --mirror origin",
    "push --all origin",
    "push --prune origin feat",
    "push -n origin feat:stable",
    "push --dry-run --force origin feat:stable",
    "push origin",
    "push",
    // fetches and pulls
    "fetch",
    "fetch origin",
    "fetch --prune origin",
    "fetch --tags origin",
    "fetch -ft",
    "fetch origin +stable:stable",
    "fetch origin +feat-r:other",
    "fetch -f origin feat-r:other",
    "fetch origin feat-r:newlocal",
    "fetch -pP",
    "fetch --prune-tags --force origin",
    "fetch origin stable:refs/remotes/origin/stable",
    "fetch origin +refs/heads/stable:refs/remotes/origin/stable",
    "fetch origin +feat-r:refs/remotes/origin/stable",
    "fetch origin +feat-r:refs/replace/{FEAT}",
    "fetch --set-upstream origin feat-r",
    "fetch --filter=blob:none origin",
    "fetch --depth=1 origin",
    "fetch --dry-run origin +feat-r:other",
    "fetch -u origin feat-r:feat",
    "pull --ff-only origin stable",
    "pull origin +feat-r:other",
    "pull --tags -f origin stable",
    "pull --rebase origin stable",
    "fetch --prune origin refs/heads/*:refs/heads/*",
    "pull --prune origin refs/heads/*:refs/heads/*",
    "fetch origin feat-r:refs/replace/x",
    "fetch origin feat-r:refs/bisect/bad",
    "fetch origin feat-r:refs/original/refs/heads/x",
    "fetch origin feat-r:refs/notes/x",
    "fetch origin feat-r:HEAD",
    // the operator's configuration decides what argv leaves open
    "@fetch.prune=true fetch origin refs/heads/*:refs/heads/*",
    "@remote.origin.prune=true pull origin refs/heads/*:refs/heads/*",
    "@fetch.prune=true @remote.origin.prune=false fetch origin refs/heads/*:refs/heads/*",
    "@push.followTags=true push origin feat",
    "@push.followTags=true push --no-follow-tags origin feat",
    // work tree
    "checkout -- checks/dirty.md",
    "checkout .",
    "checkout checks/dirty.md",
    "checkout HEAD~1 -- checks/dirty.md",
    "checkout stable -- checks/a.md",
    "checkout --pathspec-from-file=paths.txt",
    "checkout other",
    "checkout stable",
    "checkout feat-r",
    "checkout -b newbranch",
    "checkout -B other",
    "checkout -f stable",
    "switch other",
    "switch -c newbranch",
    "switch -C other",
    "switch --discard-changes stable",
    "restore checks/dirty.md",
    "restore .",
    "restore --staged checks/dirty.md",
    "restore -W checks/dirty.md",
    "restore --source=HEAD~1 checks/feat.md",
    "reset --merge",
    "reset --hard",
    "reset HEAD~1",
    "reset --soft HEAD~1",
    "reset --keep HEAD~1",
    "stash",
    "stash list",
    "clean -n",
    "clean -fd",
    "rm -n checks/a.md",
    "rm checks/a.md",
    "rm -f checks/dirty.md",
    "mv -n checks/a.md checks/b.md",
    "mv checks/a.md checks/b.md",
    "apply --check x.patch",
    "apply --stat x.patch",
    "apply x.patch",
    // branches and tags
    "branch newbranch",
    "branch -d other",
    "branch -D other",
    "branch -f other HEAD",
    "branch -m other renamed",
    "branch -r -d origin/feat-r",
    "branch -u origin/stable",
    "branch --list",
    "tag t9",
    "tag -a -m note t9",
    "tag -d v2",
    "tag -f v2",
    "tag -F /etc/hostname t9",
    "tag -l",
    "symbolic-ref refs/remotes/origin/HEAD refs/remotes/origin/feat-r",
    "symbolic-ref HEAD",
    "update-ref refs/heads/stable HEAD",
    // commits
    "commit -am x",
    "commit --dry-run",
    "commit -m x",
    "commit --amend --no-edit",
    "commit -m x checks/dirty.md",
    "--icase-pathspecs commit -m x CHECKS/DIRTY.MD",
    "rebase stable",
    "rebase --update-refs stable",
    "merge other",
    "merge --ff-only stable",
    "cherry-pick other",
    "revert HEAD",
    "am x.mbox",
    // configuration
    "config user.name --get",
    "config diff.external prog --get",
    "config --get user.name",
    "config user.name x",
    "config core.worktree ../x --get",
    "config --list",
    "config list",
    "config get user.name",
    "config set user.name x",
    "clone -c core.fsmonitor=x {URL} cloned",
    "clone {URL} cloned",
    "init --separate-git-dir=../sep sub",
    "init --shared=0777 sub",
    "init sub",
    "worktree add ../wt other",
    "worktree add -B other ../wt",
    "worktree list",
    "remote prune -n origin",
    "remote prune origin",
    "remote set-head origin feat-r",
    "remote -v",
    "reflog expire --dry-run --all",
    "reflog expire --expire=now --all",
    "reflog expire --dry-run --no-dry-run --expire=now --all",
    "worktree prune -n",
    "worktree prune -n --no-dry-run",
    "remote prune -n --no-dry-run origin",
    "!bisect start feat stable~1 ;; bisect view --output=../bv.txt",
    "!bisect start feat stable~1 ;; bisect visualize log --output=../bv.txt",
    "!bisect start feat stable~1 ;; bisect view -p",
    // reads
    "status",
    "log -1",
    "log --output=../out.txt -1",
    "diff --output=out.txt",
    "show",
    "grep -n base",
    "fsck",
    "notes list",
    "whatchanged -1",
    "archive HEAD",
    "archive -o ../a.tar HEAD",
    "format-patch --stdout -1",
    "format-patch -1",
    "fast-export stable",
    "bisect log",
    "rerere status",
    "sparse-checkout list",
    "submodule status",
    "ls-remote origin",
    "ls-remote {URL}",
    "remote show origin",
];

/// Global option prefixes the generator puts in front of a call.
const GLOBALS: &[&[&str]] = &[
    &[],
    &["-C", "."],
    &["--git-dir=.git"],
    &["--git-dir", ".git", "--work-tree=."],
    &["--literal-pathspecs"],
    &["--icase-pathspecs"],
    &["--no-replace-objects"],
    &["-c", "core.pager=cat"],
    &["--bare"],
    &["--no-pager"],
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// One generated spelling of `base`: a global prefix, long options abbreviated or with their
/// value joined or split, options moved after the operands, `--end-of-options` or `--`
/// before the operands.
fn variant(base: &[String], rng: &mut Rng) -> Vec<String> {
    let mut words: Vec<String> = base.to_vec();
    // The command is the first word after the global options of the base.
    let cmd_at = words.iter().position(|w| !w.starts_with('-')).unwrap_or(0);
    let (head, tail) = words.split_at_mut(cmd_at + 1);
    let mut tail: Vec<String> = tail.to_vec();
    match rng.below(6) {
        0 => {
            // Abbreviate each long option to a prefix at least 4 characters long.
            for w in tail.iter_mut().filter(|w| w.starts_with("--") && w.len() > 6) {
                let (name, value) = match w.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (w.clone(), None),
                };
                let keep = 4 + rng.below(name.len() - 4);
                let short = name[..keep.min(name.len())].to_string();
                *w = match value {
                    Some(v) => format!("{short}={v}"),
                    None => short,
                };
            }
        }
        1 => {
            // `--opt=v` split into two words.
            let mut out = Vec::new();
            for w in &tail {
                match w.split_once('=') {
                    Some((n, v)) if n.starts_with("--") => {
                        out.push(n.to_string());
                        out.push(v.to_string());
                    }
                    _ => out.push(w.clone()),
                }
            }
            tail = out;
        }
        2 => {
            // Options after the operands.
            let (opts, ops): (Vec<String>, Vec<String>) = tail.iter().cloned().partition(|w| w.starts_with('-') && w != "-");
            tail = ops.into_iter().chain(opts).collect();
        }
        3 => {
            // `--end-of-options` before the first operand.
            if let Some(k) = tail.iter().position(|w| !w.starts_with('-')) {
                tail.insert(k, "--end-of-options".into());
            }
        }
        // `--` before the last operand.
        4 if tail.len() > 1 && !tail.last().is_some_and(|w| w.starts_with('-')) => {
            let k = tail.len() - 1;
            tail.insert(k, "--".into());
        }
        _ => {}
    }
    let mut out: Vec<String> = GLOBALS[rng.below(GLOBALS.len())].iter().map(|s| s.to_string()).collect();
    out.extend(head.iter().cloned());
    out.extend(tail);
    out
}

/// A template fixture and what every copy of it needs.
struct World {
    root: PathBuf,
    port_url: String,
    config: PathBuf,
    hooks: PathBuf,
    /// The commit `feat-r` points at on the remote.
    feat_r: String,
}

fn sh(path: &Path, text: &str) {
    write_exec(path, &format!("#!/bin/sh\n{text}"));
}

/// The template: `tpl/remote.git` (bare; default branch `stable`; branches `stable` and
/// `feat-r`; tag `v1`; recording hooks) and `tpl/work` (remotes `origin` and `gh/up` with
/// their remote-tracking refs and `<remote>/HEAD`; branches `stable` tracking origin/stable,
/// `other`, `feat` checked out one commit ahead; local tags `v2` and `v3` (annotated); an uncommitted change to
/// `checks/dirty.md` and an untracked `notes.txt`).
fn world(daemon_url: &str, root: &Path) -> World {
    let tpl = root.join("tpl");
    let remote = tpl.join("remote.git");
    let work = tpl.join("work");
    std::fs::create_dir_all(&work).unwrap();
    // No sample hooks: fewer files to copy for every variant.
    let empty = root.join("empty-template");
    std::fs::create_dir_all(&empty).unwrap();
    let template = format!("--template={}", empty.display());
    git(root, &["init", "-q", &template, "--bare", "-b", "stable", remote.to_str().unwrap()]);
    std::fs::create_dir_all(remote.join("hooks")).unwrap();
    for hook in ["pre-receive", "reference-transaction"] {
        sh(
            &remote.join("hooks").join(hook),
            &format!(
                "[ \"{hook}\" = reference-transaction ] && [ \"$1\" != committed ] && exit 0\nwhile read a b c; do echo \"{hook} $a $b $c\" >> recv.log; done\n"
            ),
        );
    }
    sh(&remote.join("hooks/update"), "echo \"update $2 $3 $1\" >> recv.log\n");
    git(&work, &["init", "-q", &template, "-b", "stable"]);
    std::fs::create_dir_all(work.join("checks")).unwrap();
    std::fs::write(work.join("README.md"), "base\n").unwrap();
    std::fs::write(work.join("checks/a.md"), "a\n").unwrap();
    std::fs::write(work.join("checks/dirty.md"), "clean\n").unwrap();
    std::fs::write(work.join("paths.txt"), "checks/dirty.md\n").unwrap();
    std::fs::write(
        work.join("x.patch"),
        "diff --git a/checks/p.md b/checks/p.md\nnew file mode 100644\n--- /dev/null\n+++ b/checks/p.md\n@@ -0,0 +1 @@\n+p\n",
    )
    .unwrap();
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "base"]);
    // A mailbox of a commit that adds checks/m.md.
    git(&work, &["switch", "-q", "-c", "mbox"]);
    std::fs::write(work.join("checks/m.md"), "m\n").unwrap();
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "m"]);
    let mbox = git(&work, &["format-patch", "-1", "--stdout"]);
    git(&work, &["switch", "-q", "stable"]);
    git(&work, &["branch", "-q", "-D", "mbox"]);
    std::fs::write(work.join("x.mbox"), format!("{mbox}\n")).unwrap();
    git(&work, &["add", "x.mbox"]);
    git(&work, &["commit", "-q", "-m", "mailbox"]);
    let rpath = remote.to_str().unwrap().to_string();
    git(&work, &["push", "-q", &rpath, "stable"]);
    git(&work, &["switch", "-q", "-c", "feat-r"]);
    std::fs::write(work.join("checks/r.md"), "r\n").unwrap();
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "r"]);
    git(&work, &["push", "-q", &rpath, "feat-r"]);
    let feat_r = git(&work, &["rev-parse", "HEAD"]);
    git(&work, &["switch", "-q", "stable"]);
    git(&work, &["branch", "-q", "-D", "feat-r"]);
    git(&work, &["tag", "v1"]);
    git(&work, &["push", "-q", &rpath, "v1"]);
    std::fs::write(remote.join("recv.log"), "").unwrap();
    for name in ["origin", "gh/up"] {
        git(&work, &["remote", "add", name, "git://placeholder/remote.git"]);
        git(
            &work,
            &[
                "fetch",
                "-q",
                &rpath,
                &format!("+refs/heads/*:refs/remotes/{name}/*"),
                "+refs/tags/*:refs/tags/*",
            ],
        );
        git(
            &work,
            &[
                "symbolic-ref",
                &format!("refs/remotes/{name}/HEAD"),
                &format!("refs/remotes/{name}/stable"),
            ],
        );
    }
    git(&work, &["branch", "-q", "--set-upstream-to=origin/stable"]);
    git(&work, &["switch", "-q", "-c", "other"]);
    std::fs::write(work.join("checks/other.md"), "other\n").unwrap();
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "other"]);
    git(&work, &["switch", "-q", "-c", "feat", "stable"]);
    std::fs::write(work.join("checks/feat.md"), "feat\n").unwrap();
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "feat"]);
    git(&work, &["tag", "v2"]);
    // An annotated tag, which push.followTags sends along.
    git(&work, &["tag", "-a", "-m", "release", "v3"]);
    // A worktree whose directory is gone: `worktree prune` removes what git kept of it.
    let gone = tpl.join("gone");
    git(&work, &["worktree", "add", "-q", "--detach", gone.to_str().unwrap()]);
    std::fs::remove_dir_all(&gone).unwrap();
    std::fs::write(work.join("checks/dirty.md"), "uncommitted work\n").unwrap();
    std::fs::write(work.join("notes.txt"), "untracked work\n").unwrap();
    // The work tree's recording hook (the gate's forced settings point hooks at /dev/null;
    // the oracle runs point them here, and nothing else is there).
    let hooks = root.join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    // (git sets no GIT_DIR for this hook: it runs at the top of the work tree.)
    sh(
        &hooks.join("reference-transaction"),
        &format!(
            "[ \"$1\" = committed ] || exit 0\nd=$({} rev-parse --absolute-git-dir) || exit 1\nwhile read a b c; do echo \"$a $b $c\" >> \"$d/oracle-refs.log\"; done\n",
            which("git").display()
        ),
    );
    // The install: the real git, no skill rules (scope checks pass), ceiling 3, and the tool
    // home the real git runs with (run_real).
    let skills = root.join("skills");
    std::fs::create_dir_all(&skills).unwrap();
    let tool_home = root.join("toolhome");
    std::fs::create_dir_all(tool_home.join(".config")).unwrap();
    let cfgdir = root.join("install");
    std::fs::create_dir_all(&cfgdir).unwrap();
    let config = cfgdir.join("tiershim.yaml");
    std::fs::write(
        &config,
        format!(
            "tier: 3\nreal:\n  git: {}\nskills:\n  baseline: {}\ntool_home: {}\n",
            which("git").display(),
            skills.display(),
            tool_home.display()
        ),
    )
    .unwrap();
    World {
        root: root.to_path_buf(),
        port_url: daemon_url.to_string(),
        config,
        hooks,
        feat_r,
    }
}

/// What one variant's run did, as a tier (1, 2, 3, or 4 for never) with the reasons.
#[derive(Debug, Default)]
struct Effect {
    tier: u8,
    why: Vec<String>,
}

impl Effect {
    fn at(&mut self, tier: u8, why: String) {
        self.tier = self.tier.max(tier);
        self.why.push(format!("{}: {why}", tier_name(tier)));
    }
}

fn tier_name(t: u8) -> String {
    if t >= 4 { "never".into() } else { format!("tier {t}") }
}

fn out(dir: &Path, args: &[&str]) -> (bool, String) {
    let o = Command::new(which("git"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Every ref of a repository with its value.
fn refs_of(dir: &Path) -> BTreeMap<String, String> {
    out(dir, &["for-each-ref", "--format=%(refname) %(objectname)"])
        .1
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(a, b)| (a.to_string(), b.to_string())))
        .collect()
}

/// Every file under `dir` (not following links), relative, with its content; `.git`
/// directories are left out.
fn files(dir: &Path, base: &Path, into: &mut BTreeMap<String, Vec<u8>>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            // The remote's hooks say what it received; a work tree's git directory is judged
            // by its refs, config and shallow file.
            if (name == ".git" && p.join("HEAD").exists()) || p == base.join("remote.git") {
                continue;
            }
            files(&p, base, into);
        } else {
            let rel = p.strip_prefix(base).unwrap().display().to_string();
            into.insert(rel, std::fs::read(&p).unwrap_or_default());
        }
    }
}

/// The `section.key=value` entries of a config file as git writes it (sections, then one
/// `key = value` a line).
fn config_of(file: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let mut section = String::new();
    let mut out = BTreeSet::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with(['#', ';'])) {
        if let Some(h) = line.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            section = match h.split_once(' ') {
                Some((name, sub)) => format!("{}.{}", name.to_ascii_lowercase(), sub.trim_matches('"')),
                None => h.to_ascii_lowercase(),
            };
            continue;
        }
        let (k, v) = line.split_once('=').map_or((line, ""), |(k, v)| (k.trim(), v.trim()));
        out.insert(format!("{section}.{}={v}", k.to_ascii_lowercase()));
    }
    out
}

const ZERO: &str = "0000000000000000000000000000000000000000";

/// Judge the variant's recorded effects.
fn effect(dir: &Path, before: &Snapshot, after: &Snapshot) -> Effect {
    let mut e = Effect { tier: 1, why: Vec::new() };
    let work = dir.join("work");
    let remote = dir.join("remote.git");
    let ancestor = |repo: &Path, a: &str, b: &str| out(repo, &["merge-base", "--is-ancestor", a, b]).0;
    // The remote side, from its hooks.
    let recv = std::fs::read_to_string(remote.join("recv.log")).unwrap_or_default();
    for l in recv.lines().filter(|l| l.starts_with("reference-transaction ")) {
        let f: Vec<&str> = l.split(' ').collect();
        let (old, new, r) = (f[1], f[2], f[3]);
        if r == "HEAD" {
            e.at(4, format!("the remote's HEAD moved ({l})"));
        } else if r == "refs/heads/stable" {
            e.at(4, format!("the remote's default branch moved ({l})"));
        } else if new == ZERO && old != ZERO {
            e.at(3, format!("a remote ref deleted ({r})"));
        } else if r.starts_with("refs/heads/") {
            if old != ZERO && !ancestor(&remote, old, new) {
                e.at(4, format!("a remote branch force-updated ({r})"));
            } else {
                e.at(2, format!("a remote branch pushed ({r})"));
            }
        } else if old == ZERO && new == ZERO {
        } else {
            e.at(3, format!("a remote non-branch ref written ({r})"));
        }
    }
    // Local refs, from the recording hook.
    let log = std::fs::read_to_string(work.join(".git/oracle-refs.log")).unwrap_or_default();
    for l in log.lines() {
        let f: Vec<&str> = l.split(' ').collect();
        if f.len() < 3 {
            continue;
        }
        let (old, new, r) = (f[0], f[1], f[2]);
        if !r.starts_with("refs/") || r.starts_with("refs/rewritten/") || r.starts_with("refs/bisect/") {
            continue;
        }
        if let Some(rest) = r.strip_prefix("refs/remotes/") {
            // The remote's own value (or gone on the remote) is an observation.
            let (_, branch) = rest.split_once('/').unwrap_or(("", rest));
            let branch = branch.rsplit('/').next().unwrap_or(branch);
            let theirs = before.remote_refs.get(&format!("refs/heads/{branch}"));
            // (After a push the remote holds what was pushed: the tracking ref follows it.)
            let now = after.remote_refs.get(&format!("refs/heads/{branch}"));
            let own = match theirs {
                Some(v) => v == new,
                None => new == ZERO,
            } || now.is_some_and(|v| v == new)
                || (branch == "HEAD" && new == ZERO);
            if !own {
                e.at(3, format!("a remote-tracking ref set to another value ({r})"));
            }
        } else if let Some(tag) = r.strip_prefix("refs/tags/") {
            let theirs = before.remote_refs.get(r);
            if new == ZERO {
                e.at(3, format!("a local tag deleted ({tag})"));
            } else if old == ZERO && theirs.is_some_and(|v| v == new) {
                // Following the remote's tag.
            } else if old == ZERO {
                e.at(2, format!("a local tag created ({tag})"));
            } else {
                e.at(3, format!("a local tag rewritten or deleted ({tag})"));
            }
        } else if r.starts_with("refs/heads/") {
            let current = before.head.as_deref() == Some(r);
            if new == ZERO {
                let kept = after.refs.values().any(|v| ancestor(&work, old, v));
                e.at(
                    if kept { 2 } else { 3 },
                    format!("a local branch deleted ({r}), {}", if kept { "merged" } else { "its commits lost" }),
                );
            } else if old == ZERO {
                e.at(2, format!("a local branch created ({r})"));
            } else if current || ancestor(&work, old, new) {
                e.at(2, format!("a local branch moved ({r})"));
            } else {
                e.at(3, format!("a local branch rewritten ({r})"));
            }
        } else if r == "refs/stash" {
            e.at(if new == ZERO { 3 } else { 2 }, "the stash changed".into());
        } else if r.starts_with("refs/notes/") {
            e.at(2, format!("notes written ({r})"));
        } else {
            e.at(3, format!("a local ref written ({r})"));
        }
    }
    // Reflog entries expired and worktrees forgotten: what recovering lost work needs. (The
    // reflog of a ref that is gone went with it, and the ref is judged above.)
    for (name, n) in &before.admin {
        let kept = match name.strip_prefix("logs/") {
            Some("HEAD") => true,
            Some(r) => after.refs.contains_key(r),
            None => false,
        };
        match after.admin.get(name) {
            Some(m) if m >= n => {}
            _ if name.starts_with("worktrees/") => e.at(3, format!("a worktree git kept is forgotten ({name})")),
            Some(m) if kept => e.at(3, format!("reflog entries expired ({name}: {n} to {m})")),
            None if kept => e.at(3, format!("a reflog deleted ({name})")),
            _ => {}
        }
    }
    // Uncommitted work: lost unless git keeps it somewhere (index, a commit, the stash).
    for (path, what) in [
        ("work/checks/dirty.md", "the uncommitted change"),
        ("work/notes.txt", "the untracked file"),
    ] {
        let was = before.files.get(path);
        if was != after.files.get(path)
            && let Some(content) = was
        {
            let blob = {
                let mut c = Command::new(which("git"))
                    .args(["hash-object", "--stdin"])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap();
                use std::io::Write;
                c.stdin.take().unwrap().write_all(content).unwrap();
                String::from_utf8_lossy(&c.wait_with_output().unwrap().stdout).trim().to_string()
            };
            let (_, index) = out(&work, &["ls-files", "-s"]);
            let (_, objects) = out(&work, &["rev-list", "--objects", "--all", "--reflog"]);
            if !index.contains(&blob) && !objects.contains(&blob) {
                e.at(3, format!("{what} is lost ({path})"));
            }
        }
    }
    // Files in and around the work tree.
    for (path, content) in &after.files {
        if before.files.get(path) == Some(content) {
            continue;
        }
        let hidden = path.split('/').any(|c| c.starts_with('.') && c != ".");
        if path.starts_with("remote.git/") || path.starts_with("work/.git/") && !path.ends_with("/config") && !path.ends_with("/shallow") {
            continue;
        }
        if path == "work/.git/config" || path.ends_with("/.git/config") {
            continue; // judged key by key below
        }
        if path == "work/.git/shallow" {
            e.at(2, "the shallow boundary moved".into());
        } else if path.ends_with("/.git") || path.contains("/.git/") {
            e.at(2, format!("a repository created ({path})"));
        } else if hidden {
            e.at(4, format!("a hidden file written ({path})"));
        } else if path.starts_with("home/") {
            e.at(4, format!("a file in HOME written ({path})"));
        } else if !path.starts_with("work/") {
            // Beside the work tree, in the workspace: a separate git directory is never.
            if std::fs::read_to_string(dir.join(path)).is_ok_and(|t| t.contains("worktree =")) {
                e.at(4, format!("a git directory elsewhere with core.worktree ({path})"));
            } else {
                e.at(2, format!("a file written beside the work tree ({path})"));
            }
        } else {
            e.at(2, format!("a file in the work tree changed ({path})"));
        }
    }
    for (path, _) in before
        .files
        .iter()
        .filter(|(p, _)| !after.files.contains_key(*p) && p.starts_with("work/") && !p.starts_with("work/.git/"))
    {
        e.at(2, format!("a file in the work tree removed ({path})"));
    }
    // Configuration, key by key.
    let added: Vec<&String> = after.config.difference(&before.config).collect();
    let removed: Vec<&String> = before.config.difference(&after.config).collect();
    for kv in added.iter().chain(removed.iter()) {
        let key = kv.split('=').next().unwrap_or("");
        let tracking = (key.starts_with("branch.") && [".remote", ".merge", ".rebase", ".description"].iter().any(|s| key.ends_with(s)))
            || (key.starts_with("remote.") && (key.ends_with(".promisor") || key.ends_with(".partialclonefilter")))
            || key == "extensions.partialclone"
            || key == "core.repositoryformatversion";
        e.at(if tracking { 2 } else { 4 }, format!("configuration changed ({kv})"));
    }
    e
}

struct Snapshot {
    /// Per reflog (`.git/logs/…`), its entries; per worktree git keeps (`.git/worktrees/…`), 0.
    admin: BTreeMap<String, usize>,
    refs: BTreeMap<String, String>,
    remote_refs: BTreeMap<String, String>,
    head: Option<String>,
    files: BTreeMap<String, Vec<u8>>,
    config: BTreeSet<String>,
}

fn snapshot(dir: &Path, tool_home: &Path) -> Snapshot {
    let work = dir.join("work");
    let mut f = BTreeMap::new();
    files(dir, dir, &mut f);
    // The real git's HOME (the install's tool home), as `home/…`.
    let mut h = BTreeMap::new();
    files(tool_home, tool_home, &mut h);
    f.extend(h.into_iter().map(|(k, v)| (format!("home/{k}"), v)));
    // The work tree's own git directory: only the files the effect judges.
    for p in ["work/.git/config", "work/.git/shallow"] {
        if let Ok(b) = std::fs::read(dir.join(p)) {
            f.insert(p.to_string(), b);
        }
    }
    let (ok, head) = out(&work, &["symbolic-ref", "-q", "HEAD"]);
    let mut logs = BTreeMap::new();
    files(&work.join(".git/logs"), &work.join(".git"), &mut logs);
    let mut admin: BTreeMap<String, usize> = logs
        .into_iter()
        .map(|(k, v)| (k, v.iter().filter(|b| **b == b'\n').count()))
        .collect();
    for e in std::fs::read_dir(work.join(".git/worktrees")).into_iter().flatten().flatten() {
        admin.insert(format!("worktrees/{}", e.file_name().to_string_lossy()), 0);
    }
    Snapshot {
        admin,
        refs: refs_of(&work),
        remote_refs: refs_of(&dir.join("remote.git")),
        head: ok.then_some(head),
        files: f,
        config: config_of(&work.join(".git/config")),
    }
}

/// The verdict of `tiershim explain` at each tier: (allowed, rule) for tiers 1, 2, 3. A call
/// refused at tier 3 is refused below it; one allowed at tier 3 is judged again at each tier
/// its required tier allows, so every allowing verdict counted is one the gate gave.
fn judge(w: &World, dir: &Path, args: &[String]) -> Vec<(bool, String)> {
    let (allowed3, rule3, required) = explain(w, dir, args, 3);
    let mut out = vec![(false, rule3.clone()), (false, rule3.clone()), (allowed3, rule3)];
    if allowed3 {
        for tier in required.max(1)..3 {
            let (a, r, _) = explain(w, dir, args, tier);
            out[tier as usize - 1] = (a, r);
        }
    }
    out
}

/// One `tiershim explain --json` at `tier`: allowed, the rule, the required tier (4: never).
/// An install the gate cannot use (exit 78) fails the test: every call would be refused, and
/// the oracle would have nothing to compare.
fn explain(w: &World, dir: &Path, args: &[String], tier: u8) -> (bool, String, u8) {
    let o = Command::new(crate::harness::bin())
        .args(["explain", "--json", "--config"])
        .arg(&w.config)
        .args(["--tier", &tier.to_string(), "--cwd"])
        .arg(dir.join("work"))
        .arg("--")
        .arg("git")
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", dir.join("home"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("explain {args:?}: {}", String::from_utf8_lossy(&o.stderr)));
    assert_ne!(v["verdict"], "error", "explain git {args:?}: {}", v["message"]);
    let required = v["required_tier"].as_u64().map_or(4, |t| t as u8);
    (v["verdict"] == "allow", v["rule"].as_str().unwrap_or("?").to_string(), required)
}

/// Run the real git with the gate's forced settings (hooks pointed at the recording hook) and
/// the install's tool home as HOME, as the gate runs it.
fn run_real(w: &World, dir: &Path, args: &[String]) -> (i32, String) {
    let mut argv: Vec<String> = Vec::new();
    for a in tiershim::grammar::git::PREPEND {
        if *a == "core.hooksPath=/dev/null" {
            argv.push(format!("core.hooksPath={}", w.hooks.display()));
        } else {
            argv.push(a.to_string());
        }
    }
    argv.extend(args.iter().cloned());
    let mut child = Command::new(which("git"))
        .args(&argv)
        .current_dir(dir.join("work"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", w.root.join("toolhome"))
        .env("XDG_CONFIG_HOME", w.root.join("toolhome/.config"))
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_AUTHOR_NAME", "agent")
        .env("GIT_AUTHOR_EMAIL", "agent@example.com")
        .env("GIT_COMMITTER_NAME", "agent")
        .env("GIT_COMMITTER_EMAIL", "agent@example.com")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // No git call here waits for anything; a hang is a failure, not a wait.
    let started = std::time::Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            let err = child.stderr.take().map(|mut e| {
                let mut s = String::new();
                use std::io::Read;
                let _ = e.read_to_string(&mut s);
                s
            });
            return (s.code().unwrap_or(-1), err.unwrap_or_default());
        }
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("git {args:?} did not finish");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Copy a tree, keeping modes and symlinks.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let ft = e.file_type().unwrap();
        let dst = to.join(e.file_name());
        if ft.is_dir() {
            copy_tree(&e.path(), &dst);
        } else if ft.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(e.path()).unwrap(), &dst).unwrap();
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// A fresh copy of the template for one variant, its remotes pointing at its own remote.
fn fresh(w: &World, n: usize) -> PathBuf {
    let dir = w.root.join(format!("v{n}"));
    copy_tree(&w.root.join("tpl"), &dir);
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let cfg = dir.join("work/.git/config");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let url = format!("{}/v{n}/remote.git", w.port_url);
    std::fs::write(&cfg, text.replace("git://placeholder/remote.git", &url)).unwrap();
    dir
}

/// What a base asks for before its call: the operator's settings, and a git command to run.
type Setup<'a> = (Vec<(&'a str, &'a str)>, Option<Vec<&'a str>>);

/// The `@key=value` settings in front of a base, the `!… ;; ` command to run first, and the
/// rest.
fn operator_settings(base: &str) -> (Setup<'_>, &str) {
    let mut rest = base;
    let mut out = Vec::new();
    while let Some(r) = rest.strip_prefix('@') {
        let (kv, tail) = r.split_once(' ').unwrap();
        out.push(kv.split_once('=').unwrap());
        rest = tail;
    }
    let mut first = None;
    if let Some(r) = rest.strip_prefix('!') {
        let (cmd, tail) = r.split_once(" ;; ").unwrap();
        first = Some(cmd.split(' ').collect());
        rest = tail;
    }
    ((out, first), rest)
}

fn words(base: &str, w: &World, n: usize) -> Vec<String> {
    base.replace("{URL}", &format!("{}/v{n}/remote.git", w.port_url))
        .replace("{NOWHERE}", &format!("{}/nowhere.git", w.port_url))
        .replace("{FEAT}", &w.feat_r)
        .split(' ')
        .map(str::to_string)
        .collect()
}

/// One call: its argv, the verdicts at tiers 1–3, what git did, its exit status and stderr.
type Outcome = (Vec<String>, Vec<(bool, String)>, Effect, i32, String);

#[test]
fn the_gate_never_allows_what_the_real_git_does_above_the_tier() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir_all(root).unwrap();
    let daemon = GitDaemon::start(root);
    let w = world(&daemon.url, root);
    // The calls: every base as written, then generated spellings of random bases.
    let mut rng = Rng(SEED);
    let mut calls: Vec<(usize, String)> = BASES.iter().enumerate().map(|(i, b)| (i, b.to_string())).collect();
    for _ in 0..VARIANTS {
        let b = rng.below(BASES.len());
        calls.push((b, format!("#{}", rng.next())));
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Outcome>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    let Some((b, how)) = calls.get(n) else { break };
                    let ((settings, first), base) = operator_settings(BASES[*b]);
                    let base = words(base, &w, n);
                    let args = match how.strip_prefix('#') {
                        Some(seed) => variant(&base, &mut Rng(seed.parse::<u64>().unwrap() | 1)),
                        None => base,
                    };
                    let dir = fresh(&w, n);
                    for (k, v) in &settings {
                        git(&dir.join("work"), &["config", k, v]);
                    }
                    if let Some(first) = &first {
                        git(&dir.join("work"), first);
                    }
                    let verdicts = judge(&w, &dir, &args);
                    let before = snapshot(&dir, &w.root.join("toolhome"));
                    let (code, err) = run_real(&w, &dir, &args);
                    let after = snapshot(&dir, &w.root.join("toolhome"));
                    let e = effect(&dir, &before, &after);
                    let _ = std::fs::remove_dir_all(&dir);
                    results.lock().unwrap().push((args, verdicts, e, code, err));
                }
            });
        }
    });
    let results = results.into_inner().unwrap();
    let mut above = Vec::new();
    let mut over = BTreeMap::new();
    for (args, verdicts, e, code, err) in &results {
        for (t, (allowed, rule)) in verdicts.iter().enumerate() {
            let tier = t as u8 + 1;
            if *allowed && e.tier > tier {
                above.push(format!(
                    "git {}: allowed at tier {tier} (rule {rule}) but the real git did: {} (exit {code}: {})",
                    args.join(" "),
                    e.why.join("; "),
                    err.lines().next().unwrap_or("")
                ));
            }
        }
        let needed = verdicts.iter().position(|(a, _)| *a).map_or(4, |t| t as u8 + 1);
        if needed > e.tier && *code == 0 {
            *over.entry(verdicts[2].1.clone()).or_insert(0usize) += 1;
        }
    }
    let ran = results.len();
    let refused: usize = results.iter().filter(|r| !r.1[2].0).count();
    eprintln!(
        "git differential: {ran} calls, {} allowed at tier 3, {refused} refused at tier 3; over-refusals of calls git completed, by rule: {over:?}",
        ran - refused
    );
    assert!(ran >= BASES.len() + VARIANTS, "not every call ran");
    assert!(
        above.is_empty(),
        "{} calls allowed above their tier:\n{}",
        above.len(),
        above.join("\n")
    );
}
