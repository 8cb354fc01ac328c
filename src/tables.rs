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

#[cfg(test)]
mod tests {
    use super::*;

    fn holds(at: u32, len: u32, all: usize) -> bool {
        (at as usize).checked_add(len as usize).is_some_and(|end| end <= all)
    }

    /// `Str::get` and `List::items` read nothing for a place outside their text or array; every
    /// place `build.rs` wrote must lie inside (and on character boundaries of the text), so no
    /// lookup comes back empty when it should not.
    #[test]
    fn every_place_in_the_tables_lies_inside_its_text_or_array() {
        let strs = STRS
            .iter()
            .chain(PAIRS.iter().flat_map(|(k, v)| [k, v]))
            .chain(BODIES.iter().map(|(k, _)| k));
        for s in strs {
            assert!(holds(s.at, s.len, TEXT.len()), "{s:?}");
            assert!(TEXT.get(s.at as usize..(s.at + s.len) as usize).is_some(), "{s:?}");
        }
        for l in BODIES.iter().map(|(_, l)| l) {
            assert!(holds(l.at, l.len, STRS.len()), "{l:?}");
        }
        for (_, l) in BY_TIER.iter() {
            assert!(holds(l.at, l.len, PAIRS.len()), "{l:?}");
        }
        for r in RULES.iter() {
            assert!(!r.id.get().is_empty());
            for l in [r.verbs, r.when] {
                assert!(holds(l.at, l.len, STRS.len()), "{}", r.id.get());
            }
            assert!(holds(r.max_files.at, r.max_files.len, SIZES.len()), "{}", r.id.get());
        }
        for e in ENDPOINT_RULES.iter() {
            assert!(!e.id.get().is_empty());
            for l in [e.methods, e.mutations] {
                assert!(holds(l.at, l.len, STRS.len()), "{}", e.id.get());
            }
            assert!(holds(e.body.at, e.body.len, BODIES.len()), "{}", e.id.get());
        }
        let policies = crate::tool::Tool::ALL.iter().map(|t| t.spec().compiled);
        for env in std::iter::once(&COMMON).chain(policies.clone().map(|p| &p.env)) {
            for l in [env.pass, env.pinned, env.must_match] {
                assert!(holds(l.at, l.len, STRS.len()), "{l:?}");
            }
            assert!(holds(env.set.at, env.set.len, PAIRS.len()));
            assert!(holds(env.set_by_tier.at, env.set_by_tier.len, BY_TIER.len()));
        }
        for p in policies {
            assert!(holds(p.rules.at, p.rules.len, RULES.len()), "{}", p.tool.get());
        }
        assert!(holds(ENDPOINTS.endpoints.at, ENDPOINTS.endpoints.len, ENDPOINT_RULES.len()));
    }
}
