//! ssh as OpenSSH's `ssh(1)` reads its command line (`ssh.c` `main`, 9.x): BSD `getopt` with the
//! optstring `1246ab:c:e:fgi:kl:m:no:p:qstvxAB:CD:E:F:GI:J:KL:MNO:PQ:R:S:TVw:W:XYy` (clusters,
//! attached values, no long options, stop at the first word that is not an option), then the
//! destination (`[user@]host` or `ssh://[user@]host[:port]`), then a second round of options
//! after the destination unless `--` came first, then the remote command: every remaining word,
//! joined by single spaces, which the remote user's shell runs.
//!
//! Owns: the option table and the `-o Keyword=Value` table ([`KEYWORDS`], what each `ssh_config`
//! keyword does to the gate: harmless, or one of the marks the policy refuses), the destination
//! and jump-host syntax, the hosts the call reaches ([`Claim::SshHost`]), the shape OpenSSH
//! itself uses for a `-J` hop (`ssh -W '[host]:port' jumphost`, allowed only when the real ssh
//! is the parent, [`Claim::Parent`]), and [`PREPEND`].
//!
//! Must not: decide, or do I/O. The remote command is cut into parts by [`remote`]; whether a
//! host is listed, whether the parent is the real ssh or git, and every tier are `decide()`'s.

use crate::grammar::opts::{self, Opt, Style, Unknown};
use crate::grammar::remote::{self, Remote};
use crate::grammar::{Action, Claim, Invocation};
use crate::tool::Tool;

/// The only ssh configuration the real ssh reads. Without `-F`, ssh reads `~/.ssh/config`, which
/// the agent can write, and a `ProxyCommand`, `LocalCommand`, `KnownHostsCommand` or `Match exec`
/// there runs any local program. With `-F` it reads that file only (not even the system one), so
/// the gate names the root-owned system file, where an operator's own host settings belong.
pub const PINNED_CONFIG: &str = "/etc/ssh/ssh_config";

/// Inserted before the caller's arguments on every exec (see [`PINNED_CONFIG`]). A jump hop that
/// the real ssh starts (`-J`) is handed the same `-F`, and passes it back through the gate.
pub const PREPEND: &[&str] = &["-F", PINNED_CONFIG];

/// OpenBSD `getopt` as ssh uses it (portable OpenSSH brings its own, because it needs
/// `optreset` for the second round after the destination).
const BSD_GETOPT: Style = Style {
    long_abbrev: false,
    long_ignore_case: false,
    negation_exact: false,
    single_dash_long: false,
    clusters: true,
    attached_short: true,
    short_eq: false,
    long_eq: false,
    flag_eq_value: false,
    negation: false,
    interspersed: false,
    double_dash: true,
    end_of_options: false,
    unknown: Unknown::Error,
};

/// The optstring of `ssh.c`. `-P` is a flag up to OpenSSH 9.7 and takes a tag from 9.8 on; it
/// is listed as a flag and then refused, because its meaning depends on the version installed.
const OPTS: &[Opt] = &[
    Opt::flag("1", &[], &['1']),
    Opt::flag("2", &[], &['2']),
    Opt::flag("4", &[], &['4']),
    Opt::flag("6", &[], &['6']),
    Opt::flag("a", &[], &['a']),
    Opt::value("b", &[], &['b']),
    Opt::value("c", &[], &['c']),
    Opt::value("e", &[], &['e']),
    Opt::flag("f", &[], &['f']),
    Opt::flag("g", &[], &['g']),
    Opt::value("i", &[], &['i']),
    Opt::flag("k", &[], &['k']),
    Opt::value("l", &[], &['l']),
    Opt::value("m", &[], &['m']),
    Opt::flag("n", &[], &['n']),
    Opt::value("o", &[], &['o']),
    Opt::value("p", &[], &['p']),
    Opt::flag("q", &[], &['q']),
    Opt::flag("s", &[], &['s']),
    Opt::flag("t", &[], &['t']),
    Opt::flag("v", &[], &['v']),
    Opt::flag("x", &[], &['x']),
    Opt::flag("A", &[], &['A']),
    Opt::value("B", &[], &['B']),
    Opt::flag("C", &[], &['C']),
    Opt::value("D", &[], &['D']),
    Opt::value("E", &[], &['E']),
    Opt::value("F", &[], &['F']),
    Opt::flag("G", &[], &['G']),
    Opt::value("I", &[], &['I']),
    Opt::value("J", &[], &['J']),
    Opt::flag("K", &[], &['K']),
    Opt::value("L", &[], &['L']),
    Opt::flag("M", &[], &['M']),
    Opt::flag("N", &[], &['N']),
    Opt::value("O", &[], &['O']),
    Opt::flag("P", &[], &['P']),
    Opt::value("Q", &[], &['Q']),
    Opt::value("R", &[], &['R']),
    Opt::value("S", &[], &['S']),
    Opt::flag("T", &[], &['T']),
    Opt::flag("V", &[], &['V']),
    Opt::value("w", &[], &['w']),
    Opt::value("W", &[], &['W']),
    Opt::flag("X", &[], &['X']),
    Opt::flag("Y", &[], &['Y']),
    Opt::flag("y", &[], &['y']),
];

/// What an option or keyword does, as far as the gate is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum K {
    /// Changes nothing the gate cares about (ciphers, timeouts, identities, verbosity).
    Fine,
    /// Always the mark.
    Mark(&'static str),
    /// Fine when the value is `no`/`false`/`off`; else the mark.
    UnlessOff(&'static str),
    /// Fine when the value is `none`; else the mark.
    UnlessNone(&'static str),
    User,
    Port,
    Jump,
    SendEnv,
    StrictHostKeyChecking,
    SessionType,
    /// `RequestTTY`: fine when `no` or `auto` (no terminal for a command); else `tty`.
    Tty,
}

/// `ssh_config(5)` keywords (lower case, as `readconf.c` compares them) and what they do. A
/// keyword not listed is refused as unknown.
const KEYWORDS: &[(&str, K)] = &[
    ("addkeystoagent", K::Fine),
    ("addressfamily", K::Fine),
    ("batchmode", K::Fine),
    ("bindaddress", K::Fine),
    ("bindinterface", K::Fine),
    ("canonicaldomains", K::Mark("retarget")),
    ("canonicalizefallbacklocal", K::Mark("retarget")),
    ("canonicalizehostname", K::UnlessOff("retarget")),
    ("canonicalizemaxdots", K::Mark("retarget")),
    ("canonicalizepermittedcnames", K::Mark("retarget")),
    ("casignaturealgorithms", K::Fine),
    ("certificatefile", K::Fine),
    ("challengeresponseauthentication", K::Fine),
    ("checkhostip", K::Fine),
    ("ciphers", K::Fine),
    ("clearallforwardings", K::Fine),
    ("compression", K::Fine),
    ("connectionattempts", K::Fine),
    ("connecttimeout", K::Fine),
    ("controlmaster", K::UnlessOff("control")),
    ("controlpath", K::UnlessNone("control")),
    ("controlpersist", K::UnlessOff("control")),
    ("dynamicforward", K::Mark("forward")),
    ("enableescapecommandline", K::UnlessOff("forward")),
    ("enablesshkeysign", K::UnlessOff("local-exec")),
    ("escapechar", K::Fine),
    ("exitonforwardfailure", K::Fine),
    ("fingerprinthash", K::Fine),
    ("forkafterauthentication", K::UnlessOff("background")),
    ("forwardagent", K::UnlessOff("credentials")),
    ("forwardx11", K::UnlessOff("x11")),
    ("forwardx11timeout", K::Mark("x11")),
    ("forwardx11trusted", K::UnlessOff("x11")),
    ("gatewayports", K::UnlessOff("forward")),
    ("globalknownhostsfile", K::Mark("host-checks")),
    ("gssapiauthentication", K::Fine),
    ("gssapidelegatecredentials", K::UnlessOff("credentials")),
    ("hashknownhosts", K::Fine),
    ("host", K::Mark("local-exec")),
    ("hostbasedacceptedalgorithms", K::Fine),
    ("hostbasedauthentication", K::Fine),
    ("hostbasedkeytypes", K::Fine),
    ("hostkeyalgorithms", K::Fine),
    ("hostkeyalias", K::Mark("host-checks")),
    ("hostname", K::Mark("retarget")),
    ("identitiesonly", K::Fine),
    ("identityagent", K::Fine),
    ("identityfile", K::Fine),
    ("ignoreunknown", K::Fine),
    ("include", K::Mark("local-exec")),
    ("ipqos", K::Fine),
    ("kbdinteractiveauthentication", K::Fine),
    ("kbdinteractivedevices", K::Fine),
    ("kexalgorithms", K::Fine),
    ("knownhostscommand", K::Mark("local-exec")),
    ("localcommand", K::Mark("local-exec")),
    ("localforward", K::Mark("forward")),
    ("loglevel", K::Fine),
    ("logverbose", K::Fine),
    ("macs", K::Fine),
    ("match", K::Mark("local-exec")),
    ("nohostauthenticationforlocalhost", K::UnlessOff("host-checks")),
    ("numberofpasswordprompts", K::Fine),
    ("obscurekeystroketiming", K::Fine),
    ("passwordauthentication", K::Fine),
    ("permitlocalcommand", K::UnlessOff("local-exec")),
    ("permitremoteopen", K::Mark("forward")),
    ("pkcs11provider", K::Mark("local-exec")),
    ("port", K::Port),
    ("preferredauthentications", K::Fine),
    ("protocolkeepalives", K::Fine),
    ("proxycommand", K::Mark("local-exec")),
    ("proxyjump", K::Jump),
    ("proxyusefdpass", K::UnlessOff("local-exec")),
    ("pubkeyacceptedalgorithms", K::Fine),
    ("pubkeyacceptedkeytypes", K::Fine),
    ("pubkeyauthentication", K::Fine),
    ("rekeylimit", K::Fine),
    ("remotecommand", K::Mark("remote-command")),
    ("remoteforward", K::Mark("forward")),
    ("requesttty", K::Tty),
    ("requiredrsasize", K::Fine),
    ("revokedhostkeys", K::Mark("host-checks")),
    ("securitykeyprovider", K::Mark("local-exec")),
    ("sendenv", K::SendEnv),
    ("serveralivecountmax", K::Fine),
    ("serveraliveinterval", K::Fine),
    ("sessiontype", K::SessionType),
    ("setenv", K::Mark("remote-env")),
    ("setuptimeout", K::Fine),
    ("smartcarddevice", K::Mark("local-exec")),
    ("stdinnull", K::Fine),
    ("streamlocalbindmask", K::Mark("forward")),
    ("streamlocalbindunlink", K::UnlessOff("forward")),
    ("stricthostkeychecking", K::StrictHostKeyChecking),
    ("syslogfacility", K::Fine),
    ("tag", K::Fine),
    ("tcpkeepalive", K::Fine),
    ("tunnel", K::UnlessOff("forward")),
    ("tunneldevice", K::Mark("forward")),
    ("updatehostkeys", K::Fine),
    ("user", K::User),
    ("userknownhostsfile", K::Mark("host-checks")),
    ("verifyhostkeydns", K::Fine),
    ("visualhostkey", K::Fine),
    ("xauthlocation", K::Mark("local-exec")),
];

/// Variables ssh may send for the remote command: git's protocol version and the locale (what
/// Debian's own `ssh_config` sends). Anything else could retarget the remote tool
/// (`SendEnv DOCKER_HOST`) if the server accepts it.
const SENDABLE: &[&str] = &["GIT_PROTOCOL", "LANG", "LC_*"];

/// What one call amounts to, before it becomes an [`Invocation`].
#[derive(Default)]
struct Seen {
    marks: Vec<&'static str>,
    claims: Vec<Claim>,
    user: Option<String>,
    port: Option<String>,
    jump: Vec<String>,
    info: bool,
    subsystem: bool,
    no_session: bool,
    /// `-W host:port`.
    stdio: Option<String>,
    /// Letters of options other than those OpenSSH puts in a jump hop.
    beyond_jump: Vec<String>,
}

impl Seen {
    fn mark(&mut self, m: &'static str) {
        if !self.marks.contains(&m) {
            self.marks.push(m);
        }
    }

    fn host(&mut self, host: &str, via: &str) {
        self.claims.push(Claim::SshHost {
            host: host.to_string(),
            via: via.to_string(),
        });
    }
}

pub fn parse(args: &[String]) -> Invocation {
    let inv = Invocation::new(Tool::Ssh, args);
    match understand(args) {
        Ok((action, claims, remote)) => {
            let mut inv = inv.with_action(action);
            inv.claims = claims;
            inv.remote = remote.map(Box::new);
            inv
        }
        Err(p) => inv.with_problem(p),
    }
}

type Understood = (Action, Vec<Claim>, Option<Remote>);

fn understand(args: &[String]) -> Result<Understood, String> {
    let first = opts::scan(args, OPTS, &BSD_GETOPT)?;
    let positionals: Vec<String> = first.positionals().iter().map(|s| s.to_string()).collect();
    let mut seen = Seen::default();
    let (destination, after, command) = match positionals.split_first() {
        None => (None, Vec::new(), Vec::new()),
        Some((dest, rest)) if first.saw_double_dash || rest.is_empty() => (Some(dest.clone()), Vec::new(), rest.to_vec()),
        Some((dest, rest)) => {
            // ssh.c: options after the destination are read in a second round.
            let second = opts::scan(rest, OPTS, &BSD_GETOPT)?;
            let after: Vec<opts::Found> = second.opts().cloned().collect();
            (
                Some(dest.clone()),
                after,
                second.positionals().iter().map(|s| s.to_string()).collect(),
            )
        }
    };
    for f in first.opts() {
        option(f, &mut seen)?;
    }
    // The destination's user and port count where it stands: after the options before it, and
    // before the ones after it (ssh keeps the first user and port it is given).
    let parsed = match &destination {
        Some(d) if !seen.info => Some(parse_destination(d)?),
        _ => None,
    };
    if let Some((user, _, port)) = &parsed {
        if seen.user.is_none() {
            seen.user.clone_from(user);
        }
        if seen.port.is_none() {
            seen.port.clone_from(port);
        }
    }
    for f in &after {
        option(f, &mut seen)?;
    }
    if seen.info {
        // -V and -Q print and exit; -G prints the configuration. Nothing connects.
        let mut action = Action::new("info");
        for m in &seen.marks {
            action.add(*m);
        }
        return Ok((action, seen.claims, None));
    }
    let Some((_, host, _)) = parsed else {
        return Err("no destination".into());
    };
    seen.host(&host, "destination");
    let command_words = command.len();
    let command = command.join(" ");
    let verb = if let Some(target) = seen.stdio.clone() {
        if !command.is_empty() {
            return Err("-W with a remote command".into());
        }
        let (thost, _) = split_host_port(&target).ok_or_else(|| format!("-W {target} is not host:port"))?;
        seen.host(&thost, "-W target");
        if seen.beyond_jump.is_empty() {
            // The hop OpenSSH runs for -J: `ssh [-l u] [-p n] [-J more] [-F cfg] [-v] -W '[h]:p' jump`.
            seen.claims.push(Claim::Parent {
                tool: Tool::Ssh,
                what: "ssh -W (a jump-host hop)".into(),
            });
            "jump"
        } else {
            seen.mark("forward");
            "command"
        }
    } else if seen.subsystem {
        "subsystem"
    } else if seen.no_session {
        "command"
    } else if command.is_empty() {
        "login"
    } else {
        "command"
    };
    let mut action = Action::new(verb);
    for m in &seen.marks {
        action.add(*m);
    }
    let remote = if verb == "command" && !seen.no_session && seen.stdio.is_none() {
        let (cd, mut parts) = remote::parts(&command)?;
        // A login as root runs every program as root, as `sudo` in front would.
        if seen.user.as_deref() == Some("root") {
            remote::as_root_login(&mut parts);
        }
        if parts.is_empty() && cd.is_none() {
            return Err(format!("the remote command {command:?} runs nothing"));
        }
        Some(Remote {
            host,
            user: seen.user.clone(),
            port: seen.port.clone(),
            jump: seen.jump.clone(),
            command,
            command_words,
            cd,
            parts,
        })
    } else {
        None
    };
    Ok((action, seen.claims, remote))
}

/// Apply one option to what is seen.
fn option(f: &opts::Found, seen: &mut Seen) -> Result<(), String> {
    let value = f.value.clone().unwrap_or_default();
    if !matches!(f.id.as_str(), "l" | "p" | "J" | "F" | "v" | "W") {
        seen.beyond_jump.push(f.id.to_string());
    }
    match f.id.as_str() {
        "1" | "2" | "4" | "6" | "a" | "b" | "c" | "e" | "i" | "k" | "m" | "n" | "q" | "v" | "x" | "y" | "B" | "C" | "T" => {}
        // A terminal makes the remote programs interactive: `less` behind `journalctl`,
        // `systemctl status` or `git log` then runs what is typed after `!`.
        "t" => seen.mark("tty"),
        "l" => {
            seen.user.get_or_insert(value);
        }
        "p" => {
            seen.port.get_or_insert(value);
        }
        "A" | "K" => seen.mark("credentials"),
        "X" | "Y" => seen.mark("x11"),
        "f" => seen.mark("background"),
        "g" | "D" | "L" | "R" | "w" => seen.mark("forward"),
        "M" | "O" | "S" => seen.mark("control"),
        "N" => {
            seen.no_session = true;
            seen.mark("no-session");
        }
        "s" => {
            seen.subsystem = true;
            seen.mark("subsystem");
        }
        "E" => seen.mark("log-file"),
        "I" => seen.mark("local-exec"),
        "F" => {
            if value != PINNED_CONFIG {
                seen.mark("local-exec");
            }
        }
        "G" | "V" | "Q" => seen.info = true,
        "W" => seen.stdio = Some(value),
        "J" => jump(&value, seen)?,
        "o" => config_line(&value, seen)?,
        "P" => return Err("-P is a flag before OpenSSH 9.8 and takes a tag after; the gate does not guess which".into()),
        other => return Err(format!("option -{other} is not handled")),
    }
    Ok(())
}

/// One `-o` line: `Keyword=Value`, `Keyword Value` or `Keyword = Value` (`readconf.c`
/// `process_config_line`; keywords are case-insensitive).
fn config_line(line: &str, seen: &mut Seen) -> Result<(), String> {
    let line = line.trim_start_matches([' ', '\t']);
    let end = line.find([' ', '\t', '=']).unwrap_or(line.len());
    let (keyword, rest) = line.split_at(end);
    let rest = rest.trim_start_matches([' ', '\t']);
    let rest = rest.strip_prefix('=').unwrap_or(rest).trim_matches([' ', '\t', '\r', '\n']);
    let value = rest.trim_matches('"');
    if keyword.is_empty() {
        return Err(format!("-o {line:?} names no option"));
    }
    let lower = keyword.to_ascii_lowercase();
    let Some((_, k)) = KEYWORDS.iter().find(|(name, _)| *name == lower) else {
        return Err(format!("ssh option {keyword} is not known to the gate"));
    };
    let off = matches!(value.to_ascii_lowercase().as_str(), "no" | "false" | "off");
    match *k {
        K::Fine => {}
        K::Mark(m) => seen.mark(m),
        K::UnlessOff(m) => {
            if !off {
                seen.mark(m);
            }
        }
        K::Tty => {
            if !matches!(value.to_ascii_lowercase().as_str(), "no" | "auto") {
                seen.mark("tty");
            }
        }
        K::UnlessNone(m) => {
            if !value.eq_ignore_ascii_case("none") {
                seen.mark(m);
            }
        }
        K::User => {
            seen.user.get_or_insert(value.to_string());
        }
        K::Port => {
            seen.port.get_or_insert(value.to_string());
        }
        K::Jump => jump(value, seen)?,
        K::SendEnv => {
            for var in value.split_whitespace() {
                let var = var.trim_matches('"');
                if !(var.starts_with('-') || SENDABLE.contains(&var)) {
                    seen.mark("remote-env");
                }
            }
        }
        K::StrictHostKeyChecking => match value.to_ascii_lowercase().as_str() {
            "yes" | "true" | "ask" | "accept-new" => {}
            "no" | "false" | "off" => seen.mark("host-checks"),
            other => return Err(format!("StrictHostKeyChecking={other} is not a value ssh knows")),
        },
        K::SessionType => match value.to_ascii_lowercase().as_str() {
            "default" => {}
            "none" => {
                seen.no_session = true;
                seen.mark("no-session");
            }
            "subsystem" => {
                seen.subsystem = true;
                seen.mark("subsystem");
            }
            other => return Err(format!("SessionType={other} is not a value ssh knows")),
        },
    }
    Ok(())
}

/// `-J` / `ProxyJump`: `none`, or hops `[user@]host[:port]` / `ssh://[user@]host[:port]`
/// separated by commas. Every hop is a host the call reaches.
fn jump(value: &str, seen: &mut Seen) -> Result<(), String> {
    if value.eq_ignore_ascii_case("none") {
        return Ok(());
    }
    for hop in value.split(',') {
        let (_, host, _) = parse_hop(hop).map_err(|e| format!("jump host {hop:?}: {e}"))?;
        seen.host(&host, "jump host");
        seen.jump.push(host);
    }
    Ok(())
}

/// `[user@]host` (the user is everything before the last `@`) or `ssh://[user@]host[:port]`.
fn parse_destination(d: &str) -> Result<(Option<String>, String, Option<String>), String> {
    if let Some(rest) = d.strip_prefix("ssh://") {
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((u, h)) => (Some(u.to_string()), h),
            None => (None, rest),
        };
        let hostport = hostport.strip_suffix('/').unwrap_or(hostport);
        if hostport.contains('/') {
            return Err(format!("{d}: an ssh:// destination has no path"));
        }
        let (host, port) = split_host_port(hostport).ok_or_else(|| format!("{d} is not ssh://[user@]host[:port]"))?;
        return finish(user, host, port, d);
    }
    let (user, host) = match d.rsplit_once('@') {
        Some((u, h)) => (Some(u.to_string()), h.to_string()),
        None => (None, d.to_string()),
    };
    finish(user, host, None, d)
}

/// A jump hop (`readconf.c` `parse_jump`): `ssh://[user@]host[:port]` or `[user@]host[:port]`.
fn parse_hop(h: &str) -> Result<(Option<String>, String, Option<String>), String> {
    if h.starts_with("ssh://") {
        return parse_destination(h);
    }
    let (user, hostport) = match h.rsplit_once('@') {
        Some((u, rest)) => (Some(u.to_string()), rest),
        None => (None, h),
    };
    let (host, port) = split_host_port(hostport).ok_or_else(|| format!("{h} is not [user@]host[:port]"))?;
    finish(user, host, port, h)
}

fn finish(user: Option<String>, host: String, port: Option<String>, d: &str) -> Result<(Option<String>, String, Option<String>), String> {
    if user.as_deref() == Some("") {
        return Err(format!("{d} has an empty user name"));
    }
    if !valid_host(&host) {
        return Err(format!("{host:?} is not a host name or address"));
    }
    if let Some(p) = &port
        && (p.is_empty() || !p.bytes().all(|c| c.is_ascii_digit()))
    {
        return Err(format!("port {p:?} is not a number"));
    }
    Ok((user, host, port))
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`.
fn split_host_port(s: &str) -> Option<(String, Option<String>)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after {
            "" => Some((host.to_string(), None)),
            _ => Some((host.to_string(), Some(after.strip_prefix(':')?.to_string()))),
        };
    }
    match s.split_once(':') {
        Some((h, p)) if !p.contains(':') => Some((h.to_string(), Some(p.to_string()))),
        Some(_) => Some((s.to_string(), None)), // a bare IPv6 address
        None => Some((s.to_string(), None)),
    }
}

/// A DNS name or an IP address: letters, digits, `.`, `-`, `_` (and `:` for IPv6), not starting
/// with `-` (which ssh would read as an option on a hop).
fn valid_host(h: &str) -> bool {
    !h.is_empty()
        && !h.starts_with('-')
        && (h.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_'))
            || (h.contains(':') && h.bytes().all(|c| c.is_ascii_hexdigit() || matches!(c, b':' | b'.'))))
}

/// The items of a scan, for tests.
#[cfg(test)]
fn scan_items(args: &[String]) -> Vec<opts::Item> {
    opts::scan(args, OPTS, &BSD_GETOPT).map(|p| p.items).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;
    use pretty_assertions::assert_eq;

    fn call(a: &[&str]) -> Invocation {
        parse(&argv(a))
    }

    fn marks(a: &[&str]) -> Vec<String> {
        let inv = call(a);
        assert_eq!(inv.problem, None, "{a:?}");
        inv.actions[0].marks.iter().cloned().collect()
    }

    fn hosts(inv: &Invocation) -> Vec<(String, String)> {
        inv.claims
            .iter()
            .filter_map(|c| match c {
                Claim::SshHost { host, via } => Some((host.clone(), via.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_remote_command_is_every_word_after_the_destination_joined_by_spaces() {
        let inv = call(&["ops@ie01", "docker", "restart", "jellyfin"]);
        assert_eq!(inv.verb(), "command");
        let r = inv.remote.as_ref().unwrap();
        assert_eq!(r.command, "docker restart jellyfin");
        assert_eq!((r.host.as_str(), r.user.as_deref()), ("ie01", Some("ops")));
        assert_eq!(r.parts[0].inv.tool, Tool::Docker);
        assert_eq!(r.parts[0].inv.verb(), "restart");
        let inv = call(&["ie01", "docker restart api; rm -rf /"]);
        let r = inv.remote.as_ref().unwrap();
        assert_eq!(r.parts.iter().map(|p| p.shown()).collect::<Vec<_>>(), ["docker restart", "rm"]);
    }

    #[test]
    fn options_may_follow_the_destination_unless_a_double_dash_came_first() {
        let inv = call(&["ie01", "-p", "2222", "-l", "ops", "docker", "ps"]);
        let r = inv.remote.as_ref().unwrap();
        assert_eq!(
            (r.command.as_str(), r.port.as_deref(), r.user.as_deref()),
            ("docker ps", Some("2222"), Some("ops"))
        );
        let inv = call(&["--", "ie01", "-p", "ps"]);
        assert_eq!(inv.remote.as_ref().unwrap().command, "-p ps");
        // The first option word after the destination that is not an option starts the command.
        let inv = call(&["ie01", "docker", "-p", "1"]);
        assert_eq!(inv.remote.as_ref().unwrap().command, "docker -p 1");
        let inv = call(&["ie01", "-v", "--", "-x"]);
        assert_eq!(inv.remote.as_ref().unwrap().command, "-x");
    }

    #[test]
    fn clusters_and_attached_values_are_read_like_getopt() {
        assert_eq!(
            scan_items(&argv(&["-tvp22", "-oBatchMode=yes", "h"])).len(),
            5 // t, v, p=22, o, h
        );
        let inv = call(&["-qtp2222", "-oConnectTimeout=5", "-o", "BatchMode yes", "-luser", "h", "uptime"]);
        assert_eq!(inv.problem, None);
        let r = inv.remote.as_ref().unwrap();
        assert_eq!((r.port.as_deref(), r.user.as_deref()), (Some("2222"), Some("user")));
    }

    #[test]
    fn the_first_user_and_port_win_as_in_ssh() {
        let r = call(&["-l", "a", "b@h", "-l", "c", "uptime"]).remote.unwrap();
        assert_eq!(r.user.as_deref(), Some("a"));
        let r = call(&["b@h", "-l", "c", "uptime"]).remote.unwrap();
        assert_eq!(r.user.as_deref(), Some("b"));
        let r = call(&["ssh://h:2", "-p", "1", "uptime"]).remote.unwrap();
        assert_eq!(r.port.as_deref(), Some("2"));
        let r = call(&["ssh://u@h:2200", "uptime"]).remote.unwrap();
        assert_eq!(
            (r.user.as_deref(), r.host.as_str(), r.port.as_deref()),
            (Some("u"), "h", Some("2200"))
        );
        let r = call(&["-p", "1", "ssh://h:2", "uptime"]).remote.unwrap();
        assert_eq!(r.port.as_deref(), Some("1"));
        let r = call(&["a@b@h", "uptime"]).remote.unwrap();
        assert_eq!((r.user.as_deref(), r.host.as_str()), (Some("a@b"), "h"));
    }

    #[test]
    fn every_host_the_call_reaches_is_claimed() {
        let inv = call(&["-J", "u@bast1:2201,ssh://bast2", "-o", "ProxyJump=bast3", "ie01", "uptime"]);
        assert_eq!(
            hosts(&inv),
            [
                ("bast1".to_string(), "jump host".to_string()),
                ("bast2".into(), "jump host".into()),
                ("bast3".into(), "jump host".into()),
                ("ie01".into(), "destination".into())
            ]
        );
        assert_eq!(
            hosts(&call(&["-J", "none", "ie01", "uptime"])),
            [("ie01".to_string(), "destination".to_string())]
        );
        assert_eq!(hosts(&call(&["::1", "uptime"]))[0].0, "::1");
        // ssh takes no brackets in a plain destination (only in ssh:// and in -J).
        assert!(call(&["[::1]", "uptime"]).problem.is_some());
        assert_eq!(hosts(&call(&["ssh://[fe80::1]:22", "uptime"]))[0].0, "fe80::1");
    }

    #[test]
    fn forms_that_are_not_a_plain_command_carry_their_marks() {
        assert_eq!(marks(&["-L", "5432:db:5432", "h", "uptime"]), ["forward"]);
        assert_eq!(marks(&["-NfD1080", "h"]), ["background", "forward", "no-session"]);
        assert_eq!(marks(&["-M", "-S", "/tmp/s", "h", "uptime"]), ["control"]);
        assert_eq!(marks(&["-A", "h", "uptime"]), ["credentials"]);
        assert_eq!(marks(&["-X", "h", "uptime"]), ["x11"]);
        assert_eq!(marks(&["-F", "/home/a/.ssh/evil", "h", "uptime"]), ["local-exec"]);
        assert_eq!(marks(&["-F", PINNED_CONFIG, "h", "uptime"]), Vec::<String>::new());
        assert_eq!(marks(&["-I", "/tmp/p.so", "h", "uptime"]), ["local-exec"]);
        assert_eq!(marks(&["-E", "/tmp/log", "h", "uptime"]), ["log-file"]);
        assert_eq!(marks(&["-oProxyCommand=nc %h %p", "h", "uptime"]), ["local-exec"]);
        assert_eq!(
            marks(&["-o", "localcommand=id", "-o", "PermitLocalCommand=yes", "h", "uptime"]),
            ["local-exec"]
        );
        assert_eq!(marks(&["-o", "StrictHostKeyChecking=no", "h", "uptime"]), ["host-checks"]);
        assert_eq!(
            marks(&["-o", "StrictHostKeyChecking accept-new", "h", "uptime"]),
            Vec::<String>::new()
        );
        assert_eq!(marks(&["-o", "UserKnownHostsFile=/dev/null", "h", "uptime"]), ["host-checks"]);
        assert_eq!(marks(&["-o", "HostName=10.0.0.9", "h", "uptime"]), ["retarget"]);
        assert_eq!(marks(&["-o", "RemoteCommand=id", "h"]), ["remote-command"]);
        assert_eq!(marks(&["-o", "SetEnv=DOCKER_HOST=tcp://x", "h", "uptime"]), ["remote-env"]);
        assert_eq!(
            marks(&["-o", "SendEnv=GIT_PROTOCOL", "-o", "SendEnv LANG LC_*", "h", "uptime"]),
            Vec::<String>::new()
        );
        assert_eq!(marks(&["-o", "SendEnv=DOCKER_HOST", "h", "uptime"]), ["remote-env"]);
        assert_eq!(
            marks(&[
                "-o",
                "ForwardAgent=no",
                "-o",
                "ControlMaster=no",
                "-o",
                "ControlPath=none",
                "h",
                "uptime"
            ]),
            Vec::<String>::new()
        );
        assert_eq!(marks(&["-o", "ControlMaster=auto", "h", "uptime"]), ["control"]);
        assert_eq!(
            marks(&[
                "-o",
                "ConnectTimeout=5",
                "-o",
                "BatchMode=yes",
                "-i",
                "k",
                "-p",
                "22",
                "h",
                "uptime"
            ]),
            Vec::<String>::new()
        );
        assert_eq!(call(&["-s", "h", "sftp"]).verb(), "subsystem");
        assert_eq!(call(&["h"]).verb(), "login");
        assert_eq!(call(&["-V"]).verb(), "info");
        assert_eq!(call(&["-G", "h"]).verb(), "info");
    }

    #[test]
    fn the_jump_hop_openssh_runs_is_recognised_and_claims_its_parent() {
        // What `ssh -J u1@bast1:2201,u2@bast2 -p 2222 target` runs (observed with OpenSSH 9.2).
        let inv = call(&[
            "-l",
            "u2",
            "-J",
            "u1@bast1:2201",
            "-F",
            PINNED_CONFIG,
            "-W",
            "[target]:2222",
            "bast2",
        ]);
        assert_eq!(inv.verb(), "jump");
        assert!(inv.claims.iter().any(|c| matches!(c, Claim::Parent { tool: Tool::Ssh, .. })));
        assert_eq!(
            hosts(&inv).into_iter().map(|(h, _)| h).collect::<Vec<_>>(),
            ["bast1", "bast2", "target"]
        );
        let inv = call(&["-l", "u1", "-p", "2201", "-F", PINNED_CONFIG, "-vv", "-W", "[target]:22", "bast1"]);
        assert_eq!(inv.verb(), "jump");
        // Any other option, or a command, and -W is plain forwarding.
        assert_eq!(marks(&["-o", "BatchMode=yes", "-W", "db:5432", "bast"]), ["forward"]);
        assert!(call(&["-W", "db:5432", "bast", "uptime"]).problem.is_some());
    }

    #[test]
    fn calls_ssh_would_reject_or_the_gate_cannot_place_are_problems() {
        for a in [
            &["-Z", "h"][..],
            &["--help"],
            &["-o", "Frobnicate=yes", "h", "uptime"],
            &["-o", "=yes", "h", "uptime"],
            &["-P", "tag", "h", "uptime"],
            &["-p"],
            &[],
            &["-v"],
            &["@h", "uptime"],
            &["-oProxyJump=-oProxyCommand=x", "h", "uptime"],
            &["h;id", "uptime"],
            &["ssh://h/path", "uptime"],
            &["ssh://h:port", "uptime"],
            &["-o", "StrictHostKeyChecking=maybe", "h", "uptime"],
            &["h", "docker ps 'unterminated"],
            &["h", " "],
        ] {
            assert!(call(a).problem.is_some(), "{a:?}: {:?}", call(a));
        }
    }
}
