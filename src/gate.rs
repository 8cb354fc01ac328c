//! The live path of a gated call, in five steps: judge (the config beside the link, the kernel
//! fence, the policy, then `crate::judge` with the live facts) → count (an allowed call against
//! its cooldown budgets, under the state file's lock) → audit (one record, synced) → message
//! (the stderr lines) → exec, dry-run, or refuse.
//!
//! Any error on the way refuses: nothing is executed after an error, and the audit record is
//! written (and synced) before exec. This is the only place that execs.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::audit::{self, EnvReset, Origin, Outcome};
use crate::context::Context;
use crate::cooldown;
use crate::decision::{self, Decision, Verdict};
use crate::error::{Error, Result};
use crate::exec;
use crate::exit::Exit;
use crate::install::{self, InstallConfig};
use crate::inventory::{self, Fallback};
use crate::judge::{self, Call, Judged, live::Live};
use crate::policy::Policy;
use crate::sanitize::escape;
use crate::tool::Tool;

/// Run a gated call. Returns only when the tool was not executed.
pub fn run(ctx: &Context, tool: Tool) -> Exit {
    match gate(ctx, tool) {
        Ok(exit) => exit,
        Err(e) => {
            eprintln!("tiershim: {tool}: {}", escape(&e.to_string()));
            e.exit()
        }
    }
}

/// The line after `Using:` when the session inventory says the call falls back from MCP, or
/// cannot be read (DESIGN §4, SPEC-0023 REQ-5).
fn mcp_line(f: &Fallback, skill: &str, tool: Tool) -> Option<String> {
    let s = escape(skill);
    match f {
        Fallback::Silent | Fallback::HasMcp => None,
        Fallback::NoMcp(domain) => Some(format!(
            "[skill:{s}] WARNING: MCP tools not found for {domain}, falling back to {tool} (CLI)"
        )),
        Fallback::Unreadable(e) => Some(format!(
            "[skill:{s}] WARNING: the session inventory could not be read ({}); MCP fallback is not reported",
            escape(e)
        )),
    }
}

/// The name shown in `[skill:…]`: `CLAUDEOPS_SKILL` renames it in the log only.
fn shown_skill(d: &Decision, ctx: &Context) -> String {
    ctx.var("CLAUDEOPS_SKILL")
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| d.skill.clone())
}

/// Where the install requires the kernel fence, a call from a process outside a Landlock domain
/// (a real tool started by something that left the shell, or a caller that was never fenced),
/// or inside the domain of another tier (a looser one: a tier-3 agent calling a tier-2 link; a
/// stricter one: a tier-1 agent that reached a tier-3 link), is refused before anything else.
/// Returns what the audit record says of the fence: the ABI whose rights the domain handles
/// and its tier. A refusal comes with what the record says instead: `outside`, the other tier's
/// domain (`landlock tier 3`), or `unknown` (a probe missing or altered).
fn fence_check(cfg: &InstallConfig, tool: Tool) -> std::result::Result<String, (Error, String)> {
    if cfg.kernel_fence == install::KernelFence::Off {
        return Ok("off".into());
    }
    let fix = "start the agent with `tiershim launch --tier N` (or its shell with `tiershim shell`) for the tier it should have, or opt out with `kernel_fence: off`";
    let found = crate::fence::domain_tier(&crate::fence::lib_dir(cfg)).map_err(|e| (e, "unknown".to_string()))?;
    match found {
        Some(t) if t == cfg.tier => Ok(format!(
            "landlock abi {} tier {t}",
            crate::fence::applied_abi(crate::fence::kernel_abi())
        )),
        Some(t) => Err((
            Error::Fence(format!(
                "this {tool} call comes from a process inside the Landlock domain of tier {t}, not the one of tier {} that {} requires, so it is refused; {fix}",
                cfg.tier,
                cfg.path.display()
            )),
            format!("landlock tier {t}"),
        )),
        None => Err((
            Error::Fence(format!(
                "this {tool} call comes from a process outside the Landlock domain that {} requires, so it is refused; {fix}",
                cfg.path.display()
            )),
            "outside".to_string(),
        )),
    }
}

/// At tier 2 and above, where the kernel fence holds each repository's metadata read-only
/// (crate::fence), a git call (in its `-C` directories) or a gh call (which runs git in its
/// working directory) in a repository whose config and hooks are not read-only mounts is
/// refused: a repository made, moved or retargeted after the launch, whose configuration the
/// agent could have written. The record says the fence as for an allowed call.
fn repository_check(ctx: &Context, tool: Tool, cfg: &InstallConfig) -> std::result::Result<(), (Error, String)> {
    if cfg.kernel_fence == install::KernelFence::Off || cfg.tier < 2 || !matches!(tool, Tool::Git | Tool::Gh) {
        return Ok(());
    }
    let mut writable: Vec<PathBuf> = Vec::new();
    for w in crate::fence::repository_roots(cfg) {
        if let Ok(c) = std::fs::canonicalize(&w) {
            writable.push(c);
        }
        writable.push(w);
    }
    let mut start = ctx.cwd.clone();
    if tool == Tool::Git {
        let args: Vec<String> = ctx.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        for d in crate::grammar::git::directories(&args) {
            start.push(d);
        }
    }
    let Some(repo) = crate::fence::discover(&start) else {
        return Ok(());
    };
    match crate::fence::unbound(&repo, &writable) {
        None => Ok(()),
        Some(why) => Err((
            Error::Fence(format!("this {tool} call would run git in {}: {why}", start.display())),
            format!("landlock tier {} (repository not held)", cfg.tier),
        )),
    }
}

/// Refuse a call from outside the kernel fence (or from another tier's domain) where the
/// install requires it, and record it: such a call is what an escape looks like. Returns what
/// the audit record says of the fence.
fn fenced(ctx: &Context, tool: Tool, cfg: &InstallConfig) -> Result<String> {
    fence_check(cfg, tool)
        .and_then(|f| repository_check(ctx, tool, cfg).map(|()| f))
        .or_else(|(e, where_from)| {
            let origin = Origin {
                ctx,
                tool,
                ceiling: cfg.tier,
                fence: &where_from,
            };
            audit::write(cfg.audit_log.as_deref(), || {
                origin.outside(escape(&format!("tiershim: {tool}: {e}")).into_owned())
            })?;
            Err(e)
        })
}

/// The real tool of an allowed call made ready: its path and environment (the operator's tool
/// home and pins; the secrets file is read only now, for a call that runs), or why it cannot
/// run.
#[derive(Default)]
struct Run {
    real: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
    resets: Vec<EnvReset>,
    failure: Option<Error>,
    /// What must stay open until exec: the real ssh of a hardened ansible (`crate::ansible_ssh`).
    kept: Option<std::os::fd::OwnedFd>,
}

impl Run {
    fn prepare(cfg: &InstallConfig, ctx: &Context, policy: &Policy, d: &Decision) -> Run {
        if d.verdict != Verdict::Allow {
            return Run::default();
        }
        let ready = exec::resolve_real(cfg, d.tool).and_then(|p| Ok((p, cfg.tool_home()?, cfg.pins()?)));
        match ready {
            Ok((p, home, pins)) => {
                let (mut env, mut resets) = exec::child_env(&ctx.env, policy, &pins, Some(home), d.effective_tier);
                // ansible's ssh connection: the real ssh, pinned by the gate.
                let mut kept = None;
                let agent_home = crate::ansible_ssh::is_ansible(d.tool)
                    .then(crate::ansible_ssh::agent_home)
                    .flatten();
                // Under the kernel fence, ansible's temporary directories are the agent's.
                let temp = crate::ansible_ssh::temp_dirs(d.tool, cfg, &pins, agent_home.as_deref());
                exec::force(&mut env, &mut resets, &ctx.env, &temp);
                if crate::ansible_ssh::connects(d.tool) {
                    match crate::ansible_ssh::pin(cfg, &pins, agent_home.as_deref()) {
                        Ok(Some(pinned)) => {
                            exec::force(&mut env, &mut resets, &ctx.env, &pinned.vars);
                            kept = pinned.kept;
                        }
                        Ok(None) => {}
                        Err(e) => {
                            return Run {
                                failure: Some(e),
                                ..Run::default()
                            };
                        }
                    }
                }
                Run {
                    real: Some(p),
                    env,
                    resets,
                    failure: None,
                    kept,
                }
            }
            Err(e) => Run {
                failure: Some(e),
                ..Run::default()
            },
        }
    }

    /// Allowed, and nothing stands in the way.
    fn runs(&self, d: &Decision) -> bool {
        d.verdict == Verdict::Allow && self.failure.is_none()
    }
}

/// Count an allowed call against its budgets, now, before the audit line and the exec (the
/// gate is gone afterwards); a refused, dry-run or failing call records nothing. Returns the
/// lock with the count written, or None (and `run.failure` when the count failed).
fn count(
    cfg: &InstallConfig,
    ctx: &Context,
    j: &Judged,
    run: &mut Run,
    locked: &mut Option<cooldown::store::Locked>,
) -> Option<cooldown::store::Locked> {
    let d = &j.decision;
    if !run.runs(d) || d.cooldown.is_empty() {
        return None;
    }
    let (Some(mut l), Some(Ok(f)), Some(path)) = (locked.take(), &j.req.facts.cooldown, &cfg.cooldown_state) else {
        return None;
    };
    match l.record(&d.cooldown, &f.budgets, ctx.now) {
        Ok(()) => Some(l),
        Err(msg) => {
            run.failure = Some(Error::Cooldown { path: path.clone(), msg });
            None
        }
    }
}

/// The line the gate prints for the decision (DESIGN §4), or for the failure that stops an
/// allowed call.
fn message(run: &Run, d: &Decision, skill: &str, shown: &[String]) -> String {
    match &run.failure {
        Some(e @ Error::RealMissing { .. }) => decision::not_found_line(skill, d.tool, &e.to_string()),
        Some(e) => escape(&e.to_string()).into_owned(),
        None => decision::render(d, skill, shown),
    }
}

/// What the session inventory says of an allowed call (read only for a call that will run).
/// An ssh call falls back from the MCP server of what it runs (`ssh → docker ps`: Docker).
fn mcp(cfg: &InstallConfig, run: &Run, d: &Decision) -> Fallback {
    if !run.runs(d) {
        return Fallback::Silent;
    }
    let domain_tool = d.deciding_part.and_then(|i| d.parts.get(i)).map_or(d.tool, |p| p.tool);
    inventory::fallback(cfg.inventory.as_deref(), domain_tool)
}

fn gate(ctx: &Context, tool: Tool) -> Result<Exit> {
    // Judge.
    let dir = ctx.exec_path.parent().unwrap_or(Path::new("/"));
    let cfg = InstallConfig::load(&dir.join(install::FILE_NAME), true)?;
    let fence = fenced(ctx, tool, &cfg)?;
    let policy = judge::policy(tool, &cfg)?;
    let call = Call {
        tool,
        args: judge::utf8_args(tool, &ctx.args),
        cwd: &ctx.cwd,
        env: &ctx.env,
        tier: None,
        dry_run: false,
    };
    let mut live = Live {
        cfg: &cfg,
        env: &ctx.env,
        cwd: &ctx.cwd,
        ppid: ctx.ppid,
        now: ctx.now,
        locked: None,
    };
    let j = judge::call(&cfg, &policy, &call, &mut live)?;
    let d = &j.decision;
    let skill = shown_skill(d, ctx);
    let mut run = Run::prepare(&cfg, ctx, &policy, d);

    // Count. The state file's lock, when the call counts against a budget, is held from the
    // read the decision is made on until the count and the audit line are written.
    let mut recorded = count(&cfg, ctx, &j, &mut run, &mut live.locked);

    // Audit: one record per decision (DESIGN §8).
    let shown = audit::shown_args(&j.args, &j.inv);
    let line = message(&run, d, &skill, &shown);
    let mcp = mcp(&cfg, &run, d);
    let notice = mcp_line(&mcp, &skill, tool);
    let written = audit::write(cfg.audit_log.as_deref(), || {
        Origin {
            ctx,
            tool,
            ceiling: cfg.tier,
            fence: &fence,
        }
        .decided(
            d,
            Outcome {
                argv: &shown,
                skill: &skill,
                message: &line,
                failure: run.failure.as_ref(),
                real: run.real.as_deref(),
                mcp: mcp.audit(),
                notices: notice.iter().cloned().collect(),
                env_resets: run.resets.clone(),
                remote: j.inv.remote.as_deref(),
                cooldown: cfg
                    .cooldown_state
                    .as_ref()
                    .filter(|_| !d.cooldown.is_empty())
                    .map(|path| audit::CooldownRecord {
                        state: audit::path_string(path),
                        budgets: d.cooldown.clone(),
                        recorded: recorded.is_some(),
                    }),
            },
        )
    });
    if let Err(e) = written {
        // Not logged, not run, not counted.
        if let Some(mut r) = recorded.take() {
            let _ = r.rollback();
        }
        return Err(e);
    }
    // Nothing below may hold the lock: the lines go to the agent's stderr, which can block. A
    // count already written is taken back under the lock again if the call does not run.
    drop(live.locked.take());
    let taken = recorded.take().map(|l| l.release(cfg.cooldown_lock_wait));

    // Message.
    if let Some(e) = run.failure {
        return match e {
            Error::RealMissing { .. } => {
                eprintln!("{line}");
                Ok(Exit::NotFound)
            }
            other => Err(other),
        };
    }
    // Quiet on success (DESIGN §4): an allowed call's lines go to the record only, unless the
    // install asks for them on stderr, where the agent reads them merged into the tool's output.
    let announce = cfg.announce == install::Announce::Stderr;
    if d.verdict != Verdict::Allow || announce {
        eprintln!("{line}");
    }
    if d.verdict == Verdict::DryRun {
        // Why it is a dry run, when the environment did not clearly ask for one.
        if let Some(note) = &d.dry_run_note {
            eprintln!("[skill:{}] DRY RUN: {note}", escape(&skill));
        }
        if let Some(line) = cooldown::dry_run_line(&skill, &d.cooldown) {
            eprintln!("{line}");
        }
    }
    if let (Some(line), true) = (&notice, announce) {
        eprintln!("{line}");
    }

    // Exec.
    match (d.verdict, run.real) {
        (Verdict::Allow, Some(real)) => {
            // The real ssh of a hardened ansible stays open, at its descriptor, through exec.
            let kept = run.kept;
            let failed = exec_judged(&real, &j, run.env);
            drop(kept);
            // The real tool did not start: take the count back.
            if let Some(t) = taken {
                let _ = t.take_back();
            }
            Err(failed)
        }
        (Verdict::Allow, None) => Err(Error::Internal("allowed without a real tool".into())),
        (Verdict::DryRun, _) => Ok(Exit::Ok),
        (Verdict::Refuse, _) => Ok(Exit::Refused),
    }
}

/// Become the real tool with the call as judged: the scripts it reads as the sealed copies
/// that were judged (`script_input`), a remote git with the git gate's forced settings
/// (`grammar::remote::sent_args`), the tool's hardening arguments in front. Returns only when
/// the exec failed.
fn exec_judged(real: &Path, j: &Judged, env: Vec<(OsString, OsString)>) -> Error {
    let sealed = match j.scripts.as_ref().map(|g| g.seal(&j.args)).transpose() {
        Ok(s) => s,
        Err(e) => return e,
    };
    if let Some(s) = &sealed
        && let Err(e) = s.install()
    {
        return e;
    }
    let args = sealed.as_ref().map_or(&j.args, |s| &s.args);
    // The request files the decision read (curl -d @f, gh api --input f) likewise.
    let bodies = match crate::script_input::seal_contents(args, &j.inv.files, &j.req.local.contents) {
        Ok(b) => b,
        Err(e) => return e,
    };
    let args = &bodies.args;
    let sent = j.inv.remote.as_deref().map(|r| crate::grammar::remote::sent_args(args, r));
    let args = sent.as_ref().unwrap_or(args);
    exec::exec(real, j.inv.tool, j.inv.tool.spec().prepend, args, env)
}
