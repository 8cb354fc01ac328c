//! psql 15 as Debian ships it: Debian's `pg_wrapper` takes out one `--cluster`, then glibc
//! `getopt_long` reads psql's option table (unique-prefix abbreviations, clusters, permutation).
//!
//! What the call does becomes one action per thing psql will run:
//!
//! - each `-c` string: a leading backslash makes it one meta-command (psql runs only the first
//!   one in the string); anything else goes to the server verbatim, one action per statement
//!   (`sql select`, `sql insert`, …), split by a small lexer that follows the server's (quotes,
//!   `E''` escapes, `$tag$` quoting, nested comments, string continuation);
//! - `-f`, and a call with no `-c`/`-f`/`-l` (psql then reads a script from stdin): `script`;
//! - `-o`, `-L`, `-l`, `--help`, `-V`;
//! - a dbname given as a connection string or URI (`-d` or positional): `conninfo`;
//! - a backquote in a meta-command or a `-v` value (a shell command): `backquote`.
//!
//! The SQL check is deliberately small and default-deny: a statement is a plain read only when it
//! starts with SELECT, WITH, VALUES, TABLE, SHOW or EXPLAIN and carries none of the marks that
//! the policy makes stricter (`into`, `row-lock`, `writes`, `analyze`, `denied-function`). Text the
//! lexer cannot place with certainty (an unterminated quote, a number run into a word, a `U&"…"`
//! identifier) is a grammar problem. Strings are lexed both with and without
//! `standard_conforming_strings`, because the server's setting decides whether `\'` ends a string.
//!
//! This module only describes the call; tiers live in `policy/psql.yaml`. It reads no file and no
//! stdin.

use crate::grammar::opts::{self, Item, Opt, Style};
use crate::grammar::{Action, Invocation};
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
    let inv = Invocation::new(Tool::Psql, args);
    match actions(args) {
        Ok(list) => list.into_iter().fold(inv, Invocation::with_action),
        Err(problem) => inv.with_problem(problem),
    }
}

fn actions(args: &[String]) -> Result<Vec<Action>, String> {
    let argv = without_cluster(args)?;
    let parsed = opts::scan(&argv, OPTS, &Style::GETOPT_LONG)?;
    let mut out = Vec::new();
    // Without -c, -f or -l psql reads a script from stdin (or runs interactively).
    let mut runs_input = false;
    for item in &parsed.items {
        let f = match item {
            Item::Opt(f) => f,
            Item::Pos(p) => {
                out.extend(conninfo(p)?);
                continue;
            }
            Item::Unknown { written, .. } => return Err(format!("unknown option {written}")),
        };
        let value = f.value.as_deref().unwrap_or_default();
        match f.id {
            "command" => {
                runs_input = true;
                match value.strip_prefix('\\') {
                    Some(meta) => out.extend(meta_command(meta)),
                    None => out.extend(sql(value)?),
                }
            }
            "file" => {
                runs_input = true;
                out.push(Action::new("script").mark(if value == "-" { "stdin" } else { "file" }));
            }
            "list" => {
                runs_input = true;
                out.push(Action::new("list"));
            }
            "output" => {
                let a = Action::new("output");
                out.push(if value.starts_with('|') { a.mark("pipe") } else { a });
            }
            "log-file" => out.push(Action::new("log-file")),
            "dbname" => out.extend(conninfo(value)?),
            "set" if value.contains('`') => out.push(Action::new("backquote").mark("variable")),
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
        out.push(Action::new("script").mark("stdin"));
    }
    Ok(out)
}

/// Debian's `pg_wrapper` (Perl, runs first) removes the first `--cluster VER/NAME` or
/// `--cluster=VER/NAME` before `--`, whatever precedes it, without knowing psql's options.
fn without_cluster(args: &[String]) -> Result<Vec<String>, String> {
    let mut out = args.to_vec();
    for i in 0..out.len() {
        if out[i] == "--" {
            break;
        }
        if out[i] == "--cluster" {
            if i + 1 >= out.len() {
                return Err("--cluster needs a value (VERSION/CLUSTER)".into());
            }
            out.drain(i..i + 2);
            break;
        }
        if out[i].strip_prefix("--cluster=").is_some_and(wrapper_takes) {
            out.remove(i);
            break;
        }
    }
    Ok(out)
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
/// `service` reads them from a file the call does not show) or the protocol (`replication`).
fn conninfo(s: &str) -> Result<Option<Action>, String> {
    let pairs = if let Some(rest) = s.strip_prefix("postgresql://").or_else(|| s.strip_prefix("postgres://")) {
        uri_params(rest)?
    } else if s.contains('=') {
        keyword_pairs(s)?
    } else {
        return Ok(None);
    };
    let mut a = Action::new("conninfo");
    for key in pairs {
        let uri_only = key == "ssl";
        if !CONNINFO_KEYS.contains(&key.as_str()) && !uri_only {
            return Err(format!("connection string keyword {key:?} is not one libpq accepts"));
        }
        if matches!(key.as_str(), "options" | "service" | "replication") {
            a.add(key);
        }
    }
    Ok(Some(a))
}

/// libpq `conninfo_parse`: `key = value` pairs; a value is a word or `'…'`, `\` escapes.
fn keyword_pairs(s: &str) -> Result<Vec<String>, String> {
    let b = s.as_bytes();
    let space = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r');
    let mut keys = Vec::new();
    let mut i = 0;
    loop {
        while b.get(i).is_some_and(|&c| space(c)) {
            i += 1;
        }
        if i >= b.len() {
            return Ok(keys);
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
        if b.get(i) == Some(&b'\'') {
            i += 1;
            loop {
                match b.get(i) {
                    None => return Err(format!("connection string: unterminated quoted value of {key:?}")),
                    Some(b'\\') => i += 2,
                    Some(b'\'') => {
                        i += 1;
                        break;
                    }
                    Some(_) => i += 1,
                }
            }
        } else {
            while let Some(&c) = b.get(i) {
                if space(c) {
                    break;
                }
                i += if c == b'\\' { 2 } else { 1 };
            }
        }
        keys.push(key);
    }
}

/// libpq `conninfo_uri_parse_params`: `?k=v&k=v`, both sides percent-decoded. A `?` inside the
/// user part only makes the parse stricter (its pieces are refused as unknown keys).
fn uri_params(rest: &str) -> Result<Vec<String>, String> {
    let Some((_, query)) = rest.split_once('?') else {
        return Ok(Vec::new());
    };
    let mut keys = Vec::new();
    for param in query.split('&') {
        let Some((k, _)) = param.split_once('=') else {
            return Err(format!("connection URI parameter {param:?} has no \"=\""));
        };
        keys.push(percent_decode(k)?);
    }
    Ok(keys)
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
/// text after the leading backslash.
fn meta_command(body: &str) -> Vec<Action> {
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
    let mut out = vec![a];
    if body.contains('`') {
        out.push(Action::new("backquote").mark("meta-command"));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// SQL (`-c 'SQL'`, sent verbatim)

/// First keywords of a plain read. Others are classified by the policy (`sql insert`, …).
const PLAIN: &[&str] = &["select", "with", "values", "table", "show", "explain"];

/// Built-in functions that write, signal, sleep, touch server files, open other connections or
/// run SQL text the gate cannot see (postgres-functions.md: volatility is not enough on its own).
const DENIED_FUNCTIONS: &[&str] = &[
    "nextval",
    "setval",
    "set_config",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_signal_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_promote",
    "pg_switch_wal",
    "pg_switch_xlog",
    "pg_create_restore_point",
    "pg_start_backup",
    "pg_stop_backup",
    "pg_notify",
    "txid_current",
    "pg_current_xact_id",
    "pg_export_snapshot",
    "pg_import_system_collations",
    "pg_log_backend_memory_contexts",
    "pg_log_standby_snapshot",
    "pg_stat_file",
    "pg_nextoid",
    "pg_truncate_visibility_map",
    "pg_sync_replication_slots",
    "gin_clean_pending_list",
    "ts_stat",
    "loread",
    "lowrite",
];

/// Families of the same, matched by prefix.
const DENIED_PREFIXES: &[&str] = &[
    "lo_",
    "dblink",
    "pg_advisory",
    "pg_try_advisory",
    "pg_read_",
    "pg_ls_",
    "pg_file_",
    "pg_logdir_",
    "pg_stat_reset",
    "pg_stat_statements_reset",
    "pg_create_",
    "pg_drop_",
    "pg_copy_",
    "pg_replication_",
    "pg_logical_",
    "pg_wal_replay_",
    "pg_xlog_replay_",
    "pg_backup_",
    "pg_restore_",
    "pg_clear_",
    "pg_sleep",
    "binary_upgrade_",
    "brin_summarize",
    "brin_desummarize",
    "query_to_xml",
    "cursor_to_xml",
];

fn denied_function(name: &str) -> bool {
    DENIED_FUNCTIONS.contains(&name) || DENIED_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// One action per statement. The text is lexed twice (with and without
/// `standard_conforming_strings`); a statement the two readings see differently yields both.
fn sql(text: &str) -> Result<Vec<Action>, String> {
    if text.contains('\x0b') {
        // psql 15's lexer treats a vertical tab as a character, later ones as space.
        return Err("a vertical tab in SQL text".into());
    }
    let standard = lex(text, true)?;
    let escaped = lex(text, false).map_err(|e| format!("{e} (read as a server with standard_conforming_strings=off would)"))?;
    let mut out = statements(&standard)?;
    if escaped != standard {
        for a in statements(&escaped)? {
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    Ok(out)
}

fn statements(toks: &[Tok]) -> Result<Vec<Action>, String> {
    let mut out = Vec::new();
    for stmt in toks.split(|t| *t == Tok::Punct(b';')) {
        if let Some(a) = statement(stmt)? {
            out.push(a);
        }
    }
    Ok(out)
}

fn word(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Word(w)) => Some(w.as_str()),
        _ => None,
    }
}

fn statement(toks: &[Tok]) -> Result<Option<Action>, String> {
    if toks.is_empty() {
        return Ok(None);
    }
    let body: &[Tok] = match toks.iter().position(|t| *t != Tok::Punct(b'(')) {
        Some(n) => &toks[n..],
        None => &[],
    };
    let Some(kw) = word(body.first()) else {
        return Err(format!(
            "a statement that does not start with a keyword ({})",
            describe(body.first())
        ));
    };
    let mut a = Action::new(format!("sql {kw}"));
    let words: Vec<&str> = toks.iter().filter_map(|t| word(Some(t))).collect();
    for pair in toks.windows(2) {
        let name = match (&pair[0], &pair[1]) {
            (Tok::Word(n), Tok::Punct(b'(')) => n.clone(),
            (Tok::Ident(n), Tok::Punct(b'(')) => n.to_lowercase(),
            _ => continue,
        };
        if denied_function(&name) {
            a.add("denied-function");
            a.add(format!("function={name}"));
        }
    }
    if PLAIN.contains(&kw) {
        if words.iter().any(|w| matches!(*w, "insert" | "update" | "delete" | "merge")) {
            a.add("writes");
        }
        if words.contains(&"into") {
            a.add("into");
        }
        if words
            .windows(2)
            .any(|w| w[0] == "for" && matches!(w[1], "update" | "share" | "no" | "key"))
        {
            a.add("row-lock");
        }
        if kw == "explain" && words.iter().any(|w| matches!(*w, "analyze" | "analyse")) {
            a.add("analyze");
        }
    }
    match kw {
        "copy" => copy_marks(body, &mut a),
        "alter" if word(body.get(1)) == Some("system") => a.add("alter-system"),
        _ => {}
    }
    Ok(Some(a))
}

/// `COPY … PROGRAM 'cmd'` runs a shell on the server; `COPY … FROM/TO 'file'` reads or writes
/// a server file. Only STDIN/STDOUT stay between client and server.
fn copy_marks(toks: &[Tok], a: &mut Action) {
    if toks.iter().any(|t| word(Some(t)) == Some("program")) {
        a.add("program");
    }
    let mut depth = 0i32;
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Punct(b'(') => depth += 1,
            Tok::Punct(b')') => depth -= 1,
            Tok::Word(w)
                if depth == 0 && (w == "from" || w == "to") && !matches!(word(toks.get(i + 1)), Some("stdin" | "stdout" | "program")) =>
            {
                a.add("server-file");
            }
            _ => {}
        }
    }
}

fn describe(t: Option<&Tok>) -> String {
    match t {
        None => "nothing but parentheses".into(),
        Some(Tok::Word(w)) => w.clone(),
        Some(Tok::Ident(i)) => format!("the quoted identifier \"{i}\""),
        Some(Tok::Str) => "a string".into(),
        Some(Tok::Num) => "a number".into(),
        Some(Tok::Param) => "a parameter".into(),
        Some(Tok::Punct(c)) => format!("{:?}", char::from(*c)),
    }
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

/// Lex `sql` as the server would. `standard_strings` is the session's
/// standard_conforming_strings.
fn lex(sql: &str, standard_strings: bool) -> Result<Vec<Tok>, String> {
    let b = sql.as_bytes();
    let plain = if standard_strings { Mode::Standard } else { Mode::Escape };
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let next = b.get(i + 1).copied();
        if is_space(c) {
            i += 1;
        } else if c == b'-' && next == Some(b'-') {
            i = line_end(b, i);
        } else if c == b'/' && next == Some(b'*') {
            i = block_comment(b, i)?;
        } else if c == b'\'' {
            i = string(b, i + 1, plain)?;
            out.push(Tok::Str);
        } else if c == b'"' {
            let (name, j) = quoted_ident(b, i + 1)?;
            out.push(Tok::Ident(name));
            i = j;
        } else if c == b'$' {
            if next.is_some_and(|n| n.is_ascii_digit()) {
                let j = digits_end(b, i + 1);
                junk_check(b, i, j)?;
                out.push(Tok::Param);
                i = j;
            } else if let Some(open_end) = dollar_delim(b, i) {
                let tag = &b[i..open_end];
                let Some(k) = find(&b[open_end..], tag) else {
                    return Err(format!("unterminated dollar-quoted string {}", String::from_utf8_lossy(tag)));
                };
                out.push(Tok::Str);
                i = open_end + k + tag.len();
            } else {
                out.push(Tok::Punct(c));
                i += 1;
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
                Some((m, start)) => {
                    i = string(b, start, m)?;
                    out.push(Tok::Str);
                }
                None => {
                    out.push(Tok::Word(String::from_utf8_lossy(&b[i..j]).to_ascii_lowercase()));
                    i = j;
                }
            }
        } else if c.is_ascii_digit() || (c == b'.' && next.is_some_and(|n| n.is_ascii_digit())) {
            let j = number_end(b, i);
            junk_check(b, i, j)?;
            out.push(Tok::Num);
            i = j;
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    Ok(out)
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
    fn a_dollar_inside_a_word_does_not_open_a_dollar_quote() {
        assert_eq!(
            verbs(&["-c", "select a$$; drop table t; select 1"]),
            vec!["sql select", "sql drop", "sql select"]
        );
        assert_eq!(
            problem(&["-c", "select a$$; drop table t; $$"]),
            "unterminated dollar-quoted string $$"
        );
    }

    #[test]
    fn a_backslash_quote_is_read_both_ways() {
        // standard_conforming_strings on: 'a\' ends; off: the string runs on.
        assert_eq!(verbs(&["-c", "select 'a\\''; drop table t; --'"]), vec!["sql select", "sql drop"]);
        // E'' always escapes, and a continued string keeps its mode.
        assert_eq!(verbs(&["-c", "select E'x\\'; drop table t; --'"]), vec!["sql select"]);
        assert_eq!(
            verbs(&["-c", "select E'x'\n'\\'' ; drop table t; --'"]),
            vec!["sql select", "sql drop"]
        );
    }

    #[test]
    fn unterminated_text_is_a_problem() {
        assert_eq!(problem(&["-c", "select 'a"]), "unterminated quoted string");
        assert_eq!(problem(&["-c", "select 1 /* /* */"]), "unterminated /* comment");
        assert_eq!(problem(&["-c", "select $a$ x $b$"]), "unterminated dollar-quoted string $a$");
        assert_eq!(problem(&["-c", "select \"x"]), "unterminated quoted identifier");
        assert!(problem(&["-c", "select 'a\\'"]).contains("standard_conforming_strings=off"));
        assert!(problem(&["-c", "select 1e'x'"]).starts_with("a number run into a word (1e)"));
        assert!(problem(&["-c", "select U&\"\\0061\"()"]).starts_with("a U&"));
        assert!(problem(&["-c", "'x'"]).starts_with("a statement that does not start with a keyword"));
    }

    #[test]
    fn reads_that_are_not_plain_get_marks() {
        assert_eq!(actions_of(&["-c", "select * into t2 from t"]), vec![act("sql select", &["into"])]);
        assert_eq!(
            actions_of(&["-c", "select * from t for no key update"]),
            vec![act("sql select", &["row-lock", "writes"])]
        );
        assert_eq!(
            actions_of(&["-c", "SELECT * FROM t FOR SHARE"]),
            vec![act("sql select", &["row-lock"])]
        );
        assert_eq!(
            actions_of(&["-c", "with d as (delete from t returning *) select * from d"]),
            vec![act("sql with", &["writes"])]
        );
        assert_eq!(
            actions_of(&["-c", "explain (analyse) select 1"]),
            vec![act("sql explain", &["analyze"])]
        );
        assert_eq!(actions_of(&["-c", "explain select 1"]), vec![act("sql explain", &[])]);
        assert_eq!(actions_of(&["-c", "(values (1))"]), vec![act("sql values", &[])]);
    }

    #[test]
    fn denied_functions_are_found_however_they_are_written() {
        for sql in [
            "select nextval('s')",
            "select pg_catalog.NEXTVAL ('s')",
            "select \"nextval\"/* x */('s')",
            "select * from nextval('s')",
        ] {
            assert_eq!(
                actions_of(&["-c", sql]),
                vec![act("sql select", &["denied-function", "function=nextval"])],
                "{sql}"
            );
        }
        assert_eq!(
            actions_of(&["-c", "select lo_from_bytea(0, 'x')"]),
            vec![act("sql select", &["denied-function", "function=lo_from_bytea"])]
        );
        assert_eq!(
            actions_of(&["-c", "select 'nextval(1)', nextval_count from t"]),
            vec![act("sql select", &[])]
        );
    }

    #[test]
    fn copy_to_program_or_a_server_file_is_marked() {
        assert_eq!(actions_of(&["-c", "copy t to program 'sh'"]), vec![act("sql copy", &["program"])]);
        assert_eq!(
            actions_of(&["-c", "COPY t FROM '/etc/passwd'"]),
            vec![act("sql copy", &["server-file"])]
        );
        assert_eq!(actions_of(&["-c", "copy (select a from t) to stdout"]), vec![act("sql copy", &[])]);
        assert_eq!(
            actions_of(&["-c", "alter system set x = 1"]),
            vec![act("sql alter", &["alter-system"])]
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
        assert_eq!(verbs(&["-c", "\\lo_nothing"]), vec!["\\lo_nothing"]);
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
    fn no_command_means_a_script_on_stdin() {
        assert_eq!(actions_of(&["-h", "db", "mydb"]), vec![act("script", &["stdin"])]);
        assert_eq!(actions_of(&["-f", "-"]), vec![act("script", &["stdin"])]);
        assert_eq!(actions_of(&["--file=x.sql"]), vec![act("script", &["file"])]);
        assert_eq!(verbs(&["-l"]), vec!["list"]);
        assert_eq!(verbs(&["-V"]), vec!["version"]);
        assert_eq!(verbs(&["--help=commands"]), vec!["help"]);
        assert_eq!(verbs(&["-?"]), vec!["help"]);
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
            actions_of(&["-l", "host=db dbname=app"]),
            vec![act("list", &[]), act("conninfo", &[])]
        );
        assert_eq!(
            problem(&["-l", "-d", "host=db sslkeylogfile=/tmp/k"]),
            "connection string keyword \"sslkeylogfile\" is not one libpq accepts"
        );
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
