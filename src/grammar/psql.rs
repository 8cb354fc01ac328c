//! psql 15 as Debian ships it: Debian's `pg_wrapper` takes out one `--cluster`, then glibc
//! `getopt_long` reads psql's option table (unique-prefix abbreviations, clusters, permutation).
//!
//! What the call does becomes one action per thing psql will run:
//!
//! - each `-c` string: a leading backslash makes it one meta-command (psql runs only the first
//!   one in the string); anything else goes to the server verbatim. It is split into statements
//!   by a lexer that follows the server's (quotes, `E''` escapes, `$tag$` quoting, nested
//!   comments, string continuation), and each statement is classified by [`super::sql`]
//!   (sqlparser): `sql select`, `sql insert`, …, and one `function …` action per call;
//! - each script (`-f FILE`, `-f -`, or stdin when there is no `-c`/`-f`/`-l`): a `script`
//!   action, then the actions of its meta-commands and statements, split the way psql's own
//!   lexer splits them. The gate reads the script before the decision ([`Inputs`]); a script
//!   that was not read is marked `unread`, and stdin on a terminal is `interactive`;
//! - `-o`, `-L`, `-l`, `--help`, `-V`;
//! - a dbname given as a connection string or URI (`-d` or positional): `conninfo`;
//! - a backquote in a meta-command or a `-v` value (a shell command): `backquote`.
//!
//! The role a call asks for (`-U`, the second positional, `user=` or `user@` in a connection
//! string) is a [`Claim::PinnedIfSet`] against the operator's pinned `PGUSER` (or `PGSERVICE`).
//!
//! Text the lexer cannot place with certainty (an unterminated quote, a number run into a word, a
//! `U&"…"` identifier, a `$` inside a name, a string that ends elsewhere when
//! `standard_conforming_strings` is off), psql variable interpolation in a script (`:name`), and
//! SQL sqlparser cannot parse are grammar problems: refused at every tier.
//!
//! This module only describes the call; tiers live in `policy/psql.yaml`. It reads no file and no
//! stdin: the gate hands it what it read.

use crate::grammar::opts::{self, Item, Opt, Parsed, Style};
use crate::grammar::sql::{self, Dialect};
use crate::grammar::{Action, Claim, Input, Inputs, Invocation, LocalFile, Sources, Understood};
use crate::tool::Tool;

/// `-X` first: psql must not run `psqlrc` (system or `PSQLRC`), which may hold `\!`.
pub const PREPEND: &[&str] = &["-X"];

/// psql 15 `startup.c` `parse_psql_options`: optstring `aAbc:d:eEf:F:h:HlL:no:p:P:qR:sStT:U:v:VwWxXz?01`
/// and its long options. `--set` and `--variable` are one option (same value `v`), so `--v` is
/// ambiguous only with `--version`.
const OPTS: &[Opt] = &[
    Opt::flag("echo-all", &["echo-all"], &['a']),
    Opt::flag("no-align", &["no-align"], &['A']),
    Opt::flag("echo-errors", &["echo-errors"], &['b']),
    Opt::value("command", &["command"], &['c']),
    Opt::value("dbname", &["dbname"], &['d']),
    Opt::flag("echo-queries", &["echo-queries"], &['e']),
    Opt::flag("echo-hidden", &["echo-hidden"], &['E']),
    Opt::value("file", &["file"], &['f']),
    Opt::value("field-separator", &["field-separator"], &['F']),
    Opt::value("host", &["host"], &['h']),
    Opt::flag("html", &["html"], &['H']),
    Opt::flag("list", &["list"], &['l']),
    Opt::value("log-file", &["log-file"], &['L']),
    Opt::flag("no-readline", &["no-readline"], &['n']),
    Opt::value("output", &["output"], &['o']),
    Opt::value("port", &["port"], &['p']),
    Opt::value("pset", &["pset"], &['P']),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::value("record-separator", &["record-separator"], &['R']),
    Opt::flag("single-step", &["single-step"], &['s']),
    Opt::flag("single-line", &["single-line"], &['S']),
    Opt::flag("tuples-only", &["tuples-only"], &['t']),
    Opt::value("table-attr", &["table-attr"], &['T']),
    Opt::value("username", &["username"], &['U']),
    Opt::value("set", &["set", "variable"], &['v']),
    Opt::flag("version", &["version"], &['V']),
    Opt::flag("no-password", &["no-password"], &['w']),
    Opt::flag("password", &["password"], &['W']),
    Opt::flag("expanded", &["expanded"], &['x']),
    Opt::flag("no-psqlrc", &["no-psqlrc"], &['X']),
    Opt::flag("field-separator-zero", &["field-separator-zero"], &['z']),
    Opt::flag("record-separator-zero", &["record-separator-zero"], &['0']),
    Opt::flag("single-transaction", &["single-transaction"], &['1']),
    // `-?` is help only as a word of its own (psql checks `argv[optind - 1]`).
    Opt::flag("help-short", &[], &['?']),
    Opt::opt_value("help", &["help"], &[]),
    Opt::flag("csv", &["csv"], &[]),
];

pub fn parse(args: &[String]) -> Invocation {
    parse_with(args, &Inputs::default())
}

/// The call, with the scripts it reads as the gate found them.
pub fn parse_with(args: &[String], inputs: &Inputs) -> Invocation {
    Invocation::new(Tool::Psql, args).understood(read(args, inputs))
}

/// The scripts psql would read: every `-f FILE` (the argv index of its value), and stdin for
/// `-f -` or a call with nothing else to run.
pub fn sources(args: &[String]) -> Sources {
    let Ok((parsed, index)) = scanned(args) else {
        return Sources::default();
    };
    let mut out = Sources::default();
    let mut runs_input = false;
    for f in parsed.opts() {
        match f.id.as_str() {
            "file" => {
                runs_input = true;
                match f.value.as_deref() {
                    Some("-") => out.stdin = true,
                    Some(v) => out.files.push((v.to_string(), index[f.at])),
                    None => {}
                }
            }
            "command" | "list" | "help" | "help-short" | "version" => runs_input = true,
            _ => {}
        }
    }
    if !runs_input {
        out.stdin = true;
    }
    out
}

/// argv without pg_wrapper's `--cluster`, scanned; and for each scanned word its index in argv.
fn scanned(args: &[String]) -> Result<(Parsed, Vec<usize>), String> {
    let (argv, index) = without_cluster(args)?;
    Ok((opts::scan(&argv, OPTS, &Style::GETOPT_LONG)?, index))
}

/// psql variables that change where psql ends a statement; the gate's split would differ.
const SPLIT_VARIABLES: &[&str] = &["SINGLELINE", "SINGLESTEP"];

/// The local files a call reads and writes (`-o`, `-L`, `\o`, `\g`, `\copy … to`, …), and whether
/// a `\cd` moved psql's working directory (after which a relative name means something else).
#[derive(Default)]
struct Files {
    list: Vec<LocalFile>,
    cd: bool,
}

impl Files {
    fn push(&mut self, f: LocalFile) -> Result<(), String> {
        if self.cd && !f.path.starts_with('/') {
            return Err(format!(
                "{} {} after \\cd: the gate cannot tell which directory the name is in",
                f.flag, f.path
            ));
        }
        self.list.push(f);
        Ok(())
    }
}

fn read(args: &[String], inputs: &Inputs) -> Result<Understood, String> {
    let (parsed, _) = scanned(args)?;
    let mut out = Vec::new();
    let mut claims = Vec::new();
    let mut files = Files::default();
    // Without -c, -f or -l psql reads a script from stdin (or runs interactively).
    let mut runs_input = false;
    let mut stdin_done = false;
    let mut file_no = 0;
    let mut reads_script = false;
    let mut split_change = None;
    let mut dbname_given = parsed.opts().any(|f| f.id == "dbname");
    let mut user_given = parsed.opts().any(|f| f.id == "username");
    for item in &parsed.items {
        let f = match item {
            Item::Opt(f) => f,
            Item::Pos(p) => {
                // startup.c: the first positional is the dbname unless -d was given, the next the
                // user name unless -U was; more are ignored with a warning.
                if !dbname_given {
                    dbname_given = true;
                    out.extend(conninfo(p, &mut claims)?);
                } else if !user_given {
                    user_given = true;
                    claims.push(role(p, "the user name argument"));
                }
                continue;
            }
            Item::Unknown { written, .. } => return Err(format!("unknown option {written}")),
        };
        let value = f.value.as_deref().unwrap_or_default();
        match f.id.as_str() {
            "command" => {
                runs_input = true;
                match value.strip_prefix('\\') {
                    Some(meta) => out.extend(meta_command(meta, &mut files)?),
                    None => out.extend(sql_text(value)?),
                }
            }
            "file" => {
                runs_input = true;
                reads_script = true;
                if value == "-" {
                    if !stdin_done {
                        stdin_done = true;
                        out.extend(script_input("stdin", &inputs.stdin, &mut files)?);
                    }
                } else {
                    let input = inputs.files.get(file_no).unwrap_or(&Input::Unread);
                    file_no += 1;
                    out.extend(script_input("file", input, &mut files)?);
                }
            }
            "list" => {
                runs_input = true;
                out.push(Action::new("list"));
            }
            "output" => {
                let a = Action::new("output");
                if value.starts_with('|') {
                    out.push(a.mark("pipe"));
                } else {
                    files.push(LocalFile::write(value, opt_name(&f.written)))?;
                    out.push(a);
                }
            }
            "log-file" => {
                files.push(LocalFile::write(value, opt_name(&f.written)))?;
                out.push(Action::new("log-file"));
            }
            "dbname" => out.extend(conninfo(value, &mut claims)?),
            "host" => claims.push(destination("PGHOST", value, &f.written)),
            "port" => claims.push(destination("PGPORT", value, &f.written)),
            "username" => claims.push(role(value, &f.written)),
            "set" => {
                if value.contains('`') {
                    out.push(Action::new("backquote").mark("variable"));
                }
                let name = value.split('=').next().unwrap_or_default();
                if SPLIT_VARIABLES.contains(&name) {
                    split_change = Some(format!("{} sets {name}", f.written));
                }
            }
            "single-line" | "single-step" => split_change = Some(f.written.clone()),
            "help" => {
                if let Some(topic) = f.value.as_deref()
                    && !matches!(topic, "options" | "commands" | "variables")
                {
                    return Err(format!("{} is not a help topic psql knows", f.written));
                }
                runs_input = true;
                out.push(Action::new("help"));
            }
            "help-short" => {
                if f.written != "-?" {
                    return Err(format!("-? inside {} is not help to psql, but an unknown option", f.written));
                }
                runs_input = true;
                out.push(Action::new("help"));
            }
            "version" => {
                runs_input = true;
                out.push(Action::new("version"));
            }
            _ => {}
        }
    }
    if !runs_input {
        reads_script = true;
        out.extend(script_input("stdin", &inputs.stdin, &mut files)?);
    }
    if reads_script && let Some(what) = split_change {
        return Err(format!("{what}, which changes where psql ends a statement in a script"));
    }
    Ok((out, claims, files.list))
}

/// `--output=FILE` → `--output`; `-o` stays `-o`.
fn opt_name(written: &str) -> &str {
    written.split('=').next().unwrap_or(written)
}

/// The role psql would log in as must be the pinned one, when the operator pins one.
fn role(value: &str, flag: &str) -> Claim {
    Claim::PinnedIfSet {
        var: "PGUSER",
        value: value.to_string(),
        flag: flag.to_string(),
        exclusive: &["PGSERVICE"],
    }
}

/// Where psql connects, as the call names it: with a pinned PGPASSWORD it must be the pinned one.
fn destination(var: &'static str, value: &str, flag: &str) -> Claim {
    Claim::Destination {
        var,
        value: value.to_string(),
        flag: flag.to_string(),
    }
}

/// A script source: `script` (marked by where it comes from), then what the script runs.
fn script_input(from: &str, input: &Input, files: &mut Files) -> Result<Vec<Action>, String> {
    let head = Action::new("script").mark(from);
    match input {
        Input::Unread => Ok(vec![head.mark("unread")]),
        Input::Terminal => Ok(vec![Action::new("interactive")]),
        Input::Failed(why) => Err(why.clone()),
        Input::Text(text) => {
            let mut out = vec![head];
            out.extend(script(text, files).map_err(|e| format!("{from} script: {e}"))?);
            Ok(out)
        }
    }
}

/// Debian's `pg_wrapper` (Perl, runs first) removes the first `--cluster VER/NAME` or
/// `--cluster=VER/NAME` before `--`, whatever precedes it, without knowing psql's options.
/// Returns what psql sees and, for each of its words, the index in `args`.
fn without_cluster(args: &[String]) -> Result<(Vec<String>, Vec<usize>), String> {
    let mut out = args.to_vec();
    let mut index: Vec<usize> = (0..args.len()).collect();
    for i in 0..out.len() {
        if out[i] == "--" {
            break;
        }
        if out[i] == "--cluster" {
            if i + 1 >= out.len() {
                return Err("--cluster needs a value (VERSION/CLUSTER)".into());
            }
            out.drain(i..i + 2);
            index.drain(i..i + 2);
            break;
        }
        if out[i].strip_prefix("--cluster=").is_some_and(wrapper_takes) {
            out.remove(i);
            index.remove(i);
            break;
        }
    }
    Ok((out, index))
}

/// `pg_wrapper`'s `/^--cluster=(\d+\.?\d)\/(.+)/` on what follows `=`. Anything else is left
/// for psql, which rejects it as an unknown option.
fn wrapper_takes(v: &str) -> bool {
    let Some((version, name)) = v.split_once('/') else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let version_ok = match version.split_once('.') {
        Some((major, minor)) => digits(major) && minor.len() == 1 && digits(minor),
        None => version.len() >= 2 && digits(version),
    };
    version_ok && name.chars().next().is_some_and(|c| c != '\n')
}

// ---------------------------------------------------------------------------------------------
// Connection strings

/// libpq 15 connection keywords (`PQconninfoOptions`), plus later ones that only select how to
/// connect. Anything else is refused: libpq would reject it, and newer keys may write files
/// (`sslkeylogfile`) or start flows (`oauth_*`).
const CONNINFO_KEYS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "channel_binding",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "sslmode",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "sslcertmode",
    "sslnegotiation",
    "requirepeer",
    "require_auth",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "gssencmode",
    "gssdelegation",
    "krbsrvname",
    "gsslib",
    "service",
    "replication",
    "target_session_attrs",
    "load_balance_hosts",
];

/// A dbname that libpq expands (`recognized_connection_string`: a URI prefix or any `=`) becomes
/// a `conninfo` action; marks for the keys that change the session (`options` passes `-c GUC`,
/// `service` reads them from a file the call does not show), the protocol (`replication`), or
/// the client encoding the server reads the SQL in (`charset`: `client_encoding` other than
/// UTF8, [`sql::safe_client_charset`]).
/// The user it names is a role claim.
fn conninfo(s: &str, claims: &mut Vec<Claim>) -> Result<Option<Action>, String> {
    let pairs = if let Some(rest) = s.strip_prefix("postgresql://").or_else(|| s.strip_prefix("postgres://")) {
        uri_params(rest)?
    } else if s.contains('=') {
        keyword_pairs(s)?
    } else {
        return Ok(None);
    };
    let mut a = Action::new("conninfo");
    for (key, value) in pairs {
        let uri_only = key == "ssl";
        if !CONNINFO_KEYS.contains(&key.as_str()) && !uri_only {
            return Err(format!("connection string keyword {key:?} is not one libpq accepts"));
        }
        if matches!(key.as_str(), "options" | "service" | "replication") {
            a.add(key.as_str());
        }
        if key == "client_encoding" && !sql::safe_client_charset(&value, Dialect::Postgres) {
            a.add("charset");
        }
        match key.as_str() {
            "user" => claims.push(role(&value, "user= in the connection string")),
            "host" => claims.push(destination("PGHOST", &value, "host= in the connection string")),
            "hostaddr" => claims.push(destination("PGHOSTADDR", &value, "hostaddr= in the connection string")),
            "port" => claims.push(destination("PGPORT", &value, "port= in the connection string")),
            _ => {}
        }
    }
    Ok(Some(a))
}

/// libpq `conninfo_parse`: `key = value` pairs; a value is a word or `'…'`, `\` escapes.
fn keyword_pairs(s: &str) -> Result<Vec<(String, String)>, String> {
    let b = s.as_bytes();
    let space = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r');
    let mut pairs = Vec::new();
    let mut i = 0;
    loop {
        while b.get(i).is_some_and(|&c| space(c)) {
            i += 1;
        }
        if i >= b.len() {
            return Ok(pairs);
        }
        let start = i;
        while b.get(i).is_some_and(|&c| c != b'=' && !space(c)) {
            i += 1;
        }
        let key = String::from_utf8_lossy(&b[start..i]).into_owned();
        while b.get(i).is_some_and(|&c| space(c)) {
            i += 1;
        }
        if b.get(i) != Some(&b'=') {
            return Err(format!("connection string: missing \"=\" after {key:?}"));
        }
        i += 1;
        while b.get(i).is_some_and(|&c| space(c)) {
            i += 1;
        }
        let mut value = Vec::new();
        if b.get(i) == Some(&b'\'') {
            i += 1;
            loop {
                match b.get(i) {
                    None => return Err(format!("connection string: unterminated quoted value of {key:?}")),
                    Some(b'\\') => {
                        if let Some(&c) = b.get(i + 1) {
                            value.push(c);
                        }
                        i += 2;
                    }
                    Some(b'\'') => {
                        i += 1;
                        break;
                    }
                    Some(&c) => {
                        value.push(c);
                        i += 1;
                    }
                }
            }
        } else {
            while let Some(&c) = b.get(i) {
                if space(c) {
                    break;
                }
                if c == b'\\' {
                    if let Some(&n) = b.get(i + 1) {
                        value.push(n);
                    }
                    i += 2;
                } else {
                    value.push(c);
                    i += 1;
                }
            }
        }
        pairs.push((key, String::from_utf8_lossy(&value).into_owned()));
    }
}

/// libpq `conninfo_uri_parse`: the user before `@` (percent-decoded), then `?k=v&k=v`, both sides
/// percent-decoded. A `?` inside the user part only makes the parse stricter (its pieces are
/// refused as unknown keys).
fn uri_params(rest: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let mut hostspec = &rest[..authority_end];
    if let Some(at) = rest[..authority_end].rfind('@') {
        let userinfo = &rest[..at];
        let user = userinfo.split(':').next().unwrap_or_default();
        if !user.is_empty() {
            pairs.push(("user".to_string(), percent_decode(user)?));
        }
        hostspec = &rest[at + 1..authority_end];
    }
    // `host[:port][,host[:port]…]`, an IPv6 address in brackets: where libpq connects.
    if !hostspec.is_empty() {
        let mut hosts = Vec::new();
        let mut ports = Vec::new();
        for spec in hostspec.split(',') {
            let (host, port) = match spec.strip_prefix('[') {
                Some(v6) => match v6.split_once(']') {
                    Some((h, rest)) => (h, rest.strip_prefix(':').unwrap_or("")),
                    None => return Err(format!("connection URI: unterminated [ in {spec:?}")),
                },
                None => spec.split_once(':').unwrap_or((spec, "")),
            };
            hosts.push(percent_decode(host)?);
            ports.push(percent_decode(port)?);
        }
        if hosts.iter().any(|h| !h.is_empty()) {
            pairs.push(("host".to_string(), hosts.join(",")));
        }
        if ports.iter().any(|p| !p.is_empty()) {
            pairs.push(("port".to_string(), ports.join(",")));
        }
    }
    let Some((_, query)) = rest.split_once('?') else {
        return Ok(pairs);
    };
    for param in query.split('&') {
        let Some((k, v)) = param.split_once('=') else {
            return Err(format!("connection URI parameter {param:?} has no \"=\""));
        };
        pairs.push((percent_decode(k)?, percent_decode(v)?));
    }
    Ok(pairs)
}

fn percent_decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c == b'%' {
            let hex = b.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(v) if v != 0 => out.push(v),
                _ => return Err(format!("connection URI: bad percent-encoding in {s:?}")),
            }
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

// ---------------------------------------------------------------------------------------------
// Meta-commands (`-c '\…'`)

/// psql 15 `exec_command` names and their canonical verb. `\copy` is matched case-insensitively
/// and every name starting with `d` goes to the describe commands. psql 15 runs nothing for any
/// other name ("invalid command"; the old retry as a one-letter command with the rest as its
/// argument is gone), so the verb is the name as typed and the policy leaves it unclassified.
const META: &[(&str, &str)] = &[
    ("a", "\\a"),
    ("C", "\\C"),
    ("c", "\\c"),
    ("connect", "\\c"),
    ("cd", "\\cd"),
    ("conninfo", "\\conninfo"),
    ("copyright", "\\copyright"),
    ("crosstabview", "\\crosstabview"),
    ("e", "\\e"),
    ("edit", "\\e"),
    ("ef", "\\ef"),
    ("ev", "\\ev"),
    ("echo", "\\echo"),
    ("qecho", "\\qecho"),
    ("warn", "\\warn"),
    ("elif", "\\elif"),
    ("else", "\\else"),
    ("endif", "\\endif"),
    ("encoding", "\\encoding"),
    ("errverbose", "\\errverbose"),
    ("f", "\\f"),
    ("g", "\\g"),
    ("gx", "\\g"),
    ("gdesc", "\\gdesc"),
    ("getenv", "\\getenv"),
    ("gexec", "\\gexec"),
    ("gset", "\\gset"),
    ("h", "\\h"),
    ("help", "\\h"),
    ("H", "\\H"),
    ("html", "\\H"),
    ("i", "\\i"),
    ("include", "\\i"),
    ("ir", "\\ir"),
    ("include_relative", "\\ir"),
    ("if", "\\if"),
    ("l", "\\l"),
    ("list", "\\l"),
    ("l+", "\\l"),
    ("list+", "\\l"),
    ("lo_export", "\\lo_export"),
    ("lo_import", "\\lo_import"),
    ("lo_list", "\\lo_list"),
    ("lo_list+", "\\lo_list"),
    ("lo_unlink", "\\lo_unlink"),
    ("o", "\\o"),
    ("out", "\\o"),
    ("p", "\\p"),
    ("print", "\\p"),
    ("password", "\\password"),
    ("prompt", "\\prompt"),
    ("pset", "\\pset"),
    ("q", "\\q"),
    ("quit", "\\q"),
    ("r", "\\r"),
    ("reset", "\\r"),
    ("restrict", "\\restrict"),
    ("unrestrict", "\\unrestrict"),
    ("s", "\\s"),
    ("set", "\\set"),
    ("setenv", "\\setenv"),
    ("sf", "\\sf"),
    ("sf+", "\\sf"),
    ("sv", "\\sv"),
    ("sv+", "\\sv"),
    ("t", "\\t"),
    ("T", "\\T"),
    ("timing", "\\timing"),
    ("unset", "\\unset"),
    ("w", "\\w"),
    ("write", "\\w"),
    ("watch", "\\watch"),
    ("x", "\\x"),
    ("z", "\\z"),
    ("!", "\\!"),
    ("?", "\\?"),
];

/// The canonical verb psql 15 runs for a command name.
fn resolve_meta(name: &str) -> Option<&'static str> {
    if name.eq_ignore_ascii_case("copy") {
        return Some("\\copy");
    }
    if name.starts_with('d') {
        return Some("\\d");
    }
    META.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// The first meta-command of a `-c '\…'` (psql ignores the rest of the string). `body` is the
/// text after the leading backslash. The files it reads or writes go to `files`.
fn meta_command(body: &str, files: &mut Files) -> Result<Vec<Action>, String> {
    // psqlscanslash.l: the name ends at [ \t\n\r\f] or a backslash.
    let end = body.find([' ', '\t', '\n', '\r', '\x0c', '\\']).unwrap_or(body.len());
    let (name, rest) = body.split_at(end);
    let verb = resolve_meta(name).map_or_else(|| format!("\\{name}"), str::to_string);
    let mut a = Action::new(verb.clone());
    // OT_FILEPIPE arguments: a `|` starts a shell pipe. Any `|` counts (the `\g (…)` options
    // may come first).
    if matches!(verb.as_str(), "\\o" | "\\g" | "\\w") && rest.contains('|') {
        a.add("pipe");
    }
    if verb == "\\copy"
        && rest
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .any(|w| w.eq_ignore_ascii_case("program"))
    {
        a.add("program");
    }
    if verb == "\\encoding" && encoding_change(rest) {
        a.add("charset");
    }
    meta_files(&verb, rest, files)?;
    let mut out = vec![a];
    if body.contains('`') {
        out.push(Action::new("backquote").mark("meta-command"));
    }
    Ok(out)
}

/// The local files a meta-command reads or writes, with its arguments read as psql's
/// `psql_scan_slash_option` reads them (whitespace-separated, `'…'` quoted with `''` and `\`
/// escapes): `\o FILE`, `\g [(…)] FILE`, `\gx`, `\w FILE`, `\s FILE`, `\lo_export OID FILE`,
/// `\copy … to|from FILE`; a pipe (`|…`) is no file. `\cd` moves the working directory.
fn meta_files(verb: &str, rest: &str, files: &mut Files) -> Result<(), String> {
    let args = slash_args(rest);
    let file = |i: usize| args.get(i).filter(|a| !a.starts_with('|') && !a.is_empty()).cloned();
    let flag = verb.to_string();
    match verb {
        "\\cd" => files.cd = true,
        "\\o" | "\\w" | "\\s" => {
            if let Some(f) = file(0) {
                files.push(LocalFile::write(f, flag))?;
            }
        }
        "\\g" => {
            // `\g (format=csv) FILE`: the options come first, in parentheses.
            let skip = usize::from(args.first().is_some_and(|a| a.starts_with('(')));
            let skip = if skip == 1 {
                args.iter().position(|a| a.ends_with(')')).map_or(args.len(), |k| k + 1)
            } else {
                0
            };
            if let Some(f) = file(skip) {
                files.push(LocalFile::write(f, flag))?;
            }
        }
        "\\lo_export" => {
            if let Some(f) = file(1) {
                files.push(LocalFile::write(f, flag))?;
            }
        }
        "\\copy" => {
            if let Some((dir, target)) = copy_target(rest) {
                let plain = !matches!(
                    target.to_ascii_lowercase().as_str(),
                    "stdin" | "stdout" | "pstdin" | "pstdout" | "program"
                );
                if plain {
                    let f = unquote(&target);
                    files.push(if dir == "to" {
                        LocalFile::write(f, "\\copy … to")
                    } else {
                        LocalFile::read(f, "\\copy … from", false)
                    })?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// A meta-command's arguments: whitespace-separated words, `'…'` kept whole (unquoted later).
fn slash_args(rest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' if quoted && chars.peek() == Some(&'\'') => {
                cur.push('\'');
                chars.next();
            }
            '\'' => quoted = !quoted,
            '\\' if quoted => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if !quoted && c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `'name'` → `name` (`''` is a quote); anything else as written.
fn unquote(s: &str) -> String {
    match s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        Some(inner) => inner.replace("''", "'"),
        None => s.to_string(),
    }
}

/// `\copy`'s direction (`to` or `from`, outside parentheses and quotes) and the word after it.
fn copy_target(rest: &str) -> Option<(String, String)> {
    let mut depth = 0i32;
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in rest.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                cur.push(c);
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.push(c);
            }
            (None, '(') => {
                depth += 1;
                cur.push(c);
            }
            (None, ')') => {
                depth -= 1;
                cur.push(c);
            }
            (None, c) if c.is_whitespace() && depth == 0 => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    let k = words
        .iter()
        .position(|w| w.eq_ignore_ascii_case("to") || w.eq_ignore_ascii_case("from"))?;
    Some((words[k].to_ascii_lowercase(), words.get(k + 1)?.clone()))
}

/// Whether `\encoding`'s argument (`rest`, the text after the name) switches the client to an
/// encoding other than UTF8. Without an argument it only prints the encoding. The argument must
/// be a plain word: quotes, escapes and `:variables` are read by psql, not here.
fn encoding_change(rest: &str) -> bool {
    let arg = rest.split('\\').next().unwrap_or_default();
    let Some(word) = arg.split([' ', '\t', '\n', '\r', '\x0c']).find(|w| !w.is_empty()) else {
        return false;
    };
    let plain = word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    !(plain && sql::safe_client_charset(word, Dialect::Postgres))
}

// ---------------------------------------------------------------------------------------------
// SQL (`-c 'SQL'`, sent verbatim; and the statements of a script)

/// One action per statement, plus one per function call. The text is lexed as the server would,
/// with and without `standard_conforming_strings` (the server's setting decides whether `\'`
/// ends a string); when the two readings differ the text is refused.
fn sql_text(text: &str) -> Result<Vec<Action>, String> {
    if text.contains('\x0b') {
        // psql 15's lexer treats a vertical tab as a character, later ones as space.
        return Err("a vertical tab in SQL text".into());
    }
    let standard = lex(text, true)?;
    let escaped = lex(text, false).map_err(|e| format!("{e} (read as a server with standard_conforming_strings=off would)"))?;
    if escaped != standard {
        return Err("SQL whose strings end elsewhere when standard_conforming_strings is off (a \\ before a quote)".into());
    }
    let mut out = Vec::new();
    let mut start = 0;
    let mut ends: Vec<usize> = standard.iter().filter(|(t, _)| *t == Tok::Punct(b';')).map(|(_, at)| *at).collect();
    ends.push(text.len());
    for end in ends {
        out.extend(sql::statement(&text[start..end], Dialect::Postgres)?);
        start = (end + 1).min(text.len());
    }
    Ok(out)
}

/// What a psql script is made of, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// SQL psql sends as one query (up to a `;` outside parentheses, or a `\g`).
    Sql(String),
    /// A meta-command line, without its backslash.
    Meta(String),
}

/// Meta-commands that send the query buffer (with no argument they are a `;`).
const SENDS: &[&str] = &["g", "gx", "gset", "gdesc", "gexec", "crosstabview", "watch"];

/// The actions of a psql script (`-f`, stdin): split as psql's lexer (psqlscan.l) splits it,
/// in both readings of `standard_conforming_strings`, which must agree.
fn script(text: &str, files: &mut Files) -> Result<Vec<Action>, String> {
    if text.contains('\x0b') {
        return Err("a vertical tab in a script".into());
    }
    let standard = pieces(text, Mode::Standard)?;
    let escaped = pieces(text, Mode::Escape).map_err(|e| format!("{e} (read with standard_conforming_strings=off)"))?;
    if standard != escaped {
        return Err("a script whose strings end elsewhere when standard_conforming_strings is off (a \\ before a quote)".into());
    }
    let mut out = Vec::new();
    for p in standard {
        match p {
            Piece::Sql(s) => out.extend(sql_text(&s)?),
            Piece::Meta(line) => {
                let name = line.split([' ', '\t', '\r', '\x0c']).next().unwrap_or_default();
                let bare = line[name.len()..].trim().is_empty();
                if bare && matches!(name, "g" | "gx") {
                    continue; // the same as `;`
                }
                out.extend(meta_command(&line, files)?);
            }
        }
    }
    Ok(out)
}

fn pieces(text: &str, plain: Mode) -> Result<Vec<Piece>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut buf = String::new();
    let mut has_tokens = false;
    let mut depth = 0usize;
    let mut i = 0;
    let finish = |buf: &mut String, has_tokens: &mut bool, out: &mut Vec<Piece>| {
        if *has_tokens {
            out.push(Piece::Sql(std::mem::take(buf)));
        }
        buf.clear();
        *has_tokens = false;
    };
    while let Some(&c) = b.get(i) {
        if c == b'\\' {
            let end = (i..b.len()).find(|&k| b[k] == b'\n').unwrap_or(b.len());
            let line = &text[i + 1..end];
            if line.contains('\\') {
                return Err(format!(
                    "more than one backslash on the meta-command line \\{}: put each meta-command on its own line",
                    line.trim_end()
                ));
            }
            if interpolates(line) {
                return Err(format!("psql variable interpolation in \\{}", line.trim_end()));
            }
            let name = line.split([' ', '\t', '\r', '\x0c']).next().unwrap_or_default();
            if has_tokens {
                if !SENDS.contains(&name) {
                    return Err(format!("the meta-command \\{name} inside an SQL statement"));
                }
                depth = 0;
                finish(&mut buf, &mut has_tokens, &mut out);
            }
            out.push(Piece::Meta(line.to_string()));
            i = end;
            continue;
        }
        if c == b':' {
            match b.get(i + 1) {
                Some(b':') => {
                    buf.push_str("::");
                    has_tokens = true;
                    i += 2;
                    continue;
                }
                Some(&n) if ident_start(n) || n == b'\'' || n == b'"' => {
                    let shown: String = text[i..].chars().take(20).collect();
                    return Err(format!("psql variable interpolation ({shown}…) in SQL"));
                }
                _ => {}
            }
        }
        let (tok, j) = step(b, i, plain)?;
        buf.push_str(&text[i..j]);
        i = j;
        let Some(tok) = tok else { continue };
        has_tokens = true;
        match tok {
            Tok::Punct(b'(') => depth += 1,
            Tok::Punct(b')') => depth = depth.saturating_sub(1),
            Tok::Punct(b';') if depth == 0 => finish(&mut buf, &mut has_tokens, &mut out),
            _ => {}
        }
    }
    finish(&mut buf, &mut has_tokens, &mut out);
    Ok(out)
}

/// psql interpolates `:name`, `:'name'` and `:"name"` in meta-command arguments too.
fn interpolates(line: &str) -> bool {
    let b = line.as_bytes();
    (0..b.len())
        .any(|i| b[i] == b':' && b.get(i + 1).is_some_and(|&n| ident_start(n) || n == b'\'' || n == b'"') && (i == 0 || b[i - 1] != b':'))
}

/// What the statement check needs from the server's lexer (`scan.l`); comments and white space
/// are dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// An unquoted identifier or keyword, ASCII-lowercased as the server does.
    Word(String),
    /// A `"quoted identifier"`, doubled quotes undone.
    Ident(String),
    /// Any string constant: `'…'`, `E'…'`, `B'…'`, `X'…'`, `N'…'`, `U&'…'`, `$tag$…$tag$`.
    Str,
    Num,
    /// `$1`.
    Param,
    /// Any other single byte: `( ) ; , .` and operator characters.
    Punct(u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `'…'` with standard_conforming_strings on, `U&'…'`: only `''` is special.
    Standard,
    /// `E'…'`, and `'…'` with standard_conforming_strings off: `\` escapes the next byte.
    Escape,
    /// `B'…'`, `X'…'`: the next quote ends it.
    Bits,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// `[A-Za-z\200-\377_]`: every byte of a non-ASCII UTF-8 character is an identifier byte.
fn ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn ident_cont(c: u8) -> bool {
    ident_start(c) || c.is_ascii_digit() || c == b'$'
}

/// Lex `sql` as the server would: each token with its byte offset. `standard_strings` is the
/// session's standard_conforming_strings.
fn lex(sql: &str, standard_strings: bool) -> Result<Vec<(Tok, usize)>, String> {
    let b = sql.as_bytes();
    let plain = if standard_strings { Mode::Standard } else { Mode::Escape };
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let (tok, j) = step(b, i, plain)?;
        if let Some(t) = tok {
            out.push((t, i));
        }
        i = j;
    }
    Ok(out)
}

/// One token (or white space or a comment, which yield none) at `i`; returns where it ends.
fn step(b: &[u8], i: usize, plain: Mode) -> Result<(Option<Tok>, usize), String> {
    let c = b[i];
    let next = b.get(i + 1).copied();
    if is_space(c) {
        Ok((None, i + 1))
    } else if c == b'-' && next == Some(b'-') {
        Ok((None, line_end(b, i)))
    } else if c == b'/' && next == Some(b'*') {
        Ok((None, block_comment(b, i)?))
    } else if c == b'\'' {
        Ok((Some(Tok::Str), string(b, i + 1, plain)?))
    } else if c == b'"' {
        let (name, j) = quoted_ident(b, i + 1)?;
        Ok((Some(Tok::Ident(name)), j))
    } else if c == b'$' {
        if next.is_some_and(|n| n.is_ascii_digit()) {
            let j = digits_end(b, i + 1);
            junk_check(b, i, j)?;
            Ok((Some(Tok::Param), j))
        } else if let Some(open_end) = dollar_delim(b, i) {
            let tag = &b[i..open_end];
            let Some(k) = find(&b[open_end..], tag) else {
                return Err(format!("unterminated dollar-quoted string {}", String::from_utf8_lossy(tag)));
            };
            Ok((Some(Tok::Str), open_end + k + tag.len()))
        } else {
            Ok((Some(Tok::Punct(c)), i + 1))
        }
    } else if ident_start(c) {
        let j = (i..b.len()).find(|&k| !ident_cont(b[k])).unwrap_or(b.len());
        // A one-letter word right before a quote is a string prefix (flex's longest match).
        let quote_next = b.get(j) == Some(&b'\'');
        let mode = match (j - i, c.to_ascii_lowercase()) {
            (1, b'e') if quote_next => Some((Mode::Escape, j + 1)),
            (1, b'b' | b'x') if quote_next => Some((Mode::Bits, j + 1)),
            (1, b'n') if quote_next => Some((plain, j + 1)),
            (1, b'u') if b.get(j) == Some(&b'&') => match b.get(j + 1) {
                Some(b'\'') => Some((Mode::Standard, j + 2)),
                Some(b'"') => return Err("a U&\"…\" identifier (unicode escapes are not read here)".into()),
                _ => None,
            },
            _ => None,
        };
        match mode {
            Some((m, start)) => Ok((Some(Tok::Str), string(b, start, m)?)),
            None => {
                let word = String::from_utf8_lossy(&b[i..j]).to_ascii_lowercase();
                if word.contains('$') {
                    // The server reads `a$$` as one name; other SQL lexers open a dollar quote.
                    return Err(format!("a $ inside the name {word}: write the name in double quotes"));
                }
                Ok((Some(Tok::Word(word)), j))
            }
        }
    } else if c.is_ascii_digit() || (c == b'.' && next.is_some_and(|n| n.is_ascii_digit())) {
        let j = number_end(b, i);
        junk_check(b, i, j)?;
        Ok((Some(Tok::Num), j))
    } else {
        Ok((Some(Tok::Punct(c)), i + 1))
    }
}

/// A number or parameter run into a word (`1e'…'`, `0x1F`, `$1abc`) lexes differently across
/// server versions (15 rejects it, older ones split it, 16 reads hex), so it is not guessed.
fn junk_check(b: &[u8], start: usize, end: usize) -> Result<(), String> {
    if b.get(end).is_some_and(|&c| ident_start(c)) {
        let stop = (end..b.len()).find(|&k| !ident_cont(b[k])).unwrap_or(b.len());
        return Err(format!(
            "a number run into a word ({}): write a space between them",
            String::from_utf8_lossy(&b[start..stop])
        ));
    }
    Ok(())
}

fn digits_end(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// `{integer}`, `{decimal}` (not eating the first dot of `1..2`) and `{real}`.
fn number_end(b: &[u8], i: usize) -> usize {
    let mut j = digits_end(b, i);
    if b.get(j) == Some(&b'.') && b.get(j + 1) != Some(&b'.') {
        j = digits_end(b, j + 1);
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(b.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        if b.get(k).is_some_and(u8::is_ascii_digit) {
            j = digits_end(b, k);
        }
    }
    j
}

fn line_end(b: &[u8], i: usize) -> usize {
    (i..b.len()).find(|&k| matches!(b[k], b'\n' | b'\r')).unwrap_or(b.len())
}

/// `/* … */`, nesting like the server's lexer. Returns the index after the comment.
fn block_comment(b: &[u8], i: usize) -> Result<usize, String> {
    let mut depth = 0usize;
    let mut j = i + 2;
    loop {
        match (b.get(j), b.get(j + 1)) {
            (None, _) => return Err("unterminated /* comment".into()),
            (Some(b'/'), Some(b'*')) => {
                depth += 1;
                j += 2;
            }
            (Some(b'*'), _) => {
                let mut k = j;
                while b.get(k) == Some(&b'*') {
                    k += 1;
                }
                if b.get(k) == Some(&b'/') {
                    if depth == 0 {
                        return Ok(k + 1);
                    }
                    depth -= 1;
                    j = k + 1;
                } else {
                    j = k;
                }
            }
            _ => j += 1,
        }
    }
}

/// The body of a quoted string from `j` (just after the opening quote). Returns the index after
/// the closing quote. `'a'<newline>'b'` is one string, continued in the same mode.
fn string(b: &[u8], mut j: usize, mode: Mode) -> Result<usize, String> {
    loop {
        match b.get(j) {
            None => return Err("unterminated quoted string".into()),
            Some(b'\\') if mode == Mode::Escape => {
                if j + 1 >= b.len() {
                    return Err("unterminated quoted string".into());
                }
                j += 2;
            }
            Some(b'\'') => {
                if mode != Mode::Bits && b.get(j + 1) == Some(&b'\'') {
                    j += 2;
                } else if let Some(k) = continuation(b, j + 1) {
                    j = k;
                } else {
                    return Ok(j + 1);
                }
            }
            Some(_) => j += 1,
        }
    }
}

/// `{quotecontinue}`: white space and `--` comments holding at least one newline, then a quote.
/// Returns the index after that quote.
fn continuation(b: &[u8], mut i: usize) -> Option<usize> {
    let mut newline = false;
    loop {
        match b.get(i) {
            Some(b' ' | b'\t' | b'\x0c') => i += 1,
            Some(b'\n' | b'\r') => {
                newline = true;
                i += 1;
            }
            Some(b'-') if b.get(i + 1) == Some(&b'-') => i = line_end(b, i),
            Some(b'\'') if newline => return Some(i + 1),
            _ => return None,
        }
    }
}

fn quoted_ident(b: &[u8], mut j: usize) -> Result<(String, usize), String> {
    let mut name = Vec::new();
    loop {
        match b.get(j) {
            None => return Err("unterminated quoted identifier".into()),
            Some(b'"') if b.get(j + 1) == Some(&b'"') => {
                name.push(b'"');
                j += 2;
            }
            Some(b'"') => return Ok((String::from_utf8_lossy(&name).into_owned(), j + 1)),
            Some(&c) => {
                name.push(c);
                j += 1;
            }
        }
    }
}

/// `{dolqdelim}` at `i`: `$$` or `$tag$` (tag: an identifier without `$`). Returns the index
/// after it.
fn dollar_delim(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    if b.get(j).is_some_and(|&c| ident_start(c)) {
        while b.get(j).is_some_and(|&c| ident_start(c) || c.is_ascii_digit()) {
            j += 1;
        }
    }
    (b.get(j) == Some(&b'$')).then_some(j + 1)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;
    use pretty_assertions::assert_eq;

    fn verbs(words: &[&str]) -> Vec<String> {
        let inv = parse(&argv(words));
        assert_eq!(inv.problem, None, "{words:?}");
        inv.actions.iter().map(|a| a.verb.clone()).collect()
    }

    fn actions_of(words: &[&str]) -> Vec<Action> {
        let inv = parse(&argv(words));
        assert_eq!(inv.problem, None, "{words:?}");
        inv.actions
    }

    fn problem(words: &[&str]) -> String {
        parse(&argv(words)).problem.unwrap_or_default()
    }

    fn act(verb: &str, marks: &[&str]) -> Action {
        marks.iter().fold(Action::new(verb), |a, m| a.mark(*m))
    }

    fn with_stdin(words: &[&str], text: &str) -> Invocation {
        let inputs = Inputs {
            stdin: Input::Text(text.into()),
            files: vec![],
        };
        parse_with(&argv(words), &inputs)
    }

    fn script_verbs(text: &str) -> Result<Vec<String>, String> {
        let inv = with_stdin(&[], text);
        match inv.problem {
            Some(p) => Err(p),
            None => Ok(inv.actions.iter().map(|a| a.verb.clone()).collect()),
        }
    }

    #[test]
    fn a_select_in_dash_c_is_one_plain_query() {
        assert_eq!(actions_of(&["-c", "select 1"]), vec![act("sql select", &[])]);
    }

    #[test]
    fn every_form_of_the_command_option_is_read() {
        for words in [
            &["-c", "select 1"][..],
            &["-cselect 1"],
            &["--command=select 1"],
            &["--command", "select 1"],
            &["--comm=select 1"],
            &["--co", "select 1"],
            &["-Xc", "select 1"],
            &["-qAtc", "select 1"],
            &["mydb", "-c", "select 1"],
            &["-c", "select 1", "mydb", "me"],
        ] {
            assert_eq!(verbs(words), vec!["sql select"], "{words:?}");
        }
    }

    #[test]
    fn ambiguous_abbreviations_are_problems() {
        assert_eq!(problem(&["--c", "select 1"]), "option --c is ambiguous");
        assert_eq!(problem(&["--v", "x=1", "-l"]), "option --v is ambiguous");
        assert_eq!(problem(&["--h", "x", "-l"]), "option --h is ambiguous");
        assert_eq!(verbs(&["--va", "x=1", "--se=y=2", "-l"]), vec!["list"]);
    }

    #[test]
    fn each_dash_c_is_judged_in_order() {
        assert_eq!(verbs(&["-c", "select 1", "-c", "delete from t"]), vec!["sql select", "sql delete"]);
    }

    #[test]
    fn semicolons_split_statements_outside_quotes_and_comments() {
        assert_eq!(verbs(&["-c", "select 1; drop table t"]), vec!["sql select", "sql drop"]);
        assert_eq!(verbs(&["-c", "select 1 -- ; drop table t"]), vec!["sql select"]);
        assert_eq!(verbs(&["-c", "select ';drop table t'"]), vec!["sql select"]);
        assert_eq!(verbs(&["-c", "select /* ; /* ; */ drop */ 1"]), vec!["sql select"]);
        assert_eq!(verbs(&["-c", "select $x$ ; drop $$ ; $x$"]), vec!["sql select"]);
        assert_eq!(verbs(&["-c", "select \"a;b\" from t;;"]), vec!["sql select"]);
    }

    #[test]
    fn a_dollar_inside_a_name_is_refused() {
        assert_eq!(
            problem(&["-c", "select a$$; drop table t; select 1"]),
            "a $ inside the name a$$: write the name in double quotes"
        );
        assert_eq!(verbs(&["-c", "select \"a$$\" from t"]), vec!["sql select"]);
    }

    #[test]
    fn a_backslash_quote_that_reads_two_ways_is_refused() {
        // standard_conforming_strings on: 'a\' ends; off: the string runs on.
        assert!(problem(&["-c", "select 'a\\''; drop table t; --'"]).contains("standard_conforming_strings is off"));
        // E'' always escapes: one reading.
        assert_eq!(verbs(&["-c", "select E'x\\'; drop table t; --'"]), vec!["sql select"]);
        // A continued E'' string keeps its escapes: both readings see the DROP (or cannot parse).
        let inv = parse(&argv(&["-c", "select E'x'\n'\\'' ; drop table t; --'"]));
        assert!(inv.problem.is_some() || inv.actions.iter().any(|a| a.verb == "sql drop"), "{inv:?}");
        // A backslash that does not move the end of a string is fine.
        assert_eq!(verbs(&["-c", "select 'C:\\temp'"]), vec!["sql select"]);
    }

    #[test]
    fn unterminated_or_unparsable_text_is_a_problem() {
        assert_eq!(problem(&["-c", "select 'a"]), "unterminated quoted string");
        assert_eq!(problem(&["-c", "select 1 /* /* */"]), "unterminated /* comment");
        assert_eq!(problem(&["-c", "select $a$ x $b$"]), "unterminated dollar-quoted string $a$");
        assert_eq!(problem(&["-c", "select \"x"]), "unterminated quoted identifier");
        assert!(problem(&["-c", "select 1e'x'"]).starts_with("a number run into a word (1e)"));
        assert!(problem(&["-c", "select U&\"\\0061\"()"]).starts_with("a U&"));
        assert!(problem(&["-c", "do $$ begin delete from t; end $$"]).starts_with("SQL the gate cannot parse"));
        assert!(problem(&["-c", "frobnicate t"]).starts_with("SQL the gate cannot parse"));
    }

    #[test]
    fn statements_carry_their_function_calls() {
        let got = actions_of(&["-c", "select pg_catalog.NEXTVAL/* x */('s'), now()"]);
        let v: Vec<(&str, Option<&str>)> = got.iter().map(|a| (a.verb.as_str(), a.fallback.as_deref())).collect();
        assert_eq!(
            v,
            vec![
                ("function pg_catalog.nextval", Some("function volatile")),
                ("function pg_catalog.now", Some("function stable")),
                ("sql select", None),
            ]
        );
    }

    #[test]
    fn a_leading_backslash_makes_one_meta_command() {
        assert_eq!(verbs(&["-c", "\\dt+"]), vec!["\\d"]);
        assert_eq!(verbs(&["-c", "\\l"]), vec!["\\l"]);
        assert_eq!(verbs(&["-c", "\\conninfo"]), vec!["\\conninfo"]);
        assert_eq!(verbs(&["-c", "\\dt \\\\ drop table t"]), vec!["\\d"]);
        assert_eq!(verbs(&["-c", "\\COPY t to stdout"]), vec!["\\copy"]);
    }

    #[test]
    fn unknown_meta_names_keep_the_name_as_typed() {
        // psql 15 answers "invalid command" and runs nothing; the policy leaves them unclassified.
        assert_eq!(verbs(&["-c", "\\!id"]), vec!["\\!id"]);
        assert_eq!(verbs(&["-c", "\\echofoo"]), vec!["\\echofoo"]);
        assert_eq!(verbs(&["-c", "\\o|sh"]), vec!["\\o|sh"]);
        assert_eq!(actions_of(&["-c", "\\o |sh"]), vec![act("\\o", &["pipe"])]);
    }

    #[test]
    fn shell_reaching_meta_commands_are_marked() {
        assert_eq!(actions_of(&["-c", "\\g (format=csv) |sh"]), vec![act("\\g", &["pipe"])]);
        assert_eq!(actions_of(&["-c", "\\copy t to program 'sh'"]), vec![act("\\copy", &["program"])]);
        assert_eq!(
            actions_of(&["-c", "\\echo `id`"]),
            vec![act("\\echo", &[]), act("backquote", &["meta-command"])]
        );
        assert_eq!(
            actions_of(&["-v", "PROMPT1=%`id`", "-c", "select 1"]),
            vec![act("backquote", &["variable"]), act("sql select", &[])]
        );
    }

    #[test]
    fn scripts_that_were_not_read_are_marked_unread() {
        assert_eq!(actions_of(&["-h", "db", "mydb"]), vec![act("script", &["stdin", "unread"])]);
        assert_eq!(actions_of(&["-f", "-"]), vec![act("script", &["stdin", "unread"])]);
        assert_eq!(actions_of(&["--file=x.sql"]), vec![act("script", &["file", "unread"])]);
        assert_eq!(verbs(&["-l"]), vec!["list"]);
        assert_eq!(verbs(&["-V"]), vec!["version"]);
        assert_eq!(verbs(&["--help=commands"]), vec!["help"]);
        assert_eq!(verbs(&["-?"]), vec!["help"]);
    }

    #[test]
    fn a_terminal_on_stdin_is_an_interactive_session() {
        let inputs = Inputs {
            stdin: Input::Terminal,
            files: vec![],
        };
        assert_eq!(parse_with(&argv(&["mydb"]), &inputs).actions, vec![act("interactive", &[])]);
    }

    #[test]
    fn sources_name_each_file_and_where_its_value_is() {
        assert_eq!(
            sources(&argv(&[
                "--cluster",
                "15/main",
                "-f",
                "a.sql",
                "-Xfb.sql",
                "--fil=c.sql",
                "-f",
                "-"
            ])),
            Sources {
                stdin: true,
                files: vec![("a.sql".into(), 3), ("b.sql".into(), 4), ("c.sql".into(), 5)],
            }
        );
        assert_eq!(sources(&argv(&["-c", "select 1"])), Sources::default());
        assert_eq!(
            sources(&argv(&["mydb"])),
            Sources {
                stdin: true,
                files: vec![]
            }
        );
    }

    #[test]
    fn a_script_is_split_as_psql_splits_it() {
        assert_eq!(
            script_verbs("select 1;\n\\dt\nselect now()\n\\g\n-- \\! id\nselect '\\! id';\n"),
            Ok(vec![
                "script".into(),
                "sql select".into(),
                "\\d".into(),
                "function pg_catalog.now".into(),
                "sql select".into(),
                "sql select".into()
            ])
        );
        assert_eq!(
            script_verbs("select 1; delete from t;"),
            Ok(vec!["script".into(), "sql select".into(), "sql delete".into()])
        );
        assert_eq!(script_verbs(""), Ok(vec!["script".into()]));
        assert_eq!(script_verbs("\\! id\n"), Ok(vec!["script".into(), "\\!".into()]));
        assert_eq!(
            script_verbs("select a::text from t;"),
            Ok(vec!["script".into(), "sql select".into()])
        );
    }

    #[test]
    fn script_constructs_the_gate_cannot_follow_are_problems() {
        for (text, want) in [
            ("select :x;", "psql variable interpolation"),
            ("select :'x';", "psql variable interpolation"),
            ("\\echo :x\n", "psql variable interpolation"),
            ("select 1 \\echo x\n;", "the meta-command \\echo inside an SQL statement"),
            ("\\echo a \\\\ select 1\n", "more than one backslash"),
            ("select 'a\\'; drop table t; --';", "standard_conforming_strings is off"),
            ("select (1; drop table t);", "SQL the gate cannot parse"),
            ("do $$ begin null; end $$;", "SQL the gate cannot parse"),
        ] {
            let got = script_verbs(text).expect_err(text);
            assert!(got.contains(want), "{text:?}: {got}");
            assert!(got.starts_with("stdin script: "), "{got}");
        }
    }

    #[test]
    fn options_that_change_statement_ends_are_refused_with_a_script() {
        let inv = with_stdin(&["-S"], "select 1");
        assert_eq!(
            inv.problem.as_deref(),
            Some("-S, which changes where psql ends a statement in a script")
        );
        let inv = with_stdin(&["-v", "SINGLELINE=on"], "select 1");
        assert!(inv.problem.is_some());
        assert_eq!(verbs(&["-S", "-c", "select 1"]), vec!["sql select"]);
    }

    #[test]
    fn help_forms_psql_does_not_take_are_problems() {
        assert_eq!(problem(&["--help=bogus"]), "--help=bogus is not a help topic psql knows");
        assert!(problem(&["-x?"]).starts_with("-? inside -x?"));
    }

    #[test]
    fn output_and_log_file_are_actions() {
        assert_eq!(
            actions_of(&["-o", "|sh", "-c", "select 1"]),
            vec![act("output", &["pipe"]), act("sql select", &[])]
        );
        assert_eq!(verbs(&["-L", "/tmp/log", "-c", "select 1"]), vec!["log-file", "sql select"]);
    }

    #[test]
    fn connection_strings_are_read_for_session_options() {
        assert_eq!(
            actions_of(&["-d", "host=db options='-c default_transaction_read_only=off'", "-c", "select 1"]),
            vec![act("conninfo", &["options"]), act("sql select", &[])]
        );
        assert_eq!(
            actions_of(&["postgresql://u@db/app?%6Fptions=-c%20x%3D1", "-c", "select 1"]),
            vec![act("conninfo", &["options"]), act("sql select", &[])]
        );
        assert_eq!(
            actions_of(&["-l", "service=prod"]),
            vec![act("list", &[]), act("conninfo", &["service"])]
        );
        assert_eq!(
            problem(&["-l", "-d", "host=db sslkeylogfile=/tmp/k"]),
            "connection string keyword \"sslkeylogfile\" is not one libpq accepts"
        );
    }

    #[test]
    fn a_client_encoding_other_than_utf8_is_marked_in_every_connection_string_form() {
        let sjis = r"select E'Á\'; delete from t; --'";
        for words in [
            &["-d", "dbname=app client_encoding=SJIS", "-c", sjis][..],
            &["dbname=app client_encoding = 'sjis'", "-c", sjis],
            &["-d", "client_encoding=auto", "-c", sjis],
            &["--dbname=host=db client_encoding=BIG5", "-c", sjis],
            &["postgresql://db/app?client_encoding=SJIS", "-c", sjis],
            &["postgres:///app?sslmode=disable&client%5Fencoding=GBK", "-c", sjis],
            &["postgresql:///app?%63lient_encoding=%53JIS", "-c", sjis],
        ] {
            assert_eq!(
                actions_of(words),
                vec![act("conninfo", &["charset"]), act("sql select", &[])],
                "{words:?}"
            );
        }
        for words in [
            &["-d", "dbname=app client_encoding=UTF8", "-c", "select 1"][..],
            &["postgresql://db/app?client_encoding=utf-8", "-c", "select 1"],
        ] {
            assert_eq!(actions_of(words), vec![act("conninfo", &[]), act("sql select", &[])], "{words:?}");
        }
        // libpq keywords are case-sensitive: this one is not a keyword at all.
        assert!(problem(&["-d", "CLIENT_ENCODING=SJIS", "-c", "select 1"]).contains("not one libpq accepts"));
    }

    #[test]
    fn encoding_meta_command_with_a_non_utf8_argument_is_marked() {
        assert_eq!(actions_of(&["-c", "\\encoding"]), vec![act("\\encoding", &[])]);
        assert_eq!(actions_of(&["-c", "\\encoding UTF8"]), vec![act("\\encoding", &[])]);
        assert_eq!(actions_of(&["-c", "\\encoding  utf-8 \\\\ select 1"]), vec![act("\\encoding", &[])]);
        for arg in ["SJIS", "sjis", "'SJIS'", "'UTF8'x", ":enc", "auto", "big5"] {
            let words = ["-c".to_string(), format!("\\encoding {arg}")];
            let inv = parse(&words);
            assert_eq!(inv.problem, None, "{arg}");
            assert_eq!(inv.actions, vec![act("\\encoding", &["charset"])], "{arg}");
        }
        // In a script, the switch and whatever it hides after it.
        let inv = with_stdin(&[], "\\encoding SJIS\nselect E'Á\\'; \\! touch /tmp/x\n--';\n");
        assert_eq!(inv.problem, None);
        assert_eq!(inv.actions[..2], [act("script", &["stdin"]), act("\\encoding", &["charset"])]);
    }

    #[test]
    fn sql_that_sets_the_client_encoding_is_marked() {
        assert_eq!(
            actions_of(&["-c", "set client_encoding = 'SJIS'", "-c", "select 1"]),
            vec![act("sql set", &["charset"]), act("sql select", &[])]
        );
        assert_eq!(
            verbs(&["-c", "select set_config('client_encoding', 'SJIS', false)"]),
            vec!["function pg_catalog.set_config", "sql select"]
        );
    }

    fn roles(words: &[&str]) -> Vec<(String, String)> {
        parse(&argv(words))
            .claims
            .into_iter()
            .filter_map(|c| match c {
                Claim::PinnedIfSet { var, value, flag, .. } => {
                    assert_eq!(var, "PGUSER");
                    Some((flag, value))
                }
                Claim::Destination { .. } => None,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    fn destinations(words: &[&str]) -> Vec<(&'static str, String)> {
        parse(&argv(words))
            .claims
            .into_iter()
            .filter_map(|c| match c {
                Claim::Destination { var, value, .. } => Some((var, value)),
                _ => None,
            })
            .collect()
    }

    fn files_of(words: &[&str]) -> Vec<(String, crate::grammar::Access, String)> {
        let inv = parse(&argv(words));
        assert_eq!(inv.problem, None, "{words:?}");
        inv.files.into_iter().map(|f| (f.path, f.access, f.flag)).collect()
    }

    #[test]
    fn every_file_psql_writes_or_copies_from_is_declared() {
        use crate::grammar::Access::{Read, Write};
        let w = |p: &str, f: &str| (p.to_string(), Write, f.to_string());
        assert_eq!(
            files_of(&["-o", "out.txt", "--log-file=s.log", "-c", "select 1"]),
            [w("out.txt", "-o"), w("s.log", "--log-file")]
        );
        assert_eq!(files_of(&["-c", "\\o 'my file.txt'"]), [w("my file.txt", "\\o")]);
        assert_eq!(files_of(&["-c", "\\o"]), []);
        assert_eq!(files_of(&["-c", "\\o |cat"]), []);
        assert_eq!(files_of(&["-c", "\\g (format=csv tuples_only) r.csv"]), [w("r.csv", "\\g")]);
        assert_eq!(
            files_of(&["-c", "\\copy (select 1) to 'out.csv' with csv"]),
            [w("out.csv", "\\copy … to")]
        );
        assert_eq!(
            files_of(&["-c", "\\copy t from data.csv"]),
            [("data.csv".to_string(), Read, "\\copy … from".to_string())]
        );
        assert_eq!(files_of(&["-c", "\\copy t to stdout"]), []);
        assert_eq!(files_of(&["-c", "\\lo_export 123 /tmp/blob"]), [w("/tmp/blob", "\\lo_export")]);
        // In a script, and after \cd a relative name is someone else's directory.
        let inv = with_stdin(&[], "\\o report.txt\nselect 1;\n");
        assert_eq!(inv.files.len(), 1);
        let inv = with_stdin(&[], "\\cd /tmp\n\\o report.txt\nselect 1;\n");
        assert!(inv.problem.unwrap().contains("after \\cd"));
    }

    #[test]
    fn every_way_of_naming_the_server_is_a_destination_claim() {
        let d = |v: &'static str, s: &str| (v, s.to_string());
        assert_eq!(
            destinations(&["-h", "evil", "-p", "5433", "-c", "select 1"]),
            [d("PGHOST", "evil"), d("PGPORT", "5433")]
        );
        assert_eq!(destinations(&["--host=evil", "-l"]), [d("PGHOST", "evil")]);
        assert_eq!(
            destinations(&["-d", "host=evil hostaddr=10.0.0.9 port=1 dbname=app", "-l"]),
            [d("PGHOST", "evil"), d("PGHOSTADDR", "10.0.0.9"), d("PGPORT", "1")]
        );
        assert_eq!(
            destinations(&["postgresql://u@evil:5433,[::1]:6000/app", "-l"]),
            [d("PGHOST", "evil,::1"), d("PGPORT", "5433,6000")]
        );
        assert_eq!(
            destinations(&["postgresql:///app?host=/tmp/sock", "-l"]),
            [d("PGHOST", "/tmp/sock")]
        );
        assert_eq!(destinations(&["app", "-c", "select 1"]), []);
    }

    #[test]
    fn every_way_of_naming_the_role_is_a_claim() {
        assert_eq!(roles(&["-U", "admin", "-c", "select 1"]), vec![("-U".into(), "admin".into())]);
        assert_eq!(roles(&["--user=admin", "-l"]), vec![("--user=admin".into(), "admin".into())]);
        assert_eq!(
            roles(&["app", "admin", "-c", "select 1"]),
            vec![("the user name argument".into(), "admin".into())]
        );
        // With -d, the first positional is the user name (startup.c).
        assert_eq!(
            roles(&["-d", "app", "admin", "-l"]),
            vec![("the user name argument".into(), "admin".into())]
        );
        assert_eq!(
            roles(&["-d", "host=db user='ad\\'min'", "-l"]),
            vec![("user= in the connection string".into(), "ad'min".into())]
        );
        assert_eq!(
            roles(&["postgresql://ad%6Din:pw@db/app", "-l"]),
            vec![("user= in the connection string".into(), "admin".into())]
        );
        assert_eq!(
            roles(&["postgres://db/app?user=admin", "-l"]),
            vec![("user= in the connection string".into(), "admin".into())]
        );
        assert_eq!(roles(&["-l", "app"]), vec![]);
    }

    #[test]
    fn pg_wrapper_takes_the_first_cluster_option() {
        assert_eq!(verbs(&["--cluster", "15/main", "-c", "select 1"]), vec!["sql select"]);
        assert_eq!(verbs(&["-c", "select 1", "--cluster=15/main"]), vec!["sql select"]);
        // pg_wrapper takes `--cluster 15/main` out from under -c, which is then missing its value.
        assert_eq!(problem(&["-c", "--cluster", "15/main"]), "option -c needs a value");
        assert_eq!(problem(&["--cluster=main", "-l"]), "unknown option --cluster=main");
    }

    #[test]
    fn double_dash_ends_options() {
        assert_eq!(actions_of(&["-l", "--", "-c"]), vec![act("list", &[])]);
    }
}
