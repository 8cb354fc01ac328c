//! Claude Code's shell invocation forms, recognised exactly, so `tiershim shell` can give the
//! agent's command the output and status it would get from plain bash (DESIGN §11).
//!
//! Claude Code (2.1.x) runs every Bash tool call as `$CLAUDE_CODE_SHELL -c [-l] TEXT`, where TEXT
//! wraps the model's command in pieces of its own:
//!
//! ```text
//! [{ case "${BASH_VERSINFO-}" in '2'|'3') … esac; } && ]     refuse bash 2 and 3
//! [source <snapshot> 2>/dev/null || true && ]                 its shell snapshot, when it made one
//! \builtin shopt -u extglob 2>/dev/null || true &&             (or without `\builtin`)
//! [{ \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && ]…
//! eval <the command, shell-quoted> [< /dev/null] && pwd -P >| <tmpdir>/claude-<hex>-cwd
//! ```
//!
//! In the restricted shell the pieces around the command either fail (rbash refuses `source` of
//! a path and every output redirection, so a success became `Exit code 1`) or do nothing (no
//! aliases, no functions, extglob off, bash 5). [`recognise`] reads TEXT against exactly these
//! shapes, anchored at both ends, and returns the model's command with what the wrapper asked
//! of it: stdin from `/dev/null` or not, and the file the working directory goes to. Anything
//! else — a piece in another order, an unknown piece, an `eval` word that would expand (`$`,
//! backquotes, globs, `~`), a cwd file that is not `<dir>/claude-<hex>-cwd` — is not recognised,
//! and the caller runs TEXT as it stands under every rbash restriction.
//!
//! The command is only ever run by rbash; this module never widens what it may do. Because the
//! command sits inside one quoted `eval` word that Claude Code quoted, text the model writes
//! cannot reach the pieces outside it: `echo x && pwd -P >| /tmp/claude-1-cwd` as a command is
//! part of the word, and the same text as the whole of TEXT has no `eval` piece.
//!
//! Also recognised: the start-up `-c env` probe, and the start-up script that writes a shell
//! snapshot (`SNAPSHOT_FILE=<path>` and a body that redirects into it), which the restricted
//! shell declines without running it.
//!
//! Pure: no I/O.

use std::path::{Component, Path, PathBuf};

/// What a `-c` text from Claude Code asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Form {
    /// `-c env`: Claude Code reads the shell's environment at start-up.
    EnvProbe,
    /// The start-up script that writes a shell snapshot to this file.
    Snapshot(PathBuf),
    /// One Bash tool call.
    Call(Call),
}

/// One Bash tool call, unwrapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The model's command, with Claude Code's quoting removed.
    pub command: String,
    /// The wrapper gave the command `< /dev/null` (every command but heredocs and multi-line
    /// ones).
    pub stdin_null: bool,
    /// Where the wrapper's `pwd -P >|` would have written the working directory.
    pub cwd_file: PathBuf,
}

const BASH_TOO_OLD: &str = "{ case \"${BASH_VERSINFO-}\" in '2'|'3') \\builtin printf '%s\\n' \
'__CLAUDE_CODE_DID_NOT_RUN_BASH_TOO_OLD='\"${BASH_VERSION-}\" >&2; \\builtin exit 126; \\exit 126;; esac; }";
const SHOPT: [&str; 2] = [
    "\\builtin shopt -u extglob 2>/dev/null || true",
    "shopt -u extglob 2>/dev/null || true",
];
const AND: &str = " && ";

/// Read a `-c` text as one of Claude Code's forms, or `None`.
pub fn recognise(text: &str) -> Option<Form> {
    if text == "env" {
        return Some(Form::EnvProbe);
    }
    if let Some(rest) = text.strip_prefix("SNAPSHOT_FILE=") {
        let (path, rest) = rest.split_once('\n')?;
        let path = plain_path(path)?;
        if path.extension().is_none_or(|e| e != "sh") || !rest.contains(">| \"$SNAPSHOT_FILE\"") {
            return None;
        }
        return Some(Form::Snapshot(path));
    }
    call(text).map(Form::Call)
}

fn call(text: &str) -> Option<Call> {
    let mut rest = text;
    if let Some(r) = rest.strip_prefix(BASH_TOO_OLD).and_then(|r| r.strip_prefix(AND)) {
        rest = r;
    }
    if let Some(r) = rest.strip_prefix("source ") {
        let (_, after) = word(r)?;
        rest = after.strip_prefix(" 2>/dev/null || true")?.strip_prefix(AND)?;
    }
    rest = SHOPT.iter().find_map(|s| rest.strip_prefix(s))?.strip_prefix(AND)?;
    while let Some(r) = rest.strip_prefix("{ \\builtin unalias -- '") {
        let (name, r) = r.split_once('\'')?;
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')) {
            return None;
        }
        let tail = format!("; \\builtin unset -f -- '{name}'; }} >/dev/null 2>&1 || true{AND}");
        rest = r.strip_prefix(tail.as_str())?;
    }
    let (command, r) = word(rest.strip_prefix("eval ")?)?;
    let (stdin_null, r) = match r.strip_prefix(" < /dev/null") {
        Some(r) => (true, r),
        None => (false, r),
    };
    let file = r.strip_prefix(" && pwd -P >| ")?;
    let cwd_file = plain_path(file)?;
    let name = cwd_file.file_name()?.to_str()?;
    let hex = name.strip_prefix("claude-")?.strip_suffix("-cwd")?;
    if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(Call {
        command,
        stdin_null,
        cwd_file,
    })
}

/// An absolute path written without quotes: letters, digits and `/ . _ - +`, no `..`.
fn plain_path(s: &str) -> Option<PathBuf> {
    if !s.starts_with('/')
        || !s
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'+'))
    {
        return None;
    }
    let p = Path::new(s);
    if p.components().any(|c| matches!(c, Component::ParentDir)) {
        return None;
    }
    Some(p.to_path_buf())
}

/// One shell word at the start of `s`, up to an unquoted space or the end, with its quotes
/// removed; `None` when it holds anything the shell would expand or read otherwise (so the word
/// is exactly the text the shell would pass to `eval`).
fn word(s: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = s.char_indices().peekable();
    let mut any = false;
    while let Some(&(i, c)) = chars.peek() {
        match c {
            ' ' => return any.then(|| (out, &s[i..])),
            '\'' => {
                chars.next();
                loop {
                    match chars.next()? {
                        (_, '\'') => break,
                        (_, ch) => out.push(ch),
                    }
                }
            }
            '"' => {
                chars.next();
                loop {
                    match chars.next()? {
                        (_, '"') => break,
                        (_, '\\') => match chars.next()? {
                            (_, ch @ ('\\' | '"' | '$' | '`')) => out.push(ch),
                            (_, '\n') => {}
                            (_, ch) => {
                                out.push('\\');
                                out.push(ch);
                            }
                        },
                        (_, '$' | '`') => return None,
                        (_, ch) => out.push(ch),
                    }
                }
            }
            '\\' => {
                chars.next();
                match chars.next()? {
                    (_, '\n') => {}
                    (_, ch) => out.push(ch),
                }
            }
            c if c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.' | ',' | ':' | '@' | '%' | '+' | '=' | '-') => {
                chars.next();
                out.push(c);
            }
            c if !c.is_ascii() => {
                chars.next();
                out.push(c);
            }
            _ => return None,
        }
        any = true;
    }
    any.then_some((out, ""))
}

/// `text` as one single-quoted shell word (`'` written `'\''`).
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Claude Code 2.1.330 sent, recorded with a logging CLAUDE_CODE_SHELL.
    const SNAP: &str = "source /home/agent/.claude/shell-snapshots/snapshot-bash-1795507824098-k6sznl.sh 2>/dev/null || true && \\builtin shopt -u extglob 2>/dev/null || true && { \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && { \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true && ";
    const LOGIN: &str = "\\builtin shopt -u extglob 2>/dev/null || true && { \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && { \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true && ";

    fn call_of(text: &str) -> Call {
        match recognise(text) {
            Some(Form::Call(c)) => c,
            other => panic!("{text:?}: {other:?}"),
        }
    }

    #[test]
    fn the_recorded_forms_unwrap_to_the_model_s_command() {
        for (tail, command, stdin_null) in [
            ("eval 'echo hello; echo err >&2' < /dev/null", "echo hello; echo err >&2", true),
            ("eval ls < /dev/null", "ls", true),
            ("eval false < /dev/null", "false", true),
            (
                "eval 'printf '\"'\"'%s\\n'\"'\"' a\"b\"c' < /dev/null",
                "printf '%s\\n' a\"b\"c",
                true,
            ),
            ("eval 'cat <<'\"'\"'X'\"'\"'\nheredoc line\nX'", "cat <<'X'\nheredoc line\nX", false),
            (
                "eval 'echo ünï `date` $(id -u) !x *' < /dev/null",
                "echo ünï `date` $(id -u) !x *",
                true,
            ),
        ] {
            for prefix in [SNAP, LOGIN, &format!("{BASH_TOO_OLD} && {SNAP}")] {
                let c = call_of(&format!("{prefix}{tail} && pwd -P >| /tmp/claude-6df2-cwd"));
                assert_eq!(c.command, command);
                assert_eq!(c.stdin_null, stdin_null, "{tail}");
                assert_eq!(c.cwd_file, PathBuf::from("/tmp/claude-6df2-cwd"));
            }
        }
        // The shorter form DESIGN §11 recorded from an earlier 2.1 release.
        let c = call_of("shopt -u extglob 2>/dev/null || true && eval 'docker ps' < /dev/null && pwd -P >| /tmp/claude-a1b2-cwd");
        assert_eq!(c.command, "docker ps");
        assert_eq!(recognise("env"), Some(Form::EnvProbe));
    }

    #[test]
    fn the_snapshot_script_is_recognised_by_its_head_and_its_redirection() {
        let text = "SNAPSHOT_FILE=/home/a/.claude/shell-snapshots/snapshot-bash-1-x.sh\n      source \"/home/a/.bashrc\" < /dev/null\n      echo \"# Snapshot file\" >| \"$SNAPSHOT_FILE\"\n";
        assert_eq!(
            recognise(text),
            Some(Form::Snapshot(PathBuf::from(
                "/home/a/.claude/shell-snapshots/snapshot-bash-1-x.sh"
            )))
        );
        assert_eq!(recognise("SNAPSHOT_FILE=/x.sh\necho hi\n"), None);
        assert_eq!(recognise("SNAPSHOT_FILE=$HOME/x.sh\necho >| \"$SNAPSHOT_FILE\"\n"), None);
    }

    #[test]
    fn a_command_that_imitates_the_wrapper_is_not_recognised() {
        for text in [
            "echo x && pwd -P >| /tmp/claude-1234-cwd",
            "eval 'echo x' && pwd -P >| /tmp/claude-1234-cwd",
            "cat <<X\npwd -P >| /tmp/claude-1234-cwd\nX",
            // Anything after the cwd file, or before the first piece.
            &format!("{LOGIN}eval ls < /dev/null && pwd -P >| /tmp/claude-1234-cwd; rm x"),
            &format!("{LOGIN}eval ls < /dev/null && pwd -P >| /tmp/claude-1234-cwd\necho x"),
            &format!("x; {LOGIN}eval ls < /dev/null && pwd -P >| /tmp/claude-1234-cwd"),
            // An eval word that would expand, or is two words.
            &format!("{LOGIN}eval $CMD < /dev/null && pwd -P >| /tmp/claude-1234-cwd"),
            &format!("{LOGIN}eval \"$(cat x)\" < /dev/null && pwd -P >| /tmp/claude-1234-cwd"),
            &format!("{LOGIN}eval l* < /dev/null && pwd -P >| /tmp/claude-1234-cwd"),
            &format!("{LOGIN}eval ~/x < /dev/null && pwd -P >| /tmp/claude-1234-cwd"),
            &format!("{LOGIN}eval ls ls < /dev/null && pwd -P >| /tmp/claude-1234-cwd"),
            &format!("{LOGIN}eval 'ls < /dev/null && pwd -P >| /tmp/claude-1234-cwd"),
            // A cwd file that is not Claude Code's.
            &format!("{LOGIN}eval ls < /dev/null && pwd -P >| /home/agent/.bashrc"),
            &format!("{LOGIN}eval ls < /dev/null && pwd -P >| /tmp/../etc/claude-12-cwd"),
            &format!("{LOGIN}eval ls < /dev/null && pwd -P >| tmp/claude-12-cwd"),
            &format!("{LOGIN}eval ls < /dev/null && pwd -P >| /tmp/claude-xyz-cwd"),
            &format!("{LOGIN}eval ls < /dev/null && pwd -P > /tmp/claude-12-cwd"),
            // Pieces out of order, or unknown, or an unalias of two names.
            &format!(
                "{{ \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; }} >/dev/null 2>&1 || true && {SNAP}eval ls && pwd -P >| /tmp/claude-1-cwd"
            ),
            "\\builtin shopt -u extglob 2>/dev/null || true && { \\builtin unalias -- 'a'; \\builtin unset -f -- 'b'; } >/dev/null 2>&1 || true && eval ls && pwd -P >| /tmp/claude-1-cwd",
            "\\builtin shopt -s extglob 2>/dev/null || true && eval ls && pwd -P >| /tmp/claude-1-cwd",
            "source x; rm y 2>/dev/null || true && \\builtin shopt -u extglob 2>/dev/null || true && eval ls && pwd -P >| /tmp/claude-1-cwd",
        ] {
            assert_eq!(recognise(text), None, "{text:?}");
        }
    }

    #[test]
    fn quoting_round_trips_through_the_word_reader() {
        for text in ["it's", "a b", "'", "\\", "$HOME `x`", "line\nline", ""] {
            let q = quote(text);
            assert_eq!(word(&q), Some((text.to_string(), "")), "{q}");
        }
    }
}
