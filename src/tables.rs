//! The shipped policy compiled at build time into static tables (`build.rs` writes them from
//! `policy/*.yaml`, examples left out): one [`Policy`] per tool, the environment of
//! `common.yaml`, and the endpoint rules. A gated call reads its tool's table and parses
//! nothing; `crate::policy` turns it into the engine's `Policy`. The tables are the YAML's
//! rules as written: the tests check that they equal what the YAML loads to, examples and
//! vocabulary included (`judge::examples::tests`, `grammar::vocab::tests`).
//!
//! The tables hold no pointers: a string is its place in one text ([`Str`]), a list its place
//! in one array per kind of item ([`List`]). The gate is a position-independent executable, so
//! every pointer in its static data is a relocation it writes at start, and each page of data
//! so written is a page the kernel copies for every call (docs/PERFORMANCE.md, "Where the time
//! goes"); data without pointers stays in read-only pages shared with the file.
//!
//! Must not: hold anything but data.

use std::marker::PhantomData;

/// A string of the tables: where it lies in the one text.
#[derive(Debug, Clone, Copy)]
pub struct Str {
    at: u32,
    len: u32,
}

impl Str {
    /// Whether this is `s` (the length compared first).
    pub fn is(self, s: &str) -> bool {
        self.len as usize == s.len() && self.get() == s
    }

    pub fn get(self) -> &'static str {
        TEXT.get(self.at as usize..(self.at as usize).saturating_add(self.len as usize))
            .unwrap_or_default()
    }
}

/// A list of the tables: where its items lie in the array that holds every item of its kind.
#[derive(Debug)]
pub struct List<T: 'static> {
    at: u32,
    len: u32,
    item: PhantomData<T>,
}

impl<T> Clone for List<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for List<T> {}

/// A kind of item, and the array that holds all of them.
pub trait Item: Sized + 'static {
    fn all() -> &'static [Self];
}

impl<T: Item> List<T> {
    pub fn items(self) -> &'static [T] {
        T::all()
            .get(self.at as usize..(self.at as usize).saturating_add(self.len as usize))
            .unwrap_or_default()
    }
}

impl List<Str> {
    /// The strings of the list.
    pub fn strs(self) -> impl Iterator<Item = &'static str> {
        self.items().iter().map(|s| s.get())
    }
}

impl List<(Str, Str)> {
    /// The pairs of the list.
    pub fn pairs(self) -> impl Iterator<Item = (&'static str, &'static str)> {
        self.items().iter().map(|(k, v)| (k.get(), v.get()))
    }
}

impl Item for Str {
    fn all() -> &'static [Self] {
        &STRS
    }
}

impl Item for (Str, Str) {
    fn all() -> &'static [Self] {
        &PAIRS
    }
}

impl Item for (u8, usize) {
    fn all() -> &'static [Self] {
        &SIZES
    }
}

impl Item for (u8, List<(Str, Str)>) {
    fn all() -> &'static [Self] {
        &BY_TIER
    }
}

impl Item for (Str, List<Str>) {
    fn all() -> &'static [Self] {
        &BODIES
    }
}

impl Item for Rule {
    fn all() -> &'static [Self] {
        &RULES
    }
}

impl Item for Endpoint {
    fn all() -> &'static [Self] {
        &ENDPOINT_RULES
    }
}

/// `env:` of a policy file.
#[derive(Debug)]
pub struct Env {
    pub pass: List<Str>,
    pub pinned: List<Str>,
    pub must_match: List<Str>,
    pub set: List<(Str, Str)>,
    pub set_by_tier: List<(u8, List<(Str, Str)>)>,
    /// `env.credentials`: (secrets, destination).
    pub credentials: Option<(List<Str>, List<Str>)>,
}

/// One rule of a tool's policy.
#[derive(Debug)]
pub struct Rule {
    pub id: Str,
    pub verbs: List<Str>,
    pub when: List<Str>,
    /// 1, 2 or 3; 0 for `never`.
    pub tier: u8,
    pub skill: Option<Str>,
    pub what: Option<Str>,
    pub instead: Option<Str>,
    /// `pr`, `contents`, `commit` or `push`.
    pub scope: Option<Str>,
    pub max_files: List<(u8, usize)>,
    /// `restart` or `redeploy`.
    pub cooldown: Option<Str>,
}

/// A tool's policy file.
#[derive(Debug)]
pub struct Policy {
    pub tool: Str,
    pub skill: Str,
    pub env: Env,
    pub rules: List<Rule>,
}

/// One endpoint rule of `endpoints.yaml`.
#[derive(Debug)]
pub struct Endpoint {
    pub id: Str,
    pub methods: List<Str>,
    pub path: Option<Str>,
    pub body: List<(Str, List<Str>)>,
    pub mutations: List<Str>,
    /// 1, 2 or 3; 0 for `never`.
    pub tier: u8,
    pub skill: Option<Str>,
    pub what: Option<Str>,
    pub instead: Option<Str>,
    pub scope: Option<Str>,
    pub max_files: List<(u8, usize)>,
}

/// `endpoints.yaml`.
#[derive(Debug)]
pub struct Endpoints {
    pub skill: Str,
    pub endpoints: List<Endpoint>,
}

include!(concat!(env!("OUT_DIR"), "/policy/tables.rs"));
