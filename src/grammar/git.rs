//! git: the global options of `git.c` `handle_options` (exact compares, no clusters, until the
//! first word that does not start with `-`), then the subcommand's own options as
//! `parse-options.c` reads them (unique-prefix abbreviations, `--no-`, options after arguments
//! unless the command stops at its first operand, clusters such as `-uf`, `--end-of-options`),
//! into one action for the command and one extra action for each global option that is
//! refused on its own (`-c`, `--config-env`, `--exec-path=`, `--git-dir`, `--work-tree`,
//! `--bare`, `--namespace`, `--shallow-file`) or each file written (`--output`).
//!
//! Owns: the verb names (`push`, `branch create`, `stash drop`, `config set`, …), the marks the
//! git policy matches (`force`, `default-branch`, `exec-option`, `remote-helper`, `discard`,
//! …), what the scope checks and probes of a call ask the real git ([`ScopeTarget`],
//! [`Probe`]), the files a call reads (`commit -F`), the recognition of gh's own
//! credential-helper push, [`PREPEND`], and [`config_key`]: which configuration keys run a
//! program or redirect a write.
//!
//! Must not: do I/O. What the repository's config, `push.default`, `remote.<n>.mirror` or the
//! remote's default branch say is invisible here: the gate asks the real git ([`Probe`]), and
//! a push that does not name its destination branch is refused rather than guessed. Commands
//! this file does not know (aliases, `git-<name>` programs on PATH, builtins nobody classified)
//! keep the name as typed, and the policy refuses them as unclassified.

use std::collections::{BTreeMap, BTreeSet};

use crate::grammar::opts::{self, Item, Opt, Parsed, Style, Unknown};
use crate::grammar::{
    Access, Action, Claim, ConfigCond, ConfigEffect, ConfigTest, GitAt, Input, Inputs, Invocation, LocalFile, Probe, Replay, ScopeTarget,
    Sources, Understood,
};
use crate::tool::Tool;

/// Inserted before the caller's arguments on every exec. Command-line `-c` beats every config
/// file, so these neutralise a hostile `.git/config` (or `~/.gitconfig`) that would make an
/// innocent verb run a program: the fsmonitor hook (`status`), hooks (`commit`, `checkout`),
/// the pager (`log`; `--no-pager` also defeats `pager.<cmd>`), the ssh command and askpass
/// (`fetch`, `push`), the signing programs (`log --show-signature`, signed commits: reset to
/// git's defaults so signing still works), and the `ext`/`fd` transports. The `file` transport
/// is off because a push to a local path runs that repository's hooks as the caller (hooksPath
/// does not reach the other repository). The editors are `true`, not `false`, so that
/// `rebase --continue` and `commit --amend` still finish without a terminal. A bare repository
/// is used only when named explicitly (`safe.bareRepository=explicit`), so a directory laid
/// out as one (`HEAD`, `config`, `objects/`, `refs/`) is never found by discovery.
///
/// `credential.helper` is deliberately not reset: it would break https pushes and gh's own
/// nested push. `diff.external` cannot be reset (an empty value makes `git diff` fail). Both,
/// and every other key of [`config_key`], are refused before exec when they come from a file
/// the agent could have written (the gate reads the configuration with the real git first).
pub const PREPEND: &[&str] = &[
    "--no-pager",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.pager=cat",
    "-c",
    "core.editor=true",
    "-c",
    "sequence.editor=true",
    "-c",
    "core.sshCommand=ssh",
    "-c",
    "core.askPass=",
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "protocol.fd.allow=never",
    "-c",
    "protocol.file.allow=never",
    "-c",
    "gpg.program=gpg",
    "-c",
    "gpg.ssh.program=ssh-keygen",
    "-c",
    "gpg.x509.program=gpgsm",
    "-c",
    "safe.bareRepository=explicit",
];

/// Destination branch names treated as the repository's default (or protected) branch. The
/// gate also asks the real git for the remote's default branch (`<remote>/HEAD`), so a push to
/// `stable` lands on the never rule where that is the default; these names are refused even
/// when the remote's HEAD names another. `HEAD` as a destination is the remote's own HEAD.
pub const DEFAULT_BRANCHES: &[&str] = &["main", "master", "trunk", "develop", "production", "HEAD"];

/// Merge strategies built into git. Any other name runs `git-merge-<name>` found on PATH.
const BUILTIN_STRATEGIES: &[&str] = &["ort", "recursive", "resolve", "octopus", "ours", "subtree"];

/// Read-only commands whose options cannot raise what they do, except a diff `--output=<file>`
/// (checked separately). Their options are not scanned: rev and diff options are a large
/// exact-match grammar, and nothing in it changes the tier.
const READ_ONLY: &[&str] = &[
    "status",
    "log",
    "show",
    "diff",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "blame",
    "annotate",
    "shortlog",
    "describe",
    "cat-file",
    "show-ref",
    "for-each-ref",
    "rev-list",
    "merge-base",
    "name-rev",
    "count-objects",
    "check-ignore",
    "check-attr",
    "show-branch",
    "var",
    "verify-commit",
    "verify-tag",
    "range-diff",
    "diff-tree",
    "diff-files",
    "diff-index",
    "cherry",
    "whatchanged",
    "merge-tree",
];

/// Local changes whose options do not change the tier; not scanned.
const LOCAL_UNSCANNED: &[&str] = &["add"];

/// Commands with their own handling below (for `git <cmd> --help`).
const HANDLED: &[&str] = &[
    "push",
    "commit",
    "fetch",
    "pull",
    "clone",
    "ls-remote",
    "grep",
    "branch",
    "tag",
    "config",
    "remote",
    "stash",
    "worktree",
    "reflog",
    "symbolic-ref",
    "checkout",
    "switch",
    "restore",
    "reset",
    "rm",
    "mv",
    "clean",
    "merge",
    "rebase",
    "cherry-pick",
    "revert",
    "am",
    "init",
    "apply",
    "fsck",
    "notes",
    "archive",
    "format-patch",
    "fast-export",
    "bisect",
    "rerere",
    "sparse-checkout",
    "bundle",
    "submodule",
    "lfs",
    "help",
    "version",
];

const STYLE: Style = Style::GIT_PARSE_OPTIONS;

/// `parse_options(…, PARSE_OPT_STOP_AT_NON_OPTION)`: options end at the first operand, which
/// and everything after it are operands (`git config <name> --get` sets `<name>` to `--get`).
const STOP_AT_OPERAND: Style = Style {
    interspersed: false,
    ..STYLE
};

/// The call without the mailboxes `git am` reads (policy examples, a first look).
pub fn parse(args: &[String]) -> Invocation {
    parse_with(args, &Inputs::default())
}

/// The call, with the mailboxes `git am` reads as the gate read them (`script_input`).
pub fn parse_with(args: &[String], inputs: &Inputs) -> Invocation {
    Invocation::new(Tool::Git, args).understood(parse_call(args, inputs))
}

/// The verbs that write the repository itself whatever the call's files (objects, remote-tracking
/// refs, `FETCH_HEAD`): under the kernel fence of tier 1 they cannot run, so `decide()` asks
/// tier 2 for them there.
pub const WRITES_REPOSITORY: &[&str] = &["fetch", "remote update"];

/// The `-C` directories of a git call, in order (each relative to the one before): where git
/// looks for its repository. None when the global options cannot be read (the call is refused
/// for that anyway).
pub fn directories(args: &[String]) -> Vec<String> {
    globals(args).map(|g| g.chdir).unwrap_or_default()
}

/// The mailboxes `git am` and the patches `git apply` read, for the gate to read (and seal)
/// first: the files named, or stdin when none is. Nothing for every other command, for
/// `am --continue` and the other ways to go on with a stopped `am`, and for an `apply` that
/// only shows (`--check`, `--stat`, … without `--apply`).
pub fn sources(args: &[String]) -> Sources {
    let Ok(g) = globals(args) else {
        return Sources::default();
    };
    let start = g.end + 1;
    let verb = args.get(g.end).map(String::as_str);
    if !matches!(verb, Some("am" | "apply")) || g.prints_only {
        return Sources::default();
    }
    let rest = &args[start..];
    let opts = if verb == Some("am") { AM_OPTS } else { APPLY_OPTS };
    let Ok(p) = scan(rest, opts) else {
        return Sources::default();
    };
    if verb == Some("am") && AM_RESUME.iter().any(|m| on(&p, m)) {
        return Sources::default();
    }
    if verb == Some("apply") && apply_shows_only(&p) {
        return Sources::default();
    }
    // Which words are operands: those neither an option nor an option's separate value.
    let mut taken = std::collections::BTreeSet::new();
    for f in p.opts() {
        taken.insert(f.at);
        if f.value.is_some() && rest.get(f.at).is_some_and(|w| *w != f.written) {
            taken.insert(f.at.saturating_sub(1));
        }
    }
    let mut operands = Vec::new();
    let mut after_end = false;
    for (k, w) in rest.iter().enumerate() {
        if after_end {
            operands.push((w.clone(), start + k));
        } else if (w == "--" || w == "--end-of-options") && !taken.contains(&k) {
            after_end = true;
        } else if !(taken.contains(&k) || (w.starts_with('-') && w.len() > 1)) {
            operands.push((w.clone(), start + k));
        }
    }
    Sources {
        stdin: operands.is_empty(),
        files: operands,
    }
}

/// The global options of a git call that choose its repository, work tree and pathspec rules
/// (none when argv cannot be read: the call is refused anyway).
pub fn git_at(args: &[String]) -> GitAt {
    globals(args).map(|g| g.at).unwrap_or_default()
}

/// What the global options said.
struct Globals<'a> {
    /// Index of the command word (or `args.len()`).
    end: usize,
    config: Vec<&'a str>,
    chdir: Vec<String>,
    at: GitAt,
    extra: Vec<Action>,
    prints_only: bool,
}

/// `--git-dir` and `--work-tree` values that name the repository discovery finds from the
/// working directory anyway: its own `.git` and itself.
fn same_repository(opt: &str, v: &str) -> bool {
    match opt {
        "--git-dir" => matches!(v, ".git" | "./.git" | ".git/" | "./.git/"),
        "--work-tree" => matches!(v, "." | "./"),
        _ => false,
    }
}

fn globals(args: &[String]) -> Result<Globals<'_>, String> {
    let mut g = Globals {
        end: 0,
        config: Vec::new(),
        chdir: Vec::new(),
        at: GitAt::default(),
        extra: Vec::new(),
        prints_only: false,
    };
    let mut i = 0;
    while let Some(a) = args.get(i).map(String::as_str) {
        if !a.starts_with('-') || matches!(a, "--help" | "-h" | "--version" | "-v") {
            break;
        }
        i += 1;
        // `skip_prefix(cmd, "--exec-path")`: `=` sets it, anything else prints it and exits.
        if let Some(rest) = a.strip_prefix("--exec-path") {
            if rest.starts_with('=') {
                g.extra.push(Action::new("--exec-path"));
                continue;
            }
            g.prints_only = true;
            break;
        }
        match a {
            "--html-path" | "--man-path" | "--info-path" => {
                g.prints_only = true;
                break;
            }
            "-p"
            | "--paginate"
            | "-P"
            | "--no-pager"
            | "--no-replace-objects"
            | "--no-optional-locks"
            | "--no-advice"
            | "--no-lazy-fetch" => {}
            // Pathspec rules: the gate's own git must match paths the same way.
            "--literal-pathspecs" | "--no-literal-pathspecs" | "--glob-pathspecs" | "--noglob-pathspecs" | "--icase-pathspecs" => {
                g.at.globals.push(a.to_string());
            }
            // The work tree as a bare repository: a retarget like `--git-dir=.`.
            "--bare" => g.extra.push(Action::new("--bare")),
            "-c" => g.config.push(global_value(args, &mut i, a)?),
            // `-C` keeps the call judged by its verb; the gate's own git repeats it.
            "-C" => {
                let v = global_value(args, &mut i, a)?;
                g.chdir.push(v.to_string());
                g.at.globals.extend(["-C".to_string(), v.to_string()]);
            }
            "--attr-source" => {
                global_value(args, &mut i, a)?;
            }
            "--git-dir" | "--work-tree" => {
                let v = global_value(args, &mut i, a)?;
                if same_repository(a, v) {
                    g.at.globals.push(format!("{a}={v}"));
                } else {
                    g.extra.push(Action::new(a));
                }
            }
            "--config-env" | "--namespace" | "--shallow-file" => {
                global_value(args, &mut i, a)?;
                g.extra.push(Action::new(a));
            }
            _ => match a.split_once('=') {
                Some((name @ ("--git-dir" | "--work-tree"), v)) => {
                    if same_repository(name, v) {
                        g.at.globals.push(a.to_string());
                    } else {
                        g.extra.push(Action::new(name));
                    }
                }
                Some((name @ ("--config-env" | "--namespace"), _)) => g.extra.push(Action::new(name)),
                Some(("--attr-source", _)) => {}
                Some(("--list-cmds", _)) => {
                    g.prints_only = true;
                    break;
                }
                _ => return Err(format!("unknown global option {a}")),
            },
        }
    }
    g.end = i;
    Ok(g)
}

/// What the command's handlers need from the global options.
struct Cx<'a> {
    at: GitAt,
    chdir: Vec<String>,
    inputs: &'a Inputs,
    files: Vec<LocalFile>,
}

impl Cx<'_> {
    /// The command writes the file `path` (relative to the `-C` directories).
    fn writes(&mut self, path: &str, flag: &str) {
        let full = self.full(path);
        self.files.push(LocalFile {
            path: full,
            access: Access::Write,
            flag: flag.to_string(),
            content: false,
            at: None,
        });
    }

    fn full(&self, path: &str) -> String {
        if path.starts_with('/') || self.chdir.is_empty() {
            return path.to_string();
        }
        let mut p = std::path::PathBuf::new();
        for c in &self.chdir {
            p.push(c);
        }
        p.push(path);
        p.display().to_string()
    }

    /// The command reads the file `path` (relative to the `-C` directories); `-` is stdin.
    fn reads(&mut self, path: &str, flag: &str) {
        if path == "-" {
            return;
        }
        let full = if path.starts_with('/') || self.chdir.is_empty() {
            path.to_string()
        } else {
            let mut p = std::path::PathBuf::new();
            for c in &self.chdir {
                p.push(c);
            }
            p.push(path);
            p.display().to_string()
        };
        self.files.push(LocalFile {
            path: full,
            access: Access::Read,
            flag: flag.to_string(),
            content: false,
            at: None,
        });
    }
}

/// The global options, then the command. The command's action comes first (it names the call
/// in the log); refused global options follow as actions of their own.
fn parse_call(args: &[String], inputs: &Inputs) -> Result<Understood, String> {
    let g = globals(args)?;
    let rest = &args[g.end..];
    let mut cx = Cx {
        at: g.at,
        chdir: g.chdir,
        inputs,
        files: Vec::new(),
    };
    let mut actions = if g.prints_only {
        vec![Action::new("help")]
    } else {
        command(rest, &mut cx)?
    };
    let mut claims = Vec::new();
    let mut extra = g.extra;
    if !g.config.is_empty() {
        match gh_credential_push(&g.config, rest) {
            Some(path) if !g.prints_only => claims.push(Claim::GhCredentialHelper { path }),
            _ => extra.push(Action::new("-c")),
        }
    }
    actions.extend(extra);
    // The directories git creates (the local-write model), after the files it reads.
    let bare = args[..g.end].iter().any(|a| a == "--bare");
    let mut files = cx.files;
    if !g.prints_only {
        files.extend(declared_files(rest, &cx.chdir, bare)?);
    }
    Ok((actions, claims, files))
}

/// The directories git creates where the call says (the local-write model): `clone`'s target
/// (named after the URL when not given), `init`'s, `worktree add`'s, each below the `-C`
/// directories. A repository without a work tree (`--bare`, `--mirror`, `--separate-git-dir`)
/// is declared as the `HEAD` git writes into it: a directory that becomes a git directory is
/// never allowed (git would take it for a repository and run what its config names).
fn declared_files(rest: &[String], chdir: &[String], bare_global: bool) -> Result<Vec<LocalFile>, String> {
    let Some((name, args)) = rest.split_first() else {
        return Ok(Vec::new());
    };
    let at = |p: &str| -> String {
        let mut base = std::path::PathBuf::new();
        for d in chdir {
            base.push(d);
        }
        base.push(p);
        base.display().to_string()
    };
    let mut out = Vec::new();
    let repo_at = |dir: &str, bare: bool, flag: &str, out: &mut Vec<LocalFile>| {
        if bare {
            out.push(LocalFile::write(at(&format!("{}/HEAD", dir.trim_end_matches('/'))), flag));
        } else {
            out.push(LocalFile::write(at(dir), flag));
        }
    };
    match name.as_str() {
        "clone" => {
            let p = scan(args, CLONE_OPTS)?;
            let pos = p.positionals();
            let bare = bare_global || on(&p, "bare") || on(&p, "mirror");
            let flag = if on(&p, "mirror") {
                "--mirror"
            } else if bare {
                "--bare"
            } else {
                "clone"
            };
            if let Some(repo) = pos.first() {
                let dir = match pos.get(1) {
                    Some(d) => d.to_string(),
                    None => clone_dir(repo, bare),
                };
                repo_at(&dir, bare, flag, &mut out);
            }
            if let Some(g) = p.last("separate-git-dir") {
                repo_at(g, true, "--separate-git-dir", &mut out);
            }
        }
        "init" => {
            let p = scan(args, INIT_OPTS)?;
            let dir = p.positionals().first().map_or(".", |d| *d).to_string();
            let bare = bare_global || on(&p, "bare");
            repo_at(&dir, bare, if bare { "--bare" } else { "init" }, &mut out);
            if let Some(g) = p.last("separate-git-dir") {
                repo_at(g, true, "--separate-git-dir", &mut out);
            }
        }
        "worktree" if args.first().is_some_and(|a| a == "add") => {
            let p = scan(&args[1..], WORKTREE_ADD_OPTS)?;
            if let Some(path) = p.positionals().first() {
                out.push(LocalFile::write(at(path), "worktree add"));
            }
        }
        _ => {}
    }
    Ok(out)
}

/// The directory `git clone <repo>` makes when none is given (`git_url_basename`): the last
/// path component of the URL without a trailing `/` or `.git` (`<name>.git` for a bare clone).
fn clone_dir(repo: &str, bare: bool) -> String {
    let trimmed = repo.trim_end_matches(['/', ':']);
    let trimmed = trimmed.strip_suffix("/.git").unwrap_or(trimmed);
    let trimmed = trimmed.strip_suffix(".git").unwrap_or(trimmed);
    let name = trimmed.rsplit(['/', ':']).next().unwrap_or(trimmed);
    if bare { format!("{name}.git") } else { name.to_string() }
}

fn global_value<'a>(args: &'a [String], i: &mut usize, opt: &str) -> Result<&'a str, String> {
    let v = args.get(*i).ok_or_else(|| format!("global option {opt} needs a value"))?;
    *i += 1;
    Ok(v)
}

/// The push gh generates for `gh pr create` (`cli/cli git/client.go` `AuthenticatedCommand` and
/// `Push`): `-c credential.helper= -c credential.helper=!"<gh>" auth git-credential push
/// --set-upstream <remote> HEAD:refs/heads/<branch>`. Exactly that shape gives the path of the
/// helper (unquoted) for `decide()` to compare with this install's real gh; anything else with
/// `-c` is a config override. A path with characters the shell would still interpret inside
/// double quotes (or Go's `%q` escapes) is not gh's shape.
fn gh_credential_push(config: &[&str], rest: &[String]) -> Option<String> {
    let [reset, helper] = config else {
        return None;
    };
    if *reset != "credential.helper=" {
        return None;
    }
    let path = helper
        .strip_prefix("credential.helper=!\"")?
        .strip_suffix("\" auth git-credential")?;
    if path.is_empty() || path.contains(['"', '\\', '$', '`', '\n']) {
        return None;
    }
    match rest {
        [push, upstream, remote, spec]
            if push == "push"
                && upstream == "--set-upstream"
                && !remote.starts_with('-')
                && spec.strip_prefix("HEAD:refs/heads/").is_some_and(|b| !b.is_empty()) =>
        {
            Some(path.to_string())
        }
        _ => None,
    }
}

/// The command word and its arguments -> the command's action(s).
fn command(rest: &[String], cx: &mut Cx) -> Result<Vec<Action>, String> {
    let Some(first) = rest.first() else {
        // `git` alone (or only global options) prints usage.
        return Ok(vec![Action::new("help")]);
    };
    let args = &rest[1..];
    let name = match first.as_str() {
        "--version" | "-v" => return Ok(vec![Action::new("version")]),
        "--help" | "-h" => return Ok(vec![Action::new("help")]),
        "" => return Err("empty command name".into()),
        // `stage` is a builtin synonym of `add`.
        "stage" => "add",
        other => other,
    };
    let known = HANDLED.contains(&name) || READ_ONLY.contains(&name) || LOCAL_UNSCANNED.contains(&name);
    // git.c turns `git <builtin> --help` into `git help <builtin>`; parse-options prints usage
    // for a lone `-h`. Neither runs the command.
    if known && (args.first().is_some_and(|a| a == "--help") || (args.len() == 1 && args[0] == "-h")) {
        return Ok(vec![Action::new("help")]);
    }
    if READ_ONLY.contains(&name) {
        return Ok(with_output_check(Action::new(name), args));
    }
    if LOCAL_UNSCANNED.contains(&name) {
        return Ok(vec![Action::new(name)]);
    }
    let action = match name {
        "help" => Action::new("help"),
        "version" => Action::new("version"),
        "push" => push(args, cx)?,
        "commit" => commit(args, cx)?,
        "fetch" => fetch(args)?,
        "pull" => pull(args)?,
        "clone" => clone(args)?,
        "ls-remote" => ls_remote(args)?,
        "grep" => grep(args)?,
        "branch" => branch(args)?,
        "tag" => tag(args, cx)?,
        "config" => config(args)?,
        "remote" => remote(args)?,
        "stash" => return stash(args),
        "worktree" => worktree(args)?,
        "reflog" => return reflog(args),
        "symbolic-ref" => symbolic_ref(args)?,
        "checkout" => checkout(args, cx)?,
        "switch" => switch(args)?,
        "restore" => restore(args)?,
        "reset" => reset(args)?,
        "rm" | "mv" => rm_mv(name, args)?,
        "clean" => clean(args)?,
        "merge" => merge(args, cx)?,
        "cherry-pick" | "revert" => pick(name, args, cx)?,
        "rebase" => rebase(args, cx)?,
        "am" => am(args, cx)?,
        "init" => init(args)?,
        "apply" => apply(args, cx)?,
        "fsck" => fsck(args)?,
        "notes" => notes(args),
        "archive" => return archive(args, cx),
        "format-patch" => return Ok(format_patch(args, cx)),
        "fast-export" => return Ok(fast_export(args)),
        "bisect" => return bisect(args, cx),
        "bundle" => bundle(args, cx)?,
        "rerere" | "sparse-checkout" | "submodule" | "lfs" => with_subcommand(name, args),
        // An alias, a `git-<name>` program, or a builtin nobody classified: the verb as typed.
        other => Action::new(other),
    };
    Ok(vec![action])
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn scan(args: &[String], table: &[Opt]) -> Result<Parsed, String> {
    opts::scan(args, table, &STYLE)
}

/// The option's last occurrence is not `--no-<opt>`. Unlike `Parsed::has`, a value such as
/// `--upload-pack=false` or `--force-with-lease=0` still counts: git reads those as a program
/// or a ref name, not as "off".
fn on(p: &Parsed, id: &str) -> bool {
    p.all(id).last().is_some_and(|f| !f.negated)
}

/// The values of a list option after its last `--no-<opt>` (which clears the list).
fn live_values<'a>(p: &'a Parsed, id: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    for f in p.all(id) {
        if f.negated {
            out.clear();
        } else if let Some(v) = &f.value {
            out.push(v.as_str());
        }
    }
    out
}

/// The operands before and after a `--` (a command that keeps `--` for itself, such as
/// `checkout` and `reset`, also finds it after `--end-of-options`): `(before, after)`, with
/// `after` None when there is no `--`.
fn split_dashdash<'a>(p: &'a Parsed) -> (Vec<&'a str>, Option<Vec<&'a str>>) {
    let words = |items: &'a [Item]| -> Vec<&'a str> {
        items
            .iter()
            .filter_map(|i| match i {
                Item::Pos(s) => Some(s.as_str()),
                _ => None,
            })
            .collect()
    };
    if let Some(k) = p.double_dash_at {
        return (words(&p.items[..k]), Some(words(&p.items[k..])));
    }
    let pos = p.positionals();
    match pos.iter().position(|w| *w == "--") {
        Some(k) if p.saw_end_of_options => (pos[..k].to_vec(), Some(pos[k + 1..].to_vec())),
        _ => (pos, None),
    }
}

/// URL schemes git serves itself (`git://`, `ssh://`, `file://`) or with a helper it ships
/// (`git-remote-http` for `http`, `https`, `ftp`, `ftps`), from `transport.c` `transport_get`.
const SHIPPED_SCHEMES: &[&str] = &["git", "ssh", "git+ssh", "ssh+git", "file", "http", "https", "ftp", "ftps"];

/// A URL git hands to a remote helper it does not ship: `<transport>::<address>` (`ext::sh -c
/// …`, `fd::3`), or `<scheme>://…` with any other scheme (`git-remote-<scheme>` from PATH or
/// the exec path) (`transport.c` `transport_get`, `is_urlschemechar`, `is_url`).
fn is_helper_url(s: &str) -> bool {
    let mut chars = s.char_indices();
    if !chars.next().is_some_and(|(_, c)| c.is_ascii_alphabetic()) {
        return false;
    }
    for (i, c) in chars {
        if !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) {
            if s[i..].starts_with("::") {
                return true;
            }
            return s[i..].starts_with("://") && !SHIPPED_SCHEMES.iter().any(|x| x.eq_ignore_ascii_case(&s[..i]));
        }
    }
    false
}

/// Marks `remote-helper` when any positional or option value of a transport command is a
/// remote-helper URL. A remote name can never contain `::`, so such a word is always a URL.
fn mark_helper_urls(a: &mut Action, p: &Parsed) {
    let hit = p.items.iter().any(|item| match item {
        Item::Pos(s) => is_helper_url(s),
        Item::Opt(f) => f.value.as_deref().is_some_and(is_helper_url),
        Item::Unknown { .. } => false,
    });
    if hit {
        a.add("remote-helper");
    }
}

/// The same check on raw words (for subcommands whose options are not scanned).
fn mark_helper_words(a: &mut Action, args: &[String]) {
    let hit = args
        .iter()
        .any(|w| is_helper_url(w) || w.split_once('=').is_some_and(|(_, v)| is_helper_url(v)));
    if hit {
        a.add("remote-helper");
    }
}

/// Diff options take `--output=<file>` / `--output <file>` (exact name: diff options do not
/// abbreviate) and write the output to any path; that is its own, refused, action.
fn with_output_check(a: Action, args: &[String]) -> Vec<Action> {
    let writes = args
        .iter()
        .take_while(|w| *w != "--" && *w != "--end-of-options")
        .any(|w| w == "--output" || w.starts_with("--output="));
    let mut out = vec![a];
    if writes {
        out.push(Action::new("--output"));
    }
    out
}

/// Any `-s/--strategy` that is not built in runs `git-merge-<name>` from PATH.
fn mark_strategy(a: &mut Action, p: &Parsed) {
    if live_values(p, "strategy").iter().any(|s| !BUILTIN_STRATEGIES.contains(s)) {
        a.add("exec-option");
    }
}

/// A dry-run or check form: a verb of its own (`clean dry-run`), which the policy lets observe.
fn dry(verb: &str) -> Action {
    Action::new(format!("{verb} dry-run"))
}

// ---------------------------------------------------------------------------------------------
// Transport

/// `git push [<options>] [<repository> [<refspec>...]]` (`Documentation/git-push.adoc`).
fn push(args: &[String], cx: &Cx) -> Result<Action, String> {
    let p = scan(args, PUSH_OPTS)?;
    let dry_run = on(&p, "dry-run");
    let mut a = Action::new(if dry_run { "push dry-run" } else { "push" });
    if on(&p, "receive-pack") || on(&p, "exec") {
        a.add("exec-option");
    }
    mark_helper_urls(&mut a, &p);
    let pos = p.positionals();
    let repository = pos.first().copied().or_else(|| if on(&p, "repo") { p.last("repo") } else { None });
    if let Some(r) = repository
        && (r.starts_with(['/', '.', '~']) || r.to_ascii_lowercase().starts_with("file:"))
    {
        a.add("local-remote");
    }
    if dry_run {
        // Nothing is sent, no ref and no config is written; what runs still counts.
        return Ok(a);
    }
    // `+refspec`, `--force` and any lease all force; `--no-force` / `--no-force-with-lease`
    // cancel the earlier option (not a `+`). `--force-if-includes` alone forces nothing.
    if on(&p, "force") || on(&p, "force-with-lease") {
        a.add("force");
    }
    if on(&p, "mirror") {
        a.add("mirror");
    }
    if on(&p, "prune") {
        a.add("prune");
    }
    if on(&p, "all") || on(&p, "branches") {
        a.add("all-branches");
    }
    let tags = on(&p, "tags");
    if tags || on(&p, "follow-tags") {
        a.add("tags");
    }
    if on(&p, "recurse-submodules") && !matches!(p.last("recurse-submodules"), Some("check" | "no" | "false" | "off" | "0")) {
        a.add("submodule-push");
    }
    // What the configuration decides where argv does not: `push.followTags` sends tags,
    // `push.recurseSubmodules` pushes submodules, `remote.<name>.mirror` mirrors.
    if !said(&p, "follow-tags") {
        a.config
            .push(ConfigEffect::one(&["push.followtags".into()], ConfigTest::True, &["tags"]));
    }
    if !said(&p, "recurse-submodules") {
        a.config.push(ConfigEffect::one(
            &["push.recursesubmodules".into()],
            ConfigTest::OneOf(vec!["on-demand".into(), "only".into()]),
            &["submodule-push"],
        ));
    }
    if !on(&p, "mirror") {
        let r = repository.filter(|r| configured_name(r)).unwrap_or("*");
        a.config
            .push(ConfigEffect::one(&[format!("remote.{r}.mirror")], ConfigTest::True, &["mirror"]));
    }
    let refspecs = pos.get(1..).unwrap_or_default();
    if refspecs.is_empty() && !tags && !a.has("all-branches") && !a.has("mirror") {
        // push.default, remote.<n>.push and remote.<n>.mirror decide what a bare push does.
        a.add("unnamed-destination");
    }
    let delete = on(&p, "delete");
    for spec in refspecs {
        push_refspec(spec, delete, &mut a)?;
    }
    // For the scope check, `--delete name` is the refspec `:name` (nothing is sent).
    let specs: Vec<String> = refspecs
        .iter()
        .map(|s| if delete { format!(":{s}") } else { s.to_string() })
        .collect();
    a.scope = Some(ScopeTarget::Push {
        remote: repository.map(str::to_string),
        refspecs: specs.clone(),
        git: cx.at.clone(),
    });
    a.probe = Some(Probe::PushTarget {
        remote: repository.map(str::to_string),
        refspecs: specs,
        git: cx.at.clone(),
    });
    Ok(a)
}

/// `git commit` (builtin/commit.c `builtin_commit_options`). What it commits is the scope
/// target: the index, every tracked change with `-a` (also the reading for `--patch` and
/// `--interactive`, which choose from those interactively), or the named paths. `--amend`
/// rewrites the last commit, so its files count too (mark `amend`). A message or template read
/// from a file is a local file read (it goes into the commit, and from there to a remote).
fn commit(args: &[String], cx: &mut Cx) -> Result<Action, String> {
    let p = scan(args, COMMIT_OPTS)?;
    if on(&p, "pathspec-from-file") {
        return Err("git commit --pathspec-from-file: the gate cannot see which paths it commits; name them".into());
    }
    for (id, flag) in [("file", "-F"), ("template", "--template")] {
        if on(&p, id) {
            for v in live_values(&p, id) {
                cx.reads(v, flag);
            }
        }
    }
    if on(&p, "dry-run") {
        return Ok(dry("commit"));
    }
    let mut a = Action::new("commit");
    if on(&p, "amend") {
        a.add("amend");
    }
    let paths: Vec<String> = p.positionals().iter().map(|s| s.to_string()).collect();
    let all = on(&p, "all") || on(&p, "patch") || on(&p, "interactive");
    a.scope = Some(ScopeTarget::Commit {
        all,
        paths,
        include: on(&p, "include"),
        git: cx.at.clone(),
    });
    Ok(a)
}

/// Marks for one push refspec `[+]<src>[:<dst>]`; with `--delete` each is a name to delete.
fn push_refspec(spec: &str, delete: bool, a: &mut Action) -> Result<(), String> {
    if spec.starts_with('-') {
        return Err(format!("push refspec {spec} starts with a dash"));
    }
    if spec.starts_with('^') {
        return Err(format!("negative refspec {spec} is not understood by the gate"));
    }
    let body = match spec.strip_prefix('+') {
        Some(b) => {
            a.add("force");
            b
        }
        None => spec,
    };
    if body.contains('*') {
        // A pattern pushes every matching branch, the default branch included.
        a.add("all-branches");
        return Ok(());
    }
    if delete {
        if body.contains(':') {
            return Err(format!("--delete takes ref names, not the refspec {spec}"));
        }
        a.add("delete");
        push_destination(body, a);
        return Ok(());
    }
    let (src, dst) = match body.split_once(':') {
        Some((s, d)) => (s, Some(d)),
        None => (body, None),
    };
    match (src, dst) {
        // `:` alone pushes the "matching" branches: every branch both sides have.
        ("", Some("")) => a.add("all-branches"),
        ("", Some(d)) => {
            a.add("delete");
            push_destination(d, a);
        }
        (_, Some(d)) if !d.is_empty() => push_destination(d, a),
        // `HEAD` (or `@`) alone pushes the current branch to its own name: unknown here.
        ("HEAD" | "@", _) => a.add("unnamed-destination"),
        (s, _) => push_destination(s, a),
    }
    Ok(())
}

/// Classifies the ref a push writes (or deletes). Unqualified names are looked up on the
/// remote with git's DWIM rules (`refs/<n>`, `refs/tags/<n>`, `refs/heads/<n>`, …), so
/// `heads/main` is `main` and `tags/v1` is a tag. The comparison ignores case: a remote on a
/// case-insensitive file system stores `refs/Heads/MAIN` as `refs/heads/main`. Whether a plain
/// name is a tag here, and the remote's own default branch, are asked of the real git
/// ([`Probe::PushTarget`]).
fn push_destination(dst: &str, a: &mut Action) {
    let dst = dst.to_ascii_lowercase();
    let branch = if let Some(b) = dst.strip_prefix("refs/heads/") {
        b
    } else if dst.starts_with("refs/tags/") || dst.starts_with("tags/") {
        a.add("tags");
        return;
    } else if dst.starts_with("refs/") {
        a.add("non-branch-ref");
        return;
    } else {
        dst.strip_prefix("heads/").unwrap_or(&dst)
    };
    let branch = if branch == "@" { "head" } else { branch };
    if DEFAULT_BRANCHES.iter().any(|d| d.eq_ignore_ascii_case(branch)) {
        a.add("default-branch");
    }
}

/// One fetch refspec's destination, by what it writes.
enum FetchDst {
    /// No destination: FETCH_HEAD (and the configured remote-tracking ref, as a plain fetch).
    None,
    /// `refs/remotes/<remote>/<b>` from `<b>` (or `refs/heads/<b>`) of that same remote: the
    /// remote's own value, recorded where a plain fetch records it.
    Own,
    /// Any other remote-tracking ref.
    Tracking,
    /// A local branch or tag (`refs/heads/`, `refs/tags/`, or a name git qualifies as one).
    Local,
    /// Any other local ref: one git reads specially (`refs/replace/` changes what every commit
    /// shows, `refs/notes/`, `refs/stash`, `refs/bisect/`, `refs/original/`), or a pattern
    /// over all of `refs/`.
    Special,
}

fn fetch_dst(spec: &str, remote: Option<&str>) -> FetchDst {
    let body = spec.trim_start_matches('+');
    let Some((src, dst)) = body.split_once(':') else {
        return FetchDst::None;
    };
    if dst.is_empty() {
        return FetchDst::None;
    }
    let Some(rest) = dst.strip_prefix("refs/remotes/") else {
        if dst.starts_with("refs/") && !dst.starts_with("refs/heads/") && !dst.starts_with("refs/tags/") {
            return FetchDst::Special;
        }
        return FetchDst::Local;
    };
    let src = src.strip_prefix("refs/heads/").unwrap_or(src);
    match remote {
        Some(r) if !src.contains('*') && !src.is_empty() && rest.strip_prefix(r).and_then(|x| x.strip_prefix('/')) == Some(src) => {
            FetchDst::Own
        }
        _ => FetchDst::Tracking,
    }
}

/// Marks for the refs a fetch (or the fetch of a pull) writes: a local ref (`local-refs`), one
/// rewritten or deleted (`force-local`: `+` or `--force` onto a local ref, `--prune` with a
/// refspec onto local refs, `--tags` with `--force`, `--prune-tags`, refspecs from stdin), a
/// ref git reads specially (`special-refs`), a remote-tracking ref a refspec names to anything
/// but the remote's own value (`remote-refs`: what the scope checks compare against).
fn mark_fetch_refs(a: &mut Action, p: &Parsed, refspecs: &[&str], remote: Option<&str>) {
    let force = on(p, "force");
    let prune = on(p, "prune");
    let refmap = live_values(p, "refmap");
    for spec in refspecs.iter().copied().chain(refmap.iter().copied()) {
        match fetch_dst(spec, remote) {
            FetchDst::None | FetchDst::Own => {}
            FetchDst::Tracking => a.add("remote-refs"),
            FetchDst::Special => a.add("special-refs"),
            FetchDst::Local => {
                a.add("local-refs");
                // `--prune` deletes every local ref the refspec's destination matches that the
                // remote no longer has: local branches, with a pattern.
                if force || prune || spec.starts_with('+') {
                    a.add("force-local");
                }
            }
        }
    }
    if on(p, "tags") && force {
        a.add("force-local");
    }
    if on(p, "prune-tags") || on(p, "stdin") {
        a.add("force-local");
    }
    if on(p, "update-head-ok") {
        a.add("local-refs");
    }
}

/// Whether argv decides option `id` itself (on or off), so the configuration does not.
fn said(p: &Parsed, id: &str) -> bool {
    !p.all(id).is_empty()
}

/// The configuration a fetch (or a pull's fetch) leaves to git, as effects the gate reads with
/// the real git: `remote.<name>.prune` / `fetch.prune` make it prune, deleting the local refs a
/// refspec here stores into; `remote.<name>.pruneTags` / `fetch.pruneTags` with pruning delete
/// local tags; a `remote.<name>.fetch` refspec that stores outside the remote's tracking refs
/// writes local refs on every fetch (unless `--refmap` replaces it). A remote argv does not
/// name (or gives as a URL) stands for any (`*`).
fn fetch_config(a: &mut Action, p: &Parsed, refspecs: &[&str], remote: Option<&str>) {
    let r = remote.filter(|r| configured_name(r)).unwrap_or("*");
    let prune_keys = vec![format!("remote.{r}.prune"), "fetch.prune".to_string()];
    let tag_keys = vec![format!("remote.{r}.prunetags"), "fetch.prunetags".to_string()];
    let local = refspecs
        .iter()
        .copied()
        .chain(live_values(p, "refmap"))
        .any(|s| matches!(fetch_dst(s, remote), FetchDst::Local));
    if local && !said(p, "prune") {
        a.config.push(ConfigEffect::one(&prune_keys, ConfigTest::True, &["force-local"]));
    }
    // Unless argv decides pruning tags, or turns pruning off.
    let prune_off = said(p, "prune") && !on(p, "prune");
    if !said(p, "prune-tags") && !prune_off {
        let mut when = vec![ConfigCond {
            keys: tag_keys,
            test: ConfigTest::True,
        }];
        if !on(p, "prune") {
            when.push(ConfigCond {
                keys: prune_keys,
                test: ConfigTest::True,
            });
        }
        a.config.push(ConfigEffect {
            when,
            marks: vec!["force-local".into()],
        });
    }
    if !said(p, "refmap") {
        a.config.push(ConfigEffect::one(
            &[format!("remote.{r}.fetch")],
            ConfigTest::LocalRefspec,
            &["force-local"],
        ));
    }
}

/// A remote name with a `/` (`gh/up`) is a name; a URL or a path is not.
fn configured_name(r: &str) -> bool {
    !r.contains("://") && !r.starts_with(['/', '.', '~']) && !r.contains(':')
}

/// The marks `effects` give with the configuration `entries` (`key`, `value`, in the order git
/// reads them, keys as `git config --list` prints them). For each condition the first of its
/// keys that is set decides, its last value counting; a key with `*` for its subsection
/// stands for every remote, and decides if any of them passes (or, when all are set and none
/// passes, leaves it to the next key). Pure.
pub fn config_effect_marks(effects: &[ConfigEffect], entries: &[(String, String)]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for e in effects {
        if e.when.iter().all(|c| cond_holds(c, entries)) {
            out.extend(e.marks.iter().cloned());
        }
    }
    out
}

fn cond_holds(c: &ConfigCond, entries: &[(String, String)]) -> bool {
    for want in &c.keys {
        let (sec, sub, name) = split_key(want);
        let matching: Vec<(&str, &str)> = entries
            .iter()
            .filter_map(|(k, v)| {
                let (s2, b2, n2) = split_key(k);
                let sub_ok = match (sub, b2) {
                    (Some("*"), Some(_)) => true,
                    (Some(x), Some(y)) => x == y,
                    (None, None) => true,
                    _ => false,
                };
                (s2.eq_ignore_ascii_case(sec) && n2.eq_ignore_ascii_case(name) && sub_ok).then_some((b2.unwrap_or(""), v.as_str()))
            })
            .collect();
        if matching.is_empty() {
            continue;
        }
        if c.test == ConfigTest::LocalRefspec {
            // Every value counts (a multi-valued key).
            return matching.iter().any(|(sub, v)| !tracking_refspec(sub, v));
        }
        let passes = |v: &str| match &c.test {
            ConfigTest::True => config_bool(v) == Some(true),
            ConfigTest::NotFalse => config_bool(v) != Some(false),
            ConfigTest::OneOf(vs) => vs.iter().any(|x| x.eq_ignore_ascii_case(v.trim())),
            ConfigTest::LocalRefspec => false,
        };
        if sub == Some("*") {
            // The last value of each remote's key.
            let mut last: BTreeMap<&str, &str> = BTreeMap::new();
            for (s, v) in &matching {
                last.insert(s, v);
            }
            if last.values().any(|v| passes(v)) {
                return true;
            }
            continue;
        }
        return matching.last().is_some_and(|(_, v)| passes(v));
    }
    false
}

/// `section`, subsection, name of a key as `git config --list` prints it.
fn split_key(key: &str) -> (&str, Option<&str>, &str) {
    let (section, rest) = key.split_once('.').unwrap_or((key, ""));
    match rest.rsplit_once('.') {
        Some((sub, name)) => (section, Some(sub), name),
        None => (section, None, rest),
    }
}

/// Marks for the fetch options that write configuration or the shallow file: the upstream of
/// the current branch (`--set-upstream`), a partial-clone filter, a new shallow boundary.
fn mark_fetch_config(a: &mut Action, p: &Parsed) {
    if on(p, "set-upstream") {
        a.add("tracking-config");
    }
    if on(p, "filter") {
        a.add("partial-clone");
    }
    if ["depth", "deepen", "shallow-since", "shallow-exclude", "unshallow", "update-shallow"]
        .iter()
        .any(|id| on(p, id))
    {
        a.add("shallow");
    }
}

/// `git fetch [<options>] [<repository> [<refspec>...]]`. Updating remote-tracking refs as the
/// remote's configuration says is an observation (the remote's own values); see
/// [`mark_fetch_refs`] and [`mark_fetch_config`] for what is more.
fn fetch(args: &[String]) -> Result<Action, String> {
    let p = scan(args, FETCH_OPTS)?;
    let dry_run = on(&p, "dry-run");
    let mut a = Action::new("fetch");
    if on(&p, "upload-pack") {
        a.add("exec-option");
    }
    mark_helper_urls(&mut a, &p);
    let pos = p.positionals();
    let (remote, refspecs): (Option<&str>, &[&str]) = if on(&p, "multiple") || on(&p, "all") {
        (None, &[])
    } else {
        (pos.first().copied(), pos.get(1..).unwrap_or_default())
    };
    mark_fetch_config(&mut a, &p);
    if !dry_run {
        mark_fetch_refs(&mut a, &p, refspecs, remote);
        fetch_config(&mut a, &p, refspecs, remote);
    }
    Ok(a)
}

/// `git pull`: a fetch merged (or rebased) into the current branch. Its refspecs and `--tags
/// --force` write local refs as fetch's do.
fn pull(args: &[String]) -> Result<Action, String> {
    let p = scan(args, PULL_OPTS)?;
    let mut a = Action::new("pull");
    if on(&p, "upload-pack") {
        a.add("exec-option");
    }
    mark_strategy(&mut a, &p);
    mark_helper_urls(&mut a, &p);
    let pos = p.positionals();
    let refspecs = if on(&p, "all") { &[][..] } else { pos.get(1..).unwrap_or_default() };
    let remote = if on(&p, "all") { None } else { pos.first().copied() };
    mark_fetch_refs(&mut a, &p, refspecs, remote);
    fetch_config(&mut a, &p, refspecs, remote);
    // A pull that rebases (`--rebase`, or `pull.rebase` / `branch.<name>.rebase` when argv
    // does not say) runs the rebase with `rebase.updateRefs`.
    let rebase_said = said(&p, "rebase");
    let rebases = on(&p, "rebase") && p.last("rebase").is_none_or(|v| config_bool(v) != Some(false));
    if rebases || !rebase_said {
        let mut when = vec![ConfigCond {
            keys: vec!["rebase.updaterefs".into()],
            test: ConfigTest::True,
        }];
        if !rebase_said {
            when.push(ConfigCond {
                keys: vec!["branch.*.rebase".into(), "pull.rebase".into()],
                test: ConfigTest::NotFalse,
            });
        }
        a.config.push(ConfigEffect {
            when,
            marks: vec!["update-refs".into()],
        });
    }
    Ok(a)
}

/// `git clone`: `-u/--upload-pack` runs a program, `--template` installs hooks and files,
/// `-c/--config` writes config into the new repository, `--separate-git-dir` puts the git
/// directory anywhere and writes `core.worktree`.
fn clone(args: &[String]) -> Result<Action, String> {
    let p = scan(args, CLONE_OPTS)?;
    let mut a = Action::new("clone");
    if on(&p, "upload-pack") {
        a.add("exec-option");
    }
    if on(&p, "template") {
        a.add("template");
    }
    if !live_values(&p, "config").is_empty() {
        a.add("config-write");
    }
    if on(&p, "separate-git-dir") {
        a.add("separate-git-dir");
    }
    mark_helper_urls(&mut a, &p);
    Ok(a)
}

/// `git ls-remote`: options end at the repository (`PARSE_OPT_STOP_AT_NON_OPTION`).
fn ls_remote(args: &[String]) -> Result<Action, String> {
    let p = opts::scan(args, LS_REMOTE_OPTS, &STOP_AT_OPERAND)?;
    let mut a = Action::new("ls-remote");
    if on(&p, "upload-pack") || on(&p, "exec") {
        a.add("exec-option");
    }
    mark_helper_urls(&mut a, &p);
    Ok(a)
}

// ---------------------------------------------------------------------------------------------
// Reads with a dangerous option

/// `git grep`: `-O[<pager>]` / `--open-files-in-pager[=<pager>]` runs any program. Options end
/// at the pattern (`PARSE_OPT_STOP_AT_NON_OPTION`).
fn grep(args: &[String]) -> Result<Action, String> {
    // `-<num>` (OPT_NUMBER_CALLBACK) is `-C <num>`; drop it before the table scan.
    let end = args.iter().position(|w| w == "--").unwrap_or(args.len());
    let kept: Vec<String> = args
        .iter()
        .enumerate()
        .filter(|(i, w)| *i >= end || !(w.len() > 1 && w.starts_with('-') && w[1..].bytes().all(|b| b.is_ascii_digit())))
        .map(|(_, w)| w.clone())
        .collect();
    let p = opts::scan(&kept, GREP_OPTS, &STOP_AT_OPERAND)?;
    let mut a = Action::new("grep");
    if on(&p, "open-files-in-pager") {
        a.add("exec-option");
    }
    Ok(a)
}

/// `git fsck`: a read, except `--lost-found`, which writes into `.git/lost-found/`.
fn fsck(args: &[String]) -> Result<Action, String> {
    let p = scan(args, FSCK_OPTS)?;
    let mut a = Action::new("fsck");
    if on(&p, "lost-found") {
        a.add("writes-files");
    }
    Ok(a)
}

/// `git notes [--ref <r>] [<subcommand>]`: none is `list`.
fn notes(args: &[String]) -> Action {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        match w.as_str() {
            "--ref" => i += 2,
            w if w.starts_with("--ref=") => i += 1,
            _ => break,
        }
    }
    match args.get(i).map(String::as_str) {
        None => Action::new("notes list"),
        Some(w) if w.starts_with('-') => Action::new(format!("notes {w}")),
        Some(sub) => Action::new(format!("notes {sub}")),
    }
}

/// `git archive`: to stdout a read; `-o/--output <file>` writes that file (declared to the
/// local-write model: tier 2 below a workspace), also with `--remote`, whose `--exec` names the
/// program it runs there; `--add-file <file>` reads a local file into the archive (declared as
/// a read). git takes `--output` only as written (its first parse keeps unknown options, which
/// turns abbreviations off); an abbreviation the second parse reads makes git die, and is
/// declared as a write all the same.
fn archive(args: &[String], cx: &mut Cx) -> Result<Vec<Action>, String> {
    let style = Style {
        unknown: Unknown::Flag,
        ..STYLE
    };
    let p = opts::scan(args, ARCHIVE_OPTS, &style)?;
    let mut a = Action::new("archive");
    if on(&p, "exec") {
        a.add("exec-option");
    }
    mark_helper_urls(&mut a, &p);
    for f in p.all("output") {
        if let Some(v) = &f.value {
            cx.writes(v, "-o/--output");
        }
    }
    for v in p.values("add-file") {
        cx.reads(v, "--add-file");
    }
    Ok(vec![a])
}

/// `git format-patch` (builtin/log.c): to stdout (`--stdout`) a read; otherwise it writes one
/// file per commit into `-o/--output-directory <dir>` (git creates it) or the working
/// directory, or all of them into the diff option's `--output <file>`. Each is declared to the
/// local-write model: the directory (git names the files in it `[v<n>-]NNNN-<subject>.patch`
/// or `N`, with the subject and reroll count cut down to letters, digits, `.`, `_`, `-`, so
/// never a hidden file nor an entry of a git directory) or the file. A `--suffix` holding a
/// `/` puts the files below another directory, which the model cannot place: the `--output`
/// action, refused. `--signature-file`/`--description-file` read a local file into the output
/// (declared as reads).
///
/// format-patch's own parse keeps unknown options (revision and diff options) for a second
/// parse, so it reads `-o` in every word, also one after a revision option that takes a value,
/// and no long name abbreviates; a short cluster applies `n N s k p q` until a value-taking `o`
/// or `v` takes the rest, or an unknown letter hands the whole word on.
fn format_patch(args: &[String], cx: &mut Cx) -> Vec<Action> {
    let mut stdout = false;
    let mut redirected = false;
    let mut dirs: Vec<String> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let w = args[i].as_str();
        i += 1;
        if w == "--" || w == "--end-of-options" {
            break;
        }
        // A value-taking long option of format-patch's own: `--name=v` or `--name v`.
        let long_value = |name: &str, i: &mut usize| -> Option<String> {
            let rest = w.strip_prefix("--")?.strip_prefix(name)?;
            if let Some(v) = rest.strip_prefix('=') {
                return Some(v.to_string());
            }
            if !rest.is_empty() {
                return None;
            }
            let v = args.get(*i).cloned().unwrap_or_default();
            *i += 1;
            Some(v)
        };
        if let Some(v) = long_value("output-directory", &mut i) {
            dirs.push(v);
        } else if let Some(v) = long_value("suffix", &mut i) {
            redirected |= v.contains('/');
        } else if let Some(v) = long_value("signature-file", &mut i).or_else(|| long_value("description-file", &mut i)) {
            cx.reads(&v, "--signature-file/--description-file");
        } else if long_value("reroll-count", &mut i).is_some() {
            // Its value is a word of its own, never an option.
        } else if w == "--stdout" {
            stdout = true;
        } else if w == "--no-stdout" {
            stdout = false;
        } else if let Some(v) = w.strip_prefix("--output=") {
            // The diff option, read by the second parse: its value is not taken from the words
            // format-patch's own parse reads, so the next word is looked at again.
            files.push(v.to_string());
        } else if w == "--output" {
            files.push(args.get(i).cloned().unwrap_or_default());
        } else if let Some(cluster) = w.strip_prefix('-').filter(|c| !c.starts_with('-') && !c.is_empty()) {
            for (at, c) in cluster.char_indices() {
                match c {
                    'n' | 'N' | 's' | 'k' | 'p' | 'q' => continue,
                    'o' | 'v' => {
                        let rest = &cluster[at + 1..];
                        let v = if rest.is_empty() {
                            i += 1;
                            args.get(i - 1).cloned().unwrap_or_default()
                        } else {
                            rest.to_string()
                        };
                        if c == 'o' {
                            dirs.push(v);
                        }
                    }
                    _ => {}
                }
                break;
            }
        }
    }
    let mut out = vec![Action::new("format-patch")];
    for d in &dirs {
        cx.writes(d, "-o/--output-directory");
    }
    for f in &files {
        cx.writes(f, "--output");
    }
    if !stdout && dirs.is_empty() && files.is_empty() {
        cx.writes(".", "format-patch");
    }
    if redirected {
        out.push(Action::new("--output"));
    }
    out
}

/// `git bundle`: the subcommand is the verb (`with_subcommand`). `bundle create [options]
/// <file> <rev-list args>` writes `<file>` (`-` is stdout): declared to the local-write model.
/// Options end at the file (`PARSE_OPT_STOP_AT_NON_OPTION`); git reads no option before the
/// subcommand, so a call that puts one there is the bare `bundle` (unclassified).
fn bundle(args: &[String], cx: &mut Cx) -> Result<Action, String> {
    match args.first().map(String::as_str) {
        Some("create") => {
            let style = Style {
                interspersed: false,
                ..STYLE
            };
            let p = opts::scan(&args[1..], BUNDLE_CREATE_OPTS, &style)?;
            if let Some(file) = p.positionals().first().filter(|f| **f != "-") {
                cx.writes(file, "bundle create");
            }
            Ok(Action::new("bundle create"))
        }
        Some(w) if w.starts_with('-') => Ok(Action::new("bundle")),
        _ => Ok(with_subcommand("bundle", args)),
    }
}

/// `git fast-export`: to stdout a read; `--export-marks=<file>` writes a file.
fn fast_export(args: &[String]) -> Vec<Action> {
    let writes = args
        .iter()
        .take_while(|w| *w != "--" && *w != "--end-of-options")
        .any(|w| w.starts_with("--ex"));
    let mut out = vec![Action::new("fast-export")];
    if writes {
        out.push(Action::new("--output"));
    }
    out
}

/// `git bisect <subcommand>`. `view` (`visualize`) runs another command with its arguments
/// (`builtin/bisect.c` `bisect_visualize`): without any, `git log --bisect --` (or gitk, which
/// the gate's environment does not let it find); with a first argument that is an option,
/// `git log <args> --bisect --`; with `tig` or a name starting with `git`, that program from
/// PATH (`bisect view program`, which no rule allows); with any other name, `git <args>
/// --bisect --`. Each is judged as the command it runs. The other subcommands are verbs.
fn bisect(args: &[String], cx: &mut Cx) -> Result<Vec<Action>, String> {
    let Some(sub @ ("view" | "visualize")) = args.first().map(String::as_str) else {
        return Ok(vec![with_subcommand("bisect", args)]);
    };
    let rest = &args[1..];
    let mut words: Vec<String> = match rest.first() {
        None => return Ok(vec![Action::new(format!("bisect {sub}"))]),
        Some(w) if w == "tig" || w.starts_with("git") => return Ok(vec![Action::new("bisect view program")]),
        Some(w) if w.starts_with('-') => vec!["log".into()],
        Some(_) => Vec::new(),
    };
    words.extend(rest.iter().cloned());
    words.extend(["--bisect".to_string(), "--".to_string()]);
    command(&words, cx)
}

/// Commands whose subcommand is the verb (`bisect log`, `rerere status`, `sparse-checkout
/// list`, `bundle verify`, `submodule status`, `lfs ls-files`); none is the command's default.
fn with_subcommand(name: &str, args: &[String]) -> Action {
    let sub = args.iter().find(|w| !w.starts_with('-')).map(String::as_str);
    let default = match name {
        "rerere" => "record",
        "submodule" => "status",
        _ => "",
    };
    match sub {
        Some(s) => Action::new(format!("{name} {s}")),
        None if !default.is_empty() && args.iter().all(|w| w.starts_with('-')) => Action::new(format!("{name} {default}")),
        None => Action::new(name),
    }
}

// ---------------------------------------------------------------------------------------------
// Modes of one command, named as verbs

/// Filters that default to HEAD when they are the last word (`PARSE_OPT_LASTARG_DEFAULT`):
/// `git branch --merged` lists the branches merged into HEAD.
const LASTARG_DEFAULT: &[&str] = &["--contains", "--no-contains", "--merged", "--no-merged", "--with", "--without"];

/// The words to scan, and whether a last-word filter was cut off them.
fn cut_lastarg_default<'a>(args: &'a [String], extra: &[&str]) -> (&'a [String], bool) {
    match args.split_last() {
        Some((last, head)) if LASTARG_DEFAULT.contains(&last.as_str()) || extra.contains(&last.as_str()) => (head, true),
        _ => (args, false),
    }
}

/// `git branch`: the mode follows `builtin/branch.c` `cmd_branch`. Deleting a remote-tracking
/// ref (`-r -d`) changes what the scope checks compare against (`remote-tracking`).
fn branch(args: &[String]) -> Result<Action, String> {
    let (args, cut) = cut_lastarg_default(args, &[]);
    let p = scan(args, BRANCH_OPTS)?;
    let npos = p.positionals().len();
    let delete = on(&p, "delete") || on(&p, "D");
    let rename = on(&p, "move") || on(&p, "M");
    let copy = on(&p, "copy") || on(&p, "C");
    let upstream = on(&p, "set-upstream-to") || on(&p, "unset-upstream") || on(&p, "set-upstream");
    let edit = on(&p, "edit-description");
    let filters = cut
        || ["contains", "no-contains", "with", "without", "merged", "no-merged", "points-at"]
            .iter()
            .any(|id| on(&p, id));
    let list = on(&p, "list") || on(&p, "show-current") || filters || (npos == 0 && !delete && !rename && !copy && !upstream && !edit);
    let modes = [
        (list, "branch list"),
        (delete, "branch delete"),
        (rename, "branch rename"),
        (copy, "branch copy"),
        (upstream, "branch set-upstream"),
        (edit, "branch edit-description"),
    ];
    let chosen: Vec<&str> = modes.iter().filter(|(m, _)| *m).map(|(_, v)| *v).collect();
    let verb = match chosen.as_slice() {
        [] if npos <= 2 => "branch create",
        [] => return Err("git branch takes at most a name and a start point".into()),
        [one] => one,
        _ => return Err(format!("git branch modes cannot be combined: {}", chosen.join(", "))),
    };
    let mut a = Action::new(verb);
    let force = on(&p, "force") || (delete && on(&p, "D")) || (rename && on(&p, "M")) || (copy && on(&p, "C"));
    if force && verb != "branch list" {
        a.add("force");
    }
    if verb != "branch list" && (on(&p, "remotes") || on(&p, "all")) {
        a.add("remote-tracking");
    }
    Ok(a)
}

/// `git tag`: the mode follows `builtin/tag.c` `cmd_tag`. A message read from a file (`-F`)
/// is a local file read: a pushed tag carries it.
fn tag(args: &[String], cx: &mut Cx) -> Result<Action, String> {
    let (args, cut) = cut_lastarg_default(args, &["--points-at"]);
    let p = scan(args, TAG_OPTS)?;
    let modes = [("list", "tag list"), ("delete", "tag delete"), ("verify", "tag verify")];
    let chosen: Vec<&str> = modes.iter().filter(|(id, _)| on(&p, id)).map(|(_, v)| *v).collect();
    let filters = cut
        || [
            "contains",
            "no-contains",
            "with",
            "without",
            "merged",
            "no-merged",
            "points-at",
            "n",
        ]
        .iter()
        .any(|id| on(&p, id));
    let verb = match chosen.as_slice() {
        [one] => one,
        [] if p.positionals().is_empty() || filters => "tag list",
        [] => "tag create",
        _ => return Err(format!("git tag modes cannot be combined: {}", chosen.join(", "))),
    };
    if verb == "tag create" {
        for v in live_values(&p, "file") {
            cx.reads(v, "-F");
        }
    }
    let mut a = Action::new(verb);
    if verb == "tag create" && on(&p, "force") {
        a.add("force");
    }
    Ok(a)
}

/// `git config`. A subcommand (`list`, `get`, `set`, `unset`, `rename-section`,
/// `remove-section`, `edit`, git 2.46+) is recognised only as the first word; anything else is
/// the legacy form (`cmd_config_actions`), whose options end at the first operand
/// (`PARSE_OPT_STOP_AT_NON_OPTION`): `git config user.name --get` sets `user.name` to `--get`.
/// Its mode is an action option, or the number of operands (1 reads, 2 or 3 write).
fn config(args: &[String]) -> Result<Action, String> {
    if let Some(sub @ ("list" | "get" | "set" | "unset" | "rename-section" | "remove-section" | "edit")) = args.first().map(String::as_str)
    {
        return Ok(Action::new(format!("config {sub}")));
    }
    let p = opts::scan(args, CONFIG_OPTS, &STOP_AT_OPERAND)?;
    let modes = [
        ("get", "config get"),
        ("get-all", "config get"),
        ("get-regexp", "config get"),
        ("get-urlmatch", "config get"),
        ("get-color", "config get"),
        ("get-colorbool", "config get"),
        ("list", "config list"),
        ("add", "config set"),
        ("replace-all", "config set"),
        ("unset", "config unset"),
        ("unset-all", "config unset"),
        ("rename-section", "config rename-section"),
        ("remove-section", "config remove-section"),
        ("edit", "config edit"),
    ];
    let chosen: Vec<&str> = modes.iter().filter(|(id, _)| on(&p, id)).map(|(id, _)| *id).collect();
    let verb = match chosen.as_slice() {
        [] => match p.positionals().len() {
            0 => return Err("git config needs a name or an action".into()),
            1 => "config get",
            _ => "config set",
        },
        [one] => modes.iter().find(|(id, _)| id == one).map_or("config set", |(_, v)| *v),
        _ => return Err(format!("git config takes one action at a time, not --{}", chosen.join(" --"))),
    };
    Ok(Action::new(verb))
}

/// `git remote [-v] [<subcommand> …]`: no subcommand lists the remotes; `prune -n` only shows.
fn remote(args: &[String]) -> Result<Action, String> {
    let p = opts::scan(args, REMOTE_OPTS, &STOP_AT_OPERAND)?;
    let pos = p.positionals();
    let Some(sub) = pos.first() else {
        return Ok(Action::new("remote list"));
    };
    let sub = match *sub {
        "rm" => "remove",
        s => s,
    };
    let tail = &args[args.len() - pos.len() + 1..];
    // `prune -n` only shows; the last of `-n` and `--no-dry-run` decides, as parse-options does.
    if sub == "prune" && on(&scan(tail, REMOTE_PRUNE_OPTS)?, "dry-run") {
        return Ok(dry("remote prune"));
    }
    let mut a = Action::new(format!("remote {sub}"));
    mark_helper_words(&mut a, tail);
    Ok(a)
}

/// `git stash [<subcommand>]`: none, or an option first, is `push`; `save` is the old `push`.
fn stash(args: &[String]) -> Result<Vec<Action>, String> {
    let sub = match args.first().map(String::as_str) {
        None => "push",
        Some(w) if w.starts_with('-') => "push",
        Some("save") => "push",
        Some(w) => w,
    };
    let a = Action::new(format!("stash {sub}"));
    Ok(if sub == "show" { with_output_check(a, &args[1..]) } else { vec![a] })
}

/// `git worktree <subcommand>`: `add -B` resets an existing branch (`force-create`), `-f`
/// checks out a branch another worktree has (`force`); `prune -n` only shows.
fn worktree(args: &[String]) -> Result<Action, String> {
    match args.first().map(String::as_str) {
        None => Err("git worktree needs a subcommand".into()),
        Some(w) if w.starts_with('-') => Err(format!("unknown option {w} before the git worktree subcommand")),
        Some("add") => {
            let p = scan(&args[1..], WORKTREE_ADD_OPTS)?;
            let mut a = Action::new("worktree add");
            if on(&p, "B") {
                a.add("force-create");
            }
            if on(&p, "force") {
                a.add("force");
            }
            Ok(a)
        }
        Some("prune") if on(&scan(&args[1..], WORKTREE_PRUNE_OPTS)?, "dry-run") => Ok(dry("worktree prune")),
        Some(sub) => Ok(Action::new(format!("worktree {sub}"))),
    }
}

/// `git reflog [<subcommand>]`: anything that is not a subcommand is `show`'s arguments;
/// `expire` and `delete` with `-n`/`--dry-run` only show.
fn reflog(args: &[String]) -> Result<Vec<Action>, String> {
    match args.first().map(String::as_str) {
        Some(sub @ ("expire" | "delete")) if on(&scan(&args[1..], REFLOG_EXPIRE_OPTS)?, "dry-run") => {
            Ok(vec![dry(&format!("reflog {sub}"))])
        }
        Some(sub @ ("show" | "list" | "exists" | "expire" | "delete" | "drop")) => {
            let a = Action::new(format!("reflog {sub}"));
            Ok(if sub == "show" { with_output_check(a, &args[1..]) } else { vec![a] })
        }
        _ => Ok(with_output_check(Action::new("reflog show"), args)),
    }
}

/// `git symbolic-ref <name>` reads; `<name> <ref>` writes; `-d` deletes.
fn symbolic_ref(args: &[String]) -> Result<Action, String> {
    let p = scan(args, SYMBOLIC_REF_OPTS)?;
    let verb = if on(&p, "delete") {
        "symbolic-ref delete"
    } else if p.positionals().len() >= 2 {
        "symbolic-ref set"
    } else {
        "symbolic-ref"
    };
    Ok(Action::new(verb))
}

// ---------------------------------------------------------------------------------------------
// Local changes

/// `git checkout` (builtin/checkout.c `checkout_main`, `parse_branchname_arg`). Switching
/// branches is tier 2; overwriting files in the work tree with another version throws their
/// uncommitted changes away (`discard`): `-f`, and every path form (`-- <paths>`, `<rev>
/// <paths>`, `.`, `--ours <path>`, `--pathspec-from-file`). A lone operand without `--` is a
/// branch or commit when it names one, else paths: the gate asks the real git
/// ([`Probe::CheckoutArg`]). `-B` resets an existing branch (`force-create`).
fn checkout(args: &[String], cx: &Cx) -> Result<Action, String> {
    let p = scan(args, CHECKOUT_OPTS)?;
    let mut a = Action::new("checkout");
    if on(&p, "force") {
        a.add("discard");
    }
    if on(&p, "B") {
        a.add("force-create");
    }
    let creates = on(&p, "b") || on(&p, "B") || on(&p, "orphan") || on(&p, "detach");
    let path_mode = on(&p, "pathspec-from-file") || on(&p, "ours") || on(&p, "theirs") || on(&p, "patch");
    let (before, after) = split_dashdash(&p);
    match after {
        Some(paths) if !paths.is_empty() => a.add("discard"),
        Some(_) => {}
        None => match before.as_slice() {
            [] => {}
            [one] if !creates && !path_mode => {
                if is_pathish(one) {
                    a.add("discard");
                } else {
                    a.probe = Some(Probe::CheckoutArg {
                        arg: (*one).to_string(),
                        git: cx.at.clone(),
                    });
                }
            }
            [_] => {}
            _ => a.add("discard"),
        },
    }
    if path_mode {
        a.add("discard");
    }
    Ok(a)
}

/// An operand git can only read as a path: `.`, a pathspec with magic (`:(icase)x`, `:/`), or
/// one with a glob character (no ref name holds `*`, `?`, `[`, `:`).
fn is_pathish(w: &str) -> bool {
    w == "." || w.starts_with("./") || w.starts_with(':') || w.contains(['*', '?', '['])
}

/// `git switch`: `-f`/`--discard-changes` (`discard`), `-C`/`--force-create` (`force-create`).
fn switch(args: &[String]) -> Result<Action, String> {
    let p = scan(args, SWITCH_OPTS)?;
    let mut a = Action::new("switch");
    if on(&p, "force") || on(&p, "discard-changes") {
        a.add("discard");
    }
    if on(&p, "force-create") {
        a.add("force-create");
    }
    Ok(a)
}

/// `git restore`: the work tree is restored unless only `--staged` is given, and that throws
/// its uncommitted changes away (`discard`); `--staged` alone only unstages.
fn restore(args: &[String]) -> Result<Action, String> {
    let p = scan(args, RESTORE_OPTS)?;
    let mut a = Action::new("restore");
    if on(&p, "worktree") || !on(&p, "staged") {
        a.add("discard");
    }
    Ok(a)
}

/// `git reset`: the last of `--soft/--mixed/--hard/--merge/--keep` wins (`--no-<mode>` sets
/// none); `--hard` throws away the working tree, `--merge` the files that differ from the
/// target (`discard`).
fn reset(args: &[String]) -> Result<Action, String> {
    let p = scan(args, RESET_OPTS)?;
    let mut mode = None;
    for f in p.opts() {
        if matches!(f.id.as_str(), "soft" | "mixed" | "hard" | "merge" | "keep") {
            mode = if f.negated { None } else { Some(f.id.as_str()) };
        }
    }
    let mut a = Action::new("reset");
    match mode {
        Some("hard") => a.add("hard"),
        Some("merge") => a.add("discard"),
        _ => {}
    }
    Ok(a)
}

/// `git rm -f` removes files with uncommitted changes; `git mv -f` overwrites the target; `-n`
/// only shows.
fn rm_mv(name: &str, args: &[String]) -> Result<Action, String> {
    let p = scan(args, if name == "rm" { RM_OPTS } else { MV_OPTS })?;
    if on(&p, "dry-run") {
        return Ok(dry(name));
    }
    let mut a = Action::new(name);
    if on(&p, "force") {
        a.add("discard");
    }
    Ok(a)
}

/// `git clean`: deletes untracked files; `-n` only shows them.
fn clean(args: &[String]) -> Result<Action, String> {
    let p = scan(args, CLEAN_OPTS)?;
    if on(&p, "dry-run") {
        return Ok(dry("clean"));
    }
    Ok(Action::new("clean"))
}

/// How a sequence that stopped goes on: `--continue` (and am's `--resolved`) and `--skip` make
/// more commits; `--abort`, `--quit` and the looks at it (`--show-current-patch`,
/// `--edit-todo` with the gate's editor) make none, and are verbs of their own (`merge abort`).
fn resumes(p: &Parsed) -> bool {
    ["continue", "resolved", "skip", "retry", "allow-empty"].iter().any(|m| on(p, m))
}

fn stops(p: &Parsed) -> bool {
    ["abort", "quit", "show-current-patch", "edit-todo"].iter().any(|m| on(p, m))
}

/// `git merge`: the commits it brings in are scope-checked; a custom strategy runs a program.
fn merge(args: &[String], cx: &mut Cx) -> Result<Action, String> {
    let p = scan(args, MERGE_OPTS)?;
    if stops(&p) {
        return Ok(Action::new("merge abort"));
    }
    let mut a = Action::new("merge");
    mark_strategy(&mut a, &p);
    for v in live_values(&p, "file") {
        cx.reads(v, "-F");
    }
    a.scope = if resumes(&p) {
        Some(ScopeTarget::Sequence { git: cx.at.clone() })
    } else {
        let revs = p.positionals().iter().map(|s| s.to_string()).collect();
        Some(ScopeTarget::Replay {
            how: Replay::Merge(revs),
            git: cx.at.clone(),
        })
    };
    Ok(a)
}

/// `git cherry-pick`, `git revert`: the files of every commit they pick are scope-checked.
fn pick(name: &str, args: &[String], cx: &Cx) -> Result<Action, String> {
    let p = scan(args, if name == "revert" { REVERT_OPTS } else { CHERRY_PICK_OPTS })?;
    if stops(&p) {
        return Ok(Action::new(format!("{name} abort")));
    }
    let mut a = Action::new(name);
    mark_strategy(&mut a, &p);
    a.scope = if resumes(&p) {
        Some(ScopeTarget::Sequence { git: cx.at.clone() })
    } else {
        let revs: Vec<String> = p.positionals().iter().map(|s| s.to_string()).collect();
        if revs.is_empty() {
            return Err(format!("git {name} needs the commits it picks"));
        }
        Some(ScopeTarget::Replay {
            how: Replay::Picks(revs),
            git: cx.at.clone(),
        })
    };
    Ok(a)
}

/// `git rebase`: `-x/--exec <cmd>` runs a shell command after each commit; `--update-refs`
/// rewrites every other branch that points into the rebased commits (`update-refs`). The
/// commits it replays are scope-checked.
fn rebase(args: &[String], cx: &Cx) -> Result<Action, String> {
    let p = scan(args, REBASE_OPTS)?;
    if stops(&p) {
        return Ok(Action::new("rebase abort"));
    }
    let mut a = Action::new("rebase");
    if !live_values(&p, "exec").is_empty() {
        a.add("exec-option");
    }
    if on(&p, "update-refs") {
        a.add("update-refs");
    } else if !said(&p, "update-refs") {
        a.config
            .push(ConfigEffect::one(&["rebase.updaterefs".into()], ConfigTest::True, &["update-refs"]));
    }
    mark_strategy(&mut a, &p);
    let pos = p.positionals();
    a.scope = if resumes(&p) {
        Some(ScopeTarget::Sequence { git: cx.at.clone() })
    } else {
        let root = on(&p, "root");
        let (upstream, branch) = if root { (None, pos.first()) } else { (pos.first(), pos.get(1)) };
        Some(ScopeTarget::Replay {
            how: Replay::Rebase {
                upstream: upstream.map(|s| s.to_string()),
                branch: branch.map(|s| s.to_string()),
                root,
            },
            git: cx.at.clone(),
        })
    };
    Ok(a)
}

/// The ways to go on with (or leave) a stopped `git am`.
const AM_RESUME: &[&str] = &[
    "continue",
    "resolved",
    "skip",
    "abort",
    "quit",
    "retry",
    "show-current-patch",
    "allow-empty",
];

/// `git am`: commits the patches of mailboxes. The gate reads them (the files named, or stdin)
/// before deciding and hands git sealed copies, so the files the patches touch are known
/// ([`patch_paths`]) and declared as writes; a mailbox it could not read refuses the call.
fn am(args: &[String], cx: &mut Cx) -> Result<Action, String> {
    let p = scan(args, AM_OPTS)?;
    if stops(&p) {
        return Ok(Action::new("am abort"));
    }
    let mut a = Action::new("am");
    if resumes(&p) {
        a.scope = Some(ScopeTarget::Sequence { git: cx.at.clone() });
        return Ok(a);
    }
    let strip = match p.last("p") {
        Some(n) => n.parse::<usize>().map_err(|_| format!("git am -p{n}: not a number"))?,
        None => 1,
    };
    let directory = p.last("directory").map(str::to_string);
    let texts: Vec<&Input> = if p.positionals().is_empty() {
        vec![&cx.inputs.stdin]
    } else {
        cx.inputs.files.iter().collect()
    };
    let mut files = Ok(Vec::new());
    if texts.is_empty() {
        files = Err("the mailboxes were not read".to_string());
    }
    for t in texts {
        let got = match t {
            Input::Text(text) => patch_paths(text, strip, directory.as_deref()),
            Input::Unread => Err("the mailbox was not read".to_string()),
            Input::Terminal => Err("git am would read patches from a terminal".to_string()),
            Input::Failed(why) => Err(why.clone()),
        };
        match (&mut files, got) {
            (Ok(all), Ok(more)) => all.extend(more),
            (Ok(_), Err(e)) => files = Err(e),
            (Err(_), _) => {}
        }
    }
    if let Ok(f) = &mut files {
        f.sort();
        f.dedup();
        // The patches write these files into the work tree too: judged as every local write.
        for path in f.iter() {
            cx.writes(path, "am");
        }
    }
    a.scope = Some(ScopeTarget::Patches { files });
    Ok(a)
}

/// The files a mailbox's patches touch, as `git apply -p<strip> [--directory=<d>]` names
/// them: every path of a `diff --git` header, `---`/`+++` lines, and rename or copy lines. A
/// mailbox with no patch at all is an error: the gate cannot tell what it commits.
pub fn patch_paths(text: &str, strip: usize, directory: Option<&str>) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut headers = 0;
    let fix = |raw: &str, strip_it: bool| -> Result<Option<String>, String> {
        let raw = raw.trim_end_matches(['\r']);
        let raw = raw.split('\t').next().unwrap_or(raw);
        let path = if let Some(q) = raw.strip_prefix('"') {
            unquote(q)?
        } else {
            raw.to_string()
        };
        if path == "/dev/null" {
            return Ok(None);
        }
        let path = if strip_it {
            let parts: Vec<&str> = path.split('/').collect();
            if parts.len() <= strip {
                return Err(format!("the patch path {path} has fewer than {strip} leading directories to strip"));
            }
            parts[strip..].join("/")
        } else {
            path
        };
        Ok(Some(match directory {
            Some(d) => format!("{}/{path}", d.trim_end_matches('/')),
            None => path,
        }))
    };
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            headers += 1;
            // Quoted, or two halves of the same length when unquoted (`a/x b/x`).
            if let Some(q) = rest.strip_prefix('"') {
                let end = closing_quote(q).ok_or_else(|| format!("unreadable patch header: {line}"))?;
                out.extend(fix(&format!("\"{}", &q[..=end]), true)?);
                let second = q[end + 1..].trim_start();
                out.extend(fix(second, true)?);
            } else if let Some(sp) = rest.find(" \"") {
                out.extend(fix(&rest[..sp], true)?);
                out.extend(fix(&rest[sp + 1..], true)?);
            } else {
                let n = rest.len();
                if n % 2 == 1 && rest.as_bytes().get(n / 2) == Some(&b' ') {
                    out.extend(fix(&rest[..n / 2], true)?);
                    out.extend(fix(&rest[n / 2 + 1..], true)?);
                }
            }
        } else if let Some(rest) = line.strip_prefix("--- ").or_else(|| line.strip_prefix("+++ ")) {
            if rest.starts_with("a/") || rest.starts_with("b/") || rest.starts_with('"') || rest == "/dev/null" || strip != 1 {
                out.extend(fix(rest, true)?);
            }
        } else if let Some(rest) = ["rename from ", "rename to ", "copy from ", "copy to "]
            .iter()
            .find_map(|p| line.strip_prefix(p))
        {
            out.extend(fix(rest, strip > 1)?);
        }
    }
    if headers == 0 && out.is_empty() {
        return Err("the mailbox holds no patch the gate can read".into());
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The index of the closing quote of a C-quoted string (after the opening quote).
fn closing_quote(q: &str) -> Option<usize> {
    let b = q.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// git's C quoting (`quote.c` `unquote_c_style`), from after the opening quote.
fn unquote(q: &str) -> Result<String, String> {
    let end = closing_quote(q).ok_or_else(|| format!("unterminated quoted path \"{q}"))?;
    let b = &q.as_bytes()[..end];
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = *b.get(i + 1).ok_or("a quoted path ends in a backslash")?;
        i += 2;
        out.push(match c {
            b'a' => 7,
            b'b' => 8,
            b'f' => 12,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 11,
            b'\\' | b'"' => c,
            b'0'..=b'3' => {
                let digits = b.get(i - 1..i + 2).ok_or("a short octal escape in a quoted path")?;
                i += 2;
                let s = std::str::from_utf8(digits).map_err(|_| "a bad octal escape")?;
                u8::from_str_radix(s, 8).map_err(|_| "a bad octal escape in a quoted path")?
            }
            other => return Err(format!("an unknown escape \\{} in a quoted path", other as char)),
        });
    }
    String::from_utf8(out).map_err(|_| "a quoted path is not UTF-8".to_string())
}

/// `git init`: `--template=<dir>` copies hooks and files from any directory;
/// `--separate-git-dir` puts the git directory anywhere and writes `core.worktree`;
/// `--shared` writes `core.sharedRepository` (who may write the repository).
fn init(args: &[String]) -> Result<Action, String> {
    let p = scan(args, INIT_OPTS)?;
    let mut a = Action::new("init");
    if on(&p, "template") {
        a.add("template");
    }
    if on(&p, "separate-git-dir") {
        a.add("separate-git-dir");
    }
    if on(&p, "shared") {
        a.add("shared");
    }
    Ok(a)
}

/// `--check`, `--stat`, `--numstat` and `--summary` only show, unless `--apply` asks for both.
fn apply_shows_only(p: &Parsed) -> bool {
    ["check", "stat", "numstat", "summary"].iter().any(|id| on(p, id)) && !on(p, "apply")
}

/// `git apply --unsafe-paths` writes outside the working tree; `--check`, `--stat`,
/// `--numstat` and `--summary` only show, unless `--apply` asks for both. The patches are read
/// by the gate first (as `am`'s mailboxes are), and every path they name is declared a write
/// (`-p`, `--directory` applied; with `--cached` too, since a later checkout writes what the
/// index holds), so the local-write model judges a patch that creates `.claude/settings.json`
/// or `.git/config` as it judges `curl -o`. A patch the gate did not read is marked
/// `patch-unread`, which the policy refuses.
fn apply(args: &[String], cx: &mut Cx) -> Result<Action, String> {
    let p = scan(args, APPLY_OPTS)?;
    if apply_shows_only(&p) {
        return Ok(dry("apply"));
    }
    let mut a = Action::new("apply");
    if on(&p, "unsafe-paths") {
        a.add("unsafe-paths");
    }
    let strip = match p.last("p") {
        Some(n) => n.parse::<usize>().map_err(|_| format!("git apply -p{n}: not a number"))?,
        None => 1,
    };
    let directory = p.last("directory").map(str::to_string);
    let texts: Vec<Input> = if p.positionals().is_empty() {
        vec![cx.inputs.stdin.clone()]
    } else {
        cx.inputs.files.clone()
    };
    let mut paths = Vec::new();
    for t in &texts {
        match t {
            Input::Text(text) => paths.extend(patch_paths(text, strip, directory.as_deref())?),
            // Not read (a policy example, a terminal, a file the gate could not read): what it
            // writes is unknown, which the policy refuses (`patch-unread`).
            _ => a.add("patch-unread"),
        }
    }
    if texts.is_empty() {
        a.add("patch-unread");
    }
    if !a.marks.contains("patch-unread") {
        for path in paths {
            cx.writes(&path, "apply");
        }
    }
    Ok(a)
}

// ---------------------------------------------------------------------------------------------
// Configuration keys that run a program or redirect a write

/// Which subsection a key rule applies to.
#[derive(Clone, Copy)]
enum Sub {
    /// `section.name`.
    No,
    /// `section.<anything>.name`.
    Any,
    /// Either.
    Both,
    /// `section.<this>.name` (compared without regard to case).
    Is(&'static str),
}

/// When a key's value makes it dangerous.
#[derive(Clone, Copy)]
enum When {
    Always,
    /// The value starts with `!` (a shell command).
    Bang,
    /// git reads the value as true.
    True,
    /// git reads the value as anything but false.
    NotFalse,
    /// git reads the value as false.
    False,
    /// One of these (compared without regard to case).
    OneOf(&'static [&'static str]),
    /// A fetch refspec that writes anywhere but `refs/remotes/<this remote>/`.
    FetchRefspec,
    /// A URL git hands to a remote helper it does not ship.
    HelperUrl,
    /// The value holds a `/` (a file name that reaches into another directory).
    Slash,
}

const RUNS: &str = "runs a program";
const SHELL: &str = "runs a shell command";

/// `(section, subsection, names, when, why)`: the configuration keys that run a program or
/// redirect a write, from git's `Documentation/config/*` (git 2.47) and git-lfs. Keys git
/// itself reads only from protected configuration (`safe.*`) are absent: the gate's own
/// `safe.bareRepository=explicit` comes from the command line, which wins.
const CONFIG_KEYS: &[(&str, Sub, &[&str], When, &str)] = &[
    ("alias", Sub::No, &["*"], When::Bang, SHELL),
    ("core", Sub::No, &["fsmonitor"], When::NotFalse, RUNS),
    ("core", Sub::No, &["hookspath"], When::Always, "runs hooks from another directory"),
    (
        "core",
        Sub::No,
        &["pager", "editor", "askpass", "sshcommand", "gitproxy", "alternaterefscommand"],
        When::Always,
        RUNS,
    ),
    ("core", Sub::No, &["worktree"], When::Always, "points the work tree elsewhere"),
    (
        "core",
        Sub::No,
        &["sharedrepository"],
        When::NotFalse,
        "changes who may write the repository",
    ),
    (
        "core",
        Sub::No,
        &["protectntfs", "protecthfs"],
        When::False,
        "turns off git's protection of .git",
    ),
    ("sequence", Sub::No, &["editor"], When::Always, RUNS),
    ("pager", Sub::No, &["*"], When::Always, RUNS),
    ("diff", Sub::No, &["external", "guitool"], When::Always, RUNS),
    ("diff", Sub::Any, &["command", "textconv"], When::Always, RUNS),
    ("difftool", Sub::Any, &["cmd", "path"], When::Always, RUNS),
    ("mergetool", Sub::Any, &["cmd", "path"], When::Always, RUNS),
    ("merge", Sub::Any, &["driver"], When::Always, RUNS),
    ("filter", Sub::Any, &["clean", "smudge", "process"], When::Always, RUNS),
    ("credential", Sub::Both, &["helper"], When::Always, RUNS),
    ("gpg", Sub::Both, &["program"], When::Always, RUNS),
    ("gpg", Sub::Is("ssh"), &["defaultkeycommand"], When::Always, RUNS),
    ("man", Sub::No, &["viewer"], When::Always, RUNS),
    ("man", Sub::Any, &["cmd", "path"], When::Always, RUNS),
    ("help", Sub::No, &["browser"], When::Always, RUNS),
    ("help", Sub::No, &["format"], When::OneOf(&["web", "html"]), "runs a browser"),
    ("browser", Sub::Any, &["cmd", "path"], When::Always, RUNS),
    ("web", Sub::No, &["browser"], When::Always, RUNS),
    ("instaweb", Sub::No, &["*"], When::Always, RUNS),
    ("guitool", Sub::Any, &["cmd"], When::Always, SHELL),
    ("remote", Sub::Any, &["push", "pushurl"], When::Always, "redirects a push"),
    ("remote", Sub::Any, &["receivepack", "uploadpack"], When::Always, RUNS),
    ("remote", Sub::Any, &["vcs"], When::Always, "runs a remote helper"),
    (
        "remote",
        Sub::Any,
        &["url"],
        When::HelperUrl,
        "runs a remote helper git does not ship",
    ),
    ("remote", Sub::Any, &["proxy"], When::Always, "redirects where git connects"),
    (
        "remote",
        Sub::Any,
        &["mirror"],
        When::NotFalse,
        "pushes every ref, deletions included",
    ),
    (
        "remote",
        Sub::Any,
        &["fetch"],
        When::FetchRefspec,
        "writes local refs on every fetch",
    ),
    ("remote", Sub::Any, &["prunetags"], When::True, "deletes local tags on every fetch"),
    (
        "url",
        Sub::Any,
        &["insteadof", "pushinsteadof"],
        When::Always,
        "rewrites where git connects",
    ),
    (
        "include",
        Sub::No,
        &["path"],
        When::Always,
        "makes git read another file as configuration",
    ),
    (
        "includeif",
        Sub::Any,
        &["path"],
        When::Always,
        "makes git read another file as configuration",
    ),
    ("submodule", Sub::Any, &["update"], When::Bang, SHELL),
    (
        "submodule",
        Sub::No,
        &["recurse"],
        When::True,
        "runs git in submodules, whose configuration the gate does not read",
    ),
    (
        "protocol",
        Sub::Both,
        &["allow"],
        When::OneOf(&["always"]),
        "allows transports the gate forbids",
    ),
    ("uploadpack", Sub::No, &["packobjectshook"], When::Always, RUNS),
    ("gc", Sub::No, &["recentobjectshook"], When::Always, RUNS),
    ("tar", Sub::Any, &["command"], When::Always, RUNS),
    ("interactive", Sub::No, &["difffilter"], When::Always, RUNS),
    ("trailer", Sub::Any, &["command", "cmd"], When::Always, SHELL),
    ("hook", Sub::Any, &["command"], When::Always, RUNS),
    ("imap", Sub::No, &["tunnel"], When::Always, RUNS),
    (
        "sendemail",
        Sub::Both,
        &["tocmd", "cccmd", "headercmd", "smtpserver"],
        When::Always,
        RUNS,
    ),
    ("lfs", Sub::Any, &["path", "clean", "smudge", "process"], When::Always, RUNS),
    ("http", Sub::Both, &["savecookies"], When::True, "writes a cookie file"),
    (
        "trace2",
        Sub::No,
        &["eventtarget", "normaltarget", "perftarget"],
        When::Always,
        "writes a trace file",
    ),
    ("format", Sub::No, &["outputdirectory"], When::Always, "writes files elsewhere"),
    ("format", Sub::No, &["suffix"], When::Slash, "writes files elsewhere"),
    (
        "rebase",
        Sub::No,
        &["updaterefs"],
        When::True,
        "rewrites other branches on every rebase",
    ),
    ("fetch", Sub::No, &["prunetags"], When::True, "deletes local tags on every fetch"),
    (
        "push",
        Sub::No,
        &["recursesubmodules"],
        When::OneOf(&["on-demand", "only"]),
        "pushes submodules along",
    ),
    (
        "push",
        Sub::No,
        &["default"],
        When::OneOf(&["upstream", "tracking"]),
        "sends a branch to its upstream, not where argv says",
    ),
    (
        "commit",
        Sub::No,
        &["template"],
        When::Always,
        "reads a file into every commit message",
    ),
];

/// git's boolean reading of a configuration value: `Some(true)`, `Some(false)`, or `None` for
/// a value that is not a boolean. A key without `=` is true.
fn config_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "" | "true" | "yes" | "on" => Some(true),
        "false" | "no" | "off" => Some(false),
        n => n.parse::<i64>().ok().map(|i| i != 0),
    }
}

/// A `remote.<name>.fetch` value that stores only into that remote's own tracking refs.
fn tracking_refspec(remote: &str, value: &str) -> bool {
    let v = value.trim();
    if v.starts_with('^') {
        return true;
    }
    let body = v.trim_start_matches('+');
    match body.split_once(':') {
        None => true,
        Some((_, "")) => true,
        Some((src, dst)) => {
            (src.starts_with("refs/heads/") || src.starts_with("refs/tags/"))
                && dst
                    .strip_prefix("refs/remotes/")
                    .and_then(|d| d.strip_prefix(remote))
                    .is_some_and(|d| d.starts_with('/'))
        }
    }
}

/// Why the configuration key `key` with `value` runs a program or redirects a write, or
/// `None` when it does neither. `key` as `git config --list` prints it: the section and the
/// name lower-case, a subsection as written (`url.https://x/.insteadof`).
pub fn config_key(key: &str, value: &str) -> Option<&'static str> {
    let (section, rest) = key.split_once('.')?;
    let (sub, name) = match rest.rsplit_once('.') {
        Some((s, n)) => (Some(s), n),
        None => (None, rest),
    };
    let (section, name) = (section.to_ascii_lowercase(), name.to_ascii_lowercase());
    for (sec, want_sub, names, when, why) in CONFIG_KEYS {
        if *sec != section || !(names.contains(&"*") || names.contains(&name.as_str())) {
            continue;
        }
        let sub_ok = match (want_sub, sub) {
            (Sub::No, None) | (Sub::Any, Some(_)) | (Sub::Both, _) => true,
            (Sub::Is(x), Some(s)) => s.eq_ignore_ascii_case(x),
            _ => false,
        };
        if !sub_ok {
            continue;
        }
        let hit = match when {
            When::Always => true,
            When::Bang => value.trim_start().starts_with('!'),
            When::True => config_bool(value) == Some(true),
            When::NotFalse => config_bool(value) != Some(false) && !matches!(value.to_ascii_lowercase().as_str(), "umask"),
            When::False => config_bool(value) == Some(false),
            When::OneOf(vs) => vs.iter().any(|x| x.eq_ignore_ascii_case(value.trim())),
            When::FetchRefspec => !tracking_refspec(sub.unwrap_or_default(), value),
            When::HelperUrl => is_helper_url(value.trim()),
            When::Slash => value.contains('/'),
        };
        if hit {
            return Some(why);
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Option tables, from `git <cmd> --help-all` (git 2.47, hidden options included). Every long
// name is listed as git spells it without `--[no-]`; the scanner resolves unique prefixes and
// `--no-` negation over exactly these names, as parse-options does.

/// `git remote prune` (builtin/remote.c).
const REMOTE_PRUNE_OPTS: &[Opt] = &[Opt::flag("dry-run", &["dry-run"], &['n'])];

/// `git worktree prune` (builtin/worktree.c).
const WORKTREE_PRUNE_OPTS: &[Opt] = &[
    Opt::flag("dry-run", &["dry-run"], &['n']),
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::value("expire", &["expire"], &[]),
];

/// `git reflog expire` and `git reflog delete` (builtin/reflog.c; `delete` has no `--expire*`,
/// `--stale-fix`, `--all` or `--single-worktree`, which git then refuses).
const REFLOG_EXPIRE_OPTS: &[Opt] = &[
    Opt::flag("dry-run", &["dry-run"], &['n']),
    Opt::flag("rewrite", &["rewrite"], &[]),
    Opt::flag("updateref", &["updateref"], &[]),
    Opt::flag("verbose", &["verbose"], &[]),
    Opt::value("expire", &["expire"], &[]),
    Opt::value("expire-unreachable", &["expire-unreachable"], &[]),
    Opt::flag("stale-fix", &["stale-fix"], &[]),
    Opt::flag("all", &["all"], &[]),
    Opt::flag("single-worktree", &["single-worktree"], &[]),
];

/// `git remote`: the only option before the subcommand.
const REMOTE_OPTS: &[Opt] = &[Opt::flag("verbose", &["verbose"], &['v'])];

/// `git push` (builtin/push.c).
const PUSH_OPTS: &[Opt] = &[
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::value("repo", &["repo"], &[]),
    Opt::flag("all", &["all"], &[]),
    Opt::flag("branches", &["branches"], &[]),
    Opt::flag("mirror", &["mirror"], &[]),
    Opt::flag("delete", &["delete"], &['d']),
    Opt::flag("tags", &["tags"], &[]),
    Opt::flag("dry-run", &["dry-run"], &['n']),
    Opt::flag("porcelain", &["porcelain"], &[]),
    Opt::flag("force", &["force"], &['f']),
    Opt::opt_value("force-with-lease", &["force-with-lease"], &[]),
    Opt::flag("force-if-includes", &["force-if-includes"], &[]),
    Opt::value("recurse-submodules", &["recurse-submodules"], &[]),
    Opt::flag("thin", &["thin"], &[]),
    Opt::value("receive-pack", &["receive-pack"], &[]),
    Opt::value("exec", &["exec"], &[]),
    Opt::flag("set-upstream", &["set-upstream"], &['u']),
    Opt::flag("progress", &["progress"], &[]),
    Opt::flag("prune", &["prune"], &[]),
    Opt::flag("no-verify", &["no-verify"], &[]),
    Opt::flag("verify", &["verify"], &[]),
    Opt::flag("follow-tags", &["follow-tags"], &[]),
    Opt::opt_value("signed", &["signed"], &[]),
    Opt::flag("atomic", &["atomic"], &[]),
    Opt::value("push-option", &["push-option"], &['o']),
    Opt::flag("ipv4", &["ipv4"], &['4']),
    Opt::flag("ipv6", &["ipv6"], &['6']),
];

/// `git commit` (builtin/commit.c, git 2.47).
const COMMIT_OPTS: &[Opt] = &[
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::value("file", &["file"], &['F']),
    Opt::value("author", &["author"], &[]),
    Opt::value("date", &["date"], &[]),
    Opt::value("message", &["message"], &['m']),
    Opt::value("reedit-message", &["reedit-message"], &['c']),
    Opt::value("reuse-message", &["reuse-message"], &['C']),
    Opt::value("fixup", &["fixup"], &[]),
    Opt::value("squash", &["squash"], &[]),
    Opt::flag("reset-author", &["reset-author"], &[]),
    Opt::value("trailer", &["trailer"], &[]),
    Opt::flag("signoff", &["signoff"], &['s']),
    Opt::value("template", &["template"], &['t']),
    Opt::flag("edit", &["edit"], &['e']),
    Opt::value("cleanup", &["cleanup"], &[]),
    Opt::flag("status", &["status"], &[]),
    Opt::opt_value("gpg-sign", &["gpg-sign"], &['S']),
    Opt::flag("all", &["all"], &['a']),
    Opt::flag("include", &["include"], &['i']),
    Opt::flag("interactive", &["interactive"], &[]),
    Opt::flag("patch", &["patch"], &['p']),
    Opt::flag("only", &["only"], &['o']),
    Opt::flag("no-verify", &["no-verify"], &['n']),
    Opt::flag("verify", &["verify"], &[]),
    Opt::flag("dry-run", &["dry-run"], &[]),
    Opt::flag("short", &["short"], &[]),
    Opt::flag("branch", &["branch"], &[]),
    Opt::flag("ahead-behind", &["ahead-behind"], &[]),
    Opt::flag("porcelain", &["porcelain"], &[]),
    Opt::flag("long", &["long"], &[]),
    Opt::flag("null", &["null"], &['z']),
    Opt::flag("amend", &["amend"], &[]),
    Opt::flag("post-rewrite", &["post-rewrite"], &[]),
    Opt::opt_value("untracked-files", &["untracked-files"], &['u']),
    Opt::value("pathspec-from-file", &["pathspec-from-file"], &[]),
    Opt::flag("pathspec-file-nul", &["pathspec-file-nul"], &[]),
    Opt::flag("allow-empty", &["allow-empty"], &[]),
    Opt::flag("allow-empty-message", &["allow-empty-message"], &[]),
];

/// `git fetch` (builtin/fetch.c).
const FETCH_OPTS: &[Opt] = &[
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("all", &["all"], &[]),
    Opt::flag("set-upstream", &["set-upstream"], &[]),
    Opt::flag("append", &["append"], &['a']),
    Opt::flag("atomic", &["atomic"], &[]),
    Opt::value("upload-pack", &["upload-pack"], &[]),
    Opt::flag("force", &["force"], &['f']),
    Opt::flag("multiple", &["multiple"], &['m']),
    Opt::flag("tags", &["tags"], &['t']),
    Opt::flag("n", &[], &['n']),
    Opt::value("jobs", &["jobs"], &['j']),
    Opt::flag("prefetch", &["prefetch"], &[]),
    Opt::flag("prune", &["prune"], &['p']),
    Opt::flag("prune-tags", &["prune-tags"], &['P']),
    Opt::opt_value("recurse-submodules", &["recurse-submodules"], &[]),
    Opt::flag("dry-run", &["dry-run"], &[]),
    Opt::flag("porcelain", &["porcelain"], &[]),
    Opt::flag("write-fetch-head", &["write-fetch-head"], &[]),
    Opt::flag("keep", &["keep"], &['k']),
    Opt::flag("update-head-ok", &["update-head-ok"], &['u']),
    Opt::flag("progress", &["progress"], &[]),
    Opt::value("depth", &["depth"], &[]),
    Opt::value("shallow-since", &["shallow-since"], &[]),
    Opt::value("shallow-exclude", &["shallow-exclude"], &[]),
    Opt::value("deepen", &["deepen"], &[]),
    Opt::flag("unshallow", &["unshallow"], &[]),
    Opt::flag("refetch", &["refetch"], &[]),
    Opt::value("submodule-prefix", &["submodule-prefix"], &[]),
    Opt::value("recurse-submodules-default", &["recurse-submodules-default"], &[]),
    Opt::flag("update-shallow", &["update-shallow"], &[]),
    Opt::value("refmap", &["refmap"], &[]),
    Opt::value("server-option", &["server-option"], &['o']),
    Opt::flag("ipv4", &["ipv4"], &['4']),
    Opt::flag("ipv6", &["ipv6"], &['6']),
    Opt::value("negotiation-tip", &["negotiation-tip"], &[]),
    Opt::flag("negotiate-only", &["negotiate-only"], &[]),
    Opt::value("filter", &["filter"], &[]),
    Opt::flag("auto-maintenance", &["auto-maintenance"], &[]),
    Opt::flag("auto-gc", &["auto-gc"], &[]),
    Opt::flag("show-forced-updates", &["show-forced-updates"], &[]),
    Opt::flag("write-commit-graph", &["write-commit-graph"], &[]),
    Opt::flag("stdin", &["stdin"], &[]),
];

/// `git pull` (builtin/pull.c): its merge options and the fetch options it passes on.
const PULL_OPTS: &[Opt] = &[
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("progress", &["progress"], &[]),
    Opt::opt_value("recurse-submodules", &["recurse-submodules"], &[]),
    Opt::opt_value("rebase", &["rebase"], &['r']),
    Opt::flag("n", &[], &['n']),
    Opt::flag("stat", &["stat"], &[]),
    Opt::flag("summary", &["summary"], &[]),
    Opt::opt_value("log", &["log"], &[]),
    Opt::opt_value("signoff", &["signoff"], &[]),
    Opt::flag("squash", &["squash"], &[]),
    Opt::flag("commit", &["commit"], &[]),
    Opt::flag("edit", &["edit"], &[]),
    Opt::value("cleanup", &["cleanup"], &[]),
    Opt::flag("ff", &["ff"], &[]),
    Opt::flag("ff-only", &["ff-only"], &[]),
    Opt::flag("verify", &["verify"], &[]),
    Opt::flag("verify-signatures", &["verify-signatures"], &[]),
    Opt::flag("autostash", &["autostash"], &[]),
    Opt::value("strategy", &["strategy"], &['s']),
    Opt::value("strategy-option", &["strategy-option"], &['X']),
    Opt::opt_value("gpg-sign", &["gpg-sign"], &['S']),
    Opt::flag("allow-unrelated-histories", &["allow-unrelated-histories"], &[]),
    Opt::flag("all", &["all"], &[]),
    Opt::flag("append", &["append"], &['a']),
    Opt::value("upload-pack", &["upload-pack"], &[]),
    Opt::flag("force", &["force"], &['f']),
    Opt::flag("tags", &["tags"], &['t']),
    Opt::flag("prune", &["prune"], &['p']),
    Opt::opt_value("jobs", &["jobs"], &['j']),
    Opt::flag("dry-run", &["dry-run"], &[]),
    Opt::flag("keep", &["keep"], &['k']),
    Opt::value("depth", &["depth"], &[]),
    Opt::value("shallow-since", &["shallow-since"], &[]),
    Opt::value("shallow-exclude", &["shallow-exclude"], &[]),
    Opt::value("deepen", &["deepen"], &[]),
    Opt::flag("unshallow", &["unshallow"], &[]),
    Opt::flag("update-shallow", &["update-shallow"], &[]),
    Opt::value("refmap", &["refmap"], &[]),
    Opt::value("server-option", &["server-option"], &['o']),
    Opt::flag("ipv4", &["ipv4"], &['4']),
    Opt::flag("ipv6", &["ipv6"], &['6']),
    Opt::value("negotiation-tip", &["negotiation-tip"], &[]),
    Opt::flag("show-forced-updates", &["show-forced-updates"], &[]),
    Opt::flag("set-upstream", &["set-upstream"], &[]),
];

/// `git clone` (builtin/clone.c).
const CLONE_OPTS: &[Opt] = &[
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("progress", &["progress"], &[]),
    Opt::flag("reject-shallow", &["reject-shallow"], &[]),
    Opt::flag("no-checkout", &["no-checkout"], &['n']),
    Opt::flag("checkout", &["checkout"], &[]),
    Opt::flag("bare", &["bare"], &[]),
    Opt::flag("naked", &["naked"], &[]),
    Opt::flag("mirror", &["mirror"], &[]),
    Opt::flag("local", &["local"], &['l']),
    Opt::flag("no-hardlinks", &["no-hardlinks"], &[]),
    Opt::flag("hardlinks", &["hardlinks"], &[]),
    Opt::flag("shared", &["shared"], &['s']),
    Opt::opt_value("recurse-submodules", &["recurse-submodules"], &[]),
    Opt::opt_value("recursive", &["recursive"], &[]),
    Opt::value("jobs", &["jobs"], &['j']),
    Opt::value("template", &["template"], &[]),
    Opt::value("reference", &["reference"], &[]),
    Opt::value("reference-if-able", &["reference-if-able"], &[]),
    Opt::flag("dissociate", &["dissociate"], &[]),
    Opt::value("origin", &["origin"], &['o']),
    Opt::value("branch", &["branch"], &['b']),
    Opt::value("upload-pack", &["upload-pack"], &['u']),
    Opt::value("depth", &["depth"], &[]),
    Opt::value("shallow-since", &["shallow-since"], &[]),
    Opt::value("shallow-exclude", &["shallow-exclude"], &[]),
    Opt::flag("single-branch", &["single-branch"], &[]),
    Opt::flag("no-tags", &["no-tags"], &[]),
    Opt::flag("tags", &["tags"], &[]),
    Opt::flag("shallow-submodules", &["shallow-submodules"], &[]),
    Opt::value("separate-git-dir", &["separate-git-dir"], &[]),
    Opt::value("ref-format", &["ref-format"], &[]),
    Opt::value("config", &["config"], &['c']),
    Opt::value("server-option", &["server-option"], &[]),
    Opt::flag("ipv4", &["ipv4"], &['4']),
    Opt::flag("ipv6", &["ipv6"], &['6']),
    Opt::value("filter", &["filter"], &[]),
    Opt::flag("also-filter-submodules", &["also-filter-submodules"], &[]),
    Opt::flag("remote-submodules", &["remote-submodules"], &[]),
    Opt::flag("sparse", &["sparse"], &[]),
    Opt::value("bundle-uri", &["bundle-uri"], &[]),
];

/// `git ls-remote` (builtin/ls-remote.c).
const LS_REMOTE_OPTS: &[Opt] = &[
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::value("upload-pack", &["upload-pack"], &[]),
    Opt::value("exec", &["exec"], &[]),
    Opt::flag("tags", &["tags"], &['t']),
    Opt::flag("branches", &["branches"], &['b']),
    Opt::flag("heads", &["heads"], &['h']),
    Opt::flag("refs", &["refs"], &[]),
    Opt::flag("get-url", &["get-url"], &[]),
    Opt::value("sort", &["sort"], &[]),
    Opt::flag("exit-code", &["exit-code"], &[]),
    Opt::flag("symref", &["symref"], &[]),
    Opt::value("server-option", &["server-option"], &['o']),
];

/// `git grep` (builtin/grep.c); `-<num>` is handled before the scan.
const GREP_OPTS: &[Opt] = &[
    Opt::flag("cached", &["cached"], &[]),
    Opt::flag("no-index", &["no-index"], &[]),
    Opt::flag("index", &["index"], &[]),
    Opt::flag("untracked", &["untracked"], &[]),
    Opt::flag("exclude-standard", &["exclude-standard"], &[]),
    Opt::flag("recurse-submodules", &["recurse-submodules"], &[]),
    Opt::flag("invert-match", &["invert-match"], &['v']),
    Opt::flag("ignore-case", &["ignore-case"], &['i']),
    Opt::flag("word-regexp", &["word-regexp"], &['w']),
    Opt::flag("text", &["text"], &['a']),
    Opt::flag("I", &[], &['I']),
    Opt::flag("textconv", &["textconv"], &[]),
    Opt::flag("recursive", &["recursive"], &['r']),
    Opt::value("max-depth", &["max-depth"], &[]),
    Opt::flag("extended-regexp", &["extended-regexp"], &['E']),
    Opt::flag("basic-regexp", &["basic-regexp"], &['G']),
    Opt::flag("fixed-strings", &["fixed-strings"], &['F']),
    Opt::flag("perl-regexp", &["perl-regexp"], &['P']),
    Opt::flag("line-number", &["line-number"], &['n']),
    Opt::flag("column", &["column"], &[]),
    Opt::flag("h", &[], &['h']),
    Opt::flag("H", &[], &['H']),
    Opt::flag("full-name", &["full-name"], &[]),
    Opt::flag("files-with-matches", &["files-with-matches"], &['l']),
    Opt::flag("name-only", &["name-only"], &[]),
    Opt::flag("files-without-match", &["files-without-match"], &['L']),
    Opt::flag("null", &["null"], &['z']),
    Opt::flag("only-matching", &["only-matching"], &['o']),
    Opt::flag("count", &["count"], &['c']),
    Opt::opt_value("color", &["color"], &[]),
    Opt::flag("break", &["break"], &[]),
    Opt::flag("heading", &["heading"], &[]),
    Opt::value("context", &["context"], &['C']),
    Opt::value("before-context", &["before-context"], &['B']),
    Opt::value("after-context", &["after-context"], &['A']),
    Opt::value("threads", &["threads"], &[]),
    Opt::flag("None", &[], &[]),
    Opt::flag("show-function", &["show-function"], &['p']),
    Opt::flag("function-context", &["function-context"], &['W']),
    Opt::value("f", &[], &['f']),
    Opt::value("e", &[], &['e']),
    Opt::flag("and", &["and"], &[]),
    Opt::flag("or", &["or"], &[]),
    Opt::flag("not", &["not"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("all-match", &["all-match"], &[]),
    Opt::opt_value("open-files-in-pager", &["open-files-in-pager"], &['O']),
    Opt::flag("ext-grep", &["ext-grep"], &[]),
    Opt::value("max-count", &["max-count"], &['m']),
];

/// `git branch` (builtin/branch.c).
const BRANCH_OPTS: &[Opt] = &[
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::opt_value("track", &["track"], &['t']),
    Opt::flag("set-upstream", &["set-upstream"], &[]),
    Opt::value("set-upstream-to", &["set-upstream-to"], &['u']),
    Opt::flag("unset-upstream", &["unset-upstream"], &[]),
    Opt::opt_value("color", &["color"], &[]),
    Opt::flag("remotes", &["remotes"], &['r']),
    Opt::value("contains", &["contains"], &[]),
    Opt::value("no-contains", &["no-contains"], &[]),
    Opt::value("with", &["with"], &[]),
    Opt::value("without", &["without"], &[]),
    Opt::opt_value("abbrev", &["abbrev"], &[]),
    Opt::flag("all", &["all"], &['a']),
    Opt::flag("delete", &["delete"], &['d']),
    Opt::flag("D", &[], &['D']),
    Opt::flag("move", &["move"], &['m']),
    Opt::flag("M", &[], &['M']),
    Opt::flag("omit-empty", &["omit-empty"], &[]),
    Opt::flag("copy", &["copy"], &['c']),
    Opt::flag("C", &[], &['C']),
    Opt::flag("list", &["list"], &['l']),
    Opt::flag("show-current", &["show-current"], &[]),
    Opt::flag("create-reflog", &["create-reflog"], &[]),
    Opt::flag("edit-description", &["edit-description"], &[]),
    Opt::flag("force", &["force"], &['f']),
    Opt::value("merged", &["merged"], &[]),
    Opt::value("no-merged", &["no-merged"], &[]),
    Opt::opt_value("column", &["column"], &[]),
    Opt::value("sort", &["sort"], &[]),
    Opt::value("points-at", &["points-at"], &[]),
    Opt::flag("ignore-case", &["ignore-case"], &['i']),
    Opt::flag("recurse-submodules", &["recurse-submodules"], &[]),
    Opt::value("format", &["format"], &[]),
];

/// `git tag` (builtin/tag.c).
const TAG_OPTS: &[Opt] = &[
    Opt::flag("list", &["list"], &['l']),
    Opt::opt_value("n", &[], &['n']),
    Opt::flag("delete", &["delete"], &['d']),
    Opt::flag("verify", &["verify"], &['v']),
    Opt::flag("annotate", &["annotate"], &['a']),
    Opt::value("message", &["message"], &['m']),
    Opt::value("file", &["file"], &['F']),
    Opt::value("trailer", &["trailer"], &[]),
    Opt::flag("edit", &["edit"], &['e']),
    Opt::flag("sign", &["sign"], &['s']),
    Opt::value("cleanup", &["cleanup"], &[]),
    Opt::value("local-user", &["local-user"], &['u']),
    Opt::flag("force", &["force"], &['f']),
    Opt::flag("create-reflog", &["create-reflog"], &[]),
    Opt::opt_value("column", &["column"], &[]),
    Opt::value("contains", &["contains"], &[]),
    Opt::value("no-contains", &["no-contains"], &[]),
    Opt::value("with", &["with"], &[]),
    Opt::value("without", &["without"], &[]),
    Opt::value("merged", &["merged"], &[]),
    Opt::value("no-merged", &["no-merged"], &[]),
    Opt::flag("omit-empty", &["omit-empty"], &[]),
    Opt::value("sort", &["sort"], &[]),
    Opt::value("points-at", &["points-at"], &[]),
    Opt::value("format", &["format"], &[]),
    Opt::opt_value("color", &["color"], &[]),
    Opt::flag("ignore-case", &["ignore-case"], &['i']),
];

/// `git config` in its legacy form, without a subcommand word (builtin/config.c).
const CONFIG_OPTS: &[Opt] = &[
    Opt::flag("global", &["global"], &[]),
    Opt::flag("system", &["system"], &[]),
    Opt::flag("local", &["local"], &[]),
    Opt::flag("worktree", &["worktree"], &[]),
    Opt::value("file", &["file"], &['f']),
    Opt::value("blob", &["blob"], &[]),
    Opt::flag("get", &["get"], &[]),
    Opt::flag("get-all", &["get-all"], &[]),
    Opt::flag("get-regexp", &["get-regexp"], &[]),
    Opt::flag("get-urlmatch", &["get-urlmatch"], &[]),
    Opt::flag("replace-all", &["replace-all"], &[]),
    Opt::flag("add", &["add"], &[]),
    Opt::flag("unset", &["unset"], &[]),
    Opt::flag("unset-all", &["unset-all"], &[]),
    Opt::flag("rename-section", &["rename-section"], &[]),
    Opt::flag("remove-section", &["remove-section"], &[]),
    Opt::flag("list", &["list"], &['l']),
    Opt::flag("edit", &["edit"], &['e']),
    Opt::flag("get-color", &["get-color"], &[]),
    Opt::flag("get-colorbool", &["get-colorbool"], &[]),
    Opt::flag("null", &["null"], &['z']),
    Opt::flag("name-only", &["name-only"], &[]),
    Opt::flag("show-origin", &["show-origin"], &[]),
    Opt::flag("show-scope", &["show-scope"], &[]),
    Opt::flag("show-names", &["show-names"], &[]),
    Opt::value("type", &["type"], &['t']),
    Opt::flag("bool", &["bool"], &[]),
    Opt::flag("int", &["int"], &[]),
    Opt::flag("bool-or-int", &["bool-or-int"], &[]),
    Opt::flag("bool-or-str", &["bool-or-str"], &[]),
    Opt::flag("path", &["path"], &[]),
    Opt::flag("expiry-date", &["expiry-date"], &[]),
    Opt::value("default", &["default"], &[]),
    Opt::value("comment", &["comment"], &[]),
    Opt::flag("fixed-value", &["fixed-value"], &[]),
    Opt::flag("includes", &["includes"], &[]),
];

/// `git checkout` (builtin/checkout.c).
const CHECKOUT_OPTS: &[Opt] = &[
    Opt::value("b", &[], &['b']),
    Opt::value("B", &[], &['B']),
    Opt::flag("l", &[], &['l']),
    Opt::flag("guess", &["guess"], &[]),
    Opt::flag("overlay", &["overlay"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::opt_value("recurse-submodules", &["recurse-submodules"], &[]),
    Opt::flag("progress", &["progress"], &[]),
    Opt::flag("merge", &["merge"], &['m']),
    Opt::value("conflict", &["conflict"], &[]),
    Opt::flag("detach", &["detach"], &['d']),
    Opt::opt_value("track", &["track"], &['t']),
    Opt::flag("force", &["force"], &['f']),
    Opt::value("orphan", &["orphan"], &[]),
    Opt::flag("overwrite-ignore", &["overwrite-ignore"], &[]),
    Opt::flag("ignore-other-worktrees", &["ignore-other-worktrees"], &[]),
    Opt::flag("ours", &["ours"], &['2']),
    Opt::flag("theirs", &["theirs"], &['3']),
    Opt::flag("patch", &["patch"], &['p']),
    Opt::flag("ignore-skip-worktree-bits", &["ignore-skip-worktree-bits"], &[]),
    Opt::value("pathspec-from-file", &["pathspec-from-file"], &[]),
    Opt::flag("pathspec-file-nul", &["pathspec-file-nul"], &[]),
];

/// `git switch` (builtin/checkout.c).
const SWITCH_OPTS: &[Opt] = &[
    Opt::value("create", &["create"], &['c']),
    Opt::value("force-create", &["force-create"], &['C']),
    Opt::flag("guess", &["guess"], &[]),
    Opt::flag("discard-changes", &["discard-changes"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::opt_value("recurse-submodules", &["recurse-submodules"], &[]),
    Opt::flag("progress", &["progress"], &[]),
    Opt::flag("merge", &["merge"], &['m']),
    Opt::value("conflict", &["conflict"], &[]),
    Opt::flag("detach", &["detach"], &['d']),
    Opt::opt_value("track", &["track"], &['t']),
    Opt::flag("force", &["force"], &['f']),
    Opt::value("orphan", &["orphan"], &[]),
    Opt::flag("overwrite-ignore", &["overwrite-ignore"], &[]),
    Opt::flag("ignore-other-worktrees", &["ignore-other-worktrees"], &[]),
];

/// `git reset` (builtin/reset.c).
const RESET_OPTS: &[Opt] = &[
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("no-refresh", &["no-refresh"], &[]),
    Opt::flag("refresh", &["refresh"], &[]),
    Opt::flag("mixed", &["mixed"], &[]),
    Opt::flag("soft", &["soft"], &[]),
    Opt::flag("hard", &["hard"], &[]),
    Opt::flag("merge", &["merge"], &[]),
    Opt::flag("keep", &["keep"], &[]),
    Opt::opt_value("recurse-submodules", &["recurse-submodules"], &[]),
    Opt::flag("patch", &["patch"], &['p']),
    Opt::flag("intent-to-add", &["intent-to-add"], &['N']),
    Opt::value("pathspec-from-file", &["pathspec-from-file"], &[]),
    Opt::flag("pathspec-file-nul", &["pathspec-file-nul"], &[]),
];

/// `git rm` (builtin/rm.c).
const RM_OPTS: &[Opt] = &[
    Opt::flag("dry-run", &["dry-run"], &['n']),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("cached", &["cached"], &[]),
    Opt::flag("force", &["force"], &['f']),
    Opt::flag("r", &[], &['r']),
    Opt::flag("ignore-unmatch", &["ignore-unmatch"], &[]),
    Opt::flag("sparse", &["sparse"], &[]),
    Opt::value("pathspec-from-file", &["pathspec-from-file"], &[]),
    Opt::flag("pathspec-file-nul", &["pathspec-file-nul"], &[]),
];

/// `git mv` (builtin/mv.c).
const MV_OPTS: &[Opt] = &[
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::flag("dry-run", &["dry-run"], &['n']),
    Opt::flag("force", &["force"], &['f']),
    Opt::flag("k", &[], &['k']),
    Opt::flag("sparse", &["sparse"], &[]),
];

/// `git merge` (builtin/merge.c).
const MERGE_OPTS: &[Opt] = &[
    Opt::flag("n", &[], &['n']),
    Opt::flag("stat", &["stat"], &[]),
    Opt::flag("summary", &["summary"], &[]),
    Opt::opt_value("log", &["log"], &[]),
    Opt::flag("squash", &["squash"], &[]),
    Opt::flag("commit", &["commit"], &[]),
    Opt::flag("edit", &["edit"], &['e']),
    Opt::value("cleanup", &["cleanup"], &[]),
    Opt::flag("ff", &["ff"], &[]),
    Opt::flag("ff-only", &["ff-only"], &[]),
    Opt::flag("rerere-autoupdate", &["rerere-autoupdate"], &[]),
    Opt::flag("verify-signatures", &["verify-signatures"], &[]),
    Opt::value("strategy", &["strategy"], &['s']),
    Opt::value("strategy-option", &["strategy-option"], &['X']),
    Opt::value("message", &["message"], &['m']),
    Opt::value("file", &["file"], &['F']),
    Opt::value("into-name", &["into-name"], &[]),
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("abort", &["abort"], &[]),
    Opt::flag("quit", &["quit"], &[]),
    Opt::flag("continue", &["continue"], &[]),
    Opt::flag("allow-unrelated-histories", &["allow-unrelated-histories"], &[]),
    Opt::flag("progress", &["progress"], &[]),
    Opt::opt_value("gpg-sign", &["gpg-sign"], &['S']),
    Opt::flag("autostash", &["autostash"], &[]),
    Opt::flag("overwrite-ignore", &["overwrite-ignore"], &[]),
    Opt::flag("signoff", &["signoff"], &[]),
    Opt::flag("no-verify", &["no-verify"], &[]),
    Opt::flag("verify", &["verify"], &[]),
];

/// `git rebase` (builtin/rebase.c).
const REBASE_OPTS: &[Opt] = &[
    Opt::value("onto", &["onto"], &[]),
    Opt::flag("keep-base", &["keep-base"], &[]),
    Opt::flag("no-verify", &["no-verify"], &[]),
    Opt::flag("verify", &["verify"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::flag("no-stat", &["no-stat"], &['n']),
    Opt::flag("stat", &["stat"], &[]),
    Opt::flag("signoff", &["signoff"], &[]),
    Opt::flag("committer-date-is-author-date", &["committer-date-is-author-date"], &[]),
    Opt::flag("reset-author-date", &["reset-author-date"], &[]),
    Opt::flag("ignore-date", &["ignore-date"], &[]),
    Opt::value("C", &[], &['C']),
    Opt::flag("ignore-whitespace", &["ignore-whitespace"], &[]),
    Opt::value("whitespace", &["whitespace"], &[]),
    Opt::flag("force-rebase", &["force-rebase"], &['f']),
    Opt::flag("no-ff", &["no-ff"], &[]),
    Opt::flag("ff", &["ff"], &[]),
    Opt::flag("continue", &["continue"], &[]),
    Opt::flag("skip", &["skip"], &[]),
    Opt::flag("abort", &["abort"], &[]),
    Opt::flag("quit", &["quit"], &[]),
    Opt::flag("edit-todo", &["edit-todo"], &[]),
    Opt::flag("show-current-patch", &["show-current-patch"], &[]),
    Opt::flag("apply", &["apply"], &[]),
    Opt::flag("merge", &["merge"], &['m']),
    Opt::flag("interactive", &["interactive"], &['i']),
    Opt::flag("preserve-merges", &["preserve-merges"], &['p']),
    Opt::flag("rerere-autoupdate", &["rerere-autoupdate"], &[]),
    Opt::value("empty", &["empty"], &[]),
    Opt::flag("keep-empty", &["keep-empty"], &['k']),
    Opt::flag("autosquash", &["autosquash"], &[]),
    Opt::flag("update-refs", &["update-refs"], &[]),
    Opt::opt_value("gpg-sign", &["gpg-sign"], &['S']),
    Opt::flag("autostash", &["autostash"], &[]),
    Opt::value("exec", &["exec"], &['x']),
    Opt::flag("allow-empty-message", &["allow-empty-message"], &[]),
    Opt::opt_value("rebase-merges", &["rebase-merges"], &['r']),
    Opt::flag("fork-point", &["fork-point"], &[]),
    Opt::value("strategy", &["strategy"], &['s']),
    Opt::value("strategy-option", &["strategy-option"], &['X']),
    Opt::flag("root", &["root"], &[]),
    Opt::flag("reschedule-failed-exec", &["reschedule-failed-exec"], &[]),
    Opt::flag("reapply-cherry-picks", &["reapply-cherry-picks"], &[]),
];

/// `git cherry-pick` (builtin/revert.c).
const CHERRY_PICK_OPTS: &[Opt] = &[
    Opt::flag("quit", &["quit"], &[]),
    Opt::flag("continue", &["continue"], &[]),
    Opt::flag("abort", &["abort"], &[]),
    Opt::flag("skip", &["skip"], &[]),
    Opt::value("cleanup", &["cleanup"], &[]),
    Opt::flag("no-commit", &["no-commit"], &['n']),
    Opt::flag("commit", &["commit"], &[]),
    Opt::flag("edit", &["edit"], &['e']),
    Opt::flag("r", &[], &['r']),
    Opt::flag("signoff", &["signoff"], &['s']),
    Opt::value("mainline", &["mainline"], &['m']),
    Opt::flag("rerere-autoupdate", &["rerere-autoupdate"], &[]),
    Opt::value("strategy", &["strategy"], &[]),
    Opt::value("strategy-option", &["strategy-option"], &['X']),
    Opt::opt_value("gpg-sign", &["gpg-sign"], &['S']),
    Opt::flag("x", &[], &['x']),
    Opt::flag("ff", &["ff"], &[]),
    Opt::flag("allow-empty", &["allow-empty"], &[]),
    Opt::flag("allow-empty-message", &["allow-empty-message"], &[]),
    Opt::flag("keep-redundant-commits", &["keep-redundant-commits"], &[]),
    Opt::value("empty", &["empty"], &[]),
];

/// `git revert` (builtin/revert.c).
const REVERT_OPTS: &[Opt] = &[
    Opt::flag("quit", &["quit"], &[]),
    Opt::flag("continue", &["continue"], &[]),
    Opt::flag("abort", &["abort"], &[]),
    Opt::flag("skip", &["skip"], &[]),
    Opt::value("cleanup", &["cleanup"], &[]),
    Opt::flag("no-commit", &["no-commit"], &['n']),
    Opt::flag("commit", &["commit"], &[]),
    Opt::flag("edit", &["edit"], &['e']),
    Opt::flag("r", &[], &['r']),
    Opt::flag("signoff", &["signoff"], &['s']),
    Opt::value("mainline", &["mainline"], &['m']),
    Opt::flag("rerere-autoupdate", &["rerere-autoupdate"], &[]),
    Opt::value("strategy", &["strategy"], &[]),
    Opt::value("strategy-option", &["strategy-option"], &['X']),
    Opt::opt_value("gpg-sign", &["gpg-sign"], &['S']),
    Opt::flag("reference", &["reference"], &[]),
];

/// `git init` (builtin/init-db.c).
const INIT_OPTS: &[Opt] = &[
    Opt::value("template", &["template"], &[]),
    Opt::flag("bare", &["bare"], &[]),
    Opt::opt_value("shared", &["shared"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::value("separate-git-dir", &["separate-git-dir"], &[]),
    Opt::value("initial-branch", &["initial-branch"], &['b']),
    Opt::value("object-format", &["object-format"], &[]),
    Opt::value("ref-format", &["ref-format"], &[]),
];

/// `git apply` (apply.c).
const APPLY_OPTS: &[Opt] = &[
    Opt::value("exclude", &["exclude"], &[]),
    Opt::value("include", &["include"], &[]),
    Opt::value("p", &[], &['p']),
    Opt::flag("no-add", &["no-add"], &[]),
    Opt::flag("add", &["add"], &[]),
    Opt::flag("stat", &["stat"], &[]),
    Opt::flag("allow-binary-replacement", &["allow-binary-replacement"], &[]),
    Opt::flag("binary", &["binary"], &[]),
    Opt::flag("numstat", &["numstat"], &[]),
    Opt::flag("summary", &["summary"], &[]),
    Opt::flag("check", &["check"], &[]),
    Opt::flag("index", &["index"], &[]),
    Opt::flag("intent-to-add", &["intent-to-add"], &['N']),
    Opt::flag("cached", &["cached"], &[]),
    Opt::flag("unsafe-paths", &["unsafe-paths"], &[]),
    Opt::flag("apply", &["apply"], &[]),
    Opt::flag("3way", &["3way"], &['3']),
    Opt::flag("ours", &["ours"], &[]),
    Opt::flag("theirs", &["theirs"], &[]),
    Opt::flag("union", &["union"], &[]),
    Opt::value("build-fake-ancestor", &["build-fake-ancestor"], &[]),
    Opt::flag("z", &[], &['z']),
    Opt::value("C", &[], &['C']),
    Opt::value("whitespace", &["whitespace"], &[]),
    Opt::flag("ignore-space-change", &["ignore-space-change"], &[]),
    Opt::flag("ignore-whitespace", &["ignore-whitespace"], &[]),
    Opt::flag("reverse", &["reverse"], &['R']),
    Opt::flag("unidiff-zero", &["unidiff-zero"], &[]),
    Opt::flag("reject", &["reject"], &[]),
    Opt::flag("allow-overlap", &["allow-overlap"], &[]),
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("inaccurate-eof", &["inaccurate-eof"], &[]),
    Opt::flag("recount", &["recount"], &[]),
    Opt::value("directory", &["directory"], &[]),
    Opt::flag("allow-empty", &["allow-empty"], &[]),
];

/// `git symbolic-ref` (builtin/symbolic-ref.c).
const SYMBOLIC_REF_OPTS: &[Opt] = &[
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("delete", &["delete"], &['d']),
    Opt::flag("short", &["short"], &[]),
    Opt::flag("recurse", &["recurse"], &[]),
    Opt::value("m", &[], &['m']),
];

/// `git fsck` (builtin/fsck.c).
const FSCK_OPTS: &[Opt] = &[
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::flag("unreachable", &["unreachable"], &[]),
    Opt::flag("dangling", &["dangling"], &[]),
    Opt::flag("tags", &["tags"], &[]),
    Opt::flag("root", &["root"], &[]),
    Opt::flag("cache", &["cache"], &[]),
    Opt::flag("reflogs", &["reflogs"], &[]),
    Opt::flag("full", &["full"], &[]),
    Opt::flag("connectivity-only", &["connectivity-only"], &[]),
    Opt::flag("strict", &["strict"], &[]),
    Opt::flag("lost-found", &["lost-found"], &[]),
    Opt::flag("progress", &["progress"], &[]),
    Opt::flag("name-objects", &["name-objects"], &[]),
];

/// `git archive` (archive.c, builtin/archive.c); `-0`…`-9` stay unknown switches.
/// `git bundle create` (builtin/bundle.c; `--all-progress` and `--all-progress-implied` are
/// hidden, kept for compatibility).
const BUNDLE_CREATE_OPTS: &[Opt] = &[
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("progress", &["progress"], &[]),
    Opt::flag("all-progress", &["all-progress"], &[]),
    Opt::flag("all-progress-implied", &["all-progress-implied"], &[]),
    Opt::value("version", &["version"], &[]),
];

const ARCHIVE_OPTS: &[Opt] = &[
    Opt::value("format", &["format"], &[]),
    Opt::value("prefix", &["prefix"], &[]),
    Opt::value("add-file", &["add-file"], &[]),
    Opt::value("add-virtual-file", &["add-virtual-file"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("worktree-attributes", &["worktree-attributes"], &[]),
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::flag("list", &["list"], &['l']),
    Opt::value("remote", &["remote"], &[]),
    Opt::value("exec", &["exec"], &[]),
    Opt::value("mtime", &["mtime"], &[]),
];

/// `git clean` (builtin/clean.c).
const CLEAN_OPTS: &[Opt] = &[
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("dry-run", &["dry-run"], &['n']),
    Opt::flag("force", &["force"], &['f']),
    Opt::flag("interactive", &["interactive"], &['i']),
    Opt::flag("d", &[], &['d']),
    Opt::value("exclude", &["exclude"], &['e']),
    Opt::flag("x", &[], &['x']),
    Opt::flag("X", &[], &['X']),
];

/// `git restore` (builtin/checkout.c `cmd_restore`, with the common and path options).
const RESTORE_OPTS: &[Opt] = &[
    Opt::value("source", &["source"], &['s']),
    Opt::flag("staged", &["staged"], &['S']),
    Opt::flag("worktree", &["worktree"], &['W']),
    Opt::flag("ignore-unmerged", &["ignore-unmerged"], &[]),
    Opt::flag("overlay", &["overlay"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::opt_value("recurse-submodules", &["recurse-submodules"], &[]),
    Opt::flag("progress", &["progress"], &[]),
    Opt::flag("merge", &["merge"], &['m']),
    Opt::value("conflict", &["conflict"], &[]),
    Opt::flag("ours", &["ours"], &['2']),
    Opt::flag("theirs", &["theirs"], &['3']),
    Opt::flag("patch", &["patch"], &['p']),
    Opt::flag("ignore-skip-worktree-bits", &["ignore-skip-worktree-bits"], &[]),
    Opt::value("pathspec-from-file", &["pathspec-from-file"], &[]),
    Opt::flag("pathspec-file-nul", &["pathspec-file-nul"], &[]),
];

/// `git worktree add` (builtin/worktree.c).
const WORKTREE_ADD_OPTS: &[Opt] = &[
    Opt::flag("force", &["force"], &['f']),
    Opt::value("b", &[], &['b']),
    Opt::value("B", &[], &['B']),
    Opt::flag("orphan", &["orphan"], &[]),
    Opt::flag("detach", &["detach"], &['d']),
    Opt::flag("checkout", &["checkout"], &[]),
    Opt::flag("lock", &["lock"], &[]),
    Opt::value("reason", &["reason"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::opt_value("track", &["track"], &[]),
    Opt::flag("guess-remote", &["guess-remote"], &[]),
    Opt::flag("relative-paths", &["relative-paths"], &[]),
];

/// `git am` (builtin/am.c).
const AM_OPTS: &[Opt] = &[
    Opt::flag("interactive", &["interactive"], &['i']),
    Opt::flag("no-verify", &["no-verify"], &['n']),
    Opt::flag("verify", &["verify"], &[]),
    Opt::flag("binary", &["binary"], &['b']),
    Opt::flag("3way", &["3way"], &['3']),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("signoff", &["signoff"], &['s']),
    Opt::flag("utf8", &["utf8"], &['u']),
    Opt::flag("keep", &["keep"], &['k']),
    Opt::flag("keep-non-patch", &["keep-non-patch"], &[]),
    Opt::flag("message-id", &["message-id"], &['m']),
    Opt::flag("keep-cr", &["keep-cr"], &[]),
    Opt::flag("scissors", &["scissors"], &['c']),
    Opt::value("quoted-cr", &["quoted-cr"], &[]),
    Opt::opt_value("whitespace", &["whitespace"], &[]),
    Opt::flag("ignore-space-change", &["ignore-space-change"], &[]),
    Opt::flag("ignore-whitespace", &["ignore-whitespace"], &[]),
    Opt::value("directory", &["directory"], &[]),
    Opt::value("exclude", &["exclude"], &[]),
    Opt::value("include", &["include"], &[]),
    Opt::value("C", &[], &['C']),
    Opt::value("p", &[], &['p']),
    Opt::value("patch-format", &["patch-format"], &[]),
    Opt::flag("reject", &["reject"], &[]),
    Opt::value("resolvemsg", &["resolvemsg"], &[]),
    Opt::flag("continue", &["continue"], &[]),
    Opt::flag("resolved", &["resolved"], &['r']),
    Opt::flag("skip", &["skip"], &[]),
    Opt::flag("abort", &["abort"], &[]),
    Opt::flag("quit", &["quit"], &[]),
    Opt::flag("retry", &["retry"], &[]),
    Opt::opt_value("show-current-patch", &["show-current-patch"], &[]),
    Opt::flag("allow-empty", &["allow-empty"], &[]),
    Opt::flag("committer-date-is-author-date", &["committer-date-is-author-date"], &[]),
    Opt::flag("ignore-date", &["ignore-date"], &[]),
    Opt::flag("rerere-autoupdate", &["rerere-autoupdate"], &[]),
    Opt::opt_value("gpg-sign", &["gpg-sign"], &['S']),
    Opt::value("empty", &["empty"], &[]),
    Opt::flag("rebasing", &["rebasing"], &[]),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;
    use pretty_assertions::assert_eq;

    fn p(words: &[&str]) -> Invocation {
        parse(&argv(words))
    }

    /// The verbs and marks of every action, for whole-value comparisons.
    fn acts(words: &[&str]) -> Vec<(String, Vec<String>)> {
        let inv = p(words);
        assert_eq!(inv.problem, None, "{words:?}");
        inv.actions
            .iter()
            .map(|a| (a.verb.clone(), a.marks.iter().cloned().collect()))
            .collect()
    }

    fn one(verb: &str, marks: &[&str]) -> Vec<(String, Vec<String>)> {
        vec![(verb.to_string(), marks.iter().map(|m| m.to_string()).collect())]
    }

    fn marks(words: &[&str]) -> Vec<String> {
        acts(words).remove(0).1
    }

    fn problem(words: &[&str]) -> Option<String> {
        p(words).problem
    }

    #[test]
    fn a_push_of_a_named_feature_branch_has_no_marks() {
        assert_eq!(acts(&["push", "origin", "feat"]), one("push", &[]));
        assert_eq!(acts(&["push", "-u", "origin", "HEAD:refs/heads/feat"]), one("push", &[]));
    }

    #[test]
    fn every_force_form_marks_force() {
        for words in [
            &["push", "-f", "origin", "feat"][..],
            &["push", "--force", "origin", "feat"],
            &["push", "--force-with-lease", "origin", "feat"],
            &["push", "--force-with-lease=feat:abc", "origin", "feat"],
            &["push", "--force-w", "origin", "feat"],
            &["push", "--force-with-lease=0", "origin", "0"],
            &["push", "origin", "+feat"],
            &["push", "origin", "+HEAD:refs/heads/feat"],
            &["push", "-uf", "origin", "feat"],
            &["push", "-fu", "origin", "feat"],
            &["push", "origin", "feat", "--force"],
            &["push", "--no-force", "--force", "origin", "feat"],
            &["push", "--force", "--no-force", "origin", "+feat"],
        ] {
            assert!(marks(words).contains(&"force".to_string()), "{words:?}");
        }
    }

    #[test]
    fn no_force_after_force_cancels_it_like_parse_options() {
        assert_eq!(marks(&["push", "--force", "--no-force", "origin", "feat"]), Vec::<String>::new());
        assert_eq!(
            marks(&["push", "--force-with-lease", "--no-force-with-lease", "origin", "feat"]),
            Vec::<String>::new()
        );
        assert_eq!(marks(&["push", "--force-if-includes", "origin", "feat"]), Vec::<String>::new());
    }

    #[test]
    fn an_ambiguous_abbreviation_is_a_problem_that_names_the_token() {
        assert_eq!(
            problem(&["push", "--forc", "origin", "feat"]),
            Some("option --forc is ambiguous".into())
        );
        assert_eq!(
            problem(&["push", "--rec=x", "origin", "feat"]),
            Some("option --rec is ambiguous".into())
        );
    }

    #[test]
    fn push_to_the_default_branch_is_marked_in_every_spelling() {
        for spec in [
            "main",
            "master",
            "HEAD:main",
            "HEAD:refs/heads/main",
            "feat:heads/master",
            "feat:MAIN",
            "feat:HEAD",
            "trunk",
            "feat:develop",
            "feat:production",
            "feat:refs/Heads/Main",
            "feat:@",
        ] {
            assert!(marks(&["push", "origin", spec]).contains(&"default-branch".to_string()), "{spec}");
        }
    }

    #[test]
    fn deleting_a_remote_branch_is_marked_delete() {
        assert_eq!(marks(&["push", "origin", ":feat"]), vec!["delete"]);
        assert_eq!(marks(&["push", "--delete", "origin", "feat"]), vec!["delete"]);
        assert_eq!(marks(&["push", "origin", "feat", "-d"]), vec!["delete"]);
        assert_eq!(marks(&["push", "-d", "origin", "main"]), vec!["default-branch", "delete"]);
        assert_eq!(marks(&["push", "origin", ":refs/heads/master"]), vec!["default-branch", "delete"]);
    }

    #[test]
    fn a_push_that_does_not_name_its_destination_is_marked() {
        for words in [
            &["push"][..],
            &["push", "origin"],
            &["push", "origin", "HEAD"],
            &["push", "origin", "@"],
            &["push", "origin", "HEAD:"],
            &["push", "--repo=origin"],
            &["push", "--follow-tags", "origin"],
        ] {
            assert!(marks(words).contains(&"unnamed-destination".to_string()), "{words:?}");
        }
    }

    #[test]
    fn pushes_of_many_refs_are_marked() {
        assert_eq!(marks(&["push", "--mirror", "origin"]), vec!["mirror"]);
        assert_eq!(marks(&["push", "--mirr", "origin"]), vec!["mirror"]);
        assert_eq!(marks(&["push", "--all", "origin"]), vec!["all-branches"]);
        assert_eq!(marks(&["push", "--all", "--prune", "origin"]), vec!["all-branches", "prune"]);
        assert_eq!(marks(&["push", "--prune", "origin", "feat"]), vec!["prune"]);
        assert_eq!(marks(&["push", "origin", ":"]), vec!["all-branches"]);
        assert_eq!(marks(&["push", "origin", "refs/heads/*:refs/heads/*"]), vec!["all-branches"]);
        assert_eq!(marks(&["push", "--tags", "origin"]), vec!["tags"]);
        assert_eq!(marks(&["push", "origin", "v1:refs/tags/v1"]), vec!["tags"]);
        assert_eq!(marks(&["push", "origin", "HEAD:refs/meta/config"]), vec!["non-branch-ref"]);
        assert_eq!(
            marks(&["push", "--recurse-submodules=on-demand", "origin", "feat"]),
            vec!["submodule-push"]
        );
        assert_eq!(
            marks(&["push", "--recurse-submodules=check", "origin", "feat"]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn programs_named_by_options_are_exec_options_even_when_spelled_false() {
        for words in [
            &["push", "--receive-pack=x", "origin", "feat"][..],
            &["push", "--exec", "x", "origin", "feat"],
            &["push", "--ex=x", "origin", "feat"],
            &["fetch", "--upload-pack=false", "origin"],
            &["fetch", "--upl", "x", "origin"],
            &["ls-remote", "--upload-pack=sh -c id", "."],
            &["ls-remote", "--exe=x", "origin"],
            &["clone", "-u", "x", "https://h/r"],
            &["clone", "-qux", "https://h/r"],
            &["pull", "--upload-pack", "x", "origin", "feat"],
            &["pull", "-s", "evil", "origin", "feat"],
            &["merge", "--strategy=evil", "feat"],
            &["rebase", "-x", "make", "main"],
            &["rebase", "--exec=make", "main"],
            &["cherry-pick", "--strategy", "evil", "abc"],
            &["grep", "-Ovim", "x"],
            &["grep", "--open-files", "x"],
        ] {
            assert!(marks(words).contains(&"exec-option".to_string()), "{words:?}");
        }
        assert_eq!(
            marks(&["push", "--receive-pack=x", "--no-receive-pack", "origin", "feat"]),
            Vec::<String>::new()
        );
        assert_eq!(marks(&["merge", "-s", "ort", "-X", "theirs", "feat"]), Vec::<String>::new());
        assert_eq!(marks(&["rebase", "--exec=x", "--no-exec", "main"]), Vec::<String>::new());
        assert_eq!(acts(&["grep", "-3", "-n", "x", "--", "-5"]), one("grep", &[]));
    }

    #[test]
    fn remote_helper_urls_are_marked_wherever_a_transport_takes_a_url() {
        for words in [
            &["fetch", "ext::sh -c id"][..],
            &["ls-remote", "fd::3"],
            &["clone", "--", "ext::sh -c id", "dir"],
            &["pull", "ext::x", "main"],
            &["push", "ext::x", "feat"],
            &["push", "--repo=ext::x"],
            &["remote", "show", "ext::x"],
        ] {
            assert!(marks(words).contains(&"remote-helper".to_string()), "{words:?}");
        }
        assert!(!marks(&["fetch", "ssh://[::1]/repo"]).contains(&"remote-helper".to_string()));
    }

    #[test]
    fn a_push_to_a_local_path_is_marked() {
        assert_eq!(marks(&["push", "/tmp/evil.git", "feat"]), vec!["local-remote"]);
        assert_eq!(marks(&["push", "../evil", "feat"]), vec!["local-remote"]);
        assert_eq!(marks(&["push", "file:///tmp/x", "feat"]), vec!["local-remote"]);
    }

    #[test]
    fn fetch_into_remote_tracking_refs_is_an_observation_unless_a_refspec_names_them() {
        assert_eq!(acts(&["fetch"]), one("fetch", &[]));
        assert_eq!(acts(&["fetch", "--prune", "origin", "main"]), one("fetch", &[]));
        // Recording the remote's own branch where a plain fetch records it is an observation.
        assert_eq!(acts(&["fetch", "origin", "+main:refs/remotes/origin/main"]), one("fetch", &[]));
        assert_eq!(
            acts(&["fetch", "origin", "refs/heads/main:refs/remotes/origin/main"]),
            one("fetch", &[])
        );
        assert_eq!(
            acts(&["fetch", "origin", "+feature:refs/remotes/origin/main"]),
            one("fetch", &["remote-refs"])
        );
        assert_eq!(
            acts(&["fetch", "upstream", "main:refs/remotes/origin/main"]),
            one("fetch", &["remote-refs"])
        );
        assert_eq!(acts(&["fetch", "origin", "+x:refs/replace/abc"]), one("fetch", &["special-refs"]));
        assert_eq!(acts(&["fetch", "origin", "main:main"]), one("fetch", &["local-refs"]));
        assert_eq!(acts(&["fetch", "--multiple", "origin", "upstream"]), one("fetch", &[]));
        assert_eq!(acts(&["fetch", "--tags", "origin"]), one("fetch", &[]));
    }

    #[test]
    fn fetch_and_pull_that_rewrite_or_delete_local_refs_are_marked_force_local() {
        for words in [
            &["fetch", "-ft"][..],
            &["fetch", "-tf", "origin"],
            &["fetch", "origin", "+main:main"],
            &["fetch", "-f", "origin", "main:main"],
            &["fetch", "-pP"],
            &["fetch", "--prune-tags", "--force"],
            &["fetch", "--stdin", "origin"],
            &["fetch", "origin", "main:main", "--force"],
            &["pull", "origin", "+main:main"],
            &["pull", "--tags", "-f"],
            &["pull", "-f", "origin", "main:refs/tags/x"],
            &["fetch", "--prune", "origin", "refs/heads/*:refs/heads/*"],
            &["fetch", "-p", "origin", "feat:feat"],
            &["pull", "--prune", "origin", "refs/heads/*:refs/heads/*"],
        ] {
            assert!(marks(words).contains(&"force-local".to_string()), "{words:?}");
        }
        // A dry run writes no ref; pruning remote-tracking refs is the remote's own news.
        assert_eq!(acts(&["fetch", "--dry-run", "origin", "+main:main"]), one("fetch", &[]));
        assert_eq!(acts(&["fetch", "--prune", "origin", "main"]), one("fetch", &[]));
        assert_eq!(
            acts(&["fetch", "--prune", "--no-prune", "origin", "refs/heads/*:refs/heads/*"]),
            one("fetch", &["local-refs"])
        );
    }

    #[test]
    fn fetch_into_refs_git_reads_specially_is_marked_special_refs() {
        for dst in [
            "refs/replace/0bc6",
            "refs/notes/commits",
            "refs/stash",
            "refs/bisect/bad",
            "refs/original/refs/heads/x",
            "refs/*",
        ] {
            assert_eq!(marks(&["fetch", "origin", &format!("feat:{dst}")]), vec!["special-refs"], "{dst}");
        }
        assert_eq!(marks(&["pull", "origin", "feat:refs/replace/x"]), vec!["special-refs"]);
        // A name git qualifies itself lands in refs/heads/ (`HEAD` becomes refs/heads/HEAD).
        assert_eq!(marks(&["fetch", "origin", "feat:HEAD"]), vec!["local-refs"]);
    }

    #[test]
    fn fetch_options_that_write_config_or_the_shallow_file_are_marked() {
        assert_eq!(
            acts(&["fetch", "--set-upstream", "origin", "feat"]),
            one("fetch", &["tracking-config"])
        );
        assert_eq!(acts(&["fetch", "--filter=blob:none"]), one("fetch", &["partial-clone"]));
        assert_eq!(acts(&["fetch", "--dep=1", "origin"]), one("fetch", &["shallow"]));
        assert_eq!(acts(&["fetch", "--unshallow"]), one("fetch", &["shallow"]));
        assert_eq!(
            acts(&["fetch", "--dry-run", "--set-upstream", "o", "f"]),
            one("fetch", &["tracking-config"])
        );
    }

    #[test]
    fn global_config_overrides_are_their_own_refused_action() {
        assert_eq!(
            acts(&["-c", "alias.x=!sh", "x"]),
            vec![(("x".into()), vec![]), ("-c".into(), vec![])]
        );
        assert_eq!(
            acts(&["--config-env=alias.z=VAR", "status"]),
            vec![("status".into(), vec![]), ("--config-env".into(), vec![])]
        );
        assert_eq!(
            acts(&["--config-env", "alias.z=VAR", "status"]),
            vec![("status".into(), vec![]), ("--config-env".into(), vec![])]
        );
        assert_eq!(
            acts(&["--exec-path=/tmp/evil", "status"]),
            vec![("status".into(), vec![]), ("--exec-path".into(), vec![])]
        );
    }

    #[test]
    fn exec_path_without_a_value_only_prints() {
        assert_eq!(acts(&["--exec-path"]), one("help", &[]));
        assert_eq!(acts(&["--exec-path", "push", "--force"]), one("help", &[]));
        assert_eq!(acts(&["--list-cmds=main"]), one("help", &[]));
    }

    #[test]
    fn retargeting_global_options_are_their_own_refused_action() {
        for (words, opt) in [
            (&["--git-dir", "/x/.git", "status"][..], "--git-dir"),
            (&["--git-dir=/x/.git", "status"], "--git-dir"),
            (&["--work-tree=/", "status"], "--work-tree"),
            (&["--namespace", "n", "status"], "--namespace"),
            (&["--shallow-file", "f", "status"], "--shallow-file"),
        ] {
            assert_eq!(acts(words), vec![("status".into(), vec![]), (opt.into(), vec![])], "{words:?}");
        }
        assert_eq!(acts(&["-C", "/repo", "-P", "status"]), one("status", &[]));
    }

    #[test]
    fn global_options_are_exact_and_take_separate_values() {
        assert_eq!(problem(&["-Cdir", "status"]), Some("unknown global option -Cdir".into()));
        assert_eq!(
            problem(&["-calias.x=y", "status"]),
            Some("unknown global option -calias.x=y".into())
        );
        assert_eq!(problem(&["--git-d=x", "status"]), Some("unknown global option --git-d=x".into()));
        assert_eq!(problem(&["-c"]), Some("global option -c needs a value".into()));
    }

    #[test]
    fn commit_names_what_it_records_for_the_scope_check() {
        let target = |words: &[&str]| {
            let inv = p(words);
            assert_eq!(inv.problem, None, "{words:?}");
            (inv.actions[0].scope.clone(), inv.actions[0].has("amend"))
        };
        let commit = |all: bool, paths: &[&str], include: bool, globals: &[&str]| {
            Some(ScopeTarget::Commit {
                all,
                paths: paths.iter().map(|s| s.to_string()).collect(),
                include,
                git: GitAt {
                    globals: globals.iter().map(|s| s.to_string()).collect(),
                },
            })
        };
        assert_eq!(target(&["commit", "-m", "x"]), (commit(false, &[], false, &[]), false));
        assert_eq!(target(&["commit", "-am", "x"]), (commit(true, &[], false, &[]), false));
        assert_eq!(target(&["commit", "-pm", "x"]), (commit(true, &[], false, &[]), false));
        assert_eq!(target(&["commit", "--interactive"]), (commit(true, &[], false, &[]), false));
        assert_eq!(
            target(&["commit", "-m", "x", "--", "a", "-b"]),
            (commit(false, &["a", "-b"], false, &[]), false)
        );
        assert_eq!(target(&["commit", "-i", "-m", "x", "a"]), (commit(false, &["a"], true, &[]), false));
        assert_eq!(target(&["commit", "--amend", "--no-edit"]), (commit(false, &[], false, &[]), true));
        assert_eq!(target(&["commit", "--am", "--no-e"]), (commit(false, &[], false, &[]), true));
        assert_eq!(
            target(&["-C", "a", "-C", "b", "commit", "-m", "x"]),
            (commit(false, &[], false, &["-C", "a", "-C", "b"]), false)
        );
        assert_eq!(
            target(&[
                "--icase-pathspecs",
                "--git-dir=.git",
                "--work-tree",
                ".",
                "commit",
                "-m",
                "x",
                "IE.YAML"
            ]),
            (
                commit(
                    false,
                    &["IE.YAML"],
                    false,
                    &["--icase-pathspecs", "--git-dir=.git", "--work-tree=."]
                ),
                false
            )
        );
        assert_eq!(
            problem(&["commit", "--pathspec-from-file=l", "-m", "x"]),
            Some("git commit --pathspec-from-file: the gate cannot see which paths it commits; name them".into())
        );
        assert_eq!(problem(&["commit", "--bogus"]), Some("unknown option --bogus".into()));
    }

    #[test]
    fn push_names_its_remote_and_refspecs_for_the_scope_check() {
        let target = |words: &[&str]| p(words).actions[0].scope.clone();
        let push = |remote: Option<&str>, specs: &[&str]| {
            Some(ScopeTarget::Push {
                remote: remote.map(str::to_string),
                refspecs: specs.iter().map(|s| s.to_string()).collect(),
                git: GitAt::default(),
            })
        };
        assert_eq!(target(&["push", "origin", "feat", "x:y"]), push(Some("origin"), &["feat", "x:y"]));
        assert_eq!(target(&["push", "-d", "origin", "old"]), push(Some("origin"), &[":old"]));
        assert_eq!(target(&["push", "--all", "origin"]), push(Some("origin"), &[]));
    }

    #[test]
    fn gh_credential_helper_push_gives_a_claim_and_no_override() {
        let inv = p(&[
            "-c",
            "credential.helper=",
            "-c",
            "credential.helper=!\"/usr/bin/gh\" auth git-credential",
            "push",
            "--set-upstream",
            "origin",
            "HEAD:refs/heads/feat",
        ]);
        assert_eq!(inv.problem, None);
        let mut want = Action::new("push");
        want.scope = Some(ScopeTarget::Push {
            remote: Some("origin".into()),
            refspecs: vec!["HEAD:refs/heads/feat".into()],
            git: GitAt::default(),
        });
        want.probe = Some(Probe::PushTarget {
            remote: Some("origin".into()),
            refspecs: vec!["HEAD:refs/heads/feat".into()],
            git: GitAt::default(),
        });
        // (What a push leaves to the configuration is tested on its own.)
        want.config = inv.actions[0].config.clone();
        assert_eq!(inv.actions, vec![want]);
        assert_eq!(
            inv.claims,
            vec![Claim::GhCredentialHelper {
                path: "/usr/bin/gh".into()
            }]
        );
    }

    #[test]
    fn anything_but_the_exact_gh_shape_is_a_config_override() {
        let helper = "credential.helper=!\"/usr/bin/gh\" auth git-credential";
        for words in [
            &[
                "-c",
                "credential.helper=",
                "-c",
                helper,
                "push",
                "--set-upstream",
                "origin",
                "HEAD:refs/heads/feat",
                "-f",
            ][..],
            &["-c", "credential.helper=", "-c", helper, "push", "origin", "HEAD:refs/heads/feat"],
            &["-c", "credential.helper=", "-c", helper, "fetch", "origin"],
            &["-c", helper, "push", "--set-upstream", "origin", "HEAD:refs/heads/feat"],
            &[
                "-c",
                "credential.helper=",
                "-c",
                "credential.helper=!\"$(id)\" auth git-credential",
                "push",
                "--set-upstream",
                "origin",
                "HEAD:refs/heads/feat",
            ],
            &[
                "-c",
                "credential.helper=",
                "-c",
                "credential.helper=!/usr/bin/gh auth git-credential",
                "push",
                "--set-upstream",
                "origin",
                "HEAD:refs/heads/feat",
            ],
        ] {
            let inv = p(words);
            assert_eq!(inv.claims, vec![], "{words:?}");
            assert!(inv.actions.iter().any(|a| a.verb == "-c"), "{words:?}");
        }
    }

    #[test]
    fn gh_shape_to_the_default_branch_is_still_a_default_branch_push() {
        let inv = p(&[
            "-c",
            "credential.helper=",
            "-c",
            "credential.helper=!\"/usr/bin/gh\" auth git-credential",
            "push",
            "--set-upstream",
            "origin",
            "HEAD:refs/heads/main",
        ]);
        assert_eq!(inv.actions.len(), 1);
        assert_eq!(
            (inv.actions[0].verb.as_str(), &inv.actions[0].marks),
            ("push", &Action::new("").mark("default-branch").marks)
        );
    }

    #[test]
    fn help_and_version_forms_run_nothing() {
        for words in [
            &[][..],
            &["--help"],
            &["-h"],
            &["help", "push"],
            &["push", "--help"],
            &["push", "-h"],
            &["-C", "x"],
        ] {
            assert_eq!(acts(words), one("help", &[]), "{words:?}");
        }
        assert_eq!(acts(&["--version"]), one("version", &[]));
        assert_eq!(acts(&["-v"]), one("version", &[]));
        assert_eq!(acts(&["version", "--build-options"]), one("version", &[]));
    }

    #[test]
    fn unknown_commands_keep_the_name_as_typed() {
        assert_eq!(acts(&["frobnicate", "--force"]), one("frobnicate", &[]));
        assert_eq!(acts(&["myalias", "--help"]), one("myalias", &[]));
        assert_eq!(acts(&["submodule", "update"]), one("submodule update", &[]));
        assert_eq!(acts(&["submodule", "foreach", "id"]), one("submodule foreach", &[]));
        assert_eq!(problem(&[""]), Some("empty command name".into()));
    }

    #[test]
    fn branch_modes_are_verbs() {
        assert_eq!(acts(&["branch"]), one("branch list", &[]));
        assert_eq!(acts(&["branch", "-a", "-v"]), one("branch list", &[]));
        assert_eq!(acts(&["branch", "--contains", "abc"]), one("branch list", &[]));
        assert_eq!(acts(&["branch", "--merged"]), one("branch list", &[]));
        assert!(problem(&["branch", "-d", "--merged"]).is_some());
        assert_eq!(acts(&["branch", "--show-current"]), one("branch list", &[]));
        assert_eq!(
            acts(&["branch", "-r", "--format", "%(refname)", "--list", "*/x*"]),
            one("branch list", &[])
        );
        assert_eq!(acts(&["branch", "feat"]), one("branch create", &[]));
        assert_eq!(acts(&["branch", "-f", "main", "HEAD~3"]), one("branch create", &["force"]));
        assert_eq!(acts(&["branch", "-d", "feat"]), one("branch delete", &[]));
        assert_eq!(acts(&["branch", "-D", "feat"]), one("branch delete", &["force"]));
        assert_eq!(acts(&["branch", "-M", "a", "b"]), one("branch rename", &["force"]));
        assert_eq!(acts(&["branch", "-u", "origin/feat"]), one("branch set-upstream", &[]));
        assert!(problem(&["branch", "-d", "-m", "x"]).is_some());
    }

    #[test]
    fn tag_modes_are_verbs() {
        assert_eq!(acts(&["tag"]), one("tag list", &[]));
        assert_eq!(acts(&["tag", "-l", "v*"]), one("tag list", &[]));
        assert_eq!(acts(&["tag", "-n3"]), one("tag list", &[]));
        assert_eq!(acts(&["tag", "--points-at", "HEAD"]), one("tag list", &[]));
        assert_eq!(acts(&["tag", "--points-at"]), one("tag list", &[]));
        assert_eq!(acts(&["tag", "v*", "--merged"]), one("tag list", &[]));
        assert_eq!(acts(&["tag", "v1"]), one("tag create", &[]));
        assert_eq!(acts(&["tag", "-a", "-m", "msg", "v1"]), one("tag create", &[]));
        assert_eq!(acts(&["tag", "-f", "v1"]), one("tag create", &["force"]));
        assert_eq!(acts(&["tag", "-d", "v1"]), one("tag delete", &[]));
        assert_eq!(acts(&["tag", "-v", "v1"]), one("tag verify", &[]));
    }

    #[test]
    fn config_reads_and_writes_are_verbs() {
        assert_eq!(acts(&["config", "--get", "user.name"]), one("config get", &[]));
        assert_eq!(acts(&["config", "user.name"]), one("config get", &[]));
        assert_eq!(acts(&["config", "--global", "--get-regexp", "^remote"]), one("config get", &[]));
        assert_eq!(acts(&["config", "-l"]), one("config list", &[]));
        assert_eq!(acts(&["config", "get", "user.name"]), one("config get", &[]));
        assert_eq!(acts(&["config", "user.name", "x"]), one("config set", &[]));
        assert_eq!(acts(&["config", "--ad", "alias.x", "!sh"]), one("config set", &[]));
        assert_eq!(acts(&["config", "--global", "core.pager", "x"]), one("config set", &[]));
        assert_eq!(acts(&["config", "--unset-a", "x.y"]), one("config unset", &[]));
        assert_eq!(acts(&["config", "-e"]), one("config edit", &[]));
        assert_eq!(acts(&["config", "set", "a.b", "c"]), one("config set", &[]));
        assert_eq!(problem(&["config", "--un", "x.y"]), Some("option --un is ambiguous".into()));
    }

    #[test]
    fn remote_stash_worktree_and_reflog_subcommands_are_verbs() {
        assert_eq!(acts(&["remote"]), one("remote list", &[]));
        assert_eq!(acts(&["remote", "-v"]), one("remote list", &[]));
        assert_eq!(acts(&["remote", "rm", "origin"]), one("remote remove", &[]));
        assert_eq!(acts(&["remote", "-v", "add", "x", "u"]), one("remote add", &[]));
        assert_eq!(acts(&["stash"]), one("stash push", &[]));
        assert_eq!(acts(&["stash", "-p"]), one("stash push", &[]));
        assert_eq!(acts(&["stash", "save", "wip"]), one("stash push", &[]));
        assert_eq!(acts(&["stash", "drop"]), one("stash drop", &[]));
        assert_eq!(acts(&["worktree", "list"]), one("worktree list", &[]));
        assert_eq!(acts(&["reflog"]), one("reflog show", &[]));
        assert_eq!(acts(&["reflog", "-5", "main"]), one("reflog show", &[]));
        assert_eq!(acts(&["reflog", "expire", "--all"]), one("reflog expire", &[]));
    }

    #[test]
    fn local_changes_that_lose_work_are_marked() {
        assert_eq!(acts(&["reset", "--hard"]), one("reset", &["hard"]));
        assert_eq!(acts(&["reset", "--h", "HEAD"]), one("reset", &["hard"]));
        assert_eq!(acts(&["reset", "--hard", "--soft"]), one("reset", &[]));
        assert_eq!(acts(&["reset", "HEAD~1"]), one("reset", &[]));
        assert_eq!(acts(&["checkout", "-b", "feat"]), one("checkout", &[]));
        assert_eq!(acts(&["checkout", "-fb", "feat"]), one("checkout", &["discard"]));
        assert_eq!(acts(&["checkout", "-B", "main"]), one("checkout", &["force-create"]));
        assert_eq!(acts(&["switch", "-c", "feat"]), one("switch", &[]));
        assert_eq!(acts(&["switch", "--discard-changes", "feat"]), one("switch", &["discard"]));
        assert_eq!(acts(&["switch", "-C", "feat"]), one("switch", &["force-create"]));
        assert_eq!(acts(&["rm", "-rf", "dir"]), one("rm", &["discard"]));
        assert_eq!(acts(&["stage", "f"]), one("add", &[]));
        assert_eq!(acts(&["clone", "--template=/t", "https://h/r"]), one("clone", &["template"]));
        assert_eq!(
            acts(&["clone", "-c", "core.fsmonitor=x", "https://h/r"]),
            one("clone", &["config-write"])
        );
        assert_eq!(acts(&["init", "--templ=/t"]), one("init", &["template"]));
        assert_eq!(
            acts(&["apply", "--unsafe-paths", "p.diff"]),
            one("apply", &["patch-unread", "unsafe-paths"])
        );
    }

    #[test]
    fn apply_and_am_declare_every_path_their_patches_write() {
        let patch = "diff --git a/.claude/settings.json b/.claude/settings.json\nnew file mode 100644\n--- /dev/null\n+++ b/.claude/settings.json\n@@ -0,0 +1 @@\n+{}\ndiff --git a/src/x.rs b/src/y.rs\nrename from src/x.rs\nrename to src/y.rs\n";
        let read = |args: &[&str]| {
            let args = argv(args);
            let src = sources(&args);
            let inputs = Inputs {
                stdin: if src.stdin { Input::Text(patch.into()) } else { Input::Unread },
                files: src.files.iter().map(|_| Input::Text(patch.into())).collect(),
            };
            let inv = parse_with(&args, &inputs);
            assert_eq!(inv.problem, None, "{args:?}");
            let mut w: Vec<(String, String)> = inv
                .files
                .iter()
                .filter(|f| f.access == Access::Write)
                .map(|f| (f.path.clone(), f.flag.clone()))
                .collect();
            w.sort();
            (inv.actions[0].marks.clone(), w)
        };
        let want =
            |flag: &str, paths: &[&str]| -> Vec<(String, String)> { paths.iter().map(|p| (p.to_string(), flag.to_string())).collect() };
        assert_eq!(
            read(&["apply", "p.diff"]).1,
            want("apply", &[".claude/settings.json", "src/x.rs", "src/y.rs"])
        );
        assert_eq!(
            read(&["-C", "sub", "apply", "--directory=d", "-"]).1,
            want("apply", &["sub/d/.claude/settings.json", "sub/d/src/x.rs", "sub/d/src/y.rs"])
        );
        assert_eq!(read(&["apply", "--cached"]).1.len(), 3);
        assert_eq!(
            read(&["am", "-3", "m.mbox"]).1,
            want("am", &[".claude/settings.json", "src/x.rs", "src/y.rs"])
        );
        // Only shown: nothing read, nothing written.
        assert_eq!(sources(&argv(&["apply", "--check", "p.diff"])), Sources::default());
        assert!(read(&["apply", "--stat", "p.diff"]).1.is_empty());
    }

    #[test]
    fn archive_format_patch_and_bundle_create_declare_the_files_they_write_and_read() {
        let files = |words: &[&str]| -> Vec<(String, Access, String)> {
            let inv = parse(&argv(words));
            assert_eq!(inv.problem, None, "{words:?}");
            inv.files.into_iter().map(|f| (f.path, f.access, f.flag)).collect()
        };
        let w = |p: &str, flag: &str| (p.to_string(), Access::Write, flag.to_string());
        let r = |p: &str, flag: &str| (p.to_string(), Access::Read, flag.to_string());
        // archive: -o in every form git reads, below -C; --add-file is a read.
        assert_eq!(files(&["archive", "HEAD"]), []);
        assert_eq!(files(&["archive", "-o", "x.tar", "HEAD"]), [w("x.tar", "-o/--output")]);
        assert_eq!(files(&["archive", "-ox.tar", "HEAD"]), [w("x.tar", "-o/--output")]);
        assert_eq!(files(&["archive", "--output=x.tar", "HEAD"]), [w("x.tar", "-o/--output")]);
        assert_eq!(
            files(&["-C", "r", "archive", "--output", "x.tar", "HEAD"]),
            [w("r/x.tar", "-o/--output")]
        );
        assert_eq!(
            files(&["archive", "--remote=origin", "-o", "x.tar", "HEAD"]),
            [w("x.tar", "-o/--output")]
        );
        assert_eq!(files(&["archive", "--add-file=f", "HEAD"]), [r("f", "--add-file")]);
        // format-patch: the directory (-o anywhere, in a cluster, after an option that takes a
        // value in the second parse), the diff option's file, or the working directory.
        assert_eq!(files(&["format-patch", "--stdout", "-1"]), []);
        assert_eq!(files(&["format-patch", "-1"]), [w(".", "format-patch")]);
        assert_eq!(files(&["-C", "r", "format-patch", "-1"]), [w("r/.", "format-patch")]);
        assert_eq!(files(&["format-patch", "--stdout", "--no-stdout", "-1"]), [w(".", "format-patch")]);
        let dir = |d: &str| vec![w(d, "-o/--output-directory")];
        assert_eq!(files(&["format-patch", "-o", "out", "-1"]), dir("out"));
        assert_eq!(files(&["format-patch", "-oout", "-1"]), dir("out"));
        assert_eq!(files(&["format-patch", "-ko", "out", "-1"]), dir("out"));
        assert_eq!(files(&["format-patch", "-nkoout", "-1"]), dir("out"));
        assert_eq!(files(&["format-patch", "--output-directory=out", "-1"]), dir("out"));
        assert_eq!(files(&["format-patch", "--author", "-o", "out", "-1"]), dir("out"));
        assert_eq!(files(&["format-patch", "-v", "-o", "-1"]), [w(".", "format-patch")]);
        assert_eq!(files(&["format-patch", "-1", "--", "-o", "out"]), [w(".", "format-patch")]);
        assert_eq!(
            files(&["format-patch", "--output", "all.patch", "-1"]),
            [w("all.patch", "--output")]
        );
        assert_eq!(files(&["format-patch", "--output=all.patch", "-1"]), [w("all.patch", "--output")]);
        assert_eq!(
            files(&["format-patch", "--stdout", "--signature-file", "sig", "-1"]),
            [r("sig", "--signature-file/--description-file")]
        );
        let acts = |words: &[&str]| -> Vec<String> { parse(&argv(words)).actions.into_iter().map(|a| a.verb).collect() };
        assert_eq!(acts(&["format-patch", "--suffix=.txt", "-1"]), ["format-patch"]);
        assert_eq!(acts(&["format-patch", "--suffix", "/x", "-1"]), ["format-patch", "--output"]);
        // bundle create: the file after the options; `-` is stdout.
        assert_eq!(files(&["bundle", "create", "x.bundle", "HEAD"]), [w("x.bundle", "bundle create")]);
        assert_eq!(
            files(&["bundle", "create", "-q", "--version", "3", "--", "x.bundle", "--all"]),
            [w("x.bundle", "bundle create")]
        );
        assert_eq!(files(&["bundle", "create", "-", "HEAD"]), []);
        assert_eq!(files(&["bundle", "verify", "x.bundle"]), []);
        assert_eq!(acts(&["bundle", "create", "x.bundle", "HEAD"]), ["bundle create"]);
        assert_eq!(acts(&["bundle", "-q", "create", "x.bundle"]), ["bundle"]);
        // A suffix from configuration the agent could write is judged the same way.
        assert_eq!(config_key("format.suffix", ".txt"), None);
        assert!(config_key("format.suffix", "/../x").is_some());
    }

    #[test]
    fn clone_init_and_worktree_add_declare_the_directory_they_create() {
        let files = |words: &[&str]| -> Vec<(String, String)> {
            let inv = parse(&argv(words));
            assert_eq!(inv.problem, None, "{words:?}");
            inv.files.into_iter().map(|f| (f.path, f.flag)).collect()
        };
        let f = |p: &str, flag: &str| (p.to_string(), flag.to_string());
        assert_eq!(files(&["clone", "https://h/o/app.git"]), [f("app", "clone")]);
        assert_eq!(
            files(&["clone", "-q", "https://h/o/app.git/", "work/app"]),
            [f("work/app", "clone")]
        );
        assert_eq!(files(&["-C", "repos", "clone", "git@h:o/app"]), [f("repos/app", "clone")]);
        assert_eq!(files(&["clone", "--bare", "https://h/o/app.git"]), [f("app.git/HEAD", "--bare")]);
        assert_eq!(files(&["clone", "--mirror", "https://h/o/app", "m"]), [f("m/HEAD", "--mirror")]);
        assert_eq!(
            files(&["clone", "--separate-git-dir", "gd", "https://h/o/app"]),
            [f("app", "clone"), f("gd/HEAD", "--separate-git-dir")]
        );
        assert_eq!(files(&["init"]), [f(".", "init")]);
        assert_eq!(files(&["init", "--bare", "x"]), [f("x/HEAD", "--bare")]);
        assert_eq!(files(&["--bare", "init", "x"]), [f("x/HEAD", "--bare")]);
        assert_eq!(
            files(&["worktree", "add", "-b", "fix", "../wt", "main"]),
            [f("../wt", "worktree add")]
        );
        assert_eq!(files(&["status"]), []);
    }

    #[test]
    fn a_diff_output_file_is_its_own_refused_action() {
        assert_eq!(
            acts(&["log", "--output=/home/a/.bashrc", "-1"]),
            vec![("log".into(), vec![]), ("--output".into(), vec![])]
        );
        assert_eq!(
            acts(&["stash", "show", "--output", "x"]),
            vec![("stash show".into(), vec![]), ("--output".into(), vec![])]
        );
        assert_eq!(acts(&["diff", "--", "--output=x"]), one("diff", &[]));
    }

    #[test]
    fn unknown_subcommand_options_are_problems() {
        assert_eq!(
            problem(&["push", "--bogus", "origin", "feat"]),
            Some("unknown option --bogus".into())
        );
        // After --end-of-options every word is an operand: `--force` is a refspec here.
        assert_eq!(
            problem(&["push", "--end-of-options", "origin", "--force"]),
            Some("push refspec --force starts with a dash".into())
        );
        assert_eq!(
            problem(&["push", "--", "origin", "-f"]),
            Some("push refspec -f starts with a dash".into())
        );
        assert!(problem(&["push", "origin", "^feat"]).is_some());
    }

    #[test]
    fn config_reads_its_options_as_git_does_options_end_at_the_name() {
        // git config <name> <value>: whatever the value looks like, it is a write.
        assert_eq!(acts(&["config", "user.name", "--get"]), one("config set", &[]));
        assert_eq!(acts(&["config", "diff.external", "prog", "--get"]), one("config set", &[]));
        assert_eq!(acts(&["config", "core.worktree", "../../x", "--list"]), one("config set", &[]));
        assert_eq!(acts(&["config", "remote.origin.pushurl", "u", "-l"]), one("config set", &[]));
        assert_eq!(acts(&["config", "--global", "user.name", "-l"]), one("config set", &[]));
        assert_eq!(acts(&["config", "--end-of-options", "user.name"]), one("config get", &[]));
        assert_eq!(acts(&["config", "--end-of-options", "--get", "x"]), one("config set", &[]));
        assert_eq!(acts(&["config", "--get", "user.name"]), one("config get", &[]));
        // The subcommand form is recognised only as the first word.
        assert_eq!(acts(&["config", "list", "--show-origin"]), one("config list", &[]));
        assert_eq!(acts(&["config", "--global", "get", "x"]), one("config set", &[]));
    }

    #[test]
    fn options_end_at_the_first_operand_where_git_stops_there() {
        // ls-remote and grep stop at their first operand: what follows is a pattern.
        assert_eq!(acts(&["ls-remote", "origin", "--upload-pack=x"]), one("ls-remote", &[]));
        assert_eq!(acts(&["grep", "TODO", "-Ovim"]), one("grep", &[]));
        assert_eq!(acts(&["grep", "-Ovim", "TODO"]), one("grep", &["exec-option"]));
    }

    #[test]
    fn end_of_options_ends_options_for_every_subcommand() {
        assert_eq!(acts(&["log", "--end-of-options", "--output=x"]), one("log", &[]));
        assert_eq!(
            acts(&["commit", "-m", "x", "--end-of-options", "--amend"]).remove(0).1,
            Vec::<String>::new()
        );
        assert_eq!(acts(&["push", "origin", "--end-of-options", "feat"]), one("push", &[]));
    }

    #[test]
    fn git_dir_and_work_tree_naming_the_same_repository_are_global_options_the_gate_repeats() {
        assert_eq!(acts(&["--git-dir=.git", "status"]), one("status", &[]));
        assert_eq!(acts(&["--git-dir", "./.git", "--work-tree=.", "log"]), one("log", &[]));
        assert_eq!(
            acts(&["--git-dir=..", "status"]),
            vec![("status".into(), vec![]), ("--git-dir".into(), vec![])]
        );
        assert_eq!(acts(&["--bare", "log"]), vec![("log".into(), vec![]), ("--bare".into(), vec![])]);
        assert_eq!(
            git_at(&argv(&["-C", "x", "--literal-pathspecs", "--git-dir=.git", "status"])).globals,
            argv(&["-C", "x", "--literal-pathspecs", "--git-dir=.git"])
        );
    }

    #[test]
    fn discarding_uncommitted_work_is_marked_in_every_form() {
        for words in [
            &["checkout", "--", "README.md"][..],
            &["checkout", "."],
            &["checkout", "HEAD~1", "--", "README.md"],
            &["checkout", "main", "README.md"],
            &["checkout", "--ours", "README.md"],
            &["checkout", "--pathspec-from-file=l"],
            &["checkout", ":(icase)ie.yaml"],
            &["checkout", "*.yaml"],
            &["checkout", "--end-of-options", "main", "--", "README.md"],
            &["restore", "README.md"],
            &["restore", "."],
            &["restore", "-W", "README.md"],
            &["restore", "--source=HEAD~1", "README.md"],
            &["restore", "-SW", "x"],
            &["reset", "--merge"],
        ] {
            assert!(marks(words).contains(&"discard".to_string()), "{words:?}");
        }
        assert_eq!(acts(&["restore", "--staged", "x"]), one("restore", &[]));
        assert_eq!(acts(&["reset", "--keep", "HEAD~1"]), one("reset", &[]));
        assert_eq!(acts(&["checkout", "-b", "feat", "origin/main"]), one("checkout", &[]));
        assert_eq!(acts(&["checkout", "--",]), one("checkout", &[]));
    }

    #[test]
    fn a_lone_checkout_operand_is_asked_of_the_real_git() {
        let inv = p(&["-C", "r", "checkout", "feat"]);
        assert_eq!(
            inv.actions[0].probe,
            Some(Probe::CheckoutArg {
                arg: "feat".into(),
                git: GitAt {
                    globals: argv(&["-C", "r"])
                }
            })
        );
        assert_eq!(p(&["checkout", "-b", "feat"]).actions[0].probe, None);
    }

    #[test]
    fn other_branches_rewritten_are_marked() {
        assert_eq!(marks(&["rebase", "--update-refs", "main"]), vec!["update-refs"]);
        assert_eq!(
            marks(&["rebase", "--update-refs", "--no-update-refs", "main"]),
            Vec::<String>::new()
        );
        assert_eq!(
            acts(&["worktree", "add", "-B", "feat", "../wt"]),
            one("worktree add", &["force-create"])
        );
        assert_eq!(acts(&["worktree", "add", "-f", "../wt", "main"]), one("worktree add", &["force"]));
        assert_eq!(acts(&["worktree", "add", "../wt", "-b", "x"]), one("worktree add", &[]));
        assert_eq!(
            acts(&["branch", "-d", "-r", "origin/main"]),
            one("branch delete", &["remote-tracking"])
        );
    }

    #[test]
    fn dry_runs_and_checks_are_verbs_of_their_own() {
        assert_eq!(acts(&["clean", "-n"]), one("clean dry-run", &[]));
        assert_eq!(acts(&["clean", "-fdx"]), one("clean", &[]));
        assert_eq!(acts(&["commit", "--dry-run", "-a"]), one("commit dry-run", &[]));
        assert_eq!(acts(&["push", "-n", "--force", "origin", "main"]), one("push dry-run", &[]));
        assert_eq!(
            acts(&["push", "-n", "--receive-pack=x", "o", "f"]),
            one("push dry-run", &["exec-option"])
        );
        assert_eq!(acts(&["rm", "-n", "x"]), one("rm dry-run", &[]));
        assert_eq!(acts(&["mv", "--dry-run", "a", "b"]), one("mv dry-run", &[]));
        assert_eq!(acts(&["apply", "--check", "p"]), one("apply dry-run", &[]));
        assert_eq!(acts(&["apply", "--stat", "--apply", "p"]), one("apply", &["patch-unread"]));
        assert_eq!(acts(&["remote", "prune", "-n", "origin"]), one("remote prune dry-run", &[]));
        assert_eq!(acts(&["reflog", "expire", "--dry-run", "--all"]), one("reflog expire dry-run", &[]));
        assert_eq!(acts(&["worktree", "prune", "-vn"]), one("worktree prune dry-run", &[]));
        assert_eq!(acts(&["reflog", "delete", "--dry", "HEAD@{1}"]), one("reflog delete dry-run", &[]));
    }

    /// The marks the configuration `entries` gives the first action of `words`.
    fn config_marks(words: &[&str], entries: &[(&str, &str)]) -> Vec<String> {
        let inv = p(words);
        let e: Vec<(String, String)> = entries.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        config_effect_marks(&inv.actions[0].config, &e).into_iter().collect()
    }

    #[test]
    fn configuration_that_widens_a_call_where_argv_is_silent_gives_its_marks() {
        let glob = "refs/heads/*:refs/heads/*";
        // fetch.prune, remote.<name>.prune (which wins over it), with a refspec onto local refs.
        assert_eq!(
            config_marks(&["fetch", "origin", glob], &[("fetch.prune", "true")]),
            vec!["force-local"]
        );
        assert!(
            config_marks(
                &["fetch", "origin", glob],
                &[("fetch.prune", "true"), ("remote.origin.prune", "false")]
            )
            .is_empty()
        );
        assert_eq!(
            config_marks(&["fetch", "origin", glob], &[("remote.origin.prune", "yes")]),
            vec!["force-local"]
        );
        assert!(config_marks(&["fetch", "--no-prune", "origin", glob], &[("fetch.prune", "true")]).is_empty());
        assert!(config_marks(&["fetch", "origin"], &[("fetch.prune", "true")]).is_empty());
        assert_eq!(
            config_marks(&["pull", "origin", glob], &[("fetch.prune", "1")]),
            vec!["force-local"]
        );
        // pruneTags deletes local tags when pruning.
        assert!(config_marks(&["fetch", "origin"], &[("fetch.prunetags", "true")]).is_empty());
        assert_eq!(
            config_marks(&["fetch", "origin"], &[("fetch.prunetags", "true"), ("fetch.prune", "true")]),
            vec!["force-local"]
        );
        assert_eq!(
            config_marks(&["fetch", "-p"], &[("remote.up.prunetags", "true")]),
            vec!["force-local"]
        );
        // A configured refspec that stores into local branches.
        assert_eq!(
            config_marks(
                &["fetch", "origin", "main"],
                &[("remote.origin.fetch", "+refs/heads/*:refs/heads/*")]
            ),
            vec!["force-local"]
        );
        assert!(config_marks(&["fetch"], &[("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")]).is_empty());
        // rebase.updateRefs, for a rebase and a rebasing pull.
        assert_eq!(
            config_marks(&["rebase", "main"], &[("rebase.updaterefs", "true")]),
            vec!["update-refs"]
        );
        assert!(config_marks(&["rebase", "--no-update-refs", "main"], &[("rebase.updaterefs", "true")]).is_empty());
        assert_eq!(
            config_marks(&["pull", "--rebase"], &[("rebase.updaterefs", "true")]),
            vec!["update-refs"]
        );
        assert!(config_marks(&["pull"], &[("rebase.updaterefs", "true")]).is_empty());
        assert_eq!(
            config_marks(&["pull"], &[("rebase.updaterefs", "true"), ("pull.rebase", "merges")]),
            vec!["update-refs"]
        );
        assert!(config_marks(&["pull", "--no-rebase"], &[("rebase.updaterefs", "true"), ("pull.rebase", "true")]).is_empty());
        // push.followTags, push.recurseSubmodules, remote.<name>.mirror.
        assert_eq!(
            config_marks(&["push", "origin", "feat"], &[("push.followtags", "true")]),
            vec!["tags"]
        );
        assert!(config_marks(&["push", "--no-follow-tags", "origin", "feat"], &[("push.followtags", "true")]).is_empty());
        assert_eq!(
            config_marks(&["push", "origin", "feat"], &[("push.recursesubmodules", "on-demand")]),
            vec!["submodule-push"]
        );
        assert_eq!(
            config_marks(&["push", "origin", "feat"], &[("remote.origin.mirror", "true")]),
            vec!["mirror"]
        );
        assert!(config_marks(&["push", "origin", "feat"], &[("remote.other.mirror", "true")]).is_empty());
    }

    #[test]
    fn bisect_view_is_judged_as_the_command_it_runs() {
        // An option first: `git log <args> --bisect --`, whose --output writes a file.
        assert_eq!(acts(&["bisect", "view", "-p"]), one("log", &[]));
        let out: Vec<String> = acts(&["bisect", "visualize", "--output=x"]).into_iter().map(|(v, _)| v).collect();
        assert_eq!(out, vec!["log", "--output"]);
        // A name: that git command, with `--bisect --` after its arguments.
        let out: Vec<String> = acts(&["bisect", "view", "log", "--output=x"]).into_iter().map(|(v, _)| v).collect();
        assert_eq!(out, vec!["log", "--output"]);
        assert_eq!(acts(&["bisect", "view", "show"]), one("show", &[]));
        // git refuses `reset --hard --bisect --` too.
        assert_eq!(
            problem(&["bisect", "view", "reset", "--hard"]),
            Some("unknown option --bisect".into())
        );
        // tig or git…: a program from PATH.
        assert_eq!(acts(&["bisect", "view", "gitk"]), one("bisect view program", &[]));
        assert_eq!(acts(&["bisect", "view", "tig"]), one("bisect view program", &[]));
        assert_eq!(acts(&["bisect", "run", "make"]), one("bisect run", &[]));
    }

    #[test]
    fn the_last_of_dry_run_and_no_dry_run_decides_as_parse_options_does() {
        assert_eq!(acts(&["remote", "prune", "-n", "--no-dry-run", "origin"]), one("remote prune", &[]));
        assert_eq!(acts(&["worktree", "prune", "-n", "--no-dry-run"]), one("worktree prune", &[]));
        assert_eq!(
            acts(&["reflog", "expire", "--dry-run", "--no-dry-run", "--expire=now", "--all"]),
            one("reflog expire", &[])
        );
        assert_eq!(
            acts(&["reflog", "expire", "--no-dry-run", "-n", "--all"]),
            one("reflog expire dry-run", &[])
        );
        assert_eq!(acts(&["reflog", "delete", "-n", "--no-d", "HEAD@{1}"]), one("reflog delete", &[]));
    }

    #[test]
    fn read_only_verbs_are_named_and_their_undeclared_writes_are_actions_of_their_own() {
        assert_eq!(acts(&["fsck", "--full"]), one("fsck", &[]));
        assert_eq!(acts(&["fsck", "--lost-found"]), one("fsck", &["writes-files"]));
        assert_eq!(acts(&["notes"]), one("notes list", &[]));
        assert_eq!(acts(&["notes", "--ref=x", "show"]), one("notes show", &[]));
        assert_eq!(acts(&["archive", "HEAD"]), one("archive", &[]));
        // Its file writes are declared files (archive_format_patch_and_bundle_create_…).
        assert_eq!(acts(&["archive", "--out=x.tar", "HEAD"]), one("archive", &[]));
        assert_eq!(acts(&["archive", "--remote=o", "--ex=x", "HEAD"]), one("archive", &["exec-option"]));
        assert_eq!(acts(&["format-patch", "--stdout", "-1"]), one("format-patch", &[]));
        assert_eq!(acts(&["format-patch", "-1"]), one("format-patch", &[]));
        assert_eq!(acts(&["fast-export", "--all"]), one("fast-export", &[]));
        assert_eq!(
            acts(&["fast-export", "--export-marks=m", "--all"]),
            vec![("fast-export".into(), vec![]), ("--output".into(), vec![])]
        );
        assert_eq!(acts(&["bisect", "log"]), one("bisect log", &[]));
        assert_eq!(acts(&["bisect", "view"]), one("bisect view", &[]));
        assert_eq!(acts(&["rerere"]), one("rerere record", &[]));
        assert_eq!(acts(&["submodule"]), one("submodule status", &[]));
        assert_eq!(acts(&["lfs", "ls-files"]), one("lfs ls-files", &[]));
        assert_eq!(acts(&["whatchanged", "-1"]), one("whatchanged", &[]));
    }

    #[test]
    fn urls_for_helpers_git_does_not_ship_are_remote_helpers() {
        assert!(marks(&["fetch", "testgit://h/r"]).contains(&"remote-helper".to_string()));
        assert!(marks(&["clone", "ext::sh", "d"]).contains(&"remote-helper".to_string()));
        for url in ["https://h/r", "git://h/r", "ssh://h/r", "file:///r", "h:r", "git+ssh://h/r"] {
            assert!(!marks(&["fetch", url]).contains(&"remote-helper".to_string()), "{url}");
        }
    }

    #[test]
    fn messages_read_from_files_are_local_reads_where_git_reads_them() {
        let inv = p(&["-C", "sub", "tag", "-F", "/etc/hostname", "t9"]);
        assert_eq!(
            inv.files.iter().map(|f| (f.path.as_str(), f.access)).collect::<Vec<_>>(),
            vec![("/etc/hostname", Access::Read)]
        );
        let inv = p(&["-C", "sub", "commit", "-F", "msg"]);
        assert_eq!(inv.files[0].path, "sub/msg");
        assert!(p(&["commit", "-F", "-"]).files.is_empty());
    }

    #[test]
    fn commit_making_verbs_name_what_they_replay() {
        let scope = |w: &[&str]| p(w).actions[0].scope.clone();
        assert_eq!(
            scope(&["cherry-pick", "a..b", "c"]),
            Some(ScopeTarget::Replay {
                how: Replay::Picks(argv(&["a..b", "c"])),
                git: GitAt::default()
            })
        );
        assert_eq!(
            scope(&["merge", "--no-ff", "feat"]),
            Some(ScopeTarget::Replay {
                how: Replay::Merge(argv(&["feat"])),
                git: GitAt::default()
            })
        );
        assert_eq!(
            scope(&["rebase", "--onto", "x", "up", "br"]),
            Some(ScopeTarget::Replay {
                how: Replay::Rebase {
                    upstream: Some("up".into()),
                    branch: Some("br".into()),
                    root: false
                },
                git: GitAt::default()
            })
        );
        assert_eq!(
            scope(&["revert", "--continue"]),
            Some(ScopeTarget::Sequence { git: GitAt::default() })
        );
        assert_eq!(acts(&["merge", "--abort"]), one("merge abort", &[]));
        assert_eq!(problem(&["cherry-pick"]), Some("git cherry-pick needs the commits it picks".into()));
    }

    #[test]
    fn am_reads_its_mailboxes_and_names_the_files_their_patches_touch() {
        let args = argv(&["am", "-3", "--directory=sub", "a.mbox", "b.mbox"]);
        assert_eq!(
            sources(&args),
            Sources {
                stdin: false,
                files: vec![("a.mbox".into(), 3), ("b.mbox".into(), 4)]
            }
        );
        assert_eq!(
            sources(&argv(&["am", "-s"])),
            Sources {
                stdin: true,
                files: vec![]
            }
        );
        assert_eq!(sources(&argv(&["am", "--continue"])), Sources::default());
        let patch = "From x\nSubject: y\n\ndiff --git a/ie.yaml b/ie.yaml\n--- a/ie.yaml\n+++ b/ie.yaml\n@@ -1 +1 @@\n-a\n+b\n";
        let mail = "diff --git a/checks/x.md b/checks/x.md\nnew file mode 100644\n--- /dev/null\n+++ b/checks/x.md\n";
        let inputs = Inputs {
            stdin: Input::Unread,
            files: vec![Input::Text(patch.into()), Input::Text(mail.into())],
        };
        let inv = parse_with(&args, &inputs);
        assert_eq!(
            inv.actions[0].scope,
            Some(ScopeTarget::Patches {
                files: Ok(argv(&["sub/checks/x.md", "sub/ie.yaml"]))
            })
        );
        let unread = parse(&argv(&["am", "x.mbox"]));
        assert!(matches!(unread.actions[0].scope, Some(ScopeTarget::Patches { files: Err(_) })));
    }

    #[test]
    fn patch_paths_read_quoted_renamed_and_stripped_names() {
        let text = "diff --git \"a/sp ace\\t.md\" \"b/sp ace\\t.md\"\n--- \"a/sp ace\\t.md\"\n+++ \"b/sp ace\\t.md\"\ndiff --git a/old b/new\nsimilarity index 100%\nrename from old\nrename to new\n";
        assert_eq!(patch_paths(text, 1, None), Ok(argv(&["new", "old", "sp ace\t.md"])));
        assert!(patch_paths("no patch here", 1, None).is_err());
        assert_eq!(patch_paths("--- x/a/b\n+++ y/a/b\n", 2, None), Ok(argv(&["b"])));
    }

    #[test]
    fn config_keys_that_run_a_program_or_redirect_a_write_are_named() {
        for (key, value) in [
            ("alias.st", "!sh -c id"),
            ("core.fsmonitor", "/tmp/x"),
            ("core.pager", "less"),
            ("core.editor", "vi"),
            ("diff.external", "x"),
            ("diff.pdf.textconv", "x"),
            ("filter.lfs.smudge", "x"),
            ("credential.helper", "store"),
            ("credential.https://h.helper", "x"),
            ("core.sshcommand", "x"),
            ("core.gitproxy", "x"),
            ("core.hookspath", "h"),
            ("man.viewer", "x"),
            ("man.x.cmd", "x"),
            ("help.browser", "x"),
            ("remote.origin.pushurl", "u"),
            ("remote.origin.push", "x:y"),
            ("remote.gh/up.uploadpack", "x"),
            ("url.https://evil/.insteadof", "https://github.com/"),
            ("include.path", "x"),
            ("includeif.gitdir:/x/.path", "y"),
            ("core.worktree", "../x"),
            ("core.sharedrepository", "0777"),
            ("remote.origin.fetch", "+refs/heads/*:refs/heads/*"),
            ("remote.origin.fetch", "+refs/heads/x:refs/replace/abc"),
            ("fetch.prunetags", "true"),
            ("rebase.updaterefs", "yes"),
            ("push.default", "upstream"),
            ("submodule.x.update", "!x"),
            ("protocol.ext.allow", "always"),
            ("pager.log", "x"),
            ("trailer.x.command", "x"),
            ("remote.origin.url", "ext::sh -c id"),
            ("remote.origin.url", "testgit://h/r"),
        ] {
            assert!(config_key(key, value).is_some(), "{key}={value}");
        }
        for (key, value) in [
            ("alias.st", "status"),
            ("remote.origin.url", "https://h/r"),
            ("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"),
            ("remote.gh/up.fetch", "+refs/heads/*:refs/remotes/gh/up/*"),
            ("branch.main.merge", "refs/heads/main"),
            ("core.fsmonitor", "false"),
            ("core.sharedrepository", "umask"),
            ("push.default", "simple"),
            ("fetch.prunetags", "false"),
            ("user.name", "x"),
            ("core.bare", "false"),
        ] {
            assert_eq!(config_key(key, value), None, "{key}={value}");
        }
    }
}
