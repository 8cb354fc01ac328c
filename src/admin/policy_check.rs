//! `tiershim policy check [DIR]`: load a policy, run every rule's examples through the same
//! grammar and `decide()` the gate uses, and report.

use std::path::PathBuf;

use crate::exit::Exit;
use crate::policy::{COMMON_YAML, Policy, check};
use crate::sanitize::escape;
use crate::tool::Tool;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// An override policy directory (as `policy:` in tiershim.yaml). Default: the embedded policy.
    dir: Option<PathBuf>,
}

pub fn run(a: Args) -> Exit {
    let mut ok = true;
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
    if ok { Exit::Ok } else { Exit::Config }
}
