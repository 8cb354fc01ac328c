//! `tiershim <command>`: the admin CLI (clap). Each subcommand calls the same library code as
//! the gate; none executes anything it is asked about.

mod audit;
mod check;
mod claude_files;
mod cooldown;
mod doctor;
mod explain;
#[cfg(test)]
mod generate;
mod inventory;
mod launch;
mod mcp;
mod policy_check;
mod policy_doc;
mod shell;
pub(crate) mod skills;

use clap::{Parser, Subcommand};

use crate::context::Context;
use crate::exit::Exit;

/// `tiershim --version`: the crate version, the commit and the build date (build.rs; the date
/// is SOURCE_DATE_EPOCH's when that is set).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("TIERSHIM_COMMIT"),
    ", built ",
    env!("TIERSHIM_BUILD_DATE"),
    ")"
);

#[derive(Debug, Parser)]
#[command(
    name = "tiershim",
    version = VERSION,
    about = "A per-tier command gate for AI operations agents",
    long_about = "A per-tier command gate for AI operations agents.\n\n\
        Linked as gh, tea, docker, psql, mysql, curl, git, ssh, kubectl, helm or the ansible tools in a tier directory that holds a tiershim.yaml, \
        it parses each call as the real tool would, decides it against the agent's tier and the policy, \
        logs the decision, and then execs the real tool, prints what a dry run would do, or refuses \
        (exit 77; 78 for a bad config or policy). The remote command of an ssh call is judged part by \
        part with the same rules, and tiershim.yaml `hosts:` lists the hosts it may reach.\n\n\
        Run as tiershim, it is this admin tool."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the decision the gate would make for a call, without running anything.
    Explain(explain::Args),
    /// Policy tools.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Start the restricted shell (rbash) of an installed tier: PATH is the tier directory only.
    Shell(shell::Args),
    /// Start an agent (Claude Code) in its tier, as root: checks the install and the shell
    /// Claude Code will take, sets up the kernel fence and the tier's managed settings, then runs
    /// the command as the agent's user with a clean environment. Refuses (78) on any fault.
    Launch(launch::Args),
    /// Parse and validate what the gate reads, like `visudo -c`: each tier's tiershim.yaml, the
    /// policy directory, every skill; `file:line:column:` for each fault; exit 0 or 78.
    Check(check::Args),
    /// Check an installation: links, config, real tools out of the agent's reach, passthrough
    /// tools, permissions, audit log, policy. A summary (one line per tool across the tiers,
    /// one per part) and then one line per check; `--json`; exit 0 only when all hold.
    Doctor(doctor::Args),
    /// The session tool inventory: MCP servers, CLIs and what the gate allows, per domain.
    Inventory(inventory::Args),
    /// Summarise an audit log: counts, refusals, scope violations, resets, anything odd.
    Audit(audit::Args),
    /// Restart and redeploy budgets per service: counts in the window and when the next call is
    /// allowed; `reset SERVICE` empties one service's counts (operators only).
    Cooldown(cooldown::Args),
    /// The skills an install reads: list, show one, validate.
    Skills {
        #[command(subcommand)]
        command: skills::Command,
        #[command(flatten)]
        common: skills::Common,
    },
    /// Serve the skills over MCP on stdio, for agents without native skill support.
    Mcp(mcp::McpArgs),
    /// Print the guide to using skills that `tiershim mcp` gives its clients.
    Instructions(mcp::InstructionsArgs),
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// Load a policy (the embedded default, or DIR), run every rule's examples, vet the
    /// passthrough list, and report.
    Check(policy_check::Args),
    /// Print what a policy can say about a tool (the verbs and marks its grammar makes, with
    /// their meanings) and the shipped policy's rules, with the rules the gate applies itself.
    Doc(policy_doc::Args),
}

pub fn run(ctx: &Context) -> Exit {
    // The admin CLI never needs the setgid group of a hardened install; `tiershim shell` in
    // particular must not hand it to the agent's shell.
    if let Err(e) = crate::harden::drop_group() {
        eprintln!("tiershim: {e}");
        return Exit::Internal;
    }
    let argv = std::iter::once(std::ffi::OsString::from("tiershim")).chain(ctx.args.iter().cloned());
    let cli = match Cli::try_parse_from(argv) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { Exit::Usage } else { Exit::Ok };
        }
    };
    match cli.command {
        Command::Explain(a) => explain::run(ctx, a),
        Command::Policy(PolicyCommand::Check(a)) => policy_check::run(a),
        Command::Policy(PolicyCommand::Doc(a)) => policy_doc::run(a),
        Command::Shell(a) => shell::run(ctx, a),
        Command::Launch(a) => launch::run(ctx, a),
        Command::Doctor(a) => doctor::run(a),
        Command::Check(a) => check::run(a),
        Command::Skills { command, common } => skills::run(ctx, command, common),
        Command::Mcp(a) => mcp::run_mcp(ctx, a),
        Command::Instructions(a) => mcp::run_instructions(ctx, a),
        Command::Inventory(a) => inventory::run(ctx, a),
        Command::Audit(a) => audit::run(ctx, a),
        Command::Cooldown(a) => cooldown::run(ctx, a),
    }
}
