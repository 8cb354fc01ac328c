//! `tiershim skills list | show | validate` against a config with a baseline directory and
//! repositories, through the real binary.

use std::path::Path;
use std::process::Command;

use crate::harness::{TestEnv, bin};

fn write(p: &Path, text: &[u8]) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A config whose baseline holds `git-pr` (prose rules) and `ops/SKILL.md`, and a repository
/// `infra` whose `git-pr` overrides the baseline's.
fn setup() -> TestEnv {
    let env = TestEnv::new(1, "");
    let base = env.path("skills");
    write(
        &base.join("git-pr.md"),
        b"# Skill: PRs\n\n## Purpose\n\nOpen PRs.\n\n## Tier Requirement\n\nTier 2 minimum.\n\n## Tool Discovery\n\ngh\n\n## Execution\n\nx\n\n## Validation\n\nx\n\n## Scope Rules\n\n- **Inventory**: `ie.yaml`, `**/inventory/*.yaml`, DNS records\n- Never `docker rm`\n",
    );
    write(
        &base.join("ops/SKILL.md"),
        b"---\nname: ops\ndescription: Operate things.\n---\n# Ops\n\n## Purpose\n\nx\n\n## Tool Discovery\n\nx\n\n## Execution\n\nx\n\n## Validation\n\nx\n",
    );
    write(&base.join("README.md"), b"# not a skill\n");
    write(
        &env.path("repos/infra/.claude-ops/skills/git-pr.md"),
        b"# Skill: PRs for infra\n\n## Scope Rules\n\n```deny\nwireguard/\n```\n",
    );
    env.write_config(&format!(
        "tier: 1\nskills:\n  baseline: {}\n  repos: {}\n",
        base.display(),
        env.path("repos").display()
    ));
    env
}

fn skills(env: &TestEnv, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin())
        .arg("skills")
        .args(args)
        .arg("--config")
        .arg(env.config_path())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn list_shows_where_each_skill_was_found_and_which_copy_a_repository_uses() {
    let env = setup();
    let (code, out, err) = skills(&env, &["list", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows: Vec<(String, String)> = v["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["location"]["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("git-pr".to_string(), "baseline".to_string()),
            ("ops".to_string(), "baseline".to_string()),
            ("git-pr".to_string(), "repo".to_string())
        ]
    );
    assert_eq!(v["skills"][0]["overridden_in"], serde_json::json!(["infra"]));
    assert_eq!(v["skills"][0]["deny"], serde_json::json!(["ie.yaml", "**/inventory/*.yaml"]));
    assert_eq!(v["skills"][0]["tier"], 2);
    assert_eq!(v["skills"][1]["layout"], "agent-skill");
    assert_eq!(v["skills"][1]["description"], "Operate things.");
    assert_eq!(v["skills"][2]["replaces"], env.path("skills/git-pr.md").display().to_string());
    assert_eq!(v["skills"][2]["deny"], serde_json::json!(["wireguard/"]));

    let (code, out, _) = skills(&env, &["list"]);
    assert_eq!(code, 0);
    assert!(out.contains("instructions replaced in infra; path rules add up"), "{out}");
}

#[test]
fn show_prints_sections_patterns_as_written_and_findings() {
    let env = setup();
    let (code, out, err) = skills(&env, &["show", "git-pr", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let base = &v["copies"][0];
    assert_eq!(
        base["deny"],
        serde_json::json!([
            {"text": "ie.yaml", "origin": "prose", "line": 25},
            {"text": "**/inventory/*.yaml", "origin": "prose", "line": 25},
        ])
    );
    let findings: Vec<&str> = base["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(
        findings
            .iter()
            .any(|f| f.contains("`docker rm` in Scope Rules is not a path pattern")),
        "{findings:?}"
    );
    assert_eq!(base["tier"]["tier"], 2);
    let sections: Vec<&str> = base["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        sections,
        vec![
            "Purpose",
            "Tier Requirement",
            "Tool Discovery",
            "Execution",
            "Validation",
            "Scope Rules"
        ]
    );
    assert_eq!(v["copies"][1]["deny"][0]["origin"], "block");

    let (code, _, err) = skills(&env, &["show", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("no skill named `nope`"), "{err}");
}

#[test]
fn validate_passes_clean_skills_and_reports_every_kind_of_fault() {
    let env = setup();
    let (code, out, err) = skills(&env, &["validate"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0 error(s)"), "{out}");

    let base = env.path("skills");
    write(&base.join("bad-fm/SKILL.md"), b"---\nname: \"Other\\nName\"\n---\n# x\n");
    write(&base.join("binary.md"), b"# Skill: b\n\xff\xfe");
    let huge = format!("---\nname: huge\ndescription: {}\n---\n", "a".repeat(70 * 1024));
    write(&base.join("huge/SKILL.md"), huge.as_bytes());
    write(&base.join("notier.md"), b"# Skill: n\n\n## Tier Requirement\n\nAsk someone.\n");
    write(&base.join("glob.md"), b"# Skill: g\n\n## Scope Rules\n\n```deny\n{oops\n```\n");
    write(&base.join("ops.md"), b"# Skill: ops twice\n");
    std::os::unix::fs::symlink(base.join("loop.md"), base.join("loop.md")).unwrap();
    write(&env.path("outside.md"), b"# Skill: outside\n");
    std::os::unix::fs::symlink(env.path("outside.md"), base.join("escape.md")).unwrap();

    let (code, out, err) = skills(&env, &["validate", "--json"]);
    assert_eq!(code, 78, "{out}{err}");
    let text = out.clone();
    for want in [
        "must be 1-64 characters on one line",
        "no `description`",
        "is not UTF-8",
        "over the 65536 byte limit",
        "Tier Requirement names no tier",
        "does not compile",
        "defined twice in one directory",
        "is a symlink loop",
        "outside",
    ] {
        assert!(text.contains(want), "{want} missing from {text}");
    }
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["errors"].as_u64().unwrap() >= 9, "{v}");
}
