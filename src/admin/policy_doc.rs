//! `tiershim policy doc [TOOL]`: what a policy can say about a tool and what the shipped one
//! says. For each tool: the verbs its grammar makes besides the tool's own commands, every mark
//! it sets (each with its meaning, from `grammar::vocab`), the shipped policy's rules (id, tier,
//! verbs, marks, what), and the rules the gate applies itself (`policy::Builtin`).
//!
//! Must not: read anything but the embedded policy, or decide.

use std::fmt::Write as _;

use crate::exit::Exit;
use crate::policy::{Builtin, Policy};
use crate::tool::Tool;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// One tool (gh, tea, docker, psql, mysql, curl, git, ssh, kubectl, helm, ansible-playbook, ansible,
    /// ansible-inventory, ansible-galaxy). Default: every tool.
    tool: Option<String>,
}

pub fn run(a: Args) -> Exit {
    let tools: Vec<Tool> = match a.tool.as_deref() {
        None => Tool::ALL.to_vec(),
        Some(name) => match Tool::from_name(name) {
            Some(t) => vec![t],
            None => {
                let hint = crate::suggest::did_you_mean(name, Tool::ALL.iter().map(|t| t.name()));
                eprintln!(
                    "tiershim policy doc: `{}` is not a gated tool{hint}; the tools are {}",
                    crate::sanitize::escape(name),
                    Tool::names()
                );
                return Exit::Usage;
            }
        },
    };
    let mut out = String::new();
    for tool in tools {
        match doc(tool) {
            Ok(text) => out.push_str(&text),
            Err(e) => {
                eprintln!("tiershim policy doc: {e}");
                return Exit::Internal;
            }
        }
    }
    print!("{out}");
    Exit::Ok
}

/// The page of one tool.
pub fn doc(tool: Tool) -> crate::error::Result<String> {
    let policy = Policy::embedded(tool)?;
    let vocab = tool.spec().vocabulary;
    let mut s = String::new();
    let _ = writeln!(s, "# {tool}\n");
    let _ = writeln!(
        s,
        "## Verbs\n\nThe {tool} grammar names an action by the command as the tool has it, aliases resolved (the rules below show them); besides, it makes:\n"
    );
    if vocab.verbs.is_empty() {
        let _ = writeln!(s, "  (nothing else)");
    }
    for w in vocab.verbs {
        let _ = writeln!(s, "  {:<24} {}", w.name, w.meaning);
    }
    let _ = writeln!(s, "\n## Marks (`when:`)\n");
    for w in vocab.marks {
        let _ = writeln!(s, "  {:<24} {}", w.name, w.meaning);
    }
    let _ = writeln!(s, "\n## Rules (policy/{tool}.yaml; the strictest rule that matches decides)\n");
    for r in &policy.rules {
        let when = if r.when.is_empty() {
            String::new()
        } else {
            format!(" when {}", r.when.join(" + "))
        };
        let _ = writeln!(s, "  {}  tier {}{when}", r.id, r.required);
        if let Some(what) = &r.what {
            let _ = writeln!(s, "      {what}");
        }
        let _ = writeln!(s, "      verbs: {}", r.verbs.join(", "));
    }
    let _ = writeln!(s, "\n## Rules the gate applies itself (a policy rule cannot take their ids)\n");
    for b in Builtin::ALL {
        if b == Builtin::KernelFence || (b == Builtin::RemoteWrite && tool != Tool::Ssh) {
            continue;
        }
        let (_, tier, what) = b.describe();
        let _ = writeln!(s, "  {:<28} {:<6} {what}", b.id(tool), tier);
    }
    s.push('\n');
    Ok(s)
}
