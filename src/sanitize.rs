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
static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^\s*(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key|private-token|x-auth-token|x-gitea-token|x-vault-token)\s*:",
    )
});
static URL_PASSWORD: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)([a-z][a-z0-9+.\-]*://[^/\s:@]*):[^@/\s]*@"));
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
    "--secret",
    "--with-token",
];
/// curl's `-u user:password` / `--user user:password`.
const USER_OPTS: &[&str] = &["-u", "--user", "-U"];

/// Redact one word of argv (or any caller-supplied string).
pub fn redact(s: &str) -> Cow<'_, str> {
    if let Some(m) = HEADER.find(s) {
        return Cow::Owned(format!("{} {REDACTED}", m.as_str().trim()));
    }
    let mut out = Cow::Borrowed(s);
    for (re, rep) in [
        (&*TOKEN, REDACTED.to_string()),
        (&*URL_PASSWORD, format!("${{1}}:{REDACTED}@")),
        (&*KEY_VALUE, format!("${{1}}={REDACTED}")),
        (&*BEARER, format!("${{1}} {REDACTED}")),
    ] {
        if re.is_match(&out) {
            out = Cow::Owned(re.replace_all(&out, rep.as_str()).into_owned());
        }
    }
    out
}

/// Redact a whole argv: each word, plus the values of options that carry secrets.
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut secret_next = false;
    let mut user_next = false;
    for a in args {
        if secret_next {
            out.push(REDACTED.to_string());
            secret_next = false;
            continue;
        }
        if user_next {
            out.push(redact_user(a));
            user_next = false;
            continue;
        }
        if let Some((opt, _)) = a.split_once('=').filter(|(o, _)| SECRET_OPTS.contains(o)) {
            out.push(format!("{opt}={REDACTED}"));
            continue;
        }
        if SECRET_OPTS.contains(&a.as_str()) {
            secret_next = true;
        } else if USER_OPTS.contains(&a.as_str()) {
            user_next = true;
        } else if let Some(v) = a.strip_prefix("--user=") {
            out.push(format!("--user={}", redact_user(v)));
            continue;
        } else if let Some((flags, v)) = clustered_user(a) {
            // curl's `-su user:pw` and `-uuser:pw`: a cluster of short flags ending in `u`.
            if v.is_empty() {
                user_next = true;
            } else {
                out.push(format!("{flags}{}", redact_user(v)));
                continue;
            }
        }
        out.push(redact(a).into_owned());
    }
    out
}

/// `-su` -> (`-su`, ``), `-subob:pw` -> (`-su`, `bob:pw`): short letters up to a `u`.
fn clustered_user(a: &str) -> Option<(&str, &str)> {
    let body = a.strip_prefix('-').filter(|b| !b.starts_with('-'))?;
    let u = body.find('u')?;
    if !body[..u].bytes().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    Some(a.split_at(u + 2))
}

fn redact_user(v: &str) -> String {
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
}
