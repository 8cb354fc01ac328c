//! Gitignore-style patterns, compiled and matched without regular expressions.
//!
//! The meaning is exactly that of the `ignore` crate's `Gitignore` (built on globset) for one
//! ignore file at the root: a pattern without a slash matches at any depth, a leading or middle
//! slash anchors it, a trailing slash makes it match directories (and so everything under
//! them), `**` spans directories, `{a,b}` alternates, `[...]` is a class, `\` escapes, and the
//! last pattern that matches a path (or, failing that, one of its parent directories) is the
//! one reported. A differential test holds this module to the `ignore` crate.
//!
//! Why not the crate itself: globset compiles every pattern into a regular expression, and that
//! compile was three quarters of the gate's instructions for a scope check with 1,000 skill
//! files. Here a pattern becomes a small NFA (simulated in time linear in the path, so no
//! pattern can make matching blow up), and a set of patterns is filtered by the literal each
//! one requires (one Aho-Corasick scan per path), so most patterns are never run.
//!
//! Pure: strings in, matches out.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

/// A set of bytes one NFA step consumes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Bytes {
    One(u8),
    /// A letter under case-insensitive matching.
    Two(u8, u8),
    /// Any byte but `/`.
    NotSlash,
    Any,
    Table(Box<[u64; 4]>),
}

impl Bytes {
    fn has(&self, b: u8) -> bool {
        match self {
            Bytes::One(x) => b == *x,
            Bytes::Two(x, y) => b == *x || b == *y,
            Bytes::NotSlash => b != b'/',
            Bytes::Any => true,
            Bytes::Table(t) => t[(b >> 6) as usize] & (1 << (b & 63)) != 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Inst {
    Byte(Bytes, usize),
    Split(usize, usize),
    Match,
}

/// globset's tokens, as its parser makes them.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Literal(char),
    Any,
    ZeroOrMore,
    RecursivePrefix,
    RecursiveSuffix,
    RecursiveZeroOrMore,
    Class { negated: bool, ranges: Vec<(char, char)> },
    Alternates(Vec<Vec<Token>>),
}

/// One compiled pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// The line as written (trailing whitespace trimmed, as gitignore does).
    pub original: String,
    /// The skill file it came from (shared by the patterns of one file).
    pub from: std::sync::Arc<str>,
    dir_only: bool,
    prog: Vec<Inst>,
    start: usize,
    /// Bytes every match contains (lower-cased under case-insensitive matching).
    literal: Vec<u8>,
    case_insensitive: bool,
    /// A direct test for the common shapes (`name`, `*.ext`, `dir/*.md`, `name*`), with the
    /// NFA's meaning; `None` for everything else.
    fast: Option<Fast>,
}

/// The common pattern shapes, tested without the NFA. Each holds the literal parts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fast {
    /// `lit`, anchored: the whole path.
    Exact(Vec<u8>),
    /// `**/lit`: the path, or its last components.
    Tail(Vec<u8>),
    /// `**/*lit` (lit without `/`): the path ends with it.
    Suffix(Vec<u8>),
    /// `**/lit*` (lit without `/`): the last component starts with it.
    BasenamePrefix(Vec<u8>),
    /// `pre*suf`, anchored, `*` spanning no `/`.
    PrefixSuffix(Vec<u8>, Vec<u8>),
}

fn eq(a: &[u8], b: &[u8], ci: bool) -> bool {
    if ci { a.eq_ignore_ascii_case(b) } else { a == b }
}

impl Fast {
    /// Recognise a shape from the tokens, or None.
    fn of(tokens: &[Token]) -> Option<Fast> {
        let lit = |ts: &[Token]| -> Option<Vec<u8>> {
            let mut out = String::new();
            for t in ts {
                match t {
                    Token::Literal(c) => out.push(*c),
                    _ => return None,
                }
            }
            Some(out.into_bytes())
        };
        let star = tokens.iter().position(|t| *t == Token::ZeroOrMore);
        match tokens.first() {
            Some(Token::RecursivePrefix) => {
                let rest = &tokens[1..];
                if let Some(l) = lit(rest) {
                    return (!l.is_empty()).then_some(Fast::Tail(l));
                }
                match rest {
                    [Token::ZeroOrMore, tail @ ..] => lit(tail).filter(|l| !l.is_empty() && !l.contains(&b'/')).map(Fast::Suffix),
                    [head @ .., Token::ZeroOrMore] => lit(head).filter(|l| !l.is_empty() && !l.contains(&b'/')).map(Fast::BasenamePrefix),
                    _ => None,
                }
            }
            _ => match star {
                None => lit(tokens).map(Fast::Exact),
                Some(i) => Some(Fast::PrefixSuffix(lit(&tokens[..i])?, lit(&tokens[i + 1..])?)),
            },
        }
    }

    fn is_match(&self, path: &[u8], ci: bool) -> bool {
        match self {
            Fast::Exact(l) => eq(path, l, ci),
            // `(?:/?|.*/)lit`: the path is lit, `/lit`, or ends with `/lit`.
            Fast::Tail(l) => {
                path.len() >= l.len()
                    && eq(&path[path.len() - l.len()..], l, ci)
                    && (path.len() == l.len() || path[path.len() - l.len() - 1] == b'/')
            }
            Fast::Suffix(l) => path.len() >= l.len() && eq(&path[path.len() - l.len()..], l, ci),
            Fast::BasenamePrefix(l) => {
                let base = path.iter().rposition(|b| *b == b'/').map_or(path, |i| &path[i + 1..]);
                base.len() >= l.len() && eq(&base[..l.len()], l, ci)
            }
            Fast::PrefixSuffix(p, s) => {
                path.len() >= p.len() + s.len()
                    && eq(&path[..p.len()], p, ci)
                    && eq(&path[path.len() - s.len()..], s, ci)
                    && !path[p.len()..path.len() - s.len()].contains(&b'/')
            }
        }
    }
}

impl Pattern {
    /// Compile one line. `Ok(None)` for a line gitignore ignores (blank, `#` comment) and for a
    /// negation (`!x`): a negation could only remove a match, and these patterns only add up.
    pub fn new(line: &str, from: &std::sync::Arc<str>, case_insensitive: bool) -> Result<Option<Pattern>, String> {
        Pattern::compile(line, from, case_insensitive, false)
    }

    /// [`Pattern::new`]; the NFA is built for a pattern of a fast shape too only when `nfa`
    /// (tests compare the two).
    fn compile(line: &str, from: &std::sync::Arc<str>, case_insensitive: bool, nfa: bool) -> Result<Option<Pattern>, String> {
        if line.starts_with('#') {
            return Ok(None);
        }
        let mut line = if line.ends_with("\\ ") { line } else { line.trim_end() };
        if line.is_empty() {
            return Ok(None);
        }
        let original = line.to_string();
        let mut absolute = false;
        if line.starts_with("\\!") || line.starts_with("\\#") {
            line = &line[1..];
            absolute = line.starts_with('/');
        } else {
            if line.starts_with('!') {
                return Ok(None);
            }
            if let Some(rest) = line.strip_prefix('/') {
                line = rest;
                absolute = true;
            }
        }
        let mut dir_only = false;
        if let Some(rest) = line.strip_suffix('/') {
            dir_only = true;
            line = rest.strip_suffix('\\').unwrap_or(rest);
        }
        let mut actual = line.to_string();
        // A pattern with no slash matches at any depth: `**/` in front, unless it has one.
        let has_doublestar = actual.starts_with("**/") || actual == "**";
        if !(absolute || line.contains('/') || has_doublestar) {
            actual = format!("**/{actual}");
        }
        if actual.ends_with("/**") {
            actual.push_str("/*");
        }
        let tokens = Parser::parse(&actual)?;
        if tokens.iter().any(non_ascii_class) {
            return Err(format!(
                "`{original}`: a character class holds a non-ASCII character; write it as a literal"
            ));
        }
        // `**` alone matches everything.
        let everything = tokens.len() == 1 && tokens[0] == Token::RecursivePrefix;
        let fast = if everything { None } else { Fast::of(&tokens) };
        // A pattern of a fast shape is matched without its NFA: none is kept.
        let mut prog = vec![Inst::Match];
        let start = if fast.is_some() && !nfa {
            0
        } else if everything {
            any_star(&mut prog, 0)
        } else {
            build(&tokens, 0, case_insensitive, &mut prog)
        };
        // Patterns stay for the whole check, thousands of them with many skill files.
        prog.shrink_to_fit();
        let mut literal = required_literal(&tokens);
        if case_insensitive {
            literal.make_ascii_lowercase();
        }
        Ok(Some(Pattern {
            original,
            from: from.clone(),
            dir_only,
            prog,
            start,
            literal,
            case_insensitive,
            fast,
        }))
    }

    /// Whether the whole of `path` matches (the anchored regex of globset): a Thompson NFA
    /// simulation, linear in the path whatever the pattern.
    fn is_match(&self, path: &[u8]) -> bool {
        if let Some(f) = &self.fast {
            return f.is_match(path, self.case_insensitive);
        }
        self.nfa_match(path)
    }

    fn nfa_match(&self, path: &[u8]) -> bool {
        let n = self.prog.len();
        let mut cur = Vec::with_capacity(n);
        let mut next = Vec::with_capacity(n);
        let mut seen = vec![usize::MAX; n];
        let mut stack = Vec::with_capacity(n);
        add(&self.prog, self.start, 0, &mut seen, &mut cur, &mut stack);
        for (i, &b) in path.iter().enumerate() {
            next.clear();
            for &s in &cur {
                if let Inst::Byte(set, to) = &self.prog[s]
                    && set.has(b)
                {
                    add(&self.prog, *to, i + 1, &mut seen, &mut next, &mut stack);
                }
            }
            std::mem::swap(&mut cur, &mut next);
            if cur.is_empty() {
                return false;
            }
        }
        cur.iter().any(|&s| self.prog[s] == Inst::Match)
    }
}

/// Add state `s` and what it reaches without consuming a byte, once per step `step`.
fn add(prog: &[Inst], s: usize, step: usize, seen: &mut [usize], out: &mut Vec<usize>, stack: &mut Vec<usize>) {
    stack.clear();
    stack.push(s);
    while let Some(s) = stack.pop() {
        if seen[s] == step {
            continue;
        }
        seen[s] = step;
        match prog[s] {
            Inst::Split(a, b) => {
                stack.push(b);
                stack.push(a);
            }
            _ => out.push(s),
        }
    }
}

fn non_ascii_class(t: &Token) -> bool {
    match t {
        Token::Class { ranges, .. } => ranges.iter().any(|(a, b)| !a.is_ascii() || !b.is_ascii()),
        Token::Alternates(bs) => bs.iter().flatten().any(non_ascii_class),
        _ => false,
    }
}

/// The longest run of literal characters outside alternations: every match contains it.
fn required_literal(tokens: &[Token]) -> Vec<u8> {
    let mut best = String::new();
    let mut run = String::new();
    for t in tokens {
        if let Token::Literal(c) = t {
            run.push(*c);
        } else {
            if run.len() > best.len() {
                best = std::mem::take(&mut run);
            }
            run.clear();
        }
    }
    if run.len() > best.len() {
        best = run;
    }
    best.into_bytes()
}

fn push(prog: &mut Vec<Inst>, i: Inst) -> usize {
    prog.push(i);
    prog.len() - 1
}

/// `.*` (any byte, `\n` aside, which a normalised path never holds) then `next`.
fn any_star(prog: &mut Vec<Inst>, next: usize) -> usize {
    let split = push(prog, Inst::Split(0, next));
    let byte = push(prog, Inst::Byte(Bytes::Any, split));
    prog[split] = Inst::Split(byte, next);
    split
}

fn literal_bytes(c: char, ci: bool) -> Vec<Bytes> {
    let mut buf = [0u8; 4];
    c.encode_utf8(&mut buf)
        .bytes()
        .map(|b| {
            if ci && b.is_ascii_alphabetic() {
                Bytes::Two(b.to_ascii_lowercase(), b.to_ascii_uppercase())
            } else {
                Bytes::One(b)
            }
        })
        .collect()
}

/// Whether a branch compiles to the empty regex (globset drops such alternatives).
fn empty_regex(tokens: &[Token]) -> bool {
    tokens
        .iter()
        .all(|t| matches!(t, Token::Alternates(bs) if bs.iter().all(|b| empty_regex(b))))
}

/// Compile `tokens` so that a match continues at state `next`; returns the start state.
fn build(tokens: &[Token], mut next: usize, ci: bool, prog: &mut Vec<Inst>) -> usize {
    for t in tokens.iter().rev() {
        next = match t {
            Token::Literal(c) => {
                for b in literal_bytes(*c, ci).into_iter().rev() {
                    next = push(prog, Inst::Byte(b, next));
                }
                next
            }
            Token::Any => push(prog, Inst::Byte(Bytes::NotSlash, next)),
            Token::ZeroOrMore => {
                let split = push(prog, Inst::Split(0, next));
                let byte = push(prog, Inst::Byte(Bytes::NotSlash, split));
                prog[split] = Inst::Split(byte, next);
                split
            }
            // `(?:/?|.*/)`
            Token::RecursivePrefix => {
                let slash = push(prog, Inst::Byte(Bytes::One(b'/'), next));
                let loop_ = any_star(prog, slash);
                let either = push(prog, Inst::Split(slash, loop_));
                push(prog, Inst::Split(next, either))
            }
            // `/.*`
            Token::RecursiveSuffix => {
                let rest = any_star(prog, next);
                push(prog, Inst::Byte(Bytes::One(b'/'), rest))
            }
            // `(?:/|/.*/)`
            Token::RecursiveZeroOrMore => {
                let plain = push(prog, Inst::Byte(Bytes::One(b'/'), next));
                let last = push(prog, Inst::Byte(Bytes::One(b'/'), next));
                let middle = any_star(prog, last);
                let first = push(prog, Inst::Byte(Bytes::One(b'/'), middle));
                push(prog, Inst::Split(plain, first))
            }
            Token::Class { negated, ranges } => {
                let mut t = [0u64; 4];
                for &(a, b) in ranges {
                    for c in (a as u32)..=(b as u32) {
                        let c = c as u8;
                        let mut set = |x: u8| t[(x >> 6) as usize] |= 1 << (x & 63);
                        set(c);
                        if ci && c.is_ascii_alphabetic() {
                            set(c.to_ascii_lowercase());
                            set(c.to_ascii_uppercase());
                        }
                    }
                }
                if *negated {
                    for w in &mut t {
                        *w = !*w;
                    }
                }
                push(prog, Inst::Byte(Bytes::Table(Box::new(t)), next))
            }
            Token::Alternates(branches) => {
                let starts: Vec<usize> = branches
                    .iter()
                    .filter(|b| !empty_regex(b))
                    .map(|b| build(b, next, ci, prog))
                    .collect();
                match starts.split_first() {
                    None => next,
                    Some((first, rest)) => rest.iter().fold(*first, |acc, s| push(prog, Inst::Split(acc, *s))),
                }
            }
        };
    }
    next
}

/// globset's parser (glob.rs `Parser`) for the options gitignore uses: `literal_separator`,
/// `backslash_escape`, `allow_unclosed_class`; errors as globset reports them.
struct Parser<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    prev: Option<char>,
    cur: Option<char>,
    alternates: Vec<usize>,
    branches: Vec<Vec<Token>>,
    found_unclosed_class: bool,
}

fn is_separator(c: char) -> bool {
    c == '/'
}

impl<'a> Parser<'a> {
    fn parse(glob: &'a str) -> Result<Vec<Token>, String> {
        let mut p = Parser {
            chars: glob.chars().peekable(),
            prev: None,
            cur: None,
            alternates: Vec::new(),
            branches: vec![Vec::new()],
            found_unclosed_class: false,
        };
        while let Some(c) = p.bump() {
            match c {
                '?' => p.push_token(Token::Any)?,
                '*' => p.parse_star()?,
                '[' if !p.found_unclosed_class => p.parse_class()?,
                '{' => {
                    p.alternates.push(p.branches.len());
                    p.branches.push(Vec::new());
                }
                '}' => {
                    let start = p.alternates.pop().ok_or("unopened alternate group; '}' without '{'")?;
                    let alts: Vec<Vec<Token>> = p.branches.drain(start..).collect();
                    p.push_token(Token::Alternates(alts))?;
                }
                ',' if !p.alternates.is_empty() => p.branches.push(Vec::new()),
                '\\' => match p.bump() {
                    None => return Err("dangling '\\'".into()),
                    Some(c) => p.push_token(Token::Literal(c))?,
                },
                c => p.push_token(Token::Literal(c))?,
            }
        }
        if p.branches.len() > 1 {
            return Err("unclosed alternate group; missing '}'".into());
        }
        Ok(p.branches.pop().unwrap_or_default())
    }

    fn bump(&mut self) -> Option<char> {
        self.prev = self.cur;
        self.cur = self.chars.next();
        self.cur
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn push_token(&mut self, t: Token) -> Result<(), String> {
        self.branches
            .last_mut()
            .map(|b| b.push(t))
            .ok_or_else(|| "unopened alternate group".to_string())
    }

    fn pop_token(&mut self) -> Result<Token, String> {
        self.branches
            .last_mut()
            .and_then(|b| b.pop())
            .ok_or_else(|| "unopened alternate group".to_string())
    }

    fn have_tokens(&self) -> bool {
        self.branches.last().is_some_and(|b| !b.is_empty())
    }

    fn parse_star(&mut self) -> Result<(), String> {
        let prev = self.prev;
        if self.peek() != Some('*') {
            return self.push_token(Token::ZeroOrMore);
        }
        self.bump();
        if !self.have_tokens() {
            if !self.peek().is_none_or(is_separator) {
                self.push_token(Token::ZeroOrMore)?;
                self.push_token(Token::ZeroOrMore)?;
            } else {
                self.push_token(Token::RecursivePrefix)?;
                self.bump();
            }
            return Ok(());
        }
        if !prev.is_some_and(is_separator) && (self.branches.len() <= 1 || (prev != Some(',') && prev != Some('{'))) {
            self.push_token(Token::ZeroOrMore)?;
            self.push_token(Token::ZeroOrMore)?;
            return Ok(());
        }
        let is_suffix = match self.peek() {
            None => {
                self.bump();
                true
            }
            Some(',') | Some('}') if self.branches.len() >= 2 => true,
            Some(c) if is_separator(c) => {
                self.bump();
                false
            }
            _ => {
                self.push_token(Token::ZeroOrMore)?;
                self.push_token(Token::ZeroOrMore)?;
                return Ok(());
            }
        };
        match self.pop_token()? {
            Token::RecursivePrefix => self.push_token(Token::RecursivePrefix),
            Token::RecursiveSuffix => self.push_token(Token::RecursiveSuffix),
            _ if is_suffix => self.push_token(Token::RecursiveSuffix),
            _ => self.push_token(Token::RecursiveZeroOrMore),
        }
    }

    fn parse_class(&mut self) -> Result<(), String> {
        let saved = (self.chars.clone(), self.prev, self.cur);
        let mut ranges: Vec<(char, char)> = Vec::new();
        let negated = matches!(self.chars.peek(), Some('!') | Some('^'));
        if negated {
            self.bump();
        }
        let mut first = true;
        let mut in_range = false;
        loop {
            let Some(c) = self.bump() else {
                // An unclosed class is a literal `[` (and so is every later `[`), as in git.
                (self.chars, self.prev, self.cur) = saved;
                self.found_unclosed_class = true;
                return self.push_token(Token::Literal('['));
            };
            match c {
                ']' if !first => break,
                ']' => ranges.push((']', ']')),
                '-' if first => ranges.push(('-', '-')),
                '-' if in_range => {
                    extend(ranges.last_mut(), '-')?;
                    in_range = false;
                }
                '-' => in_range = true,
                c if in_range => {
                    extend(ranges.last_mut(), c)?;
                    in_range = false;
                }
                c => ranges.push((c, c)),
            }
            first = false;
        }
        if in_range {
            ranges.push(('-', '-'));
        }
        self.push_token(Token::Class { negated, ranges })
    }
}

fn extend(r: Option<&mut (char, char)>, to: char) -> Result<(), String> {
    let r = r.ok_or("a range without a start")?;
    r.1 = to;
    if r.1 < r.0 {
        return Err(format!("invalid range {}-{}", r.0, r.1));
    }
    Ok(())
}

/// Patterns of one case sensitivity, matched together.
#[derive(Debug, Clone)]
pub struct Set {
    patterns: Vec<Pattern>,
    /// Finds, in one scan of a path, the patterns whose required literal it contains. An NFA:
    /// the cheapest to build; a check of many paths builds a DFA ([`Set::checker_for`]).
    prefilter: Option<AhoCorasick>,
    /// Pattern index of each prefilter literal.
    by_literal: Vec<usize>,
    /// Patterns with no required literal: always run.
    always: Vec<usize>,
}

impl Set {
    pub fn new(patterns: Vec<Pattern>) -> Result<Set, String> {
        let (always, by_literal): (Vec<usize>, Vec<usize>) = (0..patterns.len()).partition(|&i| patterns[i].literal.is_empty());
        let prefilter = if by_literal.is_empty() {
            None
        } else {
            Some(
                literal_index(&patterns, &by_literal, AhoCorasickKind::NoncontiguousNFA)
                    .map_err(|e| format!("cannot index the patterns: {e}"))?,
            )
        };
        Ok(Set {
            patterns,
            prefilter,
            by_literal,
            always,
        })
    }

    pub fn empty() -> Set {
        Set {
            patterns: Vec::new(),
            prefilter: None,
            by_literal: Vec::new(),
            always: Vec::new(),
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.patterns.len()
    }

    /// The index of the last pattern (in the order added) that matches `candidate`, a path of
    /// a file (`is_dir` false) or of a directory; `ac` is the prefilter, or a DFA of it.
    fn matched(&self, ac: Option<&AhoCorasick>, candidate: &str, is_dir: bool) -> Option<usize> {
        let fits = |i: usize| {
            let p = &self.patterns[i];
            (!p.dir_only || is_dir) && p.is_match(candidate.as_bytes())
        };
        let mut best = self.always.iter().copied().filter(|&i| fits(i)).max();
        if let Some(ac) = ac {
            for m in ac.find_overlapping_iter(candidate) {
                let i = self.by_literal[m.pattern().as_usize()];
                if best.is_none_or(|b| i > b) && fits(i) {
                    best = Some(i);
                }
            }
        }
        best
    }

    /// gitignore's `matched_path_or_any_parents` for a normalised relative file path: the
    /// file itself, then each directory above it, nearest first.
    #[cfg(test)]
    pub fn matched_path_or_any_parents(&self, path: &str) -> Option<&Pattern> {
        self.checker().matched_path_or_any_parents(path)
    }

    /// A checker for many paths: it remembers what each directory matched, so the files of
    /// one directory pay for their parents once.
    #[cfg(test)]
    pub fn checker(&self) -> Checker<'_> {
        self.checker_for(0)
    }

    /// A checker for about `paths` paths. Each path is one scan of the prefilter; a DFA scans
    /// faster than the NFA but costs more to build, so it is built only when the paths are
    /// many for the literals (measured: with 218 literals the DFA paid for itself from about
    /// 6,000 paths). Either finds the same literals.
    pub fn checker_for(&self, paths: usize) -> Checker<'_> {
        let dfa = if self.by_literal.len() <= 256 && paths >= 32 * self.by_literal.len() && self.prefilter.is_some() {
            literal_index(&self.patterns, &self.by_literal, AhoCorasickKind::DFA).ok()
        } else {
            None
        };
        Checker {
            dfa,
            set: self,
            dirs: std::collections::HashMap::new(),
            last: None,
        }
    }
}

/// An automaton finding the required literals of `patterns[by_literal]`, in that order (ASCII
/// case aside when any pattern is case-insensitive): the NFA a [`Set`] keeps, or the DFA a
/// [`Checker`] of many paths builds from the same literals.
fn literal_index(patterns: &[Pattern], by_literal: &[usize], kind: AhoCorasickKind) -> Result<AhoCorasick, aho_corasick::BuildError> {
    AhoCorasick::builder()
        .kind(Some(kind))
        .match_kind(MatchKind::Standard)
        .ascii_case_insensitive(patterns.iter().any(|p| p.case_insensitive))
        // The DFA's paths are short: a prefilter's start-up costs more than it skips.
        .prefilter(kind != AhoCorasickKind::DFA)
        .build(by_literal.iter().map(|&i| &patterns[i].literal))
}

/// Checks paths against a [`Set`], remembering directory results.
pub struct Checker<'a> {
    set: &'a Set,
    /// A DFA of the set's prefilter, when built.
    dfa: Option<AhoCorasick>,
    dirs: std::collections::HashMap<String, Option<usize>>,
    /// The directory of the last file checked and what it and its parents matched: the files
    /// of one directory come together in a sorted list, so most files need no lookup.
    last: Option<(String, Option<usize>)>,
}

impl<'a> Checker<'a> {
    pub fn matched_path_or_any_parents(&mut self, path: &str) -> Option<&'a Pattern> {
        let set = self.set;
        if set.patterns.is_empty() {
            return None;
        }
        if let Some(i) = set.matched(self.ac(), path, false) {
            return Some(&set.patterns[i]);
        }
        if path.is_empty() {
            return None;
        }
        // Every directory above the file, nearest first, depends only on the nearest one.
        let parent = memchr::memrchr(b'/', path.as_bytes()).map_or("", |slash| &path[..slash]);
        if let Some((dir, hit)) = &self.last
            && dir == parent
        {
            return hit.map(|i| &set.patterns[i]);
        }
        let hit = self.parents(path);
        match &mut self.last {
            Some((dir, h)) => {
                dir.clear();
                dir.push_str(parent);
                *h = hit;
            }
            None => self.last = Some((parent.to_string(), hit)),
        }
        hit.map(|i| &set.patterns[i])
    }

    fn ac(&self) -> Option<&AhoCorasick> {
        self.dfa.as_ref().or(self.set.prefilter.as_ref())
    }

    /// The first directory above `path`, nearest first, that a pattern matches: that pattern.
    fn parents(&mut self, path: &str) -> Option<usize> {
        let set = self.set;
        let mut end = path.len();
        // The top is last: `Path::parent` of a one-component path is the empty path, which the
        // ignore crate also tries (so `/` alone matches everything).
        loop {
            let dir = match path.as_bytes()[..end].iter().rposition(|b| *b == b'/') {
                Some(slash) => {
                    end = slash;
                    &path[..end]
                }
                None if end > 0 => {
                    end = 0;
                    ""
                }
                None => return None,
            };
            let hit = match self.dirs.get(dir) {
                Some(hit) => *hit,
                None => {
                    let hit = set.matched(self.ac(), dir, true);
                    self.dirs.insert(dir.to_string(), hit);
                    hit
                }
            };
            if hit.is_some() {
                return hit;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This module's answer: the matching pattern's text, or None.
    fn mine(patterns: &[&str], path: &str, ci: bool) -> Result<Option<String>, String> {
        let mut compiled = Vec::new();
        for p in patterns {
            if let Some(p) = Pattern::new(p, &"f".into(), ci)? {
                compiled.push(p);
            }
        }
        Ok(Set::new(compiled)?.matched_path_or_any_parents(path).map(|p| p.original.clone()))
    }

    /// The ignore crate's answer, patterns added the same way (negations left out, as the
    /// scope module does).
    fn theirs(patterns: &[&str], path: &str, ci: bool) -> Result<Option<String>, String> {
        let mut b = ignore::gitignore::GitignoreBuilder::new(".");
        b.case_insensitive(ci).map_err(|e| e.to_string())?;
        for p in patterns {
            if p.starts_with('!') {
                continue;
            }
            b.add_line(None, p).map_err(|e| e.to_string())?;
        }
        let g = b.build().map_err(|e| e.to_string())?;
        Ok(match g.matched_path_or_any_parents(path, false) {
            ignore::Match::Ignore(glob) => Some(glob.original().to_string()),
            _ => None,
        })
    }

    #[test]
    fn patterns_match_as_the_ignore_crate_matches_them() {
        const PIECES: &[&str] = &[
            "a", "b", "ie", ".yaml", ".md", "/", "*", "**", "?", "[ab]", "[!a]", "[a-c]", "{a,b}", "{x,}", "\\*", "-", ".", "A", "d",
            "svc", "_", "é", "[", "]", "}", "{", ",",
        ];
        const PATH: &[&str] = &[
            "a", "b", "ie", ".yaml", ".md", "/", "x", "A", "d", "svc", "-", ".", "*", "é", "ab", "c",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut compared = 0;
        for _ in 0..20_000 {
            let patterns: Vec<String> = (0..1 + next(3))
                .map(|_| {
                    let mut p: String = (0..1 + next(5)).map(|_| PIECES[next(PIECES.len())]).collect();
                    if next(4) == 0 {
                        p.insert(0, '/');
                    }
                    if next(4) == 0 {
                        p.push('/');
                    }
                    p
                })
                .collect();
            let mut path: String = (0..1 + next(6)).map(|_| PATH[next(PATH.len())]).collect();
            path = crate::scope::normalize(&path).map_or_else(|_| "x".into(), |p| p.into_owned());
            let refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
            let ci = next(2) == 0;
            let (a, b) = (mine(&refs, &path, ci), theirs(&refs, &path, ci));
            match (&a, &b) {
                (Ok(x), Ok(y)) => {
                    assert_eq!(x, y, "patterns {refs:?} path {path:?} ci {ci}");
                    compared += 1;
                }
                // Both refuse the pattern (the messages differ), or this module refuses a
                // non-ASCII class that globset would take byte by byte.
                (Err(_), Err(_)) => {}
                (Err(e), Ok(_)) if e.contains("non-ASCII") => {}
                _ => panic!("patterns {refs:?} path {path:?} ci {ci}: mine {a:?}, ignore's {b:?}"),
            }
        }
        assert!(compared > 12_000, "{compared}");
    }

    #[test]
    fn the_fast_shapes_agree_with_the_nfa() {
        let paths = [
            "ie.yaml",
            "a/ie.yaml",
            "aie.yaml",
            "IE.YAML",
            "checks/x.md",
            "checks/a/x.md",
            "x.md",
            "Dockerfile.prod",
            "a/Dockerfile",
            "a/b",
            "",
            "checks/.md",
        ];
        for pat in [
            "ie.yaml",
            "*.yaml",
            "checks/*.md",
            "/checks/*.md",
            "Dockerfile*",
            "a/b",
            "/ie.yaml",
            "*.md",
            "checks*",
        ] {
            for ci in [false, true] {
                let p = Pattern::compile(pat, &"f".into(), ci, true).unwrap().unwrap();
                assert!(p.fast.is_some(), "{pat} has no fast shape");
                let kept = Pattern::new(pat, &"f".into(), ci).unwrap().unwrap();
                assert_eq!(kept.prog, vec![Inst::Match], "{pat}: the NFA of a fast shape is not kept");
                for path in paths {
                    assert_eq!(p.is_match(path.as_bytes()), p.nfa_match(path.as_bytes()), "{pat} {path} ci {ci}");
                    assert_eq!(kept.is_match(path.as_bytes()), p.nfa_match(path.as_bytes()), "{pat} {path} ci {ci}");
                }
            }
        }
    }

    #[test]
    fn a_checker_answers_the_same_with_a_dfa_and_for_paths_in_any_order() {
        let lines = [
            "*.yaml",
            "/checks/*.md",
            "secret/",
            "**/deep/**",
            "Dockerfile*",
            "a/b",
            "[ab]c",
            "**",
            "!x",
            "ie.yaml",
        ];
        let paths = [
            "checks/x.md",
            "a/b/c",
            "x/secret/y",
            "secret",
            "q/deep/r/s",
            "Dockerfile.prod",
            "ac",
            "d/bc",
            "a/ie.yaml",
            "checks/x.md",
            "z",
            "x/secret/z",
            "a/b",
            "deep/x",
        ];
        for ci in [false, true] {
            for n in 1..lines.len() {
                let set = Set::new(
                    lines[..n]
                        .iter()
                        .filter_map(|l| Pattern::new(l, &"f".into(), ci).unwrap())
                        .collect(),
                )
                .unwrap();
                let (mut nfa, mut dfa) = (set.checker_for(0), set.checker_for(1_000_000));
                for p in paths {
                    let alone = set.checker_for(0).matched_path_or_any_parents(p).map(|g| g.original.clone());
                    assert_eq!(
                        nfa.matched_path_or_any_parents(p).map(|g| g.original.clone()),
                        alone,
                        "{p} {n} {ci}"
                    );
                    assert_eq!(
                        dfa.matched_path_or_any_parents(p).map(|g| g.original.clone()),
                        alone,
                        "{p} {n} {ci}"
                    );
                }
                assert!(dfa.dfa.is_some() || set.prefilter.is_none());
            }
        }
    }

    #[test]
    fn pathological_patterns_match_in_linear_time() {
        let star = "*a".repeat(30);
        let p = Pattern::new(&format!("{star}b"), &"f".into(), false).unwrap().unwrap();
        let path = "a".repeat(4000);
        assert!(!p.nfa_match(path.as_bytes()));
    }
}
