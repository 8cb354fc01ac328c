//! Path scope (DESIGN §7): the deny and allow patterns of skills, compiled with gitignore's
//! semantics (`glob.rs`, held to the `ignore` crate's meaning by a differential test), and the
//! check of a list of changed files against them.
//!
//! - A pattern without a slash matches a name at any depth; a leading or middle slash anchors
//!   it to the repository root; a trailing slash is a directory and everything under it; `**`
//!   spans directories.
//! - Deny patterns from every skill add up (a repository can only add to the baseline); they
//!   match case-insensitively, the stricter reading. A negated pattern (`!x`) could only remove
//!   a deny, so the skill parser drops it before it gets here.
//! - An `allow` block makes an allow-list: a file the call changes must match one pattern of
//!   each allow-list of the call's skill (baseline and repository copies alike), so a
//!   repository can narrow the list but never widen it. Allow patterns match case-sensitively.
//! - Paths are normalised first; a path with `..`, an absolute path, or one with a NUL or a
//!   control character is a violation by itself.
//!
//! Pure: the skills come in already read; nothing here touches the file system.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Serialize;

use crate::glob::{Pattern, Set};
use crate::skill::{Parsed, Problem, Skill};

/// One allow-list: the allow block(s) of one skill file.
#[derive(Debug, Clone)]
struct AllowList {
    skill: String,
    file: String,
    patterns: Vec<String>,
    matcher: Set,
}

/// The compiled rules of every skill consulted by one scope check.
#[derive(Debug, Clone)]
pub struct Rules {
    deny: Set,
    allow: Vec<AllowList>,
    /// Every skill file consulted, in order.
    pub files: Arc<[String]>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Why {
    /// Matches a deny pattern of `source`.
    Denied { pattern: String, source: String },
    /// Matches no pattern of the allow-list in `source`.
    NotAllowed { source: String, allowed: Vec<String> },
    /// The path itself is refused (`..`, absolute, control characters, empty).
    BadPath { reason: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub path: String,
    #[serde(flatten)]
    pub why: Why,
}

impl Violation {
    /// The tail of the SCOPE VIOLATION line (DESIGN §4): `matches denied pattern P (FILE)`.
    pub fn describe(&self) -> String {
        match &self.why {
            Why::Denied { pattern, source } => format!("matches denied pattern {pattern} ({source})"),
            Why::NotAllowed { source, allowed } => {
                format!("matches no allowed pattern ({source} allows only {})", allowed.join(", "))
            }
            Why::BadPath { reason } => reason.clone(),
        }
    }
}

/// Compile one skill's pattern; a pattern that does not compile is an error naming the file
/// and line (skipping it would silently drop a rule).
fn compile(
    shown: &str,
    from: &Arc<str>,
    p: &crate::skill::Pattern,
    case_insensitive: bool,
    kind: &str,
) -> Result<Option<Pattern>, Problem> {
    Pattern::new(&p.text, from, case_insensitive).map_err(|e| Problem {
        path: shown.to_string(),
        message: format!("line {}: {kind} pattern `{}` does not compile: {e}", p.line, p.text),
    })
}

fn set(patterns: Vec<Pattern>, file: &str) -> Result<Set, Problem> {
    Set::new(patterns).map_err(|message| Problem {
        path: file.to_string(),
        message,
    })
}

/// Rules compiled one skill file at a time, so a check over many files keeps none of them.
#[derive(Debug, Default)]
pub struct Builder {
    deny: Vec<Pattern>,
    allow: Vec<AllowList>,
    files: Vec<String>,
    /// The first pattern that did not compile: [`Builder::finish`] reports it.
    failed: Option<Problem>,
}

impl Builder {
    /// Add the patterns of skill `name`, read from `shown`. After a pattern that does not
    /// compile nothing more is compiled: [`Builder::finish`] reports that one.
    pub fn add(&mut self, name: &str, shown: &str, parsed: &Parsed) {
        self.files.push(shown.to_string());
        if self.failed.is_none()
            && let Err(p) = self.compile(name, shown, parsed)
        {
            self.failed = Some(p);
        }
    }

    fn compile(&mut self, name: &str, shown: &str, parsed: &Parsed) -> Result<(), Problem> {
        if parsed.deny.is_empty() && parsed.allow.is_none() {
            return Ok(());
        }
        let from: Arc<str> = Arc::from(shown);
        for p in &parsed.deny {
            self.deny.extend(compile(shown, &from, p, true, "deny")?);
        }
        if let Some(list) = &parsed.allow {
            let mut compiled = Vec::new();
            for p in list {
                compiled.extend(compile(shown, &from, p, false, "allow")?);
            }
            self.allow.push(AllowList {
                skill: name.to_string(),
                file: shown.to_string(),
                patterns: list.iter().map(|p| p.text.clone()).collect(),
                matcher: set(compiled, shown)?,
            });
        }
        Ok(())
    }

    /// The rules, or the first pattern that did not compile.
    pub fn finish(self) -> Result<Rules, Problem> {
        if let Some(p) = self.failed {
            return Err(p);
        }
        let first = self.files.first().cloned().unwrap_or_default();
        Ok(Rules {
            deny: set(self.deny, &first)?,
            allow: self.allow,
            files: self.files.into(),
        })
    }
}

impl Rules {
    /// Compile the patterns of `skills`. A pattern that does not compile is an error naming its
    /// file and line: skipping it would silently drop a rule.
    pub fn build(skills: &[Skill]) -> Result<Rules, Problem> {
        let mut b = Builder::default();
        for s in skills {
            b.add(&s.name, &s.shown, &s.parsed);
        }
        b.finish()
    }

    /// No patterns at all.
    pub fn empty() -> Rules {
        Rules {
            deny: Set::empty(),
            allow: Vec::new(),
            files: Arc::from([]),
        }
    }

    #[cfg(test)]
    pub fn deny_count(&self) -> usize {
        self.deny.len()
    }

    /// The violations of `files` changed by a call of skill `skill`, in file order; for each
    /// file the deny match comes first.
    pub fn check(&self, skill: &str, files: &[String]) -> Vec<Violation> {
        let mut lists: Vec<(&AllowList, crate::glob::Checker)> = self
            .allow
            .iter()
            .filter(|a| a.skill == skill)
            .map(|a| (a, a.matcher.checker_for(files.len())))
            .collect();
        let mut deny = self.deny.checker_for(files.len());
        let mut out = Vec::new();
        for raw in files {
            let path = match normalize(raw) {
                Ok(p) => p,
                Err(reason) => {
                    out.push(Violation {
                        path: raw.clone(),
                        why: Why::BadPath { reason },
                    });
                    continue;
                }
            };
            if let Some(g) = deny.matched_path_or_any_parents(&path) {
                out.push(Violation {
                    path: path.to_string(),
                    why: Why::Denied {
                        pattern: g.original.clone(),
                        source: g.from.to_string(),
                    },
                });
                continue;
            }
            for (list, checker) in &mut lists {
                if checker.matched_path_or_any_parents(&path).is_none() {
                    out.push(Violation {
                        path: path.to_string(),
                        why: Why::NotAllowed {
                            source: list.file.clone(),
                            allowed: list.patterns.clone(),
                        },
                    });
                    break;
                }
            }
        }
        out
    }
}

/// A repository-relative path in canonical form: no empty or `.` segments, no leading `/`.
/// `..` anywhere, an empty path, and control characters are refused.
pub fn normalize(path: &str) -> Result<Cow<'_, str>, String> {
    // Printable ASCII throughout (the common case) has no control character.
    let printable = path.bytes().all(|b| (0x20..0x7f).contains(&b));
    if !printable && path.chars().any(char::is_control) {
        return Err("paths with control characters are refused".into());
    }
    // Already canonical (git's own output is): the path as it is, not a copy.
    if !path.is_empty() && path.split('/').all(|seg| !matches!(seg, "" | "." | "..")) {
        return Ok(Cow::Borrowed(path));
    }
    let mut parts = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => return Err("paths containing .. are refused".into()),
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        return Err("an empty path is refused".into());
    }
    Ok(Cow::Owned(parts.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::{Layout, Location, parse};
    use pretty_assertions::assert_eq;

    fn skill(name: &str, shown: &str, text: &str) -> Skill {
        Skill {
            name: name.into(),
            shown: shown.into(),
            layout: Layout::ClaudeOps,
            location: Location::Baseline,
            text: text.into(),
            parsed: parse::parse(text, false),
        }
    }

    fn deny(patterns: &str) -> Rules {
        Rules::build(&[skill("s", "base/s.md", &format!("## Scope Rules\n\n```deny\n{patterns}\n```\n"))]).unwrap()
    }

    fn denied(r: &Rules, path: &str) -> Option<String> {
        r.check("other", &[path.to_string()]).first().map(|v| match &v.why {
            Why::Denied { pattern, .. } => pattern.clone(),
            other => format!("{other:?}"),
        })
    }

    #[test]
    fn gitignore_pattern_forms_match_as_gitignore_does() {
        let r =
            deny("ie.yaml\nvms-*.yaml\n**/inventory/*.yaml\nwireguard/\n/volumes/\n.env\n*.pem\nprompts/*.md\nDockerfile.*\nsecrets/**");
        for (path, want) in [
            ("ie.yaml", Some("ie.yaml")),
            ("hosts/eu/ie.yaml", Some("ie.yaml")),
            ("IE.YAML", Some("ie.yaml")),
            ("vms-prod.yaml", Some("vms-*.yaml")),
            ("a/b/inventory/hosts.yaml", Some("**/inventory/*.yaml")),
            ("inventory/hosts.yaml", Some("**/inventory/*.yaml")),
            ("inventory/deep/hosts.yaml", None),
            ("wireguard/wg0.conf", Some("wireguard/")),
            ("net/wireguard/keys/a", Some("wireguard/")),
            ("volumes/db/data", Some("/volumes/")),
            ("app/volumes/db", None),
            (".env", Some(".env")),
            ("svc/.env", Some(".env")),
            (".env.local", None),
            ("certs/tls.pem", Some("*.pem")),
            ("prompts/tier1.md", Some("prompts/*.md")),
            ("docs/prompts/tier1.md", None),
            ("Dockerfile.prod", Some("Dockerfile.*")),
            ("Dockerfile", None),
            ("secrets/a/b", Some("secrets/**")),
            ("checks/http.md", None),
        ] {
            assert_eq!(denied(&r, path).as_deref(), want, "{path}");
        }
    }

    #[test]
    fn paths_are_normalised_and_dot_dot_is_refused() {
        assert_eq!(normalize("./a//b/./c.md").unwrap(), "a/b/c.md");
        assert_eq!(normalize("/a/b").unwrap(), "a/b");
        for bad in ["../x", "a/../b", "", "/", "a\nb"] {
            assert!(normalize(bad).is_err(), "{bad:?}");
        }
        let r = deny("ie.yaml");
        assert_eq!(
            denied(&r, "./x/../ie.yaml").unwrap(),
            "BadPath { reason: \"paths containing .. are refused\" }"
        );
        assert_eq!(denied(&r, "a//ie.yaml").unwrap(), "ie.yaml");
    }

    #[test]
    fn repository_denies_add_to_the_baseline_and_name_their_file() {
        let base = skill("git-pr", "base/git-pr.md", "## Scope Rules\n\n```deny\n*.pem\n```\n");
        let repo = skill(
            "git-pr",
            "repos/infra/.claude-ops/skills/git-pr.md",
            "## Scope Rules\n\n```deny\n!*.pem\nie.yaml\n```\n",
        );
        let r = Rules::build(&[base, repo]).unwrap();
        let v = r.check("git-pr", &["k.pem".into(), "ie.yaml".into(), "ok.md".into()]);
        assert_eq!(
            v,
            vec![
                Violation {
                    path: "k.pem".into(),
                    why: Why::Denied {
                        pattern: "*.pem".into(),
                        source: "base/git-pr.md".into()
                    }
                },
                Violation {
                    path: "ie.yaml".into(),
                    why: Why::Denied {
                        pattern: "ie.yaml".into(),
                        source: "repos/infra/.claude-ops/skills/git-pr.md".into()
                    }
                },
            ]
        );
        assert_eq!(r.deny_count(), 2);
    }

    #[test]
    fn allow_lists_apply_to_their_skill_and_only_narrow() {
        let base = skill(
            "git-pr",
            "base/git-pr.md",
            "## Scope Rules\n\n```allow\nchecks/*.md\nplaybooks/*.md\n```\n",
        );
        let repo = skill(
            "git-pr",
            "repo/git-pr.md",
            "## Scope Rules\n\n```allow\nchecks/*.md\nanything/**\n```\n",
        );
        let r = Rules::build(&[base, repo]).unwrap();
        assert_eq!(r.check("git-pr", &["checks/http.md".into()]), vec![]);
        // Allowed by the repository but not the baseline: the baseline list still holds.
        let v = r.check("git-pr", &["anything/x".into()]);
        assert!(
            matches!(&v[0].why, Why::NotAllowed { source, .. } if source == "base/git-pr.md"),
            "{v:?}"
        );
        // Allowed by the baseline, narrowed out by the repository.
        let v = r.check("git-pr", &["playbooks/restart.md".into()]);
        assert!(
            matches!(&v[0].why, Why::NotAllowed { source, .. } if source == "repo/git-pr.md"),
            "{v:?}"
        );
        // Another skill's calls are not bound by git-pr's allow-list.
        assert_eq!(r.check("http-request", &["anything/x".into()]), vec![]);
        // Case matters for allow: CHECKS/x.md is not checks/*.md.
        assert_eq!(r.check("git-pr", &["CHECKS/x.md".into()]).len(), 1);
    }

    #[test]
    fn a_pattern_that_does_not_compile_is_an_error_naming_the_file() {
        let bad = skill("s", "base/s.md", "## Scope Rules\n\n```deny\nok.yaml\n{unclosed\n```\n");
        let e = Rules::build(&[bad]).unwrap_err();
        assert_eq!(e.path, "base/s.md");
        assert!(e.message.contains("line 5") && e.message.contains("{unclosed"), "{}", e.message);
    }
}
