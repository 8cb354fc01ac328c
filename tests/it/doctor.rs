//! `tiershim doctor` against a real installation: every check holds on a sound one, and each
//! broken installation (one per check) fails with exit 78 and a ✗ line that names the fault
//! and the fix.
//!
//! The agent's user is uid 65534 (an unprivileged user that owns nothing here). The real tools
//! are stubs in a directory only the test's own user can search, which is what `--harden`
//! achieves with a group; `--system-path` points at a directory the test controls, so copies of
//! real tools elsewhere on the machine do not decide these tests.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::installed::{Installed, repo};

struct Sound {
    inst: Installed,
    sys: std::path::PathBuf,
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn sound(extra: &[&str]) -> Sound {
    let inst = Installed::new(extra);
    chmod(&inst.real, 0o700);
    std::fs::write(&inst.audit, "").unwrap();
    chmod(&inst.audit, 0o666);
    let sys = inst.tmp.path().join("sys");
    std::fs::create_dir(&sys).unwrap();
    Sound { inst, sys }
}

impl Sound {
    fn doctor(&self) -> (i32, String) {
        let out = Command::new(self.inst.tiershim())
            .args(["doctor", "--prefix"])
            .arg(&self.inst.prefix)
            .args(["--user", "65534", "--system-path"])
            .arg(&self.sys)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.code().unwrap_or(-1), stdout + &String::from_utf8_lossy(&out.stderr))
    }

    fn cfg(&self, n: u8) -> std::path::PathBuf {
        self.inst.tier_dir(n).join("tiershim.yaml")
    }

    /// The doctor fails, and one of its ✗ lines contains every part of `want`.
    fn fails_with(&self, what: &str, want: &[&str]) {
        let (code, out) = self.doctor();
        assert_eq!(code, 78, "{what}: {out}");
        assert!(
            out.lines().any(|l| l.starts_with("✗ ") && want.iter().all(|w| l.contains(w))),
            "{what}: no ✗ line with {want:?}:\n{out}"
        );
        assert!(!out.contains("all checks hold"), "{what}");
    }
}

#[test]
fn a_sound_installation_passes_every_check() {
    let s = sound(&[]);
    let (code, out) = s.doctor();
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains('✗'), "{out}");
    for want in [
        "checking",
        "uid 65534)",
        "✓ rbash: ",
        "✓ tier1, tier2, tier3: links gh, tea, docker, psql, mysql, curl, git, ssh, kubectl, helm, ansible-playbook, ansible, ansible-inventory, ansible-galaxy -> ",
        "✓ tier2: ",
        "parses, ceiling 2",
        "✓ tier3: restricted profile ",
        "✓ tier1, tier2, tier3: real docker ",
        "exists, is not tiershim, and ",
        "(uid 65534) cannot run it without the gate",
        "passthrough tools, none of them can run a program or write a file",
        "are not writable by ",
        "audit log",
        "✓ policy (embedded): ",
        "skill files validate",
        "all checks hold",
    ] {
        assert!(out.contains(want), "{want:?} missing in:\n{out}");
    }
    // One config alone.
    let out = Command::new(s.inst.tiershim())
        .args(["doctor", "--config"])
        .arg(s.cfg(2))
        .args(["--user", "65534", "--system-path"])
        .arg(&s.sys)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("✓ tier2: links") && !text.contains("tier1"), "{text}");
}

#[test]
fn a_link_that_is_not_this_binary_fails_the_links_check() {
    let s = sound(&[]);
    let link = s.inst.tier_dir(1).join("docker");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink("/bin/true", &link).unwrap();
    s.fails_with(
        "link",
        &["tier1: ", "docker -> /bin/true is not ", "fix: ln -sfn ../../../bin/tiershim"],
    );
    std::fs::remove_file(&link).unwrap();
    s.fails_with("missing link", &["tier1: no link for docker", "re-run install.sh"]);
}

#[test]
fn a_config_that_does_not_parse_or_names_another_ceiling_fails_the_config_check() {
    let s = sound(&[]);
    let good = std::fs::read_to_string(s.cfg(1)).unwrap();
    std::fs::write(s.cfg(1), "tier: [1\n").unwrap();
    s.fails_with("unparseable", &["tier1: ", "tiershim.yaml", "fix the file"]);
    std::fs::write(s.cfg(1), good.replace("tier: 1", "tier: 3")).unwrap();
    s.fails_with("ceiling", &["says `tier: 3` in the directory of tier 1"]);
    std::fs::write(s.cfg(1), format!("{good}env: {{PGSERVICE: monitor}}\n")).unwrap();
    s.fails_with("service without its file", &["tier1: ", "`env.PGSERVICE`", "`env.PGSERVICEFILE`"]);
    std::fs::write(s.cfg(1), &good).unwrap();
    chmod(&s.cfg(1), 0o664);
    s.fails_with("group-writable", &["writable by group or others"]);
}

#[test]
fn a_missing_or_altered_profile_fails_the_profile_check() {
    let s = sound(&[]);
    let profile = s.inst.tier_dir(2).join("profile");
    let text = std::fs::read_to_string(&profile).unwrap();
    std::fs::write(&profile, text.replace("readonly PATH CLAUDEOPS_TIER SHELL", "# gone")).unwrap();
    s.fails_with(
        "readonly",
        &["tier2: restricted profile", "lacks `readonly PATH CLAUDEOPS_TIER SHELL`"],
    );
    std::fs::remove_file(&profile).unwrap();
    s.fails_with("missing", &["tier2: restricted profile", "No such file"]);
}

#[test]
fn a_missing_real_tool_fails_the_real_tools_check() {
    let s = sound(&[]);
    std::fs::remove_file(s.inst.real.join("tea")).unwrap();
    s.fails_with(
        "missing",
        &["tier1: real tea: tea is not installed at", "install tea, or point `real.tea`"],
    );
}

#[test]
fn a_real_tool_that_is_tiershim_fails_the_real_tools_check() {
    let s = sound(&[]);
    let good = std::fs::read_to_string(s.cfg(3)).unwrap();
    let real_gh = format!("'{}'", s.inst.real.join("gh").display());
    let own = format!("'{}'", s.inst.tiershim().display());
    std::fs::write(s.cfg(3), good.replace(&real_gh, &own)).unwrap();
    s.fails_with("self", &["tier3: real gh", "is tiershim itself"]);
}

#[test]
fn a_real_tool_the_agent_can_run_fails_the_real_tools_check() {
    let s = sound(&[]);
    chmod(&s.inst.real, 0o755);
    s.fails_with(
        "reachable",
        &[
            "tier1, tier2, tier3: real docker ",
            "can be run by ",
            "uid 65534",
            "without the gate",
            "install.sh --harden",
        ],
    );
}

#[test]
fn a_copy_of_a_real_tool_on_the_system_path_fails_the_real_tools_check() {
    let s = sound(&[]);
    let copy = s.sys.join("gh");
    std::fs::write(&copy, "#!/bin/sh\n").unwrap();
    chmod(&copy, 0o755);
    s.fails_with(
        "copy",
        &[
            "tier1, tier2, tier3: gh is also at ",
            "uid 65534",
            "can run without the gate",
            "chmod o-rwx",
        ],
    );
    chmod(&copy, 0o750);
    let (code, out) = s.doctor();
    assert_eq!(code, 0, "a copy the agent cannot run is fine:\n{out}");
}

#[test]
fn an_exec_capable_passthrough_tool_fails_the_passthrough_check() {
    let s = sound(&[]);
    let dir = s.inst.tier_dir(1);
    std::os::unix::fs::symlink("/usr/bin/awk", dir.join("awk")).unwrap();
    s.fails_with(
        "awk",
        &["tier1: passthrough awk can run a program or write a file", "POSIX.1-2017 awk"],
    );
    std::fs::remove_file(dir.join("awk")).unwrap();

    std::os::unix::fs::symlink("/bin/bash", dir.join("cat2")).unwrap();
    s.fails_with("disguised shell", &["passthrough cat2 is ", "bash can run a program"]);
    std::fs::remove_file(dir.join("cat2")).unwrap();

    let script = s.inst.tmp.path().join("helper");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    chmod(&script, 0o755);
    std::os::unix::fs::symlink(&script, dir.join("helper")).unwrap();
    s.fails_with("script", &["passthrough helper -> ", "is a script"]);
}

#[test]
fn something_the_agent_can_write_fails_the_permissions_check() {
    let s = sound(&[]);
    chmod(&s.inst.tier_dir(2), 0o777);
    s.fails_with(
        "tier dir",
        &["tier2: ", "can be changed by the agent", "uid 65534", "can write the directory"],
    );
    chmod(&s.inst.tier_dir(2), 0o755);

    let policy = s.inst.tmp.path().join("policy");
    std::fs::create_dir(&policy).unwrap();
    let s2 = Sound {
        inst: {
            let r = s.inst.reinstall(&["--policy", policy.to_str().unwrap()]);
            assert_eq!(r.code(), 0, "{}", r.stderr());
            s.inst
        },
        sys: s.sys,
    };
    let (code, out) = s2.doctor();
    assert_eq!(code, 0, "{out}");
    chmod(&policy, 0o777);
    s2.fails_with("policy dir", &[&format!("{} can be changed by the agent", policy.display())]);
}

#[test]
fn an_audit_log_the_gate_cannot_write_fails_the_audit_check() {
    let s = sound(&[]);
    chmod(&s.inst.audit, 0o644);
    s.fails_with(
        "read-only log",
        &["audit log ", "is not writable by ", "uid 65534", "so every call is refused"],
    );
    chmod(&s.inst.audit, 0o666);
    let good = std::fs::read_to_string(s.cfg(1)).unwrap();
    let without: String = good
        .lines()
        .filter(|l| !l.starts_with("audit_log:"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(s.cfg(1), without).unwrap();
    s.fails_with("no log", &["tier1: ", "names no audit_log", "--audit-log FILE"]);
}

#[test]
fn a_policy_whose_examples_fail_fails_the_policy_check() {
    let s = sound(&[]);
    let policy = s.inst.tmp.path().join("policy");
    std::fs::create_dir(&policy).unwrap();
    let docker = std::fs::read_to_string(repo().join("policy/docker.yaml")).unwrap();
    let broken = docker.replacen("        - [ps]\n", "        - [restart, api]\n", 1);
    assert_ne!(broken, docker);
    std::fs::write(policy.join("docker.yaml"), broken).unwrap();
    let r = s.inst.reinstall(&["--policy", policy.to_str().unwrap()]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    s.fails_with("examples", &[&format!("policy ({}) docker: ", policy.display()), "restart api"]);
}

#[test]
fn a_skill_that_does_not_validate_fails_the_skills_check() {
    let s = sound(&[]);
    let skill = s.inst.prefix.join("lib/tiershim/skills/odd.md");
    std::fs::write(&skill, "# Skill: odd\n\n## Tier Requirement\n\nNeeds an operator.\n").unwrap();
    s.fails_with("skill", &["skills (", "odd.md: ", "tiershim skills validate --config"]);
}

#[test]
fn a_baseline_skill_the_agent_can_write_fails_the_permissions_check() {
    let s = sound(&[]);
    let skill = s.inst.prefix.join("lib/tiershim/skills/git-pr.md");
    chmod(&skill, 0o666);
    s.fails_with("skill writable", &["git-pr.md can be changed by the agent"]);
}

#[test]
fn doctor_refuses_an_unknown_user() {
    let s = sound(&[]);
    let out = Command::new(s.inst.tiershim())
        .args(["doctor", "--user", "no-such-user-here"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no user `no-such-user-here` in /etc/passwd"));
}

#[test]
fn the_summary_comes_first_with_one_line_per_tool_across_the_tiers() {
    let s = sound(&[]);
    std::fs::remove_file(s.inst.real.join("tea")).unwrap();
    std::fs::remove_file(s.inst.real.join("mysql")).unwrap();
    let (code, out) = s.doctor();
    assert_eq!(code, 78, "{out}");
    let summary: Vec<&str> = out
        .split("\nsummary:\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\ndetails:\n").next())
        .unwrap_or_else(|| panic!("no summary before the details:\n{out}"))
        .lines()
        .collect();
    // Every tool has exactly one line, and a missing tool is one ✗ line for all three tiers.
    for tool in ["gh", "tea", "docker", "psql", "mysql", "curl", "git", "ssh"] {
        let lines: Vec<&&str> = summary.iter().filter(|l| l[4..].starts_with(&format!("{tool} "))).collect();
        assert_eq!(lines.len(), 1, "{tool}: {summary:#?}");
    }
    let bad: Vec<&&str> = summary.iter().filter(|l| l.starts_with("✗ ")).collect();
    assert_eq!(bad.len(), 2, "{summary:#?}");
    assert!(bad[0].starts_with("✗ tea ") && bad[0].contains("tier1, tier2, tier3: real tea: tea is not installed at"));
    assert!(bad[1].starts_with("✗ mysql ") && !bad[1].contains("more)"), "{}", bad[1]);
    // The details say it per tier, with the fix naming each tier's config.
    assert!(out.contains("details:\n"), "{out}");
    assert!(out.contains("fix: install tea, or point `real.tea` in "), "{out}");
    assert!(out.ends_with("6 check(s) failed\n"), "{out}");

    // The same as JSON.
    let json = Command::new(s.inst.tiershim())
        .args(["doctor", "--json", "--prefix"])
        .arg(&s.inst.prefix)
        .args(["--user", "65534", "--system-path"])
        .arg(&s.sys)
        .output()
        .unwrap();
    assert_eq!(json.status.code(), Some(78));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["failed"], 6);
    assert_eq!(v["tiers"], serde_json::json!(["tier1", "tier2", "tier3"]));
    let tea = v["summary"].as_array().unwrap().iter().find(|x| x["area"] == "tea").unwrap();
    assert_eq!(tea["status"], "bad");
    assert_eq!(tea["tiers"], serde_json::json!(["tier1", "tier2", "tier3"]));
    let checks = v["checks"].as_array().unwrap();
    assert!(
        checks.iter().any(|c| c["area"] == "mysql"
            && c["status"] == "bad"
            && c["tiers"] == serde_json::json!(["tier2"])
            && c["fix"].as_str().unwrap().contains("tier2/tiershim.yaml")),
        "{checks:#?}"
    );
    assert!(checks.iter().any(|c| c["area"] == "docker" && c["status"] == "ok"));
}

#[test]
fn audit_log_faults_are_named_as_what_they_are() {
    let s = sound(&[]);
    let good = std::fs::read_to_string(s.cfg(1)).unwrap();
    let with_log = |log: &Path| -> String {
        good.lines()
            .map(|l| {
                if l.starts_with("audit_log:") {
                    format!("audit_log: '{}'\n", log.display())
                } else {
                    format!("{l}\n")
                }
            })
            .collect()
    };
    // A directory is not a permissions problem.
    let dir = s.inst.tmp.path().join("logs-dir");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o777);
    std::fs::write(s.cfg(1), with_log(&dir)).unwrap();
    s.fails_with(
        "directory",
        &[
            "tier1: audit log ",
            "is a directory, not a file",
            "point `audit_log:` in ",
            "tier1/tiershim.yaml at a file",
        ],
    );
    let (_, out) = s.doctor();
    assert!(!out.contains("is not writable by"), "{out}");
    // A missing directory names the tiershim.yaml that points there.
    let missing = s.inst.tmp.path().join("no-such-dir/audit.jsonl");
    std::fs::write(s.cfg(1), with_log(&missing)).unwrap();
    s.fails_with(
        "missing directory",
        &[
            "tier1: audit log ",
            "its directory ",
            "no-such-dir does not exist, so every call is refused",
            "tier1/tiershim.yaml at a file in a directory that exists",
        ],
    );
    // A log the gate can create is fine.
    let later = s.inst.tmp.path().join("logs-dir/audit.jsonl");
    std::fs::write(s.cfg(1), with_log(&later)).unwrap();
    let (code, out) = s.doctor();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("will be created on the first call"), "{out}");
}

#[test]
fn a_tool_that_is_not_installed_is_linked_noted_and_fails_nothing() {
    // No tea and no helm anywhere install.sh looks (the system has neither on PATH).
    let inst = Installed::new_with(&[], |real, _| {
        std::fs::remove_file(real.join("tea")).unwrap();
        std::fs::remove_file(real.join("helm")).unwrap();
    });
    chmod(&inst.real, 0o700);
    std::fs::write(&inst.audit, "").unwrap();
    chmod(&inst.audit, 0o666);
    let sys = inst.tmp.path().join("sys");
    std::fs::create_dir(&sys).unwrap();
    // install.sh says which it did not find, writes them as not found, and links them all the same.
    let r = inst.reinstall(&[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("install.sh: not installed, so the gate answers them with \"No suitable tool found\" (exit 127): tea helm;"),
        "{}",
        r.stderr()
    );
    let cfg = std::fs::read_to_string(inst.tier_dir(3).join("tiershim.yaml")).unwrap();
    assert!(cfg.contains("  # helm: not found when installed"), "{cfg}");
    assert!(inst.tier_dir(3).join("helm").is_symlink());
    let s = Sound { inst, sys };
    let (code, out) = s.doctor();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("– helm         tier1, tier2, tier3: helm is not installed, so the gate answers `helm` with \"No suitable tool found\" (exit 127)"), "{out}");
    assert!(out.contains("– tea "), "{out}");
    // The gate's answer is the one doctor promised.
    let path = s.inst.tier_dir(3).display().to_string();
    let out = Command::new(s.inst.tier_dir(3).join("helm"))
        .args(["list"])
        .env_clear()
        .env("PATH", &path)
        .env("CLAUDEOPS_TIER", "3")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("No suitable tool found"));
    // A tool tiershim.yaml names that is gone is still a failure.
    std::fs::remove_file(s.inst.real.join("mysql")).unwrap();
    s.fails_with("missing", &["real mysql: mysql is not installed at"]);
}
