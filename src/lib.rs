//! tiershim: a per-tier command gate for AI operations agents.
//!
//! One binary, linked under the names of the tools an agent uses. Run as a tool, it parses argv
//! the way the real tool would ([`grammar`]), decides against the install's tier and the policy
//! ([`decision::decide`], pure), writes an audit record ([`audit`]), and then execs the real tool,
//! prints a dry-run line, or refuses ([`gate`]). Run as `tiershim`, it is the admin CLI
//! ([`admin`]). See ARCHITECTURE.md for the map and the invariants.

pub(crate) mod access;
pub(crate) mod admin;
pub(crate) mod ansible_ssh;
pub(crate) mod audit;
pub mod claude;
pub(crate) mod compose;
pub mod context;
pub mod cooldown;
pub(crate) mod decision;
pub(crate) mod dispatch;
pub(crate) mod error;
pub(crate) mod exec;
pub(crate) mod exit;
pub(crate) mod facts;
pub mod fence;
pub(crate) mod files;
pub(crate) mod gate;
pub(crate) mod glob;
pub mod grammar;
pub(crate) mod harden;
pub mod install;
pub(crate) mod inventory;
pub(crate) mod judge;
pub(crate) mod mcp;
pub(crate) mod operator_files;
pub(crate) mod packed;
pub(crate) mod policy;
pub(crate) mod remote_facts;
pub(crate) mod remote_fence;
pub(crate) mod sanitize;
pub(crate) mod scope;
pub(crate) mod script_input;
pub mod skill;
pub mod spec;
pub(crate) mod suggest;
pub(crate) mod tables;
pub(crate) mod tier;
pub mod time;
pub mod tool;
pub(crate) mod tool_config;
pub(crate) mod vet;

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
