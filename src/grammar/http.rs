//! What curl and `gh api` share about an HTTP request: the URL path as endpoint rules see it,
//! the request body as fields, and the request shapes that need more than a tier (pull-request
//! creation and contents writes carry a path-scope target; GraphQL documents are split into one
//! action per mutation).
//!
//! Pure: bodies read from files arrive as text the gate read before. Nothing here decides a
//! tier; `policy/endpoints.yaml` does.

use std::collections::{BTreeMap, BTreeSet};

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::grammar::graphql::{self, Operation};
use crate::grammar::{Action, Body, Http, ScopeTarget};

/// The path of a URL (or of a `gh api` endpoint) as endpoint rules match it: query and
/// fragment cut, percent-escapes decoded, empty segments dropped, a leading `/`. A `.` or `..`
/// segment is an error: where it leads depends on who normalises it (curl, a proxy, the
/// server), so the gate cannot name the endpoint. So is a `;` (also as `%3B`): servers that
/// read path parameters (`merge;x`) route by the segment before it, others take it as part of
/// the name, and cutting it here would let `checks/a.md;.yaml` pass for `checks/a.md`.
pub fn normalise_path(raw: &str) -> Result<String, String> {
    let cut = raw.split(['?', '#']).next().unwrap_or("");
    let decoded = percent_decode(cut);
    if decoded.contains(';') {
        return Err(format!("URL path {raw:?} has a `;` (a path parameter); spell the path without it"));
    }
    let mut out = String::with_capacity(decoded.len() + 1);
    for seg in decoded.split(['/', '\\']) {
        match seg {
            "" => {}
            "." | ".." => return Err(format!("URL path {raw:?} has a `{seg}` segment; spell the path out")),
            s => {
                out.push('/');
                out.push_str(s);
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// The path as endpoint rules also read it: GitHub serves the repository API under
/// `/repositories/{id}/…` as well as `/repos/{owner}/{repo}/…`, and an organisation's under
/// `/organizations/{id}/…` as well as `/orgs/{org}/…`, so `…/repositories/42/pulls` is matched as
/// `…/repos/repositories/42/pulls` too (owner and repository one segment each, as rules name
/// them) and `/organizations/7/hooks` as `/orgs/7/hooks`. `None` for a path without these forms.
pub fn alias(path: &str) -> Option<String> {
    let segs = segments(path);
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mut out = String::new();
    let mut changed = false;
    for (i, s) in segs.iter().enumerate() {
        let next_is_id = segs.get(i + 1).is_some_and(|n| numeric(n));
        out.push('/');
        if next_is_id && is(s, "repositories") {
            out.push_str("repos/repositories");
            changed = true;
        } else if next_is_id && is(s, "organizations") {
            out.push_str("orgs");
            changed = true;
        } else {
            out.push_str(s);
        }
    }
    changed.then_some(out)
}

/// `%XX` decoded once; a `%` not followed by two hex digits stays as it is.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Headers many servers honour as the real method of a request (lower case).
const OVERRIDE_HEADERS: &[&str] = &["x-http-method-override", "x-http-method", "x-method-override"];

/// The methods named by method-override headers (`Name: value` lines), upper-cased, in order.
/// Every line of a header counts (a header with a line break is refused anyway, but its
/// meaning is still reported).
pub fn method_overrides<S: AsRef<str>>(headers: &[S]) -> Vec<String> {
    let mut out = Vec::new();
    for h in headers {
        for line in h.as_ref().split(['\r', '\n']) {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            if OVERRIDE_HEADERS.contains(&name.trim().to_ascii_lowercase().as_str()) && !value.is_empty() {
                out.push(value.to_ascii_uppercase());
            }
        }
    }
    out
}

/// The methods named by a `_method` parameter, which Rails, Laravel, Symfony and others take as
/// the real method of a POST: in the URL's query (`?_method=DELETE`) or the body's fields
/// (form or JSON), upper-cased. A body the gate cannot read may hold one too; the rules that
/// look at bodies treat it as unknown already.
pub fn param_overrides(url_or_target: &str, body: &Body) -> Vec<String> {
    let mut out = Vec::new();
    let query = url_or_target
        .split_once('?')
        .map(|(_, q)| q.split('#').next().unwrap_or(""))
        .unwrap_or("");
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if percent_decode(&k.replace('+', " ")) == "_method" {
            let v = percent_decode(&v.replace('+', " "));
            if !v.trim().is_empty() {
                out.push(v.trim().to_ascii_uppercase());
            }
        }
    }
    if let Some(v) = field(body, "_method").filter(|v| !v.trim().is_empty()) {
        out.push(v.trim().to_ascii_uppercase());
    }
    out
}

/// A body as fields: a JSON object's top-level members, or `a=b&c=d` form pairs. Text that
/// looks like JSON but is not an object, or does not parse, is opaque; so is a body where two
/// member names fold alike (see [`fold_key`]), at any depth, or a form that repeats a name.
pub fn body_of(text: &str) -> Body {
    let t = text.trim_start();
    if t.starts_with(['{', '[', '"']) {
        return match unambiguous_json(text) {
            Some(serde_json::Value::Object(map)) => fields(map.into_iter().map(|(k, v)| (k, json_text(&v)))),
            _ => Body::Opaque,
        };
    }
    fields(
        text.split('&')
            .filter(|p| !p.is_empty())
            .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
            .map(|(k, v)| (form_decode(k), form_decode(v))),
    )
}

/// A body's fields, names as written: opaque when two names fold alike. Go's encoding/json
/// (Gitea) matches member names to struct fields case-insensitively and lets the last one win,
/// so `{"head":"a","Head":"b"}` means `head: b` there and `head: a` to a case-sensitive reader
/// (GitHub); a form repeating a name is read first-wins by some servers and last-wins by
/// others. Which value a server uses cannot be known, so rules that look at the body match it.
pub fn fields(pairs: impl IntoIterator<Item = (String, String)>) -> Body {
    let mut out = BTreeMap::new();
    let mut folded = BTreeSet::new();
    for (k, v) in pairs {
        if !folded.insert(fold_key(&k)) {
            return Body::Opaque;
        }
        out.insert(k, v);
    }
    Body::Fields(out)
}

/// A member name as a case-insensitive reader compares it, at least as widely as Go's
/// encoding/json does (`foldName`: Unicode simple case folding, where `ſ` (U+017F) is an `s`
/// and the Kelvin sign (U+212A) a `k`): ASCII lower-cased, anything else upper- then
/// lower-cased. Folding more than Go only makes rules match more and bodies opaque sooner.
pub fn fold_key(k: &str) -> String {
    let mut out = String::with_capacity(k.len());
    for c in k.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else {
            out.extend(c.to_uppercase().flat_map(char::to_lowercase));
        }
    }
    out
}

impl Body {
    /// The value of the field whose name folds like `name` ([`fold_key`]); bodies built by
    /// [`fields`] have at most one.
    pub fn field(&self, name: &str) -> Option<&String> {
        let Body::Fields(f) = self else {
            return None;
        };
        let want = fold_key(name);
        f.iter().find(|(k, _)| fold_key(k) == want).map(|(_, v)| v)
    }
}

/// JSON text parsed, or `None` when it does not parse or an object in it (at any depth) has
/// two member names that fold alike.
pub fn unambiguous_json(text: &str) -> Option<serde_json::Value> {
    serde_json::from_str::<Unambiguous>(text).ok()?;
    serde_json::from_str(text).ok()
}

/// The member of a JSON object whose name folds like `name`.
fn member<'a>(obj: &'a serde_json::Map<String, serde_json::Value>, name: &str) -> Option<&'a serde_json::Value> {
    let want = fold_key(name);
    obj.iter().find(|(k, _)| fold_key(k) == want).map(|(_, v)| v)
}

/// Deserializes any JSON value and fails on an object with two member names that fold alike.
struct Unambiguous;

impl<'de> Deserialize<'de> for Unambiguous {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnambiguousVisitor)
    }
}

struct UnambiguousVisitor;

impl<'de> Visitor<'de> for UnambiguousVisitor {
    type Value = Unambiguous;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Unambiguous, E> {
        Ok(Unambiguous)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Unambiguous, E> {
        Ok(Unambiguous)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Unambiguous, E> {
        Ok(Unambiguous)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Unambiguous, E> {
        Ok(Unambiguous)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Unambiguous, E> {
        Ok(Unambiguous)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Unambiguous, E> {
        Ok(Unambiguous)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Unambiguous, A::Error> {
        while seq.next_element::<Unambiguous>()?.is_some() {}
        Ok(Unambiguous)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unambiguous, A::Error> {
        let mut seen = BTreeSet::new();
        while let Some(k) = map.next_key::<String>()? {
            if !seen.insert(fold_key(&k)) {
                return Err(de::Error::custom(format!(
                    "member {k:?} appears twice (names compared case-insensitively)"
                )));
            }
            map.next_value::<Unambiguous>()?;
        }
        Ok(Unambiguous)
    }
}

/// A JSON value as text: strings unquoted, anything else as compact JSON.
pub fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn form_decode(s: &str) -> String {
    percent_decode(&s.replace('+', " "))
}

/// The segments of a normalised path.
fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

fn is(seg: &str, word: &str) -> bool {
    seg.eq_ignore_ascii_case(word)
}

/// gh fills `{owner}` and `{repo}` from the working directory's repository.
fn placeholder(s: &str) -> bool {
    s.starts_with('{') && s.ends_with('}')
}

/// Turn one request into its actions: `base` (verb and marks already set) gets `http`; the
/// shapes the path-scope check knows get their target and a mark; a GraphQL request becomes one
/// action per mutation field.
///
/// - `POST …/repos/{o}/{r}/pulls`: mark `pr-create`, target from the body's `head` and `base`
///   (mark `scope-unknown` instead when the body cannot be read or lacks them);
/// - `PUT|POST|DELETE …/repos/{o}/{r}/contents/{path}`: mark `contents-write`, target that path,
///   and a second action for Gitea's `from_path` (a rename: the file moved away changes too; a
///   PUT whose body the gate cannot read is `scope-unknown`, since it may hold one);
///   Gitea's `POST …/repos/{o}/{r}/contents` (several files) makes one action per
///   `files[].path` and `files[].from_path`;
/// - a path ending in `graphql`: the body's `query` is parsed; a mutation gives one action per
///   top-level field (mark `graphql-mutation`), a subscription is marked `graphql-subscription`,
///   a document the gate cannot read or parse is marked `graphql-opaque`.
pub fn actions(base: Action, method: &str, path: &str, body: Body) -> Vec<Action> {
    let aliased = alias(path);
    let segs = segments(aliased.as_deref().unwrap_or(path));
    let mut a = base;
    a.http = Some(Http {
        method: method.to_string(),
        path: path.to_string(),
        body: body.clone(),
        mutation: None,
    });
    if segs.last().is_some_and(|s| is(s, "graphql")) && method != "GET" && method != "HEAD" {
        return graphql_actions(a, &body);
    }
    let writes = matches!(method, "PUT" | "POST" | "DELETE");
    for i in 0..segs.len() {
        if !is(segs[i], "repos") || segs.len() < i + 4 {
            continue;
        }
        let (owner, repo, what) = (segs[i + 1], segs[i + 2], segs[i + 3]);
        if method == "POST" && is(what, "pulls") && segs.len() == i + 4 {
            a.add("pr-create");
            let repo = (!placeholder(owner) && !placeholder(repo)).then(|| (owner.to_string(), repo.to_string()));
            match (field(&body, "head"), field(&body, "base")) {
                (Some(head), Some(base)) => {
                    a.scope = Some(ScopeTarget::PullRequest {
                        repo,
                        base: Some(base),
                        head: Some(head),
                    });
                }
                _ => a.add("scope-unknown"),
            }
            return vec![a];
        }
        if writes && is(what, "contents") {
            a.add("contents-write");
            if segs.len() > i + 4 {
                let target = |path: String| ScopeTarget::Contents {
                    owner: owner.to_string(),
                    repo: repo.to_string(),
                    path,
                };
                // Gitea's UpdateFile renames `from_path` to the path written: both change.
                let from = field(&body, "from_path");
                if method == "PUT" && body == Body::Opaque {
                    a.add("scope-unknown");
                }
                a.scope = Some(target(segs[i + 4..].join("/")));
                let mut out = vec![a.clone()];
                if let Some(from) = from {
                    a.scope = Some(target(from));
                    out.push(a);
                }
                return out;
            }
            // Gitea's ChangeFiles: the paths are in the body.
            return change_files(a, owner, repo, &body);
        }
    }
    vec![a]
}

fn field(body: &Body, name: &str) -> Option<String> {
    body.field(name).filter(|v| !v.is_empty()).cloned()
}

/// Gitea's ChangeFiles (`POST …/contents`): one action per `files[].path`, or `scope-unknown`
/// when an entry has no path the gate can read. Member names fold as Go reads them.
fn change_files(a: Action, owner: &str, repo: &str, body: &Body) -> Vec<Action> {
    let files = field(body, "files").and_then(|t| unambiguous_json(&t));
    let mut paths = Vec::new();
    for f in files.as_ref().and_then(|v| v.as_array()).into_iter().flatten() {
        let Some(obj) = f.as_object() else {
            return vec![a.mark("scope-unknown")];
        };
        match member(obj, "path").and_then(|p| p.as_str()) {
            Some(p) => paths.push(p.to_string()),
            None => return vec![a.mark("scope-unknown")],
        }
        match member(obj, "from_path") {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::String(p)) if p.is_empty() => {}
            Some(serde_json::Value::String(p)) => paths.push(p.clone()),
            Some(_) => return vec![a.mark("scope-unknown")],
        }
    }
    if paths.is_empty() {
        return vec![a.mark("scope-unknown")];
    }
    paths
        .into_iter()
        .map(|path| {
            let mut x = a.clone();
            x.scope = Some(ScopeTarget::Contents {
                owner: owner.to_string(),
                repo: repo.to_string(),
                path,
            });
            x
        })
        .collect()
}

fn graphql_actions(a: Action, body: &Body) -> Vec<Action> {
    let doc = body.field("query");
    let Some(doc) = doc else {
        return vec![a.mark("graphql-opaque")];
    };
    let ops = match graphql::operations(doc) {
        Ok(ops) => ops,
        Err(_) => return vec![a.mark("graphql-opaque")],
    };
    let mut out = Vec::new();
    let mut base = a;
    for op in &ops {
        match op {
            Operation::Query => {}
            Operation::Subscription => base.add("graphql-subscription"),
            Operation::Mutation(fields) => {
                for f in fields {
                    let mut m = base.clone().mark("graphql-mutation");
                    if let Some(h) = &mut m.http {
                        h.mutation = Some(f.name.clone());
                    }
                    if f.name == "createPullRequest" {
                        m.add("pr-create");
                        match (f.input("headRefName", body), f.input("baseRefName", body)) {
                            (Some(head), Some(base)) => {
                                m.scope = Some(ScopeTarget::PullRequest {
                                    repo: None,
                                    base: Some(base),
                                    head: Some(head),
                                });
                            }
                            _ => m.add("scope-unknown"),
                        }
                    }
                    if !out.contains(&m) {
                        out.push(m);
                    }
                }
            }
        }
    }
    if out.is_empty() {
        out.push(base);
    } else if base.has("graphql-subscription") {
        // Keep the subscription's mark on every action so it is judged too.
        for m in &mut out {
            m.add("graphql-subscription");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn fields(pairs: &[(&str, &str)]) -> Body {
        Body::Fields(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn paths_are_decoded_and_cut_and_dot_segments_refused() {
        assert_eq!(normalise_path("/api/v1//repos/o/r/?x=1#y").unwrap(), "/api/v1/repos/o/r");
        assert_eq!(normalise_path("/graph%71l").unwrap(), "/graphql");
        assert_eq!(normalise_path("repos/o/r/contents/a%2Fb").unwrap(), "/repos/o/r/contents/a/b");
        assert_eq!(normalise_path("").unwrap(), "/");
        assert_eq!(normalise_path("/a%zz").unwrap(), "/a%zz");
        assert!(normalise_path("/a/../repos/o/r").is_err());
        assert!(normalise_path("/a/%2e%2e/b").is_err());
        assert!(normalise_path("/a/./b").is_err());
        assert!(normalise_path("/repos/o/r/pulls/1/merge;x").is_err());
        assert!(normalise_path("/repos/o/r/pulls/1/merge%3Bx").is_err());
        assert_eq!(normalise_path("/search?q=a;b").unwrap(), "/search");
    }

    #[test]
    fn the_repository_api_by_id_reads_as_the_one_by_name() {
        assert_eq!(
            alias("/repositories/42/pulls/1/merge").as_deref(),
            Some("/repos/repositories/42/pulls/1/merge")
        );
        assert_eq!(alias("/api/v3/Repositories/7").as_deref(), Some("/api/v3/repos/repositories/7"));
        assert_eq!(alias("/repositories/x/pulls"), None);
        assert_eq!(alias("/repos/o/r"), None);
        assert_eq!(alias("/organizations/7/hooks").as_deref(), Some("/orgs/7/hooks"));
        assert_eq!(alias("/organizations"), None);
        let a = actions(Action::new("PUT"), "PUT", "/repositories/42/contents/a.md", Body::None);
        assert!(a[0].has("contents-write"));
    }

    #[test]
    fn bodies_are_json_objects_or_forms() {
        assert_eq!(
            body_of(r#"{"head":"fix","base":"main","draft":false}"#),
            fields(&[("base", "main"), ("draft", "false"), ("head", "fix")])
        );
        assert_eq!(body_of("a=1&b=x+y%21"), fields(&[("a", "1"), ("b", "x y!")]));
        assert_eq!(body_of("[1,2]"), Body::Opaque);
        assert_eq!(body_of("{not json"), Body::Opaque);
    }

    #[test]
    fn field_names_fold_as_go_reads_them() {
        assert_eq!(
            body_of(r#"{"EVENT":"APPROVED"}"#).field("event").map(String::as_str),
            Some("APPROVED")
        );
        assert_eq!(body_of("Default_Branch=x").field("default_branch").map(String::as_str), Some("x"));
        // `ſ` (U+017F) folds to `s` and the Kelvin sign (U+212A) to `k`, as in Go.
        assert_eq!(
            body_of("{\"\u{17f}tate\":\"closed\"}").field("state").map(String::as_str),
            Some("closed")
        );
        assert_eq!(body_of("{\"\u{212a}ey\":\"x\"}").field("key").map(String::as_str), Some("x"));
        assert_eq!(fold_key("Default_Branch"), "default_branch");
        assert_eq!(fold_key("VI\u{17f}IBILITY"), "visibility");
        assert_eq!(body_of(r#"{"event":"x"}"#).field("events"), None);
    }

    #[test]
    fn names_that_fold_alike_make_a_body_opaque_at_any_depth() {
        assert_eq!(body_of(r#"{"head":"c2","base":"main","Head":"feat"}"#), Body::Opaque);
        assert_eq!(body_of(r#"{"event":"COMMENT","event":"APPROVE"}"#), Body::Opaque);
        assert_eq!(body_of("{\"state\":\"open\",\"\u{17f}tate\":\"closed\"}"), Body::Opaque);
        assert_eq!(body_of(r#"{"files":[{"path":"checks/a.md","Path":"ie.yaml"}]}"#), Body::Opaque);
        assert_eq!(body_of("event=COMMENT&event=APPROVE"), Body::Opaque);
        assert_eq!(body_of("event=COMMENT&EVENT=APPROVE"), Body::Opaque);
        assert_eq!(
            super::fields([("head".to_string(), "a".to_string()), ("HEAD".to_string(), "b".to_string())]),
            Body::Opaque
        );
        // Different names stay fields, as written (GraphQL variables are case-sensitive).
        assert_eq!(body_of(r#"{"headRef":"a","base":"b"}"#), fields(&[("base", "b"), ("headRef", "a")]));
    }

    #[test]
    fn pull_request_creation_carries_its_scope_target() {
        let a = actions(
            Action::new("POST"),
            "POST",
            "/api/v3/repos/o/r/pulls",
            fields(&[("head", "fix"), ("base", "main")]),
        );
        assert_eq!(a.len(), 1);
        assert!(a[0].has("pr-create"));
        assert_eq!(
            a[0].scope,
            Some(ScopeTarget::PullRequest {
                repo: Some(("o".into(), "r".into())),
                base: Some("main".into()),
                head: Some("fix".into())
            })
        );
        let a = actions(Action::new("POST"), "POST", "/repos/o/r/pulls", Body::Opaque);
        assert!(a[0].has("scope-unknown") && a[0].scope.is_none());
        let a = actions(
            Action::new("api"),
            "POST",
            "/repos/{owner}/{repo}/pulls",
            fields(&[("head", "x"), ("base", "y")]),
        );
        assert!(matches!(a[0].scope, Some(ScopeTarget::PullRequest { repo: None, .. })));
        // Listing pulls, or a pull's comments, is not creation.
        assert!(!actions(Action::new("GET"), "GET", "/repos/o/r/pulls", Body::None)[0].has("pr-create"));
        assert!(!actions(Action::new("POST"), "POST", "/repos/o/r/pulls/1/comments", Body::None)[0].has("pr-create"));
    }

    #[test]
    fn contents_writes_carry_the_file_path() {
        let a = actions(Action::new("PUT"), "PUT", "/api/v1/repos/o/r/contents/docs/a.md", Body::None);
        assert!(a[0].has("contents-write"));
        assert_eq!(
            a[0].scope,
            Some(ScopeTarget::Contents {
                owner: "o".into(),
                repo: "r".into(),
                path: "docs/a.md".into()
            })
        );
        assert!(!actions(Action::new("GET"), "GET", "/repos/o/r/contents/a.md", Body::None)[0].has("contents-write"));
        let files = r#"{"files":[{"path":"a.md","operation":"create"},{"path":"b/c.md","operation":"delete"}]}"#;
        let a = actions(Action::new("POST"), "POST", "/api/v1/repos/o/r/contents", body_of(files));
        assert_eq!(a.len(), 2);
        assert!(matches!(&a[1].scope, Some(ScopeTarget::Contents { path, .. }) if path == "b/c.md"));
        let a = actions(Action::new("POST"), "POST", "/api/v1/repos/o/r/contents", Body::Opaque);
        assert!(a[0].has("scope-unknown"));
        // A rename: `from_path` changes too, in one file or in a ChangeFiles list.
        let target = |a: &Action| match &a.scope {
            Some(ScopeTarget::Contents { path, .. }) => path.clone(),
            _ => String::new(),
        };
        let a = actions(
            Action::new("PUT"),
            "PUT",
            "/api/v1/repos/o/r/contents/checks/a.md",
            body_of(r#"{"From_Path":"ie.yaml","content":"eA=="}"#),
        );
        assert_eq!(a.iter().map(target).collect::<Vec<_>>(), vec!["checks/a.md", "ie.yaml"]);
        let a = actions(Action::new("PUT"), "PUT", "/api/v1/repos/o/r/contents/checks/a.md", Body::Opaque);
        assert!(a[0].has("scope-unknown"));
        let a = actions(Action::new("DELETE"), "DELETE", "/repos/o/r/contents/checks/a.md", Body::Opaque);
        assert!(!a[0].has("scope-unknown"));
        let files = r#"{"files":[{"operation":"update","path":"checks/a.md","from_path":"ie.yaml"}]}"#;
        let a = actions(Action::new("POST"), "POST", "/api/v1/repos/o/r/contents", body_of(files));
        assert_eq!(a.iter().map(target).collect::<Vec<_>>(), vec!["checks/a.md", "ie.yaml"]);
        let files = r#"{"files":[{"path":"checks/a.md","from_path":7}]}"#;
        assert!(actions(Action::new("POST"), "POST", "/api/v1/repos/o/r/contents", body_of(files))[0].has("scope-unknown"));
        // Gitea reads `Path` as `path`.
        let a = actions(
            Action::new("POST"),
            "POST",
            "/api/v1/repos/o/r/contents",
            body_of(r#"{"Files":[{"operation":"update","Path":"ie.yaml"}]}"#),
        );
        assert!(
            matches!(&a[0].scope, Some(ScopeTarget::Contents { path, .. }) if path == "ie.yaml"),
            "{a:?}"
        );
        let a = actions(
            Action::new("POST"),
            "POST",
            "/api/v1/repos/o/r/contents",
            body_of(r#"{"files":[{"path":"a.md"},{"name":"b.md"}]}"#),
        );
        assert!(a.len() == 1 && a[0].has("scope-unknown"));
    }

    #[test]
    fn graphql_mutations_become_one_action_per_field() {
        let q = "mutation { a: addComment(input:{}) { clientMutationId } mergePullRequest(input:{}) { clientMutationId } }";
        let a = actions(Action::new("POST"), "POST", "/api/graphql", fields(&[("query", q)]));
        let names: Vec<_> = a.iter().map(|x| x.http.as_ref().and_then(|h| h.mutation.clone())).collect();
        assert_eq!(names, vec![Some("addComment".into()), Some("mergePullRequest".into())]);
        assert!(a.iter().all(|x| x.has("graphql-mutation")));
        let a = actions(
            Action::new("POST"),
            "POST",
            "/graphql",
            fields(&[("query", "{ viewer { login } }")]),
        );
        assert_eq!(a.len(), 1);
        assert!(a[0].marks.is_empty());
        assert!(actions(Action::new("POST"), "POST", "/graphql", Body::Opaque)[0].has("graphql-opaque"));
        assert!(actions(Action::new("POST"), "POST", "/graphql", fields(&[("query", "mutation {")]))[0].has("graphql-opaque"));
    }

    #[test]
    fn create_pull_request_mutations_take_head_and_base_from_literals_or_variables() {
        let q = r#"mutation($h: String!) { createPullRequest(input:{repositoryId:"R", baseRefName:"main", headRefName:$h, title:"t"}) { clientMutationId } }"#;
        let a = actions(
            Action::new("api graphql"),
            "POST",
            "/graphql",
            fields(&[("query", q), ("h", "fix")]),
        );
        assert!(a[0].has("pr-create"));
        assert_eq!(
            a[0].scope,
            Some(ScopeTarget::PullRequest {
                repo: None,
                base: Some("main".into()),
                head: Some("fix".into())
            })
        );
        let q = r#"mutation($i: CreatePullRequestInput!) { createPullRequest(input:$i) { clientMutationId } }"#;
        let a = actions(Action::new("api graphql"), "POST", "/graphql", fields(&[("query", q)]));
        assert!(a[0].has("scope-unknown"));
    }
}
