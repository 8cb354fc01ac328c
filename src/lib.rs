//! tiershim: a per-tier command gate for AI operations agents.
//!
//! One binary, linked under the names of the tools an agent uses. Run as a tool, it parses argv
//! the way the real tool would ([`grammar`]), decides against the install's tier and the policy
//! ([`decision::decide`], pure), writes an audit record ([`audit`]), and then execs the real tool,
//! prints a dry-run line, or refuses ([`gate`]). Run as `tiershim`, it is the admin CLI
//! ([`admin`]). See ARCHITECTURE.md for the map and the invariants.

pub mod access;
pub mod admin;
pub mod audit;
pub mod claude;
pub mod compose;
pub mod context;
pub mod cooldown;
pub mod decision;
pub mod dispatch;
pub mod error;
pub mod exec;
pub mod exit;
pub mod facts;
pub mod fence;
pub mod files;
pub mod gate;
pub mod glob;
pub mod grammar;
pub mod harden;
pub mod install;
pub mod inventory;
pub mod judge;
pub mod mcp;
pub mod policy;
pub mod remote_facts;
pub mod remote_fence;
pub mod sanitize;
pub mod scope;
pub mod script_input;
pub mod skill;
pub mod spec;
pub mod suggest;
pub mod tier;
pub mod time;
pub mod tool;
pub mod tool_config;
pub mod vet;

use context::Context;
use dispatch::Entry;

/// Run tiershim for this process. Returns the exit status when nothing was executed.
pub fn run(ctx: &Context) -> i32 {
    let exit = match dispatch::entry(&ctx.exec_path) {
        Entry::Gate(tool) => gate::run(ctx, tool),
        Entry::Admin => admin::run(ctx),
    };
    exit.code()
}
