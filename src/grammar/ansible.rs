//! ansible-playbook, ansible (ad-hoc), ansible-inventory and ansible-galaxy: argv ->
//! [`Invocation`], as ansible-core 2.14 parses it (Python argparse with `allow_abbrev`:
//! unique prefixes of long options, clustered short flags, `-xVALUE` and `--opt=value`, options
//! anywhere; the option groups of `ansible/cli/arguments/option_helpers.py`).
//!
//! What this grammar owns:
//!
//! - **What a run is.** `ansible-playbook` with `--syntax-check`, `--list-hosts`, `--list-tasks`
//!   or `--list-tags` is verb `playbook list` (nothing runs on a host); with `-C/--check`,
//!   `playbook check` (not read-only: tasks with `check_mode: false`, and modules without check
//!   support that run anyway, still act); otherwise `playbook run`. A run names one
//!   [`Target::Named`] per playbook and `--limit` host (`web01:playbook/site.yml`): the redeploy
//!   budget. A limit the gate cannot name host by host (a pattern, a group expression,
//!   `@file`), or no `--limit`, counts against the playbook's own budget (`playbook/site.yml`).
//! - **Hosts.** Each `--limit` host (and an ad-hoc pattern) is a [`Claim::SshHost`]; a pattern,
//!   or no limit at all, is a [`Claim::AllHosts`]: where `tiershim.yaml` lists `hosts:`, only
//!   named hosts on that list may be reached.
//! - **What ansible runs is the operator's** (DESIGN §3.2). Each playbook with everything beside
//!   it (roles, `group_vars`, `library/`, plugins), each inventory (a file and its directory, or a
//!   directory), each `-e @file` and `--playbook-dir` is a [`Claim::Operator`]; so is an
//!   `ansible.cfg` in the working directory (ansible reads it before the tool home's, unless the
//!   operator pins `ANSIBLE_CONFIG`), and one the agent could create there.
//! - **Pinned or refused**: `--vault-password-file`, `--vault-id label@file`,
//!   `--become-password-file`, `--connection-password-file`, `--private-key`, `-M/--module-path`
//!   are [`Claim::Pinned`] of the variable ansible reads the same setting from
//!   (`ANSIBLE_VAULT_PASSWORD_FILE`, …). `--ssh-common-args`, `--ssh-extra-args`,
//!   `--sftp-extra-args`, `--scp-extra-args` (a `ProxyCommand` runs anything) add the action
//!   [`SSH_ARGS_VERB`]. An extra variable that names an `ansible_` setting (the interpreter,
//!   the connection, the ssh executable, …) or holds a Jinja expression (`{{ lookup('pipe', …) }}`
//!   runs a command on the controller) adds [`EXTRA_VARS_VERB`]. The policy never allows either.
//!
//! Ad-hoc `ansible` runs any module: `-m ping` and `-m setup` are verbs `adhoc ping` and
//! `adhoc setup`; any other module is `adhoc <module>` (the default module is `command`), and
//! `--list-hosts` is `adhoc list`. `ansible-inventory --graph` is `inventory graph`; `--list`,
//! `--host` and `--vars` print variables (vault-decrypted ones included): `inventory vars`.
//! `ansible-galaxy` is `<role|collection> <action>`, with `role` put in front as ansible-galaxy
//! does when neither word is given.

use crate::grammar::opts::{self, Opt, Parsed, Style, Unknown};
use crate::grammar::{Access, Action, Claim, Invocation, LocalFile, Target, Understood};
use crate::tool::Tool;

/// Nothing to insert: the hardening is the environment, the pins and the operator-owned files.
pub const PREPEND: &[&str] = &[];

/// The verb added when the call passes arguments to ssh, scp or sftp.
pub const SSH_ARGS_VERB: &str = "--ssh-args";
/// The verb added when an extra variable sets an `ansible_` setting or holds a template.
pub const EXTRA_VARS_VERB: &str = "-e ansible_*";

/// Python's argparse as ansible builds it.
const ARGPARSE: Style = Style {
    long_abbrev: true,
    long_ignore_case: false,
    negation_exact: false,
    single_dash_long: false,
    clusters: true,
    attached_short: true,
    short_eq: true,
    long_eq: true,
    flag_eq_value: false,
    negation: false,
    interspersed: true,
    double_dash: true,
    end_of_options: false,
    unknown: Unknown::Error,
};

const COMMON: &[Opt] = &[
    Opt::flag("help", &["help"], &['h']),
    Opt::flag("version", &["version"], &[]),
    Opt::flag("verbose", &["verbose"], &['v']),
];
const INVENTORY: &[Opt] = &[
    Opt::value("inventory", &["inventory", "inventory-file"], &['i']),
    Opt::flag("list-hosts", &["list-hosts"], &[]),
    Opt::value("limit", &["limit"], &['l']),
];
const VAULT: &[Opt] = &[
    Opt::value("vault-id", &["vault-id"], &[]),
    Opt::flag("ask-vault-password", &["ask-vault-password", "ask-vault-pass"], &[]),
    Opt::value("vault-password-file", &["vault-password-file", "vault-pass-file"], &[]),
];
const RUNAS: &[Opt] = &[
    Opt::flag("become", &["become"], &['b']),
    Opt::value("become-method", &["become-method"], &[]),
    Opt::value("become-user", &["become-user"], &[]),
    Opt::flag("ask-become-pass", &["ask-become-pass"], &['K']),
    Opt::value("become-password-file", &["become-password-file", "become-pass-file"], &[]),
];
const CONNECT: &[Opt] = &[
    Opt::value("private-key", &["private-key", "key-file"], &[]),
    Opt::value("user", &["user"], &['u']),
    Opt::value("connection", &["connection"], &['c']),
    Opt::value("timeout", &["timeout"], &['T']),
    Opt::value("ssh-common-args", &["ssh-common-args"], &[]),
    Opt::value("sftp-extra-args", &["sftp-extra-args"], &[]),
    Opt::value("scp-extra-args", &["scp-extra-args"], &[]),
    Opt::value("ssh-extra-args", &["ssh-extra-args"], &[]),
    Opt::flag("ask-pass", &["ask-pass"], &['k']),
    Opt::value("connection-password-file", &["connection-password-file", "conn-pass-file"], &[]),
];
const RUNTASK: &[Opt] = &[
    Opt::value("extra-vars", &["extra-vars"], &['e']),
    Opt::value("forks", &["forks"], &['f']),
    Opt::value("module-path", &["module-path"], &['M']),
    Opt::flag("check", &["check"], &['C']),
    Opt::flag("diff", &["diff"], &['D']),
];
const PLAYBOOK_ONLY: &[Opt] = &[
    Opt::flag("force-handlers", &["force-handlers"], &[]),
    Opt::flag("flush-cache", &["flush-cache"], &[]),
    Opt::value("tags", &["tags"], &['t']),
    Opt::value("skip-tags", &["skip-tags"], &[]),
    Opt::flag("syntax-check", &["syntax-check"], &[]),
    Opt::flag("list-tasks", &["list-tasks"], &[]),
    Opt::flag("list-tags", &["list-tags"], &[]),
    Opt::flag("step", &["step"], &[]),
    Opt::value("start-at-task", &["start-at-task"], &[]),
];
const ADHOC_ONLY: &[Opt] = &[
    Opt::value("poll", &["poll"], &['P']),
    Opt::value("background", &["background"], &['B']),
    Opt::flag("one-line", &["one-line"], &['o']),
    Opt::value("tree", &["tree"], &['t']),
    Opt::value("playbook-dir", &["playbook-dir"], &[]),
    Opt::value("task-timeout", &["task-timeout"], &[]),
    Opt::value("args", &["args"], &['a']),
    Opt::value("module-name", &["module-name"], &['m']),
];
const INVENTORY_ONLY: &[Opt] = &[
    Opt::value("inventory", &["inventory", "inventory-file"], &['i']),
    Opt::value("playbook-dir", &["playbook-dir"], &[]),
    Opt::value("extra-vars", &["extra-vars"], &['e']),
    Opt::flag("list", &["list"], &[]),
    Opt::value("host", &["host"], &[]),
    Opt::flag("graph", &["graph"], &[]),
    Opt::flag("yaml", &["yaml"], &['y']),
    Opt::flag("toml", &["toml"], &[]),
    Opt::flag("vars", &["vars"], &[]),
    Opt::flag("export", &["export"], &[]),
    Opt::value("output", &["output"], &[]),
];
const GALAXY_LIST: &[Opt] = &[
    Opt::flag("help", &["help"], &['h']),
    Opt::flag("version", &["version"], &[]),
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::value("server", &["server", "api-server"], &['s']),
    Opt::value("token", &["token", "api-key"], &[]),
    Opt::flag("ignore-certs", &["ignore-certs"], &['c']),
    Opt::value("timeout", &["timeout"], &[]),
    Opt::value("path", &["roles-path", "role-path", "collections-path"], &['p']),
    Opt::value("format", &["format"], &[]),
];

/// The option groups, in one table per program.
fn table(groups: &[&[Opt]]) -> Vec<Opt> {
    groups.iter().flat_map(|g| g.iter().copied()).collect()
}

/// Pinned-or-refused options: the option id and the variable ansible reads the same setting from.
const PINNED: &[(&str, &str, &str)] = &[
    ("vault-password-file", "ANSIBLE_VAULT_PASSWORD_FILE", "--vault-password-file"),
    ("become-password-file", "ANSIBLE_BECOME_PASSWORD_FILE", "--become-password-file"),
    (
        "connection-password-file",
        "ANSIBLE_CONNECTION_PASSWORD_FILE",
        "--connection-password-file",
    ),
    ("private-key", "ANSIBLE_PRIVATE_KEY_FILE", "--private-key"),
    ("module-path", "ANSIBLE_LIBRARY", "--module-path"),
];

pub fn parse_playbook(args: &[String]) -> Invocation {
    finish(Invocation::new(Tool::AnsiblePlaybook, args), playbook(args))
}

pub fn parse_adhoc(args: &[String]) -> Invocation {
    finish(Invocation::new(Tool::Ansible, args), adhoc(args))
}

pub fn parse_inventory(args: &[String]) -> Invocation {
    finish(Invocation::new(Tool::AnsibleInventory, args), inventory(args))
}

pub fn parse_galaxy(args: &[String]) -> Invocation {
    finish(Invocation::new(Tool::AnsibleGalaxy, args), galaxy(args))
}

fn finish(inv: Invocation, r: Result<Understood, String>) -> Invocation {
    let tool = inv.tool;
    inv.understood(r.map_err(|problem| format!("{tool}: {problem}")))
}

fn playbook(args: &[String]) -> Result<Understood, String> {
    let t = table(&[COMMON, INVENTORY, VAULT, RUNAS, CONNECT, RUNTASK, PLAYBOOK_ONLY]);
    let p = opts::scan(args, &t, &ARGPARSE)?;
    if p.has("help") || p.has("version") {
        return Ok((
            vec![Action::new(if p.has("help") { "help" } else { "version" })],
            Vec::new(),
            Vec::new(),
        ));
    }
    let books: Vec<&str> = p.positionals();
    if books.is_empty() {
        return Err("the following arguments are required: playbook".into());
    }
    let mut claims = Vec::new();
    let files = Vec::new();
    let mut actions = Vec::new();
    let lists = ["syntax-check", "list-hosts", "list-tasks", "list-tags"];
    let mut main = if lists.iter().any(|l| p.has(l)) {
        Action::new("playbook list")
    } else if p.has("check") {
        Action::new("playbook check")
    } else {
        Action::new("playbook run")
    };
    for book in &books {
        claims.push(Claim::Operator {
            path: (*book).to_string(),
            flag: "the playbook and what is beside it (roles, vars, plugins)".into(),
            tree: true,
            optional: false,
        });
    }
    // A listing connects to no host; a run or a check reaches every host it names.
    let mut host_claims = Vec::new();
    let hosts = limit_hosts(&p, &mut host_claims);
    if main.verb != "playbook list" {
        claims.extend(host_claims);
    }
    if main.verb == "playbook run" {
        for book in &books {
            let name = book.rsplit('/').next().unwrap_or(book).to_string();
            match &hosts {
                Some(list) => main.targets.extend(list.iter().map(|h| Target::Named {
                    kind: "playbook",
                    name: name.clone(),
                    host: Some(h.clone()),
                })),
                // Every host of the play (or a pattern): the playbook's own budget.
                None => main.targets.push(Target::Named {
                    kind: "playbook",
                    name: name.clone(),
                    host: None,
                }),
            }
        }
    }
    common(&p, &mut actions, &mut claims);
    actions.insert(0, main);
    Ok((actions, claims, files))
}

fn adhoc(args: &[String]) -> Result<Understood, String> {
    let t = table(&[COMMON, INVENTORY, VAULT, RUNAS, CONNECT, RUNTASK, ADHOC_ONLY]);
    let p = opts::scan(args, &t, &ARGPARSE)?;
    if p.has("help") || p.has("version") {
        return Ok((
            vec![Action::new(if p.has("help") { "help" } else { "version" })],
            Vec::new(),
            Vec::new(),
        ));
    }
    let [pattern] = p.positionals()[..] else {
        return Err("takes one host pattern".into());
    };
    let mut claims = Vec::new();
    let mut files = Vec::new();
    let mut actions = Vec::new();
    let module = p.last("module-name").unwrap_or("command");
    let main = if p.has("list-hosts") {
        Action::new("adhoc list")
    } else {
        // Modules by their short name or `ansible.builtin.` name; anything else is its own verb.
        let short = module
            .strip_prefix("ansible.builtin.")
            .or_else(|| module.strip_prefix("ansible.legacy."))
            .unwrap_or(module);
        Action::new(format!("adhoc {short}"))
    };
    if main.verb != "adhoc list" {
        match host_words(pattern) {
            Some(list) => claims.extend(list.into_iter().map(|h| Claim::SshHost {
                host: h,
                via: "ansible host pattern".into(),
            })),
            None => claims.push(Claim::AllHosts {
                via: format!("ansible host pattern {pattern}"),
            }),
        }
        // A limit narrows the pattern; the pattern's hosts are already claimed.
        if p.last("limit").is_some() {
            let _ = limit_hosts(&p, &mut claims);
        }
    }
    if let Some(dir) = p.last("tree") {
        files.push(LocalFile::writes(dir, "-t/--tree", Access::WriteNamed));
    }
    if let Some(dir) = p.last("playbook-dir") {
        claims.push(operator(dir, "--playbook-dir", true));
    }
    common(&p, &mut actions, &mut claims);
    actions.insert(0, main);
    Ok((actions, claims, files))
}

fn inventory(args: &[String]) -> Result<Understood, String> {
    let t = table(&[COMMON, VAULT, INVENTORY_ONLY]);
    let p = opts::scan(args, &t, &ARGPARSE)?;
    if p.has("help") || p.has("version") {
        return Ok((
            vec![Action::new(if p.has("help") { "help" } else { "version" })],
            Vec::new(),
            Vec::new(),
        ));
    }
    let mut claims = Vec::new();
    let mut files = Vec::new();
    let mut actions = Vec::new();
    let modes = [p.has("list"), p.last("host").is_some(), p.has("graph")];
    let main = match modes {
        [false, false, true] if !p.has("vars") => Action::new("inventory graph"),
        [true, false, false] | [false, true, false] | [false, false, true] => Action::new("inventory vars"),
        _ => return Err("one of the actions --list, --host or --graph is required".into()),
    };
    if let Some(out) = p.last("output") {
        files.push(LocalFile::write(out, "--output"));
    }
    if let Some(dir) = p.last("playbook-dir") {
        claims.push(operator(dir, "--playbook-dir", true));
    }
    common(&p, &mut actions, &mut claims);
    actions.insert(0, main);
    Ok((actions, claims, files))
}

fn galaxy(args: &[String]) -> Result<Understood, String> {
    // ansible-galaxy puts `role` in front when neither `role` nor `collection` is anywhere in
    // argv (and the first word asks for no help or version).
    let mut words: Vec<String> = args.to_vec();
    let first = words.first().map(String::as_str);
    if !matches!(first, None | Some("-h" | "--help" | "--version")) && !words.iter().any(|w| w == "role" || w == "collection") {
        words.insert(0, "role".into());
    }
    let p = opts::scan(
        &words,
        GALAXY_LIST,
        &Style {
            unknown: Unknown::Flag,
            ..ARGPARSE
        },
    )?;
    let pos = p.positionals();
    let verb = match pos.as_slice() {
        [] => "help".to_string(),
        [kind] => format!("{kind} help"),
        [kind, action, ..] => format!("{kind} {action}"),
    };
    if !matches!(pos.first(), None | Some(&"role") | Some(&"collection")) {
        return Err(format!("argument TYPE: invalid choice: {:?}", pos[0]));
    }
    // Options are read for the only verbs that may be allowed (`list`); every other verb is
    // named and never allowed.
    if verb.ends_with(" list") && !p.unknowns().is_empty() {
        return Err(format!("unrecognized arguments: {}", p.unknowns().join(" ")));
    }
    let verb = if p.has("help") { "help".to_string() } else { verb };
    Ok((vec![Action::new(verb)], Vec::new(), Vec::new()))
}

/// What every program shares: inventories, extra variables, the pinned options, ssh arguments,
/// and the working directory's `ansible.cfg`.
fn common(p: &Parsed, actions: &mut Vec<Action>, claims: &mut Vec<Claim>) {
    claims.push(Claim::Operator {
        path: "ansible.cfg".into(),
        flag: "the ansible.cfg of the working directory".into(),
        tree: false,
        optional: true,
    });
    for inv in p.values("inventory") {
        // A value with a comma that is no path is a host list (`-i web01,`).
        if inv.contains(',') && !inv.contains('/') {
            for h in inv.split(',').filter(|h| !h.is_empty()) {
                claims.push(Claim::SshHost {
                    host: h.to_string(),
                    via: "-i host list".into(),
                });
            }
        } else {
            claims.push(operator(inv, "-i/--inventory (and the group_vars and host_vars beside it)", true));
        }
    }
    // Marked by kind only: an extra variable's value may be a password.
    let mut risky = Vec::new();
    for f in p.all("extra-vars") {
        let v = f.value.as_deref().unwrap_or_default();
        if let Some(file) = v.strip_prefix('@') {
            claims.push(operator(file, "-e @file", false));
            continue;
        }
        if v.to_ascii_lowercase().contains("ansible_") {
            risky.push("ansible-var");
        }
        if v.contains("{{") || v.contains("{%") || v.contains("{#") {
            risky.push("template");
        }
        if !plain_extra_vars(v) {
            risky.push("unreadable");
        }
    }
    if !risky.is_empty() {
        let mut a = Action::new(EXTRA_VARS_VERB);
        for r in risky {
            a.add(r);
        }
        actions.push(a);
    }
    for (id, var, flag) in PINNED {
        for v in p.values(id) {
            claims.push(Claim::Pinned {
                var,
                value: v.to_string(),
                flag: (*flag).to_string(),
            });
        }
    }
    for v in p.values("vault-id") {
        // `label@file` or a bare file reads a password file; `label@prompt` and `prompt` ask.
        let source = v.rsplit_once('@').map_or(v, |(_, s)| s);
        if source != "prompt" {
            claims.push(Claim::Pinned {
                var: "ANSIBLE_VAULT_IDENTITY_LIST",
                value: v.to_string(),
                flag: "--vault-id".into(),
            });
        }
    }
    let ssh: Vec<String> = ["ssh-common-args", "ssh-extra-args", "sftp-extra-args", "scp-extra-args"]
        .iter()
        .filter(|id| !p.all(id).is_empty())
        .map(|id| format!("--{id}"))
        .collect();
    if !ssh.is_empty() {
        let mut a = Action::new(SSH_ARGS_VERB);
        for s in ssh {
            a.add(s);
        }
        actions.push(a);
    }
}

/// An inline `-e` value in the only form the gate reads as ansible does: `name=value` words
/// separated by white space, each name letters, digits and `_` (not starting with a digit), no
/// value holding a backslash, a quote, a brace or a control character. ansible parses a value
/// that starts with `{` or `[` as YAML and decodes backslash escapes (`\u0069`, `\x69`) and
/// quotes in the `name=value` form before it uses a name or value, so in any other form an
/// `ansible_` setting or a template can be spelt in a way the text does not show.
fn plain_extra_vars(v: &str) -> bool {
    v.split(char::is_whitespace).filter(|w| !w.is_empty()).all(|word| {
        let Some((name, value)) = word.split_once('=') else {
            return false;
        };
        let mut name_chars = name.chars();
        name_chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name_chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !value.chars().any(|c| matches!(c, '\\' | '\'' | '"' | '{' | '}') || c.is_control())
    })
}

fn operator(path: &str, flag: &str, tree: bool) -> Claim {
    Claim::Operator {
        path: path.to_string(),
        flag: flag.to_string(),
        tree,
        optional: false,
    }
}

/// The hosts `--limit` names one by one (`web01,web02`, `web01:web02`), with a claim each; None
/// (and a claim for every host) when there is no limit or it is a pattern.
fn limit_hosts(p: &Parsed, claims: &mut Vec<Claim>) -> Option<Vec<String>> {
    let Some(limit) = p.last("limit") else {
        claims.push(Claim::AllHosts {
            via: "ansible without --limit".into(),
        });
        return None;
    };
    match host_words(limit) {
        Some(list) => {
            claims.extend(list.iter().map(|h| Claim::SshHost {
                host: h.clone(),
                via: "--limit".into(),
            }));
            Some(list)
        }
        None => {
            claims.push(Claim::AllHosts {
                via: format!("--limit {limit}"),
            });
            None
        }
    }
}

/// Host names in a pattern that names hosts one by one; None for anything else (`all`, `*`,
/// `web*`, `!x`, `&x`, `~re`, `@file`, `x[0:3]`). A group name cannot be told from a host name
/// here: it counts as the host it would be, and `hosts:` lists no such host.
fn host_words(pattern: &str) -> Option<Vec<String>> {
    let words: Vec<&str> = pattern.split([',', ':']).filter(|w| !w.is_empty()).collect();
    if words.is_empty() {
        return None;
    }
    let plain = |w: &str| {
        w != "all"
            && w.bytes().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && w.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_'))
    };
    words
        .iter()
        .all(|w| plain(w))
        .then(|| words.iter().map(|w| w.to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;

    fn verbs(inv: &Invocation) -> Vec<String> {
        assert_eq!(inv.problem, None, "{:?}", inv.args);
        inv.actions.iter().cloned().map(Action::shown_with_marks).collect()
    }

    fn pb(args: &[&str]) -> Invocation {
        parse_playbook(&argv(args))
    }

    #[test]
    fn a_run_a_check_and_a_listing_are_three_verbs() {
        assert_eq!(verbs(&pb(&["site.yml"])), vec!["playbook run"]);
        assert_eq!(verbs(&pb(&["-C", "site.yml"])), vec!["playbook check"]);
        assert_eq!(verbs(&pb(&["--check", "--diff", "site.yml"])), vec!["playbook check"]);
        assert_eq!(verbs(&pb(&["--syntax-check", "site.yml"])), vec!["playbook list"]);
        assert_eq!(verbs(&pb(&["site.yml", "--list-hosts"])), vec!["playbook list"]);
        assert_eq!(verbs(&pb(&["--list-tasks", "site.yml"])), vec!["playbook list"]);
        // argparse takes a unique prefix of a long option.
        assert_eq!(verbs(&pb(&["--syntax", "site.yml"])), vec!["playbook list"]);
        assert_eq!(verbs(&pb(&["--chec", "site.yml"])), vec!["playbook check"]);
    }

    #[test]
    fn a_run_counts_each_playbook_on_each_limited_host() {
        let inv = pb(&["-l", "web01,web02", "deploy/site.yml"]);
        let t = |h: &str| Target::Named {
            kind: "playbook",
            name: "site.yml".into(),
            host: Some(h.into()),
        };
        assert_eq!(inv.actions[0].targets, vec![t("web01"), t("web02")]);
        assert!(inv.claims.contains(&Claim::SshHost {
            host: "web01".into(),
            via: "--limit".into()
        }));
        let all = Target::Named {
            kind: "playbook",
            name: "site.yml".into(),
            host: None,
        };
        let inv = pb(&["site.yml"]);
        assert_eq!(inv.actions[0].targets, vec![all.clone()]);
        assert!(inv.claims.contains(&Claim::AllHosts {
            via: "ansible without --limit".into()
        }));
        let inv = pb(&["site.yml", "--limit", "web*"]);
        assert_eq!(inv.actions[0].targets, vec![all]);
    }

    #[test]
    fn what_ansible_runs_must_be_the_operators() {
        let inv = pb(&["-i", "inv/hosts", "-e", "@vars.yml", "site.yml"]);
        let paths: Vec<&str> = inv
            .claims
            .iter()
            .filter_map(|c| match c {
                Claim::Operator { path, .. } => Some(path.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(paths, vec!["site.yml", "ansible.cfg", "inv/hosts", "vars.yml"]);
    }

    #[test]
    fn interpreters_templates_and_ssh_arguments_are_their_own_actions() {
        assert_eq!(
            verbs(&pb(&["-e", "ansible_python_interpreter=/tmp/py", "site.yml"]))[1],
            "-e ansible_* [ansible-var]"
        );
        assert_eq!(verbs(&pb(&["-e", "x={{ lookup('pipe','id') }}", "site.yml"])).len(), 2);
        assert_eq!(
            verbs(&pb(&["--ssh-common-args=-oProxyCommand=x", "site.yml"]))[1],
            "--ssh-args [--ssh-common-args]"
        );
        assert_eq!(
            verbs(&pb(&["--ssh-ex", "-R 1:x:2", "site.yml"]))[1],
            "--ssh-args [--ssh-extra-args]"
        );
        assert_eq!(verbs(&pb(&["-e", "version=1.2", "site.yml"])), vec!["playbook run"]);
    }

    #[test]
    fn password_files_and_module_paths_are_pinned_or_refused() {
        let inv = pb(&["--vault-pass-file", "/tmp/p", "-M", "/tmp/lib", "site.yml"]);
        assert!(inv.claims.contains(&Claim::Pinned {
            var: "ANSIBLE_VAULT_PASSWORD_FILE",
            value: "/tmp/p".into(),
            flag: "--vault-password-file".into()
        }));
        assert!(inv.claims.contains(&Claim::Pinned {
            var: "ANSIBLE_LIBRARY",
            value: "/tmp/lib".into(),
            flag: "--module-path".into()
        }));
        let inv = pb(&["--vault-id", "prod@prompt", "site.yml"]);
        assert!(!inv.claims.iter().any(|c| matches!(c, Claim::Pinned { .. })));
    }

    #[test]
    fn adhoc_modules_are_verbs() {
        assert_eq!(verbs(&parse_adhoc(&argv(&["web01", "-m", "ping"]))), vec!["adhoc ping"]);
        assert_eq!(
            verbs(&parse_adhoc(&argv(&["web01", "-m", "ansible.builtin.setup"]))),
            vec!["adhoc setup"]
        );
        assert_eq!(verbs(&parse_adhoc(&argv(&["web01", "-a", "id"]))), vec!["adhoc command"]);
        assert_eq!(verbs(&parse_adhoc(&argv(&["all", "--list-hosts"]))), vec!["adhoc list"]);
    }

    #[test]
    fn inventory_graph_is_apart_from_printing_variables() {
        assert_eq!(verbs(&parse_inventory(&argv(&["--graph"]))), vec!["inventory graph"]);
        assert_eq!(verbs(&parse_inventory(&argv(&["--graph", "--vars"]))), vec!["inventory vars"]);
        assert_eq!(verbs(&parse_inventory(&argv(&["--list"]))), vec!["inventory vars"]);
        assert_eq!(verbs(&parse_inventory(&argv(&["--host", "web01"]))), vec!["inventory vars"]);
    }

    #[test]
    fn galaxy_puts_role_in_front() {
        assert_eq!(verbs(&parse_galaxy(&argv(&["list"]))), vec!["role list"]);
        assert_eq!(verbs(&parse_galaxy(&argv(&["install", "geerlingguy.nginx"]))), vec!["role install"]);
        assert_eq!(
            verbs(&parse_galaxy(&argv(&["collection", "list", "--format", "json"]))),
            vec!["collection list"]
        );
        assert_eq!(
            verbs(&parse_galaxy(&argv(&["collection", "install", "x.y"]))),
            vec!["collection install"]
        );
    }
}
