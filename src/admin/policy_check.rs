//! `tiershim policy check [DIR]`: load a policy, run every rule's examples through the same
//! grammar and `decide()` the gate uses, load the cooldown budgets, and report.

use std::path::PathBuf;

use crate::exit::Exit;
use crate::judge::examples as check;
use crate::policy::{COMMON_YAML, Policy};
use crate::sanitize::escape;
use crate::tool::Tool;
use crate::vet::{self, ExecCapable};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// An override policy directory (as `policy:` in tiershim.yaml). Default: the embedded policy.
    dir: Option<PathBuf>,
    /// A passthrough list to vet (the format of shims/passthrough). Default: the shipped list.
    #[arg(long, value_name = "FILE")]
    passthrough: Option<PathBuf>,
}

pub fn run(a: Args) -> Exit {
    let mut ok = true;
    if let Some(dir) = &a.dir {
        match crate::policy::check_dir(dir) {
            Ok(()) => println!("✓ {}: holds only files the policy knows", dir.display()),
            Err(e) => {
                println!("✗ {}", escape(&e.to_string()));
                return Exit::Config;
            }
        }
    }
    for tool in Tool::ALL {
        let loaded = match &a.dir {
            None => Policy::embedded_with_examples(tool),
            Some(dir) => {
                let path = dir.join(format!("{}.yaml", tool.name()));
                let common = std::fs::read_to_string(dir.join("common.yaml")).unwrap_or_else(|_| COMMON_YAML.to_string());
                match std::fs::read_to_string(&path) {
                    Ok(text) => Policy::from_yaml(tool, &text, &common, path.display().to_string()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        println!("- {tool}: no {} here; the embedded policy applies", path.display());
                        continue;
                    }
                    Err(e) => {
                        ok = false;
                        println!("✗ {tool}: cannot read {}: {e}", path.display());
                        continue;
                    }
                }
            }
        };
        let policy = match loaded {
            Ok(p) => p,
            Err(e) => {
                ok = false;
                println!("✗ {tool}: {}", escape(&e.to_string()));
                continue;
            }
        };
        let failures = check::run_examples_in(&policy, a.dir.as_deref());
        let examples: usize = policy.examples.iter().map(|e| e.allow.len() + e.refuse.len()).sum();
        if failures.is_empty() {
            println!(
                "✓ {tool}: {} rules, {examples} examples hold ({})",
                policy.rules.len(),
                policy.source
            );
        } else {
            ok = false;
            println!("✗ {tool}: {} of {examples} examples disagree ({})", failures.len(), policy.source);
            for f in failures {
                println!("    {}", escape(&f));
            }
        }
    }
    match crate::policy::cooldown::Budgets::load(a.dir.as_deref()) {
        Ok(b) => {
            let per: Vec<String> = b
                .default
                .iter()
                .map(|(c, x)| format!("{c} {} in {}", x.max, crate::policy::cooldown::window_text(x.window)))
                .collect();
            println!(
                "✓ cooldown budgets: {}; {} service override(s) ({})",
                per.join(", "),
                b.services.len(),
                b.source
            );
        }
        Err(e) => {
            ok = false;
            println!("✗ cooldown budgets: {}", escape(&e.to_string()));
        }
    }
    if !check_passthrough(a.passthrough.as_deref()) {
        ok = false;
    }
    if ok { Exit::Ok } else { Exit::Config }
}

/// Vet a passthrough list against the table of exec-capable programs.
fn check_passthrough(file: Option<&std::path::Path>) -> bool {
    let (shown, text) = match file {
        None => ("(shipped) shims/passthrough".to_string(), vet::PASSTHROUGH.to_string()),
        Some(f) => match std::fs::read_to_string(f) {
            Ok(t) => (f.display().to_string(), t),
            Err(e) => {
                println!("✗ passthrough: cannot read {}: {e}", f.display());
                return false;
            }
        },
    };
    let table = match ExecCapable::embedded() {
        Ok(t) => t,
        Err(e) => {
            println!("✗ passthrough: {e}");
            return false;
        }
    };
    let findings = vet::vet_list(&text, &table);
    if findings.is_empty() {
        let (list, _) = vet::parse_list(&text);
        println!(
            "✓ passthrough: {} tools, none in the {} programs known to run programs or write files ({shown})",
            list.len(),
            table.len()
        );
        return true;
    }
    println!("✗ passthrough: {} problem(s) in {shown}", findings.len());
    for f in findings {
        println!("    {}", escape(&f));
    }
    false
}
