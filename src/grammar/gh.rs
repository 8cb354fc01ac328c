//! gh (GitHub CLI): argv -> the canonical command path, with aliases resolved, and the facts the
//! policy needs about it.
//!
//! gh is cobra + pflag. Finding the command mirrors cobra's `Command.Find`: at each level
//! `stripFlags` skips options (a `--name` without `=` or a two-character `-x` is assumed to take
//! the next word unless it is a boolean known at that level: `--help` everywhere, `--version` at
//! the root), the first remaining word names the child, exactly (gh enables neither prefix nor
//! case-insensitive matching), and that word is removed before the next level looks. So a
//! persistent `-R/--repo` may sit before the group, between group and command, or after it.
//! What is left after the path is what the leaf parses.
//!
//! Leaves whose flags decide the verdict are scanned strictly with their full pflag table (an
//! unknown option is a problem, as it is an error for gh): `api`, `pr review`, `pr create`,
//! `pr comment`, `pr edit`, `issue create|comment|edit`, `repo sync`, `config get`. Other leaves
//! are classified by their path alone; for them `--help` counts as help only when no option
//! before it could have swallowed it as a value (no short cluster), which errs towards running
//! the classification rather than calling a mutating call "help".
//!
//! `gh api` is read as the installed gh (2.23) builds its request: placeholders filled from a
//! [`Fill`] the gate gathered (or marked [`PLACEHOLDER`] without one), repeated fields refused,
//! GET alone moving fields into the query string, `-X` on `graphql` judged as that method,
//! `--paginate` on a write marked. Commands that paste an operand into a REST path
//! (`PATH_OPERANDS`) take only a plain segment.
//!
//! Unknown names (user aliases, extensions, commands newer than this table) come back as the
//! verb typed, so the policy refuses them as unclassified. This module decides nothing and does
//! no I/O.

use std::collections::BTreeMap;

use crate::grammar::opts::{self, Item, Opt, Parsed, Style, Unknown};
use crate::grammar::{Access, Action, Body, Claim, Contents, Invocation, LocalFile, ScopeTarget, http};
use crate::tool::Tool;

/// gh needs no hardening arguments; its environment is pinned by the policy instead.
pub const PREPEND: &[&str] = &[];

// ---------------------------------------------------------------------------------------------
// The command tree (cli/cli pkg/cmd/**, `Aliases:` fields)

struct Cmd {
    name: &'static str,
    aliases: &'static [&'static str],
    children: &'static [Cmd],
    /// A help topic or cobra's `help`: whatever follows, gh only prints text.
    topic: bool,
}

const fn leaf(name: &'static str) -> Cmd {
    Cmd {
        name,
        aliases: &[],
        children: &[],
        topic: false,
    }
}

const fn leaf_aka(name: &'static str, aliases: &'static [&'static str]) -> Cmd {
    Cmd {
        name,
        aliases,
        children: &[],
        topic: false,
    }
}

const fn topic(name: &'static str) -> Cmd {
    Cmd {
        name,
        aliases: &[],
        children: &[],
        topic: true,
    }
}

const fn group(name: &'static str, aliases: &'static [&'static str], children: &'static [Cmd]) -> Cmd {
    Cmd {
        name,
        aliases,
        children,
        topic: false,
    }
}

const LS: Cmd = leaf_aka("list", &["ls"]);

const PR: &[Cmd] = &[
    leaf("checkout"),
    leaf("checks"),
    leaf("close"),
    leaf("comment"),
    leaf_aka("create", &["new"]),
    leaf("diff"),
    leaf("edit"),
    LS,
    leaf("lock"),
    leaf("merge"),
    leaf("ready"),
    leaf("reopen"),
    leaf("revert"),
    leaf("review"),
    leaf("status"),
    leaf("unlock"),
    leaf("update-branch"),
    leaf("view"),
];

const ISSUE: &[Cmd] = &[
    leaf("close"),
    leaf("comment"),
    leaf_aka("create", &["new"]),
    leaf("delete"),
    leaf("develop"),
    leaf("edit"),
    LS,
    leaf("lock"),
    leaf("pin"),
    leaf("reopen"),
    leaf("status"),
    leaf("transfer"),
    leaf("unlock"),
    leaf("unpin"),
    leaf("view"),
];

const RELEASE: &[Cmd] = &[
    leaf_aka("create", &["new"]),
    leaf("delete"),
    leaf("delete-asset"),
    leaf("download"),
    leaf("edit"),
    LS,
    leaf("upload"),
    leaf("verify"),
    leaf("verify-asset"),
    leaf("view"),
];

const REPO: &[Cmd] = &[
    leaf("archive"),
    group("autolink", &[], &[leaf("create"), leaf("delete"), LS, leaf("view")]),
    leaf("clone"),
    leaf_aka("create", &["new"]),
    leaf("credits"),
    leaf("delete"),
    group("deploy-key", &[], &[leaf("add"), leaf("delete"), LS]),
    leaf("edit"),
    leaf("fork"),
    leaf("garden"),
    group("gitignore", &[], &[LS, leaf("view")]),
    group("license", &[], &[LS, leaf("view")]),
    LS,
    leaf("rename"),
    leaf("set-default"),
    leaf("sync"),
    leaf("unarchive"),
    leaf("view"),
];

const ROOT: &[Cmd] = &[
    leaf("actions"),
    group("alias", &[], &[leaf("delete"), leaf("import"), LS, leaf("set")]),
    leaf("api"),
    group(
        "attestation",
        &["at"],
        &[leaf("download"), leaf("inspect"), leaf("trusted-root"), leaf("verify")],
    ),
    group(
        "auth",
        &[],
        &[
            leaf("git-credential"),
            leaf("login"),
            leaf("logout"),
            leaf("refresh"),
            leaf("setup-git"),
            leaf("status"),
            leaf("switch"),
            leaf("token"),
        ],
    ),
    leaf("browse"),
    group("cache", &[], &[leaf("delete"), LS]),
    // Every codespace subcommand is a leaf here (`ports` is runnable with children in gh):
    // the whole group is remote compute and judged by its first name.
    group(
        "codespace",
        &["cs"],
        &[
            leaf("code"),
            leaf("cp"),
            leaf("create"),
            leaf("delete"),
            leaf("edit"),
            leaf("jupyter"),
            LS,
            leaf("logs"),
            leaf("ports"),
            leaf("rebuild"),
            leaf("select"),
            leaf("ssh"),
            leaf("stop"),
            leaf("view"),
        ],
    ),
    leaf("completion"),
    group("config", &[], &[leaf("clear-cache"), leaf("get"), LS, leaf("set")]),
    leaf("credits"),
    group(
        "extension",
        &["extensions", "ext"],
        &[
            leaf("browse"),
            leaf("create"),
            leaf("exec"),
            leaf("install"),
            LS,
            leaf_aka("remove", &["rm"]),
            leaf("search"),
            leaf("upgrade"),
        ],
    ),
    group(
        "gist",
        &[],
        &[
            leaf("clone"),
            leaf_aka("create", &["new"]),
            leaf("delete"),
            leaf("edit"),
            LS,
            leaf("rename"),
            leaf("view"),
        ],
    ),
    group("gpg-key", &[], &[leaf("add"), leaf("delete"), LS]),
    topic("help"),
    group("issue", &[], ISSUE),
    group("label", &[], &[leaf("clone"), leaf("create"), leaf("delete"), leaf("edit"), LS]),
    group("org", &[], &[LS]),
    group("pr", &[], PR),
    group(
        "project",
        &[],
        &[
            leaf("close"),
            leaf("copy"),
            leaf("create"),
            leaf("delete"),
            leaf("edit"),
            leaf("field-create"),
            leaf("field-delete"),
            leaf("field-list"),
            leaf("item-add"),
            leaf("item-archive"),
            leaf("item-create"),
            leaf("item-delete"),
            leaf("item-edit"),
            leaf("item-list"),
            leaf("link"),
            LS,
            leaf("mark-template"),
            leaf("unlink"),
            leaf("view"),
        ],
    ),
    group("release", &[], RELEASE),
    group("repo", &[], REPO),
    group("ruleset", &["rs"], &[leaf("check"), LS, leaf("view")]),
    group(
        "run",
        &[],
        &[
            leaf("cancel"),
            leaf("delete"),
            leaf("download"),
            LS,
            leaf("rerun"),
            leaf("view"),
            leaf("watch"),
        ],
    ),
    group(
        "search",
        &[],
        &[leaf("code"), leaf("commits"), leaf("issues"), leaf("prs"), leaf("repos")],
    ),
    group("secret", &[], &[leaf_aka("delete", &["remove"]), LS, leaf("set")]),
    group("ssh-key", &[], &[leaf("add"), leaf("delete"), LS]),
    leaf("status"),
    group("variable", &[], &[leaf_aka("delete", &["remove"]), leaf("get"), LS, leaf("set")]),
    leaf("version"),
    group("workflow", &[], &[leaf("disable"), leaf("enable"), LS, leaf("run"), leaf("view")]),
    // Help topics (`gh help environment` or `gh environment`): text only.
    topic("environment"),
    topic("exit-codes"),
    topic("formatting"),
    topic("mintty"),
    topic("reference"),
];

/// Groups whose leaves hand arguments on to another program (`extension exec`, extensions
/// themselves, `codespace ssh`): `--help` there may reach that program, so it is never "help".
const PASS_THROUGH: &[&str] = &["extension", "codespace"];

// ---------------------------------------------------------------------------------------------
// Option tables

const HELP: Opt = Opt::flag("help", &["help"], &[]);
const REPO_OPT: Opt = Opt::value("repo", &["repo"], &['R']);

/// What cobra's stripFlags knows at the root: the persistent `--help` and the root's own
/// `--version` are booleans; anything else is assumed to take a value.
const ROOT_LEVEL: &[Opt] = &[HELP, Opt::flag("version", &["version"], &[])];
/// At every group below the root only `--help` is a known boolean (`-R` takes a value, which
/// is what stripFlags assumes of unknown options anyway).
const GROUP_LEVEL: &[Opt] = &[HELP];

const STRIP: Style = Style {
    unknown: Unknown::AssumeValue,
    ..Style::PFLAG
};

/// `gh api` (pkg/cmd/api/api.go).
const API: &[Opt] = &[
    Opt::value("hostname", &["hostname"], &[]),
    Opt::value("method", &["method"], &['X']),
    Opt::value("field", &["field"], &['F']),
    Opt::value("raw-field", &["raw-field"], &['f']),
    Opt::value("header", &["header"], &['H']),
    Opt::value("preview", &["preview"], &['p']),
    Opt::flag("include", &["include"], &['i']),
    Opt::flag("paginate", &["paginate"], &[]),
    Opt::flag("slurp", &["slurp"], &[]),
    Opt::value("input", &["input"], &[]),
    Opt::flag("silent", &["silent"], &[]),
    Opt::value("template", &["template"], &['t']),
    Opt::value("jq", &["jq"], &['q']),
    Opt::value("cache", &["cache"], &[]),
    Opt::flag("verbose", &["verbose"], &[]),
    HELP,
];

/// `gh pr review` (pkg/cmd/pr/review/review.go).
const PR_REVIEW: &[Opt] = &[
    Opt::flag("approve", &["approve"], &['a']),
    Opt::flag("request-changes", &["request-changes"], &['r']),
    Opt::flag("comment", &["comment"], &['c']),
    Opt::value("body", &["body"], &['b']),
    Opt::value("body-file", &["body-file"], &['F']),
    REPO_OPT,
    HELP,
];

/// `gh pr create` (pkg/cmd/pr/create/create.go).
const PR_CREATE: &[Opt] = &[
    Opt::flag("draft", &["draft"], &['d']),
    Opt::value("title", &["title"], &['t']),
    Opt::value("body", &["body"], &['b']),
    Opt::value("body-file", &["body-file"], &['F']),
    Opt::value("base", &["base"], &['B']),
    Opt::value("head", &["head"], &['H']),
    Opt::flag("editor", &["editor"], &['e']),
    Opt::flag("web", &["web"], &['w']),
    Opt::flag("fill", &["fill"], &['f']),
    Opt::flag("fill-first", &["fill-first"], &[]),
    Opt::flag("fill-verbose", &["fill-verbose"], &[]),
    Opt::value("reviewer", &["reviewer"], &['r']),
    Opt::value("assignee", &["assignee"], &['a']),
    Opt::value("label", &["label"], &['l']),
    Opt::value("project", &["project"], &['p']),
    Opt::value("milestone", &["milestone"], &['m']),
    Opt::flag("no-maintainer-edit", &["no-maintainer-edit"], &[]),
    Opt::value("recover", &["recover"], &[]),
    Opt::value("template", &["template"], &['T']),
    Opt::flag("dry-run", &["dry-run"], &[]),
    REPO_OPT,
    HELP,
];

/// `gh issue create` (pkg/cmd/issue/create/create.go).
const ISSUE_CREATE: &[Opt] = &[
    Opt::value("title", &["title"], &['t']),
    Opt::value("body", &["body"], &['b']),
    Opt::value("body-file", &["body-file"], &['F']),
    Opt::flag("editor", &["editor"], &['e']),
    Opt::flag("web", &["web"], &['w']),
    Opt::value("assignee", &["assignee"], &['a']),
    Opt::value("label", &["label"], &['l']),
    Opt::value("project", &["project"], &['p']),
    Opt::value("milestone", &["milestone"], &['m']),
    Opt::value("recover", &["recover"], &[]),
    Opt::value("template", &["template"], &['T']),
    REPO_OPT,
    HELP,
];

/// `gh pr comment` and `gh issue comment` (pkg/cmd/pr/comment, pkg/cmd/issue/comment).
const COMMENT: &[Opt] = &[
    Opt::value("body", &["body"], &['b']),
    Opt::value("body-file", &["body-file"], &['F']),
    Opt::flag("editor", &["editor"], &['e']),
    Opt::flag("web", &["web"], &['w']),
    Opt::flag("edit-last", &["edit-last"], &[]),
    Opt::flag("delete-last", &["delete-last"], &[]),
    Opt::flag("yes", &["yes"], &[]),
    Opt::flag("create-if-none", &["create-if-none"], &[]),
    REPO_OPT,
    HELP,
];

/// `gh issue edit` (pkg/cmd/issue/edit/edit.go).
const ISSUE_EDIT: &[Opt] = &[
    Opt::value("title", &["title"], &['t']),
    Opt::value("body", &["body"], &['b']),
    Opt::value("body-file", &["body-file"], &['F']),
    Opt::value("add-assignee", &["add-assignee"], &[]),
    Opt::value("remove-assignee", &["remove-assignee"], &[]),
    Opt::value("add-label", &["add-label"], &[]),
    Opt::value("remove-label", &["remove-label"], &[]),
    Opt::value("add-project", &["add-project"], &[]),
    Opt::value("remove-project", &["remove-project"], &[]),
    Opt::value("milestone", &["milestone"], &['m']),
    Opt::flag("remove-milestone", &["remove-milestone"], &[]),
    REPO_OPT,
    HELP,
];

/// `gh pr edit` (pkg/cmd/pr/edit/edit.go): the issue fields plus base and reviewers.
const PR_EDIT: &[Opt] = &[
    Opt::value("title", &["title"], &['t']),
    Opt::value("body", &["body"], &['b']),
    Opt::value("body-file", &["body-file"], &['F']),
    Opt::value("base", &["base"], &['B']),
    Opt::value("add-reviewer", &["add-reviewer"], &[]),
    Opt::value("remove-reviewer", &["remove-reviewer"], &[]),
    Opt::value("add-assignee", &["add-assignee"], &[]),
    Opt::value("remove-assignee", &["remove-assignee"], &[]),
    Opt::value("add-label", &["add-label"], &[]),
    Opt::value("remove-label", &["remove-label"], &[]),
    Opt::value("add-project", &["add-project"], &[]),
    Opt::value("remove-project", &["remove-project"], &[]),
    Opt::value("milestone", &["milestone"], &['m']),
    Opt::flag("remove-milestone", &["remove-milestone"], &[]),
    REPO_OPT,
    HELP,
];

/// `gh repo sync` (pkg/cmd/repo/sync/sync.go).
const REPO_SYNC: &[Opt] = &[
    Opt::value("source", &["source"], &['s']),
    Opt::value("branch", &["branch"], &['b']),
    Opt::flag("force", &["force"], &[]),
    HELP,
];

/// `gh config get` (pkg/cmd/config/get/get.go): `-h` is `--host` here, not help.
const CONFIG_GET: &[Opt] = &[Opt::value("host", &["host"], &['h']), HELP];

/// `gh release download` (pkg/cmd/release/download/download.go).
const RELEASE_DOWNLOAD: &[Opt] = &[
    Opt::value("output", &["output"], &['O']),
    Opt::value("dir", &["dir"], &['D']),
    Opt::value("pattern", &["pattern"], &['p']),
    Opt::value("archive", &["archive"], &['A']),
    Opt::flag("clobber", &["clobber"], &[]),
    Opt::flag("skip-existing", &["skip-existing"], &[]),
    REPO_OPT,
    HELP,
];

/// `gh run download` (pkg/cmd/run/download/download.go).
const RUN_DOWNLOAD: &[Opt] = &[
    Opt::value("dir", &["dir"], &['D']),
    Opt::value("name", &["name"], &['n']),
    Opt::value("pattern", &["pattern"], &['p']),
    REPO_OPT,
    HELP,
];

/// `gh attestation download` (pkg/cmd/attestation/download/download.go).
const ATTESTATION_DOWNLOAD: &[Opt] = &[
    Opt::value("owner", &["owner"], &['o']),
    Opt::value("repo", &["repo"], &['R']),
    Opt::value("predicate-type", &["predicate-type"], &[]),
    Opt::value("digest-alg", &["digest-alg"], &['d']),
    Opt::value("limit", &["limit"], &['L']),
    Opt::value("hostname", &["hostname"], &[]),
    HELP,
];

/// The leaves scanned strictly, with their full table.
fn strict_table(verb: &str) -> Option<&'static [Opt]> {
    Some(match verb {
        "api" => API,
        "pr review" => PR_REVIEW,
        "pr create" => PR_CREATE,
        "issue create" => ISSUE_CREATE,
        "pr comment" | "issue comment" => COMMENT,
        "pr edit" => PR_EDIT,
        "issue edit" => ISSUE_EDIT,
        "repo sync" => REPO_SYNC,
        "config get" => CONFIG_GET,
        "release download" => RELEASE_DOWNLOAD,
        "run download" => RUN_DOWNLOAD,
        "attestation download" => ATTESTATION_DOWNLOAD,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Parse

#[cfg(test)]
pub fn parse(args: &[String]) -> Invocation {
    parse_with(args, &Contents::new())
}

/// Parse with the contents of the files `gh api` sends (`-F k=@f`, `--input f`), as the gate
/// read them: a request body decides pull-request scope and GraphQL operations.
pub fn parse_with(args: &[String], contents: &Contents) -> Invocation {
    parse_filled(args, contents, None)
}

/// What gh fills into `{owner}`, `{repo}` and `{branch}` (and `:owner`, `:repo`, `:branch`) in
/// a `gh api` endpoint and in `-F` values: one repository gh may pick for the working
/// directory, and its current branch, as the gate found them with the real git. `Err` says why
/// one could not be worked out (gh fails then too, but the gate does not guess).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fill {
    pub repo: Result<(String, String), String>,
    pub branch: Result<String, String>,
}

/// The mark of a `gh api` call that names a placeholder: without a [`Fill`] the gate cannot say
/// what it sends, and it gathers one (`gate::understand`).
pub const PLACEHOLDER: &str = "placeholder";

/// Parse with file contents and, for `gh api`, the values of the placeholders.
pub fn parse_filled(args: &[String], contents: &Contents, fill: Option<&Fill>) -> Invocation {
    let inv = Invocation::new(Tool::Gh, args);
    // cobra's stripFlags counts bytes (`len(s) == 2`), so `-é` stands alone there while a
    // char-based scan would let it swallow the next word; pflag rejects it anyway.
    if let Some(bad) = args
        .iter()
        .find(|a| !a.starts_with("--") && a.starts_with('-') && a.chars().nth(1).is_some_and(|c| !c.is_ascii()))
    {
        return inv.with_problem(format!("option {bad} is not a gh option"));
    }
    let found = match find(args) {
        Ok(f) => f,
        Err(e) => return inv.with_problem(e),
    };
    let mut claims = repo_claims(args);
    let mut files = Vec::new();
    let verb = found.path.join(" ");
    let actions = match (&found.node, &found.unknown) {
        (_, Some(name)) => {
            // An alias, an extension or a command this table does not know: the verb as typed.
            let typed = if verb.is_empty() { name.clone() } else { format!("{verb} {name}") };
            Ok(vec![Action::new(typed)])
        }
        (Some(node), None) if node.topic => Ok(vec![Action::new("help")]),
        (None, None) if found.path.is_empty() => {
            // `gh` alone prints help; `gh --version` prints the version.
            let p = opts::scan(&found.rest, ROOT_LEVEL, &STRIP).unwrap_or_default();
            Ok(vec![Action::new(if p.has("version") && !p.has("help") {
                "version"
            } else {
                "help"
            })])
        }
        // A group without a subcommand: gh prints its help (or a flag error); nothing runs.
        (None, None) => Ok(vec![Action::new("help")]),
        (Some(_), None) => classify_leaf(&verb, &found.rest, &found.orig, &mut claims, contents, fill, &mut files),
    };
    match actions {
        Ok(a) => {
            let mut inv = a.into_iter().fold(inv, Invocation::with_action);
            inv.claims = claims;
            inv.files = files;
            inv
        }
        Err(e) => inv.with_problem(e),
    }
}

/// `[HOST/]OWNER/REPO` (gh's `-R`) as `(owner, repo)`.
pub fn owner_repo(v: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = v.trim_end_matches('/').split('/').collect();
    match parts.as_slice() {
        [.., owner, repo] if !owner.is_empty() && !repo.is_empty() && parts.len() <= 3 => {
            Some((owner.to_string(), repo.trim_end_matches(".git").to_string()))
        }
        _ => None,
    }
}

/// The command path cobra would find, and the arguments left for the leaf.
struct Found {
    /// Canonical names of the commands found, in order.
    path: Vec<&'static str>,
    /// The node the path ends at when it is a leaf or topic; `None` for the root or a group.
    node: Option<&'static Cmd>,
    /// A name that matched no command at its level.
    unknown: Option<String>,
    /// argv without the command names: what the leaf's own flag parser sees.
    rest: Vec<String>,
    /// The index in argv of each word of `rest`.
    orig: Vec<usize>,
}

fn find(args: &[String]) -> Result<Found, String> {
    let mut rest = args.to_vec();
    let mut orig: Vec<usize> = (0..args.len()).collect();
    let mut level = ROOT;
    let mut table = ROOT_LEVEL;
    let mut path = Vec::new();
    while let Some(i) = first_command(&rest, table)? {
        let name = rest.remove(i);
        orig.remove(i);
        let Some(cmd) = level.iter().find(|c| c.name == name || c.aliases.contains(&name.as_str())) else {
            return Ok(Found {
                path,
                node: None,
                unknown: Some(name),
                rest,
                orig,
            });
        };
        path.push(cmd.name);
        if cmd.children.is_empty() {
            return Ok(Found {
                path,
                node: Some(cmd),
                unknown: None,
                rest,
                orig,
            });
        }
        level = cmd.children;
        table = GROUP_LEVEL;
    }
    Ok(Found {
        path,
        node: None,
        unknown: None,
        rest,
        orig,
    })
}

/// The index in `args` of the first word cobra's stripFlags would keep as a command name, or
/// `None` when there is none before `--`. The scanner splits argv into items; each item spans
/// one word, or two when its value was the next word.
fn first_command(args: &[String], table: &[Opt]) -> Result<Option<usize>, String> {
    let parsed = opts::scan(args, table, &STRIP)?;
    let mut i = 0;
    for item in &parsed.items {
        // The `--` terminator is the only word that makes no item; after it all are positional.
        if args.get(i).is_some_and(|a| a == "--") {
            return Ok(None);
        }
        i += match item {
            Item::Pos(_) => return Ok(Some(i)),
            Item::Opt(f) => width(&f.written, f.value.is_some()),
            Item::Unknown { written, value } => width(written, value.is_some()),
        };
    }
    Ok(None)
}

fn width(written: &str, has_value: bool) -> usize {
    if has_value && !written.contains('=') && !is_cluster(written) {
        2
    } else {
        1
    }
}

/// `-abc`: a single-dash word longer than one option letter (and not `-x=v`).
fn is_cluster(w: &str) -> bool {
    !w.starts_with("--") && w.starts_with('-') && w.chars().count() > 2 && !w.contains('=')
}

/// Classify a known leaf from the arguments left after the path.
#[allow(clippy::too_many_arguments)]
fn classify_leaf(
    verb: &str,
    rest: &[String],
    orig: &[usize],
    claims: &mut Vec<Claim>,
    contents: &Contents,
    fill: Option<&Fill>,
    files: &mut Vec<LocalFile>,
) -> Result<Vec<Action>, String> {
    let pass_through = PASS_THROUGH.iter().any(|g| verb.split(' ').next() == Some(*g));
    let Some(table) = strict_table(verb) else {
        let loose = opts::scan(rest, &[HELP, JQ, HOSTNAME], &STRIP)?;
        if !pass_through && loose.has("help") && !rest.iter().any(|a| is_cluster(a)) {
            return Ok(vec![Action::new("help")]);
        }
        path_operands(verb, rest)?;
        url_claims(verb, &loose.positionals(), claims);
        hostname_claims(&loose, claims);
        let mut a = Action::new(verb);
        if matches!(verb, "repo clone" | "repo fork") && git_clone_flags_judged(rest) {
            a.add("git-flags");
        }
        if verb == "repo clone" {
            files.extend(repo_clone_files(rest)?);
        }
        return Ok(with_jq_env(vec![a], &loose));
    };
    let p = opts::scan(rest, table, &Style::PFLAG).map_err(|e| format!("gh {verb}: {e}"))?;
    if p.has("help") {
        return Ok(vec![Action::new("help")]);
    }
    files.extend(download_files(verb, &p));
    if verb != "api" {
        url_claims(verb, &p.positionals(), claims);
        hostname_claims(&p, claims);
    }
    let mut a = Action::new(verb);
    let given = |id: &str| p.last(id).is_some_and(|v| !v.is_empty());
    match verb {
        "api" => return api(&p, orig, contents, fill, files).map(|a| with_jq_env(a, &p)),
        "pr review" => {
            let modes = ["approve", "request-changes", "comment"];
            for m in modes {
                if p.has(m) {
                    a.add(m);
                }
            }
            // No mode: gh prompts for one (Approve is on the menu) or fails; never pass it.
            if !modes.iter().any(|m| p.has(m)) {
                a.add("interactive");
            }
        }
        "pr create" => {
            a.scope = Some(ScopeTarget::PullRequest {
                repo: p.last("repo").and_then(owner_repo),
                base: p.last("base").filter(|b| !b.is_empty()).map(str::to_string),
                head: p.last("head").filter(|h| !h.is_empty()).map(str::to_string),
            });
        }
        "pr edit" if given("base") => a.add("base"),
        "pr comment" | "issue comment" if p.has("delete-last") => a.add("delete-last"),
        "repo sync" => {
            if p.has("force") {
                a.add("force");
            }
            if let Some(src) = p.last("source") {
                host_claim(repo_host(src), "--source", claims);
            }
        }
        // `config get oauth_token` prints the token (getRun); any key naming a token is out.
        "config get" if p.positionals().iter().any(|k| k.to_ascii_lowercase().contains("token")) => a.add("token"),
        _ => {}
    }
    for id in ["body-file", "template", "recover"] {
        for f in p.all(id).iter().filter(|f| f.value.as_deref().is_some_and(|v| !v.is_empty())) {
            a.add("file-read");
            let v = f.value.as_deref().unwrap_or_default();
            if v == "-" {
                a.add("stdin");
            } else {
                files.push(LocalFile::read(v, f.written.split('=').next().unwrap_or_default(), false));
            }
        }
    }
    Ok(vec![a])
}

/// `--hostname`, which `attestation`, `auth` and others take: the host gh sends its token to.
const HOSTNAME: Opt = Opt::value("hostname", &["hostname"], &[]);

/// Every `--hostname` names a host gh talks to (and sends a token to): like a repository's
/// host, it must be github.com or the pinned `GH_HOST`.
fn hostname_claims(p: &Parsed, claims: &mut Vec<Claim>) {
    for f in p.all("hostname") {
        let written = f.written.split('=').next().unwrap_or_default();
        host_claim(f.value.clone(), written, claims);
    }
}

/// `--jq`/`-q`, which every command with `--json` takes (cmdutil.AddJSONFlags), and `gh api`.
const JQ: Opt = Opt::value("jq", &["jq"], &['q']);

/// `actions`, and after them a `jq env` action when a `--jq` expression reads the environment:
/// judged on its own, whatever the command (the policy never allows it).
fn with_jq_env(mut actions: Vec<Action>, p: &Parsed) -> Vec<Action> {
    if reaches_environment(p) {
        actions.push(Action::new("jq env"));
    }
    actions
}

/// A jq expression (`--jq`) that reads the environment gh runs with: gojq's `$ENV` and `env`
/// (gh compiles it with the process environment, `go-gh/pkg/jq`), where the pinned tokens are.
/// Go templates (`--template`) have no function that reads it.
fn reaches_environment(p: &Parsed) -> bool {
    p.values("jq").iter().any(|e| jq_reads_env(e))
}

/// `$ENV` anywhere, or the identifier `env` not used as a field name (`.env`, `{env}` stay
/// fields). Strings are not skipped: the check only ever refuses more.
fn jq_reads_env(expr: &str) -> bool {
    let b = expr.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        if ident(b[i]) && (i == 0 || !ident(b[i - 1]) && b[i - 1] != b'$') {
            let start = i;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            let word = &expr[start..i];
            let before = expr[..start].trim_end().as_bytes().last().copied();
            if word == "env" && before != Some(b'.') && before != Some(b'{') {
                return true;
            }
            continue;
        }
        if b[i] == b'$' && expr[i + 1..].starts_with("ENV") && !b.get(i + 4).is_some_and(|c| ident(*c)) {
            return true;
        }
        i += 1;
    }
    false
}

/// The local files a download writes, as gh names them (`destinationWriter.makePath`,
/// `runDownload`). Release asset names are GitHub's (never starting with `.`, never holding
/// `/`): a `-p` pattern that cannot match a name that makes a git directory names its files;
/// otherwise the server does.
fn download_files(verb: &str, p: &Parsed) -> Vec<LocalFile> {
    let flag = |id: &str| {
        p.all(id)
            .last()
            .map(|f| f.written.split('=').next().unwrap_or_default().to_string())
    };
    let dir = p.last("dir").filter(|d| !d.is_empty()).unwrap_or(".");
    let dir_flag = flag("dir").unwrap_or_else(|| verb.to_string());
    let join = |name: &str| {
        if dir == "." {
            name.to_string()
        } else {
            format!("{}/{name}", dir.trim_end_matches('/'))
        }
    };
    match verb {
        "release download" => {
            if let Some(out) = p.last("output").filter(|o| !o.is_empty()) {
                return if out == "-" {
                    Vec::new()
                } else {
                    vec![LocalFile::write(out, flag("output").unwrap_or_default())]
                };
            }
            if p.last("archive").is_some_and(|a| !a.is_empty()) {
                // codeload names it `<repo>-<tag>.zip` (Content-Disposition).
                return vec![LocalFile::write(join("<repo>-<tag>.archive"), flag("archive").unwrap_or_default())];
            }
            let patterns = p.values("pattern");
            if patterns.is_empty()
                || patterns
                    .iter()
                    .any(|pat| pat.contains('/') || GIT_NAMES.iter().any(|n| go_match(pat, n)))
            {
                return vec![LocalFile::writes(dir, dir_flag, Access::WriteNamed)];
            }
            let pflag = flag("pattern").unwrap_or_default();
            patterns.iter().map(|pat| LocalFile::write(join(pat), pflag.clone())).collect()
        }
        // Each artifact is a zip archive unpacked as it is.
        "run download" => vec![LocalFile::writes(dir, dir_flag, Access::WriteTree)],
        // `<digest>.jsonl` in the working directory (LiveStore.createJSONLinesFilePath).
        "attestation download" => vec![LocalFile::write("<digest>.jsonl", verb)],
        _ => Vec::new(),
    }
}

/// Entry names that make a directory a git directory (see `crate::files`).
const GIT_NAMES: &[&str] = &["HEAD", "commondir", "objects", "refs"];

/// Go's `path/filepath.Match` (`*`, `?`, `[...]` with ranges and `^`, `\` escapes), which gh
/// matches asset names with. A malformed pattern matches nothing there; here it matches
/// everything, so it is taken for the server's names.
fn go_match(pat: &str, name: &str) -> bool {
    fn class(p: &[char], c: char) -> Option<(bool, usize)> {
        // p starts after '['; returns (matched, length consumed including ']').
        let mut i = 0;
        let negate = p.first() == Some(&'^');
        if negate {
            i += 1;
        }
        let mut matched = false;
        let mut first = true;
        loop {
            let ch = *p.get(i)?;
            if ch == ']' && !first {
                return Some((matched != negate, i + 1));
            }
            first = false;
            let lo = if ch == '\\' {
                i += 1;
                *p.get(i)?
            } else {
                ch
            };
            i += 1;
            let hi = if p.get(i) == Some(&'-') && p.get(i + 1).is_some_and(|c| *c != ']') {
                i += 1;
                let h = if p.get(i) == Some(&'\\') {
                    i += 1;
                    *p.get(i)?
                } else {
                    *p.get(i)?
                };
                i += 1;
                h
            } else {
                lo
            };
            if lo <= c && c <= hi {
                matched = true;
            }
        }
    }
    fn go(p: &[char], s: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('*') => (0..=s.len()).any(|k| !s[..k].contains(&'/') && go(&p[1..], &s[k..])),
            Some('?') => s.first().is_some_and(|c| *c != '/') && go(&p[1..], &s[1..]),
            Some('[') => match (s.first(), class(&p[1..], s.first().copied().unwrap_or('/'))) {
                (Some(_), Some((true, n))) => go(&p[1 + n..], &s[1..]),
                (_, None) => true,
                _ => false,
            },
            Some('\\') => match p.get(1) {
                Some(c) => s.first() == Some(c) && go(&p[2..], &s[1..]),
                None => true,
            },
            Some(c) => s.first() == Some(c) && go(&p[1..], &s[1..]),
        }
    }
    let p: Vec<char> = pat.chars().collect();
    let s: Vec<char> = name.chars().collect();
    go(&p, &s)
}

// ---------------------------------------------------------------------------------------------
// Operands gh puts into an API path

/// Commands that paste their first operands, unescaped, into a REST path
/// (`gh label delete NAME` is `DELETE repos/{o}/{r}/labels/NAME`), and how many operands.
/// A server or proxy that normalises the path would make `../git/refs/heads/main` another
/// endpoint, so such an operand must be one plain path segment.
const PATH_OPERANDS: &[(&str, usize)] = &[
    ("label delete", 1),
    ("label edit", 1),
    ("release view", 1),
    ("release edit", 1),
    ("release delete", 1),
    ("release upload", 1),
    ("release download", 1),
    ("release delete-asset", 2),
    ("release verify", 1),
    ("release verify-asset", 1),
    ("secret set", 1),
    ("secret delete", 1),
    ("variable set", 1),
    ("variable delete", 1),
    ("variable get", 1),
    ("cache delete", 1),
    ("run view", 1),
    ("run cancel", 1),
    ("run rerun", 1),
    ("run delete", 1),
    ("run watch", 1),
    ("run download", 1),
    ("workflow view", 1),
    ("workflow enable", 1),
    ("workflow disable", 1),
    ("workflow run", 1),
    ("repo deploy-key delete", 1),
    ("repo autolink view", 1),
    ("repo autolink delete", 1),
    ("ssh-key delete", 1),
    ("gpg-key delete", 1),
    ("gist view", 1),
    ("gist edit", 1),
    ("gist delete", 1),
    ("gist rename", 1),
    ("gist clone", 1),
    ("ruleset view", 1),
];

/// Options of those commands whose value is not a path operand (`-R o/r`).
const NOT_OPERAND_VALUES: &[&str] = &["-R", "--repo", "-e", "--env", "-o", "--org", "-a", "--app", "-b", "--body"];

/// One plain path segment: not empty, not `.` or `..`, nothing a URL or a server reads as
/// structure (`/`, `\`, `%`, `?`, `#`, `;`) and no space or control character.
pub fn plain_segment(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && !s
            .chars()
            .any(|c| matches!(c, '/' | '\\' | '%' | '?' | '#' | ';') || c.is_whitespace() || c.is_control())
}

/// Check the operands of a [`PATH_OPERANDS`] command. These leaves are read loosely (an
/// unknown option is assumed to take the next word), so a word after an option that may or
/// may not take a value is checked too, and the search goes on.
fn path_operands(verb: &str, rest: &[String]) -> Result<(), String> {
    let Some((_, count)) = PATH_OPERANDS.iter().find(|(v, _)| *v == verb) else {
        return Ok(());
    };
    let mut left = *count;
    let mut maybe_value = false;
    let mut skip = false;
    for w in rest {
        if w == "--" {
            maybe_value = false;
            continue;
        }
        if skip {
            skip = false;
            continue;
        }
        if w.starts_with('-') && w.len() > 1 {
            let known = NOT_OPERAND_VALUES.contains(&w.as_str());
            skip = known;
            maybe_value = !known && !w.contains('=') && !is_cluster(w);
            continue;
        }
        if !plain_segment(w) {
            return Err(format!(
                "gh {verb} puts {w:?} into an API path, where it is not one plain name (no `/`, `..`, `%`, `?`, `#`); name it plainly"
            ));
        }
        if !maybe_value {
            left -= 1;
            if left == 0 {
                return Ok(());
            }
        }
        maybe_value = false;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// gh api

/// The placeholders gh fills (`fillPlaceholders` in pkg/cmd/api): `{owner}`, `{repo}`,
/// `{branch}`, and `:owner`, `:repo`, `:branch` where no word character follows.
const PLACEHOLDERS: &[(&str, &str)] = &[
    ("{owner}", "owner"),
    ("{repo}", "repo"),
    ("{branch}", "branch"),
    (":owner", "owner"),
    (":repo", "repo"),
    (":branch", "branch"),
];

/// The placeholder at the start of `s`, with its length.
fn placeholder_at(s: &str) -> Option<(usize, &'static str)> {
    PLACEHOLDERS.iter().find_map(|(text, what)| {
        let rest = s.strip_prefix(text)?;
        let bounded = text.starts_with('{') || !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        bounded.then_some((text.len(), *what))
    })
}

/// Whether gh would fill anything in `s`.
pub fn has_placeholder(s: &str) -> bool {
    s.char_indices().any(|(i, _)| placeholder_at(&s[i..]).is_some())
}

/// `s` with its placeholders filled as gh fills them: unescaped, from `fill`.
fn fill_placeholders(s: &str, fill: &Fill) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if let Some((len, what)) = placeholder_at(&s[i..]) {
            let value = match what {
                "owner" => fill.repo.clone().map(|(o, _)| o),
                "repo" => fill.repo.clone().map(|(_, r)| r),
                _ => fill.branch.clone(),
            };
            out.push_str(&value.map_err(|e| format!("gh fills {} from the local clone, and {e}", &s[i..i + len]))?);
            i += len;
            continue;
        }
        let c = s[i..].chars().next().unwrap_or_default();
        out.push(c);
        i += c.len_utf8().max(1);
    }
    Ok(out)
}

/// Fill `s` when a [`Fill`] is there; without one, note that the call needs one.
fn filled(s: &str, fill: Option<&Fill>, unresolved: &mut bool) -> Result<String, String> {
    if !has_placeholder(s) {
        return Ok(s.to_string());
    }
    match fill {
        Some(f) => fill_placeholders(s, f),
        None => {
            *unresolved = true;
            Ok(s.to_string())
        }
    }
}

/// `gh api`: method per apiRun (`-X` upper-cased, else POST when any field or `--input`, else
/// GET), other hosts, local files, and the request body (fields, or `--input`) handed to the
/// endpoint model in [`http`], which splits GraphQL documents and finds pull-request and
/// contents shapes.
///
/// As the installed gh (2.23) builds the request: placeholders are filled in the endpoint and
/// in `-F` values (never in `-f` values, files or typed values); only GET moves the fields into
/// the query string (HEAD and every other method send them as a JSON body); the `graphql`
/// endpoint gets the method `-X` names. A key given twice (`-F event=APPROVE -f event=COMMENT`)
/// is refused: gh 2.23 lets every `-F` win over every `-f` whatever the order, newer gh refuses
/// the call, and neither is what the argv order says.
/// `orig` maps a word of the arguments `p` was scanned from to its index in argv, for the files
/// the gate reads and hands to gh ([`LocalFile::at`]).
fn api(p: &Parsed, orig: &[usize], contents: &Contents, fill: Option<&Fill>, files: &mut Vec<LocalFile>) -> Result<Vec<Action>, String> {
    let word = |at: usize| orig.get(at).copied();
    let pos = p.positionals();
    let [endpoint] = pos.as_slice() else {
        return Err(format!("gh api takes exactly one endpoint, got {}", pos.len()));
    };
    let is_graphql = *endpoint == "graphql";
    let mut a = Action::new(if is_graphql { "api graphql" } else { "api" });
    let mut unresolved = false;
    // The request's fields: `-f k=v` raw; `-F k=v` typed (true, false, null, integers), with
    // `@path` reading a file and `@-` stdin (pkg/cmd/api/fields.go). A value the gate did not
    // read makes the body opaque.
    let mut fields = BTreeMap::new();
    let mut keys = BTreeMap::new();
    let mut opaque = false;
    for f in p.opts() {
        let magic = match f.id.as_str() {
            "field" => true,
            "raw-field" => false,
            _ => continue,
        };
        let flag = f.written.split('=').next().unwrap_or_default();
        let v = f.value.as_deref().unwrap_or("");
        let (key, value) = v.split_once('=').unwrap_or((v, ""));
        // `k[]` builds an array, so it repeats; any other key given twice is refused.
        if !key.ends_with("[]") && keys.insert(key.to_string(), flag.to_string()).is_some() {
            return Err(format!(
                "gh api: the field {key:?} is given more than once (gh 2.23 sends the last -F over every -f, newer gh refuses); give it once"
            ));
        }
        let value = match value.strip_prefix('@').filter(|_| magic) {
            Some("-") => {
                a.add("file-read");
                a.add("stdin");
                opaque = true;
                continue;
            }
            Some(path) => {
                a.add("file-read");
                files.push(LocalFile {
                    at: word(f.at),
                    ..LocalFile::read(path, flag, true)
                });
                match contents.get(path) {
                    Some(Ok(t)) => t.clone(),
                    _ => {
                        opaque = true;
                        continue;
                    }
                }
            }
            None if magic && !matches!(value, "true" | "false" | "null") && value.parse::<i64>().is_err() => {
                filled(value, fill, &mut unresolved)?
            }
            None => value.to_string(),
        };
        // `k[]=v` and `k[x]=v` build nested values: the top-level key is what rules see.
        let top = key.split('[').next().unwrap_or(key);
        if top != key {
            if fields.get(top).is_some_and(|v| v != "[nested]") {
                return Err(format!(
                    "gh api: the field {top:?} is given both as a value and as {key:?}; give it once"
                ));
            }
            fields.insert(top.to_string(), "[nested]".to_string());
        } else {
            if fields.contains_key(top) {
                return Err(format!(
                    "gh api: the field {top:?} is given both as a value and nested; give it once"
                ));
            }
            fields.insert(key.to_string(), value);
        }
    }
    let input = p.last("input").filter(|v| !v.is_empty());
    let method = match p.last("method") {
        // Go's strings.ToUpper, as http.NewRequest receives it.
        Some(m) => m.to_uppercase(),
        None if !fields.is_empty() || opaque || input.is_some() => "POST".to_string(),
        None => "GET".to_string(),
    };
    // The canonical GraphQL endpoint is judged by its document when gh sends it as POST (its
    // default) or GET (the document in the query string); any other method is judged as that
    // method too, by an `api` action of its own.
    let graphql_other_method = is_graphql && method != "POST" && method != "GET";
    match method.as_str() {
        _ if is_graphql => {}
        "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" => a.add(format!("method={method}")),
        _ => a.add("method-other"),
    }
    // With `--input` the fields go to the query string and the file is the body; with GET the
    // fields are query parameters (a GraphQL endpoint still reads `query` from them).
    let body = match input {
        Some("-") => {
            a.add("file-read");
            a.add("stdin");
            Body::Opaque
        }
        Some(path) => {
            a.add("file-read");
            files.push(LocalFile {
                at: p.all("input").last().and_then(|f| word(f.at)),
                ..LocalFile::read(path, "--input", true)
            });
            match contents.get(path) {
                Some(Ok(t)) => http::body_of(t),
                _ => Body::Opaque,
            }
        }
        None if opaque => Body::Opaque,
        None if fields.is_empty() => Body::None,
        None => http::fields(fields.clone()),
    };
    if !p.all("hostname").is_empty() || endpoint.contains("://") {
        a.add("other-host");
    }
    let endpoint = filled(endpoint, fill, &mut unresolved)?;
    let raw_path = match endpoint.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => endpoint.as_str(),
    };
    let path = http::normalise_path(raw_path)?;
    let graphql = path.rsplit('/').next().is_some_and(|s| s.eq_ignore_ascii_case("graphql"));
    // Only GET moves the fields into the query string (`httpRequest`: strings.EqualFold(method,
    // "GET")); gh sends a GraphQL request's fields as its document whatever the method, so the
    // document is judged whatever the method (`-X HEAD` with a mutation is still a mutation
    // for a server that reads the body); another method is judged as itself too (below).
    let query_only = method == "GET" && input.is_none();
    let (method_seen, body) = match (graphql, query_only) {
        (true, _) => ("POST", body),
        (false, true) => (method.as_str(), Body::None),
        _ => (method.as_str(), body),
    };
    if unresolved {
        a.add(PLACEHOLDER);
    }
    // A GET or HEAD that carries a body (`-X HEAD` with fields, `-X GET --input f`): some
    // servers act on it as a write, as curl's rules say too.
    if matches!(method_seen, "GET" | "HEAD") && body != Body::None && !is_graphql {
        a.add("body");
    }
    let mut out = http::actions(a.clone(), method_seen, &path, body.clone());
    let rest_like = |m: &str| {
        let mut o = a.clone();
        o.verb = "api".to_string();
        o.marks.retain(|k| !k.starts_with("method=") && k != "method-other");
        match m {
            "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" => o.add(format!("method={m}")),
            _ => o.add("method-other"),
        }
        o
    };
    if graphql_other_method {
        for x in http::actions(rest_like(&method), &method, &path, body.clone()) {
            if !out.contains(&x) {
                out.push(x);
            }
        }
    }
    // A method-override header (as curl's) makes the server use the method it names: one more
    // action for each, judged as that method (an `api` action, for the GraphQL endpoint too),
    // so the stricter decides.
    let headers: Vec<&str> = p.all("header").iter().filter_map(|f| f.value.as_deref()).collect();
    let mut overrides = http::method_overrides(&headers);
    // A `_method` parameter does the same on many servers: in the endpoint's query, the body,
    // or the fields a GET moves into the query.
    overrides.extend(http::param_overrides(&endpoint, &body));
    if let Some(m) = fields.get("_method").filter(|m| query_only && !m.trim().is_empty()) {
        overrides.push(m.trim().to_ascii_uppercase());
    }
    for m in overrides {
        let o = rest_like(&m).mark("method-override");
        for x in http::actions(o, &m, &path, body.clone()) {
            if !out.contains(&x) {
                out.push(x);
            }
        }
    }
    // `--paginate` sends the request again to each `Link: next` URL the server names (REST), or
    // the same document with a new cursor (GraphQL): a write repeated where no rule looked.
    if p.has("paginate") {
        let writes = |x: &Action| {
            x.http.as_ref().is_some_and(|h| !matches!(h.method.as_str(), "GET" | "HEAD"))
                && (x.verb == "api" || x.has("graphql-mutation") || x.has("graphql-opaque"))
        };
        for x in &mut out {
            if writes(x) {
                x.add("paginate-write");
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Hosts named on the command line

/// `-R/--repo [HOST/]OWNER/REPO` or a repository URL names the host gh talks to (and which
/// token it sends). Found generously in every form pflag accepts, anywhere in argv: a word that
/// only might be a `-R` value costs a refusal at worst when it names another host.
fn repo_claims(args: &[String]) -> Vec<Claim> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let next = args.get(i + 1).map(String::as_str);
        let value = if a == "--repo" || a == "-R" {
            next
        } else if let Some(v) = a.strip_prefix("--repo=") {
            Some(v)
        } else if !a.starts_with("--") && a.starts_with('-') {
            // `-Rv`, `-R=v`, and `-xR v` / `-xRv` when the letters before R are booleans.
            a.find('R').map(|k| match &a[k + 1..] {
                "" => next.unwrap_or(""),
                r => r.strip_prefix('=').unwrap_or(r),
            })
        } else {
            None
        };
        if let Some(v) = value {
            host_claim(repo_host(v), "--repo", &mut out);
        }
    }
    out
}

/// Positional URLs (`gh pr view https://HOST/o/r/pull/1`) and, for `repo` commands,
/// `HOST/OWNER/REPO` positionals.
fn url_claims(verb: &str, positionals: &[&str], claims: &mut Vec<Claim>) {
    for (i, p) in positionals.iter().enumerate() {
        // Only a `repo` command's first argument is a repository (`repo clone o/r dir/a/b`).
        let host = if i == 0 && verb.starts_with("repo ") {
            repo_host(p)
        } else {
            url_host(p)
        };
        host_claim(host, "a URL argument", claims);
    }
}

/// `gh repo clone|fork … -- <gitflags>` runs `git clone <gitflags> …`: the flags are read with
/// git's own grammar, and any that git's policy would judge (a program run by `--upload-pack`,
/// `--template`, `-c`, `--separate-git-dir`, a remote-helper URL, or flags the git grammar
/// cannot read) make the call one the gh policy refuses.
/// What `gh repo clone <repository> [<directory>] [-- <gitflags>…]` writes: it runs `git clone
/// <gitflags> <url> [<directory>]`, so the files are git clone's (the directory, named after
/// the repository when none is given; a bare clone's `HEAD`; a separate git directory), judged
/// by the local-write model like any other write.
fn repo_clone_files(rest: &[String]) -> Result<Vec<LocalFile>, String> {
    let dd = rest.iter().position(|w| w == "--").unwrap_or(rest.len());
    let loose = opts::scan(
        &rest[..dd],
        &[HELP, Opt::value("upstream-remote-name", &["upstream-remote-name"], &['u'])],
        &STRIP,
    )?;
    let pos = loose.positionals();
    let Some(repo) = pos.first() else {
        return Ok(Vec::new());
    };
    let url = if repo.contains("://") || repo.contains('@') {
        repo.to_string()
    } else {
        format!(
            "https://github.com/{}",
            if repo.contains('/') {
                repo.to_string()
            } else {
                format!("_/{repo}")
            }
        )
    };
    let mut args = vec!["clone".to_string()];
    args.extend(rest.get(dd + 1..).unwrap_or_default().iter().cloned());
    args.push("--".into());
    args.push(url);
    args.extend(pos.get(1).map(|d| d.to_string()));
    let inv = crate::grammar::git::parse(&args);
    Ok(inv
        .files
        .into_iter()
        .map(|f| LocalFile {
            flag: format!("repo clone {}", f.flag),
            ..f
        })
        .collect())
}

fn git_clone_flags_judged(rest: &[String]) -> bool {
    let Some(dd) = rest.iter().position(|w| w == "--") else {
        return false;
    };
    let mut args = vec!["clone".to_string()];
    args.extend(rest[dd + 1..].iter().cloned());
    args.push("https://github.com/o/r".to_string());
    let inv = crate::grammar::git::parse(&args);
    inv.problem.is_some() || inv.actions.len() != 1 || inv.actions.iter().any(|a| !a.marks.is_empty() || a.verb != "clone")
}

/// github.com is gh's default host; any other host must be the one this install pins.
fn host_claim(host: Option<String>, flag: &str, claims: &mut Vec<Claim>) {
    if let Some(h) = host
        && !h.eq_ignore_ascii_case("github.com")
    {
        claims.push(Claim::Pinned {
            var: "GH_HOST",
            value: h,
            flag: flag.to_string(),
        });
    }
}

/// The host of `scheme://[user@]host[:port]/…` or `git@host:…`.
fn url_host(v: &str) -> Option<String> {
    if let Some((_, rest)) = v.split_once("://") {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let host = authority.rsplit('@').next().unwrap_or("");
        let host = host.split(':').next().unwrap_or("");
        return Some(host.to_string());
    }
    let rest = v.strip_prefix("git@")?;
    Some(rest.split(':').next().unwrap_or("").to_string())
}

/// The host of a repository argument as go-gh's `repository.Parse` reads it.
fn repo_host(v: &str) -> Option<String> {
    url_host(v).or_else(|| {
        let parts: Vec<&str> = v.split('/').collect();
        (parts.len() == 3 && parts.iter().all(|p| !p.is_empty())).then(|| parts[0].to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::{Access, argv};
    use pretty_assertions::assert_eq;

    fn verb(words: &[&str]) -> String {
        let inv = parse(&argv(words));
        assert_eq!(inv.problem, None, "{words:?}");
        inv.verb()
    }

    /// The first action, without its HTTP request (tests of `gh api` requests look at it).
    fn action(words: &[&str]) -> Action {
        let inv = parse(&argv(words));
        assert_eq!(inv.problem, None, "{words:?}");
        let mut a = inv.actions[0].clone();
        a.http = None;
        a
    }

    fn act(v: &str, marks: &[&str]) -> Action {
        marks.iter().fold(Action::new(v), |a, m| a.mark(*m))
    }

    fn writes(words: &[&str]) -> Vec<(String, Access, String)> {
        let inv = parse(&argv(words));
        assert_eq!(inv.problem, None, "{words:?}");
        inv.files
            .into_iter()
            .filter(|f| f.access.writes())
            .map(|f| (f.path, f.access, f.flag))
            .collect()
    }

    fn w(path: &str, access: Access, flag: &str) -> (String, Access, String) {
        (path.to_string(), access, flag.to_string())
    }

    #[test]
    fn downloads_declare_the_files_they_write_as_gh_names_them() {
        use Access::*;
        assert_eq!(writes(&["release", "download", "v1", "-O", "a.tgz"]), [w("a.tgz", Write, "-O")]);
        assert_eq!(writes(&["release", "download", "v1", "--output=-"]), []);
        assert_eq!(
            writes(&["release", "download", "v1", "-D", "out/", "-p", "app.tgz", "-p", "*.deb"]),
            [w("out/app.tgz", Write, "-p"), w("out/*.deb", Write, "-p")]
        );
        // Patterns that could match HEAD, commondir, objects or refs: the server names the files.
        for pat in ["*", "HEA?", "[Hh]EAD", "ref*", "*s", "a/b"] {
            assert_eq!(
                writes(&["release", "download", "-p", pat]),
                [w(".", WriteNamed, "release download")],
                "{pat}"
            );
        }
        assert_eq!(writes(&["release", "download", "v1", "--dir", "d"]), [w("d", WriteNamed, "--dir")]);
        assert_eq!(
            writes(&["release", "download", "v1", "-A", "zip"]),
            [w("<repo>-<tag>.archive", Write, "-A")]
        );
        assert_eq!(writes(&["run", "download", "42"]), [w(".", WriteTree, "run download")]);
        assert_eq!(writes(&["run", "download", "-D", "art", "-n", "logs"]), [w("art", WriteTree, "-D")]);
        assert_eq!(
            writes(&["attestation", "download", "app.tgz", "-R", "o/r"]),
            [w("<digest>.jsonl", Write, "attestation download")]
        );
    }

    #[test]
    fn go_match_reads_patterns_as_filepath_match_does() {
        assert!(go_match("*.deb", "app.deb"));
        assert!(!go_match("*.deb", "HEAD"));
        assert!(go_match("[A-Z]EAD", "HEAD"));
        assert!(!go_match("[^H]EAD", "HEAD"));
        assert!(go_match("\\HEAD", "HEAD"));
        assert!(!go_match("*", "a/b"));
        assert!(go_match("[", "HEAD"), "a malformed pattern is taken to match anything");
    }

    #[test]
    fn a_jq_expression_that_reads_the_environment_is_an_action_of_its_own() {
        for words in [
            &["api", "/user", "--jq", "$ENV.GH_TOKEN"][..],
            &["api", "/user", "-q", "env.GH_TOKEN"],
            &["pr", "list", "--json", "title", "--jq=.[] | env"],
            &["issue", "view", "1", "--json", "body", "-q", "\\(env)"],
            &["run", "list", "--json", "name", "-q", "{a: $ENV}"],
        ] {
            let verbs: Vec<String> = parse(&argv(words)).actions.into_iter().map(|a| a.verb).collect();
            assert_eq!(verbs.last().map(String::as_str), Some("jq env"), "{words:?}");
        }
        for words in [
            &["api", "/repos/o/r/deployments", "--jq", ".[].environment"][..],
            &["pr", "list", "--json", "title", "-q", ".[] | .env, {env}"],
            &["api", "/user", "-q", "$env | .login"],
            &["api", "/user", "-q", ".login | environment"],
        ] {
            assert_eq!(parse(&argv(words)).actions.len(), 1, "{words:?}");
        }
    }

    #[test]
    fn repo_flag_anywhere_resolves_to_pr_merge() {
        for words in [
            &["-R", "o/r", "pr", "merge", "1"][..],
            &["pr", "-R", "o/r", "merge", "1"],
            &["pr", "merge", "-Ro/r", "1"],
            &["pr", "merge", "1", "--repo=o/r"],
            &["--repo", "o/r", "pr", "merge"],
            &["pr", "--repo=o/r", "merge", "1"],
            &["--help=false", "pr", "merge"],
        ] {
            assert_eq!(verb(words), "pr merge", "{words:?}");
        }
    }

    #[test]
    fn aliases_resolve_to_the_canonical_verb() {
        for (words, want) in [
            (&["pr", "new"][..], "pr create"),
            (&["issue", "new"], "issue create"),
            (&["release", "new", "v1"], "release create"),
            (&["repo", "new", "x"], "repo create"),
            (&["gist", "new", "f"], "gist create"),
            (&["pr", "ls"], "pr list"),
            (&["ext", "ls"], "extension list"),
            (&["extensions", "install", "o/gh-x"], "extension install"),
            (&["secret", "remove", "X"], "secret delete"),
            (&["variable", "remove", "X"], "variable delete"),
            (&["cs", "ssh"], "codespace ssh"),
            (&["at", "verify", "f"], "attestation verify"),
            (&["rs", "ls"], "ruleset list"),
            (&["repo", "deploy-key", "ls"], "repo deploy-key list"),
        ] {
            assert_eq!(verb(words), want, "{words:?}");
        }
    }

    #[test]
    fn unknown_names_are_the_verb_as_typed() {
        assert_eq!(verb(&["m", "1"]), "m");
        assert_eq!(verb(&["pr", "m", "1"]), "pr m");
        assert_eq!(verb(&["co", "1"]), "co");
        // Matching is exact: no prefixes, no case folding.
        assert_eq!(verb(&["pr", "mer", "1"]), "pr mer");
        assert_eq!(verb(&["PR", "merge"]), "PR");
    }

    #[test]
    fn an_unknown_flag_before_the_group_swallows_the_next_word() {
        // stripFlags assumes `--web` takes `pr`, so `merge` is the (unknown) top-level name.
        assert_eq!(verb(&["--web", "pr", "merge"]), "merge");
        // `--version` is a root boolean, but below the root it is unknown and takes `merge`:
        // cobra lands on the `pr` group itself, which runs nothing.
        assert_eq!(verb(&["pr", "--version", "merge"]), "help");
        assert_eq!(verb(&["--version", "pr", "list"]), "help");
        assert_eq!(verb(&["--version", "pr", "--help=false", "list"]), "pr list");
    }

    #[test]
    fn double_dash_stops_the_command_search() {
        assert_eq!(verb(&["--", "pr", "merge"]), "help");
        assert_eq!(verb(&["pr", "--", "merge"]), "help");
        assert_eq!(verb(&["pr", "merge", "--", "--help"]), "pr merge");
    }

    #[test]
    fn help_true_anywhere_is_help_and_help_false_runs() {
        assert_eq!(verb(&["pr", "merge", "--help"]), "help");
        assert_eq!(verb(&["--help", "pr", "merge", "1"]), "help");
        assert_eq!(verb(&["pr", "merge", "--help=true"]), "help");
        assert_eq!(verb(&["pr", "merge", "--help=false"]), "pr merge");
        assert_eq!(verb(&["pr", "merge", "--help", "--help=0"]), "pr merge");
        assert_eq!(verb(&["help", "pr", "merge"]), "help");
        assert_eq!(verb(&["environment"]), "help");
        assert_eq!(verb(&[]), "help");
        assert_eq!(verb(&["pr"]), "help");
        assert_eq!(verb(&["--version"]), "version");
    }

    #[test]
    fn help_that_may_be_an_option_value_is_not_help() {
        // `-wt --help`: pflag may read `--help` as the value of the cluster's last letter.
        assert_eq!(verb(&["pr", "merge", "-sd", "--help"]), "pr merge");
        // An unknown option is assumed to take `--help` as its value.
        assert_eq!(verb(&["pr", "close", "--comment", "--help"]), "pr close");
        // On a strict leaf, pflag's own reading decides.
        assert_eq!(verb(&["issue", "create", "-wt", "--help"]), "issue create");
        assert_eq!(verb(&["issue", "create", "-w", "--help"]), "help");
    }

    #[test]
    fn help_is_never_assumed_for_pass_through_commands_or_unknown_names() {
        assert_eq!(verb(&["extension", "exec", "x", "--help"]), "extension exec");
        assert_eq!(verb(&["cs", "ssh", "--help"]), "codespace ssh");
        assert_eq!(verb(&["myalias", "--help"]), "myalias");
    }

    #[test]
    fn h_is_not_help_in_gh() {
        assert_eq!(
            action(&["config", "get", "-h", "github.com", "oauth_token"]),
            act("config get", &["token"])
        );
        assert_eq!(action(&["config", "get", "editor"]), act("config get", &[]));
        assert_eq!(verb(&["auth", "token", "-h", "github.com"]), "auth token");
    }

    #[test]
    fn review_modes_are_found_in_every_form() {
        for words in [
            &["pr", "review", "--approve"][..],
            &["pr", "review", "-a", "1"],
            &["pr", "review", "1", "-ca"],
            &["pr", "-R", "o/r", "review", "-a=true"],
            &["pr", "review", "--approve=1"],
        ] {
            assert!(action(words).has("approve"), "{words:?}");
        }
        // `-ba` is body "a", not approve.
        assert_eq!(action(&["pr", "review", "-c", "-ba"]), act("pr review", &["comment"]));
        assert_eq!(
            action(&["pr", "review", "--approve=false", "-r", "-b", "x"]),
            act("pr review", &["request-changes"])
        );
        assert_eq!(action(&["pr", "review", "1"]), act("pr review", &["interactive"]));
        assert_eq!(
            action(&["pr", "review", "-c", "-F", "notes.md"]),
            act("pr review", &["comment", "file-read"])
        );
    }

    #[test]
    fn unknown_options_on_strict_leaves_are_problems() {
        let inv = parse(&argv(&["pr", "review", "--aprove"]));
        assert_eq!(inv.problem, Some("gh pr review: unknown option --aprove".into()));
        let inv = parse(&argv(&["api", "-Z", "x"]));
        assert_eq!(inv.problem, Some("gh api: unknown option -Z".into()));
    }

    #[test]
    fn pr_create_names_repo_base_and_head_for_the_scope_check() {
        let target = |words: &[&str]| action(words).scope;
        let pr = |repo: Option<(&str, &str)>, base: Option<&str>, head: Option<&str>| {
            Some(ScopeTarget::PullRequest {
                repo: repo.map(|(o, r)| (o.to_string(), r.to_string())),
                base: base.map(str::to_string),
                head: head.map(str::to_string),
            })
        };
        assert_eq!(target(&["pr", "create", "-t", "x"]), pr(None, None, None));
        assert_eq!(
            target(&["-R", "ops/app", "pr", "create", "-B", "main", "--head=fix"]),
            pr(Some(("ops", "app")), Some("main"), Some("fix"))
        );
        assert_eq!(
            target(&["pr", "new", "--repo", "github.example.com/ops/app", "-Hfix", "--base", "dev"]),
            pr(Some(("ops", "app")), Some("dev"), Some("fix"))
        );
        assert_eq!(target(&["pr", "list"]), None);
        assert_eq!(owner_repo("a/b/c/d"), None);
        assert_eq!(owner_repo("ops/app.git"), Some(("ops".into(), "app".into())));
    }

    #[test]
    fn body_files_are_file_reads() {
        assert_eq!(
            action(&["issue", "comment", "1", "--body-file", "/etc/passwd"]),
            act("issue comment", &["file-read"])
        );
        let mut want = act("pr create", &["file-read"]);
        want.scope = Some(ScopeTarget::PullRequest {
            repo: None,
            base: None,
            head: None,
        });
        assert_eq!(action(&["pr", "create", "-dF", "b.md", "-t", "x"]), want);
        assert_eq!(action(&["pr", "new", "--recover", "f.json"]), want);
        assert_eq!(action(&["issue", "create", "-t", "x", "-b", "y"]), act("issue create", &[]));
    }

    #[test]
    fn pr_edit_base_and_comment_delete_are_marked() {
        assert_eq!(action(&["pr", "edit", "1", "-B", "main"]), act("pr edit", &["base"]));
        assert_eq!(
            action(&["pr", "comment", "1", "--delete-last", "--yes"]),
            act("pr comment", &["delete-last"])
        );
    }

    #[test]
    fn repo_sync_force_is_marked() {
        assert_eq!(action(&["repo", "sync", "--force"]), act("repo sync", &["force"]));
        assert_eq!(action(&["repo", "sync", "--force=false", "-b", "main"]), act("repo sync", &[]));
    }

    #[test]
    fn api_method_defaults_and_last_x_wins() {
        assert_eq!(action(&["api", "repos/o/r"]), act("api", &["method=GET"]));
        assert_eq!(action(&["api", "repos/o/r/issues", "-f", "title=x"]), act("api", &["method=POST"]));
        assert_eq!(action(&["api", "-XPATCH", "repos/o/r", "-f", "a=b"]), act("api", &["method=PATCH"]));
        assert_eq!(action(&["api", "-X", "delete", "repos/o/r"]), act("api", &["method=DELETE"]));
        assert_eq!(action(&["api", "-X", "DELETE", "--method=get", "x"]), act("api", &["method=GET"]));
        assert_eq!(
            action(&["api", "-X", "GET", "search/issues", "-f", "q=x"]),
            act("api", &["method=GET"])
        );
        assert_eq!(action(&["api", "-iXput", "x"]), act("api", &["method=PUT"]));
        // `-p` takes the rest of the cluster as its value: no method here.
        assert_eq!(action(&["api", "-ipXput", "x"]), act("api", &["method=GET"]));
        assert_eq!(action(&["api", "-X", "PURGE", "x"]), act("api", &["method-other"]));
        assert_eq!(action(&["api", "--method", "head", "x"]), act("api", &["method=HEAD"]));
    }

    #[test]
    fn api_method_override_headers_add_the_overridden_method() {
        let inv = parse(&argv(&["api", "-H", "X-HTTP-Method-Override: DELETE", "repos/o/r"]));
        assert_eq!(inv.problem, None);
        let seen: Vec<(String, Vec<String>, Option<String>)> = inv
            .actions
            .iter()
            .map(|a| {
                (
                    a.verb.clone(),
                    a.marks.iter().cloned().collect(),
                    a.http.as_ref().map(|h| h.method.clone()),
                )
            })
            .collect();
        assert_eq!(
            seen,
            vec![
                ("api".into(), vec!["method=GET".into()], Some("GET".into())),
                (
                    "api".into(),
                    vec!["method-override".into(), "method=DELETE".into()],
                    Some("DELETE".into())
                ),
            ]
        );
        let inv = parse(&argv(&["api", "repos/o/r", "-H", "x-method-override:purge"]));
        assert!(inv.actions[1].has("method-other") && !inv.actions[1].has("method=GET"));
        assert_eq!(parse(&argv(&["api", "repos/o/r", "-H", "Accept: x"])).actions.len(), 1);
    }

    #[test]
    fn api_other_hosts_and_file_reads_are_marked() {
        assert_eq!(
            action(&["api", "--hostname", "evil.example", "x"]),
            act("api", &["method=GET", "other-host"])
        );
        assert_eq!(
            action(&["api", "https://evil.example/x"]),
            act("api", &["method=GET", "other-host"])
        );
        assert_eq!(
            action(&["api", "repos/o/r/issues", "-F", "body=@/etc/passwd"]),
            act("api", &["method=POST", "file-read"])
        );
        assert_eq!(
            action(&["api", "x", "--input", "-"]),
            act("api", &["method=POST", "file-read", "stdin"])
        );
        let inv = parse(&argv(&["api", "a", "b"]));
        assert_eq!(inv.problem, Some("gh api takes exactly one endpoint, got 2".into()));
    }

    /// The GraphQL mutation fields of a call, and its marks.
    fn graphql(words: &[&str], contents: &Contents) -> (Vec<String>, Vec<String>) {
        let inv = parse_with(&argv(words), contents);
        assert_eq!(inv.problem, None, "{words:?}");
        let mutations = inv
            .actions
            .iter()
            .filter_map(|a| a.http.as_ref().and_then(|h| h.mutation.clone()))
            .collect();
        let marks = inv
            .actions
            .iter()
            .flat_map(|a| a.marks.iter().cloned())
            .collect::<std::collections::BTreeSet<_>>();
        (mutations, marks.into_iter().collect())
    }

    #[test]
    fn graphql_documents_are_parsed_into_queries_and_named_mutations() {
        let none = Contents::new();
        assert_eq!(action(&["api", "graphql", "-f", "query={viewer{login}}"]), act("api graphql", &[]));
        assert_eq!(
            graphql(
                &[
                    "api",
                    "graphql",
                    "-f",
                    "query=mutation{mergePullRequest(input:{}){clientMutationId}}"
                ],
                &none
            ),
            (vec!["mergePullRequest".to_string()], vec!["graphql-mutation".to_string()])
        );
        // A comment or a string that says "mutation" is not one.
        assert_eq!(
            graphql(
                &["api", "graphql", "-f", "query=# mutation\n{ search(query:\"mutation\") { x } }"],
                &none
            )
            .1,
            Vec::<String>::new()
        );
        assert_eq!(
            graphql(&["api", "graphql", "-f", "query=subscription { x }"], &none).1,
            vec!["graphql-subscription".to_string()]
        );
        // The GraphQL endpoint reached as a REST path, encoded or with GET, is judged the same.
        assert_eq!(
            graphql(
                &[
                    "api",
                    "/graph%71l",
                    "-f",
                    "query=mutation { deleteRef(input:{}) { clientMutationId } }"
                ],
                &none
            )
            .0,
            vec!["deleteRef".to_string()]
        );
        assert_eq!(
            graphql(
                &["api", "-X", "GET", "graphql", "-f", "query=mutation { deleteRef(input:{}) { x } }"],
                &none
            )
            .0,
            vec!["deleteRef".to_string()]
        );
        assert!(
            graphql(&["api", "graphql", "-f", "query=Mutation { x }"], &none)
                .1
                .contains(&"graphql-opaque".to_string())
        );
    }

    #[test]
    fn graphql_documents_in_files_are_parsed_once_the_gate_read_them() {
        let words = ["api", "graphql", "-F", "query=@q.graphql"];
        let (m, marks) = graphql(&words, &Contents::new());
        assert!(m.is_empty() && marks.contains(&"graphql-opaque".to_string()));
        let inv = parse(&argv(&words));
        assert_eq!(
            inv.files,
            vec![LocalFile {
                path: "q.graphql".into(),
                access: Access::Read,
                flag: "-F".into(),
                content: true,
                at: Some(3),
            }]
        );
        let contents = Contents::from([(
            "q.graphql".to_string(),
            Ok("mutation { addComment(input:{}) { clientMutationId } }".to_string()),
        )]);
        assert_eq!(graphql(&words, &contents).0, vec!["addComment".to_string()]);
        let contents = Contents::from([("b.json".to_string(), Ok(r#"{"query":"{ viewer { login } }"}"#.to_string()))]);
        assert_eq!(
            graphql(&["api", "graphql", "--input", "b.json"], &contents).1,
            vec!["file-read".to_string()]
        );
    }

    #[test]
    fn api_pull_request_creation_and_contents_writes_carry_scope_targets() {
        let inv = parse(&argv(&[
            "api",
            "repos/o/r/pulls",
            "-f",
            "head=fix",
            "-f",
            "base=main",
            "-f",
            "title=t",
        ]));
        assert_eq!(
            inv.actions[0].scope,
            Some(crate::grammar::ScopeTarget::PullRequest {
                repo: Some(("o".into(), "r".into())),
                base: Some("main".into()),
                head: Some("fix".into())
            })
        );
        assert!(inv.actions[0].has("pr-create"));
        let inv = parse(&argv(&["api", "repos/o/r/pulls", "--input", "pr.json"]));
        assert!(inv.actions[0].has("scope-unknown"));
        let inv = parse(&argv(&["api", "-X", "PUT", "repos/o/r/contents/docs/x.md", "-f", "message=m"]));
        assert!(inv.actions[0].has("contents-write"));
        // GET fields are query parameters, not a body.
        let inv = parse(&argv(&["api", "-X", "GET", "repos/o/r/pulls", "-f", "head=x"]));
        assert_eq!(inv.actions[0].http.as_ref().map(|h| h.body.clone()), Some(Body::None));
    }

    #[test]
    fn repo_hosts_other_than_github_are_claims() {
        let inv = parse(&argv(&["pr", "list", "-R", "evil.ghe.com/o/r"]));
        assert_eq!(
            inv.claims,
            vec![Claim::Pinned {
                var: "GH_HOST",
                value: "evil.ghe.com".into(),
                flag: "--repo".into()
            }]
        );
        assert_eq!(parse(&argv(&["pr", "list", "-R", "github.com/o/r"])).claims, vec![]);
        assert_eq!(parse(&argv(&["pr", "list", "-wRo/r"])).claims, vec![]);
        assert_eq!(parse(&argv(&["pr", "list", "-Rghe.io/o/r"])).claims.len(), 1);
        assert_eq!(parse(&argv(&["pr", "view", "https://x.ghe.com/o/r/pull/1"])).claims.len(), 1);
        assert_eq!(parse(&argv(&["repo", "clone", "x.ghe.com/o/r"])).claims.len(), 1);
        assert_eq!(parse(&argv(&["repo", "clone", "o/r", "./a/b/c"])).claims, vec![]);
        assert_eq!(parse(&argv(&["pr", "view", "https://github.com/o/r/pull/1"])).claims, vec![]);
    }

    fn requests(inv: &Invocation) -> Vec<String> {
        inv.actions
            .iter()
            .filter_map(|a| a.http.as_ref().map(|h| format!("{} {}", h.method, h.path)))
            .collect()
    }

    #[test]
    fn placeholders_are_filled_as_gh_fills_them_or_marked_for_the_gate_to_fill() {
        let fill = Fill {
            repo: Ok(("ops".into(), "infra".into())),
            branch: Ok("pulls/1/merge".into()),
        };
        let words = ["api", "-X", "PUT", "repos/{owner}/{repo}/{branch}"];
        let inv = parse_filled(&argv(&words), &Contents::new(), Some(&fill));
        assert_eq!(requests(&inv), vec!["PUT /repos/ops/infra/pulls/1/merge"]);
        let inv = parse_filled(&argv(&["api", "repos/:owner/:repo/pulls"]), &Contents::new(), Some(&fill));
        assert_eq!(requests(&inv), vec!["GET /repos/ops/infra/pulls"]);
        // `:owners` is no placeholder (a word character follows); `-f` values are never filled.
        let inv = parse_filled(&argv(&["api", "repos/x/:owners"]), &Contents::new(), Some(&fill));
        assert_eq!(requests(&inv), vec!["GET /repos/x/:owners"]);
        let approve = Fill {
            branch: Ok("APPROVE".into()),
            ..fill.clone()
        };
        let body = |words: &[&str]| {
            let inv = parse_filled(&argv(words), &Contents::new(), Some(&approve));
            inv.actions[0].http.as_ref().and_then(|h| h.body.field("event").cloned())
        };
        assert_eq!(
            body(&["api", "repos/o/r/pulls/1/reviews", "-F", "event={branch}"]).as_deref(),
            Some("APPROVE")
        );
        assert_eq!(
            body(&["api", "repos/o/r/pulls/1/reviews", "-f", "event={branch}"]).as_deref(),
            Some("{branch}")
        );
        // Without a fill the call is marked; a fill that failed is a problem naming why.
        assert!(parse(&argv(&words)).actions[0].has(PLACEHOLDER));
        let failed = Fill {
            branch: Err("HEAD is detached".into()),
            ..fill
        };
        let inv = parse_filled(&argv(&words), &Contents::new(), Some(&failed));
        assert!(
            inv.problem
                .is_some_and(|p| p.contains("{branch}") && p.contains("HEAD is detached"))
        );
    }

    #[test]
    fn a_field_given_twice_is_a_problem_but_arrays_repeat() {
        for words in [
            &["api", "repos/o/r/pulls/1/reviews", "-F", "event=APPROVE", "-f", "event=COMMENT"][..],
            &["api", "x", "-f", "a=1", "-f", "a=2"],
            &["api", "graphql", "-F", "query=mutation { m }", "-f", "query={ viewer { login } }"],
            &["api", "x", "-f", "a=1", "-f", "a[]=2"],
        ] {
            assert!(parse(&argv(words)).problem.is_some(), "{words:?}");
        }
        assert_eq!(parse(&argv(&["api", "x", "-f", "l[]=a", "-f", "l[]=b"])).problem, None);
    }

    #[test]
    fn graphql_with_another_method_or_an_override_is_judged_as_that_method_too() {
        // The document as the GraphQL request it is (judged by its operations), and the method
        // as itself.
        let inv = parse(&argv(&["api", "-X", "DELETE", "graphql", "-f", "query={ viewer { login } }"]));
        assert_eq!(requests(&inv), vec!["POST /graphql", "DELETE /graphql"]);
        assert!(inv.actions.iter().any(|a| a.verb == "api" && a.has("method=DELETE")));
        let inv = parse(&argv(&[
            "api",
            "-X",
            "HEAD",
            "graphql",
            "-f",
            "query=mutation { addStar(input: {}) { x } }",
        ]));
        assert!(inv.actions.iter().any(|a| a.has("graphql-mutation")), "{:?}", inv.actions);
        let inv = parse(&argv(&["api", "graphql", "-H", "X-HTTP-Method-Override: PUT", "-f", "query={ x }"]));
        assert!(
            inv.actions
                .iter()
                .any(|a| a.verb == "api" && a.has("method=PUT") && a.has("method-override"))
        );
        // GET sends the document in the query string: still judged by its document.
        let inv = parse(&argv(&[
            "api",
            "-X",
            "GET",
            "graphql",
            "-f",
            "query=mutation { deleteRef(input:{}) { x } }",
        ]));
        assert!(inv.actions.iter().any(|a| a.has("graphql-mutation")));
    }

    #[test]
    fn head_sends_its_fields_as_a_body_and_paginated_writes_are_marked() {
        let inv = parse(&argv(&["api", "-X", "HEAD", "repos/o/r/pulls/1/reviews", "-f", "event=APPROVE"]));
        let a = &inv.actions[0];
        assert!(a.has("body"));
        assert_eq!(
            a.http.as_ref().and_then(|h| h.body.field("event").cloned()).as_deref(),
            Some("APPROVE")
        );
        assert!(!parse(&argv(&["api", "-X", "GET", "x", "-f", "q=1"])).actions[0].has("body"));
        assert!(parse(&argv(&["api", "--paginate", "-X", "POST", "x"])).actions[0].has("paginate-write"));
        assert!(!parse(&argv(&["api", "--paginate", "x"])).actions[0].has("paginate-write"));
        let q = "query=mutation { addStar(input:{}) { x } }";
        assert!(parse(&argv(&["api", "graphql", "--paginate", "-f", q])).actions[0].has("paginate-write"));
        assert!(!parse(&argv(&["api", "graphql", "--paginate", "-f", "query={ x }"])).actions[0].has("paginate-write"));
    }

    #[test]
    fn operands_pasted_into_an_api_path_must_be_one_plain_segment() {
        for words in [
            &["label", "delete", "../git/refs/heads/main", "--yes"][..],
            &["label", "delete", "--yes", "a/b"],
            &["release", "view", "v1%2F.."],
            &["variable", "get", "X?y"],
            &["run", "view", ".."],
            &["release", "delete-asset", "v1", "../x"],
        ] {
            assert!(parse(&argv(words)).problem.is_some(), "{words:?}");
        }
        for words in [
            &["label", "delete", "bug", "--yes", "-R", "o/r"][..],
            &["label", "delete", "-R", "o/r", "bug"],
            &["release", "upload", "v1.2", "dist/app.tar.gz"],
            &["workflow", "run", "deploy.yml", "-f", "ref=feature/x"],
        ] {
            assert_eq!(parse(&argv(words)).problem, None, "{words:?}");
        }
    }

    #[test]
    fn a_non_ascii_short_option_is_a_problem() {
        let inv = parse(&argv(&["-é", "workflow", "run", "list"]));
        assert_eq!(inv.problem, Some("option -é is not a gh option".into()));
    }
}
