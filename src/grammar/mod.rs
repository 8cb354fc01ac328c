//! argv -> [`Invocation`], one file per tool. Grammars are tables (see [`opts`]), not clap.
//!
//! A grammar only describes what the call *is*: its canonical verb(s), facts about it the policy
//! can match on (marks), and values the decision must compare with the install config (claims).
//! It never decides and never does I/O. A call the grammar cannot understand gets a `problem`,
//! and `decide()` refuses it.

pub(crate) mod cobra;
pub(crate) mod opts;

pub(crate) mod ansible;
pub(crate) mod compose;
pub(crate) mod curl;
pub(crate) mod docker;
pub(crate) mod gh;
pub mod git;
pub(crate) mod graphql;
pub(crate) mod helm;
pub(crate) mod http;
pub(crate) mod kubectl;
pub(crate) mod mysql;
pub(crate) mod psql;
pub(crate) mod remote;
pub(crate) mod shell;
pub mod sql;
pub(crate) mod ssh;
pub(crate) mod sudo;
pub(crate) mod systemd;
pub(crate) mod tea;
pub(crate) mod vocab;

use std::collections::{BTreeMap, BTreeSet};

use crate::tool::Tool;

/// One thing the call does. Most calls are one action; curl makes one per transfer (`--next`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Action {
    /// Canonical verb path, aliases resolved: `pr create`, `compose up`, `push`, `GET`.
    pub verb: String,
    /// Facts about this action that policy rules match with `when:` (`force`, `privileged`,
    /// `method=POST`, `default-branch`). Plain strings so the policy stays data.
    pub marks: BTreeSet<String>,
    /// What a path-scope check of this action examines, when the grammar can name it. Whether
    /// the check applies is the policy's call (a rule's `scope:`); a rule that asks for a scope
    /// check of an action without a target refuses it.
    pub scope: Option<ScopeTarget>,
    /// The verb of the class this action belongs to, used only when no rule names `verb`
    /// itself: a SQL function call `function pg_catalog.random` falls back to
    /// `function volatile`, so the policy can name single functions and whole classes.
    pub fallback: Option<String>,
    /// The HTTP request this action sends, when it is one (curl, `gh api`): what the policy's
    /// endpoint rules match on, whatever the host.
    pub http: Option<Http>,
    /// What a start, stop, restart or redeploy acts on, as the call names it: the services a
    /// cooldown budget counts (a rule's `cooldown:`). Empty for every other action.
    pub targets: Vec<Target>,
    /// For `compose up` (which creates containers from the compose files): the options that
    /// choose the files, so the gate can read what they ask for (`crate::compose::file_marks`).
    pub compose: Option<ComposeFiles>,
    /// A question whose answer (marks) the decision needs before it can allow the action.
    pub probe: Option<Probe>,
    /// What the configuration the real tool reads decides where argv leaves it open
    /// (`fetch.prune`, `rebase.updateRefs`, `push.followTags`): the gate reads it with the
    /// real git (`crate::facts`) and the action gets the marks of each effect that holds.
    pub config: Vec<ConfigEffect>,
}

/// Marks an action gets when the configuration says so (every condition holds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEffect {
    pub when: Vec<ConfigCond>,
    pub marks: Vec<String>,
}

/// One condition on the configuration: the keys in git's order of precedence (section and
/// name lower-case, a subsection as written; `*` as the subsection stands for any), the first
/// one set deciding, and what its value must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigCond {
    pub keys: Vec<String>,
    pub test: ConfigTest,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigTest {
    /// git's boolean true.
    True,
    /// Anything but git's boolean false (`pull.rebase=merges` rebases).
    NotFalse,
    /// One of these values, compared without case.
    OneOf(Vec<String>),
    /// Some value of the (multi-valued) key is a fetch refspec that stores outside the
    /// remote's own `refs/remotes/<remote>/` (`remote.<name>.fetch`).
    LocalRefspec,
}

impl ConfigEffect {
    /// One condition: the first key of `keys` that is set passes `test`.
    pub fn one(keys: &[String], test: ConfigTest, marks: &[&str]) -> ConfigEffect {
        ConfigEffect {
            when: vec![ConfigCond { keys: keys.to_vec(), test }],
            marks: marks.iter().map(|m| m.to_string()).collect(),
        }
    }
}

/// One thing a lifecycle action acts on, as written in the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A container by name or id (`docker restart api`).
    Container(String),
    /// A compose service and the project it belongs to.
    Service {
        project: Project,
        name: String,
        /// The options of the call that choose the compose files, as written (also with `-p`,
        /// where the project is named but the files still say how the service is named).
        files: ComposeFiles,
        /// The `container_name:` the compose files give the service, worked out by the gate
        /// (`crate::compose::name_containers`); the grammar leaves it `None`.
        container: Option<String>,
    },
    /// A systemd unit on a remote host (`nginx`, `nginx.service`).
    Unit(String),
    /// A named thing of a kind that is its own budget key, `[host:]kind/name`: a Kubernetes
    /// workload (`deployment/api`), a helm release (`release/api`), a playbook on a host
    /// (`web01:playbook/site.yml`).
    Named {
        kind: &'static str,
        name: String,
        host: Option<String>,
    },
    /// Everything of a kind the call does not list (a compose call naming no service): what,
    /// in words.
    All(String),
}

/// The compose project of a [`Target::Service`]. Compose names it from `-p`, else from
/// `COMPOSE_PROJECT_NAME` in `.env`, else from `name:` in the compose file, else from the project
/// directory; only `-p` is in argv, so the rest is worked out by the gate ([`crate::compose`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Project {
    /// `-p shop` (the last one given), or what the gate worked out.
    Named(String),
    /// Not named in argv: compose works it out from the files these options point at.
    Implied(ComposeFiles),
    /// It could not be worked out: why.
    Unknown(String),
}

/// The options of a compose call that choose its files, as written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ComposeFiles {
    /// `--project-directory` (or its old name `--workdir`), the last one given.
    pub dir: Option<String>,
    /// `-f`/`--file`, in order.
    pub files: Vec<String>,
    /// `--env-file`, in order.
    pub env_files: Vec<String>,
}

/// One HTTP request as the endpoint rules see it (`policy/endpoints.yaml`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Http {
    /// The method as sent, upper-cased.
    pub method: String,
    /// The URL path, normalised: percent-decoded, without query or fragment, empty segments
    /// dropped, always starting with `/` (`/api/v1/repos/o/r/pulls`).
    pub path: String,
    /// What the gate can see of the request body.
    pub body: Body,
    /// A GraphQL mutation: the name of one top-level field of it (`mergePullRequest`).
    pub mutation: Option<String>,
}

/// A request body as far as the endpoint rules can read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// No body is sent.
    None,
    /// The top-level fields of a JSON object or of a form, values as text (JSON strings
    /// unquoted, anything else as JSON).
    Fields(BTreeMap<String, String>),
    /// A body is sent but the gate cannot read it (stdin, an upload, a file it did not read,
    /// text that is neither a JSON object nor a form). Rules that look at the body match it.
    Opaque,
}

/// A local file a call reads or writes: the one shape every grammar declares its file access in
/// (DESIGN §3.2, the local-write model). `path` is the file as the tool will open it, relative
/// to the working directory unless absolute: a grammar joins what the tool joins (curl's
/// `--output-dir` and `-o`, `-O` from the URL, gh's `-D` and an asset name) and declares a
/// directory with [`Access::WriteNamed`] or [`Access::WriteTree`] when the names inside are the
/// server's. The gate resolves every path against the working directory before `decide()`
/// (and reads it when `content` is set); `decide()` judges each one (`crate::files::check`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalFile {
    pub path: String,
    pub access: Access,
    /// The option or verb that names it, as written (`-o`, `--data-binary`, `release download`).
    pub flag: String,
    /// The decision depends on what the file holds (a request body, headers, a GraphQL
    /// document): the gate reads it, bounded, and parses the call again with it.
    pub content: bool,
    /// For a file read for its contents: the index in argv of the word that ends with `path`,
    /// so the tool can be handed exactly the bytes the gate judged (`crate::script_input`). A
    /// content file the gate read without one is never handed to the tool to read again: the
    /// call fails instead.
    pub at: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// The tool reads the file.
    Read,
    /// The tool writes (creates, replaces or appends to) the file, making the missing
    /// directories on the way where it does (`curl --create-dirs`).
    Write,
    /// The tool writes files into the directory `path` under names the server chooses (`curl
    /// -J`, `gh release download` of a pattern): one level, names the gate cannot know.
    WriteNamed,
    /// The tool unpacks a tree the server chooses (an archive) into the directory `path`: any
    /// names at any depth (`gh run download`).
    WriteTree,
}

impl Access {
    /// Whether the tool writes (any kind of write).
    pub fn writes(self) -> bool {
        self != Access::Read
    }
}

impl LocalFile {
    /// A file the tool reads; `content`: the gate reads it too and parses the call with it.
    pub fn read(path: impl Into<String>, flag: impl Into<String>, content: bool) -> LocalFile {
        LocalFile {
            path: path.into(),
            access: Access::Read,
            flag: flag.into(),
            content,
            at: None,
        }
    }

    /// The argv word that ends with the path (see [`LocalFile::at`]).
    pub fn at(mut self, word: usize) -> LocalFile {
        self.at = Some(word);
        self
    }

    /// A file the tool writes, at a path the call names.
    pub fn write(path: impl Into<String>, flag: impl Into<String>) -> LocalFile {
        LocalFile::writes(path, flag, Access::Write)
    }

    /// A write of the given kind ([`Access::WriteNamed`], [`Access::WriteTree`]: `path` is the
    /// directory written into).
    pub fn writes(path: impl Into<String>, flag: impl Into<String>, access: Access) -> LocalFile {
        LocalFile {
            path: path.into(),
            access,
            flag: flag.into(),
            content: false,
            at: None,
        }
    }
}

/// What a client's grammar makes of its call: actions, claims, and the local files it touches.
pub type Understood = (Vec<Action>, Vec<Claim>, Vec<LocalFile>);

/// File contents the gate read for a call (keyed by the path as written), or why it could not.
pub type Contents = BTreeMap<String, Result<String, String>>;

/// What a path-scope check examines for one action, as the grammar found it (DESIGN §7). The
/// gate turns it into a list of changed files (with the real git) before `decide()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeTarget {
    /// A pull request from `head` (None: the current branch) onto `base` (None: the remote's
    /// default branch). `repo` is `(owner, name)` when the call names the repository (an API
    /// call, `-R`), so the gate can check that the working directory is a clone of it.
    PullRequest {
        repo: Option<(String, String)>,
        base: Option<String>,
        head: Option<String>,
    },
    /// `git commit`: the staged files; with `all`, every tracked change; `paths` when the call
    /// names them (only those, or with `include` those and the index). `git` holds the global
    /// options the gate's own git repeats ([`GitAt`]).
    Commit {
        all: bool,
        paths: Vec<String>,
        include: bool,
        git: GitAt,
    },
    /// `git push`: the files changed by the commits the refspecs would send to `remote`.
    Push {
        remote: Option<String>,
        refspecs: Vec<String>,
        git: GitAt,
    },
    /// A git command that makes commits out of other commits (`cherry-pick`, `revert`, `merge`,
    /// `rebase`): the files of the commits it replays or brings in.
    Replay { how: Replay, git: GitAt },
    /// Going on with a sequence that stopped (`--continue`, `--skip` of `am`, `cherry-pick`,
    /// `revert`, `rebase`, `merge`): what the index holds now, and every commit or patch the
    /// sequence still has to make.
    Sequence { git: GitAt },
    /// `git am`: the files the patches touch, as the gate read them (the mailboxes reach git
    /// as sealed copies of what was read), or why they could not be worked out.
    Patches { files: Result<Vec<String>, String> },
    /// A file written through a hosting API (`…/repos/{owner}/{repo}/contents/{path}`).
    /// A file written through a hosting API (`…/repos/{owner}/{repo}/contents/{path}`).
    Contents { owner: String, repo: String, path: String },
}

/// The global options of a git call that choose its repository, work tree and pathspec rules
/// (`-C <dir>`, `--git-dir=.git`, `--work-tree=.`, `--literal-pathspecs`, `--icase-pathspecs`,
/// …), as written and in order: the gate's own git repeats them, so it sees the same files
/// and matches paths the same way.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GitAt {
    pub globals: Vec<String>,
}

/// What a commit-replaying git command takes its commits from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replay {
    /// `cherry-pick` or `revert` of these revisions (`--no-walk`: a single commit is itself, a
    /// range walks).
    Picks(Vec<String>),
    /// `merge` of these commits (none: the current branch's upstream).
    Merge(Vec<String>),
    /// `rebase [--onto <o>] [<upstream> [<branch>]]`: the commits of `branch` (the current one
    /// when None) not in `upstream` (its upstream when None); `root`: every commit of it.
    Rebase {
        upstream: Option<String>,
        branch: Option<String>,
        root: bool,
    },
}

/// A question about the repository whose answer adds marks to an action (or refuses it): the
/// gate asks the real git before it decides again (`facts::probe`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// `git checkout <arg>` without `--`: a branch or commit to switch to, or paths whose
    /// changes it throws away (`discard`), as git decides (`parse_branchname_arg`).
    CheckoutArg { arg: String, git: GitAt },
    /// Where a push lands: the remote's default branch (`default-branch`), a tag named without
    /// `refs/tags/` (`tags`), or a remote whose default branch is unknown (refused).
    PushTarget {
        remote: Option<String>,
        refspecs: Vec<String>,
        git: GitAt,
    },
}

impl Action {
    pub fn new(verb: impl Into<String>) -> Action {
        Action {
            verb: verb.into(),
            marks: BTreeSet::new(),
            scope: None,
            fallback: None,
            http: None,
            targets: Vec::new(),
            compose: None,
            probe: None,
            config: Vec::new(),
        }
    }

    /// `verb [mark,mark]`: how the grammar tests compare an action and its marks.
    #[cfg(test)]
    pub fn shown_with_marks(self) -> String {
        if self.marks.is_empty() {
            self.verb
        } else {
            format!("{} [{}]", self.verb, self.marks.into_iter().collect::<Vec<_>>().join(","))
        }
    }

    pub fn fallback(mut self, verb: impl Into<String>) -> Action {
        self.fallback = Some(verb.into());
        self
    }

    pub fn mark(mut self, m: impl Into<String>) -> Action {
        self.marks.insert(m.into());
        self
    }

    pub fn add(&mut self, m: impl Into<String>) {
        self.marks.insert(m.into());
    }

    pub fn has(&self, m: &str) -> bool {
        self.marks.contains(m)
    }
}

/// A value in the call that `decide()` must compare with the install config. The grammar
/// cannot judge these alone because the right answer is the operator's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The call names an endpoint or config explicitly (`docker -H x`): it must equal the value
    /// the operator pinned for `var` in `tiershim.yaml` `env:`, else the call is refused.
    Pinned { var: &'static str, value: String, flag: String },
    /// `git -c credential.helper=!<path> auth git-credential …` as gh generates it: allowed
    /// only when `<path>` is the real gh of this install.
    GhCredentialHelper { path: String },
    /// A value that must equal the operator's pin of `var` when there is one (`psql -U x`
    /// against a pinned `PGUSER`); with no pin it stands. When one of `exclusive` is pinned the
    /// value may not be given at all (a pinned `PGSERVICE` names the role itself).
    PinnedIfSet {
        var: &'static str,
        value: String,
        flag: String,
        exclusive: &'static [&'static str],
    },
    /// The call names where it connects (`psql -h`, `host=` in a connection string, `mysql
    /// -P`, `gh attestation download --hostname`): the value of `var` it overrides. When the
    /// operator pinned a credential of the tool (its policy's `env.credentials`), it may only go
    /// to the pinned `var`.
    Destination { var: &'static str, value: String, flag: String },
    /// An ssh call reaches `host` (`via`: the destination, a jump host, a `-W` target). When
    /// `tiershim.yaml` lists `hosts:`, it must be one of them.
    SshHost { host: String, via: String },
    /// The call reaches hosts it does not name one by one (an ansible run without `--limit`, or
    /// with a pattern): where `tiershim.yaml` lists `hosts:`, refused.
    AllHosts { via: String },
    /// A file the real tool takes as instructions (a playbook and what is beside it, an
    /// inventory, a manifest, a chart): it must be one the agent could not have written (DESIGN
    /// §3.2). `tree`: the directory (a file's own directory) and everything below it; `optional`:
    /// the tool reads it only when it exists (a chart name that is no path is a repository's).
    /// The gate finds out who could write it (`crate::operator_files`) before `decide()`.
    Operator {
        path: String,
        flag: String,
        tree: bool,
        optional: bool,
    },
    /// A call only the real `tool` of this install makes, as a nested call (git asking for
    /// `git-receive-pack` over ssh, ssh running its own `-J` hop): allowed only when the parent
    /// process is that binary, whose own call the gate already judged.
    Parent { tool: Tool, what: String },
}

/// What a grammar makes of argv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub tool: Tool,
    /// The arguments after the program name, exactly as received.
    pub args: Vec<String>,
    /// At least one action unless `problem` is set.
    pub actions: Vec<Action>,
    pub claims: Vec<Claim>,
    /// Local files the call reads or writes (checked against the working directory).
    pub files: Vec<LocalFile>,
    /// Set when the grammar cannot understand the call (unknown option, missing value, …).
    /// A call with a problem is always refused.
    pub problem: Option<String>,
    /// What an ssh call runs on the remote host, cut into parts that are judged like local
    /// calls (None for every other tool).
    pub remote: Option<Box<remote::Remote>>,
}

impl Invocation {
    pub fn new(tool: Tool, args: &[String]) -> Invocation {
        Invocation {
            tool,
            args: args.to_vec(),
            actions: Vec::new(),
            claims: Vec::new(),
            files: Vec::new(),
            problem: None,
            remote: None,
        }
    }

    pub fn with_action(mut self, a: Action) -> Invocation {
        self.actions.push(a);
        self
    }

    pub fn with_problem(mut self, p: impl Into<String>) -> Invocation {
        self.problem = Some(p.into());
        self
    }

    /// This call with what its grammar made of it: the actions, claims and local files, or the
    /// problem that kept it from being understood.
    pub fn understood(mut self, r: Result<Understood, String>) -> Invocation {
        match r {
            Ok((actions, claims, files)) => {
                self.actions = actions;
                self.claims = claims;
                self.files = files;
                self
            }
            Err(problem) => self.with_problem(problem),
        }
    }

    /// The verb shown in logs: the first action's, or `?` when the call was not understood.
    pub fn verb(&self) -> String {
        match self.actions.first() {
            Some(a) if self.problem.is_none() => a.verb.clone(),
            _ => "?".to_string(),
        }
    }
}

/// Where a call's scripts come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources {
    /// The tool reads a script from stdin (no `-c`, or `-f -`).
    pub stdin: bool,
    /// Script files, in argv order: the path as written and the argv index of the word that
    /// ends with it (see [`opts::Found::at`]).
    pub files: Vec<(String, usize)>,
}

/// What the gate found at each source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inputs {
    pub stdin: Input,
    /// One per [`Sources::files`] entry, same order.
    pub files: Vec<Input>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Input {
    /// Not read (policy examples, `explain` without the file).
    #[default]
    Unread,
    /// stdin is a terminal: an interactive session, which cannot be judged in advance.
    Terminal,
    Text(String),
    /// Could not be read, or is not text the gate can judge; the reason.
    Failed(String),
}

/// Convenience for tests: turn `&["a", "b"]` into owned argv.
pub fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|s| s.to_string()).collect()
}
