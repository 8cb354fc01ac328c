//! Making caller-supplied text safe to print and to log: control and bidi characters are
//! escaped (so a crafted argument cannot rewrite the operator's terminal or hide text), and
//! secrets are redacted (tokens, `Authorization` headers, URL passwords, `--password` values).
//! This module never decides anything.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

const REDACTED: &str = "[REDACTED]";

/// Compile one of this module's constant patterns. They are fixed at build time and exercised by
/// the tests below, so a failure here is a programming error, not an input error.
#[allow(clippy::expect_used)]
fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("constant pattern compiles")
}

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

static TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"(gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_\-]{16,}",
        r"|xox[abprs]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*)"
    ))
});
/// A header whose value is a credential: the usual names, and any name that says token,
/// secret, key, password, session, cookie, signature, credential or auth.
static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^\s*([a-z0-9_\-]*(authorization|auth|cookie|token|secret|api-?key|apikey|password|passwd|session|signature|credential)[a-z0-9_\-]*)\s*:",
    )
});
static URL_PASSWORD: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)([a-z][a-z0-9+.\-]*://[^/\s:@]*):[^@/\s]*@"));
/// `user:password@host/…` without a scheme, as curl takes it.
static BARE_URL_PASSWORD: LazyLock<Regex> = LazyLock::new(|| re(r"^([A-Za-z0-9._~%!$&'()*+,;=\-]+):[^@/\s]*@"));
/// `"password": "…"` in a JSON body.
static JSON_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)("[a-z0-9_\-]*(password|passwd|token|secret|api_?key|client_secret|private_key|credential)[a-z0-9_\-]*"\s*:\s*)"(?:[^"\\]|\\.)*""#,
    )
});
static KEY_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(password|passwd|pwd|token|secret|access_token|api_key|apikey|client_secret|sslpassword)\s*=\s*('[^']*'|[^\s&;]*)")
});
static BEARER: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\b(bearer|token|basic)\s+[A-Za-z0-9._~+/=\-]{8,}"));

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
pub fn redact(s: &str) -> Cow<'_, str> {
    if let Some(m) = HEADER.find(s) {
        return Cow::Owned(format!("{} {REDACTED}", m.as_str().trim()));
    }
    let mut out = Cow::Borrowed(s);
    for (re, rep) in [
        (&*TOKEN, REDACTED.to_string()),
        (&*URL_PASSWORD, format!("${{1}}:{REDACTED}@")),
        (&*BARE_URL_PASSWORD, format!("${{1}}:{REDACTED}@")),
        (&*JSON_SECRET, format!("${{1}}\"{REDACTED}\"")),
        (&*KEY_VALUE, format!("${{1}}={REDACTED}")),
        (&*BEARER, format!("${{1}} {REDACTED}")),
    ] {
        if re.is_match(&out) {
            out = Cow::Owned(re.replace_all(&out, rep.as_str()).into_owned());
        }
    }
    out
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
            ])
        );
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
