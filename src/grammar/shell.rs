//! A small, strict lexer for the POSIX shell language, for the remote command of an ssh call.
//!
//! ssh joins the words after the destination with spaces and the remote user's login shell runs
//! the result with `-c`. To judge it, the gate must split it as that shell would: words (with
//! single quotes, double quotes and backslash escapes removed), the operators `&&`, `||`, `;`,
//! `|`, `&` and newline between simple commands, and redirections.
//!
//! Owns: tokenising and quote removal, and naming every construct whose effect cannot be known
//! from the text ([`Kind`]): expansions (`$VAR`, `${…}`, `$(…)`, backquotes, `$((…))`, `$'…'`),
//! globs, tildes, braces, comments, here-documents, subshells and compound commands, and
//! assignments in front of a command. Expansions stay in the word as written (so `docker restart
//! $(x)` is still visibly a `docker restart`), and the word says it expands.
//!
//! Must not: decide. What a redirection may target, which programs are allowed, what `cd`
//! means: all of that is the caller's (`grammar::remote`). When a construct makes the structure
//! of the rest unknowable (a subshell, a compound command such as `if` or `for`, a
//! here-document, a process substitution), lexing stops there and the rest is one construct:
//! the commands before it are still read, the ones after are not guessed at.
//!
//! Anything a shell would reject or read differently from how it looks (an unterminated quote,
//! an empty command between operators, a trailing backslash, a NUL) is an error, never a guess.

use std::fmt;

/// Something in the text whose effect the gate cannot know from the text alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `$(…)` (and `$((…))` arithmetic, which can also run commands through array subscripts).
    CommandSubstitution,
    /// `` `…` ``.
    Backquote,
    /// `$NAME`, `${…}`, `$1`, `$?`, `$'…'`, `$"…"`, or a lone `$`.
    Variable,
    /// Unquoted `*`, `?` or `[`.
    Glob,
    /// Unquoted `~`.
    Tilde,
    /// bash brace expansion: `{a,b}`, `{1..3}`.
    Brace,
    /// Unquoted `!` (pipeline negation, or bash history expansion in an interactive shell).
    Bang,
    /// A `#` comment.
    Comment,
    /// `NAME=value` in front of a command (or alone): it sets the command's environment.
    Assignment,
    /// A bash-only operator (`|&`, `&>`, `<<<`, `;&`), read differently by a POSIX shell.
    BashOperator,
    /// `<<` and `<<-`: the rest of the text is the document, not commands.
    HereDocument,
    /// `(` … `)`, a function definition, `<(…)`/`>(…)`.
    Subshell,
    /// A reserved word in command position: `if`, `for`, `while`, `case`, `{`, `[[`, …
    Compound,
}

impl Kind {
    /// The name used in verbs and messages (`command-substitution`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::CommandSubstitution => "command-substitution",
            Kind::Backquote => "backquote",
            Kind::Variable => "variable",
            Kind::Glob => "glob",
            Kind::Tilde => "tilde",
            Kind::Brace => "brace",
            Kind::Bang => "bang",
            Kind::Comment => "comment",
            Kind::Assignment => "assignment",
            Kind::BashOperator => "bash-operator",
            Kind::HereDocument => "here-document",
            Kind::Subshell => "subshell",
            Kind::Compound => "compound",
        }
    }
}

/// One construct, with where it is in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Construct {
    pub kind: Kind,
    /// Byte range in the source.
    pub span: (usize, usize),
}

/// A word after quote removal. Expansions are kept as written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    pub text: String,
    /// Byte range in the source.
    pub span: (usize, usize),
    /// Some character of it was quoted or escaped.
    pub quoted: bool,
    /// It contains an expansion (`$…`, backquotes), so its value is not `text`.
    pub expands: bool,
    /// Bytes of `text` before the first quoted, escaped or expanded character.
    plain_prefix: usize,
    /// Something other than plain text has been appended.
    tainted: bool,
}

impl Word {
    /// The word as written is plain text: no quoting, no expansion.
    pub fn is_plain(&self) -> bool {
        !self.quoted && !self.expands
    }
}

/// How a simple command ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `&&`
    And,
    /// `||`
    Or,
    /// `;`
    Semi,
    /// A newline.
    Newline,
    /// `|`
    Pipe,
    /// `&`: the command runs in the background.
    Background,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::And => "&&",
            Op::Or => "||",
            Op::Semi => ";",
            Op::Newline => "\n",
            Op::Pipe => "|",
            Op::Background => "&",
        }
    }
}

/// A redirection: `[fd]op target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The IO number written before the operator (`2` in `2>&1`).
    pub fd: Option<u32>,
    /// `>`, `>>`, `<`, `>&`, `<&`, `<>`, `>|`, `&>`, `&>>`, `<<<`.
    pub op: &'static str,
    pub target: Word,
    pub span: (usize, usize),
}

/// One simple command: its words (assignments in front are not words; they are constructs),
/// its redirections, and the operator after it (None at the end of the text).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Simple {
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    pub op: Option<Op>,
}

/// The lexed text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Script {
    pub commands: Vec<Simple>,
    /// Every construct, in text order. A construct that stopped lexing spans to the end.
    pub constructs: Vec<Construct>,
    /// Lexing stopped at a construct; the text after it was not read as commands.
    pub stopped: bool,
}

/// Text a shell would reject, or that the gate will not guess at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LexError {
    Unterminated {
        what: &'static str,
        at: usize,
    },
    TrailingBackslash,
    /// An operator with no command before it (`; x`, `a && && b`), or at the end (`a &&`).
    EmptyCommand {
        op: &'static str,
        at: usize,
    },
    /// An operator where a redirection target was expected (`>;`).
    MissingTarget {
        op: &'static str,
        at: usize,
    },
    UnmatchedParen {
        at: usize,
    },
    Nul,
}

impl fmt::Display for LexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LexError::Unterminated { what, at } => write!(f, "unterminated {what} at byte {at}"),
            LexError::TrailingBackslash => f.write_str("a backslash at the very end"),
            LexError::EmptyCommand { op, at } => {
                write!(f, "`{}` at byte {at} has no command on one side", op.escape_debug())
            }
            LexError::MissingTarget { op, at } => write!(f, "redirection `{op}` at byte {at} has no target"),
            LexError::UnmatchedParen { at } => write!(f, "unmatched `)` at byte {at}"),
            LexError::Nul => f.write_str("a NUL character"),
        }
    }
}

/// Words that are reserved in command position (POSIX plus bash's).
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for", "in", "function", "select", "time",
    "coproc", "{", "}", "[[", "]]",
];

/// Lex `src`.
pub fn lex(src: &str) -> Result<Script, LexError> {
    Lexer {
        src,
        b: src.as_bytes(),
        i: 0,
        out: Script::default(),
        cur: Simple::default(),
        cur_nonempty: false,
        word: None,
        pending: None,
    }
    .run()
}

struct Lexer<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
    out: Script,
    cur: Simple,
    /// The current command has something (a word, an assignment, a redirection).
    cur_nonempty: bool,
    word: Option<Word>,
    /// A redirection waiting for its target word: (fd, op, start).
    pending: Option<(Option<u32>, &'static str, usize)>,
}

impl Lexer<'_> {
    fn run(mut self) -> Result<Script, LexError> {
        if self.b.contains(&0) {
            return Err(LexError::Nul);
        }
        while self.i < self.b.len() {
            let c = self.b[self.i];
            match c {
                b' ' | b'\t' => {
                    self.finish_word()?;
                    self.i += 1;
                }
                b'\n' => {
                    self.finish_word()?;
                    self.i += 1;
                    self.end_command(Op::Newline, self.i - 1)?;
                }
                b';' => {
                    self.finish_word()?;
                    if self.peek(1) == Some(b';') || self.peek(1) == Some(b'&') {
                        // `;;` and `;&` only exist inside `case`.
                        self.halt(Kind::Compound, self.i);
                        continue;
                    }
                    self.i += 1;
                    self.end_command(Op::Semi, self.i - 1)?;
                }
                b'&' => {
                    self.finish_word()?;
                    let at = self.i;
                    match self.peek(1) {
                        Some(b'&') => {
                            self.i += 2;
                            self.end_command(Op::And, at)?;
                        }
                        Some(b'>') => {
                            // bash `&>file` / `&>>file`; in a POSIX shell `&` then `>file`.
                            self.construct(Kind::BashOperator, at, at + 2);
                            let op = if self.peek(2) == Some(b'>') { "&>>" } else { "&>" };
                            self.i += op.len();
                            self.start_redirect(None, op, at)?;
                        }
                        _ => {
                            self.i += 1;
                            self.end_command(Op::Background, at)?;
                        }
                    }
                }
                b'|' => {
                    self.finish_word()?;
                    let at = self.i;
                    match self.peek(1) {
                        Some(b'|') => {
                            self.i += 2;
                            self.end_command(Op::Or, at)?;
                        }
                        Some(b'&') => {
                            self.construct(Kind::BashOperator, at, at + 2);
                            self.i += 2;
                            self.end_command(Op::Pipe, at)?;
                        }
                        _ => {
                            self.i += 1;
                            self.end_command(Op::Pipe, at)?;
                        }
                    }
                }
                b'(' => {
                    // A subshell, a function definition `f()`, or an arithmetic command `((`.
                    self.halt(Kind::Subshell, self.i);
                }
                b')' => return Err(LexError::UnmatchedParen { at: self.i }),
                b'<' | b'>' => self.redirect()?,
                b'#' if self.word.is_none() => {
                    let start = self.i;
                    while self.i < self.b.len() && self.b[self.i] != b'\n' {
                        self.i += 1;
                    }
                    self.construct(Kind::Comment, start, self.i);
                }
                b'\'' => {
                    let start = self.i;
                    let end = self.find_byte(self.i + 1, b'\'').ok_or(LexError::Unterminated {
                        what: "single quote",
                        at: start,
                    })?;
                    let text = self.src[start + 1..end].to_string();
                    self.push_quoted(start, &text);
                    self.i = end + 1;
                }
                b'"' => self.double_quote()?,
                b'\\' => {
                    let start = self.i;
                    match self.next_char(self.i + 1) {
                        None => return Err(LexError::TrailingBackslash),
                        Some('\n') => self.i += 2, // line continuation: removed
                        Some(ch) => {
                            self.push_quoted(start, &ch.to_string());
                            self.i += 1 + ch.len_utf8();
                        }
                    }
                }
                b'$' => self.dollar(false)?,
                b'`' => self.backquote(false)?,
                _ => {
                    let ch = self.next_char(self.i).unwrap_or('\u{fffd}');
                    let start = self.i;
                    match ch {
                        '*' | '?' | '[' => self.construct(Kind::Glob, start, start + 1),
                        '~' => self.construct(Kind::Tilde, start, start + 1),
                        '{' | '}' => {
                            let alone = self.word.is_none() && self.ends_word(start + 1);
                            if alone && self.in_command_position() {
                                self.halt(Kind::Compound, start);
                                continue;
                            }
                            if ch == '{' && self.brace_expands(start) {
                                self.construct(Kind::Brace, start, start + 1);
                            }
                        }
                        '!' => self.construct(Kind::Bang, start, start + 1),
                        _ => {}
                    }
                    self.push_plain(start, &ch.to_string());
                    self.i += ch.len_utf8();
                }
            }
        }
        self.finish_word()?;
        if self.out.stopped {
            return Ok(self.out);
        }
        if let Some((_, op, at)) = self.pending {
            return Err(LexError::MissingTarget { op, at });
        }
        if self.cur_nonempty {
            let cur = std::mem::take(&mut self.cur);
            self.out.commands.push(cur);
        } else if let Some(last) = self.out.commands.last()
            && let Some(op @ (Op::And | Op::Or | Op::Pipe)) = last.op
        {
            return Err(LexError::EmptyCommand {
                op: op.as_str(),
                at: self.b.len(),
            });
        }
        Ok(self.out)
    }

    fn peek(&self, k: usize) -> Option<u8> {
        self.b.get(self.i + k).copied()
    }

    fn next_char(&self, at: usize) -> Option<char> {
        self.src.get(at..).and_then(|s| s.chars().next())
    }

    fn find_byte(&self, from: usize, needle: u8) -> Option<usize> {
        self.b.get(from..)?.iter().position(|&c| c == needle).map(|p| p + from)
    }

    /// The byte at `at` ends a word (blank, operator, end).
    fn ends_word(&self, at: usize) -> bool {
        match self.b.get(at) {
            None => true,
            Some(c) => matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'),
        }
    }

    /// bash expands `{a,b}` and `{1..3}` (into several words), but leaves `{{.Names}}` alone:
    /// the `{` at `at` expands when a `,` or `..` follows it in the same word, before a `}`.
    /// Quoted text is skipped over; counting a quoted `,` only errs on the strict side.
    fn brace_expands(&self, at: usize) -> bool {
        let mut j = at + 1;
        let mut seen = false;
        while let Some(&c) = self.b.get(j) {
            match c {
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' => return false,
                b',' => seen = true,
                b'.' if self.b.get(j + 1) == Some(&b'.') => seen = true,
                b'}' if seen => return true,
                b'\\' => j += 1,
                b'\'' => match self.find_byte(j + 1, b'\'') {
                    Some(end) => j = end,
                    None => return false,
                },
                b'"' => match self.skip_double(j) {
                    Ok(end) => j = end - 1,
                    Err(_) => return false,
                },
                _ => {}
            }
            j += 1;
        }
        false
    }

    /// The next word would be the command name (no words yet, no pending redirection).
    fn in_command_position(&self) -> bool {
        self.cur.words.is_empty() && self.pending.is_none()
    }

    fn construct(&mut self, kind: Kind, start: usize, end: usize) {
        self.out.constructs.push(Construct { kind, span: (start, end) });
    }

    /// Record `kind` from `at` to the end and stop reading; the commands so far are kept (a
    /// word in progress ends the command it belongs to).
    fn halt(&mut self, kind: Kind, at: usize) {
        self.construct(kind, at, self.b.len());
        self.out.stopped = true;
        if let Some(mut w) = self.word.take() {
            w.span.1 = self.i;
            match self.pending.take() {
                Some((fd, op, rat)) => self.cur.redirects.push(Redirect {
                    fd,
                    op,
                    span: (rat, w.span.1),
                    target: w,
                }),
                None => self.cur.words.push(w),
            }
            self.cur_nonempty = true;
        }
        self.pending = None;
        if self.cur_nonempty {
            let cur = std::mem::take(&mut self.cur);
            self.out.commands.push(cur);
        }
        self.cur_nonempty = false;
        self.i = self.b.len();
    }

    fn word_mut(&mut self, start: usize) -> &mut Word {
        self.word.get_or_insert_with(|| Word {
            span: (start, start),
            ..Word::default()
        })
    }

    fn push_plain(&mut self, start: usize, text: &str) {
        let w = self.word_mut(start);
        w.text.push_str(text);
        if !w.tainted {
            w.plain_prefix = w.text.len();
        }
    }

    fn push_quoted(&mut self, start: usize, text: &str) {
        let w = self.word_mut(start);
        w.quoted = true;
        w.tainted = true;
        w.text.push_str(text);
    }

    /// Append an expansion as written; the word is marked as expanding.
    fn push_expansion(&mut self, start: usize, end: usize, quoted: bool) {
        let raw = self.src[start..end].to_string();
        let w = self.word_mut(start);
        w.expands = true;
        w.tainted = true;
        w.quoted |= quoted;
        w.text.push_str(&raw);
    }

    fn finish_word(&mut self) -> Result<(), LexError> {
        let Some(mut w) = self.word.take() else {
            return Ok(());
        };
        // A word ends where the lexer is now (at a blank, an operator, or the end).
        w.span.1 = self.i;
        if let Some((fd, op, at)) = self.pending.take() {
            self.cur.redirects.push(Redirect {
                fd,
                op,
                span: (at, w.span.1),
                target: w,
            });
            self.cur_nonempty = true;
            return Ok(());
        }
        if self.cur.words.is_empty() {
            if is_assignment(&w) {
                self.construct(Kind::Assignment, w.span.0, w.span.1);
                self.cur_nonempty = true;
                return Ok(());
            }
            if w.is_plain() && RESERVED.contains(&w.text.as_str()) {
                // The reserved word is part of the construct, not a command.
                self.halt(Kind::Compound, w.span.0);
                return Ok(());
            }
            if w.is_plain() && w.text == "!" {
                // Pipeline negation: the command after it still runs. The `!` was recorded.
                return Ok(());
            }
        }
        self.cur.words.push(w);
        self.cur_nonempty = true;
        Ok(())
    }

    fn end_command(&mut self, op: Op, at: usize) -> Result<(), LexError> {
        if self.out.stopped {
            return Ok(());
        }
        if let Some((_, rop, rat)) = self.pending {
            return Err(LexError::MissingTarget { op: rop, at: rat });
        }
        if !self.cur_nonempty {
            if op == Op::Newline {
                return Ok(()); // blank lines
            }
            return Err(LexError::EmptyCommand { op: op.as_str(), at });
        }
        let mut cur = std::mem::take(&mut self.cur);
        cur.op = Some(op);
        self.out.commands.push(cur);
        self.cur_nonempty = false;
        Ok(())
    }

    fn start_redirect(&mut self, fd: Option<u32>, op: &'static str, at: usize) -> Result<(), LexError> {
        if let Some((_, rop, rat)) = self.pending {
            return Err(LexError::MissingTarget { op: rop, at: rat });
        }
        self.pending = Some((fd, op, at));
        Ok(())
    }

    fn redirect(&mut self) -> Result<(), LexError> {
        // An IO number: a word of unquoted digits right before the operator.
        let fd = match &self.word {
            Some(w) if !w.quoted && !w.expands && !w.text.is_empty() && w.text.bytes().all(|c| c.is_ascii_digit()) => {
                let fd = w.text.parse::<u32>().ok();
                let start = w.span.0;
                self.word = None;
                fd.map(|n| (n, start))
            }
            _ => {
                self.finish_word()?;
                None
            }
        };
        if self.out.stopped {
            return Ok(());
        }
        let at = fd.map_or(self.i, |(_, s)| s);
        let rest = &self.b[self.i..];
        let op: &'static str = if rest.starts_with(b"<<<") {
            self.construct(Kind::BashOperator, self.i, self.i + 3);
            "<<<"
        } else if rest.starts_with(b"<<") {
            self.halt(Kind::HereDocument, self.i);
            return Ok(());
        } else if rest.starts_with(b"<(") || rest.starts_with(b">(") {
            self.halt(Kind::Subshell, self.i);
            return Ok(());
        } else if rest.starts_with(b">>") {
            ">>"
        } else if rest.starts_with(b">&") {
            ">&"
        } else if rest.starts_with(b"<&") {
            "<&"
        } else if rest.starts_with(b"<>") {
            "<>"
        } else if rest.starts_with(b">|") {
            ">|"
        } else if rest.starts_with(b">") {
            ">"
        } else {
            "<"
        };
        self.i += op.len();
        self.start_redirect(fd.map(|(n, _)| n), op, at)
    }

    fn double_quote(&mut self) -> Result<(), LexError> {
        let start = self.i;
        self.i += 1;
        // An empty "" still makes a word.
        let w = self.word_mut(start);
        w.quoted = true;
        w.tainted = true;
        loop {
            let Some(&c) = self.b.get(self.i) else {
                return Err(LexError::Unterminated {
                    what: "double quote",
                    at: start,
                });
            };
            match c {
                b'"' => {
                    self.i += 1;
                    return Ok(());
                }
                b'\\' => {
                    let at = self.i;
                    match self.next_char(self.i + 1) {
                        None => {
                            return Err(LexError::Unterminated {
                                what: "double quote",
                                at: start,
                            });
                        }
                        Some('\n') => self.i += 2,
                        Some(ch @ ('$' | '`' | '"' | '\\')) => {
                            self.i += 2;
                            self.push_quoted(at, &ch.to_string());
                        }
                        Some(_) => {
                            // Inside double quotes a backslash before anything else stays.
                            self.i += 1;
                            self.push_quoted(at, "\\");
                        }
                    }
                }
                b'$' => self.dollar(true)?,
                b'`' => self.backquote(true)?,
                _ => {
                    let ch = self.next_char(self.i).unwrap_or('\u{fffd}');
                    let at = self.i;
                    self.i += ch.len_utf8();
                    self.push_quoted(at, &ch.to_string());
                }
            }
        }
    }

    /// `$…` at `self.i`: record the expansion and keep its text in the word.
    fn dollar(&mut self, quoted: bool) -> Result<(), LexError> {
        let start = self.i;
        let (kind, end) = match self.b.get(start + 1) {
            Some(b'(') => {
                let end = self.matching_paren(start + 1)?;
                (Kind::CommandSubstitution, end)
            }
            Some(b'{') => {
                let end = self
                    .find_byte(start + 2, b'}')
                    .ok_or(LexError::Unterminated { what: "${", at: start })?;
                (Kind::Variable, end + 1)
            }
            Some(b'\'') if !quoted => {
                // $'…' (ANSI-C quoting): backslash escapes, ends at an unescaped quote.
                let mut j = start + 2;
                loop {
                    match self.b.get(j) {
                        None => {
                            return Err(LexError::Unterminated {
                                what: "$' quote",
                                at: start,
                            });
                        }
                        Some(b'\\') => j += 2,
                        Some(b'\'') => break,
                        Some(_) => j += 1,
                    }
                }
                (Kind::Variable, j + 1)
            }
            Some(b'"') if !quoted => (Kind::Variable, self.skip_double(start + 1)?),
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
                let mut j = start + 1;
                while self.b.get(j).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') {
                    j += 1;
                }
                (Kind::Variable, j)
            }
            Some(c) if c.is_ascii_digit() || b"@*#?-$!".contains(c) => (Kind::Variable, start + 2),
            _ => (Kind::Variable, start + 1),
        };
        self.construct(kind, start, end);
        self.i = end;
        self.push_expansion(start, end, quoted);
        Ok(())
    }

    fn backquote(&mut self, quoted: bool) -> Result<(), LexError> {
        let start = self.i;
        let mut j = start + 1;
        loop {
            match self.b.get(j) {
                None => {
                    return Err(LexError::Unterminated {
                        what: "backquote",
                        at: start,
                    });
                }
                Some(b'\\') => j += 2,
                Some(b'`') => break,
                Some(_) => j += 1,
            }
        }
        self.construct(Kind::Backquote, start, j + 1);
        self.i = j + 1;
        self.push_expansion(start, j + 1, quoted);
        Ok(())
    }

    /// The end (exclusive) of the double-quoted text opening at `open`, as written.
    fn skip_double(&self, open: usize) -> Result<usize, LexError> {
        let mut k = open + 1;
        loop {
            match self.b.get(k) {
                None => {
                    return Err(LexError::Unterminated {
                        what: "double quote",
                        at: open,
                    });
                }
                Some(b'\\') => k += 2,
                Some(b'"') => return Ok(k + 1),
                Some(_) => k += 1,
            }
        }
    }

    /// The end (exclusive) of the parenthesised text opening at `open`, skipping quoted text.
    /// Good enough to find where `$(…)` ends; what is inside is never read as commands.
    fn matching_paren(&self, open: usize) -> Result<usize, LexError> {
        let mut depth = 0usize;
        let mut j = open;
        while let Some(&c) = self.b.get(j) {
            match c {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(j + 1);
                    }
                }
                b'\\' => j += 1,
                b'\'' => {
                    j = self.find_byte(j + 1, b'\'').ok_or(LexError::Unterminated {
                        what: "single quote",
                        at: j,
                    })?;
                }
                b'"' => j = self.skip_double(j)? - 1,
                _ => {}
            }
            j += 1;
        }
        Err(LexError::Unterminated { what: "$(", at: open - 1 })
    }
}

/// `NAME=…` with the name and `=` unquoted.
fn is_assignment(w: &Word) -> bool {
    let Some(eq) = w.text[..w.plain_prefix].find('=') else {
        return false;
    };
    let name = &w.text[..eq];
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The words of each command, as text.
    fn words(src: &str) -> Vec<Vec<String>> {
        let s = lex(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
        s.commands
            .iter()
            .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
            .collect()
    }

    fn w(v: &[&[&str]]) -> Vec<Vec<String>> {
        v.iter().map(|c| c.iter().map(|s| s.to_string()).collect()).collect()
    }

    fn ops(src: &str) -> Vec<Option<Op>> {
        lex(src).unwrap().commands.iter().map(|c| c.op).collect()
    }

    fn kinds(src: &str) -> Vec<Kind> {
        lex(src)
            .unwrap_or_else(|e| panic!("{src:?}: {e}"))
            .constructs
            .iter()
            .map(|c| c.kind)
            .collect()
    }

    #[test]
    fn words_split_on_blanks_however_many() {
        assert_eq!(words("docker  restart \t api"), w(&[&["docker", "restart", "api"]]));
        assert_eq!(words("  docker ps  "), w(&[&["docker", "ps"]]));
        assert_eq!(words(""), w(&[]));
        assert_eq!(words("   "), w(&[]));
    }

    #[test]
    fn quotes_are_removed_and_join_adjacent_text() {
        assert_eq!(words("echo 'a b' \"c d\" e'f'\"g\""), w(&[&["echo", "a b", "c d", "efg"]]));
        assert_eq!(
            words("docker ps --format '{{.Names}}\\t{{.Status}}'"),
            w(&[&["docker", "ps", "--format", "{{.Names}}\\t{{.Status}}"]])
        );
        assert_eq!(words("echo '' \"\""), w(&[&["echo", "", ""]]));
        assert_eq!(kinds("docker ps --format '{{.Names}}'"), vec![]);
    }

    #[test]
    fn backslash_escapes_one_character_and_joins_lines() {
        assert_eq!(words("\\docker ps"), w(&[&["docker", "ps"]]));
        assert_eq!(words("a\\ b c"), w(&[&["a b", "c"]]));
        assert_eq!(words("docker \\\nps"), w(&[&["docker", "ps"]]));
        assert_eq!(words("echo \\;"), w(&[&["echo", ";"]]));
        let s = lex("\\docker ps").unwrap();
        assert!(s.commands[0].words[0].quoted);
    }

    #[test]
    fn inside_double_quotes_a_backslash_escapes_only_its_four_characters() {
        assert_eq!(
            words(r#"echo "a\"b" "c\\d" "e\$f" "g\h""#),
            w(&[&["echo", "a\"b", "c\\d", "e$f", "g\\h"]])
        );
        assert_eq!(kinds(r#"echo "e\$f""#), vec![]);
    }

    #[test]
    fn git_sq_quote_of_a_path_is_one_word() {
        // What git sends for `tmp/it's.git` and `~me/r!x.git` (quote.c sq_quote_buf).
        assert_eq!(
            words("git-upload-pack 'tmp/it'\\''s.git'"),
            w(&[&["git-upload-pack", "tmp/it's.git"]])
        );
        assert_eq!(
            words("git-upload-pack '~me/r'\\!'x.git'"),
            w(&[&["git-upload-pack", "~me/r!x.git"]])
        );
        assert_eq!(kinds("git-upload-pack '~me/r'\\!'x.git'"), vec![]);
    }

    #[test]
    fn operators_separate_commands_with_or_without_spaces() {
        assert_eq!(
            words("cd /srv&&docker compose ps;docker ps|tail -n 5||true"),
            w(&[
                &["cd", "/srv"],
                &["docker", "compose", "ps"],
                &["docker", "ps"],
                &["tail", "-n", "5"],
                &["true"]
            ])
        );
        assert_eq!(
            ops("a && b || c ; d | e & f\ng"),
            vec![
                Some(Op::And),
                Some(Op::Or),
                Some(Op::Semi),
                Some(Op::Pipe),
                Some(Op::Background),
                Some(Op::Newline),
                None
            ]
        );
        assert_eq!(ops("docker ps;"), vec![Some(Op::Semi)]);
        assert_eq!(ops("docker ps &"), vec![Some(Op::Background)]);
        assert_eq!(words("\n\ndocker ps\n\n"), w(&[&["docker", "ps"]]));
    }

    #[test]
    fn operators_inside_quotes_are_text() {
        assert_eq!(words("echo 'a;b' \"c && d\" e\\|f"), w(&[&["echo", "a;b", "c && d", "e|f"]]));
    }

    #[test]
    fn the_classic_injection_is_two_commands() {
        assert_eq!(
            words("docker restart api; rm -rf /"),
            w(&[&["docker", "restart", "api"], &["rm", "-rf", "/"]])
        );
    }

    #[test]
    fn empty_commands_between_operators_are_errors() {
        for (src, op) in [
            ("; docker ps", ";"),
            ("docker ps && && x", "&&"),
            ("docker ps &&", "&&"),
            ("docker ps |", "|"),
            ("docker ps ||\n", "||"),
            ("a ; ; b", ";"),
            ("| a", "|"),
            ("& a", "&"),
        ] {
            match lex(src) {
                Err(LexError::EmptyCommand { op: got, .. }) => assert_eq!(got, op, "{src:?}"),
                other => panic!("{src:?}: {other:?}"),
            }
        }
        // A pipe or && may continue on the next line.
        assert_eq!(words("docker ps |\ntail"), w(&[&["docker", "ps"], &["tail"]]));
    }

    #[test]
    fn unterminated_text_is_an_error() {
        for src in [
            "echo 'a",
            "echo \"a",
            "echo $(a",
            "echo `a",
            "echo ${a",
            "echo \"$(a\"",
            "echo $'a",
            "a \\",
        ] {
            assert!(lex(src).is_err(), "{src:?}");
        }
        assert_eq!(lex("a\0b"), Err(LexError::Nul));
        assert!(matches!(lex("a )"), Err(LexError::UnmatchedParen { .. })));
    }

    #[test]
    fn redirections_are_read_with_their_io_number_and_target() {
        let s = lex("docker logs api 2>&1 >/dev/null 2> /dev/null </dev/null").unwrap();
        let c = &s.commands[0];
        assert_eq!(
            c.words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>(),
            ["docker", "logs", "api"]
        );
        let r: Vec<(Option<u32>, &str, &str)> = c.redirects.iter().map(|r| (r.fd, r.op, r.target.text.as_str())).collect();
        assert_eq!(
            r,
            [
                (Some(2), ">&", "1"),
                (None, ">", "/dev/null"),
                (Some(2), ">", "/dev/null"),
                (None, "<", "/dev/null")
            ]
        );
        // A quoted number is an argument, not an IO number.
        let s = lex("echo '2'>x").unwrap();
        assert_eq!(s.commands[0].words.len(), 2);
        assert_eq!(s.commands[0].redirects[0].fd, None);
        // Every operator.
        let s = lex("a >>x >|y <>z <&0 >&2").unwrap();
        let r: Vec<&str> = s.commands[0].redirects.iter().map(|r| r.op).collect();
        assert_eq!(r, [">>", ">|", "<>", "<&", ">&"]);
        assert!(matches!(lex("a >"), Err(LexError::MissingTarget { .. })));
        assert!(matches!(lex("a > ; b"), Err(LexError::MissingTarget { .. })));
        // A command that is only a redirection is still a command.
        assert_eq!(lex(">/etc/x").unwrap().commands.len(), 1);
    }

    #[test]
    fn expansions_are_recorded_and_kept_as_written() {
        let s = lex("docker restart $(docker ps -q)").unwrap();
        assert_eq!(s.constructs.iter().map(|c| c.kind).collect::<Vec<_>>(), [Kind::CommandSubstitution]);
        let c = &s.commands[0];
        assert_eq!(c.words.len(), 3);
        assert_eq!(c.words[2].text, "$(docker ps -q)");
        assert!(c.words[2].expands);
        assert_eq!(kinds("echo `id`"), [Kind::Backquote]);
        assert_eq!(kinds("echo $HOME ${X:-y} $1 $? $$ $'a\\'b' $\"t\" $"), vec![Kind::Variable; 8]);
        assert_eq!(kinds("echo \"$HOME\" \"`id`\""), [Kind::Variable, Kind::Backquote]);
        assert_eq!(kinds("echo $((1+2))"), [Kind::CommandSubstitution]);
        assert_eq!(kinds("echo '$HOME' '`id`'"), vec![]);
        // A substitution may contain quotes, parens and operators.
        assert_eq!(
            words("echo $(echo ')' \"(\" a;b) x; y"),
            w(&[&["echo", "$(echo ')' \"(\" a;b)", "x"], &["y"]])
        );
    }

    #[test]
    fn globs_tildes_braces_and_bangs_are_recorded_when_unquoted() {
        assert_eq!(kinds("ls *.log a?b [ab]"), [Kind::Glob, Kind::Glob, Kind::Glob]);
        assert_eq!(kinds("cat ~/x"), [Kind::Tilde]);
        assert_eq!(kinds("echo {a,b}"), [Kind::Brace]);
        assert_eq!(kinds("docker {system,} prune"), [Kind::Brace]);
        assert_eq!(kinds("echo {1..3} x{a,' b'}y"), [Kind::Brace, Kind::Brace]);
        // Not an expansion in bash: no comma or `..`, or no closing brace in the word.
        assert_eq!(kinds("docker info --format {{.ServerVersion}}"), vec![]);
        assert_eq!(kinds("echo {a b,c} {a,b"), vec![]);
        assert_eq!(kinds("! docker ps"), [Kind::Bang]);
        assert_eq!(words("! docker ps"), w(&[&["docker", "ps"]]));
        assert_eq!(kinds("ls '*.log' \"~\" \\{ a\\!"), vec![]);
        // `#` inside a word is text; at the start of one it is a comment up to the newline.
        assert_eq!(kinds("echo a#b"), vec![]);
        assert_eq!(kinds("docker ps # x; rm -rf /\ndf"), [Kind::Comment]);
        assert_eq!(words("docker ps # x; rm -rf /\ndf"), w(&[&["docker", "ps"], &["df"]]));
    }

    #[test]
    fn assignments_in_front_of_a_command_are_not_words() {
        assert_eq!(kinds("DOCKER_HOST=tcp://x docker ps"), [Kind::Assignment]);
        assert_eq!(words("DOCKER_HOST=tcp://x docker ps"), w(&[&["docker", "ps"]]));
        assert_eq!(kinds("A=1"), [Kind::Assignment]);
        assert_eq!(lex("A=1").unwrap().commands.len(), 1);
        // Quoted before the `=`, or not first: an ordinary word.
        assert_eq!(kinds("'A'=1 x"), vec![]);
        assert_eq!(kinds("\\A=1 x"), vec![]);
        assert_eq!(kinds("docker ps --filter name=api"), vec![]);
        assert_eq!(kinds("1A=x y"), vec![]);
        // Quoting after the `=` still makes an assignment.
        assert_eq!(kinds("A='x y' z"), [Kind::Assignment]);
    }

    #[test]
    fn structure_the_gate_cannot_follow_stops_the_lexer() {
        for (src, kind, read) in [
            ("docker ps; (rm -rf /)", Kind::Subshell, 1),
            ("docker ps; if true; then rm -rf /; fi", Kind::Compound, 1),
            ("for x in a; do rm $x; done", Kind::Compound, 0),
            ("{ rm -rf /; }", Kind::Compound, 0),
            ("cat <<EOF\nrm -rf /\nEOF", Kind::HereDocument, 1),
            ("diff <(ls) x", Kind::Subshell, 1),
            ("f() { rm -rf /; }; f", Kind::Subshell, 1),
            ("case x in a) rm;; esac", Kind::Compound, 0),
            ("[[ -f x ]]", Kind::Compound, 0),
        ] {
            let s = lex(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
            assert!(s.stopped, "{src:?}");
            let last = s.constructs.last().unwrap();
            assert_eq!(last.kind, kind, "{src:?}");
            assert_eq!(last.span.1, src.len(), "{src:?}");
            assert_eq!(s.commands.len(), read, "{src:?}: {:?}", s.commands);
        }
        // A reserved word that is quoted, or not in command position, is a word.
        assert_eq!(words("echo if then 'for'"), w(&[&["echo", "if", "then", "for"]]));
        assert_eq!(words("'if' x"), w(&[&["if", "x"]]));
    }

    #[test]
    fn bash_only_operators_are_recorded() {
        assert_eq!(kinds("docker logs api |& tail"), [Kind::BashOperator]);
        assert_eq!(words("docker logs api |& tail"), w(&[&["docker", "logs", "api"], &["tail"]]));
        assert_eq!(kinds("docker ps &>/dev/null"), [Kind::BashOperator]);
        assert_eq!(lex("docker ps &>/dev/null").unwrap().commands[0].redirects[0].op, "&>");
        assert_eq!(kinds("cat <<<x"), [Kind::BashOperator]);
    }

    #[test]
    fn word_spans_cover_the_source_text() {
        let src = "curl -H 'Authorization: Bearer abcdefghij' \"http://x\"";
        let s = lex(src).unwrap();
        let spans: Vec<&str> = s.commands[0].words.iter().map(|w| &src[w.span.0..w.span.1]).collect();
        assert_eq!(spans, ["curl", "-H", "'Authorization: Bearer abcdefghij'", "\"http://x\""]);
        let src = "a\\ b'c'$(d) e";
        let s = lex(src).unwrap();
        let spans: Vec<&str> = s.commands[0].words.iter().map(|w| &src[w.span.0..w.span.1]).collect();
        assert_eq!(spans, ["a\\ b'c'$(d)", "e"]);
    }

    #[test]
    fn non_ascii_text_is_kept_whole() {
        assert_eq!(words("echo 'ä' ö \"ü\""), w(&[&["echo", "ä", "ö", "ü"]]));
    }
}
