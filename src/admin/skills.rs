//! `tiershim skills list | show NAME | validate`: what was found where, which copy is the
//! instructions for which repository, the parsed sections and extracted patterns, and lint
//! findings. It reads skills with the same code the gate uses (`skill`, `scope`).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::context::Context;
use crate::exit::Exit;
use crate::install::InstallConfig;
use crate::sanitize::escape;
use crate::scope::Rules;
use crate::skill::served::{Meta, Scanner, Selection};
use crate::skill::{Catalog, Level, Location, Skill, Sources};

#[derive(Debug, clap::Args)]
pub struct Common {
    /// The tiershim.yaml whose skills to read (its `skills:`). Default: the shipped skills.
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    /// Print JSON.
    #[arg(long, global = true)]
    json: bool,
    /// Read the skills `tiershim mcp --skills-dir DIR` serves: every SKILL.md at any depth
    /// (absolute; repeatable; an earlier directory wins for a skill found twice, and `list` shows
    /// the copies it shadows).
    #[arg(long = "skills-dir", value_name = "DIR", global = true)]
    skills_dir: Vec<PathBuf>,
    /// Read the skills `tiershim mcp` serves without --config or --skills-dir: ./.agent/skills,
    /// ~/.agent/skills, ./.claude/skills, ~/.claude/skills, the first copy of a skill winning.
    #[arg(long, global = true, conflicts_with_all = ["config", "skills_dir"])]
    agent_dirs: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Every skill found, where, and which copy each repository uses.
    List,
    /// One skill's parsed sections, Tier Requirement, path patterns and findings.
    Show {
        /// The skill's name (its file name without .md, or its directory for SKILL.md).
        name: String,
    },
    /// Lint every skill; exit 78 when one has an error that would refuse calls that need it.
    Validate,
}

pub fn run(ctx: &Context, cmd: Command, c: Common) -> Exit {
    if c.agent_dirs || !c.skills_dir.is_empty() {
        return served_view(ctx, cmd, c);
    }
    let sources = match &c.config {
        None => Sources::from_config(None),
        Some(p) => match InstallConfig::load(p, false) {
            Ok(cfg) => Sources::from_config(cfg.skills.as_ref()),
            Err(e) => {
                eprintln!("tiershim skills: {}", escape(&e.to_string()));
                return e.exit();
            }
        },
    };
    let catalog = Catalog::load(&sources);
    match cmd {
        Command::List => list(&catalog, c.json),
        Command::Show { name } => show(&catalog, &name, c.json),
        Command::Validate => validate(&catalog, c.json),
    }
}

fn location_json(l: &Location) -> Value {
    match l {
        Location::Repo(r) => json!({"kind": "repo", "repo": r}),
        Location::Dir(d) => json!({"kind": "dir", "dir": d}),
        other => json!({"kind": other.to_string()}),
    }
}

fn patterns(s: &Skill) -> (Vec<&str>, Option<Vec<&str>>) {
    let deny = s.parsed.deny.iter().map(|p| p.text.as_str()).collect();
    let allow = s.parsed.allow.as_ref().map(|a| a.iter().map(|p| p.text.as_str()).collect());
    (deny, allow)
}

/// For a baseline skill, the repositories whose copy of the same name replaces it as
/// instructions; for a repository skill, the baseline copy it replaces.
fn relations(catalog: &Catalog, s: &Skill) -> (Vec<String>, Option<String>) {
    let same = catalog.skills.iter().filter(|o| o.name == s.name && o.shown != s.shown);
    match &s.location {
        Location::Repo(_) => (
            Vec::new(),
            same.filter(|o| matches!(o.location, Location::Baseline | Location::Embedded))
                .map(|o| o.shown.clone())
                .next(),
        ),
        _ => (
            same.filter_map(|o| match &o.location {
                Location::Repo(r) => Some(r.clone()),
                _ => None,
            })
            .collect(),
            None,
        ),
    }
}

fn list(catalog: &Catalog, as_json: bool) -> Exit {
    if as_json {
        let v: Vec<Value> = catalog
            .skills
            .iter()
            .map(|s| {
                let (deny, allow) = patterns(s);
                let (overridden_in, replaces) = relations(catalog, s);
                json!({
                    "name": s.name,
                    "file": s.shown,
                    "location": location_json(&s.location),
                    "layout": s.layout,
                    "description": s.description(),
                    "tier": s.parsed.tier.map(|t| t.tier),
                    "deny": deny,
                    "allow": allow,
                    "errors": s.parsed.findings.iter().filter(|f| f.level == Level::Error).count(),
                    "warnings": s.parsed.findings.iter().filter(|f| f.level == Level::Warning).count(),
                    "overridden_in": overridden_in,
                    "replaces": replaces,
                })
            })
            .collect();
        println!("{}", json!({"skills": v, "problems": catalog.problems}));
        return Exit::Ok;
    }
    println!("{:<22} {:<16} {:<5} {:>4} {:>5}  FILE", "NAME", "LOCATION", "TIER", "DENY", "ALLOW");
    for s in &catalog.skills {
        let (deny, allow) = patterns(s);
        let tier = s.parsed.tier.map(|t| t.tier.to_string()).unwrap_or_else(|| "-".into());
        let allow = allow.map(|a| a.len().to_string()).unwrap_or_else(|| "-".into());
        println!(
            "{:<22} {:<16} {:<5} {:>4} {:>5}  {}",
            escape(&s.name),
            escape(&s.location.to_string()),
            tier,
            deny.len(),
            allow,
            escape(&s.shown)
        );
        let (overridden_in, replaces) = relations(catalog, s);
        if !overridden_in.is_empty() {
            println!(
                "{:<22} instructions replaced in {}; path rules add up",
                "",
                escape(&overridden_in.join(", "))
            );
        }
        if let Some(base) = replaces {
            println!("{:<22} replaces {} for this repository; path rules add up", "", escape(&base));
        }
    }
    for p in &catalog.problems {
        println!("! {}: {}", escape(&p.path), escape(&p.message));
    }
    Exit::Ok
}

fn show(catalog: &Catalog, name: &str, as_json: bool) -> Exit {
    let copies: Vec<&Skill> = catalog.skills.iter().filter(|s| s.name == name).collect();
    if copies.is_empty() {
        eprintln!(
            "tiershim skills show: no skill named `{}` (tiershim skills list shows them)",
            escape(name)
        );
        return Exit::Usage;
    }
    if as_json {
        let v: Vec<Value> = copies
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "file": s.shown,
                    "location": location_json(&s.location),
                    "layout": s.layout,
                    "title": s.parsed.title,
                    "description": s.description(),
                    "sections": s.parsed.sections,
                    "tier": s.parsed.tier,
                    "deny": s.parsed.deny,
                    "allow": s.parsed.allow,
                    "findings": s.parsed.findings,
                })
            })
            .collect();
        println!("{}", json!({"name": name, "copies": v}));
        return Exit::Ok;
    }
    for s in copies {
        println!(
            "{} ({}, {})",
            escape(&s.shown),
            escape(&s.location.to_string()),
            if s.layout == crate::skill::Layout::AgentSkill {
                "SKILL.md"
            } else {
                "name.md"
            }
        );
        if let Some(t) = &s.parsed.title {
            println!("  title:       {}", escape(t));
        }
        println!("  description: {}", escape(&s.description()));
        let names: Vec<&str> = s.parsed.sections.iter().map(|x| x.name.as_str()).collect();
        println!("  sections:    {}", escape(&names.join(", ")));
        match s.parsed.tier {
            Some(t) => println!("  tier:        {} (line {})", t.tier, t.line),
            None => println!("  tier:        none (raises nothing)"),
        }
        for p in &s.parsed.deny {
            println!("  deny:        {}  (line {}, {:?})", escape(&p.text), p.line, p.origin);
        }
        if let Some(allow) = &s.parsed.allow {
            for p in allow {
                println!("  allow:       {}  (line {})", escape(&p.text), p.line);
            }
        }
        for f in &s.parsed.findings {
            println!("  {:?}: {}", f.level, escape(&f.message));
        }
    }
    Exit::Ok
}

/// Every error `validate` counts, one line each (`file: message`), for `tiershim doctor`.
pub(crate) fn errors(catalog: &Catalog) -> Vec<String> {
    let mut out: Vec<String> = catalog.problems.iter().map(|p| format!("{}: {}", p.path, p.message)).collect();
    for s in &catalog.skills {
        for f in s.parsed.findings.iter().filter(|f| f.level == Level::Error) {
            out.push(format!("{}: {}", s.shown, f.message));
        }
        if let Err(p) = Rules::build(std::slice::from_ref(s)) {
            out.push(format!("{}: {}", s.shown, p.message));
        }
    }
    out
}

fn validate(catalog: &Catalog, as_json: bool) -> Exit {
    let mut files = Vec::new();
    let mut errors = catalog.problems.len();
    let mut warnings = 0;
    for s in &catalog.skills {
        let mut findings: Vec<Value> = s
            .parsed
            .findings
            .iter()
            .map(|f| json!({"level": f.level, "message": f.message}))
            .collect();
        errors += s.parsed.findings.iter().filter(|f| f.level == Level::Error).count();
        warnings += s.parsed.findings.iter().filter(|f| f.level == Level::Warning).count();
        if let Err(p) = Rules::build(std::slice::from_ref(s)) {
            errors += 1;
            findings.push(json!({"level": Level::Error, "message": p.message}));
        }
        files.push(json!({"name": s.name, "file": s.shown, "findings": findings}));
    }
    if as_json {
        println!(
            "{}",
            json!({"files": files, "problems": catalog.problems, "errors": errors, "warnings": warnings})
        );
    } else {
        for f in &files {
            let list = f["findings"].as_array().cloned().unwrap_or_default();
            let mark = if list.iter().any(|x| x["level"] == "error") { "✗" } else { "✓" };
            println!("{mark} {}", escape(f["file"].as_str().unwrap_or("")));
            for x in list {
                println!(
                    "    {}: {}",
                    x["level"].as_str().unwrap_or(""),
                    escape(x["message"].as_str().unwrap_or(""))
                );
            }
        }
        for p in &catalog.problems {
            println!("✗ {}: {}", escape(&p.path), escape(&p.message));
        }
        println!("{} skill file(s), {errors} error(s), {warnings} warning(s)", catalog.skills.len());
    }
    if errors > 0 { Exit::Config } else { Exit::Ok }
}

/// `--skills-dir` / `--agent-dirs`: the skills as `tiershim mcp` serves them. `list` shows
/// which copy of each name is served and which copies it shadows; `show` and `validate` read
/// every copy in those directories.
fn served_view(ctx: &Context, cmd: Command, c: Common) -> Exit {
    for d in &c.skills_dir {
        if !d.is_absolute() {
            eprintln!(
                "tiershim skills: --skills-dir {}: give an absolute path",
                escape(&d.display().to_string())
            );
            return Exit::Usage;
        }
    }
    let install = match &c.config {
        None => None,
        Some(p) => match InstallConfig::load(&ctx.cwd.join(p), false) {
            Ok(cfg) => Some(Sources::from_config(cfg.skills.as_ref())),
            Err(e) => {
                eprintln!("tiershim skills: {}", escape(&e.to_string()));
                return e.exit();
            }
        },
    };
    let selection = Selection {
        install,
        dirs: c.skills_dir.clone(),
        cwd: ctx.cwd.clone(),
        home: ctx.var("HOME").filter(|h| h.starts_with('/')).map(PathBuf::from),
    };
    let catalog = Catalog::from_dirs(&selection.source_dirs());
    match cmd {
        Command::List => served_list(&Scanner::new(selection), c.json),
        Command::Show { name } => show(&catalog, &name, c.json),
        Command::Validate => validate(&catalog, c.json),
    }
}

fn meta_json(m: &Meta) -> Value {
    json!({
        "name": m.name,
        "file": m.shown,
        "location": location_json(&m.location),
        "layout": m.layout,
        "description": m.description,
        "tier": m.tier,
        "deny": m.deny,
        "allow": m.allow,
    })
}

fn served_list(scanner: &Scanner, as_json: bool) -> Exit {
    let served = &scanner.served;
    if as_json {
        let mut rows = Vec::new();
        for e in &served.entries {
            let mut v = meta_json(&e.meta);
            v["tier_required"] = json!(e.tier_required);
            v["served"] = json!(true);
            v["shadows"] = json!(e.shadows);
            v["shadowed_by"] = Value::Null;
            rows.push(v);
        }
        for (m, by) in &served.shadowed {
            let mut v = meta_json(m);
            v["served"] = json!(false);
            v["shadows"] = json!([]);
            v["shadowed_by"] = json!(by);
            rows.push(v);
        }
        println!("{}", json!({"skills": rows, "problems": served.problems}));
        return Exit::Ok;
    }
    println!("{:<22} {:<5} {:<30}  FILE", "NAME", "TIER", "LOCATION");
    for e in &served.entries {
        let tier = e.tier_required.map(|t| t.to_string()).unwrap_or_else(|| "-".into());
        println!(
            "{:<22} {:<5} {:<30}  {}",
            escape(e.id()),
            tier,
            escape(&e.meta.location.to_string()),
            escape(&e.meta.shown)
        );
        for f in &e.shadows {
            println!("{:<22} shadows {}", "", escape(f));
        }
    }
    for p in &served.problems {
        println!("! {}: {}", escape(&p.path), escape(&p.message));
    }
    Exit::Ok
}
