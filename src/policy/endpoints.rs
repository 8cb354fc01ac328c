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
use crate::policy::{Examples, Required, ScopeKind, Text, TierFile};

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

/// One validated endpoint rule. Its strings borrow the compiled tables for the shipped rules
/// (a call copies nothing to read them) and own an operator's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub id: Text,
    /// In the file's order, without repeats.
    pub methods: Vec<Text>,
    pub path: Option<Pattern>,
    pub body: BTreeMap<String, Vec<String>>,
    /// In the file's order, without repeats.
    pub mutations: Vec<Text>,
    pub required: Required,
    pub skill: Text,
    pub what: Option<Text>,
    pub instead: Option<Text>,
    pub scope: Option<ScopeKind>,
    pub max_files: BTreeMap<u8, usize>,
}

/// A request as the endpoint rules read it, worked out once for all of them: its path's
/// segments, and those of its alias (`grammar::http::alias`).
pub struct HttpRequest<'h> {
    http: &'h Http,
    parts: Vec<&'h str>,
    alias: Option<String>,
}

impl<'h> HttpRequest<'h> {
    pub fn of(http: &'h Http) -> HttpRequest<'h> {
        HttpRequest {
            http,
            parts: segments(&http.path),
            alias: crate::grammar::http::alias(&http.path),
        }
    }
}

fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

/// Without repeats, the first of each kept, in order.
fn distinct(items: impl IntoIterator<Item = Text>) -> Vec<Text> {
    let mut out: Vec<Text> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

impl Endpoint {
    /// Whether this rule applies to the request.
    pub fn matches(&self, r: &HttpRequest) -> bool {
        let h = r.http;
        if let Some(m) = &h.mutation
            && self.mutations.iter().any(|x| x == m || x == "*")
        {
            return true;
        }
        let Some(p) = &self.path else {
            return false;
        };
        let path = p.matches_parts(&r.parts) || r.alias.as_deref().is_some_and(|a| p.matches_parts(&segments(a)));
        (self.methods.is_empty() || self.methods.iter().any(|m| *m == h.method)) && path && self.body_matches(&h.body)
    }

    /// The rule names this request's GraphQL mutation explicitly.
    pub fn names_mutation(&self, h: &Http) -> bool {
        h.mutation.as_ref().is_some_and(|m| self.mutations.iter().any(|x| x == m))
    }

    /// `mutations: ["*"]` without a path: applies to mutations no other rule names.
    pub fn is_mutation_fallback(&self) -> bool {
        self.path.is_none() && self.mutations.iter().any(|x| x == "*")
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
    text: Text,
    segs: Vec<Seg>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Any,
    One,
    /// Alternatives separated by `|`, each a glob with `*` compared without regard to ASCII
    /// case: where the segment lies in the pattern's text.
    Lit(std::ops::Range<usize>),
}

impl Pattern {
    pub fn parse(text: impl Into<Text>) -> std::result::Result<Pattern, String> {
        let text: Text = text.into();
        let segs = Pattern::segs(&text)?;
        Ok(Pattern { text, segs })
    }

    fn segs(text: &str) -> std::result::Result<Vec<Seg>, String> {
        let rest = if let Some(r) = text.strip_prefix('/') {
            r
        } else if text.starts_with("**/") || text == "**" {
            text
        } else {
            return Err(format!("path `{text}` must start with `/` (anchored) or `**/` (any prefix)"));
        };
        // Bytes, not `str::split`: the shipped rules' patterns are parsed on every curl or gh
        // call, and the byte loop costs a fraction of the searchers.
        let start = text.len() - rest.len();
        let mut segs = Vec::with_capacity(rest.bytes().filter(|&b| b == b'/').count() + 1);
        let mut at = start;
        for s in rest.as_bytes().split(|&b| b == b'/') {
            let here = at;
            at += s.len() + 1;
            let shown = || String::from_utf8_lossy(s).into_owned();
            let seg = match s {
                b"" if rest.is_empty() => continue,
                b"" => return Err(format!("path `{text}` has an empty segment")),
                b"**" => Seg::Any,
                b"*" => Seg::One,
                [b'{', .., b'}'] if s.len() > 2 => Seg::One,
                s if s.iter().any(|b| matches!(b, b'{' | b'}' | b'?' | b'[' | b']')) => {
                    return Err(format!(
                        "path `{text}`: segment `{}` uses a character patterns do not have",
                        shown()
                    ));
                }
                s => {
                    if s.split(|&b| b == b'|').any(<[u8]>::is_empty) {
                        return Err(format!("path `{text}`: segment `{}` has an empty alternative", shown()));
                    }
                    Seg::Lit(here..here + s.len())
                }
            };
            segs.push(seg);
        }
        Ok(segs)
    }

    /// Whether the normalised `path` matches.
    #[cfg(test)]
    fn matches(&self, path: &str) -> bool {
        self.matches_parts(&segments(path))
    }

    /// Whether the path of these segments matches.
    fn matches_parts(&self, parts: &[&str]) -> bool {
        match_from(&self.text, &self.segs, parts)
    }
}

fn match_from(text: &str, segs: &[Seg], parts: &[&str]) -> bool {
    match segs.split_first() {
        None => parts.is_empty(),
        Some((Seg::Any, rest)) => (0..=parts.len()).any(|k| match_from(text, rest, &parts[k..])),
        Some((seg, rest)) => match parts.split_first() {
            None => false,
            Some((p, more)) => seg_matches(text, seg, p) && match_from(text, rest, more),
        },
    }
}

fn seg_matches(text: &str, seg: &Seg, part: &str) -> bool {
    match seg {
        Seg::Any | Seg::One => true,
        Seg::Lit(at) => text
            .as_bytes()
            .get(at.clone())
            .is_some_and(|alts| alts.split(|&b| b == b'|').any(|a| glob(a, part.as_bytes()))),
    }
}

/// `*` matches any run of bytes; everything else literally, without regard to ASCII case.
fn glob(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|k| glob(rest, &s[k..])),
        Some((c, rest)) => s.first().is_some_and(|b| b.eq_ignore_ascii_case(c)) && glob(rest, &s[1..]),
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
        let path = e.path.clone().map(Pattern::parse).transpose().map_err(at)?;
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
            id: e.id.into(),
            methods: distinct(e.methods.into_iter().map(Text::from)),
            path,
            body: e.body,
            mutations: distinct(e.mutations.into_iter().map(Text::from)),
            required,
            skill: e.skill.unwrap_or_else(|| file.skill.clone()).into(),
            what: e.what.map(Text::from),
            instead: e.instead.map(Text::from),
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
        Pattern::parse(s.to_string()).unwrap_or_else(|e| panic!("{e}"))
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

    trait Hits {
        fn hits(&self, h: &Http) -> bool;
    }

    impl Hits for Endpoint {
        fn hits(&self, h: &Http) -> bool {
            self.matches(&HttpRequest::of(h))
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
        assert!(r.hits(&http("POST", "/repos/o/r/pulls/1/reviews", f("approve"))));
        assert!(!r.hits(&http("POST", "/repos/o/r/pulls/1/reviews", f("COMMENT"))));
        assert!(r.hits(&http("POST", "/repos/o/r/pulls/1/reviews", Body::Opaque)));
        assert!(!r.hits(&http("POST", "/repos/o/r/pulls/1/reviews", Body::None)));
        assert!(!r.hits(&http("PUT", "/repos/o/r/pulls/1/reviews", f("APPROVE"))));
        // Names fold as Go's encoding/json (Gitea) matches them; two that fold alike are opaque.
        for body in [
            r#"{"EVENT":"APPROVE"}"#,
            r#"{"Event":"approve"}"#,
            r#"{"event":"COMMENT","Event":"APPROVE"}"#,
        ] {
            assert!(
                r.hits(&http("POST", "/repos/o/r/pulls/1/reviews", crate::grammar::http::body_of(body))),
                "{body}"
            );
        }
        assert!(!r.hits(&http(
            "POST",
            "/repos/o/r/pulls/1/reviews",
            crate::grammar::http::body_of(r#"{"EVENT":"COMMENT"}"#)
        )));
    }

    #[test]
    fn mutation_rules_match_graphql_fields_by_name() {
        let r = rule("  - {id: http.m, mutations: [mergePullRequest], tier: never}");
        let mut h = http("POST", "/graphql", Body::Opaque);
        assert!(!r.hits(&h));
        h.mutation = Some("mergePullRequest".into());
        assert!(r.hits(&h));
        h.mutation = Some("addComment".into());
        assert!(!r.hits(&h));
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
