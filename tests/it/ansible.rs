//! Debian's ansible-core behind the gate, really running playbooks against `localhost` with the
//! local connection, as an unprivileged agent (a user made for the test), from an operator's
//! playbook directory: a run at tier 3 does what the playbook says and spends the redeploy
//! budget of the playbook on that host; a second run is refused before ansible starts; a role,
//! an inventory or an `ansible.cfg` the agent could have written refuses the call; `--check` is
//! tier 3; `--syntax-check` runs at tier 1 and changes nothing. Over ssh, against the real
//! OpenSSH server of `tests/it/sshd.rs` on 127.0.0.1, a playbook changes a file on the remote
//! host through the real ssh the gate pins for ansible, in an ordinary install and in a
//! `--harden` one (from the descriptor the gate keeps open across exec).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::harden::Account;
use crate::harness::TestEnv;

struct Play {
    env: TestEnv,
    agent: Account,
    /// The operator's playbook directory (root's, 0755): site.yml, inventory, roles/.
    dir: PathBuf,
    /// Where the playbook writes its marker (the agent may write there).
    out: PathBuf,
    state: PathBuf,
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// None (and a skip) when not root or without ansible-playbook; under CI both fail.
fn play(extra: &str) -> Option<Play> {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    if !nix::unistd::getuid().is_root() {
        assert!(!ci, "the ansible tests must run as root under CI (they make the agent's user)");
        eprintln!("SKIPPED: not root");
        return None;
    }
    let real = Path::new("/usr/bin/ansible-playbook");
    if !real.is_file() {
        assert!(
            !ci,
            "ansible-playbook is not installed: scripts/test-deps.sh installs Debian's ansible-core"
        );
        eprintln!("SKIPPED: ansible-playbook is not installed; run scripts/test-deps.sh");
        return None;
    }
    let env = TestEnv::new(3, "");
    let agent = Account::create();
    // The local connection runs `mkdir` and `sh` on this machine: the operator pins a PATH that
    // has them after the tier directory (the tier directory alone holds no mkdir).
    let dir = env.path("play");
    let out = env.path("out");
    std::fs::create_dir_all(dir.join("roles/deploy/tasks")).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    chmod(&out, 0o777);
    std::fs::write(dir.join("site.yml"), "- hosts: all\n  gather_facts: false\n  roles: [deploy]\n").unwrap();
    std::fs::write(
        dir.join("roles/deploy/tasks/main.yml"),
        format!(
            "- name: deploy\n  ansible.builtin.copy:\n    content: \"deployed {{{{ version | default('1') }}}}\\n\"\n    dest: {}/marker\n",
            out.display()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("inventory"),
        "localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n",
    )
    .unwrap();
    for d in [
        dir.clone(),
        dir.join("roles"),
        dir.join("roles/deploy"),
        dir.join("roles/deploy/tasks"),
    ] {
        chmod(&d, 0o755);
    }
    let state_dir = env.path("state");
    std::fs::create_dir(&state_dir).unwrap();
    chmod(&state_dir, 0o1777);
    let state = state_dir.join("cooldown.json");
    // The agent appends to the audit log (an unhardened install).
    std::fs::write(&env.audit, "").unwrap();
    chmod(&env.audit, 0o666);
    env.write_config(&format!(
        "tier: 3\nreal_dirs: [{}]\nreal: {{ansible-playbook: {}}}\naudit_log: {}\ncooldown_state: {}\n\
         workspaces: [{}]\nenv:\n  ANSIBLE_REMOTE_TEMP: /tmp/tiershim-ansible-{}\n  PATH: {}:/usr/bin:/bin\n{extra}",
        env.real.display(),
        real.display(),
        env.audit.display(),
        state.display(),
        out.display(),
        agent.uid,
        env.dir.display(),
    ));
    Some(Play {
        env,
        agent,
        dir,
        out,
        state,
    })
}

impl Play {
    /// ansible-playbook through the gate, as the agent, in the playbook directory.
    fn run(&self, args: &[&str], tier: &str) -> Output {
        self.run_in(&self.dir, args, tier)
    }

    fn run_in(&self, cwd: &Path, args: &[&str], tier: &str) -> Output {
        let link = self.env.dir.join("ansible-playbook");
        let mut argv = vec![link.to_str().unwrap()];
        argv.extend_from_slice(args);
        self.agent
            .run_in(cwd, &argv, &[("CLAUDEOPS_TIER", tier), ("PATH", self.env.dir.to_str().unwrap())])
    }

    fn marker(&self) -> Option<String> {
        std::fs::read_to_string(self.out.join("marker")).ok()
    }

    fn rule(&self) -> String {
        self.env.last_audit()["rule"].as_str().unwrap_or_default().to_string()
    }
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn a_run_at_tier_3_does_what_the_playbook_says_and_spends_the_redeploy_budget() {
    let Some(p) = play("") else { return };
    let o = p.run(&["-i", "inventory", "-l", "localhost", "site.yml", "-e", "version=2"], "2");
    assert_eq!(o.status.code(), Some(77), "{}", text(&o));
    assert_eq!(p.rule(), "ansible-playbook.run");
    assert_eq!(p.marker(), None, "a refused run ran");
    let o = p.run(&["-i", "inventory", "-l", "localhost", "site.yml", "-e", "version=2"], "3");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("changed=1"), "{}", text(&o));
    assert_eq!(p.marker().as_deref(), Some("deployed 2\n"));
    let state = std::fs::read_to_string(&p.state).unwrap();
    assert!(state.contains("localhost:playbook/site.yml"), "{state}");
    // One redeployment of a playbook on a host in 24 hours: the next run never starts.
    std::fs::remove_file(p.out.join("marker")).unwrap();
    let o = p.run(&["--limit=localhost", "-i", "inventory", "site.yml"], "3");
    assert_eq!(o.status.code(), Some(77), "{}", text(&o));
    assert_eq!(p.rule(), "ansible-playbook.cooldown");
    assert_eq!(p.marker(), None, "a run past its budget ran");
}

#[test]
fn check_mode_is_tier_3_and_a_syntax_check_is_tier_1() {
    let Some(p) = play("") else { return };
    let o = p.run(&["--check", "-i", "inventory", "-l", "localhost", "site.yml"], "2");
    assert_eq!(o.status.code(), Some(77), "{}", text(&o));
    assert_eq!(p.rule(), "ansible-playbook.check");
    assert!(text(&o).contains("not read-only"), "{}", text(&o));
    let o = p.run(&["--syntax-check", "-i", "inventory", "site.yml"], "1");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("playbook: site.yml"), "{}", text(&o));
    let o = p.run(&["--list-tasks", "-i", "inventory", "site.yml"], "1");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("deploy : deploy"), "{}", text(&o));
    assert_eq!(p.marker(), None);
}

#[test]
fn a_role_an_inventory_or_an_ansible_cfg_the_agent_could_write_refuses_the_run() {
    let Some(p) = play("") else { return };
    let uid = nix::unistd::Uid::from_raw(p.agent.uid);
    let run = |p: &Play| p.run(&["-i", "inventory", "-l", "localhost", "site.yml"], "3");
    // A role task file the agent owns.
    let task = p.dir.join("roles/deploy/tasks/main.yml");
    nix::unistd::chown(&task, Some(uid), None).unwrap();
    let o = run(&p);
    assert_eq!(o.status.code(), Some(77), "{}", text(&o));
    assert_eq!(p.rule(), "ansible-playbook.agent-file");
    let reasons = p.env.last_audit()["reasons"].to_string();
    assert!(
        reasons.contains("main.yml") && reasons.contains(&format!("uid {}", p.agent.uid)),
        "{reasons}"
    );
    nix::unistd::chown(&task, Some(nix::unistd::Uid::from_raw(0)), None).unwrap();
    // An inventory elsewhere, in a directory the agent can write.
    let inv_dir = p.env.path("agentinv");
    std::fs::create_dir(&inv_dir).unwrap();
    std::fs::copy(p.dir.join("inventory"), inv_dir.join("hosts")).unwrap();
    nix::unistd::chown(&inv_dir, Some(uid), None).unwrap();
    let o = p.run(&["-i", inv_dir.join("hosts").to_str().unwrap(), "-l", "localhost", "site.yml"], "3");
    assert_eq!(o.status.code(), Some(77), "{}", text(&o));
    assert_eq!(p.rule(), "ansible-playbook.agent-file");
    // An ansible.cfg in a working directory the agent can write (or one it could put there).
    let cwd = p.env.path("agentcwd");
    std::fs::create_dir(&cwd).unwrap();
    nix::unistd::chown(&cwd, Some(uid), None).unwrap();
    let book = p.dir.join("site.yml");
    let inv = p.dir.join("inventory");
    let o = p.run_in(&cwd, &["-i", inv.to_str().unwrap(), "-l", "localhost", book.to_str().unwrap()], "3");
    assert_eq!(o.status.code(), Some(77), "{}", text(&o));
    assert_eq!(p.rule(), "ansible-playbook.agent-file");
    assert!(text(&o).contains("ansible.cfg"), "{}", text(&o));
    assert_eq!(p.marker(), None, "a refused run ran");
    // The operator's files, untouched, still run.
    let o = run(&p);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(p.marker().is_some());
}

#[test]
fn hosts_not_listed_and_runs_without_a_limit_are_refused_where_hosts_are_listed() {
    let Some(p) = play("hosts: [localhost]\n") else { return };
    let o = p.run(&["-i", "inventory", "site.yml"], "3");
    assert_eq!(o.status.code(), Some(77), "{}", text(&o));
    assert_eq!(p.rule(), "ansible-playbook.host");
    let o = p.run(&["-i", "inventory", "-l", "db01", "site.yml"], "3");
    assert_eq!(o.status.code(), Some(77), "{}", text(&o));
    assert_eq!(p.rule(), "ansible-playbook.host");
    assert_eq!(p.marker(), None);
    let o = p.run(&["-i", "inventory", "-l", "localhost", "site.yml"], "3");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(p.marker().is_some());
}

#[test]
fn ansible_gets_no_caller_variable_that_changes_what_it_runs() {
    // A stub stands in for ansible-playbook and records its environment.
    let env = TestEnv::new(3, "");
    let r = env.run(
        "ansible-playbook",
        &["--version"],
        &[
            ("CLAUDEOPS_TIER", "1"),
            ("ANSIBLE_CONFIG", "/tmp/evil.cfg"),
            ("ANSIBLE_LIBRARY", "/tmp/lib"),
            ("ANSIBLE_CALLBACK_PLUGINS", "/tmp/cb"),
            ("PYTHONPATH", "/tmp/py"),
            ("ANSIBLE_NOCOLOR", "1"),
        ],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let got = env.received_env("ansible-playbook").unwrap();
    for v in ["ANSIBLE_CONFIG", "ANSIBLE_LIBRARY", "ANSIBLE_CALLBACK_PLUGINS", "PYTHONPATH"] {
        assert!(!got.contains_key(v), "{v} reached ansible-playbook");
    }
    assert_eq!(got.get("ANSIBLE_NOCOLOR").map(String::as_str), Some("1"));
    assert_eq!(got.get("ANSIBLE_LOCAL_TEMP").map(String::as_str), Some("/tmp"));
}

/// The operator's playbook and inventory for the "remote" host of `h` (its sshd on 127.0.0.1):
/// one task that copies a file into the remote user's home, which ansible sends over its ssh
/// connection. Returns the playbook directory (root's, 0755) and the file the task writes. The
/// inventory asks for no terminal: the test's sshd runs as an unprivileged user, which cannot
/// hand one out (`chown(/dev/pts/N)` fails), and ansible asks for one (`-tt`) to run a module.
fn remote_play(h: &crate::sshd::Host) -> (PathBuf, PathBuf) {
    let dir = h.path("play");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o755);
    let deployed = h.remote.home.join("deployed");
    std::fs::write(
        dir.join("site.yml"),
        format!(
            "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: deploy\n      ansible.builtin.copy:\n        content: \"deployed over ssh\\n\"\n        dest: {}\n",
            deployed.display()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("inventory"),
        format!(
            "127.0.0.1 ansible_port={} ansible_user={} ansible_python_interpreter=/usr/bin/python3 ansible_ssh_use_tty=false\n",
            h.port, h.remote.name
        ),
    )
    .unwrap();
    (dir, deployed)
}

/// `ansible-playbook -i inventory --limit 127.0.0.1 site.yml` as the agent, through the tier
/// directory `tier_dir`, from the playbook directory.
fn run_remote_play(h: &crate::sshd::Host, tier_dir: &Path, dir: &Path, extra: &[&str]) -> Output {
    let link = tier_dir.join("ansible-playbook");
    let path = tier_dir.display().to_string();
    let mut argv = vec![link.to_str().unwrap(), "-i", "inventory", "--limit", "127.0.0.1", "site.yml"];
    argv.extend_from_slice(extra);
    h.agent
        .cmd(&argv, &[("PATH", &path), ("CLAUDEOPS_TIER", "3")])
        .current_dir(dir)
        .output()
        .unwrap()
}

/// The agent's own `ssh <host> <cmd>` through the same tier directory: still judged.
fn agent_ssh(h: &crate::sshd::Host, tier_dir: &Path, command: &str) -> Output {
    let link = tier_dir.join("ssh");
    let path = tier_dir.display().to_string();
    let port = h.port.to_string();
    h.agent
        .cmd(
            &[link.to_str().unwrap(), "-p", &port, &h.dest(), command],
            &[("PATH", &path), ("CLAUDEOPS_TIER", "3")],
        )
        .output()
        .unwrap()
}

/// The ControlPersist master ansible's ssh left behind, in the agent's temporary directory:
/// asked to exit (so the agent's user can be removed).
fn stop_master(h: &crate::sshd::Host) -> usize {
    let cp = h.agent.home.join(".claude/tmp/ansible-cp");
    let sockets: Vec<PathBuf> = std::fs::read_dir(&cp)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    for s in &sockets {
        let opt = format!("ControlPath={}", s.display());
        let _ = h
            .agent
            .cmd(
                &["/usr/bin/ssh", "-F", "/etc/ssh/ssh_config", "-o", &opt, "-O", "exit", "127.0.0.1"],
                &[],
            )
            .output();
    }
    sockets.len()
}

fn ssh_ready(test: &str) -> bool {
    if !crate::sshd::can_run(test) {
        return false;
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    if !Path::new("/usr/bin/ansible-playbook").is_file() {
        assert!(
            !ci,
            "ansible-playbook is not installed: scripts/test-deps.sh installs Debian's ansible-core"
        );
        eprintln!("SKIPPED {test}: ansible-playbook is not installed; run scripts/test-deps.sh");
        return false;
    }
    true
}

#[test]
fn a_playbook_over_ssh_reaches_the_remote_host_through_the_real_ssh_the_gate_pins() {
    if !ssh_ready("a_playbook_over_ssh_reaches_…") {
        return;
    }
    let h = crate::sshd::Host::start();
    let (dir, deployed) = remote_play(&h);
    let state_dir = h.path("state");
    std::fs::create_dir(&state_dir).unwrap();
    chmod(&state_dir, 0o1777);
    let state = state_dir.join("cooldown.json");
    // The operator pins nothing for ansible's ssh: the gate does.
    h.env.write_config(&format!(
        "tier: 3\nreal: {{ssh: /usr/bin/ssh, ansible-playbook: /usr/bin/ansible-playbook}}\nreal_dirs: [{}]\n\
         audit_log: {}\nhosts: [127.0.0.1]\ncooldown_state: {}\n",
        h.env.real.display(),
        h.env.audit.display(),
        state.display()
    ));
    let sessions = h.sessions();
    let records = h.env.audit_records().len();
    let o = run_remote_play(&h, &h.env.dir, &dir, &[]);
    let masters = stop_master(&h);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("changed=1"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&deployed).unwrap(), "deployed over ssh\n");
    assert_eq!(
        std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&deployed).unwrap()),
        h.remote.uid
    );
    assert!(h.sessions() > sessions, "the remote host saw no session");
    assert_eq!(masters, 1, "ansible's ControlPersist master in the agent's temporary directory");
    // One record: ansible ran nothing through the tier directory (no `ssh` from PATH).
    let all = h.env.audit_records();
    assert_eq!(all.len(), records + 1, "{all:?}");
    let r = h.env.last_audit();
    assert_eq!(r["rule"], "ansible-playbook.run", "{r}");
    assert!(r["env_resets"].to_string().contains("ANSIBLE_SSH_EXECUTABLE"), "{r}");
    assert!(std::fs::read_to_string(&state).unwrap().contains("127.0.0.1:playbook/site.yml"));
    // The agent's own ssh through the tier is judged as before.
    let o = agent_ssh(&h, &h.env.dir, "docker ps");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = agent_ssh(&h, &h.env.dir, "rm -f deployed");
    assert_eq!(o.status.code(), Some(77), "{}", text(&o));
    assert!(deployed.exists());
}

#[test]
fn in_a_hardened_install_a_playbook_over_ssh_runs_the_real_ssh_from_the_gates_descriptor() {
    if !ssh_ready("in_a_hardened_install_a_playbook_over_ssh_…") {
        return;
    }
    let h = crate::sshd::Host::start();
    let (dir, deployed) = remote_play(&h);
    // The group --harden uses (the account's user is not the agent: the agent is the sshd
    // test's, whose key the server accepts).
    let acct = Account::create();
    let state_root = h.path("state");
    std::fs::create_dir(&state_root).unwrap();
    chmod(&state_root, 0o755);
    let state = state_root.join("cooldown/cooldown.json");
    let state_arg = state.display().to_string();
    // Copies of the system's ssh and ansible-playbook as the real tools (--harden takes
    // "others" access off the originals it copies).
    let inst = crate::installed::Installed::new_with(
        &[
            "--harden",
            "--group",
            &acct.group,
            "--host",
            "127.0.0.1",
            "--cooldown-state",
            &state_arg,
            "--tiers",
            "3",
        ],
        |real, _| {
            std::fs::copy("/usr/bin/ssh", real.join("ssh")).unwrap();
            std::fs::copy("/usr/bin/ansible-playbook", real.join("ansible-playbook")).unwrap();
        },
    );
    let tier3 = inst.tier_dir(3);
    let real_ssh = inst.prefix.join("lib/tiershim/real/ssh");
    // The agent cannot run the real ssh itself (through `env`: setpriv looks the program up
    // while it still holds root's capabilities).
    let o = h
        .agent
        .cmd(&["/usr/bin/env", real_ssh.to_str().unwrap(), "-V"], &[])
        .output()
        .unwrap();
    assert!(text(&o).contains("Permission denied"), "{}", text(&o));

    let sessions = h.sessions();
    // -vvv: ansible prints each ssh command it runs.
    let o = run_remote_play(&h, &tier3, &dir, &["-vvv"]);
    let masters = stop_master(&h);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("changed=1"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&deployed).unwrap(), "deployed over ssh\n");
    assert!(h.sessions() > sessions, "the remote host saw no session");
    assert_eq!(masters, 1, "ansible's ControlPersist master in the agent's temporary directory");
    let records = inst.audit_records();
    assert_eq!(records.len(), 1, "{records:?}");
    let r = &records[0];
    assert_eq!(r["rule"], "ansible-playbook.run", "{r}");
    assert_eq!(r["verdict"], "allow", "{r}");
    assert!(r["env_resets"].to_string().contains("ANSIBLE_SSH_EXECUTABLE"), "{r}");
    // ansible ran the real ssh from the descriptor the gate (whose pid ansible kept) left open.
    let via = format!("SSH: EXEC /proc/{}/fd/100 -F /etc/ssh/ssh_config ", r["pid"]);
    assert!(text(&o).contains(&via), "{via} in {}", text(&o));
    assert!(std::fs::read_to_string(&state).unwrap().contains("127.0.0.1:playbook/site.yml"));
    // The budget is spent: the next run is refused before ansible starts.
    std::fs::remove_file(&deployed).unwrap();
    let o = run_remote_play(&h, &tier3, &dir, &[]);
    assert_eq!(o.status.code(), Some(77), "{}", text(&o));
    assert_eq!(inst.audit_records().last().unwrap()["rule"], "ansible-playbook.cooldown");
    assert!(!deployed.exists());
    // The agent's own ssh through the tier is judged as before, and runs the real ssh.
    let o = agent_ssh(&h, &tier3, "docker ps");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = agent_ssh(&h, &tier3, "rm -f deployed");
    assert_eq!(o.status.code(), Some(77), "{}", text(&o));
    assert_eq!(inst.audit_records().last().unwrap()["rule"], "ssh.unclassified");
}

/// Extra variables that name an `ansible_` setting only once ansible has decoded them: the
/// JSON form with `\u` escapes and the `name=value` form with `\x` escapes. Run by the real
/// ansible-playbook without the gate (the control), they switch the connection to ssh with a
/// `ProxyCommand` that runs a program on this machine; through the gate they are refused
/// before ansible starts.
#[test]
fn extra_variables_that_ansible_decodes_into_a_proxy_command_are_refused_before_it_runs() {
    let Some(p) = play("") else { return };
    let home = p.env.path("agent-home");
    p.agent.set_home(&home);
    let forms = |marker: &Path| {
        let m = marker.display().to_string();
        [
            format!(r#"{{"ans\u0069ble_connection": "ssh", "ans\u0069ble_ssh_common_args": "-oProxyCommand=\"touch {m}\""}}"#),
            format!(r"ans\x69ble_connection=ssh ans\x69ble_ssh_common_args=-oProxyCommand=\x22touch\x20{m}\x22"),
        ]
    };
    for (i, _) in forms(Path::new("")).iter().enumerate() {
        let marker = p.out.join(format!("proxy-{i}"));
        let extra = forms(&marker)[i].clone();
        let args = ["-i", "inventory", "-l", "localhost", "site.yml", "-e", extra.as_str()];
        let r = p.run(&args, "3");
        assert_eq!(r.status.code(), Some(77), "form {i}: {}", text(&r));
        assert_eq!(p.rule(), "ansible-playbook.extra-vars", "form {i}");
        assert!(!marker.exists(), "form {i}: the ProxyCommand ran through the gate");
        // The control: the real ansible-playbook, without the gate, runs the ProxyCommand.
        let mut direct = vec!["/usr/bin/ansible-playbook"];
        direct.extend_from_slice(&args);
        let r = p
            .agent
            .run_in(&p.dir, &direct, &[("PATH", "/usr/bin:/bin"), ("HOME", home.to_str().unwrap())]);
        assert!(
            marker.exists(),
            "form {i}: ansible did not decode it as the test expects: {}",
            text(&r)
        );
    }
}

/// An operator's playbook on `localhost` (local connection) for the agent of `a`: one task that
/// writes `deployed` into the agent's work tree (a workspace, which tier 3 may write). Returns
/// the playbook directory (root's, 0755, outside every workspace) and the file the task writes.
fn local_play(a: &crate::agent::AgentInstall) -> (PathBuf, PathBuf) {
    let dir = a.world.path().join("play");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o755);
    let deployed = a.app.join("deployed");
    std::fs::write(
        dir.join("site.yml"),
        format!(
            "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: deploy\n      ansible.builtin.copy:\n        content: \"deployed\\n\"\n        dest: {}\n",
            deployed.display()
        ),
    )
    .unwrap();
    // Where the local connection makes its "remote" temporary directories: the operator's
    // choice (the tool home is not the agent's), here the agent's own temporary directory.
    std::fs::write(
        dir.join("inventory"),
        format!(
            "localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3 ansible_remote_tmp={}\n",
            a.home.join(".claude/tmp/ansible-remote").display()
        ),
    )
    .unwrap();
    (dir, deployed)
}

/// Through `tiershim launch` and the tier-3 shell of a hardened install, as the agent: with the
/// kernel fence on, ansible's temporary directories are the agent's own (its Landlock domain does
/// not let it write /tmp) and its worker queue's semaphore lives in /dev/shm, which tier 3 may
/// write; with the fence off, the policy's /tmp.
#[test]
fn inside_the_tier_3_kernel_fence_a_playbook_on_localhost_runs_and_so_it_does_without_it() {
    if !crate::agent::as_root("inside_the_tier_3_kernel_fence_a_playbook…") {
        return;
    }
    if !Path::new("/usr/bin/ansible-playbook").is_file() {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "ansible-playbook is not installed: scripts/test-deps.sh installs Debian's ansible-core"
        );
        eprintln!("SKIPPED: ansible-playbook is not installed; run scripts/test-deps.sh");
        return;
    }
    for fence in ["on", "off"] {
        let a = crate::agent::AgentInstall::new_with(&format!("a{fence}"), &["--kernel-fence", fence], |real| {
            std::fs::copy("/usr/bin/ansible-playbook", real.join("ansible-playbook")).unwrap();
        });
        let (dir, deployed) = local_play(&a);
        // The local connection runs `sh` and `mkdir` from PATH: the operator pins one that has
        // them after the tier directory.
        let tier3 = a.inst.tier_dir(3);
        let cfg = a.tier_config(3);
        let mut text_cfg = std::fs::read_to_string(&cfg).unwrap();
        let path = format!("  PATH: {}:/usr/bin:/bin\n", tier3.display());
        // Under the `env:` install.sh wrote (--harden pins GIT_EXEC_PATH), or a new one.
        match text_cfg.find("\nenv:\n") {
            Some(i) => text_cfg.insert_str(i + "\nenv:\n".len(), &path),
            None => text_cfg.push_str(&format!("env:\n{path}")),
        }
        std::fs::write(&cfg, text_cfg).unwrap();
        let shell = a.inst.prefix.join("bin/rbash-tier3");
        let out = a
            .launch_cmd(
                3,
                &dir,
                &[],
                &[shell.to_str().unwrap(), "-c", "ansible-playbook -i inventory -l localhost site.yml"],
            )
            .output()
            .unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "fence {fence}: {said}");
        assert!(said.contains("changed=1"), "fence {fence}: {said}");
        assert_eq!(std::fs::read_to_string(&deployed).unwrap(), "deployed\n", "fence {fence}");
        let rec = a.inst.audit_records().pop().unwrap();
        assert_eq!(rec["rule"], "ansible-playbook.run", "{rec}");
        // The record says what the gate set: under the fence, ansible's local temporary
        // directory and TMPDIR are the agent's; without it, the policy's /tmp and no TMPDIR (the
        // launch sets none without the fence).
        let resets = rec["env_resets"].as_array().unwrap();
        let action = |var: &str| {
            resets
                .iter()
                .find(|r| r["var"] == var)
                .and_then(|r| r["action"].as_str())
                .map(str::to_string)
        };
        assert_eq!(action("ANSIBLE_LOCAL_TEMP").as_deref(), Some("set"), "{rec}");
        let tmpdir = (fence == "on").then_some("set");
        assert_eq!(action("TMPDIR").as_deref(), tmpdir, "fence {fence}: {rec}");
    }
}
