//! The session inventory (`tiershim inventory`), the gate's MCP fallback lines, and the audit
//! report (`tiershim audit`), through the real binary.

use std::process::Command;

use serde_json::Value;

use crate::harness::{TestEnv, bin};

fn admin(args: &[&str], envs: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(bin())
        .args(args)
        .env_clear()
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An install at ceiling 2 with an MCP config naming docker and fetch servers and the
/// inventory path beside it.
fn setup() -> TestEnv {
    let env = TestEnv::new(1, "");
    std::fs::write(
        env.path("mcp.json"),
        r#"{"mcpServers": {"docker": {"command": "npx"}, "fetch": {"command": "npx"}}}"#,
    )
    .unwrap();
    env.write_config(&format!(
        "tier: 2\nreal_dirs: [{}]\naudit_log: {}\ninventory: {}\nmcp_configs: [{}, {}]\n",
        env.real.display(),
        env.audit.display(),
        env.path("inventory.json").display(),
        env.path("mcp.json").display(),
        env.path("missing-mcp.json").display(),
    ));
    env
}

fn domain<'a>(inv: &'a Value, id: &str) -> &'a Value {
    inv["domains"].as_array().unwrap().iter().find(|d| d["id"] == id).unwrap()
}

#[test]
fn the_inventory_lists_mcp_servers_clis_and_what_the_tier_allows() {
    let env = setup();
    std::fs::remove_file(env.real.join("tea")).unwrap();
    let cfg = env.config_path();
    let (code, out, err) = admin(
        &["inventory", "--json", "--config", cfg.to_str().unwrap()],
        &[("CLAUDEOPS_TIER", "2")],
    );
    assert_eq!(code, 0, "{err}");
    let inv: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(inv["version"], 1);
    assert_eq!((inv["tier"].as_u64(), inv["ceiling"].as_u64()), (Some(2), Some(2)));
    assert_eq!(domain(&inv, "container")["mcp"][0]["tools"], "mcp__docker__*");
    assert_eq!(domain(&inv, "http")["mcp"][0]["name"], "fetch");
    assert_eq!(domain(&inv, "git-github")["mcp"], serde_json::json!([]));
    assert_eq!(
        domain(&inv, "git-gitea")["cli"][0],
        serde_json::json!({"tool": "tea", "path": null})
    );
    assert_eq!(
        domain(&inv, "container")["cli"][0]["path"],
        env.real.join("docker").display().to_string()
    );
    let ops: Vec<(String, String)> = domain(&inv, "container")["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["name"].as_str().unwrap().to_string(), o["verdict"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        ops,
        vec![
            ("list containers".into(), "allow".into()),
            ("read logs".into(), "allow".into()),
            ("restart a container".into(), "allow".into()),
            ("run a container".into(), "refuse".into()),
            ("prune".into(), "refuse".into()),
        ]
    );
    let pr = &domain(&inv, "git-github")["operations"][1];
    assert_eq!(
        (pr["name"].as_str(), pr["verdict"].as_str()),
        (Some("create a pull request"), Some("allow-scoped"))
    );
    assert!(
        inv["problems"][0].as_str().unwrap().contains("missing-mcp.json"),
        "{}",
        inv["problems"]
    );

    // At tier 1 the same install allows only the reads.
    let (_, out, _) = admin(
        &["inventory", "--json", "--config", cfg.to_str().unwrap()],
        &[("CLAUDEOPS_TIER", "1")],
    );
    let inv: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(domain(&inv, "container")["operations"][2]["verdict"], "refuse");

    // The table names every domain.
    let (code, out, _) = admin(&["inventory", "--config", cfg.to_str().unwrap()], &[("CLAUDEOPS_TIER", "2")]);
    assert_eq!(code, 0);
    for name in [
        "GitHub [git-github]",
        "Gitea [git-gitea]",
        "Docker [container]",
        "browser [browser]",
    ] {
        assert!(out.contains(name), "{name} in {out}");
    }
}

#[test]
fn the_gate_warns_when_a_call_falls_back_from_mcp_and_stays_silent_without_an_inventory() {
    let env = setup();
    // No inventory file yet: nothing about MCP.
    let r = env.run("gh", &["pr", "list"], &[("CLAUDEOPS_TIER", "2")]);
    assert_eq!(r.stderr(), "");
    assert_eq!(env.last_audit()["message"], "[skill:git-pr] Using: gh (CLI)");
    assert_eq!(env.last_audit().get("notices"), None);

    let cfg = env.config_path();
    let (code, _, err) = admin(
        &["inventory", "--write", "--config", cfg.to_str().unwrap()],
        &[("CLAUDEOPS_TIER", "2")],
    );
    assert_eq!(code, 0, "{err}");
    assert!(env.path("inventory.json").is_file());

    let r = env.run("gh", &["pr", "list"], &[("CLAUDEOPS_TIER", "2")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    // Quiet on success: both lines are in the record, none on stderr.
    assert_eq!(r.stderr(), "");
    let rec = env.last_audit();
    assert_eq!(rec["message"], "[skill:git-pr] Using: gh (CLI)");
    assert_eq!(
        rec["notices"],
        serde_json::json!(["[skill:git-pr] WARNING: MCP tools not found for GitHub, falling back to gh (CLI)"])
    );
    assert_eq!(env.last_audit()["mcp"], "cli-fallback");
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "2")]);
    assert_eq!(r.stderr(), "");
    assert_eq!(env.last_audit()["mcp"], "mcp-available");
    // A refused call says nothing about MCP.
    let r = env.run("gh", &["pr", "merge", "1"], &[("CLAUDEOPS_TIER", "2")]);
    assert!(!r.stderr().contains("WARNING"), "{}", r.stderr());
    // git has no MCP counterpart.
    let r = env.run("git", &["status"], &[("CLAUDEOPS_TIER", "2")]);
    assert!(!r.stderr().contains("WARNING"), "{}", r.stderr());
}

#[test]
fn a_corrupt_inventory_does_not_stop_the_call_and_the_log_says_so() {
    let env = setup();
    std::fs::write(env.path("inventory.json"), "{ not json").unwrap();
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(env.received("docker").is_some());
    // In the record (and journald), not in the agent's output.
    assert_eq!(r.stderr(), "");
    assert!(
        env.last_audit()["notices"][0]
            .as_str()
            .unwrap()
            .starts_with("[skill:container-health] WARNING: the session inventory could not be read ("),
        "{}",
        env.last_audit()
    );
    assert!(env.last_audit()["mcp"].as_str().unwrap().starts_with("inventory unreadable: "));
}

#[test]
fn two_hundred_concurrent_calls_leave_two_hundred_whole_lines_the_report_counts() {
    let env = setup();
    let children: Vec<_> = (0..200)
        .map(|i| {
            let args: &[&str] = if i % 2 == 0 { &["ps"] } else { &["restart", "api"] };
            let mut c = env.cmd("docker", args);
            c.env("CLAUDEOPS_TIER", "1")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            c.spawn().unwrap()
        })
        .collect();
    for mut c in children {
        c.wait().unwrap();
    }
    assert_eq!(env.audit_records().len(), 200);
    let (code, out, err) = admin(&["audit", "--json", env.audit.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["decisions"], 200);
    assert_eq!(r["by_verdict"], serde_json::json!({"allow": 100, "refuse": 100}));
    assert_eq!(r["refusals"].as_array().unwrap().len(), 100);
    assert_eq!(r["tier_lowered"].as_array().unwrap().len(), 200);
    assert_eq!(r["odd"], serde_json::json!([]));
}

#[test]
fn the_audit_report_shows_refusals_dry_runs_resets_and_odd_lines() {
    let env = setup();
    env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "2"), ("DOCKER_BUILDKIT", "1")]);
    env.run("docker", &["restart", "api"], &[("CLAUDEOPS_TIER", "1")]);
    env.run(
        "docker",
        &["restart", "api"],
        &[("CLAUDEOPS_TIER", "2"), ("CLAUDEOPS_DRY_RUN", "1")],
    );
    env.run("gh", &["pr", "merge", "1"], &[("CLAUDEOPS_TIER", "2")]);
    // A line that is not a record, and a record from a binary that is not this install's.
    let mut impostor = env.last_audit();
    impostor["exe"] = "/tmp/impostor/tiershim".into();
    let mut log = std::fs::OpenOptions::new().append(true).open(&env.audit).unwrap();
    std::io::Write::write_all(&mut log, format!("garbage\n{impostor}\n").as_bytes()).unwrap();

    let cfg = env.config_path();
    let (code, out, err) = admin(&["audit", "--json", "--config", cfg.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["decisions"], 5);
    assert_eq!(r["by_verdict"], serde_json::json!({"allow": 1, "dry-run": 1, "refuse": 3}));
    assert_eq!(r["by_tool"], serde_json::json!({"docker": 3, "gh": 2}));
    let rules: Vec<&str> = r["refusals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, vec!["docker.restart", "gh.pr.merge", "gh.pr.merge"]);
    // The detail is the line the gate printed, without its skill tag.
    assert_eq!(
        r["refusals"][0]["detail"],
        "REFUSED: restarting, starting or stopping a container requires tier 2 (this agent is tier 1) — escalate to a tier 2 agent or an operator"
    );
    assert_eq!(r["dry_runs"][0]["call"], "docker restart api");
    // The harness gives the caller a HOME, which the tool home replaces.
    assert_eq!(
        r["env_resets"],
        serde_json::json!({"DOCKER_BUILDKIT (removed)": 1, "HOME (home)": 1})
    );
    assert_eq!(r["tier_lowered"].as_array().unwrap().len(), 1);
    let odd: Vec<&str> = r["odd"].as_array().unwrap().iter().map(|o| o.as_str().unwrap()).collect();
    let me = std::fs::canonicalize(bin()).unwrap();
    assert_eq!(
        odd,
        vec![
            "line 5: not a JSON decision record".to_string(),
            format!("line 6: decided by /tmp/impostor/tiershim, not the installed {}", me.display())
        ]
    );

    // --since in the future filters everything; an age keeps everything.
    let (_, out, _) = admin(
        &["audit", "--json", "--since", "2999-01-01T00:00:00Z", env.audit.to_str().unwrap()],
        &[],
    );
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["decisions"], 0);
    let (_, out, _) = admin(&["audit", "--json", "--since", "1h", env.audit.to_str().unwrap()], &[]);
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["decisions"], 5);
    let (code, _, err) = admin(&["audit", "--since", "soon", env.audit.to_str().unwrap()], &[]);
    assert_eq!(code, 2, "{err}");

    let (code, out, _) = admin(&["audit", env.audit.to_str().unwrap()], &[]);
    assert_eq!(code, 0);
    assert!(out.contains("refusals (3):"), "{out}");
    assert!(out.contains("gh pr merge 1"), "{out}");
}
