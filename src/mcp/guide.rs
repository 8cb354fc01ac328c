//! The text an agent reads about skills, to the letter of the two contracts `tiershim mcp`
//! implements, with tiershim's tiers added where the contracts leave room:
//!
//! - the Skills MCP usage guide (the `init-skills` prompt, the server's `instructions`, and
//!   `tiershim instructions`, one text), and the descriptions of `list_skills` and `get_skill`;
//! - the universal-skills `skill` tool contract (v1.0.0): its title, its input's description,
//!   its description template with `<available_skills>`, its success header and its not-found
//!   text.
//!
//! Pure: served skills in, text out.

use crate::skill::served::{Entry, Served, Session};

/// The `skill` tool's title.
pub const SKILL_TITLE: &str = "Load Skill";
/// The description of the `skill` tool's `name` argument.
pub const SKILL_NAME_DESCRIPTION: &str = "Name of the skill to load (case-insensitive)";
/// What the `skill` tool answers for an empty name.
pub const SKILL_NAME_EMPTY: &str = "Skill name cannot be empty";

/// `list_skills`, as the Skills MCP spec describes it.
pub const LIST_SKILLS_DESCRIPTION: &str = "List all available skills with their names and descriptions. Skills are \
specialized packages of instructions, scripts, and resources for specific tasks. Use this to discover what skills are available.";
/// `get_skill`, as the Skills MCP spec describes it.
pub const GET_SKILL_DESCRIPTION: &str = "Get the full instructions (SKILL.md content) for a specific skill. Returns the \
skill content along with the absolute path to the skill file, enabling you to resolve and read any referenced resources \
(references/, scripts/, assets/) using your own file-reading tools.";
/// The description of `get_skill`'s `id` argument.
pub const GET_SKILL_ID_DESCRIPTION: &str = "The skill identifier (directory name)";

/// The `skill` tool's description up to the list of skills (universal-skills contract v1.0.0).
const SKILL_DESCRIPTION_HEAD: &str = r#"Execute a skill within the main conversation

<skills_instructions>
When users ask you to perform tasks, check if any of the available skills below can help complete the task more effectively. Skills provide specialized capabilities and domain knowledge.

How to use skills:
- Invoke skills using this tool with the skill name only (no arguments)
- When you invoke a skill, you will see <command-message>The "{name}" skill is loading</command-message>
- The skill's prompt will expand and provide detailed instructions on how to complete the task
- Examples:
  - `command: "pdf"` - invoke the pdf skill
  - `command: "xlsx"` - invoke the xlsx skill
  - `command: "ms-office-suite:pdf"` - invoke using fully qualified name

Important:
- Only use skills listed in <available_skills> below
- Do not invoke a skill that is already running
- Do not use this tool for built-in CLI commands (like /help, /clear, etc.)
</skills_instructions>

"#;

/// The last line of the not-found text.
const NOT_FOUND_HINT: &str = "Use the exact skill name (case-insensitive) to load a skill.";

/// XML 1.0 text or attribute content: the five special characters become entities, and
/// characters XML cannot carry at all (C0 controls but tab, newline and carriage return, and
/// U+FFFE/U+FFFF) become U+FFFD, so skill text can never close or forge an element.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Every served skill in `<available_skills>`, in the contract's form (name, description,
/// `project` or `global`); a skill above the session's tier also says the tier it needs, after
/// the contract's elements.
pub fn available_skills_xml(served: &Served, session: &Session) -> String {
    let skills: Vec<String> = served
        .entries
        .iter()
        .map(|e| {
            let mut s = format!(
                "<skill>\n<name>{}</name>\n<description>{}</description>\n<location>{}</location>\n",
                xml_escape(e.skill_name()),
                xml_escape(&e.meta.description),
                e.scope.as_str()
            );
            if let (false, Some(t)) = (e.available(session), e.tier_required) {
                s.push_str(&format!("<requires_tier>{t}</requires_tier>\n<available>false</available>\n"));
            }
            s.push_str("</skill>");
            s
        })
        .collect();
    format!("<available_skills>\n{}\n</available_skills>", skills.join("\n"))
}

/// The `skill` tool's description: the contract's template with every skill.
pub fn skill_tool_description(served: &Served, session: &Session) -> String {
    format!("{SKILL_DESCRIPTION_HEAD}{}", available_skills_xml(served, session))
}

/// One line, whatever a description holds: a newline in it cannot start a line of its own.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `skill` tool's answer for a name it does not know, as the contract writes it.
pub fn not_found(served: &Served, asked: &str) -> String {
    let list: Vec<String> = served
        .entries
        .iter()
        .map(|e| format!("- {}: {}", one_line(e.skill_name()), one_line(&e.meta.description)))
        .collect();
    format!(
        "Skill '{asked}' not found.\n\nAvailable skills:\n{}\n\n{NOT_FOUND_HINT}",
        list.join("\n")
    )
}

/// The `skill` tool's answer: the contract's header, tiershim's tier note when the skill is
/// above the session's tier (after the header, never before it), then the whole file.
pub fn loaded(e: &Entry, session: &Session, text: &str) -> String {
    let base = e
        .base
        .as_ref()
        .map(|b| b.display().to_string())
        .unwrap_or_else(|| "(built into tiershim; it has no files beside it)".into());
    let note = escalation_line(e, session).map(|l| format!("{l}\n\n")).unwrap_or_default();
    format!("Loading: {}\nBase directory: {base}\n\n{note}{text}", e.skill_name())
}

/// The note on a skill loaded above the session's tier.
pub fn escalation_line(e: &Entry, session: &Session) -> Option<String> {
    let t = e.tier_required?;
    (t > session.tier).then(|| {
        format!(
            "ESCALATE: skill {} requires tier {t} and this session is tier {}; the gate will refuse its commands. Read it for reference only, and hand the task to a tier {t} agent or an operator.",
            e.skill_name(),
            session.tier
        )
    })
}

/// The Skills MCP usage guide: its title, its opening (background, not a directive), how the
/// three tools divide the work with the agent, progressive disclosure, the session's tier, and
/// its closing reminder. The list of skills is not in it: the `skill` tool's description
/// carries that list, and `list_skills` returns it, so a client receives it once.
pub fn guide(session: &Session) -> String {
    format!(
        "# Skills MCP - Usage Guide

This is informational guidance about the Skills MCP. Do not take any action based on this message alone. Wait for a specific task or objective before using skills.

## What skills are

A skill is a folder with a `SKILL.md` file: instructions for one kind of task, written down by the people who run this system, often with `references/` to read, `scripts/` to run and `assets/` to use beside it. (This system's own skills may also be single `<name>.md` files.)

## What this server does, and what you do

This server hands out skills and nothing else:

- `list_skills` lists every skill with its id, name and description.
- `get_skill` with an id returns the skill's instructions and the absolute path of its file.
- `skill` with a name loads a skill the way agents with built-in skills do: `Loading: <name>`, `Base directory: <directory>`, then the whole `SKILL.md`. Its own description lists every skill.

Reading the files a skill points to and running its scripts is yours to do, with your own tools: resolve its relative paths against the skill's directory. This server reads no other file and runs nothing.

## When to load a skill

Only the names and descriptions are worth reading up front (progressive disclosure):

1. Look at the list when a task might need specialist knowledge.
2. Load a skill only when its description clearly matches the task or objective at hand, never just in case.
3. Follow its instructions. Read a reference only when the instructions send you to it, and run a script only when the work needs it.
4. Check the result the way the skill says, and report what you did.

## Tiers

This session is tier {tier}. A gate in front of your tools enforces tiers. A skill that requires a higher tier is listed as not available, and loading it shows a note saying so: read it for reference, and hand the task to an agent of that tier or an operator instead of running its commands, which the gate would refuse.

---

**Remember**: This is background information. Use skills only when they clearly align with the task or objective you're working on. Start by calling `list_skills` early in conversations to understand available capabilities.",
        tier = session.tier,
    )
}

/// `tiershim instructions`: the guide inside `<skills-mcp-instructions>` (so it can be appended
/// to an AGENTS.md and found again), or bare with `--no-xml`.
pub fn instructions(session: &Session, xml: bool) -> String {
    if xml {
        format!("<skills-mcp-instructions>\n{}\n</skills-mcp-instructions>\n", guide(session))
    } else {
        format!("{}\n", guide(session))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn xml_special_and_forbidden_characters_are_escaped() {
        assert_eq!(
            xml_escape("a<b>&\"c'</description><x>\u{1}\u{1b}\t\n"),
            "a&lt;b&gt;&amp;&quot;c&apos;&lt;/description&gt;&lt;x&gt;\u{FFFD}\u{FFFD}\t\n"
        );
        assert_eq!(xml_escape("plain — ünïcode"), "plain — ünïcode");
    }

    #[test]
    fn with_no_skills_the_templates_keep_their_shape() {
        let served = Served::default();
        let session = Session::new(Some(1), Some("1"));
        assert!(skill_tool_description(&served, &session).ends_with("</skills_instructions>\n\n<available_skills>\n\n</available_skills>"));
        assert_eq!(
            not_found(&served, "x"),
            "Skill 'x' not found.\n\nAvailable skills:\n\n\nUse the exact skill name (case-insensitive) to load a skill."
        );
        let g = guide(&session);
        assert!(g.starts_with("# Skills MCP - Usage Guide\n\nThis is informational guidance"), "{g}");
        assert!(g.ends_with("to understand available capabilities."), "{g}");
        assert_eq!(
            instructions(&session, true),
            format!("<skills-mcp-instructions>\n{g}\n</skills-mcp-instructions>\n")
        );
        assert_eq!(instructions(&session, false), format!("{g}\n"));
    }
}
