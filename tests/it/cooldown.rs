//! Cooldown budgets through the real linked binary: every alias form of a restart counted
//! against one budget, the third restart in the window refused with the time it is allowed
//! again, the window sliding (state files written with times relative to now, so the data moves
//! the window, not a fake clock), 100 concurrent restarts, state files the gate cannot use,
//! Claude Ops' own state format read and written back (and read again by the real `jq`), and the
//! operator's `tiershim cooldown` command. The "real" docker and ssh are recording stubs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tiershim::time::{format_time, parse_time};

use crate::harness::{Run, TestEnv, bin};

/// A tier directory (ceiling 3) whose tiershim.yaml names a state file in a directory of its own,
/// and, when `budgets` is given, an override policy directory holding only cooldown.yaml.
fn install(budgets: Option<&str>, extra: &str) -> (TestEnv, PathBuf) {
    let env = TestEnv::new(3, "");
    let state_dir = env.path("state");
    std::fs::create_dir(&state_dir).unwrap();
    let state = state_dir.join("cooldown.json");
    let mut cfg = format!(
        "tier: 3\nreal_dirs: [{}]\naudit_log: {}\ncooldown_state: {}\n{extra}",
        env.real.display(),
        env.audit.display(),
        state.display()
    );
    if let Some(text) = budgets {
        let dir = env.path("policy");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("cooldown.yaml"), text).unwrap();
        cfg.push_str(&format!("policy: {}\n", dir.display()));
    }
    env.write_config(&cfg);
    (env, state)
}

fn at(tier: u8) -> [(&'static str, String); 1] {
    [("CLAUDEOPS_TIER", tier.to_string())]
}

fn run(env: &TestEnv, tool: &str, args: &[&str], tier: u8) -> Run {
    let t = at(tier);
    env.run(tool, args, &[(t[0].0, t[0].1.as_str())])
}

/// `now - ago`, as the state file holds it (whole seconds).
fn ago(secs: u64) -> String {
    format_time(SystemTime::now() - Duration::from_secs(secs))
}

fn plus(t: &str, secs: u64) -> String {
    format_time(parse_time(t).unwrap() + Duration::from_secs(secs))
}

fn state_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn restarts(path: &Path, key: &str) -> Vec<String> {
    state_json(path)["services"][key]["restart_timestamps"]
        .as_array()
        .map(|a| a.iter().map(|t| t.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

fn write_state(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

/// A tool and its arguments.
type Call<'a> = (&'a str, &'a [&'a str]);

/// How a test breaks the state file at a path.
type Breaks<'a> = &'a dyn Fn(&Path);

const THREE: &str = "budgets: {restart: {max: 3, window: 4h}, redeploy: {max: 1, window: 24h}}\n";

#[test]
fn every_alias_form_of_a_restart_counts_against_one_budget() {
    let (env, state) = install(Some(THREE), "");
    let groups: [(&str, &[Call], &str); 3] = [
        (
            "api",
            &[
                ("docker", &["restart", "api"]),
                ("docker", &["container", "restart", "-t", "5", "api"]),
                ("docker", &["-l", "debug", "container", "stop", "--signal", "SIGTERM", "api"]),
                ("docker", &["start", "api"]),
                ("docker", &["kill", "api"]),
            ],
            "3/3 restarts",
        ),
        (
            "shop/api",
            &[
                ("docker", &["compose", "-p", "shop", "restart", "api"]),
                ("docker", &["compose", "--project-name=shop", "up", "-d", "api"]),
                ("docker", &["compose", "-p", "shop", "stop", "-t", "5", "api"]),
                ("docker", &["compose", "-p", "shop", "start", "api"]),
            ],
            "3/3 restarts",
        ),
        (
            "ie01:api",
            &[
                ("ssh", &["ie01", "docker restart api"]),
                ("ssh", &["ops@IE01", "sudo docker container restart api"]),
                ("ssh", &["ie01", "sudo systemctl restart api.service"]),
                ("ssh", &["-p", "22", "ie01", "docker", "start", "api"]),
                ("ssh", &["ie01", "systemctl try-restart api"]),
            ],
            "3/3 restarts",
        ),
    ];
    for (key, calls, spent) in groups {
        for (i, (tool, args)) in calls.iter().enumerate() {
            env.forget(tool);
            let r = run(&env, tool, args, 3);
            if i < 3 {
                assert_eq!(r.code(), 0, "{key} {args:?}: {}", r.stderr());
                assert!(env.received(tool).is_some(), "{args:?}");
            } else {
                assert_eq!(r.code(), 77, "{key} {args:?}: {}", r.stderr());
                assert!(
                    r.stderr()
                        .contains(&format!("REFUSED: cooldown for {key} — {spent} in the last 4h; next allowed at ")),
                    "{args:?}: {}",
                    r.stderr()
                );
                assert_eq!(env.received(tool), None, "{args:?}");
            }
        }
        assert_eq!(restarts(&state, key).len(), 3, "{key}");
    }
}

#[test]
fn the_third_restart_in_the_window_is_refused_with_the_time_it_is_allowed_again() {
    let (env, state) = install(None, "");
    let (first, second) = (ago(3600), ago(1800));
    write_state(
        &state,
        &json!({"services": {"api": {"restart_timestamps": [first, second], "redeployment_timestamps": []}}}),
    );
    let before = std::fs::read(&state).unwrap();
    let r = run(&env, "docker", &["restart", "api"], 2);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(
        r.stderr(),
        format!(
            "[skill:container-ops] REFUSED: cooldown for api — 2/2 restarts in the last 4h; next allowed at {}. Escalate or wait.\n",
            plus(&first, 4 * 3600)
        )
    );
    assert_eq!(env.received("docker"), None);
    assert_eq!(std::fs::read(&state).unwrap(), before, "a refused call records nothing");
    let rec = env.last_audit();
    assert_eq!(
        (rec["verdict"].as_str(), rec["rule"].as_str()),
        (Some("refuse"), Some("docker.cooldown"))
    );
    assert_eq!(
        rec["cooldown"],
        json!({
            "state": state.display().to_string(),
            "budgets": [{"key": "api", "class": "restart", "used": 2, "adding": 1, "max": 2, "window": "4h",
                         "allowed": false, "next_allowed": plus(&first, 4 * 3600)}],
            "recorded": false
        })
    );
    // Another container has a budget of its own, and the allowed call is recorded before exec.
    let r = run(&env, "docker", &["restart", "db"], 2);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.stderr(), "");
    assert_eq!(restarts(&state, "db").len(), 1);
    let rec = env.last_audit();
    assert_eq!(rec["message"], "[skill:container-ops] Using: docker (CLI)");
    assert_eq!(rec["cooldown"]["recorded"], json!(true));
    assert_eq!(rec["cooldown"]["budgets"][0]["used"], json!(0));
}

#[test]
fn the_window_slides_as_old_restarts_leave_it() {
    let (env, state) = install(None, "");
    let (old, recent) = (ago(4 * 3600 + 10), ago(4 * 3600 - 60));
    write_state(&state, &json!({"services": {"api": {"restart_timestamps": [old, recent]}}}));
    let r = run(&env, "docker", &["restart", "api"], 2);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    // The restart that left the window is dropped when the list is written (Claude Ops' tools
    // count the list's length); the new one is the time of the call.
    let list = restarts(&state, "api");
    assert_eq!(list.len(), 2, "{list:?}");
    assert_eq!(list[0], recent);
    let new = parse_time(&list[1]).unwrap();
    assert!(SystemTime::now().duration_since(new).unwrap() < Duration::from_secs(120));
    // Two in the window now: the next is refused until the older of them leaves it.
    let r = run(&env, "docker", &["restart", "api"], 2);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(
        r.stderr().contains(&format!("next allowed at {}", plus(&recent, 4 * 3600))),
        "{}",
        r.stderr()
    );
}

#[test]
fn a_dry_run_says_whether_the_budget_would_allow_the_call_and_records_nothing() {
    let (env, state) = install(None, "");
    write_state(&state, &json!({"services": {"api": {"restart_timestamps": [ago(600)]}}}));
    let before = std::fs::read(&state).unwrap();
    let r = env.run(
        "docker",
        &["restart", "api"],
        &[("CLAUDEOPS_TIER", "2"), ("CLAUDEOPS_DRY_RUN", "1")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(
        r.stderr(),
        "[skill:container-ops] DRY RUN: would run: docker restart api\n\
         [skill:container-ops] DRY RUN: cooldown: api 1/2 restarts in the last 4h; the budget would allow this call (nothing recorded)\n"
    );
    assert_eq!(std::fs::read(&state).unwrap(), before);
    assert_eq!(env.received("docker"), None);
    let rec = env.last_audit();
    assert_eq!(
        (rec["verdict"].as_str(), &rec["cooldown"]["recorded"]),
        (Some("dry-run"), &json!(false))
    );
    // Spent: still a dry run (exit 0, nothing run or recorded), and the line says the budget
    // would refuse the call and when it would be allowed.
    let (first, second) = (ago(600), ago(300));
    write_state(&state, &json!({"services": {"api": {"restart_timestamps": [first, second]}}}));
    let before = std::fs::read(&state).unwrap();
    let r = env.run(
        "docker",
        &["restart", "api"],
        &[("CLAUDEOPS_TIER", "2"), ("CLAUDEOPS_DRY_RUN", "1")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(
        r.stderr(),
        format!(
            "[skill:container-ops] DRY RUN: would run: docker restart api\n\
             [skill:container-ops] DRY RUN: cooldown: api 2/2 restarts in the last 4h; the budget of api would refuse this \
             call without dry-run (next allowed at {}) (nothing recorded)\n",
            plus(&first, 4 * 3600)
        )
    );
    assert_eq!(std::fs::read(&state).unwrap(), before);
    assert_eq!(env.received("docker"), None);
    let rec = env.last_audit();
    assert_eq!(rec["verdict"], "dry-run");
    assert_eq!(rec["cooldown"]["budgets"][0]["allowed"], false);
    // Without dry-run the same call is refused.
    let r = run(&env, "docker", &["restart", "api"], 2);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("REFUSED: cooldown for api — 2/2 restarts"), "{}", r.stderr());
}

#[test]
fn a_hundred_concurrent_restarts_allow_exactly_the_budget_and_record_exactly_that_many() {
    let budget = "budgets: {restart: {max: 7, window: 4h}, redeploy: {max: 1, window: 24h}}\n";
    // A generous lock wait: 100 gates queue for the lock on 2 shared cores.
    let (env, state) = install(Some(budget), "cooldown_lock_wait: 120\n");
    let children: Vec<_> = (0..100)
        .map(|_| {
            let mut c = env.cmd("docker", &["restart", "api"]);
            c.env("CLAUDEOPS_TIER", "2").stdout(Stdio::null()).stderr(Stdio::piped());
            c.spawn().unwrap()
        })
        .collect();
    let mut codes = std::collections::BTreeMap::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        let code = out.status.code().unwrap_or(-1);
        if code != 0 && code != 77 {
            panic!("exit {code}: {}", String::from_utf8_lossy(&out.stderr));
        }
        *codes.entry(code).or_insert(0) += 1;
    }
    assert_eq!(codes, [(0, 7), (77, 93)].into_iter().collect());
    assert_eq!(restarts(&state, "api").len(), 7);
    let recs = env.audit_records();
    let allowed: Vec<&Value> = recs.iter().filter(|r| r["verdict"] == "allow").collect();
    assert_eq!(allowed.len(), 7);
    assert!(allowed.iter().all(|r| r["cooldown"]["recorded"] == json!(true)));
    assert_eq!(recs.iter().filter(|r| r["rule"] == "docker.cooldown").count(), 93);
    // The used counts the allowed calls saw are 0..7, each once: no two read the same count.
    let mut used: Vec<u64> = allowed
        .iter()
        .map(|r| r["cooldown"]["budgets"][0]["used"].as_u64().unwrap())
        .collect();
    used.sort();
    assert_eq!(used, (0..7).collect::<Vec<u64>>());
}

#[test]
fn a_state_file_the_gate_cannot_use_refuses_the_call_and_names_the_file() {
    let cases: [(&str, Breaks, &str); 6] = [
        (
            "corrupt",
            &|p| std::fs::write(p, "services: api").unwrap(),
            "cannot be used: not valid JSON",
        ),
        (
            "truncated",
            &|p| std::fs::write(p, "{\"services\": {\"api\": {\"restart_timestamps\": [\"2026-03-21T1").unwrap(),
            "cannot be used: not valid JSON (EOF while parsing",
        ),
        ("empty", &|p| std::fs::write(p, "").unwrap(), "the file is empty"),
        (
            "bad time",
            &|p| std::fs::write(p, "{\"services\": {\"api\": {\"restart_timestamps\": [\"last tuesday\"]}}}").unwrap(),
            "services.api.restart_timestamps: \"last tuesday\" is not an RFC 3339 time",
        ),
        // Tests run as root, who reads any file: a directory is what cannot be read.
        ("unreadable", &|p| std::fs::create_dir(p).unwrap(), "cannot be read (Is a directory"),
        (
            "lock file",
            &|p| std::fs::create_dir(format!("{}.lock", p.display())).unwrap(),
            "its lock file",
        ),
    ];
    for (what, make, want) in cases {
        let (env, state) = install(None, "");
        make(&state);
        let r = run(&env, "docker", &["restart", "api"], 2);
        assert_eq!(r.code(), 77, "{what}: {}", r.stderr());
        let line = r.stderr();
        assert!(
            line.starts_with(&format!("[skill:container-ops] REFUSED: cooldown state {}", state.display())),
            "{what}: {line}"
        );
        assert!(line.contains(want), "{what}: {line}");
        assert!(line.ends_with("— the call is refused until an operator fixes the file (tiershim doctor shows its health)\n"));
        assert_eq!(env.received("docker"), None, "{what}");
        assert_eq!(env.last_audit()["rule"], "docker.cooldown-state", "{what}");
        // A call that counts against no budget does not read the file at all.
        assert_eq!(run(&env, "docker", &["ps"], 1).code(), 0, "{what}");
    }
}

#[test]
fn a_lock_held_too_long_refuses_the_call() {
    let (env, state) = install(None, "cooldown_lock_wait: 0.3\n");
    let lock = std::fs::File::create(format!("{}.lock", state.display())).unwrap();
    let held = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive).unwrap();
    let r = run(&env, "docker", &["restart", "api"], 2);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(
        r.stderr().contains(&format!(
            "cooldown state {} is locked by another process for more than 0.3s",
            state.display()
        )),
        "{}",
        r.stderr()
    );
    assert_eq!(env.received("docker"), None);
    drop(held);
    assert_eq!(run(&env, "docker", &["restart", "api"], 2).code(), 0);
}

#[test]
fn claude_ops_own_state_format_is_read_and_every_other_key_is_kept() {
    let (env, state) = install(None, "");
    let earlier = ago(3600);
    let text = format!(
        r#"{{
  "services": {{
    "jellyfin": {{"restart_timestamps": ["{earlier}"], "redeployment_timestamps": [], "consecutive_healthy": 0}},
    "postgres": {{"restart_timestamps": ["{frac}"], "redeployment_timestamps": ["{off}"]}}
  }},
  "last_run": "2026-03-21T10:00:00Z",
  "last_daily_digest": null
}}"#,
        frac = ago(60).replace('Z', ".123456Z"),
        off = "2026-03-21T15:30:00+01:30",
    );
    std::fs::write(&state, &text).unwrap();
    let r = run(&env, "docker", &["restart", "jellyfin"], 2);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let v = state_json(&state);
    assert_eq!(v["last_run"], "2026-03-21T10:00:00Z");
    assert_eq!(v["last_daily_digest"], Value::Null);
    assert_eq!(v["services"]["jellyfin"]["consecutive_healthy"], 0);
    assert_eq!(
        v["services"]["postgres"],
        serde_json::from_str::<Value>(&text).unwrap()["services"]["postgres"]
    );
    let list = restarts(&state, "jellyfin");
    assert_eq!(list.len(), 2);
    assert_eq!(list[0], earlier);
    // The new entry is in the form Claude Ops' tools parse: jq's strptime reads every entry.
    let out = Command::new("jq")
        .args(["[.services.jellyfin.restart_timestamps[] | strptime(\"%Y-%m-%dT%H:%M:%SZ\") | mktime] | length"])
        .arg(&state)
        .output()
        .expect("jq (scripts/test-deps.sh installs it)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2");
    // The second restart in the window is the last one allowed.
    assert_eq!(run(&env, "docker", &["restart", "jellyfin"], 2).code(), 77);
    // postgres: one restart a minute ago (written with a fraction) counts.
    let r = run(&env, "docker", &["restart", "postgres", "postgres"], 2);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(
        r.stderr().contains("cooldown for postgres — 1/2 restarts in the last 4h"),
        "{}",
        r.stderr()
    );
}

#[test]
fn targets_the_gate_cannot_name_are_refused_below_tier_3_and_never_counted() {
    let (env, state) = install(None, "");
    let r = run(&env, "docker", &["restart", "3f2a9c1b7d4e"], 2);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(
        r.stderr(),
        "[skill:container-ops] REFUSED: restarting, starting or stopping a container whose restart budget cannot count it \
         (`3f2a9c1b7d4e` names a container by id) requires tier 3 (this agent is tier 2) — name each container or service \
         (docker restart api), or escalate to tier 3\n"
    );
    let r = run(&env, "docker", &["compose", "-p", "shop", "restart"], 2);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(
        r.stderr().contains("(every service of the compose project) requires tier 3"),
        "{}",
        r.stderr()
    );
    // At tier 3 they run, and nothing is recorded (there is nothing to count them under).
    for args in [&["restart", "3f2a9c1b7d4e"][..], &["compose", "-p", "shop", "restart"]] {
        let r = run(&env, "docker", args, 3);
        assert_eq!(r.code(), 0, "{args:?}: {}", r.stderr());
    }
    let r = run(&env, "ssh", &["ie01", "docker restart $(docker ps -q)"], 3);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(!state.exists(), "nothing was counted");
    // A name the policy lists is a name, whatever it looks like.
    let (env, state) = install(Some(&format!("{THREE}ids: {{names: [cafe]}}\n")), "");
    assert_eq!(run(&env, "docker", &["restart", "cafe"], 2).code(), 0);
    assert_eq!(restarts(&state, "cafe").len(), 1);
}

#[test]
fn a_remote_service_is_counted_with_its_host_as_the_issue_shows() {
    let (env, state) = install(None, "");
    for _ in 0..2 {
        let r = run(&env, "ssh", &["ops@ie01", "sudo systemctl restart jellyfin"], 2);
        assert_eq!(r.code(), 0, "{}", r.stderr());
    }
    let first = restarts(&state, "ie01:jellyfin")[0].clone();
    let r = run(&env, "ssh", &["ie01", "docker restart jellyfin"], 2);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(
        r.stderr(),
        format!(
            "[skill:container-ops] REFUSED: cooldown for ie01:jellyfin — 2/2 restarts in the last 4h; next allowed at {}. Escalate or wait.\n",
            plus(&first, 4 * 3600)
        )
    );
    // A reload restarts nothing and is not counted; the same name on another host has its own budget.
    assert_eq!(run(&env, "ssh", &["ie01", "systemctl reload jellyfin"], 2).code(), 0);
    assert_eq!(run(&env, "ssh", &["ie02", "systemctl restart jellyfin"], 2).code(), 0);
    assert_eq!(restarts(&state, "ie01:jellyfin").len(), 2);
    assert_eq!(restarts(&state, "ie02:jellyfin").len(), 1);
}

#[test]
fn a_redeployment_has_its_own_budget() {
    let (env, state) = install(None, "");
    let r = run(&env, "docker", &["compose", "-p", "shop", "up", "-d", "--build", "api"], 3);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let v = state_json(&state);
    assert_eq!(v["services"]["shop/api"]["redeployment_timestamps"].as_array().unwrap().len(), 1);
    assert_eq!(v["services"]["shop/api"]["restart_timestamps"], json!([]));
    let r = run(&env, "docker", &["compose", "-p", "shop", "up", "-d", "--force-recreate", "api"], 3);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(
        r.stderr().contains("cooldown for shop/api — 1/1 redeployments in the last 24h"),
        "{}",
        r.stderr()
    );
    // A restart of the same service is still within its restart budget.
    assert_eq!(run(&env, "docker", &["compose", "-p", "shop", "restart", "api"], 2).code(), 0);
}

#[test]
fn a_call_that_fails_before_exec_records_nothing() {
    // The real tool is missing: 127, nothing counted.
    let (env, state) = install(None, "");
    std::fs::remove_file(env.real.join("docker")).unwrap();
    let r = run(&env, "docker", &["restart", "api"], 2);
    assert_eq!(r.code(), 127, "{}", r.stderr());
    assert!(!state.exists());
    // The audit line cannot be written: 78, and the count is taken back.
    let (env, state) = install(None, "");
    write_state(&state, &json!({"services": {}}));
    let before = std::fs::read(&state).unwrap();
    std::fs::create_dir(&env.audit).unwrap();
    let r = run(&env, "docker", &["restart", "api"], 2);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert_eq!(env.received("docker"), None);
    assert_eq!(std::fs::read(&state).unwrap(), before);
    // The real tool cannot be executed (exec fails after the lock was released): 70, and the
    // count is taken back under the lock again, keeping what others counted.
    let (env, state) = install(None, "");
    write_state(&state, &json!({"services": {"web": {"restart_timestamps": [ago(60)]}}}));
    crate::harness::write_exec(&env.real.join("docker"), "\u{7f}ELF not a program");
    let r = run(&env, "docker", &["restart", "api"], 2);
    assert_eq!(r.code(), 70, "{}", r.stderr());
    assert_eq!(restarts(&state, "api"), Vec::<String>::new());
    assert_eq!(restarts(&state, "web").len(), 1);
}

#[test]
fn without_cooldown_state_no_budget_is_enforced() {
    let env = TestEnv::new(3, "");
    for _ in 0..3 {
        assert_eq!(run(&env, "docker", &["restart", "api"], 2).code(), 0);
    }
    assert!(env.last_audit().get("cooldown").is_none());
}

fn admin(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut c = Command::new(bin());
    c.args(args).env_remove("CLAUDEOPS_TIER").envs(env.iter().copied());
    Run { out: c.output().unwrap() }
}

#[test]
fn explain_and_the_audit_report_show_the_budget() {
    let (env, state) = install(None, "");
    write_state(&state, &json!({"services": {"api": {"restart_timestamps": [ago(100), ago(50)]}}}));
    let cfg = env.config_path();
    let cfg = cfg.to_str().unwrap();
    let r = admin(
        &[
            "explain", "--config", cfg, "--tier", "2", "--json", "--", "docker", "restart", "api",
        ],
        &[],
    );
    assert_eq!(r.code(), 77, "{}", r.stderr());
    let v: Value = serde_json::from_str(&r.stdout()).unwrap();
    assert_eq!(v["rule"], "docker.cooldown");
    assert_eq!(v["cooldown"][0]["used"], 2);
    assert!(v["message"].as_str().unwrap().contains("REFUSED: cooldown for api — 2/2 restarts"));
    let r = admin(&["explain", "--config", cfg, "--tier", "2", "--", "docker", "restart", "db"], &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(
        r.stdout()
            .contains("cooldown:       db restart: 0/2 restarts in the last 4h, this call adds 1\n"),
        "{}",
        r.stdout()
    );
    assert!(!restarts(&state, "db").iter().any(|_| true), "explain records nothing");
    // The gate refuses once and runs once; the audit report counts both.
    assert_eq!(run(&env, "docker", &["restart", "api"], 2).code(), 77);
    assert_eq!(run(&env, "docker", &["restart", "db"], 2).code(), 0);
    let r = admin(&["audit", env.audit.to_str().unwrap(), "--json"], &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let v: Value = serde_json::from_str(&r.stdout()).unwrap();
    assert_eq!(v["cooldown_refusals"].as_array().unwrap().len(), 1);
    assert!(
        v["cooldown_refusals"][0]["detail"]
            .as_str()
            .unwrap()
            .starts_with("api 2/2 restart in 4h; next allowed at ")
    );
    assert_eq!(v["cooldown_recorded"], json!({"db (restart)": 1}));
    let text = admin(&["audit", env.audit.to_str().unwrap()], &[]).stdout();
    assert!(text.contains("cooldown refusals (1):"), "{text}");
}

#[test]
fn the_cooldown_command_shows_budgets_and_an_operator_resets_one_service() {
    let (env, state) = install(None, "");
    let (t1, t2) = (ago(3600), ago(600));
    write_state(
        &state,
        &json!({"services": {"api": {"restart_timestamps": [t1, t2], "consecutive_healthy": 3},
                             "db": {"restart_timestamps": [ago(60)]}}, "last_run": null}),
    );
    let cfg = env.config_path();
    let cfg = cfg.to_str().unwrap();
    let r = admin(&["cooldown", "--config", cfg, "--json"], &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let v: Value = serde_json::from_str(&r.stdout()).unwrap();
    assert_eq!(v["state"], state.display().to_string());
    assert_eq!(
        v["services"],
        json!([
            {"service": "api", "class": "restart", "used": 2, "max": 2, "window": "4h",
             "next_allowed": plus(&t1, 4 * 3600), "times": [t1, t2]},
            {"service": "db", "class": "restart", "used": 1, "max": 2, "window": "4h",
             "next_allowed": "now", "times": [v["services"][1]["times"][0].clone()]}
        ])
    );
    let text = admin(&["cooldown", "--config", cfg], &[]).stdout();
    assert!(
        text.contains(&format!("api      restart    2/2      4h  {}", plus(&t1, 4 * 3600))),
        "{text}"
    );

    // From an agent's session: refused, and the file is untouched.
    let before = std::fs::read(&state).unwrap();
    let r = admin(&["cooldown", "--config", cfg, "reset", "api"], &[("CLAUDEOPS_TIER", "2")]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("refusing to reset api: this looks like an agent's session (CLAUDEOPS_TIER is set)")
    );
    // The variable dropped on the way does not help: a process above was started with it.
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "env -u CLAUDEOPS_TIER {} cooldown --config {cfg} reset api; exit $?",
            bin().display()
        ))
        .env("CLAUDEOPS_TIER", "2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(77), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("was started with CLAUDEOPS_TIER"));
    assert_eq!(std::fs::read(&state).unwrap(), before);

    // An operator resets it: the lists are emptied, the other keys stay, and the gate allows again.
    let r = admin(&["cooldown", "--config", cfg, "reset", "api"], &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let v = state_json(&state);
    assert_eq!(
        v["services"]["api"],
        json!({"restart_timestamps": [], "redeployment_timestamps": [], "consecutive_healthy": 3})
    );
    assert_eq!(v["last_run"], Value::Null);
    assert_eq!(run(&env, "docker", &["restart", "api"], 2).code(), 0);
    let r = admin(&["cooldown", "--config", cfg, "reset", "nobody"], &[]);
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(r.stderr().contains("has no service nobody"));
}

#[test]
fn doctor_reports_the_state_files_health_and_that_an_unhardened_budget_is_advisory() {
    let (env, state) = install(None, "");
    let cfg = env.config_path();
    let cfg = cfg.to_str().unwrap();
    let r = admin(&["doctor", "--config", cfg, "--user", "0"], &[]);
    let out = r.stdout();
    assert!(
        out.contains(&format!(
            "✓ tier: cooldown state {} reads (0 service(s) with counts)",
            state.display()
        )),
        "{out}"
    );
    assert!(
        out.contains("note: tier: the cooldown budget is advisory: this install is not hardened"),
        "{out}"
    );
    std::fs::write(&state, "{").unwrap();
    let out = admin(&["doctor", "--config", cfg, "--user", "0"], &[]).stdout();
    assert!(
        out.contains(&format!(
            "✗ tier: cooldown state {} cannot be used: not valid JSON",
            state.display()
        )),
        "{out}"
    );
    assert!(out.contains("so every restart and redeploy is refused"), "{out}");
}

#[test]
fn a_broken_cooldown_yaml_fails_policy_check_and_refuses_restarts_only() {
    let bad = "budgets: {restart: {max: 2, window: 4x}, redeploy: {max: 1, window: 24h}}\n";
    let (env, state) = install(Some(bad), "");
    let dir = env.path("policy");
    let r = admin(&["policy", "check", dir.to_str().unwrap()], &[]);
    assert_eq!(r.code(), 78, "{}", r.stdout());
    assert!(
        r.stdout().contains(&format!(
            "✗ cooldown budgets: policy {}: budgets.restart: window \"4x\": the unit is s, m, h or d",
            dir.join("cooldown.yaml").display()
        )),
        "{}",
        r.stdout()
    );
    let r = run(&env, "docker", &["restart", "api"], 2);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(
        r.stderr().contains("cooldown.yaml: budgets.restart: window \"4x\""),
        "{}",
        r.stderr()
    );
    assert_eq!(env.received("docker"), None);
    assert!(!state.exists());
    assert_eq!(run(&env, "docker", &["ps"], 1).code(), 0);
}

/// `docker compose …` run in `dir`.
fn run_in(env: &TestEnv, dir: &Path, args: &[&str], tier: u8) -> Run {
    let mut c = env.cmd("docker", args);
    c.current_dir(dir).env("CLAUDEOPS_TIER", tier.to_string());
    Run {
        out: c.output().expect("spawn"),
    }
}

#[test]
fn a_compose_service_is_one_budget_however_its_project_is_named() {
    let (env, state) = install(None, "");
    let work = env.path("Work");
    std::fs::create_dir_all(work.join("deploy")).unwrap();
    std::fs::write(work.join("compose.yaml"), "services:\n  api: {image: app}\n").unwrap();
    // In the project's directory (or below it), the project is the directory's name, as compose
    // takes it.
    assert_eq!(run_in(&env, &work, &["compose", "restart", "api"], 2).code(), 0);
    assert_eq!(run_in(&env, &work.join("deploy"), &["compose", "stop", "api"], 2).code(), 0);
    assert_eq!(restarts(&state, "work/api").len(), 2);
    // Naming the project, pointing at the file from elsewhere, or restarting the container by the
    // name compose gave it: the same budget, spent.
    let tmp = env.path("");
    for (dir, args) in [
        (&work, &["compose", "-p", "work", "restart", "api"][..]),
        (&tmp, &["compose", "-f", "Work/compose.yaml", "restart", "api"]),
        (&tmp, &["restart", "work-api-1"]),
    ] {
        let r = run_in(&env, dir, args, 2);
        assert_eq!(r.code(), 77, "{args:?}: {}", r.stderr());
        assert!(r.stderr().contains("— 2/2 restarts in the last 4h"), "{args:?}: {}", r.stderr());
    }
    // `name:` in the compose file names another project: another budget.
    std::fs::write(work.join("compose.yaml"), "name: shop\nservices:\n  api: {image: app}\n").unwrap();
    assert_eq!(run_in(&env, &work, &["compose", "restart", "api"], 2).code(), 0);
    assert_eq!(restarts(&state, "shop/api").len(), 1);
    // A project the gate cannot work out is refused below tier 3, and never reaches docker.
    std::fs::write(work.join("compose.yaml"), "name: ${PROJECT}\n").unwrap();
    env.forget("docker");
    let r = run_in(&env, &work, &["compose", "restart", "api"], 2);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("uses interpolation the gate does not do"), "{}", r.stderr());
    assert_eq!(env.received("docker"), None);
}

#[test]
fn a_short_id_prefix_is_an_id() {
    let (env, state) = install(None, "");
    for id in ["3f2", "3f", "3"] {
        let r = run(&env, "docker", &["restart", id], 2);
        assert_eq!(r.code(), 77, "{id}: {}", r.stderr());
        assert!(r.stderr().contains("names a container by id"), "{}", r.stderr());
    }
    assert_eq!(run(&env, "docker", &["restart", "db"], 2).code(), 0);
    assert_eq!(restarts(&state, "db").len(), 1);
}

#[test]
fn over_ssh_the_project_comes_from_the_cd_in_front() {
    let (env, state) = install(None, "");
    let ok = |cmd: &str| {
        let r = run(&env, "ssh", &["ie01", cmd], 2);
        assert_eq!(r.code(), 0, "{cmd}: {}", r.stderr());
    };
    ok("cd /srv/media && docker compose restart jellyfin");
    ok("docker compose -p media restart jellyfin");
    assert_eq!(restarts(&state, "ie01:media/jellyfin").len(), 2);
    let r = run(&env, "ssh", &["ie01", "docker restart media-jellyfin-1"], 2);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    // Without a cd or -p the project is not known there.
    let r = run(&env, "ssh", &["ie01", "docker compose restart jellyfin"], 2);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("name it with -p"), "{}", r.stderr());
}

/// Wait until process `pid` is blocked writing to a pipe (its stderr, which nobody reads).
fn blocked_on_pipe(pid: u32) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
        if wchan.ends_with("pipe_write") {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the gate never blocked on its stderr (wchan {wchan:?})"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A pipe filled to capacity, whose reader does not read: a write to it blocks. Returns the
/// reader, to drain it later, and the write end.
fn full_pipe() -> (std::io::PipeReader, std::io::PipeWriter) {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let (reader, mut writer) = std::io::pipe().unwrap();
    let cap = unsafe { libc::fcntl(writer.as_raw_fd(), libc::F_GETPIPE_SZ) };
    assert!(cap > 0);
    writer.write_all(&vec![b'x'; cap as usize]).unwrap();
    (reader, writer)
}

#[test]
fn a_gate_blocked_on_the_agents_full_stderr_holds_no_lock() {
    // `{ seq 1 100000 & sleep 1; docker restart api; } 2>&1 | sleep 60`: the gate's stderr is a
    // full pipe nobody reads. An allowed call writes there only with `announce: stderr`; a
    // refusal always does.
    let (env, state) = install(None, "cooldown_lock_wait: 1\nannounce: stderr\n");
    let lock = tiershim::cooldown::store::lock_path(&state);
    for (service, spent) in [("api", false), ("db", true)] {
        if spent {
            write_state(&state, &json!({"services": {"db": {"restart_timestamps": [ago(600), ago(300)]}}}));
        }
        let (mut reader, writer) = full_pipe();
        let mut child = env
            .cmd("docker", &["restart", service])
            .env("CLAUDEOPS_TIER", "2")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(writer)
            .spawn()
            .unwrap();
        blocked_on_pipe(child.id());
        // While it is blocked the state file's lock is free, and another agent's restart is
        // counted and runs.
        let f = std::fs::OpenOptions::new().read(true).write(true).open(&lock).unwrap();
        let held = nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusiveNonblock);
        assert!(held.is_ok(), "{service}: the blocked gate holds the lock");
        drop(held);
        let r = run(&env, "docker", &["restart", "web"], 2);
        assert_eq!(r.code(), 0, "{service}: {}", r.stderr());
        // Once its stderr drains, the blocked call ends as it would have.
        let drain = std::thread::spawn(move || {
            let mut sink = Vec::new();
            std::io::Read::read_to_end(&mut reader, &mut sink).unwrap();
            String::from_utf8_lossy(&sink).into_owned()
        });
        let status = child.wait().unwrap();
        let text = drain.join().unwrap();
        if spent {
            assert_eq!(status.code(), Some(77), "{text}");
            assert!(text.contains("REFUSED: cooldown for db — 2/2 restarts"), "{text}");
            assert_eq!(restarts(&state, "db").len(), 2);
        } else {
            assert_eq!(status.code(), Some(0), "{text}");
            assert!(text.ends_with("[skill:container-ops] Using: docker (CLI)\n"), "{text}");
            assert_eq!(restarts(&state, "api").len(), 1);
        }
    }
    assert_eq!(restarts(&state, "web").len(), 1);
}

#[test]
fn a_restart_the_daemon_fails_still_spends_the_budget() {
    // Claude Ops counts every remediation attempt, successful or failed; the gate is gone after
    // exec and cannot see the outcome, so the attempt is what it counts.
    let (env, state) = install(None, "");
    crate::harness::write_exec(
        &env.real.join("docker"),
        "#!/bin/sh\necho 'Error response from daemon: Cannot restart container api' >&2\nexit 1\n",
    );
    for _ in 0..2 {
        let r = run(&env, "docker", &["restart", "api"], 2);
        assert_eq!(r.code(), 1, "{}", r.stderr());
        assert!(r.stderr().contains("Error response from daemon"), "{}", r.stderr());
    }
    assert_eq!(restarts(&state, "api").len(), 2);
    let r = run(&env, "docker", &["restart", "api"], 2);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("REFUSED: cooldown for api — 2/2 restarts"), "{}", r.stderr());
}

#[test]
fn a_compose_service_with_a_container_name_is_one_budget_with_that_container() {
    // `compose restart api` ×2 plus `docker restart shop-api` ×2 was four restarts in a 2-per-4h
    // window.
    let (env, state) = install(None, "");
    let work = env.path("shop");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("compose.yaml"),
        "services:\n  api: {image: app, container_name: shop-api}\n  db: {image: pg}\n",
    )
    .unwrap();
    assert_eq!(run_in(&env, &work, &["compose", "restart", "api"], 2).code(), 0);
    assert_eq!(run(&env, "docker", &["restart", "shop-api"], 2).code(), 0);
    assert_eq!(restarts(&state, "shop-api").len(), 2);
    let tmp = env.path("");
    for (dir, args) in [
        (&work, &["compose", "restart", "api"][..]),
        (&work, &["compose", "-p", "other", "restart", "api"]),
        (&tmp, &["compose", "-f", "shop/compose.yaml", "stop", "api"]),
        (&tmp, &["restart", "shop-api"]),
    ] {
        let r = run_in(&env, dir, args, 2);
        assert_eq!(r.code(), 77, "{args:?}: {}", r.stderr());
        assert!(
            r.stderr().contains("REFUSED: cooldown for shop-api — 2/2 restarts"),
            "{args:?}: {}",
            r.stderr()
        );
    }
    // A service without one keeps its compose key.
    assert_eq!(run_in(&env, &work, &["compose", "restart", "db"], 2).code(), 0);
    assert_eq!(restarts(&state, "shop/db").len(), 1);
    // A later file overrides the name, as compose merges them.
    std::fs::write(
        work.join("compose.override.yaml"),
        "services:\n  api: {container_name: shop-api-2}\n",
    )
    .unwrap();
    assert_eq!(run_in(&env, &work, &["compose", "restart", "api"], 2).code(), 0);
    assert_eq!(restarts(&state, "shop-api-2").len(), 1);
    // A name the gate cannot read refuses below tier 3.
    std::fs::write(
        work.join("compose.override.yaml"),
        "services:\n  api: {container_name: \"${API_NAME}\"}\n",
    )
    .unwrap();
    env.forget("docker");
    let r = run_in(&env, &work, &["compose", "restart", "api"], 2);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("`container_name:` of service `api`"), "{}", r.stderr());
    assert!(r.stderr().contains("uses interpolation the gate does not do"), "{}", r.stderr());
    assert_eq!(env.received("docker"), None);
}
