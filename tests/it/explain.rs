//! `tiershim explain`: the same decision as the gate, in words or JSON, executing nothing.

use std::process::Command;

use crate::harness::{TestEnv, bin};

fn explain(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin())
        .arg("explain")
        .args(args)
        .env_remove("CLAUDEOPS_TIER")
        .env_remove("CLAUDEOPS_DRY_RUN")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn json_output_has_the_contract_keys_and_exit_codes_follow_the_verdict() {
    let (code, out, _) = explain(&["--tier", "1", "--json", "--", "docker", "restart", "api"]);
    assert_eq!(code, 77);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for key in [
        "verdict",
        "tool",
        "verb",
        "skill",
        "required_tier",
        "effective_tier",
        "rule",
        "reasons",
        "scope",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    assert_eq!(v["verdict"], "refuse");
    assert_eq!(v["tool"], "docker");
    assert_eq!(v["verb"], "restart");
    assert_eq!(v["required_tier"], 2);
    assert_eq!(v["effective_tier"], 1);

    let (code, out, _) = explain(&["--tier", "2", "--json", "--", "docker", "restart", "api"]);
    assert_eq!(code, 0);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap()["verdict"], "allow");

    let (code, out, _) = explain(&["--tier", "2", "--dry-run", "--json", "--", "docker", "restart", "api"]);
    assert_eq!(code, 0);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap()["verdict"], "dry-run");

    let (code, out, _) = explain(&["--tier", "3", "--json", "--", "docker", "volume", "prune"]);
    assert_eq!(code, 77);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap()["required_tier"], "never");
}

#[test]
fn human_output_names_the_rule_and_the_message() {
    let (code, out, _) = explain(&["--tier", "1", "--", "docker", "restart", "api"]);
    assert_eq!(code, 77);
    assert!(out.contains("verdict:        refuse"), "{out}");
    assert!(out.contains("rule:           docker."), "{out}");
    assert!(out.contains("message:        [skill:container-ops] REFUSED: "), "{out}");
}

#[test]
fn explain_and_the_gate_make_the_same_decision() {
    let env = TestEnv::new(3, "");
    let calls: &[(&str, &[&str], &str)] = &[
        ("docker", &["ps"], "1"),
        ("docker", &["restart", "api"], "1"),
        ("docker", &["run", "--privileged", "alpine"], "3"),
        ("git", &["push", "--force-w", "origin", "feat"], "3"),
        ("gh", &["-R", "o/r", "pr", "merge", "1"], "3"),
        ("curl", &["-sXDELETE", "http://127.0.0.1/x"], "2"),
        ("psql", &["-c", "select 1"], "1"),
        ("tea", &["pulls", "--repo", "x", "merge", "5"], "3"),
    ];
    let cfg = env.config_path();
    for (tool, args, tier) in calls {
        env.run(tool, args, &[("CLAUDEOPS_TIER", tier)]);
        let gate = env.last_audit();
        let mut a = vec!["--config", cfg.to_str().unwrap(), "--tier", tier, "--json", "--", tool];
        a.extend_from_slice(args);
        let (_, out, err) = explain(&a);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{tool} {args:?}: {e}: {err}"));
        assert_eq!((&v["verdict"], &v["rule"]), (&gate["verdict"], &gate["rule"]), "{tool} {args:?}");
    }
}

#[test]
fn explain_with_a_config_uses_its_ceiling_and_pinned_env() {
    let env = TestEnv::new(1, "env:\n  DOCKER_HOST: unix:///run/docker.sock\n");
    let cfg = env.config_path();
    let (code, out, _) = explain(&[
        "--config",
        cfg.to_str().unwrap(),
        "--tier",
        "3",
        "--json",
        "--",
        "docker",
        "restart",
        "api",
    ]);
    assert_eq!(code, 77, "{out}");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap()["effective_tier"], 1);
    let (code, _, _) = explain(&[
        "--config",
        cfg.to_str().unwrap(),
        "--tier",
        "1",
        "--",
        "docker",
        "-H",
        "unix:///run/docker.sock",
        "ps",
    ]);
    assert_eq!(code, 0);
    let (code, _, _) = explain(&[
        "--config",
        cfg.to_str().unwrap(),
        "--tier",
        "1",
        "--",
        "docker",
        "-H",
        "tcp://x:2375",
        "ps",
    ]);
    assert_eq!(code, 77);
}

#[test]
fn explain_refuses_a_bad_config_with_78_and_an_unknown_tool_as_usage() {
    let env = TestEnv::new(1, "");
    env.write_config("tier: 9\n");
    let (code, _, err) = explain(&["--config", env.config_path().to_str().unwrap(), "--", "docker", "ps"]);
    assert_eq!(code, 78);
    assert!(err.contains("`tier: 9` is not 1, 2 or 3"), "{err}");
    let (code, _, err) = explain(&["--", "scp", "host:x", "."]);
    assert_eq!(code, 2);
    assert!(err.contains("not a gated tool"), "{err}");
}

#[test]
fn policy_check_runs_the_embedded_examples() {
    let out = Command::new(bin()).args(["policy", "check"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for tool in crate::harness::TOOLS {
        assert!(text.contains(&format!("✓ {tool}: ")), "{text}");
    }
}

#[test]
fn policy_check_reports_a_bad_override_directory() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("git.yaml"), "tool: git\nskill: git-pr\nrules:\n  - id: git.status\n    verbs: [status]\n    tier: 2\n    examples:\n      allow: [[status], [log]]\n").unwrap();
    let out = Command::new(bin()).args(["policy", "check"]).arg(tmp.path()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(78), "{text}");
    assert!(text.contains("✗ git:"), "{text}");
}

#[test]
fn explain_without_a_config_judges_with_the_installation_it_belongs_to() {
    // The tier-2 directory pins dry-run and lists the hosts ssh may reach; the embedded policy
    // at ceiling 3 does neither.
    let inst = crate::installed::Installed::new(&["--host", "ie01", "--dry-run-pin"]);
    let explain_installed = |args: &[&str], env: &[(&str, &str)]| {
        let out = Command::new(inst.tiershim())
            .arg("explain")
            .args(args)
            .env_remove("CLAUDEOPS_TIER")
            .env_remove("CLAUDEOPS_DRY_RUN")
            .envs(env.iter().copied())
            .current_dir(inst.tmp.path())
            .output()
            .unwrap();
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code().unwrap_or(-1), v)
    };
    let through_link = |tool: &str, args: &[&str]| {
        let out = Command::new(inst.tier_dir(2).join(tool))
            .args(args)
            .env_clear()
            .env("PATH", inst.tier_dir(2))
            .env("CLAUDEOPS_TIER", "2")
            .current_dir(inst.tmp.path())
            .output()
            .unwrap();
        let rec = inst.audit_records().pop().unwrap();
        (out.status.code().unwrap_or(-1), rec)
    };
    for (tool, args) in [
        ("docker", &["restart", "api"][..]),
        ("ssh", &["evil", "uptime"]),
        ("ssh", &["ie01", "uptime"]),
        ("docker", &["ps"]),
    ] {
        let (gate_code, rec) = through_link(tool, args);
        let mut a = vec!["--json", "--tier", "2", "--", tool];
        a.extend_from_slice(args);
        let (code, v) = explain_installed(&a, &[]);
        assert_eq!(
            (code, &v["verdict"], &v["rule"]),
            (gate_code, &rec["verdict"], &rec["rule"]),
            "{tool} {args:?}"
        );
        assert_eq!(
            v["config"],
            inst.tier_dir(2).join("tiershim.yaml").display().to_string(),
            "{tool} {args:?}"
        );
        // CLAUDEOPS_TIER picks the tier directory as it picks the agent's tier.
        let mut a = vec!["--json", "--", tool];
        a.extend_from_slice(args);
        let (code, v) = explain_installed(&a, &[("CLAUDEOPS_TIER", "2")]);
        assert_eq!((code, &v["verdict"], &v["rule"]), (gate_code, &rec["verdict"], &rec["rule"]));
    }
    // The dry-run pin of the tier and the host list are what decided.
    let (code, v) = explain_installed(&["--json", "--tier", "2", "--", "docker", "restart", "api"], &[]);
    assert_eq!((code, v["verdict"].as_str()), (0, Some("dry-run")));
    let (code, v) = explain_installed(&["--json", "--tier", "2", "--", "ssh", "evil", "uptime"], &[]);
    assert_eq!((code, v["rule"].as_str()), (77, Some("ssh.host")));
    // A tier the installation does not have is named.
    let r = crate::installed::run_install(&[
        "--prefix",
        inst.prefix.join("../p2").to_str().unwrap(),
        "--real-dir",
        inst.real.to_str().unwrap(),
        "--tiers",
        "1",
    ]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let out = Command::new(bin())
        .args(["explain", "--prefix"])
        .arg(inst.prefix.join("../p2"))
        .args(["--tier", "2", "--", "docker", "ps"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("lib/tiershim/tier2/tiershim.yaml in the installation at "),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn explain_with_a_config_exits_127_and_78_where_the_gate_does() {
    let env = TestEnv::new(2, "");
    let cfg = env.config_path();
    let both = |tool: &str, args: &[&str]| {
        let gate = env.run(tool, args, &[("CLAUDEOPS_TIER", "2")]);
        let mut a = vec!["--config", cfg.to_str().unwrap(), "--tier", "2", "--json", "--", tool];
        a.extend_from_slice(args);
        let (code, out, err) = explain(&a);
        (gate, code, out, err)
    };
    // The real tool is missing: 127, with the gate's ERROR line.
    std::fs::remove_file(env.real.join("docker")).unwrap();
    let (gate, code, out, _) = both("docker", &["ps"]);
    assert_eq!((gate.code(), code), (127, 127), "{}", gate.stderr());
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["verdict"], "error");
    assert_eq!(v["exit"], 127);
    assert_eq!(format!("{}\n", v["message"].as_str().unwrap()), gate.stderr());
    // A refused call is still 77: the real tool is never looked for.
    let (gate, code, _, _) = both("docker", &["run", "alpine"]);
    assert_eq!((gate.code(), code), (77, 77));
    env.stub("docker");
    // A config the gate would not trust: 78, with the gate's reason.
    std::fs::set_permissions(&cfg, std::os::unix::fs::PermissionsExt::from_mode(0o664)).unwrap();
    let (gate, code, _, err) = both("docker", &["ps"]);
    assert_eq!((gate.code(), code), (78, 78), "{}", gate.stderr());
    assert!(err.contains("is writable by group or others"), "{err}");
    std::fs::set_permissions(&cfg, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    // A policy directory that does not exist: 78 from both.
    env.write_config(&format!(
        "tier: 2\nreal_dirs: [{}]\naudit_log: {}\npolicy: {}\n",
        env.real.display(),
        env.audit.display(),
        env.path("nope").display()
    ));
    let (gate, code, _, err) = both("docker", &["ps"]);
    assert_eq!((gate.code(), code), (78, 78), "{}", gate.stderr());
    assert!(err.contains("does not exist"), "{err}");
}
