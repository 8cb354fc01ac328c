//! The documents stay true to the repository: README is an operator's page, every link in
//! README and docs/ leads somewhere, no document cites one the reader cannot open, and every
//! `tiershim.yaml` key of the generated schema is described in docs/configuration.md.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::installed::repo;

/// The markdown files an operator, reviewer or contributor reads: README, SECURITY, CHANGELOG,
/// ARCHITECTURE, docs/ and the examples' READMEs.
fn documents() -> Vec<PathBuf> {
    let root = repo();
    let mut out: Vec<PathBuf> = ["README.md", "SECURITY.md", "CHANGELOG.md", "ARCHITECTURE.md"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    out.extend(files_under(&root.join("docs"), "md"));
    out.extend(files_under(&root.join("examples"), "md"));
    out
}

/// Every file below `dir` whose name ends in `.ext` (any extension when `ext` is empty).
fn files_under(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if ext.is_empty() || p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn rel(p: &Path) -> String {
    p.strip_prefix(repo()).unwrap_or(p).display().to_string()
}

/// The text of a markdown file outside fenced code blocks and inline code spans.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<String> = None;
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(f) = &fence {
            if t.starts_with(f.as_str()) {
                fence = None;
            }
            out.push('\n');
            continue;
        }
        if t.starts_with("```") || t.starts_with("~~~") {
            let c = &t[..1];
            let n = t.chars().take_while(|ch| ch.to_string() == c).count();
            fence = Some(c.repeat(n));
            out.push('\n');
            continue;
        }
        // Drop inline code spans (a run of backticks up to the same run).
        let mut rest = line;
        while let Some(i) = rest.find('`') {
            out.push_str(&rest[..i]);
            let run = rest[i..].chars().take_while(|c| *c == '`').count();
            let after = &rest[i + run..];
            match after.find(&"`".repeat(run)) {
                Some(j) => rest = &after[j + run..],
                None => {
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out.push('\n');
    }
    out
}

/// The `[text](target)` links of a markdown file's prose.
fn links(text: &str) -> Vec<String> {
    let p = prose(text);
    let mut out = Vec::new();
    let b = p.as_bytes();
    let mut i = 0;
    while let Some(k) = p[i..].find("](") {
        let start = i + k + 2;
        let mut depth = 0usize;
        let mut end = start;
        while end < b.len() {
            match b[end] {
                b'(' => depth += 1,
                b')' if depth == 0 => break,
                b')' => depth -= 1,
                b' ' | b'\n' => break,
                _ => {}
            }
            end += 1;
        }
        out.push(p[start..end].to_string());
        i = end;
    }
    out
}

/// GitHub's anchor for a heading: lower case, only letters, digits, `-`, `_` and spaces kept,
/// spaces made `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a markdown file's headings (a repeated one gets `-1`, `-2`, … as on GitHub).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || !line.starts_with('#') {
            continue;
        }
        let h = line.trim_start_matches('#');
        if !h.starts_with(' ') {
            continue;
        }
        let base = slug(h);
        let mut s = base.clone();
        let mut n = 0;
        while out.contains(&s) {
            n += 1;
            s = format!("{base}-{n}");
        }
        out.insert(s);
    }
    out
}

#[test]
fn readme_is_an_operators_page_of_at_most_200_lines() {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let n = text.lines().count();
    assert!(
        n <= 200,
        "README.md has {n} lines; move what is not for a first-time operator into docs/"
    );
    for part in ["## Two commands", "## Tiers", "## One example per tool", "tiershim launch", "docs/"] {
        assert!(text.contains(part), "README.md has no {part:?}");
    }
}

#[test]
fn every_link_in_readme_and_docs_leads_to_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for link in links(&text) {
            if link.starts_with("http://") || link.starts_with("https://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match link.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (link.as_str(), None),
            };
            let target = if path.is_empty() {
                doc.clone()
            } else {
                doc.parent().unwrap().join(path)
            };
            if !target.exists() {
                broken.push(format!("{}: {link}: no such file", rel(&doc)));
                continue;
            }
            if let Some(a) = anchor {
                let t = std::fs::read_to_string(&target).unwrap_or_default();
                if !anchors(&t).contains(a) {
                    broken.push(format!("{}: {link}: {} has no heading #{a}", rel(&doc), rel(&target)));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} links found: the link reader is broken");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_reader_finds_links_in_prose_only_and_anchors_as_github_makes_them() {
    let md = "See [a](x.md#b) and `[c](not-a-link.md)`.\n```\n[d](in-a-fence.md)\n```\n[e](../f(g).md)\n";
    assert_eq!(links(md), vec!["x.md#b", "../f(g).md"]);
    assert_eq!(slug(" Hardening (`--harden`)"), "hardening---harden");
    assert_eq!(slug(" Local files: what a call may write"), "local-files-what-a-call-may-write");
    assert_eq!(
        anchors("# T\n## Use\n## Use\n```\n# not\n```\n"),
        BTreeSet::from(["t".to_string(), "use".into(), "use-1".into()])
    );
}

#[test]
fn no_document_cites_a_document_the_reader_cannot_open() {
    // The design notes, specifications and decision records the project was built from are
    // not in the repository: a reader gets what they say, never their numbers.
    let cites = ["SPEC-", "ADR-", "REQ-", "DESIGN.md", "DESIGN §", "DESIGN's", "../shared"];
    let root = repo();
    let mut files = documents();
    for (dir, ext) in [("skills", "md"), ("policy", "yaml"), ("dist", ""), ("examples", "")] {
        files.extend(files_under(&root.join(dir), ext));
    }
    files.sort();
    files.dedup();
    let mut found = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else { continue };
        for (n, line) in text.lines().enumerate() {
            for c in cites {
                if line.contains(c) {
                    found.push(format!("{}:{}: {}", rel(f), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(files.len() > 30, "only {} files read", files.len());
    assert!(found.is_empty(), "citations the reader cannot follow:\n{}", found.join("\n"));
}

/// Every key the schema of `tiershim.yaml` knows, at any depth.
fn schema_keys(schema: &serde_json::Value) -> (BTreeSet<String>, BTreeSet<String>) {
    fn walk(
        v: &serde_json::Value,
        root: &serde_json::Value,
        top: bool,
        keys: &mut BTreeSet<String>,
        tops: &mut BTreeSet<String>,
        seen: &mut BTreeSet<String>,
    ) {
        let Some(o) = v.as_object() else { return };
        if let Some(props) = o.get("properties").and_then(|p| p.as_object()) {
            for (k, sub) in props {
                keys.insert(k.clone());
                if top {
                    tops.insert(k.clone());
                }
                walk(sub, root, false, keys, tops, seen);
            }
        }
        if let Some(r) = o.get("$ref").and_then(|r| r.as_str()) {
            let name = r.rsplit('/').next().unwrap().to_string();
            if seen.insert(name.clone()) {
                let defs = root.get("definitions").or_else(|| root.get("$defs")).unwrap();
                walk(&defs[&name], root, false, keys, tops, seen);
            }
        }
        for k in ["items", "additionalProperties"] {
            if let Some(sub) = o.get(k) {
                walk(sub, root, false, keys, tops, seen);
            }
        }
        for k in ["anyOf", "oneOf", "allOf"] {
            for sub in o.get(k).and_then(|a| a.as_array()).into_iter().flatten() {
                walk(sub, root, false, keys, tops, seen);
            }
        }
    }
    let (mut keys, mut tops, mut seen) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    walk(schema, schema, true, &mut keys, &mut tops, &mut seen);
    (keys, tops)
}

#[test]
fn every_tiershim_yaml_key_in_the_schema_is_described_in_docs_configuration_md() {
    let schema: serde_json::Value = serde_json::from_slice(&std::fs::read(repo().join("dist/tiershim.schema.json")).unwrap()).unwrap();
    let doc = std::fs::read_to_string(repo().join("docs/configuration.md")).unwrap();
    let (keys, tops) = schema_keys(&schema);
    assert!(
        tops.contains("tier") && keys.contains("writable") && keys.contains("methods"),
        "{keys:?}"
    );
    let missing: Vec<String> = keys
        .iter()
        .filter(|k| !doc.contains(&format!("`{k}`")))
        .map(|k| format!("`{k}` is not named in docs/configuration.md"))
        .chain(
            tops.iter()
                .filter(|k| !doc.contains(&format!("| `{k}` |")))
                .map(|k| format!("`{k}` has no row in the table of keys of docs/configuration.md")),
        )
        .collect();
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn every_test_the_table_of_operator_mistakes_names_exists() {
    // docs/troubleshooting.md names, per mistake, the test that tries it again on every run
    // (`module::test_name_…`, a prefix): each must be a test in tests/it/<module>.rs.
    let doc = std::fs::read_to_string(repo().join("docs/troubleshooting.md")).unwrap();
    let table = doc.split("## Operator mistakes").nth(1).expect("the table of operator mistakes");
    let mut named = 0;
    let mut missing = Vec::new();
    let word = |c: char| c.is_ascii_lowercase() || c == '_';
    let mut rest = table;
    while let Some(i) = rest.find("::") {
        let module: String = rest[..i]
            .chars()
            .rev()
            .take_while(|c| word(*c))
            .collect::<String>()
            .chars()
            .rev()
            .collect();
        let after = &rest[i + 2..];
        let prefix: String = after.chars().take_while(|c| word(*c)).collect();
        let opened = rest[..i - module.len()].ends_with('`');
        let closed = after[prefix.len()..].starts_with("…`") || after[prefix.len()..].starts_with('`');
        rest = &after[prefix.len()..];
        let file = repo().join("tests/it").join(format!("{module}.rs"));
        let Ok(src) = std::fs::read_to_string(&file) else { continue };
        if !(opened && closed) || prefix.is_empty() {
            continue;
        }
        named += 1;
        if !src.contains(&format!("fn {prefix}")) {
            missing.push(format!("{module}::{prefix}…"));
        }
    }
    assert!(named >= 15, "only {named} tests named: the table reader is broken");
    assert!(
        missing.is_empty(),
        "the table of operator mistakes names tests that do not exist: {missing:?}"
    );
}
