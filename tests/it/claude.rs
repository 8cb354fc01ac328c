//! The real Claude Code (the pinned npm package, scripts/test-deps.sh) driven headless through
//! `tiershim launch`, as an unprivileged user, against a fake Anthropic Messages API on
//! 127.0.0.1 (tests/claude/fake_api.py) that plays a script of tool calls and records every
//! tool result the CLI sends back: what the model would read, text and `is_error`. The agent is
//! started by the Claude Ops example an operator copies (`examples/claude-ops/entrypoint.sh`),
//! so the example is run as it stands on every `make test`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::agent::{AgentInstall, as_root, text};
use crate::installed::repo;

/// The Claude Code binary test-deps.sh installs; under CI its absence fails the test.
fn claude_binary() -> Option<PathBuf> {
    let p = repo().join("target/test-deps/claude/node_modules/@anthropic-ai/claude-code/bin/claude.exe");
    if p.is_file() {
        return Some(p);
    }
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "Claude Code is not installed at {}: scripts/test-deps.sh installs it from the npm registry (make test runs it)",
        p.display()
    );
    eprintln!("SKIPPED: Claude Code is not installed at {}; run scripts/test-deps.sh", p.display());
    None
}

/// The fake API, playing `script`; stopped on drop.
struct FakeApi {
    child: Child,
    pub url: String,
    record: PathBuf,
    _dir: tempfile::TempDir,
}

impl FakeApi {
    fn start(script: &Value) -> FakeApi {
        let dir = tempfile::tempdir().unwrap();
        let script_file = dir.path().join("script.json");
        std::fs::write(&script_file, serde_json::to_vec(script).unwrap()).unwrap();
        let record = dir.path().join("record.jsonl");
        let port_file = dir.path().join("port");
        let mut child = Command::new("python3")
            .arg(repo().join("tests/claude/fake_api.py"))
            .args([&script_file, &record, &port_file])
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 runs the fake API (scripts/test-deps.sh installs python3)");
        for _ in 0..500 {
            if let Ok(port) = std::fs::read_to_string(&port_file) {
                return FakeApi {
                    child,
                    url: format!("http://127.0.0.1:{port}"),
                    record,
                    _dir: dir,
                };
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("the fake API did not start");
    }

    /// The tool results, in step order: (is_error, text).
    fn results(&self) -> Vec<(bool, String)> {
        let mut lines: Vec<Value> = std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        lines.sort_by_key(|l| l["step"].as_u64());
        lines
            .iter()
            .map(|l| (l["is_error"].as_bool().unwrap(), l["text"].as_str().unwrap().to_string()))
            .collect()
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn bash(command: &str) -> Value {
    json!({"tool": "Bash", "input": {"command": command, "description": "run"}})
}

/// Claude Code where the agent's user can run it.
fn local_claude(bin: &Path, a: &AgentInstall) -> PathBuf {
    let local = a.world.path().join("claude");
    if std::fs::hard_link(bin, &local).is_err() {
        std::fs::copy(bin, &local).unwrap();
    }
    local
}

/// The installation, and the Claude Code binary where the agent's user can run it.
fn setup(tag: &str) -> Option<(AgentInstall, PathBuf)> {
    let bin = claude_binary()?;
    let a = AgentInstall::new(tag, &[]);
    let local = local_claude(&bin, &a);
    Some((a, local))
}

/// The Claude Ops example's world (installed by its entrypoint), and Claude Code.
fn setup_example(tag: &str) -> Option<(AgentInstall, PathBuf)> {
    let bin = claude_binary()?;
    let a = AgentInstall::for_example(tag);
    let local = local_claude(&bin, &a);
    Some((a, local))
}

/// The Anthropic variables the entrypoint passes on: the fake API's URL, a key that is none.
fn api_env(api: &FakeApi) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", api.url.clone()),
        ("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
    ]
}

/// Claude Code started headless by the Claude Ops example's entrypoint at `tier` against `api`.
fn run_example(a: &AgentInstall, claude: &Path, tier: u8, api: &FakeApi) -> std::process::Output {
    let env = api_env(api);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    a.example_cmd(tier, claude, "run the script", &env).output().unwrap()
}

/// Run Claude Code headless through `tiershim launch` at `tier` against `api`.
fn run_claude(a: &AgentInstall, claude: &Path, tier: u8, api: &FakeApi) -> std::process::Output {
    let claude = claude.display().to_string();
    let mut c = a.launch_cmd(
        tier,
        &a.app,
        &[
            "ANTHROPIC_BASE_URL",
            "ANTHROPIC_API_KEY",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        ],
        &[
            &claude,
            "-p",
            "run the script",
            "--output-format",
            "stream-json",
            "--verbose",
            "--dangerously-skip-permissions",
        ],
    );
    c.envs(api_env(api));
    c.output().unwrap()
}

#[test]
fn claude_code_at_tier_1_reads_what_plain_bash_would_print_and_no_escape_gets_out() {
    if !as_root("claude_code_at_tier_1…") {
        return;
    }
    let Some((a, claude)) = setup_example("c1") else { return };
    let home = a.home.display().to_string();
    let app = a.app.display().to_string();
    let steps: Vec<(Value, bool, String)> = vec![
        // Allowed reads: the tool's own output and status, nothing of the gate's.
        (bash("docker ps"), false, "CONTAINER ID   NAMES   STATUS\nabc123         api     Up 2 hours\ndef456         db      Up 3 hours".into()),
        (bash("git log --format=%s"), false, "first".into()),
        // 2>&1 pipelines see the tool's output only.
        (bash("docker inspect api 2>&1 | jq -r '.[0].State.Status'"), false, "running".into()),
        (bash("docker ps 2>&1 | head -2"), false, "CONTAINER ID   NAMES   STATUS\nabc123         api     Up 2 hours".into()),
        // A refusal: 77 and the REFUSED line.
        (
            bash("docker restart api"),
            true,
            "Exit code 77\n[skill:container-ops] REFUSED: restarting, starting or stopping a container requires tier 2 (this agent is tier 1) — escalate to a tier 2 agent or an operator".into(),
        ),
        // Statuses, quoting, heredocs.
        (bash("false"), true, "Exit code 1".into()),
        (bash("echo out; echo err >&2; exit 3"), true, "Exit code 3\nout\nerr".into()),
        (bash("printf '%s|' \"a b\" 'c\"d' it\\'s \"$((2+3))\""), false, "a b|c\"d|it's|5|".into()),
        (bash("cat <<'EOF'\n$HOME stays\n  indented\nEOF"), false, "$HOME stays\n  indented".into()),
        (bash("cat <<EOF | wc -l\none\ntwo\nEOF"), false, "2".into()),
        // Long output.
        (bash("seq 1 2000 | tail -3"), false, "1998\n1999\n2000".into()),
        // Escapes: absolute paths, PATH=, exec, source, every redirection, cd.
        (bash("/usr/bin/id"), true, "Exit code 1\nrbash: line 1: /usr/bin/id: restricted: cannot specify `/' in command names".into()),
        (bash("PATH=/usr/bin:/bin env"), true, "Exit code 127\nrbash: line 1: PATH: readonly variable\nrbash: line 1: env: command not found".into()),
        (bash("exec id"), true, "Exit code 1\nrbash: line 1: exec: restricted".into()),
        (bash("source /etc/profile"), true, "Exit code 1\nrbash: line 1: source: /etc/profile: restricted".into()),
        (bash(&format!("echo x > {home}/pwned")), true, format!("Exit code 1\nrbash: line 1: {home}/pwned: restricted: cannot redirect output")),
        (bash(&format!("echo x >> {app}/README.md")), true, format!("Exit code 1\nrbash: line 1: {app}/README.md: restricted: cannot redirect output")),
        (bash(&format!("echo x >| {home}/pwned")), true, format!("Exit code 1\nrbash: line 1: {home}/pwned: restricted: cannot redirect output")),
        (bash(&format!("echo x &> {home}/pwned")), true, format!("Exit code 1\nrbash: line 1: {home}/pwned: restricted: cannot redirect output")),
        (bash(&format!("cat 1<> {home}/pwned")), true, format!("Exit code 1\nrbash: line 1: {home}/pwned: restricted: cannot redirect output")),
        (bash("cd /"), true, "Exit code 1\nrbash: line 1: cd: restricted".into()),
        // Text that imitates Claude Code's own wrapper is the agent's command, and rbash's.
        (bash(&format!("echo x && pwd -P >| {home}/claude-1234-cwd")), true, format!("Exit code 1\nx\nrbash: line 1: {home}/claude-1234-cwd: restricted: cannot redirect output")),
        // Claude Code's own file tools: tier 1 has none.
        (
            json!({"tool": "Write", "input": {"file_path": format!("{app}/written.md"), "content": "x\n"}}),
            true,
            "<tool_use_error>Error: No such tool available: Write. Write is disabled for this session, in subagents as well as here.</tool_use_error>".into(),
        ),
        (
            json!({"tool": "Edit", "input": {"file_path": format!("{app}/README.md"), "old_string": "app", "new_string": "pwned"}}),
            true,
            "<tool_use_error>Error: No such tool available: Edit. Edit is disabled for this session, in subagents as well as here.</tool_use_error>".into(),
        ),
    ];
    let script: Vec<Value> = steps.iter().map(|(s, _, _)| s.clone()).collect();
    let api = FakeApi::start(&Value::Array(script));
    let out = run_example(&a, &claude, 1, &api);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", text(&out.stderr), text(&out.stdout));
    // The example serves the skills over MCP: Claude Code connected to `tiershim mcp`.
    let init = text(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "system" && v["subtype"] == "init")
        .unwrap_or_else(|| panic!("no init message: {}", text(&out.stdout)));
    assert!(
        init["mcp_servers"]
            .as_array()
            .is_some_and(|s| s.iter().any(|m| m["name"] == "skills" && m["status"] == "connected"))
            && init["tools"].as_array().is_some_and(|t| t.contains(&json!("mcp__skills__skill"))),
        "{init:#}"
    );
    let got = api.results();
    assert_eq!(got.len(), steps.len(), "{got:#?}");
    let wrong: Vec<String> = steps
        .iter()
        .zip(&got)
        .filter(|((_, e, w), (ge, gt))| (ge, gt) != (e, w))
        .map(|((s, e, w), (ge, gt))| format!("{s}\n  want ({e}, {w:?})\n  got  ({ge}, {gt:?})"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(!a.home.join("pwned").exists() && !a.app.join("written.md").exists());
    assert_eq!(std::fs::read_to_string(a.app.join("README.md")).unwrap(), "# app\n");
    // Every gated call ran inside the fence, and the record has the line the agent did not see.
    let recs = a.inst.audit_records();
    let ps = recs.iter().find(|r| r["argv"] == json!(["ps"])).unwrap();
    assert_eq!(ps["message"], "[skill:container-health] Using: docker (CLI)");
    assert!(
        recs.iter().all(|r| r["fence"].as_str().unwrap().starts_with("landlock abi ")),
        "{recs:#?}"
    );
}

#[test]
fn claude_code_s_long_output_and_background_tasks_come_back_as_from_bash() {
    if !as_root("claude_code_s_long_output…") {
        return;
    }
    let Some((a, claude)) = setup_example("c2") else { return };
    let script = json!([
        {"tool": "Bash", "input": {"command": "sleep 1; docker ps | tail -1", "description": "bg", "run_in_background": true}},
        bash("seq 1 40000"),
        bash("sleep 3; echo waited"),
        bash("seq 1 3000"),
    ]);
    let api = FakeApi::start(&script);
    let out = run_example(&a, &claude, 1, &api);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let got = api.results();
    assert_eq!(got.len(), 4, "{got:#?}");
    assert!(
        !got[0].0 && got[0].1.starts_with("Command running in background with ID: "),
        "{:?}",
        got[0]
    );
    // Long output: not an error, and whole: inline up to Claude Code's limit, beyond it saved
    // in full to a file in the agent's state, with a preview, as for bash.
    let seq = |n: u32| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join("\n");
    assert_eq!(got[3], (false, seq(3000)));
    assert!(!got[1].0, "{:?}", &got[1].1[..200]);
    let saved = got[1]
        .1
        .strip_prefix("<persisted-output>\nOutput too large (")
        .and_then(|r| r.split_once("Full output saved to: "))
        .and_then(|(_, r)| r.lines().next())
        .unwrap_or_else(|| panic!("{}", &got[1].1[..300]));
    assert!(saved.starts_with(&a.home.join(".claude").display().to_string()), "{saved}");
    assert_eq!(std::fs::read_to_string(saved).unwrap(), format!("{}\n", seq(40000)));
    // The background task ran to its end inside the fence: its output file (in the agent's
    // private TMPDIR, named in the first result) holds what it printed and its status.
    assert_eq!(got[2], (false, "waited".into()));
    let file = got[0]
        .1
        .split_once("Output is being written to: ")
        .and_then(|(_, r)| r.split_once(". "))
        .map(|(p, _)| PathBuf::from(p))
        .unwrap();
    assert!(file.starts_with(a.home.join(".claude/tmp")), "{}", file.display());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "def456         db      Up 3 hours\n\n[exited with code 0]\n"
    );
}

#[test]
fn claude_code_at_tier_2_writes_inside_the_work_tree_only() {
    if !as_root("claude_code_at_tier_2…") {
        return;
    }
    let Some((a, claude)) = setup_example("c3") else { return };
    let app = a.app.display().to_string();
    let home = a.home.display().to_string();
    let write = |path: String| json!({"tool": "Write", "input": {"file_path": path, "content": "written\n"}});
    let denied = "<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>";
    let config = std::fs::read(a.app.join(".git/config")).unwrap();
    let script = json!([
        write(format!("{app}/checks/disk.md")),
        write(format!("{app}/.git/config")),
        write(format!("{app}/.git/hooks/pre-commit")),
        write(format!("{app}/.claude-ops/skills/evil.md")),
        write(format!("{app}/.env")),
        write(format!("{home}/.claude/settings.json")),
        write(format!("{home}/notes.md")),
        bash("docker restart api"),
        bash("git add checks/disk.md && git commit -qm 'disk check' && git log --format=%s"),
        // The example's repository skill (examples/claude-ops/repository-skills/) keeps paging
        // checks for people: the agent may write the file, not commit it.
        write(format!("{app}/checks/disk-paging.md")),
        bash("git add checks/disk-paging.md && git commit -qm 'page on disk'"),
    ]);
    let api = FakeApi::start(&script);
    let out = run_example(&a, &claude, 2, &api);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let got = api.results();
    assert_eq!(got.len(), 11, "{got:#?}");
    assert!(
        !got[0].0 && got[0].1.starts_with(&format!("File created successfully at: {app}/checks/disk.md")),
        "{:?}",
        got[0]
    );
    for g in &got[1..6] {
        assert_eq!(g, &(true, denied.to_string()));
    }
    // Outside the work trees, in a directory the agent's user owns: the kernel refuses.
    assert!(got[6].0 && got[6].1.starts_with("EACCES: permission denied"), "{:?}", got[6]);
    assert_eq!(got[7], (false, "api".into()));
    assert_eq!(got[8], (false, "disk check\nfirst".into()));
    assert!(!got[9].0, "{:?}", got[9]);
    assert!(
        got[10].0
            && got[10].1.starts_with("Exit code 77\n")
            && got[10].1.contains(
                "SCOPE VIOLATION: Refusing to commit modifying checks/disk-paging.md — matches denied pattern checks/*-paging.md ("
            )
            && got[10].1.contains("paging-checks.md"),
        "{:?}",
        got[10]
    );
    // The entrypoint's configuration holds: the restart counted against its budget, and the gate
    // read the session inventory it wrote (no MCP server for containers: the CLI fallback noted).
    let state: Value = serde_json::from_slice(&std::fs::read(a.inst.tmp.path().join("state/cooldown/cooldown.json")).unwrap()).unwrap();
    assert_eq!(
        state["services"]["api"]["restart_timestamps"].as_array().map(Vec::len),
        Some(1),
        "{state}"
    );
    let recs = a.inst.audit_records();
    let restart = recs.iter().find(|r| r["argv"] == json!(["restart", "api"])).unwrap();
    assert!(
        restart["notices"].to_string().contains("MCP tools not found for Docker"),
        "{restart:#}"
    );
    assert_eq!(std::fs::read_to_string(a.app.join("checks/disk.md")).unwrap(), "written\n");
    assert_eq!(std::fs::read(a.app.join(".git/config")).unwrap(), config);
    for p in [".git/hooks/pre-commit", ".claude-ops/skills/evil.md", ".env"] {
        assert!(!a.app.join(p).exists(), "{p}");
    }
    assert!(!a.home.join("notes.md").exists());
    // The user settings the launch made (`{}`, read-only for the session) are as it made them.
    assert_eq!(std::fs::read_to_string(a.home.join(".claude/settings.json")).unwrap(), "{}\n");
}

/// `launch_cmd` run in a mount namespace of its own whose `/etc/claude-code` holds the
/// operator's `managed-settings.json` (`managed`), as a machine with managed settings has it.
fn with_managed(launch: &Command, managed: &Value) -> Command {
    let mut c = Command::new("/usr/bin/unshare");
    c.args(["--mount", "--propagation", "private", "--", "/bin/sh", "-c"])
        .arg("mkdir -p /etc/claude-code && mount -t tmpfs tmpfs /etc/claude-code && printf '%s' \"$1\" > /etc/claude-code/managed-settings.json && shift && exec \"$@\"")
        .arg("sh")
        .arg(managed.to_string())
        .arg(launch.get_program())
        .args(launch.get_args())
        .env_clear()
        .current_dir("/");
    for (k, v) in launch.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    c
}

#[test]
fn a_tier_2_agent_cannot_plant_claude_code_settings_and_the_operator_s_env_cannot_reopen_the_shell() {
    if !as_root("a_tier_2_agent_cannot_plant_claude_code_settings…") {
        return;
    }
    let Some((a, claude)) = setup("c5") else { return };
    let app = a.app.display().to_string();
    let home = a.home.display().to_string();
    let write = |path: String, content: &str| json!({"tool": "Write", "input": {"file_path": path, "content": content}});
    let settings =
        r#"{"env": {"CLAUDE_CODE_SHELL": "/bin/bash", "SHELL": "/bin/bash"}, "apiKeyHelper": "/usr/bin/id > /tmp/pwned; echo k"}"#;
    let new_file = |path: &str, body: &str| {
        format!("diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{body}\n")
    };
    let symlink = |path: &str, target: &str| {
        format!(
            "diff --git a/{path} b/{path}\nnew file mode 120000\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{target}\n\\ No newline at end of file\n"
        )
    };
    let steps = json!([
        // 0: the shell is the tier's, though the operator's managed env names /bin/bash.
        bash("echo \"$0\"; shopt -q restricted_shell && echo restricted"),
        // 1-2: a patch that creates .claude/settings.json: the gate judges its paths.
        write(format!("{app}/plant.diff"), &new_file(".claude/settings.json", settings)),
        bash("git apply plant.diff"),
        // 3-4: links to the project's and the user's settings directories, made by a patch.
        write(
            format!("{app}/links.diff"),
            &format!("{}{}", symlink("lnk", ".claude"), symlink("home", &format!("{home}/.claude")))
        ),
        bash("git apply links.diff && ls -l lnk home | cut -c1"),
        // 5-7: written through the links and directly: the mounts are read-only.
        write(format!("{app}/lnk/settings.json"), settings),
        write(format!("{app}/home/settings.json"), settings),
        write(
            format!("{app}/.mcp.json"),
            r#"{"mcpServers": {"x": {"command": "/bin/sh", "args": ["-c", "id"]}}}"#
        ),
        // 8: the running agent still has its shell.
        bash("echo \"$0\"; shopt -q restricted_shell && echo restricted"),
    ]);
    let api = FakeApi::start(&steps);
    let operator = json!({"env": {"CLAUDE_CODE_SHELL": "/bin/bash", "SHELL": "/bin/bash", "CLAUDE_CODE_SHELL_PREFIX": "/bin/bash -c", "OPERATOR_NOTE": "kept"}, "model": "claude-sonnet-4-5"});
    let out = with_managed(
        a.launch_cmd(
            2,
            &a.app,
            &[
                "ANTHROPIC_BASE_URL",
                "ANTHROPIC_API_KEY",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
            ],
            &[
                claude.to_str().unwrap(),
                "-p",
                "run the script",
                "--output-format",
                "stream-json",
                "--verbose",
                "--dangerously-skip-permissions",
            ],
        )
        .env("ANTHROPIC_BASE_URL", &api.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        &operator,
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let got = api.results();
    assert_eq!(got.len(), 9, "{got:#?}");
    // (Claude Code may append a reminder of its own to a result.)
    let restricted = |g: &(bool, String)| !g.0 && g.1.starts_with("rbash\nrestricted");
    assert!(restricted(&got[0]), "{:?}", got[0]);
    assert!(
        got[2].0 && got[2].1.contains("REFUSED") && got[2].1.contains(".claude"),
        "{:?}",
        got[2]
    );
    assert!(!got[4].0 && got[4].1.starts_with("l\nl"), "{:?}", got[4]);
    for g in &got[5..8] {
        assert!(g.0, "{g:?}");
    }
    assert!(restricted(&got[8]), "{:?}", got[8]);
    // Nothing landed: the project's .claude and .mcp.json are the launch's empty directories,
    // the user settings the launch's `{}`.
    assert_eq!(std::fs::read_dir(a.app.join(".claude")).unwrap().count(), 0);
    assert!(a.app.join(".mcp.json").is_dir() && std::fs::read_dir(a.app.join(".mcp.json")).unwrap().count() == 0);
    assert_eq!(std::fs::read_to_string(a.home.join(".claude/settings.json")).unwrap(), "{}\n");
    assert!(!Path::new("/tmp/pwned").exists());
    // git does not list the launch's empty directories.
    let status = Command::new(crate::agent::which("git"))
        .args(["-c", "safe.directory=*", "status", "--porcelain", "--untracked-files=all"])
        .current_dir(&a.app)
        .output()
        .unwrap();
    assert!(
        !text(&status.stdout).contains(".claude") && !text(&status.stdout).contains(".mcp.json"),
        "{}",
        text(&status.stdout)
    );

    // Planted before a start (by a session before this one, or by hand as the agent's user):
    // launch refuses, naming the file and the key, and no agent starts.
    let api = FakeApi::start(&json!([bash("echo started")]));
    let agent_owned = |p: &Path, body: &str| {
        std::fs::write(p, body).unwrap();
        std::os::unix::fs::chown(p, Some(a.acct.uid), Some(a.acct.gid)).unwrap();
    };
    let try_launch = |what: &str, want: &str| {
        let out = run_claude(&a, &claude, 2, &api);
        assert_eq!(out.status.code(), Some(78), "{what}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(want), "{what}: {}", text(&out.stderr));
        assert_eq!(api.results(), vec![], "{what}: the agent started");
    };
    agent_owned(&a.app.join(".claude/settings.json"), settings);
    try_launch(
        "project settings",
        &format!("{app}/.claude/settings.json: `apiKeyHelper` in a Claude Code settings file the agent could have written"),
    );
    std::fs::remove_file(a.app.join(".claude/settings.json")).unwrap();
    agent_owned(&a.app.join(".claude/settings.local.json"), r#"{"hooks": {}}"#);
    try_launch("local settings", "settings.local.json: `hooks`");
    std::fs::remove_file(a.app.join(".claude/settings.local.json")).unwrap();
    std::fs::remove_dir(a.app.join(".mcp.json")).unwrap();
    agent_owned(&a.app.join(".mcp.json"), r#"{"mcpServers": {"x": {"command": "/bin/sh"}}}"#);
    try_launch("project MCP servers", ".mcp.json: `mcpServers`");
    std::fs::remove_file(a.app.join(".mcp.json")).unwrap();
    agent_owned(
        &a.home.join(".claude/settings.json"),
        r#"{"statusLine": {"type": "command", "command": "id"}}"#,
    );
    try_launch("user settings", &format!("{home}/.claude/settings.json: `statusLine`"));
    // Settings that run nothing are Claude Code's to read.
    agent_owned(
        &a.home.join(".claude/settings.json"),
        r#"{"model": "claude-sonnet-4-5", "permissions": {"allow": ["Bash"]}}"#,
    );
    let out = run_claude(&a, &claude, 2, &api);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let got = api.results();
    assert!(got.len() == 1 && !got[0].0 && got[0].1.starts_with("started"), "{got:?}");
}

#[test]
fn a_shell_claude_code_would_not_take_makes_launch_refuse_and_no_agent_starts() {
    if !as_root("a_shell_claude_code_would_not_take…") {
        return;
    }
    let Some((a, claude)) = setup("c4") else { return };
    let api = FakeApi::start(&json!([bash("echo started")]));
    let shell = a.inst.prefix.join("bin/rbash-tier1");
    let good = std::fs::read(&shell).unwrap();
    let try_launch = |what: &str, want: &str| {
        let out = run_claude(&a, &claude, 1, &api);
        assert_eq!(out.status.code(), Some(78), "{what}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(want), "{what}: {}", text(&out.stderr));
        assert_eq!(api.results(), vec![], "{what}: the agent started");
    };
    // Not executable by the agent's user: Claude Code would fall back to /bin/bash.
    std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    try_launch("mode 0700", "cannot execute the tier's shell");
    // Executable, but not a shell that answers --version.
    std::fs::write(&shell, "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    try_launch("--version fails", "--version` as user");
    std::fs::write(&shell, &good).unwrap();
    // A fault doctor finds (the tier's config writable by others) refuses too.
    let cfg = a.tier_config(1);
    std::fs::set_permissions(&cfg, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    try_launch("config writable", "writable by group or others");
    std::fs::set_permissions(&cfg, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    // The agent's user as root is refused.
    let out = Command::new(a.inst.tiershim())
        .args(["launch", "--tier", "1", "--user", "root", "--", "/bin/true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(78));
    assert!(text(&out.stderr).contains("the agent's user is root"), "{}", text(&out.stderr));
    // Fixed, the same launch starts the agent, with its shell.
    let out = run_claude(&a, &claude, 1, &api);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let got = api.results();
    assert!(got.len() == 1 && !got[0].0 && got[0].1.starts_with("started"), "{got:?}");
}
