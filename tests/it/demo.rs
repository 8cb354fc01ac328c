//! `make demo` (scripts/demo.sh) runs to the end in a temp dir, and the exit codes its
//! transcript shows are the ones the gate and the restricted shell really return.

use std::process::Command;

use crate::harness::bin;
use crate::installed::repo;

/// The exit code shown after the first step whose prompt line is `[tier N]$ CMD`.
fn exit_of(transcript: &str, step: &str) -> (String, i32) {
    let start = transcript
        .find(&format!("{step}\n"))
        .unwrap_or_else(|| panic!("no step {step:?} in:\n{transcript}"));
    let rest = &transcript[start + step.len() + 1..];
    let end = rest.find("(exit ").unwrap();
    let code: String = rest[end + 6..].chars().take_while(char::is_ascii_digit).collect();
    (rest[..end].to_string(), code.parse().unwrap())
}

#[test]
fn the_demo_walks_through_both_tiers_and_shows_real_exit_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(repo().join("scripts/demo.sh"))
        .arg(bin())
        .env("DEMO_DIR", tmp.path().join("demo"))
        .env_remove("TERM")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    for (step, code, shown) in [
        ("[tier 1]$ docker ps", 0, "(docker stand-in) would run: docker ps"),
        ("[tier 1]$ git status --short --branch", 0, "## fix-disk-check"),
        ("[tier 1]$ docker restart api", 77, "requires tier 2 (this agent is tier 1)"),
        ("[tier 2]$ gh pr merge 12 --admin", 77, "is never allowed"),
        (
            "[tier 2]$ CLAUDEOPS_DRY_RUN=1 docker restart api",
            0,
            "DRY RUN: would run: docker restart api",
        ),
        (
            "[tier 2]$ git push origin fix-disk-check",
            0,
            "[new branch]      fix-disk-check -> fix-disk-check",
        ),
        (
            "[tier 2]$ gh pr create -H bump-base -B main -t 'Bump base image' -b 'Debian 13'",
            77,
            "SCOPE VIOLATION: Refusing to create PR modifying Dockerfile",
        ),
        ("[tier 1]$ env docker restart api", 127, "env: command not found"),
        ("[tier 1]$ cat /etc/hostname > copy", 1, "restricted: cannot redirect output"),
        ("[tier 1]$ git -c core.pager='sh -c id' log", 77, "rule git.config-override"),
    ] {
        let (body, got) = exit_of(&text, step);
        assert_eq!(got, code, "{step}: {body}");
        assert!(body.contains(shown), "{step}: {body}");
    }
    // The doctor's verdict on the unhardened demo is shown with its own exit code.
    assert!(text.contains("check(s) failed\n    (exit 78)"), "{text}");
    assert!(!tmp.path().join("demo/repos/ops/copy").exists());
    // It ends with the audit report of what happened.
    assert!(text.contains("scope violations (1):"), "{text}");
    assert!(text.contains("Dockerfile matches denied pattern Dockerfile*"), "{text}");
}
