//! Making caller-supplied text safe to print and to log: control and bidi characters are
//! escaped (so a crafted argument cannot rewrite the operator's terminal or hide text), and
//! secrets are redacted (tokens, `Authorization` headers, URL passwords, `--password` values).
//! This module never decides anything.

use std::borrow::Cow;

const REDACTED: &str = "[REDACTED]";

fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Escape control and bidi characters as `\n`, `\t`, `\u{…}`.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Options whose next value is a secret, for any tool.
const SECRET_OPTS: &[&str] = &[
    "--password",
    "--token",
    "--oauth2-bearer",
    "--proxy-user",
    "--pass",
    "--proxy-pass",
    "--tlspassword",
    "--proxy-tlspassword",
    "--secret",
    "--with-token",
];
/// curl's `-u user:password` / `--user user:password` (and the proxy's), and a client
/// certificate's `file:password` (`-E`, `--cert`, `--proxy-cert`): what follows the first `:`.
const USER_OPTS: &[&str] = &["-u", "--user", "-U", "-E", "--cert", "--proxy-cert"];
/// curl's `-b name=value; …`: cookie values.
const COOKIE_OPTS: &[&str] = &["-b", "--cookie"];
/// Options whose value is a header line (`--header=Authorization: x`).
const HEADER_OPTS: &[&str] = &["-H", "--header", "--proxy-header"];

/// Redact one word of argv (or any caller-supplied string).
///
/// Hand-written scanners, not regular expressions: compiling the equivalent regexes cost the
/// gate ~90% of its instructions on every call. Each scanner is a leftmost, non-overlapping
/// search-and-replace with the exact meaning of the pattern in its comment; a differential
/// test below holds them to those patterns.
pub fn redact(s: &str) -> Cow<'_, str> {
    if let Some(head) = header_name(s) {
        return Cow::Owned(format!("{head} {REDACTED}"));
    }
    let mut out = Cow::Borrowed(s);
    for pass in [tokens, url_passwords, bare_url_password, json_secrets, key_values, bearers] {
        if let Some(changed) = pass(&out) {
            out = Cow::Owned(changed);
        }
    }
    out
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `\b` before the ASCII word character at byte `i`: the character before it (Unicode) is not
/// a word character.
fn boundary_before(s: &str, i: usize) -> bool {
    !s[..i].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Bytes from `i` on that satisfy `ok`, as an end index.
fn run_end(b: &[u8], mut i: usize, ok: impl Fn(u8) -> bool) -> usize {
    while i < b.len() && ok(b[i]) {
        i += 1;
    }
    i
}

fn starts_with_ci(b: &[u8], i: usize, word: &str) -> bool {
    b.len() >= i + word.len() && b[i..i + word.len()].eq_ignore_ascii_case(word.as_bytes())
}

/// Skip Unicode whitespace from byte `i` (a char boundary).
fn skip_ws(s: &str, i: usize) -> usize {
    match s.get(i..).and_then(|rest| rest.char_indices().find(|(_, c)| !c.is_whitespace())) {
        Some((k, _)) => i + k,
        None => s.len(),
    }
}

/// Replace every match `find(s, i) -> Some((start, end, replacement))`, leftmost first, not
/// overlapping. `find` returns the first match at or after `i`.
fn replace_all(s: &str, find: impl Fn(&str, usize) -> Option<(usize, usize, String)>) -> Option<String> {
    let mut out = String::new();
    let mut last = 0;
    let mut i = 0;
    let mut changed = false;
    while i <= s.len() {
        let Some((start, end, rep)) = find(s, i) else { break };
        out.push_str(&s[last..start]);
        out.push_str(&rep);
        changed = true;
        last = end;
        i = if end > start { end } else { end + 1 };
    }
    if !changed {
        return None;
    }
    out.push_str(&s[last..]);
    Some(out)
}

/// `(?i)^\s*([a-z0-9_\-]*(authorization|auth|cookie|token|secret|api-?key|apikey|password|passwd|session|signature|credential)[a-z0-9_\-]*)\s*:`
/// -> the header's name and colon, trimmed: a header whose value is a credential.
fn header_name(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    let start = skip_ws(s, 0);
    let name_end = run_end(b, start, |c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-');
    let colon = skip_ws(s, name_end);
    if name_end == start || b.get(colon) != Some(&b':') {
        return None;
    }
    let name = s[start..name_end].to_ascii_lowercase();
    const KEYS: &[&str] = &[
        "authorization",
        "auth",
        "cookie",
        "token",
        "secret",
        "api-key",
        "apikey",
        "password",
        "passwd",
        "session",
        "signature",
        "credential",
    ];
    KEYS.iter().any(|k| name.contains(k)).then(|| s[start..=colon].trim_end())
}

/// `gh[pousr]_[A-Za-z0-9]{16,} | github_pat_[A-Za-z0-9_]{20,} | glpat-[A-Za-z0-9_\-]{16,} |
/// xox[abprs]-[A-Za-z0-9\-]{10,} | AKIA[0-9A-Z]{16} |
/// eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*` -> `[REDACTED]`.
fn tokens(s: &str) -> Option<String> {
    fn at(b: &[u8], i: usize) -> Option<usize> {
        let alnum = |c: u8| c.is_ascii_alphanumeric();
        let alnum_us = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        let alnum_us_dash = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
        let alnum_dash = |c: u8| c.is_ascii_alphanumeric() || c == b'-';
        let min = |start: usize, end: usize, n: usize| (end - start >= n).then_some(end);
        let rest = &b[i..];
        if rest.len() >= 4
            && rest.starts_with(b"gh")
            && b"pousr".contains(&rest[2])
            && rest[3] == b'_'
            && let Some(e) = min(i + 4, run_end(b, i + 4, alnum), 16)
        {
            return Some(e);
        }
        if rest.starts_with(b"github_pat_")
            && let Some(e) = min(i + 11, run_end(b, i + 11, alnum_us), 20)
        {
            return Some(e);
        }
        if rest.starts_with(b"glpat-")
            && let Some(e) = min(i + 6, run_end(b, i + 6, alnum_us_dash), 16)
        {
            return Some(e);
        }
        if rest.len() >= 4
            && rest.starts_with(b"xox")
            && b"abprs".contains(&rest[3])
            && rest.get(4) == Some(&b'-')
            && let Some(e) = min(i + 5, run_end(b, i + 5, alnum_dash), 10)
        {
            return Some(e);
        }
        if rest.starts_with(b"AKIA") && rest.len() >= 20 && rest[4..20].iter().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()) {
            return Some(i + 20);
        }
        if rest.starts_with(b"eyJ") {
            let a = run_end(b, i + 3, alnum_us_dash);
            if a - (i + 3) >= 10 && b.get(a) == Some(&b'.') {
                let c = run_end(b, a + 1, alnum_us_dash);
                if c - (a + 1) >= 10 && b.get(c) == Some(&b'.') {
                    return Some(run_end(b, c + 1, alnum_us_dash));
                }
            }
        }
        None
    }
    replace_all(s, |s, from| {
        let b = s.as_bytes();
        (from..b.len()).find_map(|i| at(b, i).map(|e| (i, e, REDACTED.to_string())))
    })
}

/// `(?i)([a-z][a-z0-9+.\-]*://[^/\s:@]*):[^@/\s]*@` -> `$1:[REDACTED]@`.
fn url_passwords(s: &str) -> Option<String> {
    replace_all(s, |s, from| {
        let b = s.as_bytes();
        let mut search = from;
        while let Some(k) = s.get(search..).and_then(|r| r.find("://")).map(|k| k + search) {
            search = k + 1;
            // A scheme ends right before `://`: a run of scheme characters holding a letter.
            let mut p = k;
            while p > from && (b[p - 1].is_ascii_alphanumeric() || b"+.-".contains(&b[p - 1])) {
                p -= 1;
            }
            let Some(scheme_start) = (p..k).find(|&q| b[q].is_ascii_alphabetic()) else {
                continue;
            };
            let user_end = k
                + 3
                + s[k + 3..]
                    .find(|c: char| c == '/' || c == ':' || c == '@' || c.is_whitespace())
                    .unwrap_or(s.len() - k - 3);
            if b.get(user_end) != Some(&b':') {
                continue;
            }
            let pw_end = user_end
                + 1
                + s[user_end + 1..]
                    .find(|c: char| c == '@' || c == '/' || c.is_whitespace())
                    .unwrap_or(s.len() - user_end - 1);
            if b.get(pw_end) != Some(&b'@') {
                continue;
            }
            return Some((scheme_start, pw_end + 1, format!("{}:{REDACTED}@", &s[scheme_start..user_end])));
        }
        None
    })
}

/// `^([A-Za-z0-9._~%!$&'()*+,;=\-]+):[^@/\s]*@` -> `$1:[REDACTED]@`: `user:password@host`
/// without a scheme, as curl takes it.
fn bare_url_password(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let user_end = run_end(b, 0, |c| c.is_ascii_alphanumeric() || b"._~%!$&'()*+,;=-".contains(&c));
    if user_end == 0 || b.get(user_end) != Some(&b':') {
        return None;
    }
    let pw_end = user_end
        + 1
        + s[user_end + 1..]
            .find(|c: char| c == '@' || c == '/' || c.is_whitespace())
            .unwrap_or(s.len() - user_end - 1);
    if b.get(pw_end) != Some(&b'@') {
        return None;
    }
    Some(format!("{}:{REDACTED}@{}", &s[..user_end], &s[pw_end + 1..]))
}

/// `(?i)("[a-z0-9_\-]*(password|passwd|token|secret|api_?key|client_secret|private_key|credential)[a-z0-9_\-]*"\s*:\s*)"(?:[^"\\]|\\.)*"`
/// -> `$1"[REDACTED]"`: a secret's value in a JSON body.
fn json_secrets(s: &str) -> Option<String> {
    const KEYS: &[&str] = &[
        "password",
        "passwd",
        "token",
        "secret",
        "api_key",
        "apikey",
        "client_secret",
        "private_key",
        "credential",
    ];
    replace_all(s, |s, from| {
        let b = s.as_bytes();
        let mut i = from;
        while let Some(q) = s.get(i..).and_then(|r| r.find('"')).map(|k| k + i) {
            i = q + 1;
            let key_end = run_end(b, q + 1, |c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-');
            if b.get(key_end) != Some(&b'"') {
                continue;
            }
            let key = s[q + 1..key_end].to_ascii_lowercase();
            if !KEYS.iter().any(|k| key.contains(k)) {
                continue;
            }
            let colon = skip_ws(s, key_end + 1);
            if b.get(colon) != Some(&b':') {
                continue;
            }
            let open = skip_ws(s, colon + 1);
            if b.get(open) != Some(&b'"') {
                continue;
            }
            // The string value: escapes take the next character, whatever it is.
            let mut j = open + 1;
            let mut close = None;
            while let Some(c) = s.get(j..).and_then(|r| r.chars().next()) {
                match c {
                    '"' => {
                        close = Some(j);
                        break;
                    }
                    '\\' => {
                        j += 1;
                        // `\\.`: any character but a newline.
                        match s.get(j..).and_then(|r| r.chars().next()) {
                            Some(e) if e != '\n' => j += e.len_utf8(),
                            _ => break,
                        }
                    }
                    c => j += c.len_utf8(),
                }
            }
            let Some(close) = close else { continue };
            return Some((q, close + 1, format!("{}\"{REDACTED}\"", &s[q..open])));
        }
        None
    })
}

/// `(?i)\b(password|passwd|pwd|token|secret|access_token|api_key|apikey|client_secret|sslpassword)\s*=\s*('[^']*'|[^\s&;]*)`
/// -> `$1=[REDACTED]`.
fn key_values(s: &str) -> Option<String> {
    const KEYS: &[&str] = &[
        "password",
        "passwd",
        "pwd",
        "token",
        "secret",
        "access_token",
        "api_key",
        "apikey",
        "client_secret",
        "sslpassword",
    ];
    replace_all(s, |s, from| {
        let b = s.as_bytes();
        for i in from..b.len() {
            if !is_word(b[i]) || !boundary_before(s, i) {
                continue;
            }
            for k in KEYS {
                if !starts_with_ci(b, i, k) {
                    continue;
                }
                let eq = skip_ws(s, i + k.len());
                if b.get(eq) != Some(&b'=') {
                    continue;
                }
                let v = skip_ws(s, eq + 1);
                let quoted = (b.get(v) == Some(&b'\''))
                    .then(|| s[v + 1..].find('\'').map(|c| v + 1 + c + 1))
                    .flatten();
                let end = quoted.unwrap_or_else(|| {
                    v + s[v..]
                        .find(|c: char| c.is_whitespace() || c == '&' || c == ';')
                        .unwrap_or(s.len() - v)
                });
                return Some((i, end, format!("{}={REDACTED}", &s[i..i + k.len()])));
            }
        }
        None
    })
}

/// `(?i)\b(bearer|token|basic)\s+[A-Za-z0-9._~+/=\-]{8,}` -> `$1 [REDACTED]`.
fn bearers(s: &str) -> Option<String> {
    replace_all(s, |s, from| {
        let b = s.as_bytes();
        for i in from..b.len() {
            if !is_word(b[i]) || !boundary_before(s, i) {
                continue;
            }
            for k in ["bearer", "token", "basic"] {
                if !starts_with_ci(b, i, k) {
                    continue;
                }
                let ws = skip_ws(s, i + k.len());
                if ws == i + k.len() {
                    continue;
                }
                let end = run_end(b, ws, |c| c.is_ascii_alphanumeric() || b"._~+/=-".contains(&c));
                if end - ws >= 8 {
                    return Some((i, end, format!("{} {REDACTED}", &s[i..i + k.len()])));
                }
            }
        }
        None
    })
}

/// Redact a whole argv: each word, plus the values of options that carry secrets, in every
/// form the wrapped tools accept (`--opt v`, `--opt=v`, `-ov`, `-sov`).
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut next: Option<fn(&str) -> String> = None;
    for a in args {
        if let Some(f) = next.take() {
            out.push(f(a));
            continue;
        }
        if let Some((opt, v)) = a.split_once('=') {
            let known: Option<fn(&str) -> String> = if SECRET_OPTS.contains(&opt) {
                Some(|_| REDACTED.to_string())
            } else if USER_OPTS.contains(&opt) && opt.starts_with("--") {
                Some(redact_user)
            } else if COOKIE_OPTS.contains(&opt) && opt.starts_with("--") {
                Some(redact_cookie)
            } else if HEADER_OPTS.contains(&opt) && opt.starts_with("--") {
                Some(|v| redact(v).into_owned())
            } else {
                None
            };
            if let Some(f) = known {
                out.push(format!("{opt}={}", f(v)));
                continue;
            }
        }
        if SECRET_OPTS.contains(&a.as_str()) {
            next = Some(|_| REDACTED.to_string());
        } else if USER_OPTS.contains(&a.as_str()) {
            next = Some(redact_user);
        } else if COOKIE_OPTS.contains(&a.as_str()) {
            next = Some(redact_cookie);
        } else if let Some((letter, rest)) = short_cluster(a) {
            // `-uuser:pw`, `-su user:pw`, `-bsid=x`, `-HAuthorization: x`.
            let f: fn(&str) -> String = match letter {
                'u' | 'U' | 'E' => redact_user,
                'b' => redact_cookie,
                _ => |v| redact(v).into_owned(),
            };
            match rest {
                "" => next = Some(f),
                r => {
                    let head = &a[..a.len() - r.len()];
                    out.push(format!("{head}{}", f(r)));
                    continue;
                }
            }
        }
        match a.strip_prefix('-').filter(|b| !b.starts_with('-')).and_then(|b| b.chars().next()) {
            // An attached value (`-dpassword=x`) is redacted on its own.
            Some(c) if a.len() > 1 + c.len_utf8() => {
                let (head, rest) = a.split_at(1 + c.len_utf8());
                out.push(redact(&format!("{head}{}", redact(rest))).into_owned());
            }
            _ => out.push(redact(a).into_owned()),
        }
    }
    out
}

/// A short-option word whose letters before one of `u U E b H` are plain letters: that letter
/// and what follows it (the attached value, or "" when the value is the next word). It errs
/// towards redacting: a value that only looks like one loses what follows its first `:`.
fn short_cluster(a: &str) -> Option<(char, &str)> {
    let body = a.strip_prefix('-').filter(|b| !b.starts_with('-'))?;
    for (i, c) in body.char_indices() {
        if matches!(c, 'u' | 'U' | 'E' | 'b' | 'H') {
            return Some((c, &body[i + c.len_utf8()..]));
        }
        if !c.is_ascii_alphanumeric() && c != '#' && c != ':' {
            return None;
        }
    }
    None
}

/// `name=value; name2=value2` -> values redacted; a cookie file name is left alone.
fn redact_cookie(v: &str) -> String {
    if !v.contains('=') {
        return v.to_string();
    }
    v.split(';')
        .map(|pair| match pair.split_once('=') {
            Some((k, _)) => format!("{k}={REDACTED}"),
            None => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join(";")
}

fn redact_user(v: &str) -> String {
    let v = redact(v);
    match v.split_once(':') {
        Some((user, _)) => format!("{user}:{REDACTED}"),
        None => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;
    use pretty_assertions::assert_eq;

    #[test]
    fn control_and_bidi_characters_are_escaped() {
        assert_eq!(escape("a\x1b[2Jb\u{202e}c\nd"), "a\\u{1b}[2Jb\\u{202e}c\\nd");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn secrets_in_argv_are_redacted() {
        let got = redact_args(&argv(&[
            "-H",
            "Authorization: Bearer abcdefghijkl",
            "https://bob:hunter2@example.com/x",
            "--password",
            "s3cret",
            "-u",
            "bob:pw",
            "host=db password=pw user=x",
            "ghp_abcdefghijklmnopqrstuvwxyz0123",
            "--token=abc",
            "-su",
            "bob:pw",
            "-fsubob:pw",
            "-u",
            "nginx",
        ]));
        assert_eq!(
            got,
            argv(&[
                "-H",
                "Authorization: [REDACTED]",
                "https://bob:[REDACTED]@example.com/x",
                "--password",
                "[REDACTED]",
                "-u",
                "bob:[REDACTED]",
                "host=db password=[REDACTED] user=x",
                "[REDACTED]",
                "--token=[REDACTED]",
                "-su",
                "bob:[REDACTED]",
                "-fsubob:[REDACTED]",
                "-u",
                "nginx",
            ])
        );
    }

    /// The patterns the scanners implement, as regular expressions: the specification.
    struct Spec {
        header: regex::Regex,
        passes: Vec<(regex::Regex, String)>,
    }

    fn spec() -> Spec {
        use regex::Regex;
        let header = Regex::new(
            r"(?i)^\s*([a-z0-9_\-]*(authorization|auth|cookie|token|secret|api-?key|apikey|password|passwd|session|signature|credential)[a-z0-9_\-]*)\s*:",
        )
        .unwrap();
        let passes = [
            (
                concat!(
                    r"(gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_\-]{16,}",
                    r"|xox[abprs]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*)"
                ),
                REDACTED.to_string(),
            ),
            (r"(?i)([a-z][a-z0-9+.\-]*://[^/\s:@]*):[^@/\s]*@", format!("${{1}}:{REDACTED}@")),
            (r"^([A-Za-z0-9._~%!$&'()*+,;=\-]+):[^@/\s]*@", format!("${{1}}:{REDACTED}@")),
            (
                r#"(?i)("[a-z0-9_\-]*(password|passwd|token|secret|api_?key|client_secret|private_key|credential)[a-z0-9_\-]*"\s*:\s*)"(?:[^"\\]|\\.)*""#,
                format!("${{1}}\"{REDACTED}\""),
            ),
            (
                r"(?i)\b(password|passwd|pwd|token|secret|access_token|api_key|apikey|client_secret|sslpassword)\s*=\s*('[^']*'|[^\s&;]*)",
                format!("${{1}}={REDACTED}"),
            ),
            (
                r"(?i)\b(bearer|token|basic)\s+[A-Za-z0-9._~+/=\-]{8,}",
                format!("${{1}} {REDACTED}"),
            ),
        ];
        Spec {
            header,
            passes: passes.into_iter().map(|(re, rep)| (Regex::new(re).unwrap(), rep)).collect(),
        }
    }

    fn redact_by_regex(spec: &Spec, s: &str) -> String {
        if let Some(m) = spec.header.find(s) {
            return format!("{} {REDACTED}", m.as_str().trim());
        }
        let mut out = s.to_string();
        for (re, rep) in &spec.passes {
            out = re.replace_all(&out, rep.as_str()).into_owned();
        }
        out
    }

    #[test]
    fn the_scanners_redact_exactly_what_their_patterns_match() {
        const PIECES: &[&str] = &[
            "ghp_",
            "gho_",
            "github_pat_",
            "glpat-",
            "xoxb-",
            "xoxz-",
            "AKIA",
            "eyJ",
            "abcdefghij",
            "ABCDEFGHIJ",
            "0123456789",
            "_",
            "-",
            ".",
            "://",
            "http",
            "https://",
            "user",
            "bob",
            ":",
            "@",
            "/",
            " ",
            "\t",
            "\n",
            "\u{a0}",
            "password",
            "PassWord",
            "passwd",
            "pwd",
            "token",
            "TOKEN",
            "access_token",
            "api_key",
            "apikey",
            "client_secret",
            "sslpassword",
            "secret",
            "=",
            "'",
            "\"",
            "\\",
            "&",
            ";",
            "bearer ",
            "Basic ",
            "Authorization",
            "X-Api-Key",
            "cookie",
            "session",
            "{",
            "}",
            ",",
            "é",
            "x",
            "9",
            "+",
            "%",
            "~",
            "private_key",
            "credential",
            "auth",
        ];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let spec = spec();
        let mut checked = 0;
        for _ in 0..40_000 {
            let len = 1 + next(14);
            let s: String = (0..len).map(|_| PIECES[next(PIECES.len())]).collect();
            assert_eq!(redact(&s), redact_by_regex(&spec, &s), "input {s:?}");
            checked += 1;
        }
        assert_eq!(checked, 40_000);
        for s in [
            "Authorization : Bearer x",
            "  X-Auth-Token: t",
            "ghp_abcdefghijklmnop",
            "ghp_abcdefghijklmno",
            "AKIAABCDEFGHIJKLMNOPQ",
            "eyJaaaaaaaaaa.bbbbbbbbbb.cc",
            "https://a:b@c/https://d:e@f",
            "x9://u:p@h",
            "9://u:p@h",
            "{\"api_key\": \"a\\\"b\", \"token\":\"c\"}",
            "{\"password\": \"a\\\nb\"}",
            "password = 'quoted value' rest",
            "password='unterminated rest",
            "étoken=x",
            "token\u{a0}=x",
            "Basic  YWxhZGRpbjpvcGVuc2VzYW1l",
        ] {
            assert_eq!(redact(s), redact_by_regex(&spec, s), "input {s:?}");
        }
    }

    #[test]
    fn curl_secrets_are_redacted_in_every_form() {
        for (word, want) in [
            (&["-ubob:pw", "x"][..], &["-ubob:[REDACTED]", "x"][..]),
            (&["-su", "bob:pw"], &["-su", "bob:[REDACTED]"]),
            (&["-sSubob:pw"], &["-sSubob:[REDACTED]"]),
            (&["--user=bob:pw"], &["--user=bob:[REDACTED]"]),
            (&["-U", "proxy:pw"], &["-U", "proxy:[REDACTED]"]),
            (&["-E", "client.pem:certpw"], &["-E", "client.pem:[REDACTED]"]),
            (&["--cert=client.pem:certpw"], &["--cert=client.pem:[REDACTED]"]),
            (&["-b", "session=abc; theme=x"], &["-b", "session=[REDACTED]; theme=[REDACTED]"]),
            (&["-b", "jar.txt"], &["-b", "jar.txt"]),
            (&["--cookie=sid=abc"], &["--cookie=sid=[REDACTED]"]),
            (&["-HX-Api-Key: k1"], &["-HX-Api-Key: [REDACTED]"]),
            (&["--header=PRIVATE-TOKEN: t"], &["--header=PRIVATE-TOKEN: [REDACTED]"]),
            (&["-H", "X-Gitea-OTP-Token: 1"], &["-H", "X-Gitea-OTP-Token: [REDACTED]"]),
            (&["-H", "Accept: application/json"], &["-H", "Accept: application/json"]),
            (&["bob:pw@example.com/x"], &["bob:[REDACTED]@example.com/x"]),
            (&["--url", "https://bob:pw@h/"], &["--url", "https://bob:[REDACTED]@h/"]),
            (&["--tlspassword", "p"], &["--tlspassword", "[REDACTED]"]),
            (&["-dpassword=x&a=1"], &["-dpassword=[REDACTED]&a=1"]),
            (
                &["--json", r#"{"user":"a","password":"p\"w","api_token":"t"}"#],
                &["--json", r#"{"user":"a","password":"[REDACTED]","api_token":"[REDACTED]"}"#],
            ),
            (&["-f", "token=abc"], &["-f", "token=[REDACTED]"]),
            (&["https://h/x?access_token=abc&b=1"], &["https://h/x?access_token=[REDACTED]&b=1"]),
            (&["-XPUT", "https://h/x"], &["-XPUT", "https://h/x"]),
            (&["-é", "-éx", "-\u{1F600}pw"], &["-é", "-éx", "-\u{1F600}pw"]),
        ] {
            assert_eq!(redact_args(&argv(word)), argv(want), "{word:?}");
        }
    }
}
