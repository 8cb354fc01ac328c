//! `tiershim inventory [--config FILE] [--write [FILE]] [--json]`: the session tool inventory,
//! built by the same policy, grammar and `decide()` the gate uses.

use std::path::PathBuf;

use crate::context::Context;
use crate::exit::Exit;
use crate::install::InstallConfig;
use crate::inventory::{self, Inventory};
use crate::sanitize::escape;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tier's tiershim.yaml (ceiling, real tools, mcp_configs, inventory path). Without it:
    /// ceiling 3, no MCP configs, and the real tools found on this PATH.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Write the inventory as JSON: to FILE, or to the config's `inventory:` path. The session
    /// entrypoint runs this once; the gate reads the file and never rebuilds it.
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    write: Option<Option<PathBuf>>,
    /// Print the inventory as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &Context, a: Args) -> Exit {
    let loaded = match &a.config {
        Some(p) => InstallConfig::load(p, false),
        None => Ok(InstallConfig::admin_default(ctx.var("PATH").as_deref())),
    };
    let cfg = match loaded {
        Ok(c) => c,
        Err(e) => {
            eprintln!("tiershim inventory: {}", escape(&e.to_string()));
            return e.exit();
        }
    };
    let inv = match inventory::build(
        &cfg,
        ctx.var("CLAUDEOPS_TIER").as_deref(),
        ctx.var("CLAUDEOPS_DRY_RUN").as_deref(),
        &crate::time::rfc3339(ctx.now),
    ) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("tiershim inventory: {}", escape(&e.to_string()));
            return e.exit();
        }
    };
    if let Some(w) = &a.write {
        let target = w.clone().or_else(|| cfg.inventory.clone());
        let Some(target) = target else {
            eprintln!(
                "tiershim inventory: --write without a FILE needs `inventory:` in {}",
                escape(&cfg.path.display().to_string())
            );
            return Exit::Usage;
        };
        if let Err(e) = inventory::write(&target, &inv) {
            eprintln!("tiershim inventory: cannot write {}: {e}", escape(&target.display().to_string()));
            return Exit::Config;
        }
    }
    if a.json {
        match serde_json::to_string_pretty(&inv) {
            Ok(t) => println!("{t}"),
            Err(e) => {
                eprintln!("tiershim inventory: {e}");
                return Exit::Internal;
            }
        }
    } else {
        table(&inv);
    }
    Exit::Ok
}

fn table(inv: &Inventory) {
    println!(
        "session inventory: tier {} (ceiling {}){}",
        inv.tier,
        inv.ceiling,
        if inv.dry_run { ", dry-run" } else { "" }
    );
    for d in &inv.domains {
        let mcp: Vec<&str> = d.mcp.iter().map(|m| m.tools.as_str()).collect();
        let cli: Vec<String> = d
            .cli
            .iter()
            .map(|c| match &c.path {
                Some(p) => format!("{} ({})", c.tool, p),
                None => format!("{} (not installed)", c.tool),
            })
            .collect();
        println!();
        println!("{} [{}]", d.name, d.id);
        println!(
            "  MCP:  {}",
            if mcp.is_empty() {
                "none".to_string()
            } else {
                escape(&mcp.join(", ")).into_owned()
            }
        );
        println!(
            "  CLI:  {}",
            if cli.is_empty() {
                "none".to_string()
            } else {
                escape(&cli.join(", ")).into_owned()
            }
        );
        for op in &d.operations {
            println!("  {:<22} {:<13} {}", op.name, op.verdict, escape(&op.call));
        }
    }
    for p in &inv.problems {
        println!("! {}", escape(p));
    }
}
