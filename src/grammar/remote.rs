//! The remote command of an ssh call, as the remote shell will run it: lexed by [`shell`], cut
//! into simple commands, and each one handed to the grammar of the program it names. The gate
//! then judges every part with the same `decide()` and the same policy as a local call, and the
//! strictest part decides.
//!
//! Owns: which program goes to which grammar ([`TOOLS`], one entry per gated tool, so adding a
//! tool is one line), the `sudo` prefix ([`sudo`]) and the `as-root` part it (or a login as
//! `root`) adds, the leading `cd DIR`, which redirections are harmless (`/dev/null`, `2>&1`),
//! the exact command git runs over ssh (`git-upload-pack '<path>'`), turning every construct the
//! gate cannot see through into a part of its own (`construct <kind>`), which the ssh policy
//! classifies, where each part writes on the remote host ([`Write`], judged by
//! `crate::remote_fence`), and the settings every remote git runs with ([`git_forced`],
//! [`sent_args`]).
//!
//! Must not: decide, or read anything. Programs that are not gated tools become `run <program>`
//! actions (and `systemctl …`/`journalctl` ones, see [`systemd`]) for `policy/ssh.yaml` to
//! classify; a program it does not name is refused as unclassified.

use crate::grammar::shell::{self, Op, Redirect, Simple, Word};
use crate::grammar::{self, Access, Action, Claim, Invocation, sudo, systemd};
use crate::sanitize::redact_args;
use crate::tool::Tool;

/// A grammar's reading of argv alone.
pub type Parse = fn(&[String]) -> Invocation;

/// Programs judged by a gated tool's own grammar, with the words put in front of their
/// arguments (`docker-compose x` is `docker compose x`). Each tool's `ToolSpec::remote` names
/// the same programs (`crate::spec`, checked by a test).
pub const TOOLS: &[(&str, Tool, &[&str], Parse)] = &[
    ("docker", Tool::Docker, &[], grammar::docker::parse),
    ("docker-compose", Tool::Docker, &["compose"], grammar::docker::parse),
    ("psql", Tool::Psql, &[], grammar::psql::parse),
    ("mysql", Tool::Mysql, &[], grammar::mysql::parse),
    ("mariadb", Tool::Mysql, &[], grammar::mysql::parse),
    ("curl", Tool::Curl, &[], grammar::curl::parse),
    ("git", Tool::Git, &[], grammar::git::parse),
    ("kubectl", Tool::Kubectl, &[], grammar::kubectl::parse),
    ("helm", Tool::Helm, &[], grammar::helm::parse),
];

/// The commands git runs on the other end of an ssh transport (`connect.c`), always as the
/// program and one single-quoted path.
const GIT_TRANSPORT: &[&str] = &["git-upload-pack", "git-receive-pack", "git-upload-archive"];

/// What an ssh call runs on the remote host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// The destination host as written (after `user@`, without `ssh://` or a port).
    pub host: String,
    /// The login user, when the call names one (`-l`, `user@`, `ssh://user@`, `-o User=`).
    pub user: Option<String>,
    /// The port, when the call names one (`-p`, `ssh://…:port`, `-o Port=`).
    pub port: Option<String>,
    /// Jump hosts (`-J`, `-o ProxyJump=`), in the order written.
    pub jump: Vec<String>,
    /// The command as ssh sends it: the words after the destination joined by single spaces.
    pub command: String,
    /// How many words at the end of the ssh argv make up `command`.
    pub command_words: usize,
    /// `cd DIR` in front of the first command.
    pub cd: Option<String>,
    /// Everything to judge, in text order: each simple command, and each construct.
    pub parts: Vec<Part>,
}

/// One thing the remote shell will do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The words as the remote program receives them, `sudo` and its options included; for a
    /// construct, its text; for an `as-root` part, the `sudo` words (or the program's).
    pub words: Vec<String>,
    /// Where each word is in [`Remote::command`] (byte ranges), for redaction.
    pub spans: Vec<(usize, usize)>,
    /// What it is: a gated tool's invocation (`docker restart api`), or an ssh-policy action
    /// (`run uptime`, `systemctl restart nginx`, `construct command-substitution`, `as-root git`).
    pub inv: Invocation,
    /// The index in `words` of the program (after `sudo` and its options).
    pub program: usize,
    /// Where the part writes on the remote host, as written.
    pub writes: Vec<Write>,
}

/// A place a remote command writes, as written in it (relative paths are the remote shell's:
/// below the `cd`, or the login directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    pub path: String,
    /// What writes it, for messages: the option (`-o`), or `git` for the directory a git
    /// command works in.
    pub what: String,
    /// A directory a git command works in (or creates): judged only when the command changes
    /// something, and it may be a workspace itself.
    pub repository: bool,
    /// Files whose names the server chooses are written into `path` (`curl -J`, an archive
    /// unpacked): tier 3, as locally.
    pub named: bool,
}

impl Part {
    /// How the part is named in log lines: `docker ps`, `uptime`, `systemctl restart`.
    pub fn shown(&self) -> String {
        let verb = self.inv.verb();
        match self.inv.tool {
            Tool::Ssh => verb.strip_prefix("run ").unwrap_or(&verb).to_string(),
            t => format!("{t} {verb}"),
        }
    }
}

/// The `cd` and the parts of `command`; Err when the text is not something a shell would run
/// as written (an unterminated quote, an empty command between operators, …).
pub fn parts(command: &str) -> Result<(Option<String>, Vec<Part>), String> {
    let script = shell::lex(command).map_err(|e| format!("the remote command cannot be read: {e}"))?;
    let mut out: Vec<(usize, Part)> = Vec::new();
    for c in &script.constructs {
        let text = &command[c.span.0..c.span.1];
        out.push((c.span.0, construct(c.kind.name(), text, c.span)));
    }
    let mut cd = None;
    for (i, cmd) in script.commands.iter().enumerate() {
        let start = cmd
            .words
            .first()
            .map(|w| w.span.0)
            .or(cmd.redirects.first().map(|r| r.span.0))
            .unwrap_or(0);
        for r in &cmd.redirects {
            if !harmless(r) {
                out.push((r.span.0, construct("redirection", &command[r.span.0..r.span.1], r.span)));
            }
        }
        if cmd.op == Some(Op::Background) {
            let end = cmd.words.last().map_or(start, |w| w.span.1);
            out.push((end, construct("background", "&", (end, end))));
        }
        if is_cd(cmd) {
            if i == 0 && matches!(cmd.op, None | Some(Op::And | Op::Semi | Op::Newline)) && cmd.redirects.is_empty() {
                cd = Some(cmd.words[1].text.clone());
            } else {
                let (s, e) = (cmd.words[0].span.0, cmd.words[cmd.words.len() - 1].span.1);
                out.push((s, construct("cd", &command[s..e], (s, e))));
            }
            continue;
        }
        for part in command_part(&cmd.words).into_iter().flatten() {
            out.push((start, part));
        }
    }
    out.sort_by_key(|(at, _)| *at);
    // A compose service's project, from what the command shows (the gate cannot read the
    // remote host's files).
    for (_, p) in &mut out {
        grammar::compose::resolve_targets(&mut p.inv, &|f| grammar::compose::resolve_remote(cd.as_deref(), &f.dir, &f.files));
        // Nor can it read the files a remote `compose up` starts containers from.
        for a in p.inv.actions.iter_mut().filter(|a| a.compose.is_some()) {
            a.add(grammar::compose::REMOTE);
        }
    }
    Ok((cd, out.into_iter().map(|(_, p)| p).collect()))
}

fn construct(kind: &str, text: &str, span: (usize, usize)) -> Part {
    let words = vec![text.to_string()];
    Part {
        inv: Invocation::new(Tool::Ssh, &words).with_action(Action::new(format!("construct {kind}"))),
        words,
        spans: vec![span],
        program: 0,
        writes: Vec::new(),
    }
}

/// `>/dev/null`, `2>/dev/null`, `>>/dev/null`, `</dev/null`, `2>&1`, `>&2`: they change only
/// where the output of the command goes, never a file.
fn harmless(r: &Redirect) -> bool {
    if !r.target.is_plain() {
        return false;
    }
    let t = r.target.text.as_str();
    match r.op {
        ">" | ">>" | "&>" | "&>>" => t == "/dev/null" && matches!(r.fd, None | Some(1 | 2)),
        "<" => t == "/dev/null" && matches!(r.fd, None | Some(0)),
        ">&" => matches!(t, "1" | "2") && matches!(r.fd, None | Some(1 | 2)),
        _ => false,
    }
}

/// `cd DIR` with one plain directory that is not an option.
fn is_cd(cmd: &Simple) -> bool {
    let Some(first) = cmd.words.first() else {
        return false;
    };
    if !(first.is_plain() && first.text == "cd") {
        return false;
    }
    cmd.words.len() == 2 && cmd.words[1].is_plain() && !cmd.words[1].text.starts_with('-') && !cmd.words[1].text.is_empty()
}

/// The parts for one simple command: the program's, and an `as-root` part when `sudo` runs it.
/// None when there is nothing to run (a command of only assignments or redirections, already
/// recorded) or when the program name is itself an expansion (the construct is the part).
fn command_part(words: &[Word]) -> Option<Vec<Part>> {
    let first = words.first()?;
    if first.expands {
        return None;
    }
    let texts: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
    let spans: Vec<(usize, usize)> = words.iter().map(|w| w.span).collect();
    let j = judge(&texts);
    let writes = writes_of(&j.inv, &texts[j.program..]);
    let main = Part {
        inv: j.inv,
        words: texts.clone(),
        spans: spans.clone(),
        program: j.program,
        writes,
    };
    let Some(marks) = j.root else {
        return Some(vec![main]);
    };
    let root = as_root(
        texts[..j.program].to_vec(),
        spans[..j.program].to_vec(),
        &texts[j.program],
        &marks,
        &main.inv,
    );
    Some(vec![main, root])
}

/// What [`judge`] makes of a simple command.
struct Judged {
    inv: Invocation,
    /// The index of the program word (after `sudo` and its options).
    program: usize,
    /// Marks of the `sudo` in front, when sudo runs the program.
    root: Option<Vec<&'static str>>,
}

/// Hand `words` (program first) to the grammar that reads it.
fn judge(words: &[String]) -> Judged {
    let plain = |inv| Judged {
        inv,
        program: 0,
        root: None,
    };
    let program = words[0].as_str();
    let args = &words[1..];
    if program == "sudo" {
        return match sudo::parse(words) {
            Ok(s) if s.mode == sudo::Mode::Run && words[s.prefix] != "sudo" => Judged {
                inv: judge(&words[s.prefix..]).inv,
                program: s.prefix,
                root: Some(s.marks),
            },
            Ok(s) if s.mode == sudo::Mode::Info => plain(Invocation::new(Tool::Ssh, words).with_action(Action::new("sudo info"))),
            // A shell, an editor, sudo in front of sudo, or what sudo (or the gate) cannot read.
            _ => plain(run(words)),
        };
    }
    if let Some((_, _, prefix, parse)) = TOOLS.iter().find(|(name, _, _, _)| *name == program) {
        let mut argv: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
        argv.extend(args.iter().cloned());
        return plain(parse(&argv));
    }
    plain(match program {
        "systemctl" => systemd::systemctl(args),
        "journalctl" => systemd::journalctl(args),
        p if GIT_TRANSPORT.contains(&p) && args.len() == 1 && !args[0].starts_with('-') => {
            let mut inv = Invocation::new(Tool::Ssh, words).with_action(Action::new(p));
            if p == "git-receive-pack" {
                // Receiving a push with no `git push` in front would skip every push rule: only
                // the real git, whose push the git gate already judged, may ask for it.
                inv.claims.push(Claim::Parent {
                    tool: Tool::Git,
                    what: "git-receive-pack (the remote end of a push)".into(),
                });
            }
            inv
        }
        _ => run(words),
    })
}

/// The `as-root` part of a program run by `sudo` (or on a login as root): `as-root` with the
/// marks of what root would do beyond the program's own rules (files it names, sudo's options),
/// and `as-root <program>` for the policy's list of what each program reaches as root (falling
/// back to `as-root other`).
fn as_root(words: Vec<String>, spans: Vec<(usize, usize)>, program: &str, marks: &[&'static str], inner: &Invocation) -> Part {
    let mut root = Action::new("as-root");
    for m in marks {
        root.add(*m);
    }
    if inner.files.iter().any(|f| f.access.writes()) {
        root.add("writes");
    }
    if inner.files.iter().any(|f| f.access == Access::Read) {
        root.add("reads-files");
    }
    let inv = Invocation::new(Tool::Ssh, &words)
        .with_action(root)
        .with_action(Action::new(format!("as-root {program}")).fallback("as-root other"));
    Part {
        inv,
        words,
        spans,
        program: 0,
        writes: Vec::new(),
    }
}

/// A login as `root` runs every program as root: give each program part that `sudo` does not
/// already cover an `as-root` part of its own (marked `root-login`), after it.
pub fn as_root_login(parts: &mut Vec<Part>) {
    let mut out = Vec::with_capacity(parts.len() * 2);
    for (i, p) in parts.iter().enumerate() {
        out.push(p.clone());
        let is_root_part = |q: &Part| q.inv.actions.first().is_some_and(|a| a.verb == "as-root");
        if is_root_part(p) || parts.get(i + 1).is_some_and(is_root_part) {
            continue;
        }
        if p.inv.actions.iter().any(|a| a.verb.starts_with("construct ")) || p.inv.problem.is_some() {
            continue;
        }
        let Some(program) = p.words.get(p.program) else { continue };
        let span = p.spans.get(p.program).copied().into_iter().collect();
        out.push(as_root(vec![program.clone()], span, program, &["root-login"], &p.inv));
    }
    for p in out.iter_mut() {
        if let Some(a) = p.inv.actions.first_mut().filter(|a| a.verb == "as-root") {
            a.add("root-login");
        }
    }
    *parts = out;
}

/// Where a part writes: the files its grammar says it writes, and for git the directory it works
/// in (`-C`, below the `cd`), plus, for `clone` and `init`, every word that could name the
/// directory they create. `words` start at the program.
fn writes_of(inv: &Invocation, words: &[String]) -> Vec<Write> {
    let mut out: Vec<Write> = inv
        .files
        .iter()
        .filter(|f| f.access.writes())
        .map(|f| Write {
            path: f.path.clone(),
            what: f.flag.clone(),
            repository: false,
            named: f.access != Access::Write,
        })
        .collect();
    if inv.tool == Tool::Git && words.first().is_some_and(|w| w == "git") {
        let (dir, rest) = git_directory(&words[1..]);
        if let Some((verb, args)) = rest.split_first()
            && matches!(verb.as_str(), "clone" | "init")
        {
            for a in args.iter().filter(|a| !a.starts_with('-')) {
                out.push(Write {
                    path: if a.starts_with('/') || dir == "." {
                        a.clone()
                    } else {
                        format!("{dir}/{a}")
                    },
                    what: format!("git {verb}"),
                    repository: true,
                    named: false,
                });
            }
        }
        out.push(Write {
            path: dir,
            what: "git".into(),
            repository: true,
            named: false,
        });
    }
    out
}

/// The directory git works in (`.` joined with each `-C`, as git applies them in turn) and the
/// words after its global options.
fn git_directory(args: &[String]) -> (String, &[String]) {
    let mut dir = ".".to_string();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if !a.starts_with('-') || matches!(a.as_str(), "--help" | "-h" | "--version" | "-v") {
            break;
        }
        match a.as_str() {
            "-C" => {
                let Some(v) = args.get(i + 1) else { break };
                if v.starts_with('/') || dir == "." {
                    dir.clone_from(v);
                } else if !v.is_empty() {
                    dir = format!("{dir}/{v}");
                }
                i += 2;
            }
            "-c" | "--config-env" | "--git-dir" | "--work-tree" | "--namespace" | "--shallow-file" | "--attr-source" => i += 2,
            _ => i += 1,
        }
    }
    (dir, &args[i.min(args.len())..])
}

/// The settings every remote git runs with, put after its `git` word: the local gate's forced
/// settings (no pager, hooks, fsmonitor, editors, signing or transport programs from config),
/// and `safe.bareRepository=explicit`, so a directory that only looks like a bare repository
/// (`HEAD`, `config`, `objects/`, `refs/` written there) is not one. A remote repository's config
/// cannot be read from here; these `-c` settings win over it.
pub fn git_forced() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = grammar::git::PREPEND.to_vec();
    if !out.contains(&"safe.bareRepository=explicit") {
        out.extend(["-c", "safe.bareRepository=explicit"]);
    }
    out
}

/// The remote command as it is sent: each git part with [`git_forced`] after its `git` word.
/// None when it has no git part.
pub fn sent_command(remote: &Remote) -> Option<String> {
    // Plain words (letters, digits, `-._=/:`) need no quotes; anything else would get them.
    let plain = |a: &str| a.chars().all(|c| c.is_ascii_alphanumeric() || "-._=/:".contains(c));
    let forced: Vec<String> = git_forced()
        .iter()
        .map(|a| {
            if plain(a) {
                a.to_string()
            } else {
                shell_words::quote(a).into_owned()
            }
        })
        .collect();
    let insert = format!(" {}", forced.join(" "));
    let mut at: Vec<usize> = remote
        .parts
        .iter()
        .filter(|p| p.inv.tool == Tool::Git && p.words.get(p.program).is_some_and(|w| w == "git"))
        .filter_map(|p| p.spans.get(p.program).map(|s| s.1))
        .collect();
    if at.is_empty() {
        return None;
    }
    at.sort_unstable();
    at.dedup();
    let mut out = remote.command.clone();
    for pos in at.into_iter().rev() {
        if !out.is_char_boundary(pos) {
            return None;
        }
        out.insert_str(pos, &insert);
    }
    Some(out)
}

/// argv for the real ssh: the caller's, with the words that make up the remote command replaced
/// by [`sent_command`] (ssh joins them with spaces anyway) when that changes it.
pub fn sent_args(args: &[String], remote: &Remote) -> Vec<String> {
    match sent_command(remote) {
        Some(cmd) if remote.command_words > 0 && remote.command_words <= args.len() => {
            let mut out = args[..args.len() - remote.command_words].to_vec();
            out.push(cmd);
            out
        }
        _ => args.to_vec(),
    }
}

/// `run <program>`, for the ssh policy's list of remote programs.
fn run(words: &[String]) -> Invocation {
    Invocation::new(Tool::Ssh, words).with_action(Action::new(format!("run {}", words[0])))
}

/// `command` with every word of every part that holds a secret replaced by its redacted,
/// shell-quoted form. Everything else stays as written.
pub fn redacted(remote: &Remote) -> String {
    let mut edits: Vec<((usize, usize), String)> = Vec::new();
    for p in &remote.parts {
        for ((word, red), span) in p.words.iter().zip(redact_args(&p.words)).zip(&p.spans) {
            if *word != red {
                edits.push((*span, shell_words::quote(&red).into_owned()));
            }
        }
    }
    // An `as-root` part repeats the `sudo` words of its program's part.
    edits.sort_by_key(|(s, _)| std::cmp::Reverse(*s));
    edits.dedup_by_key(|(s, _)| *s);
    let mut out = remote.command.clone();
    for ((s, e), text) in edits {
        if out.is_char_boundary(s) && out.is_char_boundary(e) && s <= e && e <= out.len() {
            out.replace_range(s..e, &text);
        }
    }
    out
}

/// The names of [`Kind`] a construct part can carry, plus the ones this module adds; the
/// policy test checks that `policy/ssh.yaml` classifies every one of them.
#[cfg(test)]
pub const CONSTRUCTS: &[&str] = &[
    "command-substitution",
    "backquote",
    "variable",
    "glob",
    "tilde",
    "brace",
    "bang",
    "comment",
    "assignment",
    "bash-operator",
    "here-document",
    "subshell",
    "compound",
    "redirection",
    "background",
    "cd",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::shell::Kind;
    use pretty_assertions::assert_eq;

    /// (tool, verb) of each part.
    fn judged(cmd: &str) -> Vec<(String, String)> {
        let (_, parts) = parts(cmd).unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        parts.iter().map(|p| (p.inv.tool.to_string(), p.inv.verb())).collect()
    }

    fn tv(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn every_lexer_kind_has_a_construct_name() {
        for k in [
            Kind::CommandSubstitution,
            Kind::Backquote,
            Kind::Variable,
            Kind::Glob,
            Kind::Tilde,
            Kind::Brace,
            Kind::Bang,
            Kind::Comment,
            Kind::Assignment,
            Kind::BashOperator,
            Kind::HereDocument,
            Kind::Subshell,
            Kind::Compound,
        ] {
            assert!(CONSTRUCTS.contains(&k.name()), "{k:?}");
        }
    }

    #[test]
    fn each_simple_command_goes_to_its_tools_grammar() {
        assert_eq!(judged("docker ps -a"), tv(&[("docker", "ps")]));
        assert_eq!(judged("docker-compose up -d api"), tv(&[("docker", "compose up")]));
        assert_eq!(judged("git -C /srv/app status"), tv(&[("git", "status")]));
        assert_eq!(judged("psql -c 'select 1'"), tv(&[("psql", "sql select")]));
        assert_eq!(judged("curl -s http://127.0.0.1/health"), tv(&[("curl", "GET")]));
        assert_eq!(
            judged("docker restart api; rm -rf /"),
            tv(&[("docker", "restart"), ("ssh", "run rm")])
        );
        assert_eq!(
            judged("uptime && df -h | tail -n 3"),
            tv(&[("ssh", "run uptime"), ("ssh", "run df"), ("ssh", "run tail")])
        );
    }

    #[test]
    fn a_program_sudo_runs_is_judged_and_so_is_what_it_reaches_as_root() {
        assert_eq!(judged("sudo docker restart api"), tv(&[("docker", "restart"), ("ssh", "as-root")]));
        assert_eq!(judged("sudo -n -u root -- docker ps"), tv(&[("docker", "ps"), ("ssh", "as-root")]));
        assert_eq!(judged("sudo -uroot docker ps"), tv(&[("docker", "ps"), ("ssh", "as-root")]));
        assert_eq!(
            judged("sudo -n whoami 2>/dev/null"),
            tv(&[("ssh", "run whoami"), ("ssh", "as-root")])
        );
        let (_, p) = parts("sudo -E -u postgres psql -c 'select 1'").unwrap();
        assert_eq!(p[0].words, ["sudo", "-E", "-u", "postgres", "psql", "-c", "select 1"]);
        assert_eq!(p[0].program, 4);
        assert_eq!(p[1].words, ["sudo", "-E", "-u", "postgres"]);
        let acts: Vec<String> = p[1].inv.actions.iter().map(|a| a.clone().shown_with_marks()).collect();
        assert_eq!(acts, ["as-root [env,other-user]", "as-root psql"]);
        // What the program does with files, root does anywhere.
        let (_, p) = parts("sudo curl -o /tmp/x http://h/").unwrap();
        assert_eq!(p[1].inv.actions[0].clone().shown_with_marks(), "as-root [writes]");
        // A shell, an editor, sudo in front of sudo, or an option sudo rejects: sudo itself.
        for cmd in [
            "sudo -i",
            "sudo -s docker ps",
            "sudo",
            "sudo -n",
            "sudo sudo docker ps",
            "sudo -u",
            "sudo -e /etc/hosts",
            "sudo --frob docker ps",
        ] {
            assert_eq!(judged(cmd), tv(&[("ssh", "run sudo")]), "{cmd}");
        }
        assert_eq!(judged("sudo -l"), tv(&[("ssh", "sudo info")]));
    }

    #[test]
    fn a_login_as_root_gives_every_program_an_as_root_part() {
        let (_, mut p) = parts("uptime && sudo docker ps && $(x) && git -C /r log").unwrap();
        as_root_login(&mut p);
        let shown: Vec<String> = p.iter().map(|p| p.inv.actions[0].clone().shown_with_marks()).collect();
        assert_eq!(
            shown,
            [
                "run uptime",
                "as-root [root-login]",
                "ps",
                "as-root [root-login]",
                "construct command-substitution",
                "log",
                "as-root [root-login]"
            ]
        );
        assert_eq!(p[6].inv.actions[1].verb, "as-root git");
    }

    #[test]
    fn writes_are_the_files_a_grammar_writes_and_the_directory_git_changes() {
        let w = |cmd: &str| -> Vec<(String, String, bool)> {
            let (_, p) = parts(cmd).unwrap();
            p.iter()
                .flat_map(|p| p.writes.iter().map(|w| (w.path.clone(), w.what.clone(), w.repository)))
                .collect()
        };
        assert_eq!(
            w("curl --create-dirs -o x/HEAD -o x/config http://h/a http://h/b"),
            [
                ("x/HEAD".to_string(), "-o".to_string(), false),
                ("x/config".into(), "-o".into(), false)
            ]
        );
        assert_eq!(w("git -C /srv/a -C b status"), [("/srv/a/b".to_string(), "git".to_string(), true)]);
        assert_eq!(w("git -C x -C /y pull"), [("/y".to_string(), "git".to_string(), true)]);
        assert_eq!(w("sudo git pull"), [(".".to_string(), "git".to_string(), true)]);
        assert_eq!(
            w("git clone --depth 1 https://h/r.git /home/ops/.config/git"),
            [
                // The git grammar's own declaration of the directory clone creates.
                ("/home/ops/.config/git".to_string(), "clone".to_string(), false),
                ("1".to_string(), "git clone".to_string(), true),
                ("https://h/r.git".into(), "git clone".into(), true),
                ("/home/ops/.config/git".into(), "git clone".into(), true),
                (".".into(), "git".into(), true)
            ]
        );
        assert_eq!(w("docker ps"), []);
    }

    #[test]
    fn every_remote_git_is_sent_with_the_forced_settings_after_its_git_word() {
        let remote = |cmd: &str| {
            let (cd, parts) = parts(cmd).unwrap();
            Remote {
                host: "h".into(),
                user: None,
                port: None,
                jump: vec![],
                command: cmd.to_string(),
                command_words: 1,
                cd,
                parts,
            }
        };
        let forced = git_forced().join(" ");
        assert!(forced.contains("safe.bareRepository=explicit"), "{forced}");
        assert!(forced.contains("core.hooksPath=/dev/null"), "{forced}");
        assert_eq!(
            sent_command(&remote("cd /srv/x && git status && sudo -n git log -1")),
            Some(format!("cd /srv/x && git {forced} status && sudo -n git {forced} log -1"))
        );
        assert_eq!(sent_command(&remote("docker ps")), None);
        assert_eq!(sent_command(&remote("git-upload-pack '/r.git'")), None);
        let r = remote("git -C x help push");
        assert_eq!(
            sent_args(&["-p".into(), "22".into(), "h".into(), "git -C x help push".into()], &r),
            ["-p".to_string(), "22".into(), "h".into(), format!("git {forced} -C x help push")]
        );
        // Several words after the destination become the one command ssh would have joined.
        let mut r = remote("git status");
        r.command_words = 2;
        assert_eq!(
            sent_args(&["h".into(), "git".into(), "status".into()], &r),
            ["h".to_string(), format!("git {forced} status")]
        );
    }

    #[test]
    fn a_leading_cd_is_kept_and_any_other_cd_is_a_construct() {
        let (cd, p) = parts("cd /srv/app && docker compose up -d api").unwrap();
        assert_eq!(cd.as_deref(), Some("/srv/app"));
        assert_eq!(p.len(), 1);
        assert_eq!(parts("cd /srv; docker ps").unwrap().0.as_deref(), Some("/srv"));
        assert_eq!(
            judged("docker ps; cd /x; docker compose down"),
            tv(&[("docker", "ps"), ("ssh", "construct cd"), ("docker", "compose down")])
        );
        assert_eq!(judged("cd /x || docker ps"), tv(&[("ssh", "construct cd"), ("docker", "ps")]));
        assert_eq!(judged("cd"), tv(&[("ssh", "run cd")]));
        assert_eq!(judged("cd -P /x && ls"), tv(&[("ssh", "run cd"), ("ssh", "run ls")]));
    }

    #[test]
    fn only_redirections_to_dev_null_and_between_stdout_and_stderr_are_harmless() {
        assert_eq!(
            judged("docker logs api 2>&1 >/dev/null </dev/null 2>>/dev/null >&2"),
            tv(&[("docker", "logs")])
        );
        assert_eq!(
            judged("docker ps > /etc/passwd"),
            tv(&[("docker", "ps"), ("ssh", "construct redirection")])
        );
        assert_eq!(
            judged("cat < /etc/shadow"),
            tv(&[("ssh", "run cat"), ("ssh", "construct redirection")])
        );
        assert_eq!(judged("docker ps 3>&1"), tv(&[("docker", "ps"), ("ssh", "construct redirection")]));
        assert_eq!(judged("docker ps 2>&-"), tv(&[("docker", "ps"), ("ssh", "construct redirection")]));
        assert_eq!(
            judged("docker ps >\"/dev/null\""),
            tv(&[("docker", "ps"), ("ssh", "construct redirection")])
        );
    }

    #[test]
    fn expansions_are_parts_of_their_own_and_the_command_is_still_judged() {
        assert_eq!(
            judged("docker restart $(docker ps -q)"),
            tv(&[("docker", "restart"), ("ssh", "construct command-substitution")])
        );
        // A program that is an expansion is only its construct.
        assert_eq!(judged("$CMD restart api"), tv(&[("ssh", "construct variable")]));
        assert_eq!(
            judged("DOCKER_HOST=tcp://x docker ps"),
            tv(&[("ssh", "construct assignment"), ("docker", "ps")])
        );
        assert_eq!(judged("docker ps &"), tv(&[("docker", "ps"), ("ssh", "construct background")]));
    }

    #[test]
    fn git_transport_commands_are_recognised_only_in_the_shape_git_sends() {
        assert_eq!(judged("git-upload-pack '/srv/repo.git'"), tv(&[("ssh", "git-upload-pack")]));
        assert_eq!(judged("git-upload-archive 'r.git'"), tv(&[("ssh", "git-upload-archive")]));
        let (_, p) = parts("git-receive-pack 'o/r.git'").unwrap();
        assert_eq!(p[0].inv.verb(), "git-receive-pack");
        assert!(matches!(p[0].inv.claims[..], [Claim::Parent { tool: Tool::Git, .. }]));
        assert_eq!(judged("git-receive-pack --stateless-rpc r"), tv(&[("ssh", "run git-receive-pack")]));
        assert_eq!(judged("git-upload-pack a b"), tv(&[("ssh", "run git-upload-pack")]));
    }

    #[test]
    fn text_a_shell_would_reject_is_an_error() {
        for cmd in ["docker ps 'x", "docker ps &&", "; docker ps"] {
            assert!(parts(cmd).is_err(), "{cmd}");
        }
    }

    #[test]
    fn secrets_in_the_command_are_redacted_in_place() {
        let command = "curl -s -H 'Authorization: Bearer abcdefghijkl' http://x && psql -c 'select 1'".to_string();
        let (cd, parts) = parts(&command).unwrap();
        let r = Remote {
            host: "h".into(),
            user: None,
            port: None,
            jump: vec![],
            command,
            command_words: 1,
            cd,
            parts,
        };
        assert_eq!(
            redacted(&r),
            "curl -s -H 'Authorization: [REDACTED]' http://x && psql -c 'select 1'"
        );
    }
}
