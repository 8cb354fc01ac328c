//! tea (the Gitea CLI): its command tree, aliases and flags, parsed the way urfave/cli v3 parses
//! them. Owns the tree (names and aliases from tea's `cmd/`), the flag tables per command, and
//! the walk that turns argv into one [`Action`]. It does not decide anything.
//!
//! urfave/cli v3 (`command_parse.go` `parseFlags`, `command_run.go` `run`), level by level:
//!
//! - every token is first trimmed of surrounding white space (Go `strings.TrimSpace`);
//! - a flag takes one or two dashes and any of its names (`-l x`, `--login x`, `-login=x`,
//!   `--l=x`); there are no short clusters, because tea never sets `UseShortOptionHandling`;
//! - flags and positionals interleave, but a positional that names a subcommand of the current
//!   command ends this level's flag parsing and everything from it on is left as positionals;
//! - `--` ends flags; a lone `-` is a positional and everything after it is dropped; a `-`
//!   followed by a non-letter (`-1`) ends flags and is kept with everything after it;
//! - after parsing, the *first* positional, compared exactly (untrimmed), picks the subcommand,
//!   whatever ended the flags: `tea pulls -- merge 5` merges;
//! - a flag of an ancestor is inherited (urfave flags are persistent unless `Local`) unless the
//!   command has its own flag with one of its names, so `tea pulls --repo x merge 5` is
//!   `pulls merge`, and `tea pulls merge --comments 5` is accepted;
//! - `--help`/`-h` (every command) and `--version`/`-v` (root) stop the call before any
//!   subcommand runs; every command also has a `help`/`h` subcommand, and the root a hidden
//!   `completion` command.
//!
//! The scanner in [`opts`] has no notion of a level that ends at a subcommand name, of `-1`
//! ending flags, or of trimming, so this file walks the tokens itself and hands each flag token
//! (with the next token when the flag needs a value) to [`opts::scan`] for name and value forms.
//!
//! Positionals of a command with subcommands are judged by what the command's own action does
//! with them: an index (`tea pulls 5`) or a name (`tea repos o/r`) is an argument of a read, but a
//! word where only an index or nothing is taken is reported as an unknown subcommand
//! (`pulls frobnicate`), since forks add commands that upstream does not know.

use std::collections::BTreeSet;

use crate::grammar::opts::{self, Item, Opt, Style};
use crate::grammar::{Action, Invocation, LocalFile, ScopeTarget};
use crate::tool::Tool;

/// tea needs no hardening arguments: its config and identity are pinned by the environment.
pub const PREPEND: &[&str] = &[];

const STYLE: Style = Style::URFAVE;

/// The token urfave's shell completion appends; with it the call only prints completions, but
/// without a `--` anywhere it also silently disappears from argv. Refused rather than modelled.
const COMPLETION_FLAG: &str = "--generate-shell-completion";

// ---------------------------------------------------------------------------------------------
// Flags (`cmd/flags/generic.go`, `cmd/flags/issue_pr.go`, and each command's own file)

const HELP: Opt = Opt::flag("help", &["help"], &['h']);
const VERSION: Opt = Opt::flag("version", &["version"], &['v']);

const LOGIN: Opt = Opt::value("login", &["login"], &['l']);
const REPO: Opt = Opt::value("repo", &["repo"], &['r']);
const REMOTE: Opt = Opt::value("remote", &["remote"], &['R']);
const OUTPUT: Opt = Opt::value("output", &["output"], &['o']);
const PAGE: Opt = Opt::value("page", &["page"], &['p']);
const LIMIT: Opt = Opt::value("limit", &["limit", "lm"], &[]);
const FIELDS: Opt = Opt::value("fields", &["fields"], &['f']);
const STATE: Opt = Opt::value("state", &["state"], &[]);
const COMMENTS: Opt = Opt::flag("comments", &["comments"], &[]);
const CONFIRM: Opt = Opt::flag("confirm", &["confirm"], &['y']);

/// `flags.AllDefaultFlags`.
const ALL_DEFAULT: &[Opt] = &[REPO, REMOTE, LOGIN, OUTPUT];
/// `flags.LoginRepoFlags`.
const LOGIN_REPO: &[Opt] = &[LOGIN, REPO, REMOTE];
/// `flags.LoginOutputFlags`.
const LOGIN_OUTPUT: &[Opt] = &[LOGIN, OUTPUT];
const PAGING: &[Opt] = &[PAGE, LIMIT];

/// `pulls list` and the `pulls` parent (`flags.PRListingFlags` plus fields).
const PR_LISTING: &[Opt] = &[FIELDS, STATE, PAGE, LIMIT];
/// `issues list` and the `issues` parent (`flags.IssueListingFlags` plus fields).
const ISSUE_LISTING: &[Opt] = &[
    FIELDS,
    STATE,
    Opt::value("kind", &["kind"], &['K']),
    Opt::value("keyword", &["keyword"], &['k']),
    Opt::value("labels", &["labels"], &['L']),
    Opt::value("milestones", &["milestones"], &['m']),
    Opt::value("author", &["author"], &['A']),
    Opt::value("assignee", &["assignee"], &['a']),
    Opt::value("mentions", &["mentions"], &['M']),
    Opt::value("owner", &["owner", "org"], &[]),
    Opt::value("from", &["from"], &['F']),
    Opt::value("until", &["until"], &['u']),
    PAGE,
    LIMIT,
];
/// `issuePRFlags`: shared by create and edit of issues and pulls (with `LoginRepoFlags`).
const ISSUE_PR_COMMON: &[Opt] = &[
    Opt::value("title", &["title"], &['t']),
    Opt::value("description", &["description"], &['d']),
    Opt::value("referenced-version", &["referenced-version"], &['v']),
    Opt::value("milestone", &["milestone"], &['m']),
    Opt::value("deadline", &["deadline"], &['D']),
];
const ISSUE_PR_CREATE: &[Opt] = &[
    Opt::value("assignees", &["assignees"], &['a']),
    Opt::value("labels", &["labels"], &['L']),
];
const ISSUE_PR_EDIT: &[Opt] = &[
    Opt::value("add-assignees", &["add-assignees"], &['a']),
    Opt::value("add-labels", &["add-labels"], &['L']),
    Opt::value("remove-labels", &["remove-labels"], &[]),
];
const PULLS_CREATE: &[Opt] = &[
    Opt::value("head", &["head"], &[]),
    Opt::value("base", &["base"], &['b']),
    Opt::flag("allow-maintainer-edits", &["allow-maintainer-edits", "edits"], &[]),
];
const PULLS_MERGE: &[Opt] = &[
    Opt::value("style", &["style"], &['s']),
    Opt::value("title", &["title"], &['t']),
    Opt::value("message", &["message"], &['m']),
];

const LABELS_LIST: &[Opt] = &[Opt::flag("save", &["save"], &['s']), PAGE, LIMIT];
const LABEL_NAME: Opt = Opt::value("name", &["name"], &[]);
const LABEL_COLOR: Opt = Opt::value("color", &["color"], &[]);
const LABEL_DESCRIPTION: Opt = Opt::value("description", &["description"], &[]);
const LABEL_ID: Opt = Opt::value("id", &["id"], &[]);

const MILESTONES_LIST: &[Opt] = &[FIELDS, STATE, PAGE, LIMIT];
const MILESTONES_CREATE: &[Opt] = &[
    Opt::value("title", &["title"], &['t']),
    Opt::value("description", &["description"], &['d']),
    Opt::value("deadline", &["deadline", "expires"], &['x']),
    STATE,
];
const MILESTONE_ISSUES: &[Opt] = &[STATE, Opt::value("kind", &["kind"], &[]), PAGE, LIMIT, FIELDS];

const RELEASES_CREATE: &[Opt] = &[
    Opt::value("tag", &["tag"], &[]),
    Opt::value("target", &["target"], &[]),
    Opt::value("title", &["title"], &['t']),
    Opt::value("note", &["note"], &['n']),
    Opt::value("note-file", &["note-file"], &['f']),
    Opt::flag("draft", &["draft"], &['d']),
    Opt::flag("prerelease", &["prerelease"], &['p']),
    Opt::value("asset", &["asset"], &['a']),
];
/// `releases edit` takes `--draft`/`--prerelease` as strings, unlike `create`.
const RELEASES_EDIT: &[Opt] = &[
    Opt::value("tag", &["tag"], &[]),
    Opt::value("target", &["target"], &[]),
    Opt::value("title", &["title"], &['t']),
    Opt::value("note", &["note"], &['n']),
    Opt::value("draft", &["draft"], &['d']),
    Opt::value("prerelease", &["prerelease"], &['p']),
];
const RELEASES_DELETE: &[Opt] = &[CONFIRM, Opt::flag("delete-tag", &["delete-tag"], &[])];

const TIMES_LIST: &[Opt] = &[
    Opt::value("from", &["from"], &['f']),
    Opt::value("until", &["until"], &['u']),
    Opt::flag("total", &["total"], &['t']),
    Opt::flag("mine", &["mine"], &['m']),
    Opt::value("fields", &["fields"], &[]),
];

const ORGS_CREATE: &[Opt] = &[
    Opt::value("name", &["name"], &['n']),
    Opt::value("description", &["description"], &['d']),
    Opt::value("website", &["website"], &['w']),
    Opt::value("location", &["location"], &['L']),
    Opt::value("visibility", &["visibility"], &['v']),
    Opt::flag("repo-admins-can-change-team-access", &["repo-admins-can-change-team-access"], &[]),
];

const REPO_TYPE: Opt = Opt::value("type", &["type"], &['T']);
const REPO_OWNER: Opt = Opt::value("owner", &["owner"], &['O']);
/// `repos create` and `repos delete` give `--name` the alias "" (so `--=x` is `--name=x`).
const REPO_NAME: Opt = Opt::value("name", &["name", ""], &[]);
const REPO_DESCRIPTION: Opt = Opt::value("description", &["description", "desc"], &[]);
const REPOS_LIST: &[Opt] = &[
    Opt::flag("watched", &["watched"], &['w']),
    Opt::flag("starred", &["starred"], &['s']),
    FIELDS,
    REPO_TYPE,
    PAGE,
    LIMIT,
];
const REPOS_SEARCH: &[Opt] = &[
    Opt::flag("topic", &["topic"], &['t']),
    REPO_TYPE,
    REPO_OWNER,
    Opt::value("private", &["private"], &[]),
    Opt::value("archived", &["archived"], &[]),
    FIELDS,
    PAGE,
    LIMIT,
];
const REPOS_CREATE: &[Opt] = &[
    REPO_NAME,
    REPO_OWNER,
    Opt::flag("private", &["private"], &[]),
    REPO_DESCRIPTION,
    Opt::flag("init", &["init"], &[]),
    Opt::value("labels", &["labels"], &[]),
    Opt::value("gitignores", &["gitignores", "git"], &[]),
    Opt::value("license", &["license"], &[]),
    Opt::value("readme", &["readme"], &[]),
    Opt::value("branch", &["branch"], &[]),
    Opt::flag("template", &["template"], &[]),
    Opt::value("trustmodel", &["trustmodel"], &[]),
];
const REPOS_FROM_TEMPLATE: &[Opt] = &[
    Opt::value("template", &["template"], &['t']),
    Opt::value("name", &["name"], &['n']),
    REPO_OWNER,
    Opt::flag("private", &["private"], &[]),
    REPO_DESCRIPTION,
    Opt::flag("content", &["content"], &[]),
    Opt::flag("githooks", &["githooks"], &[]),
    Opt::flag("avatar", &["avatar"], &[]),
    Opt::flag("labels", &["labels"], &[]),
    Opt::flag("topics", &["topics"], &[]),
    Opt::flag("webhooks", &["webhooks"], &[]),
];
const REPOS_MIGRATE: &[Opt] = &[
    Opt::value("name", &["name"], &[]),
    Opt::value("owner", &["owner"], &[]),
    Opt::value("clone-url", &["clone-url"], &[]),
    Opt::value("service", &["service"], &[]),
    Opt::flag("mirror", &["mirror"], &[]),
    Opt::flag("private", &["private"], &[]),
    Opt::flag("template", &["template"], &[]),
    Opt::flag("wiki", &["wiki"], &[]),
    Opt::flag("issues", &["issues"], &[]),
    Opt::flag("labels", &["labels"], &[]),
    Opt::flag("pull-requests", &["pull-requests"], &[]),
    Opt::flag("releases", &["releases"], &[]),
    Opt::flag("milestones", &["milestones"], &[]),
    Opt::value("mirror-interval", &["mirror-interval"], &[]),
    Opt::flag("lfs", &["lfs"], &[]),
    Opt::value("lfs-endpoint", &["lfs-endpoint"], &[]),
    Opt::value("auth-user", &["auth-user"], &[]),
    Opt::value("auth-password", &["auth-password"], &[]),
    Opt::value("auth-token", &["auth-token"], &[]),
];
const REPOS_DELETE: &[Opt] = &[REPO_NAME, REPO_OWNER, Opt::flag("force", &["force"], &['f'])];

const BRANCHES_LIST: &[Opt] = &[FIELDS, PAGE, LIMIT];

/// `flags.NotificationFlags` (before `AllDefaultFlags`).
const NOTIFICATION: &[Opt] = &[
    Opt::value("states", &["states"], &['s']),
    Opt::flag("mine", &["mine"], &['m']),
    PAGE,
    LIMIT,
];
const NOTIFICATIONS_LIST: &[Opt] = &[FIELDS, Opt::value("types", &["types"], &['t'])];

/// The `webhooks` parent defines its own `--repo`, `--login` and `--output` besides the list's.
const WEBHOOKS_PARENT: &[Opt] = &[
    Opt::value("repo", &["repo"], &[]),
    Opt::value("org", &["org"], &[]),
    Opt::flag("global", &["global"], &[]),
    Opt::value("login", &["login"], &[]),
    OUTPUT,
];
const WEBHOOK_SETTINGS: &[Opt] = &[
    Opt::value("secret", &["secret"], &[]),
    Opt::value("events", &["events"], &[]),
    Opt::flag("active", &["active"], &[]),
    Opt::value("branch-filter", &["branch-filter"], &[]),
    Opt::value("authorization-header", &["authorization-header"], &[]),
];
const WEBHOOKS_CREATE: &[Opt] = &[Opt::value("type", &["type"], &[])];
const WEBHOOKS_UPDATE: &[Opt] = &[Opt::value("url", &["url"], &[]), Opt::flag("inactive", &["inactive"], &[])];

/// The `actions` parent's own flags: no short aliases.
const ACTIONS_PARENT: &[Opt] = &[Opt::value("repo", &["repo"], &[]), Opt::value("login", &["login"], &[]), OUTPUT];
const FROM_FILE: &[Opt] = &[Opt::value("file", &["file"], &[]), Opt::flag("stdin", &["stdin"], &[])];

const LOGINS_ADD: &[Opt] = &[
    Opt::value("name", &["name"], &['n']),
    Opt::value("url", &["url"], &['u']),
    Opt::flag("no-version-check", &["no-version-check", "nv"], &[]),
    Opt::value("token", &["token"], &['t']),
    Opt::value("user", &["user"], &[]),
    Opt::value("password", &["password", "pwd"], &[]),
    Opt::value("otp", &["otp"], &[]),
    Opt::value("scopes", &["scopes"], &[]),
    Opt::value("ssh-key", &["ssh-key"], &['s']),
    Opt::flag("insecure", &["insecure"], &['i']),
    Opt::value("ssh-agent-principal", &["ssh-agent-principal"], &['c']),
    Opt::value("ssh-agent-key", &["ssh-agent-key"], &['a']),
    Opt::flag("helper", &["helper"], &['j']),
    Opt::flag("oauth", &["oauth"], &['o']),
    Opt::value("client-id", &["client-id"], &[]),
    Opt::value("redirect-url", &["redirect-url"], &[]),
];

// ---------------------------------------------------------------------------------------------
// Command tree (`cmd/cmd.go` and the files it names)

/// What a command's own action does with its positionals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Args {
    /// A command without subcommands: positionals are its arguments.
    Leaf,
    /// Lists, or shows the item whose index (`5`, `#5`) is given.
    Index,
    /// Lists, or shows the item whose name is given (a repo slug, a milestone, a login).
    Name,
    /// Takes no argument, so a positional can only be a command this tea does not know.
    Nothing,
}

struct Cmd {
    name: &'static str,
    aliases: &'static [&'static str],
    /// The command's own flags (without `--help`, which every command has), in table order.
    flags: &'static [&'static [Opt]],
    args: Args,
    subs: &'static [Cmd],
}

impl Cmd {
    fn has_name(&self, n: &str) -> bool {
        self.name == n || self.aliases.contains(&n)
    }
    fn own_flags(&self) -> impl Iterator<Item = Opt> + '_ {
        self.flags.iter().flat_map(|s| s.iter().copied())
    }
}

const fn leaf(name: &'static str, aliases: &'static [&'static str], flags: &'static [&'static [Opt]]) -> Cmd {
    Cmd {
        name,
        aliases,
        flags,
        args: Args::Leaf,
        subs: &[],
    }
}

const fn group(
    name: &'static str,
    aliases: &'static [&'static str],
    flags: &'static [&'static [Opt]],
    args: Args,
    subs: &'static [Cmd],
) -> Cmd {
    Cmd {
        name,
        aliases,
        flags,
        args,
        subs,
    }
}

static ROOT: Cmd = group(
    "",
    &[],
    &[&[VERSION]],
    Args::Nothing,
    &[
        group(
            "logins",
            &["login"],
            &[],
            Args::Name,
            &[
                leaf("list", &["ls"], &[&[OUTPUT]]),
                leaf("add", &[], &[LOGINS_ADD]),
                leaf("edit", &["e"], &[&[OUTPUT]]),
                leaf("delete", &["rm"], &[]),
                leaf("default", &[], &[&[OUTPUT]]),
                group(
                    "helper",
                    &["git-credential"],
                    &[],
                    Args::Nothing,
                    &[leaf("store", &["erase"], &[]), leaf("setup", &[], &[]), leaf("get", &[], &[])],
                ),
                leaf("oauth-refresh", &[], &[]),
            ],
        ),
        leaf("logout", &[], &[]),
        leaf("whoami", &[], &[]),
        group(
            "issues",
            &["issue", "i"],
            &[&[COMMENTS], ISSUE_LISTING, ALL_DEFAULT],
            Args::Index,
            &[
                leaf("list", &["ls"], &[ISSUE_LISTING, ALL_DEFAULT]),
                leaf("create", &["c"], &[ISSUE_PR_CREATE, ISSUE_PR_COMMON, LOGIN_REPO]),
                leaf("edit", &["e"], &[ISSUE_PR_EDIT, ISSUE_PR_COMMON, LOGIN_REPO]),
                leaf("reopen", &["open"], &[ALL_DEFAULT]),
                leaf("close", &[], &[ALL_DEFAULT]),
            ],
        ),
        group(
            "pulls",
            &["pull", "pr"],
            &[&[COMMENTS], PR_LISTING, ALL_DEFAULT],
            Args::Index,
            &[
                leaf("list", &["ls"], &[PR_LISTING, ALL_DEFAULT]),
                leaf("checkout", &["co"], &[&[Opt::flag("branch", &["branch"], &['b'])], ALL_DEFAULT]),
                leaf("clean", &[], &[&[Opt::flag("ignore-sha", &["ignore-sha"], &[])], ALL_DEFAULT]),
                leaf("create", &["c"], &[PULLS_CREATE, ISSUE_PR_CREATE, ISSUE_PR_COMMON, LOGIN_REPO]),
                leaf("close", &[], &[ALL_DEFAULT]),
                leaf("reopen", &["open"], &[ALL_DEFAULT]),
                leaf("review", &[], &[ALL_DEFAULT]),
                leaf("approve", &["lgtm", "a"], &[ALL_DEFAULT]),
                leaf("reject", &[], &[ALL_DEFAULT]),
                leaf("merge", &["m"], &[PULLS_MERGE, ALL_DEFAULT]),
            ],
        ),
        group(
            "labels",
            &["label"],
            &[LABELS_LIST, ALL_DEFAULT],
            Args::Nothing,
            &[
                leaf("list", &["ls"], &[LABELS_LIST, ALL_DEFAULT]),
                leaf(
                    "create",
                    &["c"],
                    &[
                        &[LABEL_NAME, LABEL_COLOR, LABEL_DESCRIPTION, Opt::value("file", &["file"], &[])],
                        ALL_DEFAULT,
                    ],
                ),
                leaf(
                    "update",
                    &[],
                    &[&[LABEL_ID, LABEL_NAME, LABEL_COLOR, LABEL_DESCRIPTION], ALL_DEFAULT],
                ),
                leaf("delete", &["rm"], &[&[LABEL_ID], ALL_DEFAULT]),
            ],
        ),
        group(
            "milestones",
            &["milestone", "ms"],
            &[MILESTONES_LIST, ALL_DEFAULT],
            Args::Name,
            &[
                leaf("list", &["ls"], &[MILESTONES_LIST, ALL_DEFAULT]),
                leaf("create", &["c"], &[MILESTONES_CREATE, ALL_DEFAULT]),
                leaf("close", &[], &[&[Opt::flag("force", &["force"], &['f'])], ALL_DEFAULT]),
                leaf("delete", &["rm"], &[ALL_DEFAULT]),
                leaf("reopen", &["open"], &[ALL_DEFAULT]),
                group(
                    "issues",
                    &["i"],
                    &[MILESTONE_ISSUES, ALL_DEFAULT],
                    Args::Name,
                    &[leaf("add", &["a"], &[ALL_DEFAULT]), leaf("remove", &["r"], &[ALL_DEFAULT])],
                ),
            ],
        ),
        group(
            "releases",
            &["release", "r"],
            &[ALL_DEFAULT],
            Args::Nothing,
            &[
                leaf("list", &["ls"], &[PAGING, ALL_DEFAULT]),
                leaf("create", &["c"], &[RELEASES_CREATE, ALL_DEFAULT]),
                leaf("delete", &["rm"], &[RELEASES_DELETE, ALL_DEFAULT]),
                leaf("edit", &["e"], &[RELEASES_EDIT, ALL_DEFAULT]),
                group(
                    "assets",
                    &["asset", "a"],
                    &[ALL_DEFAULT],
                    Args::Name,
                    &[
                        leaf("list", &["ls"], &[PAGING, ALL_DEFAULT]),
                        leaf("create", &["c"], &[ALL_DEFAULT]),
                        leaf("delete", &["rm"], &[&[CONFIRM], ALL_DEFAULT]),
                    ],
                ),
            ],
        ),
        group(
            "times",
            &["time", "t"],
            &[TIMES_LIST, ALL_DEFAULT],
            Args::Name,
            &[
                leaf("add", &["a"], &[LOGIN_REPO]),
                leaf("delete", &["rm"], &[LOGIN_REPO]),
                leaf("reset", &[], &[LOGIN_REPO]),
                leaf("list", &["ls"], &[TIMES_LIST, ALL_DEFAULT]),
            ],
        ),
        group(
            "organizations",
            &["organization", "org"],
            &[PAGING, ALL_DEFAULT],
            Args::Name,
            &[
                leaf("list", &["ls"], &[PAGING, ALL_DEFAULT]),
                leaf("create", &["c"], &[ORGS_CREATE, &[LOGIN]]),
                leaf("delete", &["rm"], &[&[LOGIN, REMOTE]]),
            ],
        ),
        group(
            "repos",
            &["repo"],
            &[REPOS_LIST, LOGIN_OUTPUT],
            Args::Name,
            &[
                leaf("list", &["ls"], &[REPOS_LIST, LOGIN_OUTPUT]),
                leaf("search", &["s"], &[REPOS_SEARCH, LOGIN_OUTPUT]),
                leaf("create", &["c"], &[REPOS_CREATE, LOGIN_OUTPUT]),
                leaf("create-from-template", &["ct"], &[REPOS_FROM_TEMPLATE, LOGIN_OUTPUT]),
                leaf("fork", &["f"], &[&[REPO_OWNER], LOGIN_REPO]),
                leaf("migrate", &["m"], &[REPOS_MIGRATE, LOGIN_OUTPUT]),
                leaf("delete", &["rm"], &[REPOS_DELETE, LOGIN_OUTPUT]),
            ],
        ),
        group(
            "branches",
            &["branch", "b"],
            &[&[COMMENTS], BRANCHES_LIST, ALL_DEFAULT],
            Args::Name,
            &[
                leaf("list", &["ls"], &[BRANCHES_LIST, ALL_DEFAULT]),
                leaf("protect", &["P"], &[BRANCHES_LIST, ALL_DEFAULT]),
                leaf("unprotect", &["U"], &[BRANCHES_LIST, ALL_DEFAULT]),
            ],
        ),
        leaf("comment", &["c"], &[ALL_DEFAULT]),
        leaf("open", &["o"], &[LOGIN_REPO]),
        group(
            "notifications",
            &["notification", "n"],
            &[NOTIFICATIONS_LIST, NOTIFICATION, ALL_DEFAULT],
            Args::Nothing,
            &[
                leaf("ls", &["list"], &[NOTIFICATIONS_LIST, NOTIFICATION, ALL_DEFAULT]),
                leaf("read", &["r"], &[NOTIFICATION, ALL_DEFAULT]),
                leaf("unread", &["u"], &[NOTIFICATION, ALL_DEFAULT]),
                leaf("pin", &["p"], &[NOTIFICATION, ALL_DEFAULT]),
                leaf("unpin", &[], &[NOTIFICATION, ALL_DEFAULT]),
            ],
        ),
        leaf("clone", &["C"], &[&[Opt::value("depth", &["depth"], &['d']), LOGIN]]),
        group(
            "admin",
            &["a"],
            &[],
            Args::Nothing,
            &[group(
                "users",
                &["u"],
                &[&[FIELDS], PAGING, ALL_DEFAULT],
                Args::Name,
                &[leaf("list", &["ls"], &[&[FIELDS], PAGING, ALL_DEFAULT])],
            )],
        ),
        group(
            "webhooks",
            &["webhook", "hooks", "hook"],
            &[WEBHOOKS_PARENT, ALL_DEFAULT],
            Args::Index,
            &[
                leaf("list", &["ls"], &[ALL_DEFAULT]),
                leaf("create", &["c"], &[WEBHOOKS_CREATE, WEBHOOK_SETTINGS, ALL_DEFAULT]),
                leaf("delete", &["rm"], &[&[CONFIRM], ALL_DEFAULT]),
                leaf("update", &["edit", "u"], &[WEBHOOKS_UPDATE, WEBHOOK_SETTINGS, ALL_DEFAULT]),
            ],
        ),
        group(
            "actions",
            &["action"],
            &[ACTIONS_PARENT],
            Args::Nothing,
            &[
                group(
                    "secrets",
                    &["secret"],
                    &[],
                    Args::Nothing,
                    &[
                        leaf("list", &["ls"], &[PAGING, ALL_DEFAULT]),
                        leaf("create", &["add", "set"], &[FROM_FILE, ALL_DEFAULT]),
                        leaf("delete", &["remove", "rm"], &[&[CONFIRM], ALL_DEFAULT]),
                    ],
                ),
                group(
                    "variables",
                    &["variable", "vars", "var"],
                    &[],
                    Args::Nothing,
                    &[
                        leaf("list", &["ls"], &[&[Opt::value("name", &["name"], &[])], ALL_DEFAULT]),
                        leaf("set", &["create", "update"], &[FROM_FILE, ALL_DEFAULT]),
                        leaf("delete", &["remove", "rm"], &[&[CONFIRM], ALL_DEFAULT]),
                    ],
                ),
            ],
        ),
        leaf("man", &[], &[&[Opt::value("out", &["out"], &['o'])]]),
    ],
);

// ---------------------------------------------------------------------------------------------
// Parsing

/// What a positional names at one level, besides the command's own subcommands.
enum Sub {
    Cmd(&'static Cmd),
    /// urfave's `help`/`h` command, present at every level.
    Help,
    /// urfave's hidden `completion` command (the root only, `EnableShellCompletion`).
    Completion,
}

fn find_sub(node: &'static Cmd, is_root: bool, name: &str) -> Option<Sub> {
    if let Some(c) = node.subs.iter().find(|c| c.has_name(name)) {
        return Some(Sub::Cmd(c));
    }
    match name {
        "help" | "h" => Some(Sub::Help),
        "completion" if is_root => Some(Sub::Completion),
        _ => None,
    }
}

fn names(o: &Opt) -> impl Iterator<Item = String> + '_ {
    o.long.iter().map(|l| l.to_string()).chain(o.short.iter().map(|c| c.to_string()))
}

/// The flags a command accepts: its own (with `--help`), then those of its ancestors, nearest
/// first, unless the command has a flag of its own with one of their names (urfave `parseFlags`,
/// "walking command lineage for persistent flags"). The root's `--version` is local.
fn applied_flags(chain: &[&'static Cmd]) -> Vec<Opt> {
    let Some((node, ancestors)) = chain.split_last() else {
        return vec![HELP];
    };
    let own: Vec<Opt> = std::iter::once(HELP).chain(node.own_flags()).collect();
    let own_names: BTreeSet<String> = own.iter().flat_map(names).collect();
    let mut table = own;
    for a in ancestors.iter().rev() {
        if std::ptr::eq(*a, &ROOT) {
            continue;
        }
        table.extend(a.own_flags().filter(|o| !names(o).any(|n| own_names.contains(&n))));
    }
    table
}

/// Go's `unicode.IsLetter(rune(b))` for the byte after a single dash: ASCII and Latin-1 letters.
fn latin1_letter(b: u8) -> bool {
    b.is_ascii_alphabetic() || matches!(b, 0xAA | 0xB5 | 0xBA | 0xC0..=0xD6 | 0xD8..=0xF6 | 0xF8..=0xFF)
}

/// One command level: the options found and the positionals as urfave leaves them.
struct Level {
    items: Vec<Item>,
    pos: Vec<String>,
}

/// urfave `parseFlags` for one command.
fn parse_level(args: &[String], node: &'static Cmd, is_root: bool, table: &[Opt]) -> Result<Level, String> {
    let mut lv = Level {
        items: Vec::new(),
        pos: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let raw = &args[i];
        let tok = raw.trim();
        if tok.is_empty() {
            lv.pos.push(raw.clone());
            i += 1;
            continue;
        }
        if tok == "--" {
            lv.pos.extend(args[i + 1..].iter().cloned());
            break;
        }
        if !tok.starts_with('-') {
            if find_sub(node, is_root, tok).is_some() {
                // A subcommand name ends this level; the rest is not parsed here.
                lv.pos.extend(args[i..].iter().cloned());
                break;
            }
            lv.pos.push(tok.to_string());
            i += 1;
            continue;
        }
        if tok.len() == 1 {
            // A lone `-`: kept, and everything after it is dropped.
            lv.pos.push(tok.to_string());
            break;
        }
        let second = tok.as_bytes()[1];
        if second != b'-' && !latin1_letter(second) {
            // `-1`: not a flag; flag parsing stops and everything from here is positional.
            lv.pos.extend(args[i..].iter().cloned());
            break;
        }
        let alone = [tok.to_string()];
        match opts::scan(&alone, table, &STYLE) {
            Ok(p) => {
                lv.items.extend(p.items);
                i += 1;
            }
            Err(e) => {
                // A flag that needs a value takes the next token as it is (untrimmed).
                let Some(next) = args.get(i + 1) else {
                    return Err(e);
                };
                let pair = [tok.to_string(), next.clone()];
                match opts::scan(&pair, table, &STYLE) {
                    Ok(p) if p.items.len() == 1 => {
                        lv.items.extend(p.items);
                        i += 2;
                    }
                    _ => return Err(e),
                }
            }
        }
    }
    Ok(lv)
}

/// `utils.ArgToIndex`: an optional `#`, then what `strconv.ParseInt` accepts in base 10.
fn index_like(s: &str) -> bool {
    let s = s.strip_prefix('#').unwrap_or(s);
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// What the walk found: the command path, every option of every level, the final positionals.
struct Walk {
    verb: String,
    parsed: opts::Parsed,
    pos: Vec<String>,
}

fn walk(args: &[String]) -> Result<Walk, String> {
    let mut chain: Vec<&'static Cmd> = vec![&ROOT];
    let mut parsed = opts::Parsed::default();
    let mut rest: Vec<String> = args.to_vec();
    loop {
        let node = *chain.last().unwrap_or(&&ROOT);
        let is_root = chain.len() == 1;
        let path = chain.iter().skip(1).map(|c| c.name).collect::<Vec<_>>().join(" ");
        let lv = parse_level(&rest, node, is_root, &applied_flags(&chain))?;
        let level = opts::Parsed {
            items: lv.items,
            ..Default::default()
        };
        // urfave checks `--help` (and at the root `--version`) before running a subcommand.
        let stop = if level.has("help") {
            Some("help")
        } else if is_root && level.has("version") {
            Some("version")
        } else {
            None
        };
        parsed.items.extend(level.items);
        if let Some(verb) = stop {
            return Ok(Walk {
                verb: verb.to_string(),
                parsed,
                pos: Vec::new(),
            });
        }
        let first = lv.pos.first().map(String::as_str);
        let sub = first.and_then(|f| find_sub(node, is_root, f));
        match sub {
            Some(Sub::Cmd(c)) => {
                chain.push(c);
                rest = lv.pos[1..].to_vec();
            }
            // At a leaf the command itself is judged: the stricter reading if `help` were not
            // a command there.
            Some(Sub::Help) if node.args != Args::Leaf => {
                return Ok(Walk {
                    verb: "help".into(),
                    parsed,
                    pos: Vec::new(),
                });
            }
            Some(Sub::Completion) => {
                return Ok(Walk {
                    verb: "completion".into(),
                    parsed,
                    pos: Vec::new(),
                });
            }
            _ => {
                let verb = match (node.args, first) {
                    (Args::Leaf | Args::Name, _) | (_, None) if !is_root => path,
                    (_, None) => "help".to_string(),
                    (Args::Index, Some(f)) if index_like(f) => path,
                    // A word where the command takes no argument (or only an index): a
                    // subcommand this tea does not know, reported as typed.
                    (_, Some(f)) if path.is_empty() => f.to_string(),
                    (_, Some(f)) => format!("{path} {f}"),
                };
                return Ok(Walk { verb, parsed, pos: lv.pos });
            }
        }
    }
}

/// Facts the policy matches on, from the options of every level and the final positionals.
fn marks(w: &Walk) -> Vec<&'static str> {
    let p = &w.parsed;
    let mut m = Vec::new();
    // `--login` selects another stored identity, wherever it was given (the flag object is
    // shared by every level).
    if !p.all("login").is_empty() {
        m.push("login-switch");
    }
    // Files tea reads and sends: release notes and assets, label files, variable/secret values.
    let asset_args = w.verb == "releases assets create" && w.pos.len() > 1;
    if ["note-file", "asset", "file"].iter().any(|id| !p.all(id).is_empty()) || asset_args {
        m.push("file-read");
    }
    // Files tea writes: `labels list --save`, `man --out`.
    if p.has("save") || !p.all("out").is_empty() {
        m.push("file-write");
    }
    m
}

/// Parse tea's argv (without the program name).
pub fn parse(args: &[String]) -> Invocation {
    let inv = Invocation::new(Tool::Tea, args);
    if args.last().is_some_and(|a| a == COMPLETION_FLAG) {
        return inv.with_problem(format!("{COMPLETION_FLAG} (shell completion mode) is not supported"));
    }
    match walk(args) {
        Ok(w) => {
            let mut action = Action::new(w.verb.clone());
            for m in marks(&w) {
                action.add(m);
            }
            if w.verb == "pulls create" {
                let p = &w.parsed;
                action.scope = Some(ScopeTarget::PullRequest {
                    repo: p.last("repo").and_then(crate::grammar::gh::owner_repo),
                    base: p.last("base").filter(|b| !b.is_empty()).map(str::to_string),
                    head: p.last("head").filter(|h| !h.is_empty()).map(str::to_string),
                });
            }
            // `man --out FILE` writes the page there (the local-write model; `labels ls --save`
            // writes a file tea names itself, judged by its rule).
            let mut inv = inv;
            for f in w.parsed.all("out") {
                let v = f.value.as_deref().unwrap_or_default();
                inv.files.push(LocalFile::write(v, f.written.split('=').next().unwrap_or_default()));
            }
            inv.with_action(action)
        }
        Err(problem) => inv.with_problem(problem),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;
    use pretty_assertions::assert_eq;

    fn act(words: &[&str]) -> Action {
        let inv = parse(&argv(words));
        assert_eq!(inv.problem, None, "{words:?}");
        assert_eq!(inv.actions.len(), 1, "{words:?}");
        inv.actions[0].clone()
    }

    fn verb(words: &[&str]) -> String {
        act(words).verb
    }

    fn problem(words: &[&str]) -> Option<String> {
        parse(&argv(words)).problem
    }

    #[test]
    fn pulls_create_names_repo_base_and_head_for_the_scope_check() {
        assert_eq!(
            act(&["pulls", "--repo", "ops/app", "create", "--head", "fix", "-b", "main"]).scope,
            Some(ScopeTarget::PullRequest {
                repo: Some(("ops".into(), "app".into())),
                base: Some("main".into()),
                head: Some("fix".into()),
            })
        );
        assert_eq!(
            act(&["pr", "c", "-t", "x"]).scope,
            Some(ScopeTarget::PullRequest {
                repo: None,
                base: None,
                head: None
            })
        );
        assert_eq!(act(&["pulls", "list"]).scope, None);
    }

    #[test]
    fn aliases_resolve_to_the_canonical_verb() {
        for (words, want) in [
            (&["pr", "m", "5"][..], "pulls merge"),
            (&["pull", "lgtm", "5"], "pulls approve"),
            (&["pulls", "a", "5"], "pulls approve"),
            (&["i", "c", "--title", "x"], "issues create"),
            (&["issue", "ls"], "issues list"),
            (&["r", "rm", "v1"], "releases delete"),
            (&["release", "a", "c", "v1", "f"], "releases assets create"),
            (&["c", "5", "hello"], "comment"),
            (&["pr", "c", "--title", "x"], "pulls create"),
            (&["pr", "co", "5"], "pulls checkout"),
            (&["b", "P", "main"], "branches protect"),
            (&["branch", "U", "main"], "branches unprotect"),
            (&["repo", "rm", "--name", "x"], "repos delete"),
            (&["login", "git-credential", "get"], "logins helper get"),
            (&["login", "helper", "erase"], "logins helper store"),
            (&["hook", "c", "https://x"], "webhooks create"),
            (&["hooks", "edit", "3"], "webhooks update"),
            (&["a", "u", "ls"], "admin users list"),
            (&["ms", "i", "a", "v1", "5"], "milestones issues add"),
            (&["t", "a", "5", "1h"], "times add"),
            (&["n", "r"], "notifications read"),
            (&["notification", "list"], "notifications ls"),
            (&["org", "rm", "acme"], "organizations delete"),
            (&["action", "secret", "set", "K", "v"], "actions secrets create"),
            (&["actions", "vars", "create", "K", "v"], "actions variables set"),
            (&["o", "5"], "open"),
            (&["C", "o/r"], "clone"),
        ] {
            assert_eq!(verb(words), want, "{words:?}");
        }
    }

    #[test]
    fn issue_open_is_reopen_not_the_browser() {
        assert_eq!(verb(&["issue", "open", "5"]), "issues reopen");
        assert_eq!(verb(&["open", "5"]), "open");
    }

    #[test]
    fn a_parent_alone_or_with_an_index_is_its_read() {
        assert_eq!(verb(&["pulls"]), "pulls");
        assert_eq!(verb(&["pr", "5"]), "pulls");
        assert_eq!(verb(&["issues", "#189", "--comments"]), "issues");
        assert_eq!(verb(&["repos", "gitea/tea"]), "repos");
        assert_eq!(verb(&["ms", "v1.0"]), "milestones");
    }

    #[test]
    fn a_word_where_an_index_or_nothing_is_taken_is_an_unknown_subcommand() {
        assert_eq!(verb(&["pulls", "frobnicate", "5"]), "pulls frobnicate");
        assert_eq!(verb(&["releases", "purge"]), "releases purge");
        assert_eq!(verb(&["reactions", "add"]), "reactions");
        assert_eq!(verb(&["api", "/repos"]), "api");
    }

    #[test]
    fn parent_flags_may_precede_the_child() {
        let a = act(&["pulls", "--repo", "o/r", "--login", "admin", "merge", "5"]);
        assert_eq!(a, Action::new("pulls merge").mark("login-switch"));
        assert_eq!(verb(&["pulls", "--comments", "merge", "5"]), "pulls merge");
        assert_eq!(verb(&["pulls", "--state=all", "m", "5"]), "pulls merge");
    }

    #[test]
    fn ancestor_flags_are_inherited_unless_the_child_has_the_name() {
        assert_eq!(verb(&["pulls", "merge", "--comments", "5"]), "pulls merge");
        assert_eq!(verb(&["times", "add", "-o", "json", "5", "1h"]), "times add");
        // `issues create` has its own `-m` (milestone), so the parent's `--milestones` is not
        // inherited.
        assert_eq!(
            problem(&["issues", "create", "--milestones", "x"]),
            Some("unknown option --milestones".into())
        );
        assert_eq!(verb(&["issues", "create", "-m", "v1"]), "issues create");
    }

    #[test]
    fn every_value_form_is_read() {
        for words in [
            &["pr", "-r", "o/r", "m", "5"][..],
            &["pr", "-r=o/r", "m", "5"],
            &["pr", "-repo", "o/r", "m", "5"],
            &["pr", "--repo=o/r", "m", "5"],
            &["pr", "--r", "o/r", "m", "5"],
            &["pr", "-lm", "3", "m", "5"],
        ] {
            assert_eq!(verb(words), "pulls merge", "{words:?}");
        }
        for words in [
            &["pr", "-l", "admin"][..],
            &["pr", "-l=admin"],
            &["pr", "-login", "admin"],
            &["pr", "--login=admin"],
        ] {
            assert_eq!(act(words), Action::new("pulls").mark("login-switch"), "{words:?}");
        }
    }

    #[test]
    fn a_value_is_taken_even_when_it_looks_like_a_command() {
        // `--repo merge` is the repo "merge"; `5` is the index: a view.
        assert_eq!(verb(&["pulls", "--repo", "merge", "5"]), "pulls");
    }

    #[test]
    fn short_clusters_are_not_options() {
        assert_eq!(problem(&["pr", "-lr", "x"]), Some("unknown option -lr".into()));
    }

    #[test]
    fn double_dash_hands_the_first_positional_to_the_subcommand() {
        assert_eq!(verb(&["pulls", "--", "merge", "5"]), "pulls merge");
        assert_eq!(verb(&["--", "pulls", "merge", "5"]), "pulls merge");
    }

    #[test]
    fn a_dash_and_a_digit_stops_flag_parsing() {
        // `-1` ends flags: `--login` is a positional, and the first positional is no command.
        assert_eq!(act(&["pulls", "-1", "--login", "admin"]), Action::new("pulls"));
        assert_eq!(verb(&["issues", "-1", "create", "--title", "x"]), "issues");
        assert_eq!(act(&["pulls", "merge", "-1", "--login", "admin"]), Action::new("pulls merge"));
    }

    #[test]
    fn a_later_command_name_ends_flags_but_does_not_run() {
        // urfave stops parsing at `merge`, but the first positional `5` picks no command.
        assert_eq!(act(&["pulls", "5", "merge", "--login", "admin"]), Action::new("pulls"));
    }

    #[test]
    fn a_lone_dash_drops_the_rest() {
        assert_eq!(act(&["issues", "create", "-", "--login", "admin"]), Action::new("issues create"));
    }

    #[test]
    fn tokens_are_trimmed_but_commands_match_exactly() {
        assert_eq!(act(&["pulls", " --login", "admin", "5"]), Action::new("pulls").mark("login-switch"));
        // " merge" ends the level but picks no command: `pulls` reads " merge" as an index.
        assert_eq!(verb(&["pulls", " merge", "5"]), "pulls  merge");
        assert_eq!(verb(&["repos", " rm", "--name", "x"]), "repos");
    }

    #[test]
    fn help_and_version_run_nothing() {
        assert_eq!(verb(&["pulls", "--help", "merge", "5"]), "help");
        assert_eq!(verb(&["pulls", "merge", "5", "-h"]), "help");
        assert_eq!(verb(&["--version", "pulls", "merge", "5"]), "version");
        assert_eq!(verb(&["pulls", "help", "merge"]), "help");
        assert_eq!(verb(&[]), "help");
        assert_eq!(verb(&["completion", "bash"]), "completion");
    }

    #[test]
    fn help_false_runs_the_command() {
        assert_eq!(verb(&["pulls", "merge", "--help=false", "5"]), "pulls merge");
    }

    #[test]
    fn help_as_a_leaf_argument_is_judged_as_the_leaf() {
        assert_eq!(verb(&["issues", "create", "help"]), "issues create");
    }

    #[test]
    fn the_version_flag_is_the_root_s_only() {
        assert_eq!(problem(&["pulls", "-v"]), Some("unknown option -v".into()));
        assert_eq!(verb(&["issues", "create", "-v", "abc", "--title", "x"]), "issues create");
    }

    #[test]
    fn unknown_options_and_missing_values_are_problems() {
        assert_eq!(problem(&["pulls", "--bogus", "merge"]), Some("unknown option --bogus".into()));
        assert_eq!(problem(&["pulls", "merge", "--style"]), Some("option --style needs a value".into()));
        assert_eq!(
            problem(&["pulls", "merge", "5", "--generate-shell-completion"]),
            Some("--generate-shell-completion (shell completion mode) is not supported".into())
        );
    }

    #[test]
    fn files_read_and_written_are_marked() {
        assert_eq!(
            act(&["releases", "create", "--note-file", "n.md", "v1"]),
            Action::new("releases create").mark("file-read")
        );
        assert_eq!(
            act(&["r", "c", "-a", "/etc/passwd", "v1"]),
            Action::new("releases create").mark("file-read")
        );
        assert_eq!(
            act(&["releases", "assets", "create", "v1", "/etc/shadow"]),
            Action::new("releases assets create").mark("file-read")
        );
        assert_eq!(
            act(&["labels", "create", "--file", "l.txt"]),
            Action::new("labels create").mark("file-read")
        );
        assert_eq!(act(&["labels", "ls", "--save"]), Action::new("labels list").mark("file-write"));
        assert_eq!(act(&["labels", "ls", "--save=false"]), Action::new("labels list"));
        assert_eq!(act(&["man", "-o", "/tmp/x"]), Action::new("man").mark("file-write"));
    }

    #[test]
    fn repos_name_has_an_empty_alias() {
        assert_eq!(verb(&["repos", "create", "--=x"]), "repos create");
    }

    #[test]
    fn the_flag_tables_have_no_duplicate_names_per_command() {
        fn check(chain: &mut Vec<&'static Cmd>) {
            let node = *chain.last().unwrap();
            let own: Vec<String> = std::iter::once(HELP)
                .chain(node.own_flags())
                .flat_map(|o| names(&o).collect::<Vec<_>>())
                .collect();
            let mut seen = BTreeSet::new();
            // The webhooks parent really repeats repo/login/output (its own and AllDefaultFlags).
            if node.name != "webhooks" {
                for n in &own {
                    assert!(seen.insert(n.clone()), "{} repeats {n}", node.name);
                }
            }
            for s in node.subs {
                chain.push(s);
                check(chain);
                chain.pop();
            }
        }
        check(&mut vec![&ROOT]);
    }

    /// Every command path in the tree, as canonical words.
    fn paths() -> Vec<Vec<&'static str>> {
        fn go(node: &'static Cmd, prefix: &mut Vec<&'static str>, out: &mut Vec<Vec<&'static str>>) {
            for s in node.subs {
                prefix.push(s.name);
                out.push(prefix.clone());
                go(s, prefix, out);
                prefix.pop();
            }
        }
        let mut out = Vec::new();
        go(&ROOT, &mut Vec::new(), &mut out);
        out
    }

    fn decide_at(words: &[&str], tier: u8) -> crate::decision::Decision {
        let policy = crate::policy::Policy::embedded_with_examples(Tool::Tea).unwrap();
        let req = crate::decision::Request {
            ceiling: 3,
            env_tier: Some(tier.to_string()),
            ..Default::default()
        };
        crate::decision::decide(&parse(&argv(words)), &policy, &req)
    }

    #[test]
    fn every_command_in_the_tree_has_a_rule() {
        for p in paths() {
            let d = decide_at(&p, 3);
            assert_ne!(d.rule, "tea.unclassified", "{p:?}");
            assert_ne!(d.rule, "tea.grammar", "{p:?}");
        }
    }

    #[test]
    fn every_command_refuses_login() {
        for mut p in paths() {
            p.extend(["--login", "admin"]);
            let d = decide_at(&p, 3);
            assert_eq!(d.verdict, crate::decision::Verdict::Refuse, "{p:?}");
        }
    }
}
