//! The `mysql` client as MariaDB 10.11 ships it (`mariadb`/`mysql`, MySQL-compatible): my_getopt
//! reads options (long names may be abbreviated to a unique prefix, `-` and `_` are the same in
//! a name, `--loose-`, `--skip-`, `--disable-`, `--enable-` prefixes, short clusters, options
//! after the database name), then the client runs `-e` text or reads stdin.
//!
//! `-e` text and stdin are one language: SQL statements ended by `;`, `\g` or `\G`, and client
//! commands (`\!`/`system`, `\.`/`source`, `\T`/`tee`, `\P`/`pager`, `\u`/`use`, …): the short
//! form anywhere outside quotes and comments, the long form at the start of a line. Each
//! becomes an action (`sql …` and `function …` from [`super::sql`] with the MySQL dialect,
//! `command …` for client commands); stdin is a `script` action followed by its contents, or
//! `interactive` when it is a terminal. `--init-command` SQL is judged like `-e` SQL.
//!
//! Refused as problems: `delimiter` (it moves statement ends), executable comments (`/*!`,
//! `/*M!`), a backslash inside a quoted string (it reads differently under the server's
//! `NO_BACKSLASH_ESCAPES`), options that load code or read option files, and SQL sqlparser cannot
//! parse. The client is run with `--no-defaults` first, so no option file (`~/.my.cnf` can set
//! `pager` or `init-command`) is read.
//!
//! This module only describes the call; tiers live in `policy/mysql.yaml`. It does no I/O.

use crate::grammar::opts::{self, Item, Opt, Style};
use crate::grammar::sql::{self, Dialect};
use crate::grammar::{Action, Claim, Input, Inputs, Invocation, LocalFile, Sources, Understood};
use crate::tool::Tool;

/// `--no-defaults` must be the first argument to count: no option file is read. The character
/// set is pinned so the client's default (`auto`, from the caller's locale) never picks one the
/// gate cannot lex; a `--default-character-set` in the call comes later and wins, and is judged.
pub const PREPEND: &[&str] = &["--no-defaults", "--default-character-set=utf8mb4"];

/// The MariaDB 10.11 client's options (`client/mysql.cc` `my_long_options`) that the gate lets
/// through or judges. Others (`--debug`, `--server-arg`, `--defaults-*`, `--print-defaults`, …)
/// are unknown, so refused.
const OPTS: &[Opt] = &[
    Opt::flag("help", &["help"], &['?', 'I']),
    Opt::flag("abort-source-on-error", &["abort-source-on-error"], &[]),
    Opt::flag("auto-rehash", &["auto-rehash"], &[]),
    Opt::flag("no-auto-rehash", &["no-auto-rehash"], &['A']),
    Opt::flag("auto-vertical-output", &["auto-vertical-output"], &[]),
    Opt::flag("batch", &["batch"], &['B']),
    Opt::flag("binary-as-hex", &["binary-as-hex"], &[]),
    Opt::flag("binary-mode", &["binary-mode"], &[]),
    Opt::flag("column-names", &["column-names"], &[]),
    Opt::flag("skip-column-names", &["skip-column-names"], &['N']),
    Opt::flag("column-type-info", &["column-type-info"], &[]),
    Opt::flag("comments", &["comments"], &['c']),
    Opt::flag("compress", &["compress"], &['C']),
    Opt::flag("connect-expired-password", &["connect-expired-password"], &[]),
    Opt::value("connect-timeout", &["connect-timeout"], &[]),
    Opt::value("database", &["database"], &['D']),
    Opt::flag("debug-check", &["debug-check"], &[]),
    Opt::flag("debug-info", &["debug-info"], &['T']),
    Opt::value("default-auth", &["default-auth"], &[]),
    Opt::value("default-character-set", &["default-character-set"], &[]),
    Opt::value("character-sets-dir", &["character-sets-dir"], &[]),
    Opt::value("delimiter", &["delimiter"], &[]),
    Opt::flag("enable-cleartext-plugin", &["enable-cleartext-plugin"], &[]),
    Opt::value("execute", &["execute"], &['e']),
    Opt::flag("force", &["force"], &['f']),
    Opt::value("host", &["host"], &['h']),
    Opt::flag("html", &["html"], &['H']),
    Opt::flag("ignore-spaces", &["ignore-spaces"], &['i']),
    Opt::value("init-command", &["init-command"], &[]),
    Opt::flag("line-numbers", &["line-numbers"], &[]),
    Opt::flag("skip-line-numbers", &["skip-line-numbers"], &['L']),
    Opt::opt_value("local-infile", &["local-infile"], &[]),
    Opt::value("max-allowed-packet", &["max-allowed-packet"], &[]),
    Opt::value("max-join-size", &["max-join-size"], &[]),
    Opt::flag("named-commands", &["named-commands"], &['G']),
    Opt::value("net-buffer-length", &["net-buffer-length"], &[]),
    Opt::flag("no-beep", &["no-beep"], &['b']),
    Opt::flag("one-database", &["one-database"], &['o']),
    Opt::opt_value("pager", &["pager"], &[]),
    Opt::flag("no-pager", &["no-pager"], &[]),
    Opt::opt_value("password", &["password"], &['p']),
    Opt::value("plugin-dir", &["plugin-dir"], &[]),
    Opt::value("port", &["port"], &['P']),
    Opt::flag("print-query-on-error", &["print-query-on-error"], &[]),
    Opt::flag("progress-reports", &["progress-reports"], &[]),
    Opt::value("prompt", &["prompt"], &[]),
    Opt::value("protocol", &["protocol"], &[]),
    Opt::flag("quick", &["quick"], &['q']),
    Opt::value("quick-max-column-width", &["quick-max-column-width"], &[]),
    Opt::flag("raw", &["raw"], &['r']),
    Opt::flag("reconnect", &["reconnect"], &[]),
    Opt::flag("safe-updates", &["safe-updates", "i-am-a-dummy"], &['U']),
    Opt::flag("sandbox", &["sandbox"], &[]),
    Opt::flag("secure-auth", &["secure-auth"], &[]),
    Opt::value("select-limit", &["select-limit"], &[]),
    Opt::flag("show-warnings", &["show-warnings"], &[]),
    Opt::flag("sigint-ignore", &["sigint-ignore"], &[]),
    Opt::flag("silent", &["silent"], &['s']),
    Opt::value("socket", &["socket"], &['S']),
    Opt::flag("ssl", &["ssl"], &[]),
    Opt::value("ssl-ca", &["ssl-ca"], &[]),
    Opt::value("ssl-capath", &["ssl-capath"], &[]),
    Opt::value("ssl-cert", &["ssl-cert"], &[]),
    Opt::value("ssl-cipher", &["ssl-cipher"], &[]),
    Opt::value("ssl-key", &["ssl-key"], &[]),
    Opt::value("ssl-crl", &["ssl-crl"], &[]),
    Opt::value("ssl-crlpath", &["ssl-crlpath"], &[]),
    Opt::flag("ssl-verify-server-cert", &["ssl-verify-server-cert"], &[]),
    Opt::flag("table", &["table"], &['t']),
    Opt::value("tee", &["tee"], &[]),
    Opt::flag("no-tee", &["no-tee"], &[]),
    Opt::value("tls-version", &["tls-version"], &[]),
    Opt::flag("unbuffered", &["unbuffered"], &['n']),
    Opt::value("user", &["user"], &['u']),
    Opt::flag("verbose", &["verbose"], &['v']),
    Opt::flag("version", &["version"], &['V']),
    Opt::flag("vertical", &["vertical"], &['E']),
    Opt::flag("wait", &["wait"], &['w']),
    Opt::flag("xml", &["xml"], &['X']),
];

/// my_getopt before the table lookup: `--loose-x` is `--x`, `--skip-x`/`--disable-x` turn a
/// switch off and `--enable-x` on, and `_` is `-` in a name. Returns the word as the table
/// knows it and whether it was turned off.
fn normalize(word: &str) -> (String, bool) {
    let Some(body) = word.strip_prefix("--") else {
        return (word.to_string(), false);
    };
    let (name, value) = match body.split_once('=') {
        Some((n, v)) => (n.replace('_', "-"), Some(v)),
        None => (body.replace('_', "-"), None),
    };
    let name = name.strip_prefix("loose-").map(str::to_string).unwrap_or(name);
    let known = |n: &str| OPTS.iter().any(|o| o.long.contains(n));
    let (name, off) = if known(&name) {
        (name, false)
    } else if let Some(n) = name.strip_prefix("skip-").or_else(|| name.strip_prefix("disable-")) {
        (n.to_string(), true)
    } else if let Some(n) = name.strip_prefix("enable-") {
        (n.to_string(), false)
    } else {
        (name, false)
    };
    let word = match value {
        Some(v) => format!("--{name}={v}"),
        None => format!("--{name}"),
    };
    (word, off)
}

/// my_getopt: abbreviations, `--opt=v`/`--opt v`, clusters, options after positionals.
const STYLE: Style = Style::GETOPT_LONG;

struct Scanned {
    parsed: opts::Parsed,
    /// Per option occurrence (in order): turned off with `--skip-`/`--disable-`.
    off: Vec<bool>,
}

fn scan(args: &[String]) -> Result<Scanned, String> {
    let mut words = Vec::with_capacity(args.len());
    let mut offs = Vec::new();
    let mut after_dd = false;
    for a in args {
        if after_dd || !a.starts_with("--") || a == "--" {
            after_dd |= a == "--";
            words.push(a.clone());
            continue;
        }
        let (w, off) = normalize(a);
        offs.push((w.clone(), off));
        words.push(w);
    }
    let parsed = opts::scan(&words, OPTS, &STYLE)?;
    let off = parsed
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Opt(f) => Some(offs.iter().any(|(w, off)| *off && *w == f.written)),
            _ => None,
        })
        .collect();
    Ok(Scanned { parsed, off })
}

pub fn parse(args: &[String]) -> Invocation {
    parse_with(args, &Inputs::default())
}

pub fn parse_with(args: &[String], inputs: &Inputs) -> Invocation {
    Invocation::new(Tool::Mysql, args).understood(read(args, inputs))
}

/// The client reads stdin unless it was given `-e` (or only prints help or its version).
pub fn sources(args: &[String]) -> Sources {
    let Ok(s) = scan(args) else {
        return Sources::default();
    };
    let runs = s.parsed.opts().any(|f| matches!(f.id.as_str(), "execute" | "help" | "version"));
    Sources {
        stdin: !runs,
        files: Vec::new(),
    }
}

fn read(args: &[String], inputs: &Inputs) -> Result<Understood, String> {
    let s = scan(args)?;
    let mut out = Vec::new();
    let mut claims = Vec::new();
    let mut files = Vec::new();
    let mut runs = false;
    let mut positionals = 0;
    if let Some(u) = s.parsed.unknowns().first() {
        return Err(format!("unknown option {u}"));
    }
    for (f, &off) in s.parsed.opts().zip(&s.off) {
        let value = f.value.as_deref().unwrap_or_default();
        match f.id.as_str() {
            "execute" => {
                runs = true;
                out.extend(script(value, &mut files).map_err(|e| format!("{}: {e}", f.written))?);
            }
            "init-command" => {
                let mut a = Action::new("init-command");
                let sql = statements(value).map_err(|e| format!("{}: {e}", f.written))?;
                if sql.is_empty() {
                    a.add("empty");
                }
                out.push(a);
                out.extend(sql);
            }
            "help" | "version" => {
                runs = true;
                out.push(Action::new(if f.id == "help" { "help" } else { "version" }));
            }
            "user" => claims.push(Claim::PinnedIfSet {
                var: "MYSQL_USER",
                value: value.to_string(),
                flag: f.written.clone(),
                exclusive: &[],
            }),
            // Where the client connects: with a pinned MYSQL_PWD it must be the pinned one.
            "host" | "port" | "socket" => claims.push(Claim::Destination {
                var: match f.id.as_str() {
                    "host" => "MYSQL_HOST",
                    "port" => "MYSQL_TCP_PORT",
                    _ => "MYSQL_UNIX_PORT",
                },
                value: value.to_string(),
                flag: f.written.clone(),
            }),
            "delimiter" => return Err(format!("{} moves where statements end", f.written)),
            "named-commands" if !off => {
                return Err(format!("{} makes client commands count anywhere on a line", f.written));
            }
            "local-infile" if !off && !matches!(f.value.as_deref(), Some("0" | "false" | "FALSE" | "OFF" | "off")) => {
                out.push(Action::new("option local-infile"));
            }
            "pager" if !off => out.push(Action::new("option pager")),
            "tee" if !off => {
                files.push(LocalFile::write(value, f.written.split('=').next().unwrap_or_default()));
                out.push(Action::new("option tee"));
            }
            "plugin-dir" | "default-auth" | "character-sets-dir" => out.push(Action::new(format!("option {}", f.id))),
            "default-character-set" => {
                // `--skip-` puts back the default, `auto`: the caller's locale.
                let a = Action::new("option default-character-set");
                out.push(if off || !sql::safe_client_charset(value, Dialect::MySql) {
                    a.mark("charset")
                } else {
                    a
                });
            }
            _ => {}
        }
    }
    for p in s.parsed.positionals() {
        positionals += 1;
        if positionals > 1 {
            return Err(format!("a second database name ({p}); the client takes one"));
        }
    }
    if !runs {
        let head = Action::new("script").mark("stdin");
        match &inputs.stdin {
            Input::Unread => out.push(head.mark("unread")),
            Input::Terminal => out.push(Action::new("interactive")),
            Input::Failed(why) => return Err(why.clone()),
            Input::Text(text) => {
                out.push(head);
                out.extend(script(text, &mut files).map_err(|e| format!("stdin script: {e}"))?);
            }
        }
    }
    Ok((out, claims, files))
}

/// `-pSECRET` (alone or at the end of a cluster such as `-Np…`) with the password replaced, for
/// logs; the shared redaction cannot tell it from psql's `-p PORT`.
pub fn redact(args: &[String]) -> Vec<String> {
    args.iter()
        .map(|a| {
            if a.starts_with("--") || !a.starts_with('-') {
                return a.clone();
            }
            for (k, c) in a.char_indices().skip(1) {
                let Some(o) = OPTS.iter().find(|o| o.short.contains(&c)) else {
                    return a.clone();
                };
                if c == 'p' && k + 1 < a.len() {
                    return format!("{}REDACTED", &a[..=k]);
                }
                if o.arity != opts::Arity::Flag {
                    return a.clone();
                }
            }
            a.clone()
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Client commands and statements

/// Long and short forms of the client commands (`client/mysql.cc` `commands[]`), their
/// canonical verb, and whether they take the rest of the line (up to a `;`) as an argument.
const COMMANDS: &[(&str, char, &str, bool)] = &[
    ("?", '?', "command help", true),
    ("help", 'h', "command help", true),
    ("clear", 'c', "command clear", false),
    ("connect", 'r', "command connect", true),
    ("delimiter", 'd', "command delimiter", true),
    ("edit", 'e', "command edit", false),
    ("ego", 'G', "command go", false),
    ("exit", 'q', "command quit", false),
    ("go", 'g', "command go", false),
    ("nopager", 'n', "command nopager", false),
    ("notee", 't', "command notee", false),
    ("nowarning", 'w', "command nowarning", false),
    ("pager", 'P', "command pager", true),
    ("print", 'p', "command print", false),
    ("prompt", 'R', "command prompt", true),
    ("quit", 'q', "command quit", false),
    ("rehash", '#', "command rehash", false),
    ("source", '.', "command source", true),
    ("status", 's', "command status", false),
    ("system", '!', "command system", true),
    ("tee", 'T', "command tee", true),
    ("use", 'u', "command use", true),
    ("charset", 'C', "command charset", true),
    ("warnings", 'W', "command warnings", false),
];

/// `-e` text or a stdin script: client commands and statements, in order.
fn script(text: &str, files: &mut Vec<LocalFile>) -> Result<Vec<Action>, String> {
    let mut out = Vec::new();
    for piece in pieces(text, true)? {
        match piece {
            Piece::Sql(s) => out.extend(sql::statement(&s, Dialect::MySql)?),
            Piece::Command(verb, argument) => {
                if verb == "command delimiter" {
                    return Err("the delimiter command moves where statements end".into());
                }
                // `tee FILE` appends the session to FILE: the rest of the line, trimmed
                // (`com_tee`, no unquoting); a `;` ending it is judged as not part of the name
                // (the stricter reading: `HEAD;` and `HEAD` are refused alike).
                let name = argument.trim().trim_end_matches(';').trim_end();
                if verb == "command tee" && !name.is_empty() {
                    files.push(LocalFile::write(name, "tee"));
                }
                let a = Action::new(verb);
                out.push(if verb == "command charset" && charset_change(&argument) {
                    a.mark("charset")
                } else {
                    a
                });
            }
        }
    }
    Ok(out)
}

/// SQL only (`--init-command`): the server runs it as is, so client commands do not exist.
fn statements(text: &str) -> Result<Vec<Action>, String> {
    let mut out = Vec::new();
    for piece in pieces(text, false)? {
        if let Piece::Sql(s) = piece {
            out.extend(sql::statement(&s, Dialect::MySql)?);
        }
    }
    Ok(out)
}

/// Whether a `charset`/`\\C` argument switches the client to a character set the gate cannot lex
/// ([`sql::safe_client_charset`]). The client's `get_arg` takes the first word, or a quoted
/// one; only a plain word is read here. No argument only prints a usage line.
fn charset_change(argument: &str) -> bool {
    let Some(word) = argument
        .split(|c: char| c.is_ascii_whitespace() || c == ';')
        .find(|w| !w.is_empty())
    else {
        return false;
    };
    let plain = word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    !(plain && sql::safe_client_charset(word, Dialect::MySql))
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Sql(String),
    /// A client command's verb and the text of its argument (up to the `;` or line end).
    Command(&'static str, String),
}

/// Split as the client's `add_line` does: quotes (`'`, `"`, `` ` ``), comments (`#`, `-- `,
/// `/* */`), `;` ends a statement; with `commands`, `\x` outside quotes is a client command
/// and a line that starts with a command's long name is that command.
fn pieces(text: &str, commands: bool) -> Result<Vec<Piece>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut buf = String::new();
    let mut i = 0;
    let mut line_start = true;
    let push_sql = |buf: &mut String, out: &mut Vec<Piece>| {
        if !buf.trim().is_empty() {
            out.push(Piece::Sql(std::mem::take(buf)));
        }
        buf.clear();
    };
    while i < b.len() {
        let c = b[i];
        if commands && line_start && buf.trim().is_empty() {
            // The long form, at the start of a line with nothing pending.
            let rest = &text[i..];
            let trimmed = rest.trim_start_matches([' ', '\t']);
            let word: String = trimmed
                .chars()
                .take_while(|ch| !ch.is_whitespace() && *ch != ';')
                .collect::<String>()
                .to_ascii_lowercase();
            if let Some((_, _, verb, _)) = COMMANDS.iter().find(|(name, _, _, _)| *name == word) {
                // The long form takes its line up to a `;`; what follows the `;` is read on.
                let end = argument_end(b, i);
                let start = (i + (rest.len() - trimmed.len()) + word.len()).min(end);
                out.push(Piece::Command(verb, text[start..end].to_string()));
                i = end;
                buf.clear();
                continue;
            }
        }
        line_start = false;
        match c {
            b'\n' => {
                line_start = true;
                buf.push('\n');
                i += 1;
            }
            b'\'' | b'"' | b'`' => {
                let mut j = i + 1;
                loop {
                    match b.get(j) {
                        None => return Err("an unterminated quoted string".into()),
                        Some(b'\\') if c != b'`' => {
                            return Err(
                                "a backslash inside a quoted string (it reads differently under NO_BACKSLASH_ESCAPES): use CHAR() or a hex literal"
                                    .into(),
                            );
                        }
                        Some(&q) if q == c => {
                            if b.get(j + 1) == Some(&c) {
                                j += 2;
                            } else {
                                break;
                            }
                        }
                        Some(_) => j += 1,
                    }
                }
                buf.push_str(&text[i..=j]);
                i = j + 1;
            }
            b'#' => {
                let end = (i..b.len()).find(|&k| b[k] == b'\n').unwrap_or(b.len());
                i = end;
            }
            b'-' if b.get(i + 1) == Some(&b'-') && b.get(i + 2).is_none_or(|n| n.is_ascii_whitespace() || n.is_ascii_control()) => {
                let end = (i..b.len()).find(|&k| b[k] == b'\n').unwrap_or(b.len());
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                if matches!(b.get(i + 2), Some(b'!')) || (b.get(i + 2) == Some(&b'M') && b.get(i + 3) == Some(&b'!')) {
                    return Err("an executable comment (/*! … */ runs its contents)".into());
                }
                let Some(k) = text[i + 2..].find("*/") else {
                    return Err("an unterminated /* comment".into());
                };
                buf.push(' ');
                i = i + 2 + k + 2;
            }
            b';' => {
                push_sql(&mut buf, &mut out);
                i += 1;
            }
            b'\\' if commands => {
                let Some(&cmd) = b.get(i + 1) else {
                    return Err("a backslash at the end of the text".into());
                };
                let ch = char::from(cmd);
                match COMMANDS.iter().find(|(_, short, _, _)| *short == ch) {
                    Some(_) if matches!(ch, 'g' | 'G') => {
                        // Sends the statement, like `;`.
                        push_sql(&mut buf, &mut out);
                        i += 2;
                    }
                    Some((_, _, verb, takes_argument)) => {
                        push_sql(&mut buf, &mut out);
                        // An argument runs to a `;` or the end of the line, and the client reads
                        // on after it; a command without one is followed by more input at once.
                        let end = if *takes_argument { argument_end(b, i) } else { i + 2 };
                        out.push(Piece::Command(verb, text[i + 2..end].to_string()));
                        i = end;
                    }
                    None => return Err(format!("an unknown client command \\{ch}")),
                }
            }
            _ => {
                let ch = text[i..].chars().next().unwrap_or(' ');
                buf.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    push_sql(&mut buf, &mut out);
    Ok(out)
}

/// Where a client command's argument ends: after the first `;` on its line, or after the line.
fn argument_end(b: &[u8], from: usize) -> usize {
    match (from..b.len()).find(|&k| b[k] == b';' || b[k] == b'\n') {
        Some(k) => k + 1,
        None => b.len(),
    }
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

    fn problem(words: &[&str]) -> String {
        parse(&argv(words)).problem.unwrap_or_default()
    }

    #[test]
    fn the_files_tee_appends_to_are_declared() {
        let files = |words: &[&str]| -> Vec<(String, String)> {
            let inv = parse(&argv(words));
            assert_eq!(inv.problem, None, "{words:?}");
            inv.files.into_iter().map(|f| (f.path, f.flag)).collect()
        };
        let f = |p: &str, flag: &str| (p.to_string(), flag.to_string());
        assert_eq!(files(&["--tee=out.log", "-e", "select 1"]), [f("out.log", "--tee")]);
        assert_eq!(files(&["-e", "tee session.log; select 1"]), [f("session.log", "tee")]);
        assert_eq!(files(&["-e", "select 1\\T my log.txt\n"]), [f("my log.txt", "tee")]);
        assert_eq!(files(&["-e", "notee"]), []);
    }

    #[test]
    fn every_form_of_execute_is_read() {
        for words in [
            &["-e", "select 1"][..],
            &["-eselect 1"],
            &["-Ne", "select 1"],
            &["--execute=select 1"],
            &["--execute", "select 1"],
            &["--exec=select 1"],
            &["--loose-execute=select 1"],
            &["app", "-e", "select 1"],
            &["-e", "select 1", "app"],
            &["--skip-column_names", "-e", "select 1"],
        ] {
            assert_eq!(verbs(words), vec!["sql select"], "{words:?}");
        }
        assert_eq!(problem(&["--e=select 1"]), "option --e is ambiguous");
    }

    #[test]
    fn statements_and_client_commands_are_split_as_the_client_splits_them() {
        assert_eq!(
            verbs(&["-e", "select 1; delete from t; show tables\\G"]),
            vec!["sql select", "sql delete", "sql show"]
        );
        assert_eq!(verbs(&["-e", "select ';drop table t' -- ; drop table t\n"]), vec!["sql select"]);
        assert_eq!(verbs(&["-e", "select 1 # ; drop table t\n"]), vec!["sql select"]);
        assert_eq!(verbs(&["-e", "\\! id"]), vec!["command system"]);
        assert_eq!(
            verbs(&["-e", "select 1;\nSYSTEM id\nselect 2"]),
            vec!["sql select", "command system", "sql select"]
        );
        assert_eq!(verbs(&["-e", "source /tmp/x.sql"]), vec!["command source"]);
        assert_eq!(verbs(&["-e", "select 1 \\. /tmp/x.sql"]), vec!["sql select", "command source"]);
        assert_eq!(verbs(&["-e", "use app; select 1"]), vec!["command use", "sql select"]);
        assert_eq!(verbs(&["-e", "system id; select 1"]), vec!["command system", "sql select"]);
        assert_eq!(verbs(&["-e", "\\! id; delete from t"]), vec!["command system", "sql delete"]);
        assert_eq!(verbs(&["-e", "\\p select 1;"]), vec!["command print", "sql select"]);
        // A long form is a command only at the start of a statement; here it is SQL.
        assert!(problem(&["-e", "select 1\nuse app\n;"]).contains("cannot parse"));
    }

    #[test]
    fn functions_are_actions() {
        assert_eq!(
            verbs(&["-e", "select sleep(1), now()"]),
            vec!["function sleep", "function now", "sql select"]
        );
    }

    #[test]
    fn what_the_gate_cannot_follow_is_a_problem() {
        assert!(problem(&["-e", "select 1 /*! , sleep(5) */"]).contains("executable comment"));
        assert!(problem(&["-e", "select 1 /*M!100000 , 2 */"]).contains("executable comment"));
        assert!(problem(&["-e", "select 'a\\'; drop table t; -- '"]).contains("backslash inside a quoted string"));
        assert!(problem(&["-e", "delimiter //\nselect 1//"]).contains("delimiter"));
        assert!(problem(&["--delimiter=//", "-e", "select 1"]).contains("moves where statements end"));
        assert!(problem(&["-G", "-e", "select 1"]).contains("client commands"));
        assert!(problem(&["--defaults-file=/tmp/x", "-e", "select 1"]).starts_with("unknown option"));
        assert!(problem(&["-e", "select 'x"]).contains("unterminated"));
        assert!(problem(&["-e", "\\z"]).contains("unknown client command"));
    }

    #[test]
    fn dangerous_options_are_actions() {
        assert_eq!(verbs(&["--pager=sh", "-e", "select 1"]), vec!["option pager", "sql select"]);
        assert_eq!(verbs(&["--skip-pager", "-e", "select 1"]), vec!["sql select"]);
        assert_eq!(
            verbs(&["--local-infile", "-e", "select 1"]),
            vec!["option local-infile", "sql select"]
        );
        assert_eq!(verbs(&["--local-infile=0", "-e", "select 1"]), vec!["sql select"]);
        assert_eq!(
            verbs(&["--plugin_dir=/tmp", "-e", "select 1"]),
            vec!["option plugin-dir", "sql select"]
        );
        assert_eq!(
            verbs(&["--init-command=set autocommit=0", "-e", "select 1"]),
            vec!["init-command", "sql set", "sql select"]
        );
    }

    fn marked(words: &[&str]) -> Vec<String> {
        let inv = parse(&argv(words));
        assert_eq!(inv.problem, None, "{words:?}");
        inv.actions.into_iter().map(Action::shown_with_marks).collect()
    }

    #[test]
    fn a_default_character_set_the_gate_cannot_lex_is_marked_in_every_spelling() {
        let gbk_trick = "select 1 as `丁` # `\\! touch /tmp/x #";
        for words in [
            &["--default-character-set=gbk", "-e", gbk_trick][..],
            &["--default-character-set", "GBK", "-e", gbk_trick],
            &["--default_character_set=sjis", "-e", gbk_trick],
            &["--default-char=big5", "-e", gbk_trick],
            &["--loose-default-character-set=cp932", "-e", gbk_trick],
            &["-e", gbk_trick, "--default-character-set=gb18030"],
            &["--default-character-set=auto", "-e", gbk_trick],
            &["--default-character-set=utf8mb4", "--default-character-set=gb2312", "-e", gbk_trick],
        ] {
            let got = marked(words);
            assert!(
                got.contains(&"option default-character-set [charset]".to_string()),
                "{words:?}: {got:?}"
            );
        }
        for cs in ["utf8mb4", "UTF8", "utf8mb3", "latin1", "ascii", "binary"] {
            let opt = format!("--default-character-set={cs}");
            assert_eq!(
                marked(&[&opt, "-e", "select 1"]),
                vec!["option default-character-set", "sql select"],
                "{cs}"
            );
        }
    }

    #[test]
    fn a_charset_client_command_to_an_unsafe_set_is_marked() {
        assert_eq!(marked(&["-e", "charset gbk"]), vec!["command charset [charset]"]);
        assert_eq!(
            marked(&["-e", "CHARSET sjis;\nselect 1"]),
            vec!["command charset [charset]", "sql select"]
        );
        assert_eq!(
            marked(&["-e", "select 1 \\C big5"]),
            vec!["sql select", "command charset [charset]"]
        );
        assert_eq!(marked(&["-e", "\\Ccp932"]), vec!["command charset [charset]"]);
        assert_eq!(marked(&["-e", "\\C 'utf8'"]), vec!["command charset [charset]"]);
        assert_eq!(marked(&["-e", "charset utf8mb4; select 1"]), vec!["command charset", "sql select"]);
        assert_eq!(marked(&["-e", "\\C latin1"]), vec!["command charset"]);
        assert_eq!(marked(&["-e", "\\C"]), vec!["command charset"]);
        assert_eq!(marked(&["-e", "set names gbk; select 1"]), vec!["sql set [charset]", "sql select"]);
        assert_eq!(
            marked(&["--init-command=SET NAMES sjis", "-e", "select 1"]),
            vec!["init-command", "sql set [charset]", "sql select"]
        );
    }

    #[test]
    fn the_client_character_set_is_pinned_after_no_defaults() {
        assert_eq!(PREPEND, &["--no-defaults", "--default-character-set=utf8mb4"]);
    }

    #[test]
    fn stdin_is_a_script_unless_there_is_execute() {
        assert_eq!(
            sources(&argv(&["app"])),
            Sources {
                stdin: true,
                files: vec![]
            }
        );
        assert_eq!(sources(&argv(&["-e", "select 1"])), Sources::default());
        assert_eq!(verbs(&["app"]), vec!["script"]);
        let inputs = Inputs {
            stdin: Input::Text("select 1;\n\\! id\n".into()),
            files: vec![],
        };
        let inv = parse_with(&argv(&["app"]), &inputs);
        let v: Vec<&str> = inv.actions.iter().map(|a| a.verb.as_str()).collect();
        assert_eq!(v, vec!["script", "sql select", "command system"]);
        let inputs = Inputs {
            stdin: Input::Terminal,
            files: vec![],
        };
        assert_eq!(parse_with(&argv(&[]), &inputs).actions, vec![Action::new("interactive")]);
    }

    #[test]
    fn an_attached_password_is_redacted_for_logs() {
        assert_eq!(
            redact(&argv(&["-psecret", "-Nps3", "-uproot", "-p", "-e", "select 1"])),
            argv(&["-pREDACTED", "-NpREDACTED", "-uproot", "-p", "-e", "select 1"])
        );
    }

    #[test]
    fn the_user_is_a_claim_against_a_pinned_mysql_user() {
        let inv = parse(&argv(&["-uroot", "-e", "select 1"]));
        assert_eq!(
            inv.claims,
            vec![Claim::PinnedIfSet {
                var: "MYSQL_USER",
                value: "root".into(),
                flag: "-uroot".into(),
                exclusive: &[]
            }]
        );
    }
}
