//! The remote command of an ssh call, as the remote shell will run it: lexed by [`shell`], cut
//! into simple commands, and each one handed to the grammar of the program it names. The gate
//! then judges every part with the same `decide()` and the same policy as a local call, and the
//! strictest part decides.
//!
//! Owns: which program goes to which grammar ([`TOOLS`], one entry per gated tool, so adding a
//! tool is one line), the `sudo` prefix, the leading `cd DIR`, which redirections are harmless
//! (`/dev/null`, `2>&1`), the exact command git runs over ssh (`git-upload-pack '<path>'`), and
//! turning every construct the gate cannot see through into a part of its own (`construct
//! <kind>`), which the ssh policy classifies.
//!
//! Must not: decide, or read anything. Programs that are not gated tools become `run <program>`
//! actions (and `systemctl …`/`journalctl` ones, see [`systemd`]) for `policy/ssh.yaml` to
//! classify; a program it does not name is refused as unclassified.

use crate::grammar::shell::{self, Op, Redirect, Simple, Word};
use crate::grammar::{self, Action, Claim, Invocation, systemd};
use crate::sanitize::redact_args;
use crate::tool::Tool;

/// Programs judged by a gated tool's own grammar, with the words put in front of their
/// arguments (`docker-compose x` is `docker compose x`).
pub const TOOLS: &[(&str, Tool, &[&str])] = &[
    ("docker", Tool::Docker, &[]),
    ("docker-compose", Tool::Docker, &["compose"]),
    ("psql", Tool::Psql, &[]),
    ("mysql", Tool::Mysql, &[]),
    ("mariadb", Tool::Mysql, &[]),
    ("curl", Tool::Curl, &[]),
    ("git", Tool::Git, &[]),
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
    /// construct, its text.
    pub words: Vec<String>,
    /// Where each word is in [`Remote::command`] (byte ranges), for redaction.
    pub spans: Vec<(usize, usize)>,
    /// What it is: a gated tool's invocation (`docker restart api`), or an ssh-policy action
    /// (`run uptime`, `systemctl restart nginx`, `construct command-substitution`).
    pub inv: Invocation,
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
        if let Some(part) = command_part(&cmd.words) {
            out.push((start, part));
        }
    }
    out.sort_by_key(|(at, _)| *at);
    // A compose service's project, from what the command shows (the gate cannot read the
    // remote host's files).
    for (_, p) in &mut out {
        crate::compose::resolve_targets(&mut p.inv, &|f| crate::compose::resolve_remote(cd.as_deref(), &f.dir, &f.files));
        // Nor can it read the files a remote `compose up` starts containers from.
        for a in p.inv.actions.iter_mut().filter(|a| a.compose.is_some()) {
            a.add(crate::compose::REMOTE);
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

/// The part for one simple command. None when there is nothing to run (a command of only
/// assignments or redirections, already recorded) or when the program name is itself an
/// expansion (the construct is the part).
fn command_part(words: &[Word]) -> Option<Part> {
    let first = words.first()?;
    if first.expands {
        return None;
    }
    let texts: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
    let spans = words.iter().map(|w| w.span).collect();
    Some(Part {
        inv: judge(&texts),
        words: texts,
        spans,
    })
}

/// Hand `words` (program first) to the grammar that reads it.
fn judge(words: &[String]) -> Invocation {
    let program = words[0].as_str();
    let args = &words[1..];
    if program == "sudo" {
        return match unwrap_sudo(args) {
            Some(rest) if !rest.is_empty() && rest[0] != "sudo" => judge(rest),
            _ => run(words),
        };
    }
    if let Some((_, tool, prefix)) = TOOLS.iter().find(|(name, _, _)| *name == program) {
        let mut argv: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
        argv.extend(args.iter().cloned());
        return grammar::parse(*tool, &argv);
    }
    match program {
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
    }
}

/// `run <program>`, for the ssh policy's list of remote programs.
fn run(words: &[String]) -> Invocation {
    Invocation::new(Tool::Ssh, words).with_action(Action::new(format!("run {}", words[0])))
}

/// The command after `sudo [-n] [-u USER] [--]`; None for any other sudo option (`-E`, `-i`,
/// `-s`, …: a shell or a changed environment the gate cannot see).
fn unwrap_sudo(args: &[String]) -> Option<&[String]> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "--" => return Some(&args[i + 1..]),
            "-n" | "--non-interactive" => i += 1,
            "-u" | "--user" => i += 2,
            _ if a.starts_with("--user=") || (a.starts_with("-u") && a.len() > 2) => i += 1,
            _ if a.starts_with('-') => return None,
            _ => return Some(&args[i..]),
        }
    }
    if i > args.len() { None } else { Some(&args[args.len()..]) }
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
    edits.sort_by_key(|(s, _)| std::cmp::Reverse(s.0));
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
    fn sudo_in_front_is_looked_through_when_it_only_picks_a_user() {
        assert_eq!(judged("sudo docker restart api"), tv(&[("docker", "restart")]));
        assert_eq!(judged("sudo -n -u root -- docker ps"), tv(&[("docker", "ps")]));
        assert_eq!(judged("sudo -uroot docker ps"), tv(&[("docker", "ps")]));
        assert_eq!(judged("sudo -n whoami 2>/dev/null"), tv(&[("ssh", "run whoami")]));
        for cmd in [
            "sudo -E docker ps",
            "sudo -i",
            "sudo -s docker ps",
            "sudo",
            "sudo -n",
            "sudo sudo docker ps",
            "sudo -u",
        ] {
            assert_eq!(judged(cmd), tv(&[("ssh", "run sudo")]), "{cmd}");
        }
        let (_, p) = parts("sudo docker restart api").unwrap();
        assert_eq!(p[0].words, ["sudo", "docker", "restart", "api"]);
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
