//! Policy: per-tool YAML in `policy/` -> [`PolicyFile`] (serde mirror, unknown keys refused) ->
//! validated [`Policy`]. The default policy is compiled at build time into static tables
//! (`build.rs` writes `crate::tables` from the YAML, without the examples), so a gated call
//! parses nothing to read it: one tool's rules are turned into the engine's form. An override
//! directory named in `tiershim.yaml` is parsed from YAML and its examples are run before it is
//! used.
//!
//! This module must not decide anything: matching lives in `decision.rs`.

pub mod cooldown;
pub mod endpoints;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::tables;
use crate::tool::Tool;

/// The lowest tier a rule needs, or never.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Required {
    Tier(u8),
    Never,
}

impl Required {
    /// Whether a call of this requirement changes something (dry-run applies to it).
    pub fn mutates(self) -> bool {
        self != Required::Tier(1)
    }
}

impl fmt::Display for Required {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Required::Tier(n) => write!(f, "{n}"),
            Required::Never => f.write_str("never"),
        }
    }
}

impl Serialize for Required {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Required::Tier(n) => s.serialize_u8(*n),
            Required::Never => s.serialize_str("never"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// File mirror

/// `tier:` as written: a number or a word. Deserialized by hand: serde's `untagged` buffers the
/// value and builds an error for every variant that does not fit, which was a tenth of a gated
/// call's instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TierFile {
    Number(i64),
    Word(String),
}

impl<'de> Deserialize<'de> for TierFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<TierFile, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = TierFile;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a tier: 1, 2, 3 or never")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<TierFile, E> {
                Ok(TierFile::Number(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<TierFile, E> {
                i64::try_from(v)
                    .map(TierFile::Number)
                    .map_err(|_| E::custom(format!("tier {v} is out of range")))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<TierFile, E> {
                Ok(TierFile::Word(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// In the schema of tiershim.yaml (`endpoints:`): what [`TierFile`]'s hand-written
/// deserializer takes and validation keeps.
#[cfg(test)]
impl schemars::JsonSchema for TierFile {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Tier".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A tier: 1, 2, 3 or never.",
            "oneOf": [
                { "type": "integer", "minimum": 1, "maximum": 3 },
                { "type": "string", "enum": ["never"] }
            ]
        })
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExamplesFile {
    #[serde(default)]
    pub allow: Vec<Vec<String>>,
    #[serde(default)]
    pub refuse: Vec<Vec<String>>,
    /// What stdin holds for these examples (a script the tool reads), when it matters.
    #[serde(default)]
    pub stdin: Option<String>,
    /// stdin is a terminal for these examples.
    #[serde(default)]
    pub terminal: bool,
    /// What the compose file of these examples holds (docker `compose up`).
    #[serde(default)]
    pub compose: Option<String>,
    /// The agent can change the compose file of these examples.
    #[serde(default)]
    pub compose_changeable: bool,
    /// The examples' `compose up` runs on a remote host (in an ssh command).
    #[serde(default)]
    pub compose_remote: bool,
    /// What tiershim.yaml says about the examples' ssh host (`remote.<host>`: workspaces,
    /// restartable units).
    #[serde(default)]
    pub remote_host: Option<crate::remote_fence::RemoteHostFile>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    pub id: String,
    pub verbs: Vec<String>,
    #[serde(default)]
    pub when: Vec<String>,
    pub tier: TierFile,
    #[serde(default)]
    pub skill: Option<String>,
    #[serde(default)]
    pub what: Option<String>,
    #[serde(default)]
    pub instead: Option<String>,
    #[serde(default)]
    pub examples: Option<ExamplesFile>,
    /// A path-scope check of what the call changes (DESIGN §7).
    #[serde(default)]
    pub scope: Option<ScopeKind>,
    /// The most files a call of this rule may change, per effective tier (`{2: 3}`: at most 3
    /// at tier 2; a tier not named has no limit). Needs `scope`.
    #[serde(default)]
    pub max_files: BTreeMap<u8, usize>,
    /// The cooldown budget a call of this rule counts against (`policy/cooldown.yaml`), per
    /// target it names.
    #[serde(default)]
    pub cooldown: Option<cooldown::Class>,
}

/// Which scope check a rule asks for; the grammar supplies the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ScopeKind {
    /// A pull request: the files of `git diff <base>...<head>`.
    Pr,
    /// A file written through a hosting API.
    Contents,
    /// `git commit`: what the commit records.
    Commit,
    /// `git push`: the files of the commits it sends.
    Push,
}

impl ScopeKind {
    /// The action in a SCOPE VIOLATION line: "Refusing to <this> modifying <path>".
    pub fn doing(self) -> &'static str {
        match self {
            ScopeKind::Pr => "create PR",
            ScopeKind::Contents => "write a file",
            ScopeKind::Commit => "commit",
            ScopeKind::Push => "push",
        }
    }

    /// What the call makes, for messages: "a pull request".
    pub fn noun(self) -> &'static str {
        match self {
            ScopeKind::Pr => "a pull request",
            ScopeKind::Contents => "a file write through the API",
            ScopeKind::Commit => "a commit",
            ScopeKind::Push => "a push",
        }
    }
}

/// `env:` of a tool's policy (and of `common.yaml`): the environment the real tool gets is an
/// allow-list (DESIGN §3.2). A variable the caller sets that is named by neither `pass` nor
/// `pinned` is removed before exec, and the removal is logged.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvFile {
    /// Variables that pass from the caller's environment (locale, terminal, …), unless the
    /// operator pinned them. `PREFIX*` matches a family (`LC_*`).
    #[serde(default)]
    pub pass: Vec<String>,
    /// Variables only the operator sets (tiershim.yaml `env:` or the secrets file): the caller's
    /// value is removed, the pinned one set.
    #[serde(default)]
    pub pinned: Vec<String>,
    /// Variables that, when the caller sets them, must equal the pinned value, else the call is
    /// refused (retargeting a daemon is refused, not silently corrected). Each is `pinned`.
    #[serde(default)]
    pub must_match: Vec<String>,
    /// Values forced on every exec unless the operator pinned the variable (`GH_PAGER: cat`):
    /// they override settings an agent could plant in a config file it can write.
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// Values forced at one effective tier, over everything else, the operator's pins included
    /// (psql's `PGOPTIONS=-c default_transaction_read_only=on` at tiers 1 and 2).
    #[serde(default)]
    pub set_by_tier: BTreeMap<u8, BTreeMap<String, String>>,
    /// The tool's credentials and where they go: when the operator pins one of `secrets`, the
    /// call may only connect to the pinned `destination` (the caller's values of those are not
    /// passed, and a destination named in argv must equal the pin).
    #[serde(default)]
    pub credentials: Option<CredentialsFile>,
}

/// `env.credentials:` of a tool's policy.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CredentialsFile {
    /// Variables holding a credential (`PGPASSWORD`).
    pub secrets: Vec<String>,
    /// Variables naming where the tool connects (`PGHOST`, `PGPORT`).
    pub destination: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    pub tool: String,
    /// The skill named for calls no rule classifies.
    pub skill: String,
    #[serde(default)]
    pub env: EnvFile,
    pub rules: Vec<RuleFile>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommonFile {
    pub env: EnvFile,
}

// ---------------------------------------------------------------------------------------------
// Engine types

/// The rules the engine applies itself, beside a policy's own. Their id is `<tool>.<name>`
/// (`docker.scope`), except [`Builtin::RemoteWrite`] (always `ssh.remote-write`) and
/// [`Builtin::KernelFence`] (`kernel-fence`, before any tool is judged). A policy's rule may not
/// take one of these ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Builtin {
    Unclassified,
    Grammar,
    Target,
    Policy,
    LocalWrite,
    LocalFile,
    AgentConfig,
    AgentFile,
    RemoteEndpoint,
    Pinned,
    PinnedEnv,
    CredentialHelper,
    CredentialDestination,
    Host,
    Nested,
    RemoteWrite,
    Scope,
    MaxFiles,
    CooldownTarget,
    CooldownState,
    Cooldown,
    Facts,
    KernelFence,
}

impl Builtin {
    pub const ALL: [Builtin; 23] = [
        Builtin::Unclassified,
        Builtin::Grammar,
        Builtin::Target,
        Builtin::Policy,
        Builtin::LocalWrite,
        Builtin::LocalFile,
        Builtin::AgentConfig,
        Builtin::AgentFile,
        Builtin::RemoteEndpoint,
        Builtin::Pinned,
        Builtin::PinnedEnv,
        Builtin::CredentialHelper,
        Builtin::CredentialDestination,
        Builtin::Host,
        Builtin::Nested,
        Builtin::RemoteWrite,
        Builtin::Scope,
        Builtin::MaxFiles,
        Builtin::CooldownTarget,
        Builtin::CooldownState,
        Builtin::Cooldown,
        Builtin::Facts,
        Builtin::KernelFence,
    ];

    /// The part of the id after the tool (`scope` in `docker.scope`).
    pub fn name(self) -> &'static str {
        self.describe().0
    }

    /// Its name, the tier it asks for (`never`, or the tier the finding names), and what it
    /// refuses, in one line (`tiershim policy doc`).
    pub fn describe(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Builtin::Unclassified => ("unclassified", "never", "a verb no rule of the policy names (unknown means never)"),
            Builtin::Grammar => (
                "grammar",
                "never",
                "a call the grammar cannot read: an unknown option, a missing value, nothing to name",
            ),
            Builtin::Target => (
                "target",
                "never",
                "an action whose target the real tool could not work out (a probe failed)",
            ),
            Builtin::Policy => (
                "policy",
                "never",
                "a part of an ssh remote command whose tool's policy was not loaded (a fault in the gate)",
            ),
            Builtin::LocalWrite => (
                "local-write",
                "2 or 3",
                "a local file the call writes: tier 2 inside a workspace, tier 3 outside or for names the server chooses",
            ),
            Builtin::LocalFile => (
                "local-file",
                "never",
                "a local file read from outside the working directory, hidden, a credential, or a write into a git directory or the install's files",
            ),
            Builtin::AgentConfig => (
                "agent-config",
                "never",
                "configuration the real tool reads from a file the agent could have written, with a key that runs a program or redirects the call",
            ),
            Builtin::AgentFile => (
                "agent-file",
                "never",
                "a file the real tool takes as instructions (a playbook and what is beside it, an inventory, a manifest, a chart) that the agent could have written, or whose owner cannot be checked",
            ),
            Builtin::RemoteEndpoint => (
                "remote-endpoint",
                "never",
                "an endpoint or credential helper named for a tool on a remote host",
            ),
            Builtin::Pinned => (
                "pinned",
                "never",
                "an endpoint or setting in argv that differs from the one the operator pins",
            ),
            Builtin::PinnedEnv => (
                "pinned-env",
                "never",
                "a variable in the environment that must match the operator's pin and does not",
            ),
            Builtin::CredentialHelper => (
                "credential-helper",
                "never",
                "a git credential helper that is not this install's real gh",
            ),
            Builtin::CredentialDestination => (
                "credential-destination",
                "never",
                "a call that would send a pinned credential somewhere other than the pinned destination",
            ),
            Builtin::Host => (
                "host",
                "never",
                "an ssh host (destination, jump host) that tiershim.yaml `hosts:` does not list",
            ),
            Builtin::Nested => (
                "nested",
                "never",
                "a call only a real tool makes (git-receive-pack, ssh's -J hop) whose parent is not that tool",
            ),
            Builtin::RemoteWrite => (
                "remote-write",
                "2 or 3",
                "a write on an ssh host: tier 2 inside `remote.<host>.workspaces`, tier 3 elsewhere or where it really leads is unknown",
            ),
            Builtin::Scope => (
                "scope",
                "never",
                "a change to a file the skills' path rules deny, or whose changed files cannot be worked out",
            ),
            Builtin::MaxFiles => (
                "max-files",
                "the next tier",
                "a change of more files than the rule's `max_files` allows at this tier",
            ),
            Builtin::CooldownTarget => (
                "cooldown-target",
                "3",
                "a restart or redeploy whose targets a budget cannot count (an id, a whole project)",
            ),
            Builtin::CooldownState => (
                "cooldown-state",
                "never",
                "a budgeted call while the cooldown state file cannot be used",
            ),
            Builtin::Cooldown => ("cooldown", "never", "a restart or redeploy past its budget in the window"),
            Builtin::Facts => (
                "facts",
                "never",
                "a first decision that lacks the facts it needs (provisional; the gate gathers them)",
            ),
            Builtin::KernelFence => (
                "kernel-fence",
                "never",
                "a call from a process outside the Landlock domain the install requires",
            ),
        }
    }

    /// The rule id for a call of `tool`.
    pub fn id(self, tool: Tool) -> String {
        match self {
            Builtin::RemoteWrite => "ssh.remote-write".to_string(),
            Builtin::KernelFence => "kernel-fence".to_string(),
            other => format!("{tool}.{}", other.name()),
        }
    }

    /// The built-in rule an id names, whatever its tool (`docker.cooldown`: [`Builtin::Cooldown`]).
    pub fn of_id(id: &str) -> Option<Builtin> {
        if id == "kernel-fence" {
            return Some(Builtin::KernelFence);
        }
        let (tool, name) = id.split_once('.')?;
        Tool::from_name(tool)?;
        Builtin::ALL
            .into_iter()
            .find(|b| *b != Builtin::KernelFence && b.name() == name && (*b != Builtin::RemoteWrite || tool == "ssh"))
    }
}

/// A string of a rule: borrowed from the compiled tables (the shipped policy, so a call copies
/// nothing to read it) or owned (an operator's policy file).
pub type Text = std::borrow::Cow<'static, str>;

/// The words of a rule (`verbs:`, `when:`): a list of the compiled tables (the shipped policy:
/// nothing copied) or an operator file's.
#[derive(Debug, Clone)]
pub enum Words {
    Table(tables::List<tables::Str>),
    Owned(Vec<String>),
}

impl Words {
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let (table, owned): (&[tables::Str], &[String]) = match self {
            Words::Table(l) => (l.items(), &[]),
            Words::Owned(v) => (&[], v),
        };
        table.iter().map(|s| s.get()).chain(owned.iter().map(String::as_str))
    }

    /// One of the words is `word` (without a walk through the text for the table's words of
    /// another length: a rule's verbs are compared with every call's).
    pub fn contains(&self, word: &str) -> bool {
        match self {
            Words::Table(l) => l.items().iter().any(|s| s.is(word)),
            Words::Owned(v) => v.iter().any(|w| w == word),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Words::Table(l) => l.items().len(),
            Words::Owned(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn join(&self, sep: &str) -> String {
        self.iter().collect::<Vec<_>>().join(sep)
    }
}

impl PartialEq for Words {
    fn eq(&self, other: &Words) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Words {}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub id: Text,
    pub verbs: Words,
    pub when: Words,
    pub required: Required,
    pub skill: Text,
    pub what: Option<Text>,
    pub instead: Option<Text>,
    pub scope: Option<ScopeKind>,
    pub max_files: BTreeMap<u8, usize>,
    pub cooldown: Option<cooldown::Class>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Examples {
    pub allow: Vec<Vec<String>>,
    pub refuse: Vec<Vec<String>>,
    /// The scripts the examples read, as the gate would have read them.
    pub inputs: crate::grammar::Inputs,
    /// The compose file the examples' `compose up` reads.
    pub compose: Option<String>,
    /// The agent can change that file.
    pub compose_changeable: bool,
    /// The `compose up` runs on a remote host.
    pub compose_remote: bool,
    /// What tiershim.yaml says about the examples' ssh host, validated.
    pub remote_host: Option<crate::remote_fence::RemoteHost>,
}

/// The validated policy for one tool, with the environment list shared by every tool merged in.
#[derive(Debug, Clone)]
pub struct Policy {
    pub tool: Tool,
    pub source: String,
    pub skill: String,
    /// Variables that pass from the caller (common + tool).
    pub pass: Vec<String>,
    /// Variables only the operator's pins set (common + tool).
    pub pinned: Vec<String>,
    pub must_match: Vec<String>,
    /// Forced values (common + tool), applied unless the operator pinned the variable.
    pub set: BTreeMap<String, String>,
    /// Forced values per effective tier; they win over `set` and over pins.
    pub set_by_tier: BTreeMap<u8, BTreeMap<String, String>>,
    /// The tool's credentials and their destinations (`env.credentials`; empty: none).
    pub credentials: CredentialsFile,
    pub rules: Vec<Rule>,
    /// Per rule (same index), when the source carried them.
    pub examples: Vec<Examples>,
    /// Endpoint rules (`endpoints.yaml`), for the tools that send HTTP requests (curl, gh);
    /// empty for the others.
    pub endpoints: Vec<endpoints::Endpoint>,
    /// Per endpoint rule (same index), when the source carried them; empty otherwise.
    pub endpoint_examples: Vec<Examples>,
    pub endpoints_source: String,
}

/// The shipped endpoint rules, examples included.
pub const ENDPOINTS_YAML: &str = include_str!("../../policy/endpoints.yaml");
const ENDPOINTS_EMBEDDED: &str = "(embedded)/endpoints.yaml";

/// Whether `tool` sends HTTP requests that endpoint rules judge.
pub fn uses_endpoints(tool: Tool) -> bool {
    tool.spec().endpoints
}

pub const COMMON_YAML: &str = include_str!("../../policy/common.yaml");

/// A YAML error as a message: serde's text (with the line and column) and, for an unknown key,
/// the known key it is closest to.
pub fn serde_msg(e: &serde_yaml_ng::Error) -> String {
    let text = e.to_string();
    let hint = crate::suggest::for_serde(&text);
    format!("{text}{hint}")
}

fn policy_err(source: &str, msg: impl Into<String>) -> Error {
    Error::Policy {
        source_name: source.to_string(),
        msg: msg.into(),
    }
}

/// The PostgreSQL function list, built in. An override directory may hold the shipped copy (a
/// copy of `policy/`), never another: the gate reads only the built-in one.
const PG_CATALOG_FILE: &str = "pg_catalog_functions.tsv";

/// The files an override policy directory may hold: one per tool, `common.yaml`,
/// `endpoints.yaml`, `cooldown.yaml`, and the shipped PostgreSQL function list.
pub fn known_files() -> Vec<String> {
    Tool::ALL
        .iter()
        .map(|t| format!("{}.yaml", t.name()))
        .chain(["common.yaml", "endpoints.yaml", cooldown::FILE_NAME, PG_CATALOG_FILE].map(String::from))
        .collect()
}

/// An override policy directory exists, is a directory, and holds only files the policy knows
/// (hidden entries aside), so a misnamed file (`docker.yml`) or a mistyped `policy:` path never
/// leaves the embedded rules in force while the operator believes their own apply.
pub fn check_dir(dir: &Path) -> Result<()> {
    let shown = dir.display().to_string();
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(policy_err(
                &shown,
                "is not a directory; `policy:` in tiershim.yaml names the directory that holds the override files",
            ));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(policy_err(
                &shown,
                "the override directory `policy:` in tiershim.yaml names does not exist; create it with the files to override, or remove the key to use the embedded policy",
            ));
        }
        Err(e) => return Err(policy_err(&shown, format!("cannot be read: {e}"))),
    }
    let entries = std::fs::read_dir(dir).map_err(|e| policy_err(&shown, format!("cannot be listed: {e}")))?;
    let known = known_files();
    let mut names: Vec<String> = Vec::new();
    for e in entries {
        let e = e.map_err(|e| policy_err(&shown, format!("cannot be listed: {e}")))?;
        names.push(e.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    for name in names {
        if name.starts_with('.') {
            continue;
        }
        if !known.contains(&name) {
            return Err(policy_err(
                &dir.join(&name).display().to_string(),
                format!(
                    "is not a file the policy knows{}, so the gate would not read it and its rules would not apply; rename or remove it (the files: {})",
                    crate::suggest::did_you_mean(&name, known.iter().map(String::as_str)),
                    known.join(", ")
                ),
            ));
        }
        if name == PG_CATALOG_FILE {
            let path = dir.join(&name);
            let same = std::fs::metadata(&path).is_ok_and(|m| m.len() == crate::grammar::sql::PG_CATALOG.len() as u64)
                && std::fs::read(&path).is_ok_and(|b| b == crate::grammar::sql::PG_CATALOG.as_bytes());
            if !same {
                return Err(policy_err(
                    &path.display().to_string(),
                    "differs from the built-in PostgreSQL function list, which is the one the gate reads (it is not read from an override directory); remove it",
                ));
            }
        }
    }
    Ok(())
}

/// Every verb and mark the rules of `policy` name is one its tool's grammar makes
/// (`grammar::vocab`): a rule naming another could never match, so the policy does not load.
/// The error names the rule and the word, with the closest known one.
pub fn check_words(policy: &Policy) -> Result<()> {
    let tool = policy.tool;
    let vocab = tool.spec().vocabulary;
    let shipped: Vec<String> = Policy::embedded(tool)
        .map(|p| p.rules.iter().flat_map(|r| r.verbs.iter().map(String::from)).collect())
        .unwrap_or_default();
    // A grammar keeps a word it does not know as the verb (a docker CLI plugin is `buildx`), so
    // that the policy can name it; a word the shipped policy does not name that is a typo of
    // one it does (as long, a letter or two changed or swapped: `restrat`) is taken for the typo.
    let knows_verb = |verb: &str| {
        if vocab.lists_verb(verb) || shipped.iter().any(|v| v == verb) {
            return true;
        }
        let argv: Vec<String> = verb.split(' ').map(String::from).collect();
        let inv = (tool.spec().parse)(&argv, &crate::grammar::Contents::new(), &crate::grammar::Inputs::default());
        let same_length = shipped.iter().filter(|v| v.chars().count() == verb.chars().count());
        inv.actions.iter().any(|a| a.verb == verb) && crate::suggest::closest(verb, same_length.map(String::as_str)).is_none()
    };
    for r in &policy.rules {
        let at = |msg: String| policy_err(&policy.source, format!("rule {}: {msg}", r.id));
        if let Some(v) = r.verbs.iter().find(|v| !knows_verb(v)) {
            let hint = crate::suggest::did_you_mean(v, shipped.iter().map(String::as_str).chain(vocab.verbs.iter().map(|w| w.name)));
            return Err(at(format!(
                "`verbs:` names `{v}`, which is not a verb the {tool} grammar makes{hint}; `tiershim policy doc {tool}` lists its words"
            )));
        }
        if let Some(m) = r.when.iter().find(|m| !vocab.knows_mark(m)) {
            let hint = crate::suggest::did_you_mean(m, vocab.marks.iter().map(|w| w.name));
            return Err(at(format!(
                "`when:` names `{m}`, which the {tool} grammar never sets{hint}; `tiershim policy doc {tool}` lists its marks"
            )));
        }
    }
    Ok(())
}

impl Policy {
    /// The embedded default policy for `tool`, without examples (they were checked by the
    /// test suite and by `tiershim policy check`, not on every call).
    pub fn embedded(tool: Tool) -> Result<Policy> {
        let common = CommonFile {
            env: env_file(&tables::COMMON),
        };
        Policy::embedded_rules(tool, &common)
    }

    /// The embedded rules for `tool` (the build's static tables, `crate::tables`) with `common`
    /// as the common part. Nothing is parsed, and the rules are not validated again: the tests
    /// check that the tables are what the YAML loads to.
    fn embedded_rules(tool: Tool, common: &CommonFile) -> Result<Policy> {
        let source = format!("(embedded)/{}.yaml", tool.name());
        let t = tool.spec().compiled;
        let bad = |what: &str| policy_err(&source, format!("the compiled table has {what}"));
        let rules_table = t.rules.items();
        let mut rules = Vec::with_capacity(rules_table.len());
        for r in rules_table {
            rules.push(Rule {
                id: r.id.get().into(),
                verbs: Words::Table(r.verbs),
                when: Words::Table(r.when),
                required: required(r.tier),
                skill: r.skill.unwrap_or(t.skill).get().into(),
                what: r.what.map(|s| s.get().into()),
                instead: r.instead.map(|s| s.get().into()),
                scope: match r.scope.map(tables::Str::get) {
                    None => None,
                    Some(s) => Some(scope_kind(s).ok_or_else(|| bad(&format!("scope `{s}`")))?),
                },
                max_files: r.max_files.items().iter().copied().collect(),
                cooldown: match r.cooldown.map(tables::Str::get) {
                    None => None,
                    Some(c) => Some(
                        cooldown::Class::ALL
                            .into_iter()
                            .find(|k| k.name() == c)
                            .ok_or_else(|| bad(&format!("cooldown `{c}`")))?,
                    ),
                },
            });
        }
        let env = Env::merged(&common.env, env_file(&t.env), &source)?;
        let mut p = Policy::with(tool, source, t.skill.get().to_string(), env, rules, Vec::new());
        if uses_endpoints(tool) {
            p.endpoints = endpoints_table(&tables::ENDPOINTS)?;
            p.endpoints_source = ENDPOINTS_EMBEDDED.to_string();
        }
        Ok(p)
    }

    /// The embedded policy parsed from its YAML, examples included.
    pub fn embedded_with_examples(tool: Tool) -> Result<Policy> {
        let mut p = Policy::from_yaml(tool, tool.spec().policy, COMMON_YAML, format!("(embedded)/{}.yaml", tool.name()))?;
        p.set_endpoints_yaml(ENDPOINTS_YAML, ENDPOINTS_EMBEDDED)?;
        Ok(p)
    }

    /// Replace the endpoint rules (for a tool that uses them) with those of `text`, examples
    /// included.
    pub fn set_endpoints_yaml(&mut self, text: &str, source: &str) -> Result<()> {
        if !uses_endpoints(self.tool) {
            return Ok(());
        }
        let f: endpoints::EndpointsFile = serde_yaml_ng::from_str(text).map_err(|e| policy_err(source, serde_msg(&e)))?;
        (self.endpoints, self.endpoint_examples) = endpoints::validate(f, source)?;
        self.endpoints_source = source.to_string();
        Ok(())
    }

    /// Add the operator's endpoint rules (tiershim.yaml `endpoints:`, each with its line; `path`
    /// is the file) for a tool that uses them, with the line each came from (by rule id). An id
    /// the policy already has is an error (a rule can only be added, never replaced). Their
    /// examples are run by the caller (`crate::judge::policy`), which names the line of the one
    /// that fails.
    pub fn add_install_endpoints(
        mut self,
        endpoints: &[(endpoints::EndpointFile, usize)],
        path: &Path,
    ) -> Result<(Policy, BTreeMap<String, usize>)> {
        let mut lines = BTreeMap::new();
        if !uses_endpoints(self.tool) || endpoints.is_empty() {
            return Ok((self, lines));
        }
        let invalid = |line: usize, msg: String| Error::ConfigInvalid {
            path: path.to_path_buf(),
            msg: format!("line {line}: {msg}"),
        };
        self.endpoint_examples.resize(self.endpoints.len(), Examples::default());
        for (e, line) in endpoints {
            let (rule, examples) = endpoints::validate_one(e.clone()).map_err(|m| invalid(*line, format!("endpoint {}: {m}", e.id)))?;
            if self.endpoints.iter().any(|r| r.id == rule.id) {
                return Err(invalid(
                    *line,
                    format!("endpoint {}: the policy already has a rule with this id; choose another", rule.id),
                ));
            }
            lines.insert(rule.id.to_string(), *line);
            self.endpoints.push(rule);
            self.endpoint_examples.push(examples);
        }
        Ok((self, lines))
    }

    /// A policy file as written: validated, and its words checked against the grammar's
    /// vocabulary ([`check_words`]). The embedded policy is checked the same way by the test
    /// suite, and is not checked again on every call.
    pub fn from_yaml(tool: Tool, text: &str, common: &str, source: String) -> Result<Policy> {
        let file: PolicyFile = serde_yaml_ng::from_str(text).map_err(|e| policy_err(&source, serde_msg(&e)))?;
        let common: CommonFile = serde_yaml_ng::from_str(common).map_err(|e| policy_err("common.yaml", serde_msg(&e)))?;
        let policy = Policy::validate(tool, file, &common, source)?;
        check_words(&policy)?;
        Ok(policy)
    }

    /// The policy of `tool` as written: `<dir>/<tool>.yaml` from the override directory when it
    /// has one, else the embedded default; the directory must pass [`check_dir`]; for curl and
    /// gh also `<dir>/endpoints.yaml` when it is there. Whether it came from the directory is the
    /// second value: then its examples must hold before it is used, which the loader that runs
    /// them (`crate::judge::policy`) checks.
    pub fn read(tool: Tool, override_dir: Option<&Path>) -> Result<(Policy, bool)> {
        let Some(dir) = override_dir else {
            return Ok((Policy::embedded(tool)?, false));
        };
        check_dir(dir)?;
        let read = |path: &Path| match std::fs::read_to_string(path) {
            Ok(t) => Ok(Some(t)),
            // A link to nothing is a file the operator meant, not an absent one: refused, never
            // the embedded rules in its place.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && std::fs::symlink_metadata(path).is_ok() => Err(policy_err(
                &path.display().to_string(),
                format!(
                    "is a symbolic link to {}, which does not exist; point it at the file, or remove it to use the embedded rules",
                    std::fs::read_link(path)
                        .map(|t| t.display().to_string())
                        .unwrap_or_else(|_| "nothing".into())
                ),
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(policy_err(&path.display().to_string(), format!("cannot read: {e}"))),
        };
        let path = dir.join(format!("{}.yaml", tool.name()));
        let tool_file = read(&path)?;
        let overridden = tool_file.is_some();
        let common_path = dir.join("common.yaml");
        let common_file = read(&common_path)?;
        let mut policy = match (tool_file, common_file) {
            (None, None) => Policy::embedded(tool)?,
            // The directory's common.yaml applies to every tool, also one whose rules are the
            // embedded ones: the embedded rules (static tables) with this common part.
            (None, Some(common)) => {
                let common: CommonFile =
                    serde_yaml_ng::from_str(&common).map_err(|e| policy_err(&common_path.display().to_string(), serde_msg(&e)))?;
                Policy::embedded_rules(tool, &common)?
            }
            (Some(text), common) => {
                let common = common.unwrap_or_else(|| COMMON_YAML.to_string());
                Policy::from_yaml(tool, &text, &common, path.display().to_string())?
            }
        };
        let endpoints_path = dir.join("endpoints.yaml");
        if uses_endpoints(tool)
            && let Some(text) = read(&endpoints_path)?
        {
            policy.set_endpoints_yaml(&text, &endpoints_path.display().to_string())?;
        }
        Ok((policy, overridden))
    }

    /// The error of a policy whose examples disagree with its rules.
    pub fn examples_fail(&self, dir: &Path, failures: &[String]) -> Error {
        policy_err(
            &self.source,
            format!(
                "{} example(s) disagree with the rules, first: {}; run `tiershim policy check {}`",
                failures.len(),
                failures.first().map(String::as_str).unwrap_or_default(),
                dir.display()
            ),
        )
    }

    fn with(tool: Tool, source: String, skill: String, env: Env, rules: Vec<Rule>, examples: Vec<Examples>) -> Policy {
        Policy {
            tool,
            source,
            skill,
            pass: env.pass,
            pinned: env.pinned,
            must_match: env.must_match,
            set: env.set,
            set_by_tier: env.set_by_tier,
            credentials: env.credentials,
            rules,
            examples,
            endpoints: Vec::new(),
            endpoint_examples: Vec::new(),
            endpoints_source: String::new(),
        }
    }

    fn validate(tool: Tool, file: PolicyFile, common: &CommonFile, source: String) -> Result<Policy> {
        if file.tool != tool.name() {
            return Err(policy_err(
                &source,
                format!("`tool: {}` but this file is the policy for {}", file.tool, tool.name()),
            ));
        }
        let mut ids = BTreeSet::new();
        let mut rules = Vec::with_capacity(file.rules.len());
        let mut examples = Vec::with_capacity(file.rules.len());
        for r in file.rules {
            let at = |msg: String| policy_err(&source, format!("rule {}: {msg}", r.id));
            if r.id.is_empty() || !r.id.starts_with(&format!("{}.", tool.name())) {
                return Err(at(format!("rule ids start with `{}.`", tool.name())));
            }
            if !ids.insert(r.id.clone()) {
                return Err(at("duplicate rule id".into()));
            }
            if let Some(b) = Builtin::of_id(&r.id) {
                return Err(at(format!(
                    "`{}` is the id of a rule the gate applies itself ({}); choose another",
                    r.id,
                    b.describe().2
                )));
            }
            if r.verbs.is_empty() {
                return Err(at("`verbs` is empty".into()));
            }
            let required = match &r.tier {
                TierFile::Number(n @ 1..=3) => Required::Tier(*n as u8),
                TierFile::Word(w) if w == "never" => Required::Never,
                TierFile::Number(n) => return Err(at(format!("tier {n} is not 1, 2, 3 or never"))),
                TierFile::Word(w) => return Err(at(format!("tier `{w}` is not 1, 2, 3 or never"))),
            };
            if let Some(ex) = &r.examples {
                if required == Required::Never && !ex.allow.is_empty() {
                    return Err(at("a `never` rule cannot have allow examples".into()));
                }
                if ex.allow.is_empty() && ex.refuse.is_empty() {
                    return Err(at("`examples` is empty".into()));
                }
            }
            let remote_host = match r.examples.as_ref().and_then(|e| e.remote_host.as_ref()) {
                None => None,
                Some(h) => Some(crate::remote_fence::remote_host(h).map_err(|e| at(format!("examples: `remote_host.{e}")))?),
            };
            examples.push(
                r.examples
                    .map(|e| Examples {
                        allow: e.allow,
                        refuse: e.refuse,
                        inputs: crate::grammar::Inputs {
                            stdin: match (e.terminal, e.stdin) {
                                (true, _) => crate::grammar::Input::Terminal,
                                (false, Some(text)) => crate::grammar::Input::Text(text),
                                (false, None) => crate::grammar::Input::Unread,
                            },
                            files: Vec::new(),
                        },
                        compose: e.compose,
                        compose_changeable: e.compose_changeable,
                        compose_remote: e.compose_remote,
                        remote_host,
                    })
                    .unwrap_or_default(),
            );
            if !r.max_files.is_empty() && r.scope.is_none() {
                return Err(at("`max_files` needs a `scope` (it counts the files the scope check finds)".into()));
            }
            if let Some(t) = r.max_files.keys().find(|t| !(1..=3).contains(*t)) {
                return Err(at(format!("`max_files` names tier {t}, which is not 1, 2 or 3")));
            }
            rules.push(Rule {
                id: r.id.into(),
                verbs: Words::Owned(r.verbs),
                when: Words::Owned(r.when),
                required,
                skill: r.skill.unwrap_or_else(|| file.skill.clone()).into(),
                what: r.what.map(Text::from),
                instead: r.instead.map(Text::from),
                scope: r.scope,
                max_files: r.max_files,
                cooldown: r.cooldown,
            });
        }
        let env = Env::merged(&common.env, file.env, &source)?;
        Ok(Policy::with(tool, source, file.skill, env, rules, examples))
    }

    /// Whether the caller's `var` passes to the real tool (the allow-list).
    pub fn passes(&self, var: &str) -> bool {
        self.pass.iter().any(|p| names(p, var))
    }

    /// The first of the tool's credentials that `pins` names: then the tool may only connect to
    /// the pinned destination.
    pub fn pinned_credential(&self, pinned: impl Fn(&str) -> bool) -> Option<&str> {
        self.credentials.secrets.iter().map(String::as_str).find(|s| pinned(s))
    }

    /// Whether an operator's pin of `var` reaches this tool: it is one the tool passes or one
    /// only the operator sets.
    pub fn takes_pin(&self, var: &str) -> bool {
        self.passes(var) || self.pinned.iter().any(|p| names(p, var))
    }
}

/// `pattern` (a name, or `PREFIX*`) names `var`.
/// The environment lists of a policy, common.yaml's and the tool's merged.
struct Env {
    pass: Vec<String>,
    pinned: Vec<String>,
    must_match: Vec<String>,
    set: BTreeMap<String, String>,
    set_by_tier: BTreeMap<u8, BTreeMap<String, String>>,
    credentials: CredentialsFile,
}

impl Env {
    /// `common` then `env`, checked: names, not both passed and pinned, what must match is
    /// pinned, tiers 1 to 3, credentials that a pin can reach.
    fn merged(common: &EnvFile, env: EnvFile, source: &str) -> Result<Env> {
        let mut pass = common.pass.clone();
        pass.extend(env.pass);
        let mut pinned = common.pinned.clone();
        pinned.extend(env.pinned);
        let mut must_match = common.must_match.clone();
        must_match.extend(env.must_match);
        for v in pass.iter().chain(&pinned).chain(&must_match) {
            if v.is_empty() || v.contains('=') || v[..v.len() - 1].contains('*') {
                return Err(policy_err(
                    source,
                    format!("env: `{v}` is not a variable name (or a `PREFIX*` family)"),
                ));
            }
        }
        if let Some(v) = pass.iter().find(|v| pinned.contains(v)) {
            return Err(policy_err(
                source,
                format!("env: `{v}` is in both `pass` and `pinned` (a pin wins over a passed value anyway)"),
            ));
        }
        if let Some(v) = must_match.iter().find(|v| !pinned.iter().any(|p| names(p, v))) {
            return Err(policy_err(
                source,
                format!("env.must_match: `{v}` is not in `pinned` (only the operator sets what must match)"),
            ));
        }
        let mut set = common.set.clone();
        set.extend(env.set);
        let mut set_by_tier = common.set_by_tier.clone();
        for (tier, vars) in env.set_by_tier {
            if !(1..=3).contains(&tier) {
                return Err(policy_err(source, format!("env.set_by_tier: tier {tier} is not 1, 2 or 3")));
            }
            set_by_tier.entry(tier).or_default().extend(vars);
        }
        let credentials = env.credentials.unwrap_or_default();
        for v in credentials.secrets.iter().chain(&credentials.destination) {
            if !pass.iter().chain(&pinned).any(|p| names(p, v)) {
                return Err(policy_err(
                    source,
                    format!("env.credentials: `{v}` is in neither `pass` nor `pinned`, so no pin of it would reach the tool"),
                ));
            }
        }
        Ok(Env {
            pass,
            pinned,
            must_match,
            set,
            set_by_tier,
            credentials,
        })
    }
}

/// A table's words as owned strings.
fn owned(words: tables::List<tables::Str>) -> Vec<String> {
    words.strs().map(String::from).collect()
}

fn required(tier: u8) -> Required {
    match tier {
        0 => Required::Never,
        n => Required::Tier(n),
    }
}

/// A `scope:` value as the YAML writes it (serde's lower case).
fn scope_kind(name: &str) -> Option<ScopeKind> {
    match name {
        "pr" => Some(ScopeKind::Pr),
        "contents" => Some(ScopeKind::Contents),
        "commit" => Some(ScopeKind::Commit),
        "push" => Some(ScopeKind::Push),
        _ => None,
    }
}

fn pairs(list: tables::List<(tables::Str, tables::Str)>) -> BTreeMap<String, String> {
    list.pairs().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// `env:` of a compiled table, as a policy file's.
fn env_file(t: &tables::Env) -> EnvFile {
    EnvFile {
        pass: owned(t.pass),
        pinned: owned(t.pinned),
        must_match: owned(t.must_match),
        set: pairs(t.set),
        set_by_tier: t.set_by_tier.items().iter().map(|(n, vars)| (*n, pairs(*vars))).collect(),
        credentials: t.credentials.map(|(secrets, destination)| CredentialsFile {
            secrets: owned(secrets),
            destination: owned(destination),
        }),
    }
}

/// The compiled endpoint rules. Their strings borrow the tables; they are not validated again
/// (the tests check that they equal what `endpoints.yaml` validates to), but a path pattern is
/// parsed, and one that does not parse fails the call.
fn endpoints_table(t: &tables::Endpoints) -> Result<Vec<endpoints::Endpoint>> {
    let bad = |msg: String| policy_err(ENDPOINTS_EMBEDDED, format!("the compiled table has {msg}"));
    let text = |s: tables::Str| Text::from(s.get());
    let table = t.endpoints.items();
    let mut out = Vec::with_capacity(table.len());
    for e in table {
        out.push(endpoints::Endpoint {
            id: text(e.id),
            methods: e.methods.strs().map(Text::from).collect(),
            path: e.path.map(|p| endpoints::Pattern::parse(p.get())).transpose().map_err(&bad)?,
            body: e.body.items().iter().map(|(k, v)| (k.get().to_string(), owned(*v))).collect(),
            mutations: e.mutations.strs().map(Text::from).collect(),
            required: required(e.tier),
            skill: text(e.skill.unwrap_or(t.skill)),
            what: e.what.map(text),
            instead: e.instead.map(text),
            scope: match e.scope.map(tables::Str::get) {
                None => None,
                Some(s) => Some(scope_kind(s).ok_or_else(|| bad(format!("scope `{s}`")))?),
            },
            max_files: e.max_files.items().iter().copied().collect(),
        });
    }
    Ok(out)
}

fn names(pattern: &str, var: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => var.starts_with(prefix),
        None => pattern == var,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_rule_is_known_by_its_id_and_no_shipped_rule_takes_one() {
        for b in Builtin::ALL {
            for t in Tool::ALL {
                let id = b.id(t);
                assert_eq!(Builtin::of_id(&id), Some(b), "{id}");
            }
        }
        assert_eq!(Builtin::of_id("docker.remote-write"), None);
        assert_eq!(Builtin::of_id("docker.restart"), None);
        assert_eq!(Builtin::of_id("nosuch.scope"), None);
        for t in Tool::ALL {
            let p = Policy::embedded(t).unwrap_or_else(|e| panic!("{e}"));
            for r in &p.rules {
                assert_eq!(Builtin::of_id(&r.id), None, "{}", r.id);
            }
        }
    }

    #[test]
    fn a_policy_rule_cannot_take_a_built_in_id() {
        let text = "tool: docker\nskill: s\nrules:\n  - id: docker.scope\n    verbs: [ps]\n    tier: 1\n";
        let e = Policy::from_yaml(Tool::Docker, text, COMMON_YAML, "t.yaml".into())
            .err()
            .map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("docker.scope") && e.contains("the gate applies itself")),
            "{e:?}"
        );
    }

    #[test]
    fn a_rule_naming_a_mark_or_verb_no_grammar_makes_fails_to_load_with_a_did_you_mean() {
        let load = |verbs: &str, when: &str| {
            let text = format!("tool: docker\nskill: s\nrules:\n  - id: docker.x\n    verbs: [{verbs}]\n    when: [{when}]\n    tier: 3\n");
            Policy::from_yaml(Tool::Docker, &text, COMMON_YAML, "t.yaml".into())
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        assert_eq!(load("run", "privileged"), Ok(()));
        assert_eq!(load("compose up", "compose-writable"), Ok(()));
        let e = load("run", "priviliged").unwrap_err();
        assert!(
            e.contains("t.yaml") && e.contains("rule docker.x") && e.contains("`when:` names `priviliged`"),
            "{e}"
        );
        assert!(
            e.contains("did you mean `privileged`?") && e.contains("tiershim policy doc docker"),
            "{e}"
        );
        let e = load("restrat", "privileged").unwrap_err();
        assert!(
            e.contains("`verbs:` names `restrat`") && e.contains("did you mean `restart`?"),
            "{e}"
        );
        assert_eq!(load("buildx", "build"), Ok(()));
        // A command of the tool that the shipped policy does not name is still a word of it.
        let git = "tool: git\nskill: s\nrules:\n  - id: git.x\n    verbs: [submodule update]\n    tier: 3\n";
        assert!(Policy::from_yaml(Tool::Git, git, COMMON_YAML, "t.yaml".into()).is_ok());
    }

    #[test]
    fn every_skill_a_shipped_policy_names_is_a_shipped_skill() {
        let shipped: Vec<String> = crate::skill::embedded().into_iter().map(|c| c.name).collect();
        for tool in Tool::ALL {
            for r in Policy::embedded(tool).unwrap().rules {
                assert!(
                    shipped.iter().any(|s| *s == r.skill),
                    "{}: skill {} is not under skills/",
                    r.id,
                    r.skill
                );
            }
        }
    }
}
