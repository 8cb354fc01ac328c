//! What the gate decides with: the policy (its examples hold) and the skills (they validate).
//! Each is checked once per installation when the tiers share it.

use super::{Area, Install, Report, Tier};
use crate::judge::examples as check;
use crate::policy::Policy;
use crate::skill::{Catalog, Sources};
use crate::tool::Tool;

/// The policy the tier uses loads, and every rule's examples hold.
pub fn policy(r: &mut Report, _inst: &Install, t: &Tier) {
    let Some(cfg) = &t.cfg else { return };
    let dir = cfg.policy.as_deref();
    if r.first_time(format!("policy {dir:?}")) {
        r.shared(|r| policy_of(r, dir));
    }
}

fn policy_of(r: &mut Report, dir: Option<&std::path::Path>) {
    const AREA: Area = Area::Part("policy");
    let shown = dir.map(|d| d.display().to_string()).unwrap_or_else(|| "embedded".into());
    if let Some(d) = dir
        && let Err(e) = crate::policy::check_dir(d)
    {
        r.bad(
            AREA,
            e.to_string(),
            "fix `policy:` in tiershim.yaml or the directory; every gated call is refused until then",
        );
        return;
    }
    let mut rules = 0;
    let mut examples = 0;
    let mut fine = true;
    for tool in Tool::ALL {
        let loaded = match dir {
            None => Policy::embedded_with_examples(tool),
            // An override without this tool's file falls back to the embedded policy.
            Some(d) if d.join(format!("{}.yaml", tool.name())).exists() => crate::judge::policy_in(tool, Some(d)),
            Some(_) => Policy::embedded_with_examples(tool),
        };
        match loaded {
            Ok(p) => {
                let failures = check::run_examples(&p);
                rules += p.rules.len();
                examples += p.examples.iter().map(|e| e.allow.len() + e.refuse.len()).sum::<usize>();
                for f in failures {
                    fine = false;
                    r.bad(
                        AREA,
                        format!("policy ({shown}) {tool}: {f}"),
                        "fix the rule or its example; tiershim policy check shows them all",
                    );
                }
            }
            Err(e) => {
                fine = false;
                r.bad(
                    AREA,
                    format!("policy ({shown}) {tool}: {e}"),
                    "fix the policy file; tiershim policy check DIR shows the details",
                );
            }
        }
    }
    if fine {
        r.ok(AREA, format!("policy ({shown}): {rules} rules, {examples} examples hold"));
    }
}

/// Every skill the tier reads validates.
pub fn skills(r: &mut Report, _inst: &Install, t: &Tier) {
    let Some(cfg) = &t.cfg else { return };
    let sources = Sources::from_config(cfg.skills.as_ref());
    if r.first_time(format!("skills {:?} {:?}", sources.baseline, sources.repos)) {
        r.shared(|r| skills_of(r, &sources, &t.cfg_path));
    }
}

fn skills_of(r: &mut Report, sources: &Sources, cfg_path: &std::path::Path) {
    const AREA: Area = Area::Part("skills");
    let catalog = Catalog::load(sources);
    let errors = crate::admin::skills::errors(&catalog);
    let shown = match (&sources.baseline, &sources.repos) {
        (Some(b), Some(repos)) => format!("{} and {}/*/.claude-ops/skills", b.display(), repos.display()),
        (Some(b), None) => b.display().to_string(),
        (None, Some(repos)) => format!("the shipped skills and {}/*/.claude-ops/skills", repos.display()),
        (None, None) => "the shipped skills".into(),
    };
    if errors.is_empty() {
        r.ok(AREA, format!("skills ({shown}): {} skill files validate", catalog.skills.len()));
        return;
    }
    for e in errors {
        r.bad(
            AREA,
            format!("skills ({shown}): {e}"),
            format!(
                "fix the skill; tiershim skills validate --config {} lists every finding",
                cfg_path.display()
            ),
        );
    }
}
