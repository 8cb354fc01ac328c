//! `make demo` (scripts/demo.sh) runs to the end in a temp dir; the exit codes its transcript
//! shows are the ones the gate and the restricted shell really return; each step says in plain
//! words what happened; and redirected, it carries no escape codes even with a colour terminal
//! named in TERM.

use std::process::Command;

use crate::harness::bin;
use crate::installed::repo;

/// The output, exit code and plain-words lines of the first step whose prompt is `[agent,
/// tier N]$ CMD`.
fn step(transcript: &str, prompt: &str) -> (String, i32, String) {
    let start = transcript
        .find(&format!("{prompt}\n"))
        .unwrap_or_else(|| panic!("no step {prompt:?} in:\n{transcript}"));
    let rest = &transcript[start + prompt.len() + 1..];
    let end = rest.find("(exit ").unwrap();
    let code: String = rest[end + 6..].chars().take_while(char::is_ascii_digit).collect();
    let after = &rest[end..];
    let words: String = after
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  ") && !l.starts_with("    "))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    (rest[..end].to_string(), code.parse().unwrap(), words)
}

#[test]
fn the_demo_walks_through_both_tiers_and_says_what_each_step_did() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(repo().join("scripts/demo.sh"))
        .arg(bin())
        .env("DEMO_DIR", tmp.path().join("demo"))
        .env("TERM", "xterm-256color")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains('\x1b'), "escape codes in redirected output:\n{text:?}");
    let t1 = "[agent, tier 1]$";
    let t2 = "[agent, tier 2]$";
    for (prompt, code, shown, words) in [
        (
            format!("{t1} docker ps"),
            0,
            "[docker stand-in: there is no real docker in this demo; it received: ps]",
            "ALLOWED at tier 1 (rule docker.containers.read): the gate ran the docker stand-in in place of the real docker.",
        ),
        (
            format!("{t1} git status --short --branch"),
            0,
            "## fix-disk-check",
            "the gate ran the real git",
        ),
        (
            format!("{t1} docker restart api"),
            77,
            "requires tier 2 (this agent is tier 1)",
            "REFUSED (rule docker.restart): needs a higher tier than 1. Nothing ran.",
        ),
        (
            format!("{t2} gh pr merge 12 --admin"),
            77,
            "is never allowed",
            "REFUSED (rule gh.pr.merge): never allowed at any tier. Nothing ran.",
        ),
        (
            format!("{t2} CLAUDEOPS_DRY_RUN=1 docker restart api"),
            0,
            "DRY RUN: would run: docker restart api",
            "DRY RUN (rule docker.restart): the gate printed what it would run and ran nothing.",
        ),
        (
            format!("{t2} git push origin fix-disk-check"),
            0,
            "[new branch]      fix-disk-check -> fix-disk-check",
            "ALLOWED at tier 2 (rule git.push): the gate ran the real git",
        ),
        (
            format!("{t2} gh pr create -H bump-base -B main -t 'Bump base image' -b 'Debian 13'"),
            77,
            "SCOPE VIOLATION: Refusing to create PR modifying Dockerfile",
            "SCOPE VIOLATION (rule gh.scope): the change touches a path a skill protects. Nothing ran.",
        ),
        (
            format!("{t1} env docker restart api"),
            127,
            "env: command not found",
            "REFUSED by the restricted shell before any tool ran: env: command not found.",
        ),
        (
            format!("{t1} cat /etc/hostname > copy"),
            1,
            "restricted: cannot redirect output",
            "REFUSED by the restricted shell before any tool ran",
        ),
        (
            format!("{t1} git -c core.pager='sh -c id' log"),
            77,
            "rule git.config-override",
            "REFUSED (rule git.config-override): never allowed at any tier.",
        ),
        // Not an escape: the assignment is refused and git runs through the gate.
        (
            format!("{t1} PATH=/usr/bin git status"),
            0,
            "PATH: readonly variable",
            "The shell refused the assignment (the tier's PATH and CLAUDEOPS_TIER are read-only), so the command ran with the tier's own PATH and tier, through the gate: → ALLOWED at tier 1 (rule git.read): the gate ran the real git",
        ),
    ] {
        let (body, got, said) = step(&text, &prompt);
        assert_eq!(got, code, "{prompt}: {body}");
        assert!(body.contains(shown), "{prompt}: {body}");
        assert!(said.contains(words), "{prompt}: said {said:?}");
    }
    // The restart budget: two restarts, then the third is refused by the budget.
    let restarts: Vec<&str> = text
        .match_indices(&format!("{t2} docker restart api\n"))
        .map(|(i, _)| &text[i..])
        .collect();
    assert_eq!(restarts.len(), 3, "{text}");
    for (i, code) in [(0, 0), (1, 0), (2, 77)] {
        let (body, got, said) = step(restarts[i], &format!("{t2} docker restart api"));
        assert_eq!(got, code, "restart {i}: {body}");
        if code == 77 {
            assert!(body.contains("REFUSED: cooldown for api — 2/2 restarts in the last 4h"), "{body}");
            assert!(said.starts_with("→ REFUSED by the restart budget (rule docker.cooldown)"), "{said}");
        }
    }
    assert!(text.contains("api      restart    2/2"), "{text}");
    // explain, run by the operator, decides as the gate does and runs nothing.
    assert!(
        text.contains("[operator]$ tiershim explain --tier 1 -- docker restart api\n    config:"),
        "{text}"
    );
    assert!(text.contains("verdict:        refuse"), "{text}");
    // The doctor checks the account the calls ran as, so it does not contradict them: the audit
    // log they wrote to is writable; what fails is what hardening fixes.
    let doctor = &text[text.find("[operator]$ tiershim doctor --user").unwrap()..];
    assert!(doctor.contains("✓ audit log    tier1, tier2: audit log"), "{doctor}");
    assert!(doctor.contains("(exit 78)"), "{doctor}");
    assert!(!tmp.path().join("demo/repos/ops/copy").exists());
    // It ends with the audit report of what happened.
    assert!(text.contains("scope violations (1):"), "{text}");
    assert!(text.contains("Dockerfile matches denied pattern Dockerfile*"), "{text}");
    assert!(text.contains("cooldown counted:\n      api (restart) ×2"), "{text}");
}
