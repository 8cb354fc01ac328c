//! A table-driven option scanner shared by the grammars.
//!
//! Each wrapped tool parses its command line with a different library (pflag, urfave/cli,
//! getopt_long, curl's own loop, git's parse-options). Their differences are captured as a
//! [`Style`]; the options themselves are a table of [`Opt`]. The scanner only splits argv into
//! options (with their values) and positionals, in order; what they mean is the grammar's job.
//! It never guesses: an option it cannot place is an error unless the style says how the real
//! tool treats it.

use crate::packed::{put, text};

/// How many values an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// A switch. `--flag=v` is accepted only when [`Style::flag_eq_value`] is set (pflag booleans).
    Flag,
    /// Takes a value: `--opt v`, `--opt=v`, `-o v`, `-ov`, as the style allows.
    Value,
    /// Takes a value only in the stuck form (`--opt=v`, `-ov`); `--opt` alone has none.
    OptValue,
}

/// One option in a table. `id` is what the grammar matches on; names are as written without
/// dashes (`long: &["force-with-lease"]`, `short: &['f']`).
///
/// The names are kept inline, not as pointers to text: the tables hold thousands of options,
/// and in the gate (a position-independent executable) every pointer in static data is a
/// relocation written, and a page copied, at the start of every call (docs/PERFORMANCE.md). A
/// table of options with inline names stays in read-only pages shared with the file.
#[derive(Debug, Clone, Copy)]
pub struct Opt {
    pub id: Name,
    pub long: Longs,
    pub short: Shorts,
    pub arity: Arity,
}

impl Opt {
    pub const fn flag(id: &'static str, long: &'static [&'static str], short: &'static [char]) -> Opt {
        Opt::new(id, long, short, Arity::Flag)
    }
    pub const fn value(id: &'static str, long: &'static [&'static str], short: &'static [char]) -> Opt {
        Opt::new(id, long, short, Arity::Value)
    }
    pub const fn opt_value(id: &'static str, long: &'static [&'static str], short: &'static [char]) -> Opt {
        Opt::new(id, long, short, Arity::OptValue)
    }
    const fn new(id: &'static str, long: &'static [&'static str], short: &'static [char], arity: Arity) -> Opt {
        Opt {
            id: Name::new(id),
            long: Longs::new(long),
            short: Shorts::new(short),
            arity,
        }
    }
}

/// An option's id, inline. The longest id of any table is 34 bytes; a longer one fails the
/// build.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Name {
    len: u8,
    bytes: [u8; Name::CAP],
}

impl Name {
    const CAP: usize = 39;

    pub const fn new(s: &str) -> Name {
        assert!(s.len() <= Name::CAP, "an option id longer than Name::CAP");
        let mut bytes = [0; Name::CAP];
        put(&mut bytes, 0, s.as_bytes());
        Name { len: s.len() as u8, bytes }
    }

    pub fn as_str(&self) -> &str {
        text(self.bytes.get(..usize::from(self.len)).unwrap_or_default())
    }

    /// The name's bytes, for tables built by a `const fn`.
    pub const fn as_bytes(&self) -> &[u8] {
        self.bytes.split_at(self.len as usize).0
    }
}

impl std::ops::Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An option's long names (at most three, 60 bytes together), inline, one after another.
#[derive(Clone, Copy)]
pub struct Longs {
    count: u8,
    /// Where each name ends in `bytes`.
    ends: [u8; Longs::MAX],
    bytes: [u8; Longs::CAP],
}

impl Longs {
    const MAX: usize = 3;
    const CAP: usize = 60;

    pub const fn new(names: &[&str]) -> Longs {
        assert!(names.len() <= Longs::MAX, "an option with more than Longs::MAX long names");
        let mut out = Longs {
            count: names.len() as u8,
            ends: [0; Longs::MAX],
            bytes: [0; Longs::CAP],
        };
        let mut at = 0;
        let mut i = 0;
        while i < names.len() {
            let n = names[i].as_bytes();
            assert!(at + n.len() <= Longs::CAP, "an option whose long names exceed Longs::CAP bytes");
            put(&mut out.bytes, at, n);
            at += n.len();
            out.ends[i] = at as u8;
            i += 1;
        }
        out
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let ends = self.ends.get(..usize::from(self.count)).unwrap_or_default();
        ends.iter().scan(0usize, move |start, &end| {
            let name = text(self.bytes.get(*start..usize::from(end)).unwrap_or_default());
            *start = usize::from(end);
            Some(name)
        })
    }

    pub fn contains(&self, name: &str) -> bool {
        self.iter().any(|l| l == name)
    }
}

impl std::fmt::Debug for Longs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// An option's short names (at most two), inline.
#[derive(Clone, Copy)]
pub struct Shorts {
    len: u8,
    chars: [char; Shorts::MAX],
}

impl Shorts {
    const MAX: usize = 2;

    const fn new(chars: &[char]) -> Shorts {
        assert!(chars.len() <= Shorts::MAX, "an option with more than Shorts::MAX short names");
        let mut out = Shorts {
            len: chars.len() as u8,
            chars: ['\0'; Shorts::MAX],
        };
        let mut i = 0;
        while i < chars.len() {
            out.chars[i] = chars[i];
            i += 1;
        }
        out
    }

    pub fn iter(&self) -> impl Iterator<Item = &char> {
        self.chars.get(..usize::from(self.len)).unwrap_or_default().iter()
    }

    pub fn contains(&self, c: &char) -> bool {
        self.iter().any(|x| x == c)
    }
}

impl std::fmt::Debug for Shorts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// What to do with an option the table does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unknown {
    /// Fail: the call is not understood (the real tool would fail too, or worse, do something).
    Error,
    /// cobra's `stripFlags` while it looks for a subcommand: a `--name` without `=`, or a
    /// two-character `-x`, is assumed to take the next token; `--x=y` and `-abc` stand alone.
    AssumeValue,
    /// Keep it as an option with no value (only for scans that look for something specific).
    Flag,
}

/// The parsing conventions of one family of tools.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Long options may be abbreviated to a unique prefix (getopt_long, git parse-options).
    pub long_abbrev: bool,
    /// Long names compare case-insensitively (curl's `curl_strnequal`: `--REQUEST`, `--Data-B`).
    pub long_ignore_case: bool,
    /// `--no-<name>` needs the whole name, never an abbreviation (curl 7.88 measures the prefix
    /// with the `no-` still counted, so only an exact name matches).
    pub negation_exact: bool,
    /// A single dash may introduce a long name (`-login x`, urfave/cli).
    pub single_dash_long: bool,
    /// Short switches cluster (`-abc`); a value-taking short ends the cluster and takes the rest.
    pub clusters: bool,
    /// A short option's value may be attached (`-ovalue`).
    pub attached_short: bool,
    /// `-o=value` means value `value` (pflag, urfave).
    pub short_eq: bool,
    /// `--opt=value` is accepted.
    pub long_eq: bool,
    /// A flag may carry an explicit value (`--help=false`, pflag and urfave booleans).
    pub flag_eq_value: bool,
    /// `--no-<flag>` negates a switch (git, curl). Reported with `negated: true`.
    pub negation: bool,
    /// Options may follow positionals. When false, the first positional ends option parsing
    /// and it and everything after are positionals.
    pub interspersed: bool,
    /// `--` ends options; everything after is positional.
    pub double_dash: bool,
    /// `--end-of-options` ends options and is dropped; everything after is positional, a later
    /// `--` included (git's parse-options.c).
    pub end_of_options: bool,
    pub unknown: Unknown,
}

impl Style {
    /// spf13/pflag as cobra uses it (gh, docker subcommands, compose).
    pub const PFLAG: Style = Style {
        long_abbrev: false,
        long_ignore_case: false,
        negation_exact: false,
        single_dash_long: false,
        clusters: true,
        attached_short: true,
        short_eq: true,
        long_eq: true,
        flag_eq_value: true,
        negation: false,
        interspersed: true,
        double_dash: true,
        end_of_options: false,
        unknown: Unknown::Error,
    };
    /// glibc getopt_long (psql on Linux).
    pub const GETOPT_LONG: Style = Style {
        long_abbrev: true,
        long_ignore_case: false,
        negation_exact: false,
        single_dash_long: false,
        clusters: true,
        attached_short: true,
        short_eq: false,
        long_eq: true,
        flag_eq_value: false,
        negation: false,
        interspersed: true,
        double_dash: true,
        end_of_options: false,
        unknown: Unknown::Error,
    };
    /// git's parse-options.c (subcommand options).
    pub const GIT_PARSE_OPTIONS: Style = Style {
        long_abbrev: true,
        long_ignore_case: false,
        negation_exact: false,
        single_dash_long: false,
        clusters: true,
        attached_short: true,
        short_eq: false,
        long_eq: true,
        flag_eq_value: false,
        negation: true,
        interspersed: true,
        double_dash: true,
        end_of_options: true,
        unknown: Unknown::Error,
    };
    /// urfave/cli v3 as tea uses it: one or two dashes, no clusters.
    pub const URFAVE: Style = Style {
        long_abbrev: false,
        long_ignore_case: false,
        negation_exact: false,
        single_dash_long: true,
        clusters: false,
        attached_short: false,
        short_eq: true,
        long_eq: true,
        flag_eq_value: true,
        negation: false,
        interspersed: true,
        double_dash: true,
        end_of_options: false,
        unknown: Unknown::Error,
    };
}

/// One option found in argv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub id: Name,
    /// The token(s) as written, for messages (`--force-w`, `-uf`).
    pub written: String,
    pub value: Option<String>,
    /// `--no-<name>` was used.
    pub negated: bool,
    /// Index in argv of the word that ends with the value (the option's own word when the value
    /// is attached or there is none, the next word otherwise), for a declared rewrite of it.
    pub at: usize,
}

/// A piece of argv, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Opt(Found),
    /// An option the table does not know, kept because the style said so.
    Unknown {
        written: String,
        value: Option<String>,
    },
    Pos(String),
}

/// argv split into options and positionals, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    pub items: Vec<Item>,
    /// `--` was seen.
    pub saw_double_dash: bool,
    /// Where in `items` the words after `--` begin.
    pub double_dash_at: Option<usize>,
    /// `--end-of-options` was seen: every word after it is a positional, `--` included.
    pub saw_end_of_options: bool,
}

impl Parsed {
    pub fn positionals(&self) -> Vec<&str> {
        self.items
            .iter()
            .filter_map(|i| match i {
                Item::Pos(p) => Some(p.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn opts(&self) -> impl Iterator<Item = &Found> {
        self.items.iter().filter_map(|i| match i {
            Item::Opt(f) => Some(f),
            _ => None,
        })
    }

    /// Every occurrence of option `id`, in order.
    pub fn all(&self, id: &str) -> Vec<&Found> {
        self.opts().filter(|f| f.id == id).collect()
    }

    /// The option is present and its last occurrence is not negated (nor `=false`).
    pub fn has(&self, id: &str) -> bool {
        match self.all(id).last() {
            Some(f) => !f.negated && !is_false(f.value.as_deref()),
            None => false,
        }
    }

    /// The value of the last occurrence of `id`.
    pub fn last(&self, id: &str) -> Option<&str> {
        self.all(id).last().and_then(|f| f.value.as_deref())
    }

    /// Every value given for `id`, in order.
    pub fn values(&self, id: &str) -> Vec<&str> {
        self.all(id).iter().filter_map(|f| f.value.as_deref()).collect()
    }

    pub fn unknowns(&self) -> Vec<&str> {
        self.items
            .iter()
            .filter_map(|i| match i {
                Item::Unknown { written, .. } => Some(written.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// pflag/urfave boolean values that turn a flag off.
fn is_false(v: Option<&str>) -> bool {
    matches!(v, Some("false" | "FALSE" | "False" | "0" | "f" | "F"))
}

/// Scan `args` against `table` in `style`. Errors name the token that could not be placed.
pub fn scan(args: &[String], table: &[Opt], style: &Style) -> Result<Parsed, String> {
    let mut out = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if style.double_dash && a == "--" {
            out.saw_double_dash = true;
            out.double_dash_at = Some(out.items.len());
            out.items.extend(args[i..].iter().cloned().map(Item::Pos));
            break;
        }
        if style.end_of_options && a == "--end-of-options" {
            out.saw_end_of_options = true;
            out.items.extend(args[i..].iter().cloned().map(Item::Pos));
            break;
        }
        if a.len() < 2 || !a.starts_with('-') {
            out.items.push(Item::Pos(a.clone()));
            if !style.interspersed {
                out.items.extend(args[i..].iter().cloned().map(Item::Pos));
                break;
            }
            continue;
        }
        if let Some(body) = a.strip_prefix("--") {
            i = long(args, i, a, body, table, style, &mut out)?;
        } else if style.single_dash_long {
            // urfave/cli: `-x` and `-name` are the same lookup as `--x` and `--name`.
            i = long(args, i, a, &a[1..], table, style, &mut out)?;
        } else {
            i = short(args, i, a, table, style, &mut out)?;
        }
    }
    Ok(out)
}

fn find_long<'t>(name: &str, table: &'t [Opt], style: &Style) -> Result<Option<&'t Opt>, String> {
    find_long_as(name, table, style, style.long_abbrev)
}

fn find_long_as<'t>(name: &str, table: &'t [Opt], style: &Style, abbrev: bool) -> Result<Option<&'t Opt>, String> {
    let same = |l: &str| {
        if style.long_ignore_case {
            l.eq_ignore_ascii_case(name)
        } else {
            l == name
        }
    };
    if let Some(o) = table.iter().find(|o| o.long.iter().any(&same)) {
        return Ok(Some(o));
    }
    if style.single_dash_long
        && let Some(o) = table
            .iter()
            .find(|o| name.chars().count() == 1 && name.chars().next().is_some_and(|c| o.short.contains(&c)))
    {
        return Ok(Some(o));
    }
    if abbrev && !name.is_empty() {
        let starts = |l: &str| {
            if style.long_ignore_case {
                l.len() >= name.len() && l.as_bytes()[..name.len()].eq_ignore_ascii_case(name.as_bytes())
            } else {
                l.starts_with(name)
            }
        };
        let mut hits: Vec<&Opt> = Vec::new();
        for o in table {
            if o.long.iter().any(&starts) && !hits.iter().any(|h| h.id == o.id) {
                hits.push(o);
            }
        }
        return match hits.len() {
            0 => Ok(None),
            1 => Ok(Some(hits[0])),
            _ => Err(format!("option --{name} is ambiguous")),
        };
    }
    Ok(None)
}

#[allow(clippy::too_many_arguments)]
fn long(args: &[String], mut i: usize, written: &str, body: &str, table: &[Opt], style: &Style, out: &mut Parsed) -> Result<usize, String> {
    let (name, eq) = match body.split_once('=') {
        Some((n, v)) if style.long_eq || style.single_dash_long => (n, Some(v.to_string())),
        Some(_) => {
            return Err(format!("option {written} does not take the --opt=value form here"));
        }
        None => (body, None),
    };
    let mut negated = false;
    let mut opt = find_long(name, table, style)?;
    if opt.is_none()
        && style.negation
        && let Some(rest) = name.strip_prefix("no-")
        && let Some(o) = find_long_as(rest, table, style, style.long_abbrev && !style.negation_exact)?
    {
        negated = true;
        opt = Some(o);
    }
    let Some(o) = opt else {
        return unknown_long(args, i, written, eq, style, out);
    };
    let value = match (o.arity, eq) {
        (_, Some(_)) if negated => return Err(format!("option {written} takes no value")),
        (Arity::Flag, Some(v)) if style.flag_eq_value => Some(v),
        (Arity::Flag, Some(_)) => return Err(format!("option {written} takes no value")),
        (Arity::Flag, None) => None,
        (Arity::Value, Some(v)) | (Arity::OptValue, Some(v)) => Some(v),
        (Arity::Value, None) if negated => None,
        (Arity::Value, None) => match args.get(i) {
            Some(v) => {
                i += 1;
                Some(v.clone())
            }
            None => return Err(format!("option {written} needs a value")),
        },
        (Arity::OptValue, None) => None,
    };
    out.items.push(Item::Opt(Found {
        id: o.id,
        written: written.to_string(),
        value,
        negated,
        at: i - 1,
    }));
    Ok(i)
}

fn unknown_long(
    args: &[String],
    mut i: usize,
    written: &str,
    eq: Option<String>,
    style: &Style,
    out: &mut Parsed,
) -> Result<usize, String> {
    match style.unknown {
        Unknown::Error => Err(format!("unknown option {written}")),
        Unknown::Flag => {
            out.items.push(Item::Unknown {
                written: written.to_string(),
                value: eq,
            });
            Ok(i)
        }
        Unknown::AssumeValue => {
            let value = match eq {
                Some(v) => Some(v),
                None => {
                    let v = args.get(i).cloned();
                    if v.is_some() {
                        i += 1;
                    }
                    v
                }
            };
            out.items.push(Item::Unknown {
                written: written.to_string(),
                value,
            });
            Ok(i)
        }
    }
}

fn short(args: &[String], mut i: usize, written: &str, table: &[Opt], style: &Style, out: &mut Parsed) -> Result<usize, String> {
    let body: Vec<char> = written.chars().skip(1).collect();
    if style.unknown == Unknown::AssumeValue {
        // cobra stripFlags: decide from the first letter alone when it is unknown.
        let known = table.iter().any(|o| o.short.contains(&body[0]));
        if !known {
            let value = if body.len() == 1 {
                let v = args.get(i).cloned();
                if v.is_some() {
                    i += 1;
                }
                v
            } else {
                None
            };
            out.items.push(Item::Unknown {
                written: written.to_string(),
                value,
            });
            return Ok(i);
        }
    }
    let mut k = 0;
    while k < body.len() {
        let c = body[k];
        let Some(o) = table.iter().find(|o| o.short.contains(&c)) else {
            return match style.unknown {
                Unknown::Error => Err(if body.len() > 1 {
                    format!("unknown option -{c} in {written}")
                } else {
                    format!("unknown option {written}")
                }),
                _ => {
                    out.items.push(Item::Unknown {
                        written: written.to_string(),
                        value: None,
                    });
                    Ok(i)
                }
            };
        };
        let rest: String = body[k + 1..].iter().collect();
        match o.arity {
            Arity::Flag => {
                if let Some(v) = rest.strip_prefix('=').filter(|_| style.short_eq && style.flag_eq_value) {
                    out.items.push(Item::Opt(Found {
                        id: o.id,
                        written: written.to_string(),
                        value: Some(v.to_string()),
                        negated: false,
                        at: i - 1,
                    }));
                    return Ok(i);
                }
                out.items.push(Item::Opt(Found {
                    id: o.id,
                    written: written.to_string(),
                    value: None,
                    negated: false,
                    at: i - 1,
                }));
                if !rest.is_empty() && !style.clusters {
                    return Err(format!("option -{c} cannot be bundled in {written}"));
                }
                k += 1;
            }
            Arity::Value | Arity::OptValue => {
                let value = if !rest.is_empty() {
                    if !style.attached_short {
                        return Err(format!("option -{c} needs its value as a separate word, not {written}"));
                    }
                    Some(match rest.strip_prefix('=') {
                        Some(v) if style.short_eq => v.to_string(),
                        _ => rest,
                    })
                } else if o.arity == Arity::OptValue {
                    None
                } else {
                    match args.get(i) {
                        Some(v) => {
                            i += 1;
                            Some(v.clone())
                        }
                        None => return Err(format!("option -{c} needs a value")),
                    }
                };
                out.items.push(Item::Opt(Found {
                    id: o.id,
                    written: written.to_string(),
                    value,
                    negated: false,
                    at: i - 1,
                }));
                return Ok(i);
            }
        }
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;
    use pretty_assertions::assert_eq;

    const T: &[Opt] = &[
        Opt::flag("silent", &["silent"], &['s']),
        Opt::value("request", &["request"], &['X']),
        Opt::flag("force", &["force"], &['f']),
        Opt::opt_value("lease", &["force-with-lease"], &[]),
        Opt::flag("upstream", &["set-upstream"], &['u']),
    ];

    fn found(id: &'static str, written: &str, value: Option<&str>, at: usize) -> Item {
        Item::Opt(Found {
            id: Name::new(id),
            written: written.into(),
            value: value.map(String::from),
            negated: false,
            at,
        })
    }

    #[test]
    fn a_value_taking_short_ends_a_cluster_and_takes_the_rest() {
        let p = scan(&argv(&["-sXPOST", "u"]), T, &Style::PFLAG).unwrap();
        assert_eq!(
            p.items,
            vec![
                found("silent", "-sXPOST", None, 0),
                found("request", "-sXPOST", Some("POST"), 0),
                Item::Pos("u".into())
            ]
        );
    }

    #[test]
    fn long_abbreviations_resolve_to_the_unique_option() {
        let p = scan(&argv(&["--force-w", "origin"]), T, &Style::GIT_PARSE_OPTIONS).unwrap();
        assert_eq!(p.items, vec![found("lease", "--force-w", None, 0), Item::Pos("origin".into())]);
        assert_eq!(
            scan(&argv(&["--forc"]), T, &Style::GIT_PARSE_OPTIONS),
            Err("option --forc is ambiguous".into())
        );
    }

    #[test]
    fn pflag_does_not_abbreviate() {
        assert_eq!(scan(&argv(&["--forc"]), T, &Style::PFLAG), Err("unknown option --forc".into()));
    }

    #[test]
    fn flags_cluster_in_either_order() {
        let p = scan(&argv(&["-uf"]), T, &Style::GIT_PARSE_OPTIONS).unwrap();
        assert!(p.has("force") && p.has("upstream"));
    }

    #[test]
    fn pflag_booleans_take_an_explicit_value() {
        let p = scan(&argv(&["--force=false"]), T, &Style::PFLAG).unwrap();
        assert!(!p.has("force"));
        let p = scan(&argv(&["-f=true"]), T, &Style::PFLAG).unwrap();
        assert!(p.has("force"));
    }

    #[test]
    fn no_prefix_negates_where_the_style_allows() {
        let p = scan(&argv(&["--force", "--no-force"]), T, &Style::GIT_PARSE_OPTIONS).unwrap();
        assert!(!p.has("force"));
    }

    #[test]
    fn double_dash_ends_options() {
        let p = scan(&argv(&["--", "-f"]), T, &Style::PFLAG).unwrap();
        assert_eq!(p.positionals(), vec!["-f"]);
        assert!(p.saw_double_dash);
    }

    #[test]
    fn end_of_options_makes_every_later_word_positional_where_the_style_says() {
        let p = scan(&argv(&["-s", "--end-of-options", "-f", "--", "x"]), T, &Style::GIT_PARSE_OPTIONS).unwrap();
        assert_eq!(p.positionals(), vec!["-f", "--", "x"]);
        assert!(p.saw_end_of_options && !p.saw_double_dash && p.has("silent") && !p.has("force"));
        assert_eq!(
            scan(&argv(&["--end-of-options"]), T, &Style::PFLAG),
            Err("unknown option --end-of-options".into())
        );
    }

    #[test]
    fn a_value_may_begin_with_a_dash() {
        let p = scan(&argv(&["-X", "-f"]), T, &Style::PFLAG).unwrap();
        assert_eq!(p.last("request"), Some("-f"));
    }

    #[test]
    fn at_names_the_word_that_ends_with_the_value() {
        let t = &[Opt::value("file", &["file"], &['f']), Opt::flag("x", &[], &['X'])];
        let p = scan(&argv(&["-f", "a", "-Xfb", "--file=c", "--fi", "d", "e"]), t, &Style::GETOPT_LONG).unwrap();
        let at: Vec<(Option<&str>, usize)> = p.all("file").iter().map(|f| (f.value.as_deref(), f.at)).collect();
        assert_eq!(at, vec![(Some("a"), 1), (Some("b"), 2), (Some("c"), 3), (Some("d"), 5)]);
    }

    #[test]
    fn missing_value_is_an_error() {
        assert_eq!(scan(&argv(&["-X"]), T, &Style::PFLAG), Err("option -X needs a value".into()));
    }

    #[test]
    fn cobra_strip_assumes_unknown_flags_take_a_value() {
        let style = Style {
            unknown: Unknown::AssumeValue,
            ..Style::PFLAG
        };
        let p = scan(&argv(&["-R", "o/r", "pr", "--repo=x", "merge"]), T, &style).unwrap();
        assert_eq!(p.positionals(), vec!["pr", "merge"]);
    }

    #[test]
    fn non_interspersed_stops_at_the_first_positional() {
        let style = Style {
            interspersed: false,
            ..Style::PFLAG
        };
        let p = scan(&argv(&["-s", "stop", "-f"]), T, &style).unwrap();
        assert_eq!(p.positionals(), vec!["stop", "-f"]);
    }

    #[test]
    fn urfave_takes_one_or_two_dashes_and_short_eq() {
        let t = &[Opt::value("repo", &["repo"], &['r'])];
        for a in [["-repo", "x"], ["--repo", "x"], ["-r", "x"]] {
            assert_eq!(scan(&argv(&a), t, &Style::URFAVE).unwrap().last("repo"), Some("x"));
        }
        assert_eq!(scan(&argv(&["-r=x"]), t, &Style::URFAVE).unwrap().last("repo"), Some("x"));
    }
}
