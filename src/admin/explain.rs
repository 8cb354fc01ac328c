//! `tiershim explain`: the decision the gate would make, from the same `decide()`.

use std::path::PathBuf;

use serde_json::json;

use crate::audit::AuditRecord;
use crate::context::Context;
use crate::decision::{self, Verdict};
use crate::exit::Exit;
use crate::gate;
use crate::install::InstallConfig;
use crate::policy::Policy;
use crate::sanitize::escape;
use crate::tool::Tool;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A tiershim.yaml to judge with (tier ceiling, pinned env, policy override). Without it:
    /// the embedded policy and a ceiling of 3.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The agent's tier (as CLAUDEOPS_TIER would set it); default: this environment's.
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
    let cfg = match &a.config {
        Some(p) => match InstallConfig::load(p, false) {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("tiershim explain: {}", escape(&e.to_string()));
                return e.exit();
            }
        },
        None => None,
    };
    let policy = match Policy::load(tool, cfg.as_ref().and_then(|c| c.policy.as_deref())) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("tiershim explain: {}", escape(&e.to_string()));
            return e.exit();
        }
    };
    let cwd = a.cwd.clone().unwrap_or_else(|| ctx.cwd.clone());
    let (inv, local) = gate::understand(tool, args, &cwd);
    // Scripts are judged as the gate judges them: -f files from --cwd, a piped stdin.
    let (inv, _) = crate::script_input::gather(tool, args, inv, &cwd);
    // Without a config: ceiling 3, the shipped skills, and the real tools found on this PATH.
    let cfg = cfg.unwrap_or_else(|| InstallConfig::admin_default(ctx.var("PATH").as_deref()));
    let var = |name: &str| ctx.var(name);
    let mut req = gate::request(&cfg, &policy, &inv, &var);
    req.local = local;
    if inv.remote.is_some() {
        match gate::remote_policies(&cfg, &inv) {
            Ok(p) => req.policies = p,
            Err(e) => {
                eprintln!("tiershim explain: {}", escape(&e.to_string()));
                return e.exit();
            }
        }
    }
    if let Some(t) = a.tier {
        req.env_tier = Some(t.to_string());
    }
    if a.dry_run {
        req.dry_run_pinned = true;
    }
    let mut d = decision::decide(&inv, &policy, &req);
    if !d.needs.is_empty() {
        let cwd = a.cwd.clone().unwrap_or_else(|| ctx.cwd.clone());
        match gate::gather(&cfg, &cwd, &inv, &d.needs) {
            Ok(f) => req.facts = f,
            Err(e) => {
                eprintln!("tiershim explain: {}", escape(&e.to_string()));
                return e.exit();
            }
        }
        // The cooldown counts as they are now (no lock: explain records nothing).
        match gate::cooldown(&cfg, &d.needs, ctx.now, false) {
            Ok((_, f)) => req.facts.cooldown = f,
            Err(e) => {
                eprintln!("tiershim explain: {}", escape(&e.to_string()));
                return e.exit();
            }
        }
        d = decision::decide(&inv, &policy, &req);
    }
    let shown = gate::shown_args(args, &inv);
    let remote = inv.remote.as_deref().map(|r| AuditRecord::remote_of(r, &d));
    let message = decision::render(&d, &d.skill, &shown);
    if a.json {
        let v = json!({
            "verdict": d.verdict.as_str(),
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
            "actions": inv.actions.iter().map(|x| json!({"verb": x.verb, "marks": x.marks})).collect::<Vec<_>>(),
            "scope": d.scope,
            "remote": remote,
            "cooldown": d.cooldown,
            "message": message,
        });
        println!("{v}");
    } else {
        println!("verdict:        {}", d.verdict.as_str());
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
                .map(|t| format!("; next allowed at {}", crate::cooldown::format_time(t)))
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
    match d.verdict {
        Verdict::Allow | Verdict::DryRun => Exit::Ok,
        Verdict::Refuse => Exit::Refused,
    }
}
