//! `tiershim doctor [--config FILE | --prefix DIR] [--user USER] [--json]`: checks an
//! installation and says what is wrong. It prints a summary first, one line per gated tool
//! across the tiers and one per part of the installation, then the details (each check's
//! finding, merged across the tiers where it reads the same) with the fix. Exit 0 only when
//! every check holds, 78 otherwise.
//!
//! The checks are a table ([`TIER_CHECKS`]): a check is a function that looks at one tier
//! directory ([`Tier`], with its parsed config) and the installation as a whole ([`Install`]),
//! and reports to a [`Report`] under an [`Area`] (a tool, or a named part). A new check is a
//! function in a file of its own under `doctor/` and a line in the table. Before the tiers: the
//! binary, and that rbash is installed.
//!
//! It reads metadata and files; it executes nothing.

mod fence;
mod files;
mod records;
mod rules;
mod tool_env;
mod tools;

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use crate::access::{self, Principal};
use crate::exit::Exit;
use crate::install::{self, InstallConfig};
use crate::sanitize::escape;
use crate::tool::Tool;
use crate::vet::ExecCapable;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// One tier's tiershim.yaml (checks that tier directory only).
    #[arg(long, value_name = "FILE", conflicts_with = "prefix")]
    config: Option<PathBuf>,
    /// The installation (default: the one this binary belongs to); checks every tier in it.
    #[arg(long, value_name = "DIR")]
    prefix: Option<PathBuf>,
    /// The agent's account (name or uid), whose reach is checked. Default: the caller; for root,
    /// any unprivileged user.
    #[arg(long, value_name = "USER")]
    user: Option<String>,
    /// Directories (colon-separated) searched for other copies of the real tools, which the
    /// agent's user could run without the gate. Default: the standard PATH
    /// (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin) and PostgreSQL's
    /// /usr/lib/postgresql/*/bin.
    #[arg(long, value_name = "DIRS")]
    system_path: Option<String>,
    /// Print one JSON object: the summary and every finding.
    #[arg(long)]
    json: bool,
}

const SYSTEM_PATH: &[&str] = &["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/// What a finding is about: one gated tool (its link, its real binary, copies of it), or a
/// named part of the installation. The summary has one line per area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Area {
    Tool(Tool),
    Part(&'static str),
}

impl Area {
    fn name(self) -> &'static str {
        match self {
            Area::Tool(t) => t.name(),
            Area::Part(p) => p,
        }
    }
}

impl Serialize for Area {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The parts of an installation, in the order the summary shows them. A check reporting under
/// a part not listed here is shown after them.
const PARTS: &[&str] = &[
    "binary",
    "rbash",
    "tiers",
    "links",
    "config",
    "profile",
    "passthrough",
    "permissions",
    "audit log",
    "cooldown",
    "policy",
    "skills",
    "kernel fence",
    "claude shell",
    "tool home",
    "secrets",
    "pins",
    "workspaces",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Note,
    Bad,
}

/// One finding of one check in one tier directory (`tier: None`: the installation as a whole).
#[derive(Debug, Clone)]
struct Item {
    area: Area,
    tier: Option<String>,
    status: Status,
    what: String,
    fix: Option<String>,
}

/// What the checks found, in the order they found it.
#[derive(Default)]
pub struct Report {
    items: Vec<Item>,
    /// The tier directory whose checks are running (its name: `tier1`).
    tier: Option<String>,
    /// Keys of what is checked once per installation (a policy or skills directory the tiers
    /// share).
    done: BTreeSet<String>,
}

impl Report {
    fn push(&mut self, area: Area, status: Status, what: String, fix: Option<String>) {
        self.items.push(Item {
            area,
            tier: self.tier.clone(),
            status,
            what,
            fix,
        });
    }
    /// A check that holds.
    pub fn ok(&mut self, area: Area, what: impl Into<String>) {
        self.push(area, Status::Ok, what.into(), None);
    }
    /// A check that fails, with the fix.
    pub fn bad(&mut self, area: Area, what: impl Into<String>, fix: impl Into<String>) {
        self.push(area, Status::Bad, what.into(), Some(fix.into()));
    }
    /// Something the operator should know that fails nothing.
    pub fn note(&mut self, area: Area, what: impl Into<String>) {
        self.push(area, Status::Note, what.into(), None);
    }
    /// True the first time `key` is asked for: for what the tiers share and is checked once.
    pub fn first_time(&mut self, key: String) -> bool {
        self.done.insert(key)
    }
    /// Run `f` with its findings about the installation as a whole, not the current tier (what
    /// the tiers share, such as the policy, names itself).
    pub fn shared(&mut self, f: impl FnOnce(&mut Report)) {
        let tier = self.tier.take();
        f(self);
        self.tier = tier;
    }
    fn failed(&self) -> usize {
        self.merged().iter().filter(|m| m.status == Status::Bad).count()
    }

    /// The findings with the same area, status, text and fix merged across tiers, in the order
    /// of their first appearance.
    fn merged(&self) -> Vec<Merged> {
        let mut out: Vec<Merged> = Vec::new();
        for i in &self.items {
            match out
                .iter_mut()
                .find(|m| m.area == i.area && m.status == i.status && m.what == i.what && m.fix == i.fix)
            {
                Some(m) => m.tiers.extend(i.tier.clone()),
                None => out.push(Merged {
                    area: i.area,
                    tiers: i.tier.clone().into_iter().collect(),
                    status: i.status,
                    what: i.what.clone(),
                    fix: i.fix.clone(),
                }),
            }
        }
        out
    }

    /// One line per area: every tool, then the parts in [`PARTS`] order.
    fn summary(&self) -> Vec<Merged> {
        let mut areas: Vec<Area> = Tool::ALL.iter().map(|t| Area::Tool(*t)).collect();
        let mut parts: Vec<&'static str> = PARTS.to_vec();
        for i in &self.items {
            if let Area::Part(p) = i.area
                && !parts.contains(&p)
            {
                parts.push(p);
            }
        }
        areas.extend(parts.into_iter().map(Area::Part));
        let merged = self.merged();
        let mut out = Vec::new();
        for area in areas {
            let of: Vec<&Merged> = merged.iter().filter(|m| m.area == area).collect();
            let bad: Vec<&&Merged> = of.iter().filter(|m| m.status == Status::Bad).collect();
            let line = if let Some(first) = bad.first() {
                let mut affected: Vec<String> = bad.iter().flat_map(|m| m.tiers.iter().cloned()).collect();
                affected.sort();
                affected.dedup();
                let mut whats: Vec<&str> = bad.iter().map(|m| m.what.as_str()).collect();
                whats.dedup();
                let more = if whats.len() > 1 {
                    format!(" (and {} more)", whats.len() - 1)
                } else {
                    String::new()
                };
                Merged {
                    area,
                    tiers: affected,
                    status: Status::Bad,
                    what: format!("{}{more}", first.what),
                    fix: first.fix.clone(),
                }
            } else if of.is_empty() {
                continue;
            } else {
                let oks: Vec<&&Merged> = of.iter().filter(|m| m.status == Status::Ok).collect();
                let mut checked: Vec<String> = of.iter().flat_map(|m| m.tiers.iter().cloned()).collect();
                checked.sort();
                checked.dedup();
                let (status, what) = match oks.as_slice() {
                    [one] => (Status::Ok, one.what.clone()),
                    // Only notes (a tool that is not installed): the first of them.
                    [] => (Status::Note, of.first().map_or_else(String::new, |m| m.what.clone())),
                    _ => (Status::Ok, "holds".into()),
                };
                Merged {
                    area,
                    tiers: checked,
                    status,
                    what,
                    fix: None,
                }
            };
            out.push(line);
        }
        out
    }
}

/// A finding as printed: merged across the tiers where it reads the same.
#[derive(Debug, Clone, Serialize)]
struct Merged {
    area: Area,
    tiers: Vec<String>,
    status: Status,
    what: String,
    fix: Option<String>,
}

impl Merged {
    fn tiers_label(&self) -> String {
        if self.tiers.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.tiers.join(", "))
        }
    }

    /// A line of the details: `✓ tier1: …`, `✗ tier1, tier2: …; fix: …`, `  note: …`.
    fn detail(&self) -> String {
        let what = escape(&self.what);
        match self.status {
            Status::Ok => format!("✓ {}{what}", self.tiers_label()),
            Status::Note => format!("  note: {}{what}", self.tiers_label()),
            Status::Bad => format!("✗ {}{what}; fix: {}", self.tiers_label(), escape(self.fix.as_deref().unwrap_or(""))),
        }
    }

    /// A line of the summary: `✓ docker       tier1, tier2, tier3: gated; real /usr/bin/docker`, or
    /// `– helm …` for an area with notes only (a tool that is not installed).
    fn summary(&self) -> String {
        let mark = match self.status {
            Status::Bad => "✗",
            Status::Ok => "✓",
            Status::Note => "–",
        };
        format!("{mark} {:<12} {}{}", self.area.name(), self.tiers_label(), escape(&self.what))
    }
}

/// Where an area's lines go: the tools in their order, then the parts in [`PARTS`] order, then
/// any other part.
fn area_rank(a: Area) -> usize {
    match a {
        Area::Tool(t) => Tool::ALL.iter().position(|x| *x == t).unwrap_or(0),
        Area::Part(p) => Tool::ALL.len() + PARTS.iter().position(|x| *x == p).unwrap_or(PARTS.len()),
    }
}

/// What a check needs to know about the installation as a whole.
pub struct Install {
    /// The tiershim binary the links must point at.
    pub binary: PathBuf,
    /// The setgid group, when the binary is installed setgid (hardened).
    pub hardened: Option<u32>,
    pub agent: Principal,
    pub system_path: Vec<PathBuf>,
    pub table: ExecCapable,
}

/// One tier directory being checked.
pub struct Tier {
    /// Its name (`tier1`), as findings are labelled.
    pub name: String,
    pub dir: PathBuf,
    /// The `tiershim.yaml` in it.
    pub cfg_path: PathBuf,
    /// The tier its name says (`tier2`: 2).
    pub number: Option<u8>,
    /// The config, when it parsed and is trusted as the gate trusts it.
    pub cfg: Option<InstallConfig>,
}

/// A check of one tier directory.
type TierCheck = fn(&mut Report, &Install, &Tier);

/// The checks of each tier directory, in the order they run. The config is read first (into
/// [`Tier::cfg`]); a check that needs it returns when it did not parse.
const TIER_CHECKS: &[TierCheck] = &[
    files::links,
    files::profile,
    tools::real,
    files::passthrough,
    files::not_writable,
    records::audit_log,
    records::cooldown,
    rules::policy,
    rules::skills,
    fence::kernel_fence,
    fence::claude_shell,
    tool_env::tool_home,
    tool_env::secrets,
    tool_env::pins,
    tool_env::workspaces,
    tool_env::tool_configs,
];

pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

fn own_exe() -> PathBuf {
    std::fs::read_link("/proc/self/exe").unwrap_or_else(|_| PathBuf::from("/proc/self/exe"))
}

fn default_system_path() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SYSTEM_PATH.iter().map(PathBuf::from).collect();
    if let Ok(rd) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut versions: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path().join("bin")).collect();
        versions.sort();
        out.extend(versions);
    }
    out
}

pub fn run(a: Args) -> Exit {
    let table = match ExecCapable::embedded() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("tiershim doctor: {e}");
            return Exit::Internal;
        }
    };
    let agent = match &a.user {
        Some(u) => match Principal::lookup(u) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("tiershim doctor: --user {}: {e}", escape(u));
                return Exit::Usage;
            }
        },
        None => {
            let me = Principal::current();
            if me.is_root() { Principal::others() } else { me }
        }
    };
    let system_path = match &a.system_path {
        Some(s) => s.split(':').filter(|d| !d.is_empty()).map(PathBuf::from).collect(),
        None => default_system_path(),
    };
    let (dirs, binary) = match &a.config {
        Some(cfg) => {
            let dir = cfg.parent().unwrap_or(Path::new("/")).to_path_buf();
            let installed = dir.join("../../../bin/tiershim");
            let binary = std::fs::canonicalize(&installed).unwrap_or_else(|_| own_exe());
            (vec![(dir, cfg.clone())], binary)
        }
        None => {
            let prefix = match a
                .prefix
                .clone()
                .or_else(|| own_exe().parent().and_then(Path::parent).map(Path::to_path_buf))
            {
                Some(p) => p,
                None => {
                    eprintln!("tiershim doctor: cannot tell where this binary is installed; pass --prefix DIR");
                    return Exit::Usage;
                }
            };
            let mut dirs = Vec::new();
            for n in 1..=3 {
                let d = prefix.join("lib/tiershim").join(format!("tier{n}"));
                if d.is_dir() {
                    dirs.push((d.clone(), d.join(install::FILE_NAME)));
                }
            }
            (dirs, prefix.join("bin/tiershim"))
        }
    };
    let mut r = Report::default();
    if agent.is_root() {
        r.note(
            Area::Part("permissions"),
            "the agent's user is root: it can reach and write everything, so nothing below can protect the tools from it",
        );
    }
    let hardened = tools::binary(&mut r, &binary, &agent);
    if dirs.is_empty() {
        r.bad(
            Area::Part("tiers"),
            format!(
                "no tier directories under {}",
                binary
                    .parent()
                    .and_then(Path::parent)
                    .unwrap_or(Path::new("/"))
                    .join("lib/tiershim")
                    .display()
            ),
            "lay them out with install.sh --prefix DIR (from the source tree, or the package's \
             /usr/share/tiershim/install.sh), then check them with tiershim doctor --prefix DIR",
        );
    }
    let install = Install {
        binary,
        hardened,
        agent,
        system_path,
        table,
    };
    tools::rbash(&mut r);
    let mut names = Vec::new();
    for (dir, cfg_path) in &dirs {
        let tier = files::config(&mut r, &install, dir, cfg_path);
        names.push(tier.name.clone());
        r.tier = Some(tier.name.clone());
        for check in TIER_CHECKS {
            check(&mut r, &install, &tier);
        }
        r.tier = None;
    }
    print(&r, &install, &names, a.json)
}

/// The checks `doctor --prefix PREFIX --user …` makes of one tier directory, as the failed
/// lines (`✗ …; fix: …`); empty when every check holds. `tiershim launch` refuses on any.
pub fn failures(prefix: &Path, tier: u8, agent: Principal, system_path: Option<&str>) -> Vec<String> {
    let table = match ExecCapable::embedded() {
        Ok(t) => t,
        Err(e) => return vec![format!("✗ {e}")],
    };
    let mut r = Report::default();
    let binary = prefix.join("bin/tiershim");
    let hardened = tools::binary(&mut r, &binary, &agent);
    let install = Install {
        binary,
        hardened,
        agent,
        system_path: match system_path {
            Some(s) => s.split(':').filter(|d| !d.is_empty()).map(PathBuf::from).collect(),
            None => default_system_path(),
        },
        table,
    };
    tools::rbash(&mut r);
    let dir = prefix.join("lib/tiershim").join(format!("tier{tier}"));
    let cfg_path = dir.join(install::FILE_NAME);
    let t = files::config(&mut r, &install, &dir, &cfg_path);
    r.tier = Some(t.name.clone());
    for check in TIER_CHECKS {
        check(&mut r, &install, &t);
    }
    r.merged().iter().filter(|m| m.status == Status::Bad).map(Merged::detail).collect()
}

fn print(r: &Report, inst: &Install, tiers: &[String], as_json: bool) -> Exit {
    let failed = r.failed();
    let summary = r.summary();
    let mut details = r.merged();
    details.sort_by_key(|d| area_rank(d.area));
    if as_json {
        let v = json!({
            "binary": inst.binary.display().to_string(),
            "agent": inst.agent.label,
            "hardened": inst.hardened.is_some(),
            "tiers": tiers,
            "ok": failed == 0,
            "failed": failed,
            "summary": summary,
            "checks": details,
        });
        println!("{v}");
    } else {
        println!(
            "tiershim doctor: checking {} as {}",
            escape(&inst.binary.display().to_string()),
            escape(&inst.agent.label)
        );
        println!();
        println!("summary:");
        for s in &summary {
            println!("{}", s.summary());
        }
        println!();
        println!("details:");
        for d in &details {
            println!("{}", d.detail());
        }
        println!();
        if failed == 0 {
            println!("all checks hold");
        } else {
            println!("{failed} check(s) failed");
        }
    }
    if failed == 0 { Exit::Ok } else { Exit::Config }
}

/// The agent's user can search every directory down to `path` and write it.
pub fn agent_may_write_dir(agent: &Principal, dir: &Path) -> bool {
    std::fs::metadata(dir).is_ok_and(|m| agent.may(&m, access::Perm::Write) && agent.may(&m, access::Perm::Exec))
}
