//! The text an agent reads about skills: the guide (the `init-skills` prompt, the server's
//! `instructions`, and `tiershim instructions` all print this one text), the `skill` tool's
//! description, and the XML escaping both use. Pure: served skills in, text out.

use crate::skill::served::{Entry, Served, Session};

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

/// Every served skill in `<available_skills>`: id and description, and for a skill above the
/// session's tier, the tier it needs.
pub fn available_skills_xml(served: &Served, session: &Session) -> String {
    let mut out = String::from("<available_skills>\n");
    for e in &served.entries {
        out.push_str("<skill>\n");
        out.push_str(&format!("<name>{}</name>\n", xml_escape(e.id())));
        out.push_str(&format!("<description>{}</description>\n", xml_escape(&e.meta.description)));
        if let (false, Some(t)) = (e.available(session), e.tier_required) {
            out.push_str(&format!("<requires_tier>{t}</requires_tier>\n<available>false</available>\n"));
        }
        out.push_str("</skill>\n");
    }
    out.push_str("</available_skills>");
    out
}

fn plain_list(served: &Served, session: &Session) -> String {
    if served.entries.is_empty() {
        return "(no skills found)".into();
    }
    let mut out = String::new();
    for e in &served.entries {
        // One line per skill, whatever the description holds.
        let description = e.meta.description.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push_str(&format!("- {}: {description}", e.id()));
        if let (false, Some(t)) = (e.available(session), e.tier_required) {
            out.push_str(&format!(" (requires tier {t}; not available at tier {})", session.tier));
        }
        out.push('\n');
    }
    out.trim_end().to_string()
}

/// The first line of a skill loaded above the session's tier.
pub fn escalation_line(e: &Entry, session: &Session) -> Option<String> {
    let t = e.tier_required?;
    (t > session.tier).then(|| {
        format!(
            "ESCALATE: skill {} requires tier {t} and this session is tier {}; the gate will refuse its commands. Read it for reference only, and hand the task to a tier {t} agent or an operator.",
            e.id(),
            session.tier
        )
    })
}

/// The guide: what skills are, progressive disclosure, the five-step workflow, and that file
/// reads and script runs stay with the agent; then the skills, as XML or as a plain list.
pub fn guide(served: &Served, session: &Session, xml: bool) -> String {
    let list = if xml {
        available_skills_xml(served, session)
    } else {
        plain_list(served, session)
    };
    format!(
        "# Skills\n\n\
Skills are instructions for one kind of task, written down by the people who run this system: \
which tool to use, how to run it, how to check the result, and what must not be touched. Each \
skill is a markdown file (`<name>.md`, or `<name>/SKILL.md` with `name` and `description` \
frontmatter) that may sit beside `references/`, `scripts/` and `assets/`.\n\n\
Progressive disclosure: only the name and description of each skill are listed up front. Load a \
skill's full text only when a task needs it, and open the files it points to only when its text \
tells you to.\n\n\
Workflow:\n\
1. Look through the skills below (the `list_skills` tool returns the same list with ids and tiers).\n\
2. Pick the skill whose description matches the task; if none does, work without one.\n\
3. Load it: the `skill` tool with its name, or `get_skill` with its id. The answer names the skill's \
base directory.\n\
4. Follow its instructions. Paths in it are relative to that base directory: read those files and run \
those scripts yourself, with your own tools. This server only hands out skill text; it reads no other \
file and runs nothing.\n\
5. Check the result the way the skill's Validation section says, and report what you did.\n\n\
This session is tier {tier}. A skill that requires a higher tier is marked; the gate refuses its \
commands at this tier, so read it for reference and escalate instead of running them.\n\n\
{list}\n",
        tier = session.tier,
    )
}

/// The `skill` tool's description: what it does, then every skill in `<available_skills>`.
pub fn skill_tool_description(served: &Served, session: &Session) -> String {
    format!(
        "Load a skill: its instructions for one kind of task, with the directory its references/, scripts/ \
and assets/ are in. Pass the skill's name (case does not matter). Load a skill only when the task \
matches its description.\n\n{}",
        available_skills_xml(served, session)
    )
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
}
