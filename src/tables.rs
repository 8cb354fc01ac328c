//! The shipped policy compiled at build time into static tables (`build.rs` writes them from
//! `policy/*.yaml`, examples left out): one [`Policy`] per tool, the environment of
//! `common.yaml`, and the endpoint rules. A gated call reads its tool's table and parses
//! nothing; `crate::policy` turns it into the engine's `Policy`. The tables are the YAML's
//! rules as written: the tests check that they equal what the YAML loads to, examples and
//! vocabulary included (`judge::examples::tests`, `grammar::vocab::tests`).
//!
//! Must not: hold anything but data.

/// `env:` of a policy file.
#[derive(Debug)]
pub struct Env {
    pub pass: &'static [&'static str],
    pub pinned: &'static [&'static str],
    pub must_match: &'static [&'static str],
    pub set: &'static [(&'static str, &'static str)],
    pub set_by_tier: &'static [(u8, &'static [(&'static str, &'static str)])],
    /// `env.credentials`: (secrets, destination).
    pub credentials: Option<(&'static [&'static str], &'static [&'static str])>,
}

/// One rule of a tool's policy.
#[derive(Debug)]
pub struct Rule {
    pub id: &'static str,
    pub verbs: &'static [&'static str],
    pub when: &'static [&'static str],
    /// 1, 2 or 3; 0 for `never`.
    pub tier: u8,
    pub skill: Option<&'static str>,
    pub what: Option<&'static str>,
    pub instead: Option<&'static str>,
    /// `pr`, `contents`, `commit` or `push`.
    pub scope: Option<&'static str>,
    pub max_files: &'static [(u8, usize)],
    /// `restart` or `redeploy`.
    pub cooldown: Option<&'static str>,
}

/// A tool's policy file.
#[derive(Debug)]
pub struct Policy {
    pub tool: &'static str,
    pub skill: &'static str,
    pub env: Env,
    pub rules: &'static [Rule],
}

/// One endpoint rule of `endpoints.yaml`.
#[derive(Debug)]
pub struct Endpoint {
    pub id: &'static str,
    pub methods: &'static [&'static str],
    pub path: Option<&'static str>,
    pub body: &'static [(&'static str, &'static [&'static str])],
    pub mutations: &'static [&'static str],
    /// 1, 2 or 3; 0 for `never`.
    pub tier: u8,
    pub skill: Option<&'static str>,
    pub what: Option<&'static str>,
    pub instead: Option<&'static str>,
    pub scope: Option<&'static str>,
    pub max_files: &'static [(u8, usize)],
}

/// `endpoints.yaml`.
#[derive(Debug)]
pub struct Endpoints {
    pub skill: &'static str,
    pub endpoints: &'static [Endpoint],
}

include!(concat!(env!("OUT_DIR"), "/policy/tables.rs"));
