//! The restricted shell (`tiershim shell`, real rbash) of a real installation: every escape
//! attempt in tests/cases/escapes.yaml fails to reach a real tool, the environment is the
//! allow-list, the profile's variables are read-only, and bad installs are refused.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use serde::Deserialize;

use crate::installed::{Installed, Ran, repo};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Escape {
    why: String,
    cmd: String,
    #[serde(default)]
    control: bool,
}

fn escapes() -> Vec<Escape> {
    let text = std::fs::read_to_string(repo().join("tests/cases/escapes.yaml")).unwrap();
    serde_yaml_ng::from_str(&text).unwrap()
}

fn on_system_path(program: &str) -> bool {
    ["/usr/bin", "/bin"].iter().any(|d| std::path::Path::new(d).join(program).is_file())
}

/// The program an escape command starts with (for the control: is it installed?).
fn first_program(cmd: &str) -> &str {
    cmd.split_whitespace().next().unwrap_or("")
}

#[test]
fn no_escape_attempt_reaches_a_real_tool_from_the_restricted_shell() {
    let inst = Installed::new(&[]);
    let real = inst.real.display().to_string();
    let prefix = inst.prefix.display().to_string();
    let mut controls = 0;
    for e in escapes() {
        let cmd = e.cmd.replace("{REAL}", &real).replace("{PREFIX}", &prefix);
        inst.forget_runs();
        let r = inst.shell(1, &cmd);
        assert_eq!(
            inst.ungated_runs(),
            vec![],
            "{}: `{cmd}` reached a real tool\n{}",
            e.why,
            r.stderr()
        );
        assert!(
            !inst.runs().iter().any(|(_, tool, _)| tool == "docker"),
            "{}: `{cmd}` ran docker: {}",
            e.why,
            r.stderr()
        );

        // The same attempt in a plain bash does get out, so the attempt is a real one.
        let program = first_program(&cmd);
        let installed = matches!(
            program,
            "cd" | "export" | "read" | "printf" | "declare" | "exec" | "hash" | "eval" | "echo" | "trap" | "coproc" | "." | "command"
        ) || program.starts_with("PATH=")
            || program.starts_with("BASH_CMDS")
            || on_system_path(program);
        if e.control && installed {
            inst.forget_runs();
            let out = Command::new("/bin/bash")
                .args(["--norc", "--noprofile", "-c", &cmd])
                .env_clear()
                .env("PATH", format!("{}:/usr/bin:/bin", inst.tier_dir(1).display()))
                .env("CLAUDEOPS_TIER", "1")
                .env("HOME", inst.tmp.path())
                .current_dir(inst.tmp.path())
                .output()
                .unwrap();
            assert!(
                inst.ungated_runs().iter().any(|(_, tool, _)| tool == "docker"),
                "{}: `{cmd}` does not reach the real tool even without rbash, so it proves nothing: {}",
                e.why,
                String::from_utf8_lossy(&out.stderr)
            );
            controls += 1;
        }
    }
    assert!(controls >= 25, "only {controls} attempts were shown to work without rbash");

    // And the gate itself still works from the same shell: a read runs the real tool, once.
    inst.forget_runs();
    let r = inst.shell(1, "docker ps");
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.stdout(), "stub docker ran\n");
    let runs = inst.runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!((runs[0].1.as_str(), runs[0].2.as_str()), ("docker", "ps"));
    assert_eq!(inst.ungated_runs(), vec![]);
}

#[test]
fn output_redirections_are_refused_and_create_no_file() {
    let inst = Installed::new(&[]);
    let target = inst.tmp.path().join("copy");
    let t = target.display().to_string();
    let real = inst.real.display();
    for cmd in [
        format!("cat {real}/docker > {t}"),
        format!("cat {real}/docker >> {t}"),
        format!("cat {real}/docker >| {t}"),
        format!("cat {real}/docker &> {t}"),
        format!("cat {real}/docker 1<> {t}"),
        format!("exec 3> {t}"),
        format!("echo x 2> {t}"),
    ] {
        let r = inst.shell(1, &cmd);
        assert_ne!(r.code(), 0, "{cmd}");
        assert!(r.stderr().contains("restricted: cannot redirect output"), "{cmd}: {}", r.stderr());
        assert!(!target.exists(), "{cmd} created {t}");
    }
    // Duplicating a descriptor is not a file write, and input redirection stays allowed.
    let r = inst.shell(1, "cat < /etc/hostname 2>&1 >&2");
    assert_eq!(r.code(), 0, "{}", r.stderr());
}

#[test]
fn loader_variables_cannot_be_set_for_passthrough_tools() {
    let inst = Installed::new(&[]);
    for var in ["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH", "MALLOC_TRACE"] {
        let r = inst.shell(1, &format!("{var}=/nonexistent.so printenv {var}"));
        assert_eq!(r.stdout(), "", "{var}: {}", r.stderr());
        assert!(r.stderr().contains(&format!("{var}: readonly variable")), "{var}: {}", r.stderr());
        let r = inst.shell(1, &format!("export {var}=/nonexistent.so; printenv {var}"));
        assert_eq!(r.stdout(), "", "{var}: {}", r.stderr());
    }
    // Without the profile's read-only variables, the same line would load the library.
    let out = Command::new("/bin/bash")
        .args(["--norc", "-c", "LD_PRELOAD=/nonexistent.so printenv LD_PRELOAD"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "/nonexistent.so\n");
}

#[test]
fn a_dry_run_value_the_shell_cannot_pass_as_written_still_turns_the_dry_run_on() {
    let inst = Installed::new(&[]);
    // A value with a control character (a CRLF line in an env file) is not passed as written,
    // but never dropped: what the gate would read (anything but a clear false is on).
    for (value, want) in [("true\r", "1"), ("on\t", "1"), ("0\r", "0"), ("true", "true")] {
        let r = Ran {
            out: inst
                .shell_cmd(2, "printenv CLAUDEOPS_DRY_RUN; docker restart api")
                .env("CLAUDEOPS_DRY_RUN", value)
                .output()
                .unwrap(),
        };
        let dry = want != "0";
        assert!(r.stdout().starts_with(&format!("{want}\n")), "{value:?}: {}", r.stdout());
        assert_eq!(
            r.stderr().contains("DRY RUN: would run: docker restart api"),
            dry,
            "{value:?}: {}",
            r.stderr()
        );
        assert_eq!(
            inst.runs().iter().any(|(_, t, a)| t == "docker" && a == "restart api"),
            !dry,
            "{value:?}"
        );
        inst.forget_runs();
    }
}

#[test]
fn the_shell_starts_with_the_allow_listed_environment_only() {
    let inst = Installed::new(&[]);
    let out = inst
        .shell_cmd(2, "printenv")
        .env("LANG", "C.UTF-8")
        .env("TERM", "xterm")
        .env("FOO", "bar")
        .env("LD_PRELOAD", "/x.so")
        .env("BASH_ENV", "/tmp/evil")
        .env("ENV", "/tmp/evil")
        .env("SHELLOPTS", "xtrace")
        .env("BASH_FUNC_ls%%", "() { echo evil; }")
        .env("CLAUDEOPS_TIER", "3")
        .env("CLAUDEOPS_DRY_RUN", "1")
        .env("GH_TOKEN", "secret")
        .env("LC_ALL", "/tmp/evil-locale")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let env: Vec<(String, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect();
    let names: BTreeSet<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
    let want: BTreeSet<&str> = [
        "CLAUDEOPS_DRY_RUN",
        "CLAUDEOPS_TIER",
        "HOME",
        "LANG",
        "PATH",
        "PWD",
        "SHELL",
        "SHLVL",
        "TERM",
        "_",
    ]
    .into();
    assert_eq!(names, want, "{env:?}");
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap();
    assert_eq!(get("PATH"), inst.tier_dir(2).display().to_string());
    assert_eq!(get("CLAUDEOPS_TIER"), "2");
    assert!(get("SHELL").ends_with("/rbash"), "{}", get("SHELL"));
}

#[test]
fn path_tier_and_shell_are_read_only_and_no_startup_file_reaches_children() {
    let inst = Installed::new(&[]);
    for (cmd, err) in [
        ("PATH=/usr/bin", "PATH: readonly variable"),
        ("CLAUDEOPS_TIER=3", "CLAUDEOPS_TIER: readonly variable"),
        ("unset CLAUDEOPS_TIER", "cannot unset: readonly variable"),
        ("SHELL=/bin/bash", "SHELL: readonly variable"),
        ("BASH_ENV=/tmp/x", "BASH_ENV: readonly variable"),
        ("ENV=/tmp/x", "ENV: readonly variable"),
        ("history -w h", "history: command not found"),
        ("fc -l", "fc: command not found"),
        ("enable history", "enable: restricted"),
        ("set +r", "+r: invalid option"),
    ] {
        // In a subshell: a non-interactive bash exits on an assignment to a read-only variable.
        let r = inst.shell(1, &format!("({cmd}); echo \"$PATH $CLAUDEOPS_TIER\""));
        assert!(r.stderr().contains(err), "{cmd}: {}", r.stderr());
        assert_eq!(r.stdout(), format!("{} 1\n", inst.tier_dir(1).display()), "{cmd}");
    }
    let r = inst.shell(1, "printenv BASH_ENV; printenv ENV; echo $?");
    assert_eq!(r.stdout(), "1\n", "{}", r.stderr());
    assert!(!inst.tmp.path().join("h").exists());
}

#[test]
fn the_shell_exits_with_the_status_of_its_command_and_the_gate_refuses_as_usual() {
    let inst = Installed::new(&[]);
    assert_eq!(inst.shell(1, "exit 7").code(), 7);
    let r = inst.shell(1, "docker restart api");
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("requires tier 2 (this agent is tier 1)"), "{}", r.stderr());
    let r = inst.shell(2, "docker restart api");
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(inst.ungated_runs(), vec![]);
    assert_eq!(inst.runs().len(), 1);
}

#[test]
fn an_interactive_shell_reads_the_profile_and_its_commands_from_stdin() {
    use std::io::Write;
    let inst = Installed::new(&[]);
    let mut c = Command::new(inst.tiershim());
    c.args(["shell", "--tier", "1"])
        .env_clear()
        .env("HOME", inst.tmp.path())
        .current_dir(inst.tmp.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"echo \"tier=$CLAUDEOPS_TIER path=$PATH\"\nPATH=/bin\n/bin/ls\nexit 3\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("tier=1 path={}", inst.tier_dir(1).display())),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(stderr.contains("PATH: readonly variable"), "{stderr}");
    assert!(stderr.contains("restricted: cannot specify `/' in command names"), "{stderr}");
}

#[test]
fn the_wrapper_takes_a_harness_s_login_shell_arguments() {
    let inst = Installed::new(&["--tiers", "1,2"]);
    let out = Command::new(inst.prefix.join("bin/rbash-tier2"))
        .args(["-c", "-l", "echo $CLAUDEOPS_TIER; docker ps"])
        .env_clear()
        .env("HOME", inst.tmp.path())
        .current_dir(inst.tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2\nstub docker ran\n");
    assert!(!inst.prefix.join("bin/rbash-tier3").exists());
}

#[test]
fn keep_env_passes_a_named_variable_and_refuses_shell_and_loader_variables() {
    let inst = Installed::new(&[]);
    let out = Command::new(inst.tiershim())
        .args([
            "shell",
            "--tier",
            "1",
            "--keep-env",
            "GIT_AUTHOR_NAME",
            "-c",
            "printenv GIT_AUTHOR_NAME",
        ])
        .env_clear()
        .env("GIT_AUTHOR_NAME", "agent")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "agent\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for var in ["PATH", "LD_PRELOAD", "BASH_ENV", "CLAUDEOPS_TIER", "BASH_FUNC_x%%"] {
        let out = Command::new(inst.tiershim())
            .args(["shell", "--tier", "1", "--keep-env", var, "-c", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{var}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be kept"), "{var}");
    }
}

#[test]
fn a_broken_installation_is_refused_before_the_shell_starts() {
    let inst = Installed::new(&[]);
    let cfg = inst.tier_dir(1).join("tiershim.yaml");
    let profile = inst.tier_dir(1).join("profile");
    let check = |what: &str, want_code: i32, want: &str| {
        let r = inst.shell(1, "echo started");
        assert_eq!(r.code(), want_code, "{what}: {}", r.stderr());
        assert!(r.stderr().contains(want), "{what}: {}", r.stderr());
        assert_eq!(r.stdout(), "", "{what}");
    };

    let good = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, good.replace("tier: 1", "tier: 2")).unwrap();
    check("ceiling", 78, "`tier: 2` in the directory of tier 1");
    std::fs::write(&cfg, &good).unwrap();

    std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o666)).unwrap();
    check("config writable", 78, "writable by group or others");
    std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o644)).unwrap();

    std::fs::set_permissions(&profile, std::fs::Permissions::from_mode(0o646)).unwrap();
    check("profile writable", 78, "profile: writable by group or others");
    std::fs::set_permissions(&profile, std::fs::Permissions::from_mode(0o644)).unwrap();

    let moved = inst.tmp.path().join("profile.away");
    std::fs::rename(&profile, &moved).unwrap();
    check("profile missing", 78, "the tier's restricted profile is missing");
    std::fs::rename(&moved, &profile).unwrap();

    std::fs::rename(&cfg, inst.tmp.path().join("cfg.away")).unwrap();
    check("config missing", 78, "no tiershim.yaml in");

    let r = inst.shell(1, "echo started");
    assert_eq!(r.code(), 78);
    for (args, want) in [
        (vec!["shell", "--tier", "4", "-c", "true"], "4 is not in 1..=3"),
        (vec!["shell", "-c", "true"], "--tier <N>"),
        (vec!["shell", "--tier", "1", "echo"], "arguments need -c"),
        (vec!["shell", "--tier", "1", "-c"], "-c needs a command line"),
    ] {
        let out = Command::new(inst.tiershim()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(want),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = Command::new(inst.tiershim())
        .args(["shell", "--tier", "2", "--prefix", "/nonexistent", "-c", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(78));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tiershim.yaml in /nonexistent/lib/tiershim/tier2"));
}

/// Claude Code 2.1.330's wrapper around a Bash tool call, as recorded with a logging
/// `CLAUDE_CODE_SHELL` (with a shell snapshot; without one it drops the `source` piece and
/// passes `-l`).
fn claude_wrapped(quoted: &str, stdin_null: bool, cwd_file: &std::path::Path) -> String {
    format!(
        "source /nonexistent/.claude/shell-snapshots/snapshot-bash-1-x.sh 2>/dev/null || true && \\builtin shopt -u extglob 2>/dev/null || true && {{ \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; }} >/dev/null 2>&1 || true && {{ \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; }} >/dev/null 2>&1 || true && eval {quoted}{} && pwd -P >| {}",
        if stdin_null { " < /dev/null" } else { "" },
        cwd_file.display()
    )
}

#[test]
fn claude_code_s_wrapped_commands_get_plain_bash_s_output_and_status() {
    let inst = Installed::new(&[]);
    let cwd_file = inst.tmp.path().join("claude-6df2-cwd");
    for (command, want_out, want_code) in [
        ("echo hello; echo err >&2", "hello\nerr\n", 0),
        ("docker ps", "stub docker ran\n", 0),
        ("false", "", 1),
        ("exit 3", "", 3),
        ("printf '%s\\n' a\"b\"c it\\'s", "abc\nit's\n", 0),
        ("cat <<'X'\nheredoc $HOME line\nX", "heredoc $HOME line\n", 0),
        ("docker ps 2>&1 | head -1", "stub docker ran\n", 0),
    ] {
        for login in [false, true] {
            let _ = std::fs::remove_file(&cwd_file);
            let stdin_null = !command.contains('\n');
            let text = claude_wrapped(&tiershim::claude::quote(command), stdin_null, &cwd_file);
            let mut c = Command::new(inst.prefix.join("bin/rbash-tier1"));
            if login {
                c.args(["-c", "-l", &text]);
            } else {
                c.args(["-c", &text]);
            }
            let out = c
                .env_clear()
                .env("HOME", inst.tmp.path())
                .current_dir(inst.tmp.path())
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            let merged = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert_eq!((merged.as_str(), out.status.code()), (want_out, Some(want_code)), "{command:?}");
            // What `pwd -P >|` would have written: the directory the command ran in.
            let written = std::fs::read_to_string(&cwd_file).unwrap();
            assert_eq!(
                written,
                format!("{}\n", inst.tmp.path().canonicalize().unwrap().display()),
                "{command:?}"
            );
        }
    }
    // The command itself still runs under every rbash restriction.
    for (command, want) in [
        ("echo x > pwned", "restricted: cannot redirect output"),
        ("/usr/bin/id", "restricted: cannot specify `/' in command names"),
        ("cd /", "cd: restricted"),
        ("PATH=/usr/bin", "PATH: readonly variable"),
        ("exec id", "exec: restricted"),
        (". /etc/profile", "restricted"),
    ] {
        let text = claude_wrapped(&tiershim::claude::quote(command), true, &cwd_file);
        let r = inst.shell(1, &text);
        assert_ne!(r.code(), 0, "{command}");
        assert!(r.stderr().contains(want), "{command}: {}", r.stderr());
    }
    assert!(!inst.tmp.path().join("pwned").exists());
    assert_eq!(inst.ungated_runs(), vec![]);
}

#[test]
fn a_command_that_imitates_claude_code_s_wrapper_is_refused_by_rbash() {
    let inst = Installed::new(&[]);
    let file = inst.tmp.path().join("claude-1234-cwd");
    for text in [
        format!("echo x && pwd -P >| {}", file.display()),
        format!("eval 'echo x' < /dev/null && pwd -P >| {}", file.display()),
        format!("cat <<X\npwd -P >| {}\nX\npwd -P >| {}", file.display(), file.display()),
        format!(
            "\\builtin shopt -u extglob 2>/dev/null || true && eval $X && pwd -P >| {}",
            file.display()
        ),
    ] {
        let r = inst.shell(1, &text);
        assert_ne!(r.code(), 0, "{text}");
        assert!(r.stderr().contains("restricted: cannot redirect output"), "{text}: {}", r.stderr());
        assert!(!file.exists(), "{text}");
    }
    // A wrapper whose cwd file is not Claude Code's is not unwrapped either.
    let home = inst.tmp.path().join(".bashrc");
    let text = claude_wrapped("'echo x'", true, &home);
    let r = inst.shell(1, &text);
    assert!(r.stderr().contains("restricted: cannot redirect output"), "{}", r.stderr());
    assert!(!home.exists());
}

#[test]
fn the_start_up_probes_get_an_answer_and_the_snapshot_script_runs_nothing() {
    let inst = Installed::new(&["--tiers", "1"]);
    let wrapper = inst.prefix.join("bin/rbash-tier1");
    let out = Command::new(&wrapper)
        .args(["-c", "env"])
        .env_clear()
        .env("HOME", inst.tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let env = String::from_utf8_lossy(&out.stdout);
    assert!(env.lines().any(|l| l == format!("PATH={}", inst.tier_dir(1).display())), "{env}");
    let snapshot = inst.tmp.path().join("snapshot-bash-1-x.sh");
    let text = format!(
        "SNAPSHOT_FILE={}\n      source \"$HOME/.bashrc\" < /dev/null\n      echo \"# Snapshot file\" >| \"$SNAPSHOT_FILE\"\n",
        snapshot.display()
    );
    let out = Command::new(&wrapper).args(["-c", "-l", &text]).env_clear().output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("makes no shell snapshot"));
    assert!(!snapshot.exists());
    // Claude Code accepts a shell whose `--version` exits 0.
    let out = Command::new(&wrapper).arg("--version").env_clear().output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("GNU bash, version "));
}
