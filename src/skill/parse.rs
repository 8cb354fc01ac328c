//! One skill file's text -> [`Parsed`]: title, frontmatter, sections, the Tier Requirement and
//! the path patterns of the Scope Rules, plus lint findings. Markdown is read with
//! pulldown-cmark (YAML metadata blocks on), never with regexes, so a pattern inside a code
//! span, a fenced block, or a nested list is found where a reader sees it.
//!
//! Pure: text in, data out. No file is read here and nothing is decided.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, MetadataBlockKind, Options, Parser, Tag, TagEnd};
use serde::Deserialize;

/// The sections every skill has (SPEC-0023 REQ-1), besides the title.
pub const REQUIRED: &[&str] = &["Purpose", "Tool Discovery", "Execution", "Validation"];
/// The optional sections the format knows.
pub const OPTIONAL: &[&str] = &["Tier Requirement", "Scope Rules", "Dry-Run Behavior"];

/// Frontmatter larger than this is reported and not parsed.
pub const MAX_FRONTMATTER: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Warning,
    /// The skill cannot be used for a decision: a call that needs it is refused (exit 78).
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    pub level: Level,
    pub message: String,
}

impl Finding {
    fn warn(message: impl Into<String>) -> Finding {
        Finding {
            level: Level::Warning,
            message: message.into(),
        }
    }
    fn error(message: impl Into<String>) -> Finding {
        Finding {
            level: Level::Error,
            message: message.into(),
        }
    }
}

/// Where a pattern was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// A fenced block with the info string `deny` or `allow` (authoritative).
    Block,
    /// An inline code span in a bullet of the Scope Rules section.
    Prose,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Pattern {
    /// Exactly as written.
    pub text: String,
    pub origin: Origin,
    /// 1-based line in the file.
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Section {
    pub name: String,
    /// 1-based line of the heading.
    pub line: usize,
    /// The section's text, heading excluded.
    #[serde(skip)]
    pub range: Range<usize>,
}

/// The Tier Requirement as read from its section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TierRequirement {
    pub tier: u8,
    /// 1-based line of the section heading.
    pub line: usize,
}

/// Agent Skills frontmatter (agentskills.io): `name` and `description` required, a few known
/// optional keys. Unknown keys are reported, not refused: the format grows.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Frontmatter {
    pub name: Option<String>,
    pub description: Option<String>,
    #[serde(flatten)]
    pub other: std::collections::BTreeMap<String, serde_yaml_ng::Value>,
}

const KNOWN_FRONTMATTER: &[&str] = &["license", "compatibility", "metadata", "allowed-tools"];

#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub title: Option<String>,
    pub frontmatter: Option<Frontmatter>,
    /// The text after the frontmatter.
    pub body: Range<usize>,
    pub sections: Vec<Section>,
    pub tier: Option<TierRequirement>,
    pub deny: Vec<Pattern>,
    /// `Some` when the skill has at least one `allow` block: then the allow-list applies.
    pub allow: Option<Vec<Pattern>>,
    pub findings: Vec<Finding>,
}

impl Parsed {
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| same_name(&s.name, name))
    }

    /// The first error-level finding.
    pub fn error(&self) -> Option<&str> {
        self.findings.iter().find(|f| f.level == Level::Error).map(|f| f.message.as_str())
    }
}

fn same_name(a: &str, b: &str) -> bool {
    a.trim().trim_end_matches(':').trim().eq_ignore_ascii_case(b)
}

/// 1-based line number of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|b| **b == b'\n').count() + 1
}

/// Parse one skill file. `agent_skill` is the `name/SKILL.md` layout (frontmatter required).
pub fn parse(text: &str, agent_skill: bool) -> Parsed {
    parse_as(text, agent_skill, true)
}

/// Only the path patterns (and the findings about them): what a scope check needs from every
/// skill file. Frontmatter, the Tier Requirement and the section lint are left out.
pub fn parse_patterns(text: &str, agent_skill: bool) -> Parsed {
    parse_as(text, agent_skill, false)
}

fn parse_as(text: &str, agent_skill: bool, full: bool) -> Parsed {
    let mut out = Parsed {
        body: 0..text.len(),
        ..Parsed::default()
    };
    let mut heading: Option<(HeadingLevel, String, usize)> = None;
    let mut current: Option<(String, usize, usize)> = None; // name, heading line, text start
    let mut in_meta = false;
    let mut meta = String::new();
    // The block being collected inside Scope Rules.
    let mut block: Option<Block> = None;
    // One entry per open list: ordered?
    let mut lists: Vec<bool> = Vec::new();
    // The bullets of Scope Rules being collected.
    let mut items: Vec<Bullet> = Vec::new();
    let mut tier_text = String::new();
    let mut saw_allow_block = false;
    let mut saw_deny_block = false;
    let mut allow = Vec::new();
    // What the bullets of Scope Rules held, judged once it is known whether a block exists.
    let mut bullets: Vec<Bullet> = Vec::new();

    // Which section the events are in, worked out once per section heading.
    let mut in_scope = false;
    let mut in_tier = false;
    let opts = Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    for (event, range) in Parser::new_ext(text, opts).into_offset_iter() {
        match event {
            Event::Start(Tag::MetadataBlock(MetadataBlockKind::YamlStyle)) => {
                in_meta = true;
            }
            Event::End(TagEnd::MetadataBlock(_)) => {
                in_meta = false;
                // The body starts after the closing `---` line, its newline included.
                let rest = text.get(range.end..).unwrap_or("");
                let skip = if rest.starts_with("\r\n") {
                    2
                } else {
                    usize::from(rest.starts_with('\n'))
                };
                out.body = range.end + skip..text.len();
            }
            Event::Text(t) if in_meta => meta.push_str(&t),
            Event::Start(Tag::Heading { level, .. }) => heading = Some((level, String::new(), range.start)),
            Event::End(TagEnd::Heading(level)) => {
                let (_, name, start) = heading.take().unwrap_or((level, String::new(), range.start));
                let name = name.trim().to_string();
                match level {
                    HeadingLevel::H1 if out.title.is_none() => out.title = Some(name),
                    HeadingLevel::H2 => {
                        if let Some((n, line, s)) = current.take() {
                            out.sections.push(Section {
                                name: n,
                                line,
                                range: s..start,
                            });
                        }
                        in_scope = same_name(&name, "Scope Rules");
                        in_tier = same_name(&name, "Tier Requirement");
                        current = Some((name, line_of(text, start), range.end));
                    }
                    _ => {}
                }
            }
            Event::Text(t) | Event::Code(t) if heading.is_some() => {
                if let Some(h) = heading.as_mut() {
                    h.1.push_str(&t);
                }
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                block = code_block(text, &kind, range.clone(), in_scope, &mut out.findings);
                match block.as_ref().map(|b| b.allow) {
                    Some(true) => saw_allow_block = true,
                    Some(false) => saw_deny_block = true,
                    None => {}
                }
            }
            Event::Text(t) if block.is_some() => {
                if let Some(b) = block.as_mut() {
                    b.body.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(b) = block.take().filter(|b| b.closed) {
                    let mut patterns = block_patterns(&b, &mut out.findings);
                    if b.allow {
                        allow.append(&mut patterns);
                    } else {
                        out.deny.append(&mut patterns);
                    }
                }
            }
            Event::Start(Tag::List(start)) => lists.push(start.is_some()),
            Event::End(TagEnd::List(_)) => {
                lists.pop();
            }
            Event::Start(Tag::Item) if in_scope && lists.last() == Some(&false) => {
                items.push(Bullet {
                    line: line_of(text, range.start),
                    ..Bullet::default()
                });
            }
            Event::End(TagEnd::Item) if in_scope && !items.is_empty() && lists.last() == Some(&false) => {
                if let Some(item) = items.pop() {
                    bullets.push(item);
                }
            }
            Event::Code(t) if in_scope && !items.is_empty() && lists.last() == Some(&false) => {
                let line = line_of(text, range.start);
                if let Some(item) = items.last_mut() {
                    item.text.push(SPAN);
                    item.spans.push((t.to_string(), line));
                }
            }
            Event::Text(t) if in_scope && !items.is_empty() => {
                if let Some(item) = items.last_mut() {
                    item.text.push_str(&t);
                }
            }
            Event::Text(t) | Event::Code(t) if in_tier => {
                tier_text.push_str(&t);
                tier_text.push(' ');
            }
            _ => {}
        }
    }
    if let Some((n, line, s)) = current.take() {
        out.sections.push(Section {
            name: n,
            line,
            range: s..text.len(),
        });
    }

    // Nested bullets end before their parent: judge the bullets in reading order.
    bullets.sort_by_key(|b| b.line);
    let has_block = saw_deny_block || saw_allow_block;
    for b in bullets {
        prose_item(b, has_block, &mut out);
    }
    if saw_allow_block {
        out.allow = Some(allow);
    }
    out.deny.sort_by_key(|p| (p.origin == Origin::Prose, p.line));

    if full {
        frontmatter(&meta, agent_skill, &mut out);
        tier(&out.section("Tier Requirement").cloned(), &tier_text, &mut out);
        lint_sections(agent_skill, &mut out);
    }
    out
}

/// A bullet of Scope Rules being read: its text (each code span as [`SPAN`]), its line, and its
/// code spans with their lines.
#[derive(Default)]
struct Bullet {
    text: String,
    line: usize,
    spans: Vec<(String, usize)>,
}

/// Where a code span stood in a bullet's text.
const SPAN: char = '\u{1}';

/// The labels a fenced block of Scope Rules may carry.
const LABELS: [&str; 2] = ["deny", "allow"];

/// A `deny` or `allow` block of Scope Rules being read.
struct Block {
    allow: bool,
    /// The line of the opening fence.
    opened: usize,
    /// Its closing fence was found (an unclosed block is an error and holds no patterns).
    closed: bool,
    body: String,
}

impl Block {
    fn label(&self) -> &'static str {
        if self.allow { "allow" } else { "deny" }
    }
}

/// A fenced block's last line is a closing fence: the fence character of the opening, at least
/// as many of it, and nothing else (CommonMark 4.5). Without one the block runs to the end of
/// the document, and everything after the opening would be read as patterns.
fn fence_closed(element: &str) -> bool {
    let mut lines = element.trim_end_matches(['\n', '\r']).lines();
    let Some(open) = lines.next().map(str::trim_start) else {
        return false;
    };
    let Some(c) = open.chars().next().filter(|c| matches!(c, '`' | '~')) else {
        return false;
    };
    let n = open.chars().take_while(|x| *x == c).count();
    lines.next_back().is_some_and(|last| {
        let last = last.trim();
        last.chars().count() >= n && last.chars().all(|x| x == c)
    })
}

/// A code block: inside Scope Rules, a `deny` or `allow` block to read; anything else there (an
/// unclosed block, another label, an indented block) is an error, as is a `deny` or `allow`
/// block outside Scope Rules, because a rule the author wrote would silently not apply.
fn code_block(text: &str, kind: &CodeBlockKind, range: Range<usize>, in_scope: bool, findings: &mut Vec<Finding>) -> Option<Block> {
    let line = line_of(text, range.start);
    let label = match kind {
        CodeBlockKind::Fenced(info) => info.split_whitespace().next().unwrap_or("").to_string(),
        CodeBlockKind::Indented => {
            if in_scope {
                findings.push(Finding::error(format!(
                    "line {line}: an indented code block in Scope Rules is not read as rules; put path patterns in a ```deny (or ```allow) block"
                )));
            }
            return None;
        }
    };
    let known = LABELS.contains(&label.as_str());
    if !in_scope {
        if known {
            findings.push(Finding::error(format!(
                "line {line}: a ```{label} block outside `## Scope Rules` is not enforced; move it under the `## Scope Rules` heading"
            )));
        }
        return None;
    }
    if !known {
        let what = if label.is_empty() {
            "a fenced block without a label".to_string()
        } else {
            format!("a ```{label} block")
        };
        findings.push(Finding::error(format!(
            "line {line}: {what} in Scope Rules is neither `deny` nor `allow`{}, so the gate cannot enforce it; label it ```deny or ```allow, or move it out of Scope Rules",
            crate::suggest::did_you_mean(&label, LABELS)
        )));
        return None;
    }
    let closed = fence_closed(text.get(range).unwrap_or(""));
    if !closed {
        findings.push(Finding::error(format!(
            "line {line}: the ```{label} block opened here is never closed, so the rest of the file would be read as its patterns; add a line ``` after its last pattern"
        )));
    }
    Some(Block {
        allow: label == "allow",
        opened: line,
        closed,
        body: String::new(),
    })
}

fn block_patterns(b: &Block, findings: &mut Vec<Finding>) -> Vec<Pattern> {
    let mut out = Vec::new();
    let first_line = b.opened + 1;
    // Another fence inside the block: this block was not closed where its author meant, and
    // what follows its patterns (prose, the next block) was read into it. That is the error to
    // report; the lines after it are its consequence.
    if let Some((i, line)) = b
        .body
        .lines()
        .map(str::trim)
        .enumerate()
        .find(|(_, l)| l.starts_with("```") || l.starts_with("~~~"))
    {
        findings.push(Finding::error(format!(
            "line {}: {line} is inside the ```{} block opened at line {}, which was not closed before it; add a line ``` after its last pattern",
            first_line + i,
            b.label(),
            b.opened
        )));
        return out;
    }
    for (i, raw) in b.body.lines().enumerate() {
        let line = raw.trim();
        let at = first_line + i;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(why) = not_a_pattern(line) {
            findings.push(Finding::error(format!(
                "line {at}: `{line}` in the ```{} block opened at line {} is not a pattern ({why}); a block holds one gitignore pattern per line: close it with ``` before prose, or make the line a `# comment`",
                b.label(),
                b.opened
            )));
            continue;
        }
        if line.starts_with('!') {
            findings.push(Finding::warn(format!(
                "line {at}: `{line}` negates a pattern; negation could only remove a deny, so it is ignored"
            )));
            continue;
        }
        out.push(Pattern {
            text: line.to_string(),
            origin: Origin::Block,
            line: at,
        });
    }
    out
}

/// Why a line of a block cannot be a gitignore pattern as written: prose, markup, a URL.
fn not_a_pattern(line: &str) -> Option<&'static str> {
    let unescaped_space = line.char_indices().any(|(i, c)| c.is_whitespace() && !line[..i].ends_with('\\'));
    if unescaped_space {
        Some("it holds a space; escape a space in a file name as `\\ `")
    } else if line.contains('`') {
        Some("it holds a backtick")
    } else if line.contains("://") {
        Some("it is a URL")
    } else if line.chars().any(char::is_control) {
        Some("it holds a control character")
    } else {
        None
    }
}

/// What an inline code span in a Scope Rules bullet is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Span {
    /// A path pattern.
    Pattern,
    /// Not a path at all (a command, a keyword, a label, a URL): the bullet is about something
    /// the gate does not judge by path.
    NotAPath,
    /// Shaped like a path, but not one a pattern can match as written: the reason.
    Broken(&'static str),
}

/// Judge an inline code span of a Scope Rules bullet. A path pattern is one word of path
/// characters with a slash, a dot or a glob (`ie.yaml`, `**/inventory/*.yaml`, `wireguard/`), or
/// a capitalised file name (`Caddyfile`). A word shaped like a path that a pattern cannot match
/// as written (`$HOME/.ssh/`, `~/.kube/config`, `<repo>/ci.yml`, `../secrets/`) is broken.
/// Anything else (`docker rm`, `INSERT`, `deploy`, `--force`, a URL) is not a path: upstream
/// skills put rules about actions in the same bullets.
pub fn classify_span(s: &str) -> Span {
    if s.is_empty() || s.chars().any(char::is_whitespace) || s.starts_with('-') || s.contains("://") || s.len() > 4096 {
        return Span::NotAPath;
    }
    let path_char = |c: char| c.is_ascii_alphanumeric() || "._-/*?[]{}!+@^,".contains(c);
    let shaped = s.contains(['/', '*', '?', '[']) || s.contains('.');
    if !shaped {
        let mut chars = s.chars();
        let file_name = chars.next().is_some_and(|c| c.is_ascii_uppercase()) && s.len() > 3 && chars.all(|c| c.is_ascii_lowercase());
        return if file_name { Span::Pattern } else { Span::NotAPath };
    }
    if s.contains('$') {
        return Span::Broken("it names a variable, which the gate does not expand");
    }
    if s.starts_with('~') {
        return Span::Broken("`~` is not expanded: a pattern is relative to the repository root");
    }
    if s.contains(['<', '>']) {
        return Span::Broken("it holds a placeholder");
    }
    if s.split('/').any(|c| c == "..") {
        return Span::Broken("`..` climbs out of the repository, where no changed file can be");
    }
    if !s.chars().all(path_char) {
        return Span::Broken("it holds a character a path pattern here cannot hold (quotes, `\\`, `;`, `|`, `&`, `=`, `%`, `:`)");
    }
    Span::Pattern
}

/// Whether an inline code span in a Scope Rules bullet is a path pattern.
pub fn looks_like_path(s: &str) -> bool {
    classify_span(s) == Span::Pattern
}

/// One bullet of Scope Rules. Without a block in the section (prose is authoritative), its code
/// spans that are path patterns become deny patterns, a span shaped like a path that cannot be
/// one is an error, and each item of the bullet that names no path ("DNS records", "password
/// files") is reported as something the gate cannot enforce. With a block, bullets are advice:
/// a pattern the block lacks is reported.
fn prose_item(Bullet { text, line, spans }: Bullet, has_block: bool, out: &mut Parsed) {
    let mut found = false;
    for (span, span_line) in &spans {
        let s = span.trim();
        match classify_span(s) {
            Span::Pattern => {
                found = true;
                if s.starts_with('!') {
                    continue;
                }
                if has_block {
                    out.findings.push(Finding::warn(format!(
                        "line {span_line}: `{s}` in a bullet is not enforced: a ```deny or ```allow block in Scope Rules makes bullets advice; add it to the ```deny block if it is a rule"
                    )));
                } else {
                    out.deny.push(Pattern {
                        text: s.to_string(),
                        origin: Origin::Prose,
                        line: *span_line,
                    });
                }
            }
            Span::Broken(why) if !has_block => {
                found = true;
                out.findings.push(Finding::error(format!(
                    "line {span_line}: `{s}` in Scope Rules cannot be a path pattern ({why}); write the path relative to the repository root, as gitignore does (`secrets/`, `**/*.pem`)"
                )));
            }
            Span::Broken(_) | Span::NotAPath => {
                out.findings.push(Finding::warn(format!(
                    "line {span_line}: `{s}` in Scope Rules is not a path pattern; it is not enforced by the gate"
                )));
            }
        }
    }
    if has_block {
        return;
    }
    let excerpt = |t: &str| -> String {
        let t: String = t.replace(SPAN, "…").split_whitespace().collect::<Vec<_>>().join(" ");
        t.chars().take(80).collect()
    };
    if !found {
        out.findings.push(Finding::warn(format!(
            "line {line}: rule \"{}\" names no path; the gate cannot enforce it (write paths in a ```deny block)",
            excerpt(&text)
        )));
        return;
    }
    for item in unenforced_items(&text) {
        out.findings.push(Finding::warn(format!(
            "line {line}: \"{}\" names no path; the gate cannot enforce it (name the files it means as patterns, or in a ```deny block)",
            excerpt(&item)
        )));
    }
}

/// The items of a bullet that names some paths which name none themselves: the bullet's text
/// after its label (`**Secrets**:`), cut at commas and semicolons outside parentheses, and the
/// items holding no code span (`DNS records`, `password files`).
fn unenforced_items(text: &str) -> Vec<String> {
    let body = match (text.find(':'), text.find(SPAN)) {
        (Some(colon), Some(span)) if colon < span => &text[colon + 1..],
        _ => text,
    };
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for c in body.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ',' | ';' if depth == 0 => {
                items.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    items.push(cur);
    items
        .into_iter()
        .map(|i| {
            let i = i.trim().trim_end_matches('.').trim();
            let i = i.strip_prefix("or ").or_else(|| i.strip_prefix("and ")).unwrap_or(i);
            i.trim().to_string()
        })
        .filter(|i| {
            !i.contains(SPAN)
                && i.chars().any(char::is_alphanumeric)
                && !matches!(i.to_ascii_lowercase().as_str(), "etc" | "and so on" | "or similar")
        })
        .collect()
}

fn frontmatter(meta: &str, agent_skill: bool, out: &mut Parsed) {
    if meta.is_empty() {
        if agent_skill {
            out.findings.push(Finding::error(
                "SKILL.md has no YAML frontmatter; it needs `name` and `description` between `---` lines",
            ));
        }
        return;
    }
    if meta.len() > MAX_FRONTMATTER {
        out.findings.push(Finding::error(format!(
            "frontmatter is {} bytes, over the {} byte limit; it is not parsed",
            meta.len(),
            MAX_FRONTMATTER
        )));
        return;
    }
    let fm: Frontmatter = match serde_yaml_ng::from_str(meta) {
        Ok(f) => f,
        Err(e) => {
            out.findings.push(Finding::error(format!("frontmatter is not valid YAML: {e}")));
            return;
        }
    };
    for key in fm.other.keys() {
        if !KNOWN_FRONTMATTER.contains(&key.as_str()) {
            out.findings.push(Finding::warn(format!(
                "frontmatter key `{key}` is not part of the Agent Skills format"
            )));
        }
    }
    if agent_skill {
        match fm.name.as_deref() {
            None => out.findings.push(Finding::error("frontmatter has no `name`")),
            Some(n) if !readable_name(n) => out.findings.push(Finding::error(format!(
                "frontmatter name `{}` must be 1-{MAX_NAME} characters on one line",
                n.escape_debug()
            ))),
            // A human-readable name ("PDF Processing") is a name (the Skills MCP format); the
            // Agent Skills form is only recommended.
            Some(n) if !valid_name(n) => out.findings.push(Finding::warn(format!(
                "frontmatter name `{n}` is not in the Agent Skills form (1-{MAX_NAME} characters of a-z, 0-9 and -)"
            ))),
            _ => {}
        }
        match fm.description.as_deref() {
            None => out.findings.push(Finding::error("frontmatter has no `description`")),
            Some(d) if d.trim().is_empty() || d.chars().count() > 1024 => out
                .findings
                .push(Finding::error("frontmatter description must be 1-1024 characters")),
            _ => {}
        }
    }
    out.frontmatter = Some(fm);
}

/// The longest frontmatter `name`, in characters.
pub const MAX_NAME: usize = 64;

/// A skill name in the Agent Skills format: 1-64 characters of `[a-z0-9-]`.
pub fn valid_name(n: &str) -> bool {
    !n.is_empty() && n.len() <= MAX_NAME && n.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// A name a person wrote (the Skills MCP format: "PDF Processing", "My_Tool"): 1-64 characters,
/// not blank, and no control character (so no line break).
pub fn readable_name(n: &str) -> bool {
    !n.trim().is_empty() && n.chars().count() <= MAX_NAME && !n.chars().any(char::is_control)
}

/// "Tier 2 minimum", "**Minimum tier**: Tier 3": the first `tier` followed by 1, 2 or 3.
fn tier(section: &Option<Section>, words: &str, out: &mut Parsed) {
    let Some(section) = section else {
        return;
    };
    let found = first_tier(words);
    match found {
        Some(t) => {
            out.tier = Some(TierRequirement {
                tier: t,
                line: section.line,
            })
        }
        None => out.findings.push(Finding::error(format!(
            "line {}: Tier Requirement names no tier; write \"Tier 1\", \"Tier 2\" or \"Tier 3\"",
            section.line
        ))),
    }
}

/// The first word `tier` (any case, not inside a longer word) followed, after spaces, colons
/// and emphasis marks only, by a lone 1, 2 or 3.
fn first_tier(text: &str) -> Option<u8> {
    let lower = text.to_ascii_lowercase();
    let b = lower.as_bytes();
    let mut from = 0;
    while let Some(at) = lower[from..].find("tier").map(|i| i + from) {
        from = at + 4;
        if at > 0 && b[at - 1].is_ascii_alphanumeric() {
            continue;
        }
        let mut j = at + 4;
        while j < b.len() && matches!(b[j], b' ' | b'\t' | b'\n' | b':' | b'*' | b'_') {
            j += 1;
        }
        if j < b.len() && matches!(b[j], b'1'..=b'3') && !b.get(j + 1).is_some_and(|c| c.is_ascii_alphanumeric()) {
            return Some(b[j] - b'0');
        }
    }
    None
}

fn lint_sections(agent_skill: bool, out: &mut Parsed) {
    match &out.title {
        None => out.findings.push(Finding::warn("no `# ` title")),
        Some(t) if !agent_skill && !t.to_ascii_lowercase().starts_with("skill:") => out
            .findings
            .push(Finding::warn(format!("title `{t}` does not start with `Skill:`"))),
        _ => {}
    }
    for req in REQUIRED {
        if out.section(req).is_none() {
            out.findings.push(Finding::warn(format!("required section `## {req}` is missing")));
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for s in &out.sections {
        let name = s.name.trim().trim_end_matches(':').trim();
        if seen.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            out.findings
                .push(Finding::warn(format!("line {}: section `## {name}` appears twice", s.line)));
        }
        seen.push(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn texts(p: &[Pattern]) -> Vec<&str> {
        p.iter().map(|p| p.text.as_str()).collect()
    }

    /// The upstream Claude Ops git-pr skill's Scope Rules, verbatim in form.
    const UPSTREAM_GIT_PR: &str = "# Skill: Git Pull Request Operations

## Purpose

Create pull requests.

## Tier Requirement

Tier 2 minimum. Creating PRs modifies remote repository state. Tier 1 agents MUST NOT execute this skill.

## Tool Discovery

1. **CLI**: `gh` — check with `which gh`

## Execution

Run `gh pr create`.

## Validation

Check the PR exists.

## Scope Rules

This skill MUST NOT create PRs that modify any of the following files or resources:

- **Inventory files**: `ie.yaml`, `vms.yaml`, or any file matching `**/inventory/*.yaml`
- **Network configuration**: Caddy configs (`Caddyfile`, `caddy/*.json`), WireGuard configs (`wg*.conf`, `wireguard/`), DNS records
- **Secrets and credentials**: `.env` files, `**/secrets/**`, `**/credentials/**`, `*.key`, `*.pem`, `*.crt`, password files
- **Claude Ops runbook and prompts**: `CLAUDE.md`, `prompts/*.md`, `entrypoint.sh`, `checks/*.md`, `playbooks/*.md`
- **Persistent data volumes**: anything under `/volumes/`
- DNS records at the registrar

If the agent detects that a proposed PR would modify any denied path, it MUST:
1. Refuse the operation.
2. Report: `[skill:git-pr] SCOPE VIOLATION: Refusing to create PR modifying <path> — matches denied pattern <rule>`

### Branch Naming Convention

PRs SHOULD use the branch naming pattern: `claude-ops/<type>/<name>` (e.g., `claude-ops/fix/shamrock-config`).

## Dry-Run Behavior

When `CLAUDEOPS_DRY_RUN=true`: do nothing.
";

    /// HTML entities in a heading are decoded as CommonMark says (pulldown-cmark's entity table,
    /// packed in vendor/): the first and last of the table, one whose value is two characters,
    /// and a name that is no entity kept as written; a section heading written with one names
    /// the section it decodes to.
    #[test]
    fn entities_in_headings_are_decoded_and_name_their_section() {
        let p = parse(
            "# Skill&colon; &AElig;&amp;&NotEqualTilde;&zwnj;&notanentity;\n\n## Scope Rules&colon;\n\n```deny\nsecrets/**\n```\n",
            false,
        );
        assert_eq!(p.title.as_deref(), Some("Skill: \u{c6}&\u{2242}\u{338}\u{200c}&notanentity;"));
        assert_eq!(texts(&p.deny), ["secrets/**"]);
    }

    #[test]
    fn upstream_prose_scope_rules_become_the_expected_deny_patterns() {
        let p = parse(UPSTREAM_GIT_PR, false);
        assert_eq!(
            texts(&p.deny),
            vec![
                "ie.yaml",
                "vms.yaml",
                "**/inventory/*.yaml",
                "Caddyfile",
                "caddy/*.json",
                "wg*.conf",
                "wireguard/",
                ".env",
                "**/secrets/**",
                "**/credentials/**",
                "*.key",
                "*.pem",
                "*.crt",
                "CLAUDE.md",
                "prompts/*.md",
                "entrypoint.sh",
                "checks/*.md",
                "playbooks/*.md",
                "/volumes/",
            ]
        );
        assert!(p.deny.iter().all(|d| d.origin == Origin::Prose));
        assert_eq!(p.allow, None);
        assert_eq!(p.tier.map(|t| t.tier), Some(2));
        assert_eq!(p.title.as_deref(), Some("Skill: Git Pull Request Operations"));
        // The bullet with no path is reported; the numbered report line and the branch
        // placeholder (not in a bullet) are neither patterns nor findings about bullets.
        let msgs: Vec<&str> = p.findings.iter().map(|f| f.message.as_str()).collect();
        assert!(msgs.iter().any(|m| m.contains("DNS records at the registrar")), "{msgs:?}");
        // So are the items of a bullet that name no path among items that do (DESIGN §7).
        for item in ["\"DNS records\" names no path", "\"password files\" names no path"] {
            assert!(msgs.iter().any(|m| m.contains(item)), "{item} in {msgs:?}");
        }
        assert!(!msgs.iter().any(|m| m.contains("Caddy configs")), "{msgs:?}");
        assert!(!msgs.iter().any(|m| m.contains("SCOPE VIOLATION")), "{msgs:?}");
        assert!(p.findings.iter().all(|f| f.level == Level::Warning), "{msgs:?}");
        let names: Vec<&str> = p.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "Purpose",
                "Tier Requirement",
                "Tool Discovery",
                "Execution",
                "Validation",
                "Scope Rules",
                "Dry-Run Behavior"
            ]
        );
    }

    #[test]
    fn a_fenced_block_is_authoritative_and_prose_becomes_advisory() {
        let text = "# Skill: x\n\n## Scope Rules\n\n- never `ie.yaml`\n\n```deny\n# comment\n*.pem\n\n!keep.pem\nsecrets/\n```\n\n```allow\nchecks/*.md\n```\n";
        let p = parse(text, false);
        assert_eq!(texts(&p.deny), vec!["*.pem", "secrets/"]);
        assert_eq!(p.deny[0].line, 9);
        assert_eq!(p.allow.as_ref().map(|a| texts(a)), Some(vec!["checks/*.md"]));
        assert!(p.findings.iter().any(|f| f.message.contains("`!keep.pem` negates")));
    }

    #[test]
    fn blocks_outside_scope_rules_and_ordered_lists_are_not_rules() {
        let text = "# Skill: x\n\n## Execution\n\n```deny\nall.yaml\n```\n\n- `outside.yaml`\n\n## Scope Rules\n\n1. `numbered.yaml`\n- `bullet.yaml`\n  - nested `deep/*.yaml`\n";
        let p = parse(text, false);
        assert_eq!(texts(&p.deny), vec!["bullet.yaml", "deep/*.yaml"]);
        // The block under another heading is an error: its author meant it as a rule.
        assert_eq!(
            errors(&p),
            vec!["line 5: a ```deny block outside `## Scope Rules` is not enforced; move it under the `## Scope Rules` heading"]
        );
    }

    fn errors(p: &Parsed) -> Vec<&str> {
        p.findings
            .iter()
            .filter(|f| f.level == Level::Error)
            .map(|f| f.message.as_str())
            .collect()
    }

    const SCOPE: &str = "# Skill: x\n\n## Scope Rules\n\n";

    #[test]
    fn an_unclosed_deny_block_is_an_error_and_does_not_swallow_the_allow_list() {
        // The closing fence of the deny block deleted: the allow block's opening line and its
        // patterns would be read as deny patterns, and the allow-list would disappear.
        let text = format!("{SCOPE}```deny\n*.yaml\nDockerfile*\n\n```allow\nchecks/*.md\n```\n\n## Dry-Run Behavior\n\nNothing.\n");
        let p = parse(&text, false);
        assert_eq!(
            errors(&p),
            vec![
                "line 9: ```allow is inside the ```deny block opened at line 5, which was not closed before it; add a line ``` after its last pattern"
            ]
        );
        assert_eq!(p.allow, None);
        // Truly unclosed: it would run to the end of the file.
        let text = format!("{SCOPE}```deny\n*.yaml\n\n## Dry-Run Behavior\n\nWhen dry-run is on, nothing runs.\n");
        let p = parse(&text, false);
        assert_eq!(
            errors(&p),
            vec![
                "line 5: the ```deny block opened here is never closed, so the rest of the file would be read as its patterns; add a line ``` after its last pattern"
            ]
        );
        assert_eq!(texts(&p.deny), Vec::<&str>::new());
        // A longer closing fence closes it; a shorter one does not.
        assert!(errors(&parse(&format!("{SCOPE}````deny\n*.pem\n`````\n"), false)).is_empty());
        assert_eq!(errors(&parse(&format!("{SCOPE}````deny\n*.pem\n```\n"), false)).len(), 1);
        assert!(errors(&parse(&format!("{SCOPE}~~~allow\nchecks/*.md\n~~~\n"), false)).is_empty());
    }

    #[test]
    fn an_unknown_fence_label_in_scope_rules_is_an_error_with_a_suggestion() {
        let p = parse(&format!("{SCOPE}```dney\n*.pem\n```\n"), false);
        assert_eq!(
            errors(&p),
            vec![
                "line 5: a ```dney block in Scope Rules is neither `deny` nor `allow` (did you mean `deny`?), so the gate cannot enforce it; label it ```deny or ```allow, or move it out of Scope Rules"
            ]
        );
        assert!(p.deny.is_empty());
        let p = parse(&format!("{SCOPE}```\n*.pem\n```\n\n    indented.yaml\n"), false);
        let e = errors(&p);
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(
            e[0].starts_with("line 5: a fenced block without a label in Scope Rules is neither"),
            "{e:?}"
        );
        assert!(
            e[1].starts_with("line 9: an indented code block in Scope Rules is not read as rules"),
            "{e:?}"
        );
    }

    #[test]
    fn prose_inside_a_block_is_an_error_naming_its_line() {
        let p = parse(
            &format!("{SCOPE}```deny\n# comments are fine\n*.pem\nNever change secrets\nmy\\ file.txt\nhttps://example.com/x\n```\n"),
            false,
        );
        let e = errors(&p);
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(
            e[0].starts_with("line 8: `Never change secrets` in the ```deny block opened at line 5 is not a pattern (it holds a space"),
            "{e:?}"
        );
        assert!(
            e[1].starts_with("line 10: `https://example.com/x` in the ```deny block opened at line 5 is not a pattern (it is a URL)"),
            "{e:?}"
        );
        assert_eq!(texts(&p.deny), vec!["*.pem", "my\\ file.txt"]);
    }

    #[test]
    fn a_bullet_span_shaped_like_a_path_that_cannot_be_a_pattern_is_an_error() {
        let p = parse(
            &format!(
                "{SCOPE}- `$HOME/.ssh/*`, `~/.kube/config`\n- `<repo>/ci.yml` and `../secrets/`\n- never run `docker rm -f`, `INSERT` or `deploy`\n"
            ),
            false,
        );
        let e = errors(&p);
        assert_eq!(e.len(), 4, "{e:?}");
        assert!(
            e[0].starts_with("line 5: `$HOME/.ssh/*` in Scope Rules cannot be a path pattern (it names a variable"),
            "{e:?}"
        );
        assert!(e[1].contains("`~/.kube/config`") && e[1].contains("`~` is not expanded"), "{e:?}");
        assert!(e[2].contains("`<repo>/ci.yml`") && e[2].contains("placeholder"), "{e:?}");
        assert!(e[3].contains("`../secrets/`") && e[3].contains("`..` climbs out"), "{e:?}");
        // Commands and keywords are about actions, not paths: reported, not errors.
        let warned: Vec<&str> = p
            .findings
            .iter()
            .filter(|f| f.level == Level::Warning)
            .map(|f| f.message.as_str())
            .collect();
        for w in ["`docker rm -f`", "`INSERT`", "`deploy`"] {
            assert!(
                warned.iter().any(|m| m.contains(w) && m.contains("not a path pattern")),
                "{w}: {warned:?}"
            );
        }
        // With a block, bullets are advice: nothing in them is an error, and a pattern the block
        // lacks is pointed out.
        let p = parse(&format!("{SCOPE}- `$HOME/x/*` and `extra.yaml`\n\n```deny\n*.pem\n```\n"), false);
        assert!(errors(&p).is_empty(), "{:?}", p.findings);
        assert!(
            p.findings
                .iter()
                .any(|f| f.message.contains("`extra.yaml` in a bullet is not enforced"))
        );
        assert_eq!(texts(&p.deny), vec!["*.pem"]);
    }

    #[test]
    fn commands_placeholders_and_urls_are_not_paths() {
        for s in [
            "docker rm",
            "<path>",
            "$HOME/x",
            "https://x/y",
            "--force",
            "docker",
            "README",
            "a b",
        ] {
            assert!(!looks_like_path(s), "{s}");
        }
        for s in [
            "ie.yaml",
            "vms-*.yaml",
            "**/inventory/*.yaml",
            "wireguard/",
            "/volumes/",
            ".env",
            "Dockerfile.*",
            "Caddyfile",
        ] {
            assert!(looks_like_path(s), "{s}");
        }
    }

    #[test]
    fn the_tier_requirement_is_read_from_its_forms() {
        for (text, want) in [
            ("Tier 2 minimum.", Some(2)),
            ("- **Minimum tier**: Tier 3\n- **Reason**: x", Some(3)),
            ("Tier 1 (read) / Tier 2 (write)", Some(1)),
            ("TIER 2", Some(2)),
            ("Tier <1|2|3>", None),
            ("Needs an operator.", None),
        ] {
            let p = parse(&format!("# Skill: x\n\n## Tier Requirement\n\n{text}\n"), false);
            assert_eq!(p.tier.map(|t| t.tier), want, "{text}");
            assert_eq!(p.findings.iter().any(|f| f.level == Level::Error), want.is_none(), "{text}");
        }
        assert_eq!(parse("# Skill: x\n\n## Purpose\n\nx\n", false).tier, None);
    }

    #[test]
    fn agent_skills_frontmatter_is_checked() {
        let ok = parse(
            "---\nname: my-skill\ndescription: Does things.\nlicense: MIT\n---\n# My skill\n",
            true,
        );
        assert!(ok.findings.iter().all(|f| f.level == Level::Warning), "{:?}", ok.findings);
        assert_eq!(ok.frontmatter.as_ref().and_then(|f| f.name.as_deref()), Some("my-skill"));
        assert!(ok.body.start > 0);
        let long = format!("---\nname: {}\ndescription: d\n---\n", "n".repeat(65));
        for (text, want) in [
            ("# x\n", "no YAML frontmatter"),
            ("---\ndescription: d\n---\n# x\n", "has no `name`"),
            (
                "---\nname: \"Bad\\nName\"\ndescription: d\n---\n",
                "must be 1-64 characters on one line",
            ),
            (long.as_str(), "must be 1-64"),
            ("---\nname: ok\n---\n", "no `description`"),
            ("---\nname: [unclosed\n---\n", "not valid YAML"),
        ] {
            let p = parse(text, true);
            assert!(
                p.findings.iter().any(|f| f.level == Level::Error && f.message.contains(want)),
                "{text:?}: {:?}",
                p.findings
            );
        }
        // Human-readable names (the Skills MCP format) are names; only the Agent Skills form
        // is recommended.
        let e64 = "é".repeat(64);
        for name in ["PDF Processing", "My_Tool", e64.as_str()] {
            let p = parse(&format!("---\nname: {name}\ndescription: d\n---\n"), true);
            assert!(p.findings.iter().all(|f| f.level == Level::Warning), "{name}: {:?}", p.findings);
            assert!(
                p.findings.iter().any(|f| f.message.contains("not in the Agent Skills form")),
                "{name}"
            );
        }
        let huge = format!("---\nname: x\ndescription: {}\n---\n", "a".repeat(MAX_FRONTMATTER));
        assert!(parse(&huge, true).findings.iter().any(|f| f.message.contains("byte limit")));
    }

    #[test]
    fn missing_required_sections_are_reported() {
        let p = parse("# Skill: x\n\n## Purpose\n\nx\n", false);
        let missing: Vec<&str> = p
            .findings
            .iter()
            .filter(|f| f.message.contains("is missing"))
            .map(|f| f.message.as_str())
            .collect();
        assert_eq!(missing.len(), 3, "{missing:?}");
    }
}
