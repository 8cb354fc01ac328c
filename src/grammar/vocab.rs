//! The words a policy may use for each tool: the verbs its grammar makes besides the tool's own
//! commands, and every mark it sets, each with a one-line meaning. A policy's rules are checked
//! against them when a policy file is read (`crate::policy::check_words`): a `when:` naming a mark the grammar
//! never sets, or a verb it never makes, fails to load with a did-you-mean, instead of being a
//! rule that silently never matches. `tiershim policy doc` prints them.
//!
//! A verb is known when this table lists it, when the shipped policy names it, or when the
//! grammar makes it from argv spelled as the verb (`submodule update` from `git submodule
//! update`): the tool's own commands need no entry. A grammar keeps a word it does not know as
//! the verb (a docker CLI plugin is `buildx`), so such a word is taken for a typo when it is as
//! long as a verb the shipped policy names and one or two letters from it (`restrat`). A name
//! ending in `*` is a family (`function *`, `method=*`), as is one starting with `* `
//! (`* dry-run`). A mark set with a detail (`compose-writable: compose.yaml: privileged`) is
//! matched by its name before `: `.
//!
//! Every mark the grammars set over the policies' examples and the case corpus is listed here
//! (a test checks), and every verb and mark the shipped policies name is known.
//!
//! Must not: decide, or read anything.

/// One word of a tool's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Word {
    /// As a policy writes it; ending in `*`, a family of words with that prefix; starting with
    /// `* `, a family of words with that ending.
    pub name: &'static str,
    /// What it means, in one line.
    pub meaning: &'static str,
}

impl Word {
    const fn new(name: &'static str, meaning: &'static str) -> Word {
        Word { name, meaning }
    }

    /// Whether `word` is this word, or one of its family.
    pub fn covers(&self, word: &str) -> bool {
        if word.contains('*') {
            return false;
        }
        if let Some(prefix) = self.name.strip_suffix('*') {
            word.len() > prefix.len() && word.starts_with(prefix)
        } else if let Some(suffix) = self.name.strip_prefix("* ") {
            word.len() > suffix.len() + 1 && word.ends_with(&format!(" {suffix}"))
        } else {
            self.name == word
        }
    }
}

/// A tool's vocabulary.
#[derive(Debug)]
pub struct Vocabulary {
    /// The verbs the grammar makes that argv does not spell (HTTP methods, SQL statements,
    /// remote programs), and families of them.
    pub verbs: &'static [Word],
    /// Every mark the grammar sets.
    pub marks: &'static [Word],
}

impl Vocabulary {
    /// Whether a verb of this table is `verb` or its family (the tool's own commands are known
    /// by parsing them: `crate::policy::check_words`).
    pub fn lists_verb(&self, verb: &str) -> bool {
        self.verbs.iter().any(|w| w.covers(verb))
    }

    /// Whether the grammar sets `mark`.
    pub fn knows_mark(&self, mark: &str) -> bool {
        self.marks.iter().any(|w| w.covers(mark))
    }
}

/// gh: the verbs the grammar makes besides the tool's own commands, and its marks.
pub static GH: Vocabulary = Vocabulary {
    verbs: &[
        Word::new("api", "gh api: a REST or GraphQL request, marked with its method (`method=POST`)"),
        Word::new(
            "jq env",
            "a --jq or --template expression that reads gh's environment ($ENV, env), where the pinned tokens are",
        ),
    ],
    marks: &[
        Word::new("approve", "approving a pull request"),
        Word::new("base", "a pull request's base branch set or changed (--base)"),
        Word::new("body", "a GitHub API GET or HEAD that sends a body"),
        Word::new("comment", "a pull request review that only comments"),
        Word::new(
            "contents-write",
            "a request that writes repository contents (PUT …/contents/…): scope-checked",
        ),
        Word::new("delete-last", "deleting a comment"),
        Word::new("file-read", "a body read from a local file"),
        Word::new(
            "force",
            "forcing what the command would otherwise refuse (repo sync --force hard-resets a branch)",
        ),
        Word::new(
            "git-flags",
            "git flags after -- that run a program or write configuration (--upload-pack, --template, -c, --separate-git-dir, a remote-helper URL)",
        ),
        Word::new("graphql-mutation", "a GraphQL mutation (one action per mutation field)"),
        Word::new("graphql-opaque", "a GraphQL document the gate cannot read or parse"),
        Word::new("graphql-subscription", "a GraphQL subscription"),
        Word::new("interactive", "an interactive review (its menu offers Approve)"),
        Word::new("method-other", "a GitHub API call with an unusual method"),
        Word::new(
            "method-override",
            "a header that makes the server take another method (X-HTTP-Method-Override, …)",
        ),
        Word::new("method=DELETE", "a GitHub API DELETE"),
        Word::new("method=GET", "a GitHub API GET"),
        Word::new("method=HEAD", "a GitHub API HEAD"),
        Word::new("method=PATCH", "a GitHub API PATCH"),
        Word::new("method=POST", "a GitHub API POST"),
        Word::new("method=PUT", "a GitHub API PUT"),
        Word::new("other-host", "a gh api call to another host (--hostname or a full URL)"),
        Word::new(
            "paginate-write",
            "a write with --paginate (gh repeats it at every next-page URL the server names)",
        ),
        Word::new(
            "placeholder",
            "a gh api call whose {owner}, {repo} or {branch} the gate could not fill from the local clone",
        ),
        Word::new("pr-create", "a request that opens a pull request (POST …/pulls): scope-checked"),
        Word::new("request-changes", "requesting changes on a pull request"),
        Word::new("scope-unknown", "a pull request or contents write whose body the gate cannot read"),
        Word::new("stdin", "a body or input read from standard input"),
        Word::new("token", "printing a token from gh's configuration"),
    ],
};

/// tea: the verbs the grammar makes besides the tool's own commands, and its marks.
pub static TEA: Vocabulary = Vocabulary {
    verbs: &[],
    marks: &[
        Word::new("file-read", "uploading a local file with tea"),
        Word::new("file-write", "writing a local file with tea"),
        Word::new("login-switch", "switching tea to another stored login (--login)"),
    ],
};

/// docker: the verbs the grammar makes besides the tool's own commands, and its marks.
pub static DOCKER: Vocabulary = Vocabulary {
    verbs: &[Word::new(
        "compose -f remote",
        "a compose project loaded from a remote file (a git URL, oci://)",
    )],
    marks: &[
        Word::new("all-services", "docker compose up of the whole project (no service named)"),
        Word::new("attach", "attaching to a container's streams (start -a/-i)"),
        Word::new("attached", "docker compose up in the foreground (without -d)"),
        Word::new(
            "bind-mount",
            "bind-mounting a host path into a container (a planted symlink reaches any host path, and a root container can leave setuid files in a writable bind)",
        ),
        Word::new("build", "docker compose up --build (builds images first)"),
        Word::new("cap-add", "adding Linux capabilities (--cap-add)"),
        Word::new("checkpoint", "starting a container from a checkpoint (start --checkpoint)"),
        Word::new(
            "compose-escalates",
            "compose up of files that ask for privileged containers, host or container namespaces, added capabilities, devices, security options, volumes_from, binds of protected host paths, volume driver_opts, or include/extends of other files",
        ),
        Word::new(
            "compose-remote",
            "compose up on a remote host, whose compose files the gate could not read",
        ),
        Word::new("compose-unread", "compose up of a compose file the gate could not read or parse"),
        Word::new("compose-writable", "compose up of files (or bind sources) the agent can change"),
        Word::new(
            "container-namespace",
            "a container joining another container's namespace (container:<name>)",
        ),
        Word::new("device", "giving a container host devices (--device, --device-cgroup-rule)"),
        Word::new("docker-socket", "giving a container the docker API socket (--use-api-socket)"),
        Word::new("down-project", "docker compose wait --down-project (tears the project down)"),
        Word::new("force-recreate", "docker compose up --force-recreate / --always-recreate-deps"),
        Word::new(
            "host-mount",
            "mounting the host's root, a system directory or the docker socket (or a relative path, which cannot be judged)",
        ),
        Word::new(
            "host-namespace",
            "a container sharing a host namespace (--pid/--ipc/--uts/--userns/--cgroupns/--network host)",
        ),
        Word::new("output-file", "docker compose config writing a file"),
        Word::new("privileged", "a privileged container or exec"),
        Word::new("pull", "docker compose up/create --pull (pulls images first)"),
        Word::new("push", "docker compose build --push (pushes the built images)"),
        Word::new("remove-orphans", "docker compose up --remove-orphans"),
        Word::new("renew-anon-volumes", "docker compose up -V (recreates anonymous volumes)"),
        Word::new("rmi", "docker compose down --rmi (removes the project's images)"),
        Word::new("scale", "docker compose up --scale (changes how many containers run)"),
        Word::new(
            "security-opt",
            "loosening a container's confinement (--security-opt other than no-new-privileges)",
        ),
        Word::new(
            "signal",
            "stop or restart with a chosen signal other than SIGTERM, or -t 0 (docker kill)",
        ),
        Word::new("ssh", "forwarding SSH credentials into a build (--ssh)"),
        Word::new(
            "volume-opt",
            "a volume with driver options (a local volume with o=bind can mount any host path)",
        ),
        Word::new("volumes", "removing volumes with the containers (rm -v, compose down -v)"),
        Word::new("volumes-from", "inheriting another container's mounts (--volumes-from)"),
    ],
};

/// psql: the verbs the grammar makes besides the tool's own commands, and its marks.
pub static PSQL: Vocabulary = Vocabulary {
    verbs: &[
        Word::new("help", "psql --help"),
        Word::new("version", "psql --version"),
        Word::new("list", "psql -l (lists databases)"),
        Word::new(
            "conninfo",
            "a connection string or URI, judged for what it sets (`service`, `options`, `replication`, `charset`)",
        ),
        Word::new("log-file", "psql -L (logs the session to a file)"),
        Word::new("output", "psql -o (writes query output to a file)"),
        Word::new("sql *", "an SQL statement, by its leading keywords (`sql select`, `sql copy to`)"),
        Word::new(
            "function *",
            "a call of a function, by its schema-qualified name (`function pg_catalog.random`); falls back to its class (`function immutable`, `stable`, `volatile`, `user`)",
        ),
        Word::new(
            "operator *",
            "an operator outside pg_catalog (`operator public.<<<`); falls back to `operator user`",
        ),
        Word::new("\\*", "a psql meta-command (`\\dt`, `\\copy`)"),
        Word::new("script", "a script psql reads (-f, stdin), marked with where from"),
        Word::new("backquote", "a backquoted shell command in a meta-command"),
        Word::new("interactive", "psql reading from a terminal"),
    ],
    marks: &[
        Word::new("analyze", "EXPLAIN ANALYZE (runs the statement)"),
        Word::new(
            "charset",
            "a connection string with a client_encoding other than UTF8 (the server would split the SQL differently from the gate)",
        ),
        Word::new("file", "a script psql reads from a file (-f)"),
        Word::new("into", "SELECT … INTO (creates a table)"),
        Word::new("meta-command", "a backquoted shell command in a meta-command argument (`…`)"),
        Word::new(
            "options",
            "a connection string with options= (server settings such as default_transaction_read_only)",
        ),
        Word::new("pipe", "psql output to a shell pipe"),
        Word::new("program", "COPY … PROGRAM (runs a shell command on the database server)"),
        Word::new("replication", "a replication connection"),
        Word::new("role", "creating or changing a database role"),
        Word::new("row-lock", "a query that locks rows (FOR UPDATE/SHARE)"),
        Word::new("server-file", "COPY to or from a file on the database server"),
        Word::new(
            "service",
            "a connection string naming a service (its settings are in a file the gate cannot see)",
        ),
        Word::new("stdin", "a script psql reads from standard input"),
        Word::new("unread", "a psql script the gate did not read"),
        Word::new("variable", "a backquote inside a variable's value (\\set x `…`)"),
        Word::new("writes", "a query with INSERT, UPDATE, DELETE or MERGE inside"),
    ],
};

/// mysql: the verbs the grammar makes besides the tool's own commands, and its marks.
pub static MYSQL: Vocabulary = Vocabulary {
    verbs: &[
        Word::new(
            "command *",
            "a mysql client command, by its long name, however written (`\\! ls` and `system ls` are `command system`)",
        ),
        Word::new(
            "option *",
            "a mysql option judged on its own (`option pager`, `option local-infile`)",
        ),
        Word::new("help", "mysql --help"),
        Word::new("version", "mysql --version"),
        Word::new(
            "init-command",
            "SQL run at connection start (--init-command; its statements are judged like -e)",
        ),
        Word::new("sql *", "an SQL statement, by its leading keywords (`sql select`, `sql show`)"),
        Word::new("function *", "a call of a function, by name (`function sleep`)"),
        Word::new("script", "a script mysql reads (stdin), marked with where from"),
        Word::new("interactive", "mysql reading from a terminal"),
    ],
    marks: &[
        Word::new("analyze", "EXPLAIN ANALYZE (runs the statement)"),
        Word::new(
            "charset",
            "a character set the gate cannot lex (SET NAMES, character_set_client, --default-character-set, charset, \\C)",
        ),
        Word::new("into", "SELECT … INTO (variables or files)"),
        Word::new("role", "creating or changing a database user or role"),
        Word::new("row-lock", "a query that locks rows (FOR UPDATE)"),
        Word::new("stdin", "a script the client reads from standard input"),
        Word::new("unread", "a mysql script the gate did not read"),
    ],
};

/// git: the verbs the grammar makes besides the tool's own commands, and its marks.
pub static GIT: Vocabulary = Vocabulary {
    verbs: &[
        Word::new("-c", "the global option -c (a configuration override), judged on its own"),
        Word::new(
            "--*",
            "a global option judged on its own (`--git-dir`, `--work-tree`, `--bare`, `--namespace`, `--shallow-file`, `--exec-path`, `--config-env`, `--output`)",
        ),
        Word::new(
            "* dry-run",
            "the command with --dry-run, -n or --check: it writes nothing (`push dry-run`)",
        ),
        Word::new(
            "* abort",
            "--abort of a stopped sequence (`am abort`, `merge abort`, `rebase abort`)",
        ),
        Word::new("cherry-pick", "git cherry-pick (replays commits: scope-checked)"),
        Word::new("revert", "git revert (replays commits: scope-checked)"),
        Word::new("branch list", "git branch listing"),
        Word::new("branch create", "git branch creating a branch"),
        Word::new("branch delete", "git branch -d/-D"),
        Word::new("branch copy", "git branch -c/-C"),
        Word::new("branch rename", "git branch -m/-M"),
        Word::new("branch edit-description", "git branch --edit-description"),
        Word::new("branch set-upstream", "git branch -u/--set-upstream-to/--unset-upstream"),
        Word::new("tag list", "git tag listing"),
        Word::new("tag create", "git tag creating a tag"),
        Word::new("tag delete", "git tag -d"),
        Word::new("tag verify", "git tag -v"),
        Word::new("symbolic-ref set", "git symbolic-ref NAME REF (points one ref at another)"),
        Word::new("symbolic-ref delete", "git symbolic-ref -d"),
    ],
    marks: &[
        Word::new(
            "all-branches",
            "pushing every branch (--all, --branches, `:` or a pattern refspec), the default branch included",
        ),
        Word::new("amend", "git commit --amend (rewrites the last commit)"),
        Word::new("config-write", "writing configuration into a repository (clone -c/--config)"),
        Word::new(
            "default-branch",
            "pushing to the default branch (main, master, trunk, develop, production, HEAD)",
        ),
        Word::new("delete", "deleting a branch or tag (push --delete or :ref, branch -d/-D, tag -d)"),
        Word::new(
            "discard",
            "discarding uncommitted changes (checkout/switch -f, checkout of paths, restore of the work tree, reset --merge, rm -f, mv -f)",
        ),
        Word::new(
            "exec-option",
            "a git option that runs a program (--upload-pack, --receive-pack, --exec, rebase -x, grep -O, a custom merge strategy)",
        ),
        Word::new(
            "force",
            "forcing a ref update or overwrite (push --force/+refspec/lease, branch -f, tag -f, worktree add --force, …)",
        ),
        Word::new(
            "force-create",
            "resetting an existing branch (checkout -B, switch -C, worktree add -B)",
        ),
        Word::new(
            "force-local",
            "rewriting or deleting local branches or tags by fetching (+refspec, --force or --prune onto a local ref, --tags --force, --prune-tags, refspecs from --stdin, the same from the configuration)",
        ),
        Word::new("hard", "git reset --hard (throws away uncommitted work)"),
        Word::new(
            "local-refs",
            "fetching into local branches or tags (a refspec outside refs/remotes/, --update-head-ok)",
        ),
        Word::new("local-remote", "pushing to a local path (runs that repository's hooks)"),
        Word::new("mirror", "git push --mirror, or clone --mirror"),
        Word::new(
            "non-branch-ref",
            "pushing to a ref outside refs/heads/ (refs/meta/config, refs/notes/…)",
        ),
        Word::new(
            "partial-clone",
            "fetching with a filter (writes remote.<name>.promisor and partialclonefilter)",
        ),
        Word::new(
            "patch-unread",
            "git apply or am of a patch the gate did not read (a terminal, a file it could not read): the files it writes are unknown",
        ),
        Word::new("prune", "git push --prune (deletes every remote branch missing locally)"),
        Word::new(
            "remote-helper",
            "a remote-helper URL (<transport>::<address> such as ext:: or fd::, or a URL scheme git ships no helper for)",
        ),
        Word::new(
            "remote-refs",
            "fetching into remote-tracking refs a refspec names, other than the remote's own branch (they are what the scope checks of pushes and pull requests compare against)",
        ),
        Word::new(
            "remote-tracking",
            "changing remote-tracking refs with git branch -r (they are what the scope checks compare against, and repository skills are read from origin/HEAD)",
        ),
        Word::new(
            "separate-git-dir",
            "git clone/init --separate-git-dir (puts a git directory anywhere and writes core.worktree)",
        ),
        Word::new(
            "shallow",
            "fetching that moves the shallow boundary (--depth, --deepen, --shallow-since, --shallow-exclude, --unshallow)",
        ),
        Word::new(
            "shared",
            "git init --shared (writes core.sharedRepository: who may write the repository)",
        ),
        Word::new(
            "special-refs",
            "fetching into a ref outside refs/heads/, refs/tags/ and refs/remotes/ (refs/replace/, refs/notes/, refs/stash, refs/bisect/)",
        ),
        Word::new("submodule-push", "pushing submodules along (--recurse-submodules=on-demand|only)"),
        Word::new(
            "tags",
            "pushing or fetching tags (--tags, --follow-tags or push.followTags, a tag refspec)",
        ),
        Word::new(
            "template",
            "git clone/init --template (installs hooks and files from any directory)",
        ),
        Word::new(
            "tracking-config",
            "fetching that sets the current branch's upstream (--set-upstream writes branch.<name>.remote and .merge)",
        ),
        Word::new(
            "unnamed-destination",
            "a git push that does not name its destination branch (it depends on push.default and remote config)",
        ),
        Word::new("unsafe-paths", "git apply --unsafe-paths (writes outside the working tree)"),
        Word::new(
            "update-refs",
            "git rebase --update-refs, or rebase.updateRefs for a rebase or rebasing pull (rewrites every other branch that points into the rebased commits)",
        ),
        Word::new(
            "writes-files",
            "git fsck --lost-found (writes the dangling objects into .git/lost-found/)",
        ),
    ],
};

/// curl: the verbs the grammar makes besides the tool's own commands, and its marks.
pub static CURL: Vocabulary = Vocabulary {
    verbs: &[
        Word::new("GET", "an HTTP GET (the method curl sends, after -X, -I, -d and the URL's scheme)"),
        Word::new("HEAD", "an HTTP HEAD (-I)"),
        Word::new("POST", "an HTTP POST"),
        Word::new("PUT", "an HTTP PUT"),
        Word::new("PATCH", "an HTTP PATCH"),
        Word::new("DELETE", "an HTTP DELETE"),
        Word::new("OTHER", "an HTTP request with another method (-X NAME)"),
        Word::new("help", "curl --help"),
        Word::new("version", "curl --version"),
    ],
    marks: &[
        Word::new("body", "an HTTP GET or HEAD request that sends a body"),
        Word::new("config", "curl -K/--config"),
        Word::new(
            "contents-write",
            "a request that writes repository contents through the GitHub API (PUT …/contents/…): scope-checked",
        ),
        Word::new("crlf", "curl with a line break in a header, method or request target"),
        Word::new(
            "docker-api",
            "curl to a Docker Engine API (a container engine socket, or TCP port 2375/2376)",
        ),
        Word::new("engine", "curl --engine (loads a crypto engine library)"),
        Word::new("file-read", "a curl call that sends a local file"),
        Word::new("file-write", "a curl call that writes a local file (-o, -O, -D, -c, --trace, …)"),
        Word::new("form-file", "a multipart form part read from a local file (-F name=@file)"),
        Word::new(
            "ftp-command",
            "curl -Q/--quote or --ftp-alternative-to-user (raw FTP commands, reachable by a redirect)",
        ),
        Word::new("graphql-mutation", "a GraphQL mutation (one action per mutation field)"),
        Word::new("graphql-opaque", "a GraphQL request whose document the gate cannot read or parse"),
        Word::new("graphql-subscription", "a GraphQL subscription"),
        Word::new(
            "location-trusted",
            "curl --location-trusted (credentials sent on to whatever host a redirect names)",
        ),
        Word::new(
            "method-override",
            "a header that makes the server take another method (X-HTTP-Method-Override, …)",
        ),
        Word::new("method=*", "the method of an `OTHER` request, as sent (`method=OPTIONS`)"),
        Word::new("netrc", "curl -n/--netrc/--netrc-file (sends stored credentials)"),
        Word::new("non-http-scheme", "curl with a non-HTTP(S) URL"),
        Word::new("pr-create", "a request that opens a pull request (POST …/pulls): scope-checked"),
        Word::new("proto-redir", "curl --proto-redir allowing redirects to non-HTTP(S) protocols"),
        Word::new(
            "redirect-write",
            "an HTTP write that follows redirects (-L/--follow with a method other than GET or HEAD, or a body)",
        ),
        Word::new(
            "request-target-unknown",
            "curl --request-target without a path (`*`, authority-form)",
        ),
        Word::new(
            "reroute",
            "curl sending a request somewhere other than its URL's host (proxy, --resolve, --connect-to, DNS)",
        ),
        Word::new("scheme=*", "the scheme of a non-HTTP(S) URL (`scheme=file`, `scheme=ftp`)"),
        Word::new("scope-unknown", "a pull request or contents write whose body the gate cannot read"),
        Word::new("server-named-file", "curl -J (the server names the file written)"),
        Word::new("stdin", "a curl call that reads its request from standard input"),
        Word::new("unix-socket", "curl over a Unix domain socket"),
        Word::new("unread-file", "curl with request headers from a file the gate could not read"),
        Word::new("url-file", "curl reading its URLs from a file"),
        Word::new("variables", "curl --variable/--expand-*"),
        Word::new("write-out-file", "curl -w with %output{} or a format read from a file"),
    ],
};

/// ssh: the verbs the grammar makes besides the tool's own commands, and its marks.
pub static SSH: Vocabulary = Vocabulary {
    verbs: &[
        Word::new(
            "as-root",
            "a program run as root or another user, when no rule names its own `as-root <program>`",
        ),
        Word::new("journalctl", "journalctl on the remote host (reads the journal)"),
        Word::new("command", "ssh running a remote command (judged part by part)"),
        Word::new("login", "an interactive login (no command)"),
        Word::new("subsystem", "an ssh subsystem (-s)"),
        Word::new("info", "ssh -V, -G, -Q: prints, connects nowhere"),
        Word::new("jump", "the -W hop ssh runs for -J (allowed only with the real ssh as parent)"),
        Word::new("run *", "a remote program the gate has no grammar for, by name (`run uptime`)"),
        Word::new(
            "as-root *",
            "what root reaches beyond a program's own rules when sudo (or a root login) runs it (`as-root docker`, `as-root other`)",
        ),
        Word::new("systemctl *", "systemctl on the remote host, by verb (`systemctl restart`)"),
        Word::new("journalctl *", "journalctl on the remote host"),
        Word::new("sudo *", "sudo's own modes (`sudo info`, `sudo shell`, `sudo edit`)"),
        Word::new(
            "construct *",
            "a shell construct the gate cannot see through (`construct command-substitution`)",
        ),
        Word::new("git-upload-pack", "git fetching over ssh (from the real git)"),
        Word::new("git-upload-archive", "git archive --remote over ssh"),
        Word::new("git-receive-pack", "git pushing over ssh (only with the real git as parent)"),
    ],
    marks: &[
        Word::new("background", "ssh going into the background (-f)"),
        Word::new(
            "control",
            "ssh connection sharing (-M, -S, -O, ControlMaster, ControlPath, ControlPersist)",
        ),
        Word::new(
            "credentials",
            "forwarding credentials to the remote host (-A, -K, ForwardAgent, GSSAPIDelegateCredentials)",
        ),
        Word::new(
            "env",
            "sudo keeping or setting the environment (-E, --preserve-env, VAR=value): the program's config then comes from the login user's variables",
        ),
        Word::new(
            "forward",
            "ssh forwarding (-L, -R, -D, -W, -w, -g, LocalForward, RemoteForward, Tunnel, …)",
        ),
        Word::new(
            "host-checks",
            "relaxing ssh host key checks (StrictHostKeyChecking=no, UserKnownHostsFile, HostKeyAlias, …)",
        ),
        Word::new(
            "local-exec",
            "an ssh option that runs or loads a local program or reads another config file (ProxyCommand, LocalCommand, KnownHostsCommand, -F, -I, Include, Match, …)",
        ),
        Word::new("log-file", "ssh writing its log to a local file (-E)"),
        Word::new(
            "moved",
            "sudo running the program elsewhere, later or with a helper (-b, -D, -R, -A, --host)",
        ),
        Word::new("no-session", "an ssh connection that runs nothing (-N)"),
        Word::new("other-user", "sudo running the program as a user other than root (-u, -g, -U)"),
        Word::new(
            "plumbing",
            "starting, stopping or restarting what operators reach the host through (ssh, a VPN or mesh network, a remote-access or cloud agent, a console, logind) or the host's own plumbing (dbus, the journal, syslog, auditd, udev, time, cron, the network, the firewall, the container engine, a security agent)",
        ),
        Word::new("power", "starting a unit that reboots, powers off, suspends or isolates the host"),
        Word::new("reads-files", "sending a file read as root or another user"),
        Word::new("remote-command", "a remote command given as -o RemoteCommand"),
        Word::new(
            "remote-env",
            "setting the remote command's environment (SetEnv, SendEnv other than GIT_PROTOCOL, LANG, LC_*)",
        ),
        Word::new(
            "retarget",
            "connecting somewhere other than the destination named (HostName, CanonicalizeHostname, …)",
        ),
        Word::new("root-login", "a program run on a login as root"),
        Word::new("subsystem", "an ssh subsystem (-s: sftp, …) instead of a command"),
        Word::new(
            "tty",
            "a remote terminal for a command (-t, RequestTTY): pagers and prompts on it take commands",
        ),
        Word::new(
            "unlisted",
            "starting, stopping or restarting a unit this host's list of restartable units (tiershim.yaml `remote.<host>.units`) does not name",
        ),
        Word::new(
            "wide",
            "starting, stopping or restarting a target, slice or scope, a pattern of units, or with a job mode other than the default",
        ),
        Word::new(
            "writes",
            "writing a file as root or another user (root writes anywhere, and through any symlink the gate cannot see)",
        ),
        Word::new("x11", "X11 forwarding (-X, -Y)"),
    ],
};

/// kubectl: the verbs the grammar makes besides kubectl's own commands, and its marks.
pub static KUBECTL: Vocabulary = Vocabulary {
    verbs: &[Word::new(
        "--connection",
        "a flag that picks the cluster, the user or the credentials over the pinned kubeconfig (marked with the flag: `--context`)",
    )],
    marks: &[
        Word::new(
            "secret",
            "a Kubernetes secret read (a resource type with `secret` in its name, or a --raw path)",
        ),
        Word::new("raw", "get --raw: a request to an API path as written"),
        Word::new(
            "raw-proxy",
            "get --raw through a proxy subresource: a pod's, service's or node's own HTTP endpoint",
        ),
        Word::new("from-file", "get -f/-k: the resources come from files (which can name a secret)"),
        Word::new("stdin", "-f -: objects read from stdin"),
        Word::new("remote-file", "-f <URL> or -k <remote>: objects fetched from elsewhere"),
        Word::new("prune", "apply --prune: deletes every object the files do not name"),
        Word::new(
            "selector",
            "cordon/uncordon by label selector (or naming no node): every node it matches",
        ),
        Word::new("resolve", "set env --resolve: prints the values of secrets and config maps"),
        Word::new("raw-config", "config view --raw: prints the kubeconfig's credentials"),
        Word::new("--*", "on `--connection`: the flag that picks the cluster or credentials"),
    ],
};

/// helm: its marks (every verb is a helm command or a plugin's name).
pub static HELM: Vocabulary = Vocabulary {
    verbs: &[],
    marks: &[
        Word::new(
            "all",
            "get values --all: every computed value, defaults and generated secrets included",
        ),
        Word::new("chart-url", "a chart named by a URL (oci://, https://, file://)"),
        Word::new("repo-url", "--repo <url>: a chart from a repository the operator did not add"),
        Word::new("post-renderer", "--post-renderer: a program run on the rendered manifests"),
        Word::new(
            "dry-run",
            "--dry-run: rendered (and, with =server, checked against the cluster) but not applied",
        ),
    ],
};

/// What the ansible programs share: never-allowed actions and their marks.
macro_rules! ansible_words {
    ($($v:expr),* $(,)?) => {
        Vocabulary {
            verbs: &[
                $($v,)*
                Word::new("help", "-h/--help"),
                Word::new("version", "--version"),
                Word::new(
                    "-e ansible_*",
                    "extra variables that set an ansible_ setting (interpreter, connection, ssh executable), hold a template, or are not plain name=value words",
                ),
                Word::new("--ssh-args", "arguments for ssh, scp or sftp (--ssh-common-args, --ssh-extra-args, …)"),
            ],
            marks: &[
                Word::new("ansible-var", "on `-e ansible_*`: an extra variable naming an ansible_ setting"),
                Word::new("template", "on `-e ansible_*`: an extra variable holding a Jinja template ({{ }}, {% %}, {# #})"),
                Word::new(
                    "unreadable",
                    "on `-e ansible_*`: extra variables not written as plain name=value words (YAML or JSON, backslash escapes, quotes, braces), which ansible decodes before it reads them",
                ),
                Word::new("--*", "on `--ssh-args`: the option that passes them"),
            ],
        }
    };
}

/// ansible-playbook: a run, a check-mode run, a listing.
pub static ANSIBLE_PLAYBOOK: Vocabulary = ansible_words![
    Word::new("playbook run", "running playbooks on the hosts"),
    Word::new(
        "playbook check",
        "a --check run (not read-only: tasks with check_mode: false still act)"
    ),
    Word::new(
        "playbook list",
        "--syntax-check, --list-hosts, --list-tasks, --list-tags: nothing runs on a host"
    ),
];

/// ansible (ad-hoc): one verb per module.
pub static ANSIBLE: Vocabulary = ansible_words![
    Word::new("adhoc list", "--list-hosts: the hosts a pattern names"),
    Word::new("adhoc *", "an ad-hoc module, by its short name (`adhoc ping`, `adhoc command`)"),
];

/// ansible-inventory: the graph, or the variables.
pub static ANSIBLE_INVENTORY: Vocabulary = ansible_words![
    Word::new("inventory graph", "--graph without --vars: hosts and groups"),
    Word::new(
        "inventory vars",
        "--list, --host, --graph --vars: every variable, vault-decrypted ones included"
    ),
];

/// ansible-galaxy: `<role|collection> <action>`.
pub static ANSIBLE_GALAXY: Vocabulary = Vocabulary {
    verbs: &[
        Word::new("help", "-h/--help, or no type"),
        Word::new("role help", "a type without an action"),
        Word::new("collection help", "a type without an action"),
        Word::new("role *", "a role action (`role list`, `role install`)"),
        Word::new("collection *", "a collection action (`collection list`, `collection install`)"),
    ],
    marks: &[],
};

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use crate::grammar::{Contents, Inputs, Invocation};
    use crate::policy::{Policy, check_words};
    use crate::tool::Tool;

    fn marks_of(inv: &Invocation, out: &mut BTreeSet<(Tool, String)>) {
        for a in &inv.actions {
            for m in &a.marks {
                let name = m.split(": ").next().unwrap_or(m);
                out.insert((inv.tool, name.to_string()));
            }
        }
        if let Some(r) = &inv.remote {
            for p in &r.parts {
                marks_of(&p.inv, out);
            }
        }
    }

    #[test]
    fn every_mark_a_grammar_sets_over_the_examples_and_the_corpus_is_in_its_vocabulary() {
        let mut seen = BTreeSet::new();
        for tool in Tool::ALL {
            let spec = tool.spec();
            let p = Policy::embedded_with_examples(tool).unwrap();
            for ex in p.examples.iter().chain(&p.endpoint_examples) {
                for argv in ex.allow.iter().chain(&ex.refuse) {
                    marks_of(&(spec.parse)(argv, &Contents::new(), &ex.inputs), &mut seen);
                }
            }
            let path = format!("{}/tests/cases/{}.yaml", env!("CARGO_MANIFEST_DIR"), tool.name());
            let cases: serde_yaml_ng::Value = serde_yaml_ng::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            for case in cases.as_sequence().unwrap() {
                let argv: Vec<String> = case["argv"]
                    .as_sequence()
                    .unwrap()
                    .iter()
                    .map(|w| w.as_str().unwrap_or_default().to_string())
                    .collect();
                marks_of(&(spec.parse)(&argv, &Contents::new(), &Inputs::default()), &mut seen);
            }
        }
        let missing: Vec<String> = seen
            .iter()
            .filter(|(t, m)| !t.spec().vocabulary.knows_mark(m))
            .map(|(t, m)| format!("{t}: {m}"))
            .collect();
        assert!(missing.is_empty(), "marks set but not in grammar::vocab: {missing:?}");
        assert!(seen.len() > 150, "{}", seen.len());
    }

    #[test]
    fn every_word_of_the_shipped_policies_is_one_their_grammar_makes() {
        for tool in Tool::ALL {
            check_words(&Policy::embedded(tool).unwrap()).unwrap();
        }
    }

    #[test]
    fn every_word_has_a_one_line_meaning_and_no_word_is_listed_twice() {
        for tool in Tool::ALL {
            let v = tool.spec().vocabulary;
            for list in [v.verbs, v.marks] {
                let mut names = BTreeSet::new();
                for w in list {
                    assert!(!w.meaning.is_empty() && !w.meaning.contains('\n'), "{tool} {}", w.name);
                    assert!(names.insert(w.name), "{tool}: {} twice", w.name);
                }
            }
        }
    }

    #[test]
    fn a_family_covers_its_members_and_not_itself() {
        let f = super::Word::new("method=*", "");
        assert!(f.covers("method=OPTIONS"));
        assert!(!f.covers("method="));
        assert!(!f.covers("method=*"));
        let s = super::Word::new("* dry-run", "");
        assert!(s.covers("push dry-run"));
        assert!(!s.covers("dry-run"));
        assert!(!s.covers("push-dry-run"));
    }
}
