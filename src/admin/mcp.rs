//! `tiershim mcp` and `tiershim instructions`: the served skills over MCP on stdio, and the
//! guide the server gives its clients, printed. Both pick their skills the same way
//! ([`Sources`]) and call [`crate::mcp`]; neither runs anything.

use std::path::PathBuf;

use crate::context::Context;
use crate::exit::Exit;
use crate::install::InstallConfig;
use crate::sanitize::escape;
use crate::skill::Sources as InstallSources;
use crate::skill::served::{Selection, Session};

/// Where the served skills come from.
#[derive(Debug, Clone, clap::Args)]
pub struct Sources {
    /// Serve this install's skills (its `skills:`): the repository holding the working
    /// directory first, then the baseline, then the other repositories. Its `tier` is the
    /// session's ceiling (3 without --config), which CLAUDEOPS_TIER lowers as in the gate.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Serve every SKILL.md at any depth of this directory too (absolute; repeatable; after the
    /// install's; an earlier one wins for a skill found twice). Without --config and
    /// --skills-dir: ./.agent/skills, ~/.agent/skills, ./.claude/skills, ~/.claude/skills, in
    /// that order.
    #[arg(long = "skills-dir", value_name = "DIR")]
    skills_dir: Vec<PathBuf>,
}

impl Sources {
    /// The selection and the session tier, or the exit for a bad argument or config.
    pub fn resolve(&self, ctx: &Context, who: &str) -> Result<(Selection, Session), Exit> {
        for d in &self.skills_dir {
            if !d.is_absolute() {
                eprintln!(
                    "tiershim {who}: --skills-dir {}: give an absolute path",
                    escape(&d.display().to_string())
                );
                return Err(Exit::Usage);
            }
        }
        let (install, ceiling) = match &self.config {
            None => (None, None),
            Some(p) => {
                let p = ctx.cwd.join(p);
                match InstallConfig::load(&p, false) {
                    Ok(cfg) => (Some(InstallSources::from_config(cfg.skills.as_ref())), Some(cfg.tier)),
                    Err(e) => {
                        eprintln!("tiershim {who}: {}", escape(&e.to_string()));
                        return Err(e.exit());
                    }
                }
            }
        };
        let selection = Selection {
            install,
            dirs: self.skills_dir.clone(),
            cwd: ctx.cwd.clone(),
            home: ctx.var("HOME").filter(|h| h.starts_with('/')).map(PathBuf::from),
        };
        let session = Session::new(ceiling, ctx.var("CLAUDEOPS_TIER").as_deref());
        Ok((selection, session))
    }
}

#[derive(Debug, clap::Args)]
pub struct McpArgs {
    #[command(flatten)]
    sources: Sources,
}

pub fn run_mcp(ctx: &Context, a: McpArgs) -> Exit {
    let (selection, session) = match a.sources.resolve(ctx, "mcp") {
        Ok(s) => s,
        Err(exit) => return exit,
    };
    if let Some(note) = &session.note {
        eprintln!("tiershim mcp: {}", escape(note));
    }
    match crate::mcp::serve(selection, session) {
        Ok(()) => Exit::Ok,
        Err(e) => {
            eprintln!("tiershim mcp: {}", escape(&e));
            Exit::Internal
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct InstructionsArgs {
    /// Print the guide bare, without the <skills-mcp-instructions> tags around it.
    #[arg(long)]
    no_xml: bool,
    #[command(flatten)]
    sources: Sources,
}

pub fn run_instructions(ctx: &Context, a: InstructionsArgs) -> Exit {
    let session = match a.sources.resolve(ctx, "instructions") {
        Ok((_, session)) => session,
        Err(exit) => return exit,
    };
    print!("{}", crate::mcp::guide::instructions(&session, !a.no_xml));
    Exit::Ok
}
