//! What curl and `gh api` share about an HTTP request: the URL path as endpoint rules see it,
//! the request body as fields, and the request shapes that need more than a tier (pull-request
//! creation and contents writes carry a path-scope target; GraphQL documents are split into one
//! action per mutation).
//!
//! Pure: bodies read from files arrive as text the gate read before. Nothing here decides a
//! tier; `policy/endpoints.yaml` does.

use std::collections::BTreeMap;

use crate::grammar::graphql::{self, Operation};
use crate::grammar::{Action, Body, Http, ScopeTarget};

/// The path of a URL (or of a `gh api` endpoint) as endpoint rules match it: query and
/// fragment cut, percent-escapes decoded, empty segments dropped, a leading `/`. A `.` or `..`
/// segment is an error: where it leads depends on who normalises it (curl, a proxy, the
/// server), so the gate cannot name the endpoint.
pub fn normalise_path(raw: &str) -> Result<String, String> {
    let cut = raw.split(['?', '#']).next().unwrap_or("");
    let decoded = percent_decode(cut);
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

/// `%XX` decoded once; a `%` not followed by two hex digits stays as it is.
fn percent_decode(s: &str) -> String {
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

/// A body as fields: a JSON object's top-level members, or `a=b&c=d` form pairs. Text that
/// looks like JSON but is not an object, or does not parse, is opaque.
pub fn body_of(text: &str) -> Body {
    let t = text.trim_start();
    if t.starts_with(['{', '[', '"']) {
        return match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(map)) => Body::Fields(map.into_iter().map(|(k, v)| (k, json_text(&v))).collect()),
            _ => Body::Opaque,
        };
    }
    let mut fields = BTreeMap::new();
    for pair in text.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        fields.insert(form_decode(k), form_decode(v));
    }
    Body::Fields(fields)
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
/// - `PUT|POST|DELETE …/repos/{o}/{r}/contents/{path}`: mark `contents-write`, target that path;
///   Gitea's `POST …/repos/{o}/{r}/contents` (several files) makes one action per `files[].path`;
/// - a path ending in `graphql`: the body's `query` is parsed; a mutation gives one action per
///   top-level field (mark `graphql-mutation`), a subscription is marked `graphql-subscription`,
///   a document the gate cannot read or parse is marked `graphql-opaque`.
pub fn actions(base: Action, method: &str, path: &str, body: Body) -> Vec<Action> {
    let segs = segments(path);
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
                a.scope = Some(ScopeTarget::Contents {
                    owner: owner.to_string(),
                    repo: repo.to_string(),
                    path: segs[i + 4..].join("/"),
                });
                return vec![a];
            }
            // Gitea's ChangeFiles: the paths are in the body.
            return change_files(a, owner, repo, &body);
        }
    }
    vec![a]
}

fn field(body: &Body, name: &str) -> Option<String> {
    match body {
        Body::Fields(f) => f.get(name).filter(|v| !v.is_empty()).cloned(),
        _ => None,
    }
}

fn change_files(a: Action, owner: &str, repo: &str, body: &Body) -> Vec<Action> {
    let files = field(body, "files").and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    let paths: Option<Vec<String>> = files.as_ref().and_then(|v| v.as_array()).map(|arr| {
        arr.iter()
            .filter_map(|f| f.get("path").and_then(|p| p.as_str()).map(str::to_string))
            .collect()
    });
    match paths {
        Some(p) if !p.is_empty() && p.len() == files.as_ref().and_then(|v| v.as_array()).map_or(0, Vec::len) => p
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
            .collect(),
        _ => vec![a.mark("scope-unknown")],
    }
}

fn graphql_actions(a: Action, body: &Body) -> Vec<Action> {
    let doc = match body {
        Body::Fields(f) => f.get("query"),
        _ => None,
    };
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
        let a = actions(Action::new("PUT"), "PUT", "/api/v1/repos/o/r/contents/docs/a.md", Body::Opaque);
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
