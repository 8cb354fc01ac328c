//! `tiershim explain`: the decision the gate would make, from the same `decide()`, with the same
//! install: `--config FILE` (read and trusted as that tier's gate would), else the installation
//! this binary belongs to (`<prefix>/lib/tiershim/tier<N>/tiershim.yaml`, N from `--tier` or
//! `CLAUDEOPS_TIER`), else the embedded policy at ceiling 3. Where the gate would stop with 78
//! (an untrusted config, a policy or skill it cannot use) or 127 (the real tool missing), so
//! does explain. It executes nothing and writes nothing, so it cannot foresee an audit log the
//! gate could not append to (`tiershim doctor` checks that).

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::audit::AuditRecord;
use crate::context::Context;
use crate::decision::{self, Verdict};
use crate::error::Error;
use crate::exit::Exit;
use crate::install::{self, InstallConfig};
use crate::judge::{self, Call, live::Unlocked};
use crate::sanitize::escape;
use crate::tool::Tool;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tiershim.yaml of the tier to judge as (tier ceiling, pinned env, policy, skills,
    /// real tools), read and trusted as that tier's gate reads it. Without it: the tier
    /// directory of the installation (--prefix, default: the one this binary belongs to) for
    /// --tier (else CLAUDEOPS_TIER, else tier 1); without an installation, the embedded policy
    /// and a ceiling of 3.
    #[arg(long, value_name = "FILE", conflicts_with = "prefix")]
    config: Option<PathBuf>,
    /// The installation whose tier directory to judge with (default: the one this binary
    /// belongs to).
    #[arg(long, value_name = "DIR")]
    prefix: Option<PathBuf>,
    /// The agent's tier (as CLAUDEOPS_TIER would set it, and the installed tier directory to
    /// judge with); default: this environment's.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=3))]
    tier: Option<u8>,
    /// Judge as if dry-run were on.
    #[arg(long)]
    dry_run: bool,
    /// The working directory of the call (a scope check runs git there; local files are
    /// checked against it). Default: this one.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Print the kernel fence of --config's tier instead of judging a call: the Landlock ruleset
    /// (writable and read-only paths) for the agent's user named by --user (default: the caller).
    #[arg(long, requires = "config")]
    fence: bool,
    /// With --fence: the agent's account, whose home holds the state the fence keeps writable.
    #[arg(long, value_name = "USER", requires = "fence")]
    user: Option<String>,
    /// The call: a gated tool's name and its arguments.
    #[arg(
        required_unless_present = "fence",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "TOOL ARGS"
    )]
    call: Vec<String>,
}

/// `explain --config FILE --fence [--user USER]`: the tier's ruleset, as `launch` would make it.
fn fence(ctx: &Context, a: &Args) -> Exit {
    let Some(path) = &a.config else { return Exit::Usage };
    let cfg = match InstallConfig::load(path, false) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("tiershim explain: {}", escape(&e.to_string()));
            return e.exit();
        }
    };
    let user = a.user.clone().unwrap_or_else(|| nix::unistd::getuid().as_raw().to_string());
    let home = match crate::access::account(&user) {
        Ok(acc) => acc.home,
        Err(e) => match (&a.user, ctx.var("HOME")) {
            (None, Some(h)) => std::path::PathBuf::from(h),
            _ => {
                eprintln!("tiershim explain: --user {}: {e}", escape(&user));
                return Exit::Usage;
            }
        },
    };
    match crate::fence::plan(&cfg, &home, &crate::fence::repos(&cfg), &|p| p.exists()) {
        Ok(Some(rs)) => {
            if a.json {
                println!("{}", serde_json::to_string(&rs).unwrap_or_default());
            } else {
                crate::fence::describe(&rs).iter().for_each(|l| println!("{}", escape(l)));
            }
            Exit::Ok
        }
        Ok(None) => {
            println!("kernel fence: off (kernel_fence: off in {})", cfg.path.display());
            Exit::Ok
        }
        Err(e) => {
            eprintln!("tiershim explain: {}", escape(&e.to_string()));
            e.exit()
        }
    }
}

pub fn run(ctx: &Context, a: Args) -> Exit {
    if a.fence {
        return fence(ctx, &a);
    }
    let Some(tool) = Tool::from_name(&a.call[0]) else {
        eprintln!("tiershim explain: `{}` is not a gated tool ({})", escape(&a.call[0]), Tool::names());
        return Exit::Usage;
    };
    let args = &a.call[1..];
    let cfg_path = match &a.config {
        Some(p) => Some(ctx.cwd.join(p)),
        None => {
            let tier = a.tier.or_else(|| match ctx.var("CLAUDEOPS_TIER").as_deref() {
                Some(t @ ("1" | "2" | "3")) => t.parse().ok(),
                _ => None,
            });
            match installed_config(a.prefix.as_deref(), tier.unwrap_or(1)) {
                Ok(p) => p,
                Err(msg) => {
                    eprintln!("tiershim explain: {}", escape(&msg));
                    return Exit::Usage;
                }
            }
        }
    };
    let cfg = match &cfg_path {
        Some(p) => match InstallConfig::load_as_gate(p, install::hardened_gate(p)) {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("tiershim explain: {}", escape(&e.to_string()));
                return e.exit();
            }
        },
        None => None,
    };
    let cwd = a.cwd.clone().unwrap_or_else(|| ctx.cwd.clone());
    // Without a config: ceiling 3, the shipped skills, and the real tools found on this PATH.
    let cfg = cfg.unwrap_or_else(|| InstallConfig::admin_default(ctx.var("PATH").as_deref()));
    let fail = |e: Error| {
        eprintln!("tiershim explain: {}", escape(&e.to_string()));
        e.exit()
    };
    let policy = match judge::policy(tool, &cfg) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let call = Call {
        tool,
        args: Ok(args.to_vec()),
        cwd: &cwd,
        env: &ctx.env,
        tier: a.tier,
        dry_run: a.dry_run,
    };
    let mut source = Unlocked {
        cfg: &cfg,
        env: &ctx.env,
        cwd: &cwd,
        now: ctx.now,
    };
    let j = match judge::call(&cfg, &policy, &call, &mut source) {
        Ok(j) => j,
        Err(e) => return fail(e),
    };
    let (inv, d) = (&j.inv, &j.decision);
    let shown = crate::audit::shown_args(args, inv);
    let remote = inv.remote.as_deref().map(|r| AuditRecord::remote_of(r, d));
    let mut message = decision::render(d, &d.skill, &shown);
    // An allowed call whose real tool the gate cannot run ends as the gate's would: 127 for a
    // missing tool, 78 for one that is tiershim itself.
    let mut failure = None;
    // An install's gate runs no real tool without a trusted tool home either.
    let ready = crate::exec::resolve_real(&cfg, tool).and_then(|_| match &cfg_path {
        Some(_) => cfg.tool_home().map(|_| ()),
        None => Ok(()),
    });
    if d.verdict == Verdict::Allow
        && let Err(e) = ready
    {
        message = match &e {
            Error::RealMissing { .. } => decision::not_found_line(&d.skill, tool, &e.to_string()),
            other => format!("tiershim: {tool}: {}", escape(&other.to_string())),
        };
        failure = Some(e);
    }
    let verdict = if failure.is_some() { "error" } else { d.verdict.as_str() };
    let exit = match (&failure, d.verdict) {
        (Some(e), _) => e.exit(),
        (None, Verdict::Allow | Verdict::DryRun) => Exit::Ok,
        (None, Verdict::Refuse) => Exit::Refused,
    };
    let config_shown = cfg_path.as_ref().map_or_else(
        || "(none: the embedded policy, ceiling 3, the real tools on PATH)".to_string(),
        |p| p.display().to_string(),
    );
    if a.json {
        let v = json!({
            "verdict": verdict,
            "exit": exit.code(),
            "config": config_shown,
            "tool": d.tool.name(),
            "verb": d.verb,
            "skill": d.skill,
            "required_tier": d.required_tier,
            "effective_tier": d.effective_tier,
            "dry_run": d.dry_run,
            "rule": d.rule,
            "reasons": d.reasons,
            "what": d.what,
            "instead": d.instead,
            "actions": inv.actions.iter().map(|x| json!({
                "verb": x.verb,
                "marks": x.marks,
                "http": x.http.as_ref().map(|h| json!({"method": h.method, "path": h.path})),
            })).collect::<Vec<_>>(),
            "scope": d.scope,
            "remote": remote,
            "cooldown": d.cooldown,
            "message": message,
        });
        println!("{v}");
    } else {
        println!("config:         {}", escape(&config_shown));
        println!("verdict:        {verdict}");
        println!("tool:           {}", d.tool);
        println!("verb:           {}", escape(&d.verb));
        println!("skill:          {}", d.skill);
        println!("required tier:  {}", d.required_tier);
        println!("effective tier: {}", d.effective_tier);
        println!("dry run:        {}", if d.dry_run { "on" } else { "off" });
        println!("rule:           {}", d.rule);
        for x in &inv.actions {
            let marks: Vec<&str> = x.marks.iter().map(String::as_str).collect();
            println!("action:         {} [{}]", escape(&x.verb), escape(&marks.join(", ")));
        }
        if let Some(r) = &remote {
            let user = r.user.as_deref().map(|u| format!("{u}@")).unwrap_or_default();
            let port = r.port.as_deref().map(|p| format!(" port {p}")).unwrap_or_default();
            let jump = if r.jump.is_empty() {
                String::new()
            } else {
                format!(" via {}", r.jump.join(", "))
            };
            println!("remote:         {user}{}{port}{jump}", r.host);
            println!("command:        {}", r.command);
            if let Some(cd) = &r.cd {
                println!("cd:             {cd}");
            }
            for p in &r.parts {
                println!(
                    "part:           {} → {} (rule {}, tier {})",
                    p.argv.join(" "),
                    p.shown,
                    p.rule,
                    p.required_tier
                );
            }
        }
        println!("reasons:");
        for r in &d.reasons {
            println!("  - {r}");
        }
        match &d.scope {
            None => println!("scope:          not checked (this call changes no files the skills' path rules cover)"),
            Some(r) => {
                println!("scope:          {} file(s) from {}", r.files.len(), escape(&r.how));
                for f in r.files.iter().take(50) {
                    println!("  - {}", escape(f));
                }
                if r.files.len() > 50 {
                    println!("  … and {} more", r.files.len() - 50);
                }
                println!("rules from:     {}", escape(&r.rules_from.join(", ")));
                for v in &r.violations {
                    println!("violation:      {} {}", escape(&v.path), escape(&v.describe()));
                }
            }
        }
        for c in &d.cooldown {
            let next = c
                .next_allowed
                .map(|t| format!("; next allowed at {}", crate::time::format_time(t)))
                .unwrap_or_default();
            println!(
                "cooldown:       {} {}: {}, this call adds {}{}{next}",
                escape(&c.key),
                c.class,
                c.counts(),
                c.adding,
                if c.allowed { "" } else { " (spent)" }
            );
        }
        println!("message:        {message}");
    }
    exit
}

/// The tiershim.yaml of tier `tier` in the installation at `prefix`, else in the one this binary
/// belongs to (`<prefix>/bin/tiershim`). None: this binary belongs to no installation, and
/// `--prefix` was not given. An installation without that tier is an error.
fn installed_config(prefix: Option<&Path>, tier: u8) -> Result<Option<PathBuf>, String> {
    let given = prefix.is_some();
    let prefix = match prefix {
        Some(p) => p.to_path_buf(),
        None => {
            let exe =
                std::fs::read_link("/proc/self/exe").map_err(|e| format!("cannot tell where this binary is ({e}); pass --config FILE"))?;
            match exe.parent().and_then(Path::parent) {
                Some(p) => p.to_path_buf(),
                None => return Ok(None),
            }
        }
    };
    let tiers = prefix.join("lib/tiershim");
    if !given && !tiers.is_dir() {
        return Ok(None);
    }
    let cfg = tiers.join(format!("tier{tier}")).join(install::FILE_NAME);
    if cfg.is_file() {
        Ok(Some(cfg))
    } else {
        Err(format!(
            "no {} in the installation at {}: install tier {tier}, or pass --config FILE",
            cfg.display(),
            prefix.display()
        ))
    }
}
