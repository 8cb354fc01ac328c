//! Endpoint rules: `policy/endpoints.yaml`, shared by curl and `gh api`. Each rule names HTTP
//! requests by method and URL path (whatever the host: GitHub, a GitHub Enterprise `/api/v3`
//! prefix, Gitea's `/api/v1`, a reverse-proxy prefix), by a condition on the request body, or
//! by GraphQL mutation name, and gives them a tier. Like every rule, the strictest one that
//! matches decides, so an endpoint rule can only tighten what the tool's method rules allow.
//!
//! Owns the file mirror, validation (patterns are parsed here, once per load) and the meaning
//! of a pattern ([`Pattern::matches`]). Which rules apply to a call is `decide()`'s business.
//!
//! Pattern syntax, one `/`-separated segment at a time, compared case-insensitively against the
//! normalised path (percent-decoded, no query, no empty segments):
//!
//! - `**` any number of segments (zero included); a pattern starts with `/` (anchored at the
//!   root of the path) or with `**/` (any prefix);
//! - `*` or `{name}` exactly one segment (`{owner}` only documents what it stands for);
//! - anything else is literal, where `*` inside a segment matches any run of characters and
//!   `a|b` offers alternatives: `hooks|keys`, `v1.*`.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::grammar::{Body, Http};
use crate::policy::{Examples, Required, ScopeKind, TierFile};

/// The file mirror of one endpoint rule.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct EndpointFile {
    /// The rule's name, as audit records and refusals cite it: `http.` and more.
    #[cfg_attr(test, schemars(pattern(r"^http\..")))]
    pub id: String,
    /// Methods the rule applies to (upper case). Empty or absent: every method.
    #[serde(default)]
    pub methods: Vec<String>,
    /// The URL path pattern: `/`-separated segments, `**` any number of them, `*` or `{name}`
    /// exactly one, `a|b` alternatives.
    #[serde(default)]
    pub path: Option<String>,
    /// Top-level fields of the request body and the values that make the rule apply (`*`: any
    /// value). Any one field matching is enough; names compare case-insensitively (as Go's
    /// encoding/json does); a body the gate cannot read always matches.
    #[serde(default)]
    pub body: BTreeMap<String, Vec<String>>,
    /// GraphQL mutation fields this rule covers (`*`: every mutation).
    #[serde(default)]
    pub mutations: Vec<String>,
    /// The lowest tier that may make the request: 1, 2, 3 or never.
    pub tier: TierFile,
    /// The skill a refusal names (default: the file's).
    #[serde(default)]
    pub skill: Option<String>,
    /// What the request does, in a refusal's words.
    #[serde(default)]
    pub what: Option<String>,
    /// What to do instead, in a refusal's words.
    #[serde(default)]
    pub instead: Option<String>,
    /// Calls the rule must allow and refuse, checked when the rule loads.
    #[serde(default)]
    pub examples: Option<EndpointExamplesFile>,
    /// A path-scope check of what the request changes, as in the tool files (`pr`, `contents`).
    #[serde(default)]
    pub scope: Option<ScopeKind>,
    /// The most files a request of this rule may change, per effective tier. Needs `scope`.
    #[serde(default)]
    pub max_files: BTreeMap<u8, usize>,
}

/// Examples of an endpoint rule: full calls, the tool first (`[gh, api, …]`, `[curl, …]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct EndpointExamplesFile {
    #[serde(default)]
    pub allow: Vec<Vec<String>>,
    #[serde(default)]
    pub refuse: Vec<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointsFile {
    /// The skill named by rules that do not name one.
    pub skill: String,
    pub endpoints: Vec<EndpointFile>,
}

/// One validated endpoint rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub id: String,
    pub methods: BTreeSet<String>,
    pub path: Option<Pattern>,
    pub body: BTreeMap<String, Vec<String>>,
    pub mutations: BTreeSet<String>,
    pub required: Required,
    pub skill: String,
    pub what: Option<String>,
    pub instead: Option<String>,
    pub scope: Option<ScopeKind>,
    pub max_files: BTreeMap<u8, usize>,
}

impl Endpoint {
    /// Whether this rule applies to the request.
    pub fn matches(&self, h: &Http) -> bool {
        if let Some(m) = &h.mutation
            && (self.mutations.contains(m) || self.mutations.contains("*"))
        {
            return true;
        }
        let Some(p) = &self.path else {
            return false;
        };
        let path = p.matches(&h.path) || crate::grammar::http::alias(&h.path).is_some_and(|a| p.matches(&a));
        (self.methods.is_empty() || self.methods.contains(&h.method)) && path && self.body_matches(&h.body)
    }

    /// The rule names this request's GraphQL mutation explicitly.
    pub fn names_mutation(&self, h: &Http) -> bool {
        h.mutation.as_ref().is_some_and(|m| self.mutations.contains(m))
    }

    /// `mutations: ["*"]` without a path: applies to mutations no other rule names.
    pub fn is_mutation_fallback(&self) -> bool {
        self.path.is_none() && self.mutations.contains("*")
    }

    fn body_matches(&self, body: &Body) -> bool {
        const ABSENT: &str = "<absent>";
        if self.body.is_empty() {
            return true;
        }
        // `<absent>`: the field is not sent (a contents write without `branch` lands on the
        // default branch).
        let absent = |want: &Vec<String>| want.iter().any(|w| w == ABSENT);
        match body {
            Body::None => self.body.values().any(absent),
            Body::Opaque => true,
            // Field names fold as Go's encoding/json reads them (`EVENT`, `ſtate`); a body with
            // two names that fold alike is opaque already (`http::fields`).
            // A branch may be named in full (`refs/heads/main`), as the hosting APIs accept.
            Body::Fields(_) => self.body.iter().any(|(k, want)| match body.field(k) {
                Some(v) => {
                    let short = v.strip_prefix("refs/heads/").unwrap_or(v);
                    want.iter()
                        .any(|w| w == "*" || w.eq_ignore_ascii_case(v) || w.eq_ignore_ascii_case(short))
                }
                None => absent(want),
            }),
        }
    }

    /// How specific the rule is, to pick the one that explains a decision among equals.
    pub fn specificity(&self) -> usize {
        let literal = self
            .path
            .as_ref()
            .map_or(0, |p| p.segs.iter().filter(|s| matches!(s, Seg::Lit(_))).count());
        1000 + literal + self.body.len() + self.mutations.len()
    }
}

/// A parsed path pattern (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    segs: Vec<Seg>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Any,
    One,
    /// Alternatives, each a lower-case glob with `*`.
    Lit(Vec<String>),
}

impl Pattern {
    pub fn parse(text: &str) -> std::result::Result<Pattern, String> {
        let rest = if let Some(r) = text.strip_prefix('/') {
            r
        } else if text.starts_with("**/") || text == "**" {
            text
        } else {
            return Err(format!("path `{text}` must start with `/` (anchored) or `**/` (any prefix)"));
        };
        let mut segs = Vec::new();
        for s in rest.split('/') {
            let seg = match s {
                "" if rest.is_empty() => continue,
                "" => return Err(format!("path `{text}` has an empty segment")),
                "**" => Seg::Any,
                "*" => Seg::One,
                s if s.starts_with('{') && s.ends_with('}') && s.len() > 2 => Seg::One,
                s if s.contains(['{', '}', '?', '[', ']']) => {
                    return Err(format!("path `{text}`: segment `{s}` uses a character patterns do not have"));
                }
                s => {
                    let alts: Vec<String> = s.split('|').map(str::to_ascii_lowercase).collect();
                    if alts.iter().any(String::is_empty) {
                        return Err(format!("path `{text}`: segment `{s}` has an empty alternative"));
                    }
                    Seg::Lit(alts)
                }
            };
            segs.push(seg);
        }
        Ok(Pattern {
            text: text.to_string(),
            segs,
        })
    }

    /// Whether the normalised `path` matches.
    pub fn matches(&self, path: &str) -> bool {
        let parts: Vec<String> = path.split('/').filter(|s| !s.is_empty()).map(str::to_ascii_lowercase).collect();
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        match_from(&self.segs, &parts)
    }
}

fn match_from(segs: &[Seg], parts: &[&str]) -> bool {
    match segs.split_first() {
        None => parts.is_empty(),
        Some((Seg::Any, rest)) => (0..=parts.len()).any(|k| match_from(rest, &parts[k..])),
        Some((seg, rest)) => match parts.split_first() {
            None => false,
            Some((p, more)) => seg_matches(seg, p) && match_from(rest, more),
        },
    }
}

fn seg_matches(seg: &Seg, part: &str) -> bool {
    match seg {
        Seg::Any | Seg::One => true,
        Seg::Lit(alts) => alts.iter().any(|a| glob(a.as_bytes(), part.as_bytes())),
    }
}

/// `*` matches any run of bytes; everything else literally.
fn glob(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|k| glob(rest, &s[k..])),
        Some((c, rest)) => s.first() == Some(c) && glob(rest, &s[1..]),
    }
}

fn err(source: &str, msg: String) -> Error {
    Error::Policy {
        source_name: source.to_string(),
        msg,
    }
}

/// Validate one rule given outside an endpoints file (tiershim.yaml `endpoints:`); rules
/// without `skill` get `http-request`. The message says what is wrong with it.
pub fn validate_one(e: EndpointFile) -> std::result::Result<(Endpoint, Examples), String> {
    let f = EndpointsFile {
        skill: "http-request".to_string(),
        endpoints: vec![e],
    };
    match validate(f, "") {
        Ok((mut rules, mut examples)) => match (rules.pop(), examples.pop()) {
            (Some(r), Some(x)) => Ok((r, x)),
            _ => Err("no rule".into()),
        },
        Err(Error::Policy { msg, .. }) => Err(msg.split_once(": ").map_or(msg.clone(), |(_, m)| m.to_string())),
        Err(e) => Err(e.to_string()),
    }
}

/// Validate the file into rules and their examples (same index).
pub fn validate(file: EndpointsFile, source: &str) -> Result<(Vec<Endpoint>, Vec<Examples>)> {
    let mut ids = BTreeSet::new();
    let mut rules = Vec::with_capacity(file.endpoints.len());
    let mut examples = Vec::with_capacity(file.endpoints.len());
    for e in file.endpoints {
        let at = |msg: String| err(source, format!("endpoint {}: {msg}", e.id));
        if !e.id.starts_with("http.") || e.id.len() <= 5 {
            return Err(at("endpoint ids start with `http.`".into()));
        }
        if !ids.insert(e.id.clone()) {
            return Err(at("duplicate endpoint id".into()));
        }
        if e.path.is_none() && e.mutations.is_empty() {
            return Err(at("an endpoint rule needs `path` or `mutations`".into()));
        }
        if e.path.is_none() && (!e.methods.is_empty() || !e.body.is_empty()) {
            return Err(at("`methods` and `body` apply to `path`; this rule has none".into()));
        }
        if let Some(m) = e
            .methods
            .iter()
            .find(|m| m.is_empty() || !m.bytes().all(|b| b.is_ascii_uppercase()))
        {
            return Err(at(format!("method `{m}` is not an upper-case HTTP method")));
        }
        if let Some((k, _)) = e.body.iter().find(|(k, v)| k.is_empty() || v.is_empty()) {
            return Err(at(format!("body field `{k}` needs a name and at least one value")));
        }
        let path = e.path.as_deref().map(Pattern::parse).transpose().map_err(at)?;
        if !e.max_files.is_empty() && e.scope.is_none() {
            return Err(at("`max_files` needs a `scope` (it counts the files the scope check finds)".into()));
        }
        if let Some(t) = e.max_files.keys().find(|t| !(1..=3).contains(*t)) {
            return Err(at(format!("`max_files` names tier {t}, which is not 1, 2 or 3")));
        }
        let required = match &e.tier {
            TierFile::Number(n @ 1..=3) => Required::Tier(*n as u8),
            TierFile::Word(w) if w == "never" => Required::Never,
            TierFile::Number(n) => return Err(at(format!("tier {n} is not 1, 2, 3 or never"))),
            TierFile::Word(w) => return Err(at(format!("tier `{w}` is not 1, 2, 3 or never"))),
        };
        let ex = e.examples.unwrap_or_default();
        if required == Required::Never && !ex.allow.is_empty() {
            return Err(at("a `never` rule cannot have allow examples".into()));
        }
        if let Some(bad) = ex
            .allow
            .iter()
            .chain(&ex.refuse)
            .find(|a| !matches!(a.first().map(String::as_str), Some("curl" | "gh")))
        {
            return Err(at(format!("example `{}` must start with the tool, `curl` or `gh`", bad.join(" "))));
        }
        examples.push(Examples {
            allow: ex.allow,
            refuse: ex.refuse,
            inputs: Default::default(),
            compose: None,
            compose_changeable: false,
            compose_remote: false,
            remote_host: None,
        });
        rules.push(Endpoint {
            id: e.id,
            methods: e.methods.into_iter().collect(),
            path,
            body: e.body,
            mutations: e.mutations.into_iter().collect(),
            required,
            skill: e.skill.unwrap_or_else(|| file.skill.clone()),
            what: e.what,
            instead: e.instead,
            scope: e.scope,
            max_files: e.max_files,
        });
    }
    Ok((rules, examples))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Pattern {
        Pattern::parse(s).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn patterns_match_whole_segments_with_any_prefix_or_anchored() {
        let pulls = p("**/repos/{owner}/{repo}/pulls");
        for path in ["/repos/o/r/pulls", "/api/v3/repos/o/r/pulls", "/gitea/api/v1/REPOS/o/r/Pulls"] {
            assert!(pulls.matches(path), "{path}");
        }
        for path in ["/repos/o/r/pulls/1", "/repos/o/pulls", "/repos/o/r/pullsx", "/xrepos/o/r/pulls"] {
            assert!(!pulls.matches(path), "{path}");
        }
        assert!(p("/health").matches("/health"));
        assert!(!p("/health").matches("/api/health"));
        assert!(p("**").matches("/"));
        assert!(p("/").matches("/"));
    }

    #[test]
    fn double_star_spans_segments_and_alternatives_and_globs_match_within_one() {
        let prot = p("**/repos/*/*/branches/*/protection/**");
        assert!(prot.matches("/repos/o/r/branches/main/protection"));
        assert!(prot.matches("/repos/o/r/branches/main/protection/required_status_checks/contexts"));
        let keys = p("**/repos/*/*/hooks|keys/**");
        assert!(keys.matches("/repos/o/r/keys"));
        assert!(keys.matches("/api/v1/repos/o/r/hooks/3"));
        assert!(!keys.matches("/repos/o/r/issues"));
        let docker = p("**/v1.*/containers/**");
        assert!(docker.matches("/v1.43/containers/x/exec"));
        assert!(!docker.matches("/v2/containers/x"));
    }

    #[test]
    fn bad_patterns_are_refused_with_the_reason() {
        for bad in ["repos/*", "/a//b", "/a/{b", "/a/b?", "/a/x||y", "/[a]"] {
            assert!(Pattern::parse(bad).is_err(), "{bad}");
        }
    }

    fn http(method: &str, path: &str, body: Body) -> Http {
        Http {
            method: method.into(),
            path: path.into(),
            body,
            mutation: None,
        }
    }

    fn rule(yaml: &str) -> Endpoint {
        let f: EndpointsFile = serde_yaml_ng::from_str(&format!("skill: s\nendpoints:\n{yaml}")).unwrap();
        validate(f, "t").unwrap().0.remove(0)
    }

    #[test]
    fn body_conditions_match_a_field_value_or_any_unreadable_body() {
        let r = rule("  - {id: http.x, methods: [POST], path: '**/reviews', body: {event: [APPROVE]}, tier: never}");
        let f = |v: &str| Body::Fields([("event".to_string(), v.to_string())].into());
        assert!(r.matches(&http("POST", "/repos/o/r/pulls/1/reviews", f("approve"))));
        assert!(!r.matches(&http("POST", "/repos/o/r/pulls/1/reviews", f("COMMENT"))));
        assert!(r.matches(&http("POST", "/repos/o/r/pulls/1/reviews", Body::Opaque)));
        assert!(!r.matches(&http("POST", "/repos/o/r/pulls/1/reviews", Body::None)));
        assert!(!r.matches(&http("PUT", "/repos/o/r/pulls/1/reviews", f("APPROVE"))));
        // Names fold as Go's encoding/json (Gitea) matches them; two that fold alike are opaque.
        for body in [
            r#"{"EVENT":"APPROVE"}"#,
            r#"{"Event":"approve"}"#,
            r#"{"event":"COMMENT","Event":"APPROVE"}"#,
        ] {
            assert!(
                r.matches(&http("POST", "/repos/o/r/pulls/1/reviews", crate::grammar::http::body_of(body))),
                "{body}"
            );
        }
        assert!(!r.matches(&http(
            "POST",
            "/repos/o/r/pulls/1/reviews",
            crate::grammar::http::body_of(r#"{"EVENT":"COMMENT"}"#)
        )));
    }

    #[test]
    fn mutation_rules_match_graphql_fields_by_name() {
        let r = rule("  - {id: http.m, mutations: [mergePullRequest], tier: never}");
        let mut h = http("POST", "/graphql", Body::Opaque);
        assert!(!r.matches(&h));
        h.mutation = Some("mergePullRequest".into());
        assert!(r.matches(&h));
        h.mutation = Some("addComment".into());
        assert!(!r.matches(&h));
    }

    #[test]
    fn invalid_rules_name_the_rule_and_the_problem() {
        for (yaml, want) in [
            ("  - {id: x, path: /a, tier: 1}", "start with `http.`"),
            ("  - {id: http.a, tier: 1}", "needs `path` or `mutations`"),
            ("  - {id: http.a, path: /a, methods: [post], tier: 1}", "upper-case"),
            ("  - {id: http.a, path: a, tier: 1}", "must start with"),
            ("  - {id: http.a, path: /a, tier: 4}", "tier 4"),
            ("  - {id: http.a, mutations: [x], methods: [POST], tier: 1}", "apply to `path`"),
            (
                "  - {id: http.a, path: /a, tier: never, examples: {allow: [[curl, x]]}}",
                "allow examples",
            ),
            (
                "  - {id: http.a, path: /a, tier: 1, examples: {allow: [[docker, ps]]}}",
                "must start with the tool",
            ),
            (
                "  - {id: http.a, path: /a, tier: 1}\n  - {id: http.a, path: /b, tier: 1}",
                "duplicate",
            ),
        ] {
            let f: EndpointsFile = serde_yaml_ng::from_str(&format!("skill: s\nendpoints:\n{yaml}")).unwrap();
            let e = validate(f, "t").unwrap_err().to_string();
            assert!(e.contains(want), "{yaml}: {e}");
        }
    }
}
