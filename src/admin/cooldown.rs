//! `tiershim cooldown [--config FILE] [--json]`: the restart and redeploy budgets per service,
//! their counts in the window and when the next call would be allowed; and
//! `tiershim cooldown reset SERVICE`, the operator's command that empties one service's counts.
//!
//! `reset` refuses to run from inside an agent's tier shell ([`agent_session`]): the agent must
//! not reset its own budget. What that can see and what it cannot is said there; in a hardened
//! install the state file's directory is the real boundary (only root and the gate's group can
//! reach it, and this command drops the group).
//!
//! It reads the state file (reset: under its lock) and writes only on reset.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::context::Context;
use crate::cooldown::{self, Charge, store};
use crate::exit::Exit;
use crate::install::{self, InstallConfig};
use crate::policy::cooldown::{Budgets, Class, window_text};
use crate::sanitize::escape;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// A tier's tiershim.yaml naming `cooldown_state:`. Default: the installation this binary
    /// belongs to (the first of tier3, tier2, tier1 whose config names one).
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Empty a service's restart and redeployment counts (an operator's command; refused from
    /// inside an agent's tier shell).
    Reset {
        /// The service key as `tiershim cooldown` shows it (`api`, `shop/api`, `ie01:jellyfin`).
        service: String,
    },
}

#[derive(Debug, Serialize)]
struct Row {
    service: String,
    class: Class,
    used: usize,
    max: u32,
    window: String,
    /// When one more call would be allowed (now, or a time; null: never, the budget is 0).
    next_allowed: Option<String>,
    times: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Report {
    state: String,
    budgets: String,
    now: String,
    services: Vec<Row>,
}

fn fail(msg: impl AsRef<str>, exit: Exit) -> Exit {
    eprintln!("tiershim cooldown: {}", escape(msg.as_ref()));
    exit
}

/// The config to use: `--config`, else the installed tiers of this binary, highest first.
fn config(a: &Args) -> Result<InstallConfig, Exit> {
    let candidates: Vec<PathBuf> = match &a.config {
        Some(p) => vec![p.clone()],
        None => {
            let prefix = std::fs::read_link("/proc/self/exe")
                .ok()
                .and_then(|e| e.parent()?.parent().map(Path::to_path_buf));
            let Some(prefix) = prefix else {
                return Err(fail("cannot tell where this binary is installed; pass --config FILE", Exit::Usage));
            };
            (1..=3)
                .rev()
                .map(|n| prefix.join("lib/tiershim").join(format!("tier{n}")).join(install::FILE_NAME))
                .filter(|p| p.is_file())
                .collect()
        }
    };
    let mut first_err = None;
    for p in &candidates {
        match InstallConfig::load(p, false) {
            Ok(c) if c.cooldown_state.is_some() => return Ok(c),
            Ok(_) => {}
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_err {
        return Err(fail(e.to_string(), e.exit()));
    }
    let shown: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
    let msg = match (&a.config, shown.as_slice()) {
        (Some(p), _) => format!(
            "{} names no `cooldown_state:`, so that install keeps no restart or redeploy budget; add `cooldown_state: FILE` to it (install.sh --cooldown-state FILE)",
            p.display()
        ),
        (None, []) => {
            "this binary belongs to no installation with a tiershim.yaml (looked in <prefix>/lib/tiershim/tier{1,2,3}); pass --config FILE"
                .into()
        }
        (None, _) => format!(
            "no installed tiershim.yaml names `cooldown_state:` ({}), so no budget is kept; add it (install.sh --cooldown-state FILE), or pass --config FILE for another install",
            shown.join(", ")
        ),
    };
    Err(fail(msg, Exit::Config))
}

pub fn run(ctx: &Context, a: Args) -> Exit {
    if let Some(Command::Reset { service }) = &a.command
        && let Some(why) = agent_session(ctx)
    {
        return fail(
            format!("refusing to reset {service}: this looks like an agent's session ({why}); an operator resets budgets from outside it"),
            Exit::Refused,
        );
    }
    let cfg = match config(&a) {
        Ok(c) => c,
        Err(e) => return e,
    };
    let Some(path) = cfg.cooldown_state.clone() else {
        return fail("no cooldown_state", Exit::Config);
    };
    let budgets = match Budgets::load(cfg.policy.as_deref()) {
        Ok(b) => b,
        Err(e) => return fail(e.to_string(), e.exit()),
    };
    match &a.command {
        Some(Command::Reset { service }) => reset(&cfg, &path, service),
        None => show(ctx, &a, &path, &budgets),
    }
}

fn reset(cfg: &InstallConfig, path: &Path, service: &str) -> Exit {
    let mut locked = match store::lock(path, cfg.cooldown_lock_wait) {
        Ok(l) => l,
        Err(e) => return fail(format!("{} {e}", path.display()), Exit::Config),
    };
    match locked.reset(service) {
        Ok(true) => {
            println!(
                "reset {}: its restart and redeployment counts in {} are empty",
                escape(service),
                path.display()
            );
            Exit::Ok
        }
        Ok(false) => fail(
            format!("{} has no service {service}; `tiershim cooldown` lists them", path.display()),
            Exit::Usage,
        ),
        Err(e) => fail(format!("{} {e}", path.display()), Exit::Config),
    }
}

fn show(ctx: &Context, a: &Args, path: &Path, budgets: &Budgets) -> Exit {
    let state = match store::read(path) {
        Ok(s) => s,
        Err(e) => return fail(format!("{} {e}", path.display()), Exit::Config),
    };
    let mut rows = Vec::new();
    for (service, lists) in state.services() {
        for class in Class::ALL {
            let b = budgets.budget(service, class);
            let st = cooldown::evaluate(
                &[Charge {
                    key: service.clone(),
                    class,
                }],
                budgets,
                &state,
                ctx.now,
            );
            let Some(st) = st.first() else { continue };
            if st.used == 0 && lists.get(&class).is_none_or(Vec::is_empty) && !budgets.services.contains_key(service) {
                continue;
            }
            let mut times: Vec<String> = state
                .in_window(service, class, b.window, ctx.now)
                .into_iter()
                .map(crate::time::format_time)
                .collect();
            times.sort();
            rows.push(Row {
                service: service.clone(),
                class,
                used: st.used,
                max: b.max,
                window: window_text(b.window),
                next_allowed: if st.allowed {
                    Some("now".into())
                } else {
                    st.next_allowed.map(crate::time::format_time)
                },
                times,
            });
        }
    }
    let report = Report {
        state: path.display().to_string(),
        budgets: budgets.source.clone(),
        now: crate::time::format_time(ctx.now),
        services: rows,
    };
    if a.json {
        match serde_json::to_string(&report) {
            Ok(t) => println!("{t}"),
            Err(e) => return fail(e.to_string(), Exit::Internal),
        }
        return Exit::Ok;
    }
    println!("cooldown state: {}", escape(&report.state));
    println!("budgets:        {}", escape(&report.budgets));
    for class in Class::ALL {
        if let Some(b) = budgets.default.get(&class) {
            println!(
                "  {class}: at most {} {} per service in {}",
                b.max,
                class.noun(b.max as usize),
                window_text(b.window)
            );
        }
    }
    println!("now:            {}", report.now);
    if report.services.is_empty() {
        println!("no service has a restart or redeployment in its window");
        return Exit::Ok;
    }
    let width = report.services.iter().map(|r| r.service.len()).max().unwrap_or(7).max(7);
    println!("{:width$}  {:8}  {:>4}  {:>6}  NEXT ALLOWED", "SERVICE", "CLASS", "USED", "WINDOW");
    for r in &report.services {
        println!(
            "{:width$}  {:8}  {:>4}  {:>6}  {}",
            escape(&r.service),
            r.class.name(),
            format!("{}/{}", r.used, r.max),
            r.window,
            r.next_allowed.as_deref().unwrap_or("never (the budget is 0)")
        );
    }
    Exit::Ok
}

/// Why this process looks like it runs inside an agent's session, if it does:
///
/// - `CLAUDEOPS_TIER` is set here (the tier shell sets it read-only; Claude Ops sets it for the
///   agent);
/// - an ancestor process (up to 64, through `/proc/<pid>/stat`) is a restricted bash (`rbash`,
///   `bash -r`/`--restricted`, as `tiershim shell` starts it), is `tiershim shell`, or was
///   started with `CLAUDEOPS_TIER` in its environment (`/proc/<pid>/environ`; readable for the
///   caller's own processes).
///
/// Limits: an agent that is not below such a process and unsets the variable is not seen (an
/// unrestricted agent shell can do anything its user can, including editing the file); the
/// environment of another user's processes cannot be read. In a hardened install the file
/// modes are the boundary: the state file's directory is reachable only by root and the gate's
/// group, which this command does not hold.
pub fn agent_session(ctx: &Context) -> Option<String> {
    if ctx.var("CLAUDEOPS_TIER").is_some() {
        return Some("CLAUDEOPS_TIER is set".into());
    }
    let mut pid = ctx.ppid;
    for _ in 0..64 {
        if pid <= 1 {
            return None;
        }
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let argv: Vec<String> = std::fs::read(proc.join("cmdline"))
            .unwrap_or_default()
            .split(|b| *b == 0)
            .filter(|w| !w.is_empty())
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        let name = argv
            .first()
            .map(|a| a.rsplit('/').next().unwrap_or(a).trim_start_matches('-').to_string());
        let restricted = name.as_deref() == Some("rbash")
            || (name.as_deref() == Some("bash") && argv.iter().skip(1).any(|w| w == "-r" || w == "--restricted"));
        if restricted {
            return Some(format!("process {pid} above it is a restricted shell"));
        }
        if name.as_deref() == Some("tiershim") && argv.get(1).map(String::as_str) == Some("shell") {
            return Some(format!("process {pid} above it is `tiershim shell`"));
        }
        if let Ok(env) = std::fs::read(proc.join("environ"))
            && env.split(|b| *b == 0).any(|kv| kv.starts_with(b"CLAUDEOPS_TIER="))
        {
            return Some(format!("process {pid} above it was started with CLAUDEOPS_TIER"));
        }
        pid = parent_of(&proc)?;
    }
    None
}

/// The parent pid from `/proc/<pid>/stat` (the field after the parenthesised name).
fn parent_of(proc: &Path) -> Option<u32> {
    let stat = std::fs::read_to_string(proc.join("stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}
