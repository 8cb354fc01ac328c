//! Every bad-input path refuses with the right exit code and a message naming what to fix, and
//! never runs the real tool.

use std::os::unix::fs::PermissionsExt;

use crate::harness::{TestEnv, write_exec};

/// A call that is allowed at tier 1 by the shipped policy, so only the bad input can refuse it.
const READ: (&str, &[&str]) = ("docker", &["ps"]);

fn assert_not_run(env: &TestEnv) {
    for t in crate::harness::TOOLS {
        assert_eq!(env.received(t), None, "{t} ran");
    }
}

#[test]
fn a_missing_config_refuses_every_call_naming_the_directory() {
    let env = TestEnv::bare();
    env.stub("docker");
    let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(
        r.stderr().contains(&format!("no tiershim.yaml in {}", env.dir.display())),
        "{}",
        r.stderr()
    );
    assert_not_run(&env);
}

#[test]
fn malformed_configs_refuse_with_the_file_and_the_fault() {
    let env = TestEnv::new(1, "");
    for (text, want) in [
        ("tier: [1\n", "tiershim.yaml"),
        ("tier: 1\nreal_dir: [/usr/bin]\n", "unknown field `real_dir`"),
        ("tier: 4\n", "`tier: 4` is not 1, 2 or 3"),
        ("tier: 0\n", "`tier: 0` is not 1, 2 or 3"),
        ("real_dirs: [/usr/bin]\n", "`tier:` is required"),
        ("tier: 1\ncooldown_lock_wait: 5\n", "`cooldown_lock_wait` needs `cooldown_state`"),
        (
            "tier: 1\ncooldown_state: /state/c.json\ncooldown_lock_wait: -1\n",
            "`cooldown_lock_wait: -1`",
        ),
        ("tier: 1\ncooldown_state: [a]\n", "cooldown_state"),
        ("tier: 1\nhosts: [ops@ie01]\n", "`hosts:` entry \"ops@ie01\" is not a host name"),
        ("tier: 1\nhosts: ie01\n", "hosts"),
        ("", "`tier:` is required"),
    ] {
        env.write_config(text);
        let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "1")]);
        assert_eq!(r.code(), 78, "{text:?}: {}", r.stderr());
        assert!(r.stderr().contains(want), "{text:?}: {}", r.stderr());
        assert!(
            r.stderr().contains(&env.config_path().display().to_string()),
            "{text:?}: {}",
            r.stderr()
        );
        assert_not_run(&env);
    }
}

#[test]
fn a_config_others_can_write_is_refused() {
    let env = TestEnv::new(3, "");
    std::fs::set_permissions(env.config_path(), std::fs::Permissions::from_mode(0o666)).unwrap();
    let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(r.stderr().contains("writable by group or others"), "{}", r.stderr());
    assert_not_run(&env);

    std::fs::set_permissions(env.config_path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&env.dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(r.stderr().contains("this directory is writable"), "{}", r.stderr());
    assert_not_run(&env);
}

#[test]
fn a_malformed_override_policy_refuses_naming_the_file() {
    let env = TestEnv::new(3, "policy: pol\n");
    let pol = env.dir.join("pol");
    std::fs::create_dir(&pol).unwrap();
    std::fs::write(
        pol.join("docker.yaml"),
        "tool: docker\nskill: x\nrules:\n  - id: docker.ps\n    verbs: [ps]\n    tier: 5\n",
    )
    .unwrap();
    let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(
        r.stderr().contains("docker.yaml") && r.stderr().contains("tier 5 is not 1, 2, 3 or never"),
        "{}",
        r.stderr()
    );
    assert_not_run(&env);

    std::fs::write(
        pol.join("docker.yaml"),
        "tool: docker\nskill: x\nrules:\n  - id: docker.ps\n    verb: [ps]\n    tier: 1\n",
    )
    .unwrap();
    let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(r.stderr().contains("unknown field `verb`"), "{}", r.stderr());
    assert_not_run(&env);
}

#[test]
fn an_override_policy_whose_examples_disagree_does_not_load() {
    let env = TestEnv::new(3, "policy: pol\n");
    let pol = env.dir.join("pol");
    std::fs::create_dir(&pol).unwrap();
    // Claims `docker run` is tier 1 and gives an example that a stricter shipped-style rule refuses.
    std::fs::write(
        pol.join("docker.yaml"),
        "tool: docker\nskill: container-ops\nrules:\n  - id: docker.ps\n    verbs: [ps]\n    tier: 1\n    examples:\n      allow: [[ps]]\n  \
         - id: docker.run\n    verbs: [run]\n    tier: 2\n    examples:\n      allow: [[ps]]\n",
    )
    .unwrap();
    let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(
        r.stderr().contains("example(s) disagree") && r.stderr().contains("tiershim policy check"),
        "{}",
        r.stderr()
    );
    assert_not_run(&env);
}

#[test]
fn an_override_policy_that_passes_its_examples_is_used() {
    let env = TestEnv::new(3, "policy: pol\n");
    let pol = env.dir.join("pol");
    std::fs::create_dir(&pol).unwrap();
    std::fs::write(
        pol.join("docker.yaml"),
        "tool: docker\nskill: container-health\nrules:\n  - id: docker.ps\n    verbs: [ps]\n    tier: 2\n    examples:\n      allow: [[ps]]\n",
    )
    .unwrap();
    let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(env.last_audit()["rule"], "docker.ps");
    let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "2")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
}

#[test]
fn odd_tier_values_in_the_environment_mean_tier_1_and_the_log_says_why() {
    let env = TestEnv::new(3, "");
    for v in ["0", "4", "2a", " 2", "", "3 ", "two", "-1", "02", "banana"] {
        let r = env.run("docker", &["restart", "api"], &[("CLAUDEOPS_TIER", v)]);
        assert_eq!(r.code(), 77, "CLAUDEOPS_TIER={v:?}: {}", r.stderr());
        let shown = if v.is_empty() || v.contains(' ') {
            format!("'{v}'")
        } else {
            v.to_string()
        };
        assert!(
            r.stderr()
                .contains(&format!("(this agent is tier 1: CLAUDEOPS_TIER={shown} is not 1, 2 or 3)")),
            "{v:?}: {}",
            r.stderr()
        );
        let rec = env.last_audit();
        assert_eq!(rec["tier"]["effective"], 1, "{v:?}");
        assert!(
            rec["tier"]["note"].as_str().unwrap_or("").contains("is not 1, 2 or 3"),
            "{v:?}: {rec}"
        );
        assert_eq!(env.received("docker"), None);
    }
    let r = env.run("docker", &["restart", "api"], &[]);
    assert_eq!(r.code(), 77, "unset: {}", r.stderr());
    assert!(env.last_audit()["tier"]["note"].as_str().unwrap_or("").contains("unset"));
}

#[test]
fn a_missing_real_tool_exits_127_with_the_error_line() {
    let env = TestEnv::new(1, "");
    std::fs::remove_file(env.real.join("docker")).unwrap();
    let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 127, "{}", r.stderr());
    let line = r.stderr();
    assert!(
        line.starts_with("[skill:container-health] ERROR: No suitable tool found for containers (docker is not installed at "),
        "{line}"
    );
    assert_eq!(env.last_audit()["verdict"], "error");
}

#[test]
fn a_named_real_tool_that_is_missing_exits_127() {
    let env = TestEnv::new(1, "real:\n  docker: /nonexistent/docker\n");
    let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 127, "{}", r.stderr());
    assert!(
        r.stderr().contains("docker is not installed at /nonexistent/docker"),
        "{}",
        r.stderr()
    );
}

#[test]
fn a_real_path_that_is_tiershim_itself_is_refused() {
    let env = TestEnv::new(1, "");
    std::fs::remove_file(env.real.join("docker")).unwrap();
    std::os::unix::fs::symlink(crate::harness::bin(), env.real.join("docker")).unwrap();
    let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(r.stderr().contains("is tiershim itself"), "{}", r.stderr());

    // The link in the tier directory itself, named as the real tool.
    env.write_config(&format!(
        "tier: 1\nreal:\n  docker: {}\naudit_log: {}\n",
        env.dir.join("docker").display(),
        env.audit.display()
    ));
    let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(r.stderr().contains("is tiershim itself"), "{}", r.stderr());
}

#[test]
fn an_unwritable_audit_log_refuses_the_call_rather_than_run_it_unlogged() {
    let env = TestEnv::new(1, "");
    std::fs::create_dir(&env.audit).unwrap(); // a directory where the log file should be
    let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(
        r.stderr().contains("audit log") && r.stderr().contains("refused rather than run unlogged"),
        "{}",
        r.stderr()
    );
    assert_not_run(&env);
}

#[test]
fn a_non_utf8_argument_is_refused() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new(3, "");
    let mut c = env.cmd("docker", &["ps"]);
    c.arg(OsStr::from_bytes(b"--filter=\xff")).env("CLAUDEOPS_TIER", "3");
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(77), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(env.last_audit()["rule"], "docker.grammar");
    assert_not_run(&env);
}

#[test]
fn a_real_tool_that_cannot_be_executed_is_an_internal_error_after_the_log() {
    let env = TestEnv::new(1, "");
    // Executable bit set but not a valid executable format, and no interpreter line.
    write_exec(&env.real.join("docker"), "\x7fELF garbage");
    let r = env.run(READ.0, READ.1, &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 70, "{}", r.stderr());
    assert!(r.stderr().contains("exec "), "{}", r.stderr());
}
