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
    // The block being collected inside Scope Rules: `deny`/`allow`, its text, its first line.
    let mut block: Option<(bool, String, usize)> = None;
    // One entry per open list: ordered?
    let mut lists: Vec<bool> = Vec::new();
    // The bullets of Scope Rules being collected.
    let mut items: Vec<Bullet> = Vec::new();
    let mut tier_text = String::new();
    let mut saw_allow_block = false;
    let mut allow = Vec::new();

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
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) if in_scope => match info.split_whitespace().next() {
                Some("deny") => block = Some((false, String::new(), line_of(text, range.start) + 1)),
                Some("allow") => block = Some((true, String::new(), line_of(text, range.start) + 1)),
                _ => {}
            },
            Event::Text(t) if block.is_some() => {
                if let Some(b) = block.as_mut() {
                    b.1.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((is_allow, body, first)) = block.take() {
                    let mut patterns = block_patterns(&body, first, &mut out.findings);
                    if is_allow {
                        saw_allow_block = true;
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
                    prose_item(item, &mut out);
                }
            }
            Event::Code(t) if in_scope && !items.is_empty() && lists.last() == Some(&false) => {
                let line = line_of(text, range.start);
                if let Some(item) = items.last_mut() {
                    item.text.push_str(&t);
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

    // Nested bullets end before their parent: put prose patterns back in reading order.
    out.deny.sort_by_key(|p| (p.origin == Origin::Prose, p.line));
    if saw_allow_block {
        out.allow = Some(allow);
    }
    // A prose deny of a pattern the authoritative block also names is not news; a block makes
    // prose advisory, so prose candidates are dropped when any block exists.
    if out.deny.iter().any(|p| p.origin == Origin::Block) || saw_allow_block {
        out.deny.retain(|p| p.origin == Origin::Block);
    }

    if full {
        frontmatter(&meta, agent_skill, &mut out);
        tier(&out.section("Tier Requirement").cloned(), &tier_text, &mut out);
        lint_sections(agent_skill, &mut out);
    }
    out
}

/// A bullet of Scope Rules being read: its text, its line, and its code spans with their lines.
#[derive(Default)]
struct Bullet {
    text: String,
    line: usize,
    spans: Vec<(String, usize)>,
}

fn block_patterns(body: &str, first_line: usize, findings: &mut Vec<Finding>) -> Vec<Pattern> {
    let mut out = Vec::new();
    for (i, raw) in body.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('!') {
            findings.push(Finding::warn(format!(
                "line {}: `{line}` negates a pattern; negation could only remove a deny, so it is ignored",
                first_line + i
            )));
            continue;
        }
        out.push(Pattern {
            text: line.to_string(),
            origin: Origin::Block,
            line: first_line + i,
        });
    }
    out
}

/// One bullet of Scope Rules: its code spans that look like paths become deny patterns; a
/// bullet with none is prose the gate cannot enforce, and is reported.
fn prose_item(Bullet { text, line, spans }: Bullet, out: &mut Parsed) {
    let mut found = false;
    for (span, span_line) in spans {
        let s = span.trim();
        if looks_like_path(s) {
            found = true;
            if s.starts_with('!') {
                continue;
            }
            out.deny.push(Pattern {
                text: s.to_string(),
                origin: Origin::Prose,
                line: span_line,
            });
        } else {
            out.findings.push(Finding::warn(format!(
                "line {span_line}: `{s}` in Scope Rules is not a path pattern; it is not enforced by the gate"
            )));
        }
    }
    if !found {
        let excerpt: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let excerpt: String = excerpt.chars().take(80).collect();
        out.findings.push(Finding::warn(format!(
            "line {line}: rule \"{excerpt}\" names no path; the gate cannot enforce it (write paths in a ```deny block)"
        )));
    }
}

/// Whether an inline code span in a Scope Rules bullet is a path pattern: one word of path
/// characters that has a slash, a dot or a glob, or is a capitalised file name such as
/// `Caddyfile`. Placeholders (`<name>`), commands (`docker rm`), variables and URLs are not.
pub fn looks_like_path(s: &str) -> bool {
    if s.is_empty() || s.len() > 4096 || s.contains("://") || s.starts_with('-') {
        return false;
    }
    let ok = |c: char| c.is_ascii_alphanumeric() || "._-/*?[]{}!+@~^,".contains(c);
    if !s.chars().all(ok) {
        return false;
    }
    if s.contains(['/', '.', '*', '?', '[']) {
        return true;
    }
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase()) && s.len() > 3 && chars.all(|c| c.is_ascii_lowercase())
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
            Some(n) if !valid_name(n) => out.findings.push(Finding::error(format!(
                "frontmatter name `{n}` must be 1-64 characters of a-z, 0-9 and -"
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

/// A skill name in the Agent Skills format: 1-64 characters of `[a-z0-9-]`.
pub fn valid_name(n: &str) -> bool {
    !n.is_empty() && n.len() <= 64 && n.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
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
        for (text, want) in [
            ("# x\n", "no YAML frontmatter"),
            ("---\ndescription: d\n---\n# x\n", "has no `name`"),
            ("---\nname: Bad_Name\ndescription: d\n---\n", "must be 1-64"),
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
