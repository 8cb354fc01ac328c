//! The fence on the remote side of ssh against a real OpenSSH server: an `sshd` on 127.0.0.1 run
//! by the test as an unprivileged "remote" user with its own host key, and the agent another
//! unprivileged user whose key that server accepts, calling the gate's `ssh` link with the real
//! ssh behind it. Each case replays an attack on the remote host and shows it stopped at its
//! first step, or shows what the gate read over the connection before it allowed a call.
//!
//! Needs root (it makes two users) and Debian's openssh-server (`scripts/test-deps.sh`). Skipped
//! with a message otherwise, except under CI, where it must run.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::harness::TestEnv;
use crate::http_server::HttpServer;

static NEXT: AtomicUsize = AtomicUsize::new(0);

const SSHD: &str = "/usr/sbin/sshd";

/// Whether this machine can run these tests; under CI it must.
pub(crate) fn can_run(test: &str) -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let why = if !nix::unistd::getuid().is_root() {
        Some("not root (the test makes two users)")
    } else if !Path::new(SSHD).is_file() {
        Some("no /usr/sbin/sshd (Debian's openssh-server; scripts/test-deps.sh installs it)")
    } else {
        None
    };
    match why {
        None => true,
        Some(w) if ci => panic!("{test} must run under CI: {w}"),
        Some(w) => {
            eprintln!("SKIPPED {test}: {w}");
            false
        }
    }
}

fn must(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// A user made for one test, with a home directory of its own; removed on drop.
pub(crate) struct User {
    pub(crate) name: String,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) home: PathBuf,
}

impl User {
    fn create(role: &str, home: PathBuf) -> User {
        let name = format!("ts{}{}{}", std::process::id(), role, NEXT.fetch_add(1, Ordering::SeqCst));
        must(
            Command::new("useradd")
                .args(["--system", "--user-group", "--shell", "/bin/sh", "--home-dir"])
                .arg(&home)
                .arg(&name),
        );
        std::fs::create_dir_all(&home).unwrap();
        let id = |flag: &str| -> u32 {
            let out = must(Command::new("id").args([flag, &name]));
            String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
        };
        let (uid, gid) = (id("-u"), id("-g"));
        std::os::unix::fs::chown(&home, Some(uid), Some(gid)).unwrap();
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
        User { name, uid, gid, home }
    }

    /// `argv` as this user (its own groups only), with `env` and nothing else.
    pub(crate) fn cmd(&self, argv: &[&str], env: &[(&str, &str)]) -> Command {
        let mut c = Command::new("/usr/bin/setpriv");
        c.arg(format!("--reuid={}", self.uid))
            .arg(format!("--regid={}", self.gid))
            .arg("--init-groups")
            .arg("--")
            .args(argv)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &self.home)
            .envs(env.iter().copied())
            .current_dir(&self.home);
        c
    }

    fn chown(&self, p: &Path) {
        std::os::unix::fs::chown(p, Some(self.uid), Some(self.gid)).unwrap();
    }
}

impl Drop for User {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).output();
        let _ = Command::new("groupdel").arg(&self.name).output();
    }
}

/// The remote host: an sshd of the remote user's, an agent whose key it accepts, and a tier
/// directory whose real ssh is the system's.
pub(crate) struct Host {
    tmp: tempfile::TempDir,
    pub(crate) agent: User,
    pub(crate) remote: User,
    sshd: Child,
    pub(crate) port: u16,
    log: PathBuf,
    pub(crate) env: TestEnv,
    /// What the remote `docker` (a recording script first on the remote PATH) was asked.
    docker_log: PathBuf,
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.sshd.kill();
        let _ = self.sshd.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Host {
    pub(crate) fn start() -> Host {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let remote = User::create("r", tmp.path().join("rhome"));
        let agent = User::create("a", tmp.path().join("ahome"));
        // The server's own directory: host key, authorized key, config, log.
        let sd = tmp.path().join("sshd");
        std::fs::create_dir(&sd).unwrap();
        remote.chown(&sd);
        let key = sd.join("host_key");
        must(&mut remote.cmd(&["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key.to_str().unwrap()], &[]));
        // The agent's key, and the server's host key as the agent's only known host.
        let dot = agent.home.join(".ssh");
        must(&mut agent.cmd(&["mkdir", "-m", "700", dot.to_str().unwrap()], &[]));
        let id = dot.join("id_ed25519");
        must(&mut agent.cmd(&["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", id.to_str().unwrap()], &[]));
        std::fs::copy(dot.join("id_ed25519.pub"), sd.join("authorized_keys")).unwrap();
        let port = free_port();
        let host_pub = std::fs::read_to_string(sd.join("host_key.pub")).unwrap();
        let mut fields = host_pub.split_whitespace();
        let line = format!("[127.0.0.1]:{port} {} {}\n", fields.next().unwrap(), fields.next().unwrap());
        std::fs::write(dot.join("known_hosts"), line).unwrap();
        agent.chown(&dot.join("known_hosts"));
        // A remote `docker` that records what it was asked and where (no daemon needed).
        let rbin = tmp.path().join("rbin");
        std::fs::create_dir(&rbin).unwrap();
        let docker_log = tmp.path().join("docker.log");
        std::fs::write(&docker_log, "").unwrap();
        remote.chown(&docker_log);
        crate::harness::write_exec(
            &rbin.join("docker"),
            &format!("#!/bin/sh\nprintf '%s | %s\\n' \"$(pwd)\" \"$*\" >> '{}'\n", docker_log.display()),
        );
        let log = sd.join("sshd.log");
        let config = sd.join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {key}\nPidFile none\nAuthorizedKeysFile {ak}\n\
                 StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                 PubkeyAuthentication yes\nAllowUsers {user}\nLogLevel VERBOSE\nSetEnv PATH={rbin}:/usr/bin:/bin\n",
                key = key.display(),
                ak = sd.join("authorized_keys").display(),
                user = remote.name,
                rbin = rbin.display()
            ),
        )
        .unwrap();
        let logf = std::fs::File::create(&log).unwrap();
        // Killed with this test's thread, whatever happens to the test (setpriv --pdeathsig).
        let sshd = Command::new("/usr/bin/setpriv")
            .arg(format!("--reuid={}", remote.uid))
            .arg(format!("--regid={}", remote.gid))
            .args(["--init-groups", "--pdeathsig", "KILL", "--", SSHD, "-D", "-e", "-f"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(logf)
            .spawn()
            .unwrap();
        // Ready when it says so in its log.
        let mut ready = false;
        for _ in 0..500 {
            if std::fs::read_to_string(&log).unwrap_or_default().contains("Server listening") {
                ready = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(ready, "sshd did not start: {}", std::fs::read_to_string(&log).unwrap_or_default());
        let env = TestEnv::new(3, "");
        // The agent appends to the audit log.
        std::fs::write(&env.audit, "").unwrap();
        std::fs::set_permissions(&env.audit, std::fs::Permissions::from_mode(0o666)).unwrap();
        let h = Host {
            tmp,
            agent,
            remote,
            sshd,
            port,
            log,
            env,
            docker_log,
        };
        h.configure("");
        h
    }

    /// tiershim.yaml: the real ssh, this host listed, and `remote` for it (YAML under the host).
    fn configure(&self, remote: &str) {
        let mut text = format!(
            "tier: 3\nreal: {{ssh: /usr/bin/ssh}}\nreal_dirs: [{}]\naudit_log: {}\nhosts: [127.0.0.1]\n",
            self.env.real.display(),
            self.env.audit.display()
        );
        if !remote.is_empty() {
            text.push_str(&format!("remote:\n  127.0.0.1:\n{remote}"));
        }
        self.env.write_config(&text);
    }

    pub(crate) fn dest(&self) -> String {
        format!("{}@127.0.0.1", self.remote.name)
    }

    /// The agent runs `ssh -p PORT remote@127.0.0.1 COMMAND` through the gate at `tier`.
    fn gate(&self, tier: u8, command: &str) -> Output {
        let link = self.env.dir.join("ssh");
        let port = self.port.to_string();
        let dest = self.dest();
        let tier = tier.to_string();
        let path = self.env.dir.display().to_string();
        self.agent
            .cmd(
                &[link.to_str().unwrap(), "-p", &port, &dest, command],
                &[("PATH", &path), ("CLAUDEOPS_TIER", &tier)],
            )
            .output()
            .unwrap()
    }

    /// The agent runs the real ssh directly: what the command does without the gate.
    fn direct(&self, command: &str) -> Output {
        let port = self.port.to_string();
        let dest = self.dest();
        self.agent
            .cmd(
                &[
                    "/usr/bin/ssh",
                    "-F",
                    "/etc/ssh/ssh_config",
                    "-o",
                    "BatchMode=yes",
                    "-p",
                    &port,
                    &dest,
                    command,
                ],
                &[],
            )
            .output()
            .unwrap()
    }

    /// How many sessions the server has started so far.
    pub(crate) fn sessions(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .matches("Starting session: command")
            .count()
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    /// A file the remote user owns.
    fn remote_file(&self, p: &Path, text: &str) {
        std::fs::write(p, text).unwrap();
        self.remote.chown(p);
    }

    fn remote_dir(&self, p: &Path) {
        std::fs::create_dir_all(p).unwrap();
        self.remote.chown(p);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// (verdict, rule) of the last audit record.
fn last(env: &TestEnv) -> (String, String) {
    let r = env.last_audit();
    (
        r["verdict"].as_str().unwrap_or("?").into(),
        r["rule"].as_str().unwrap_or("?").into(),
    )
}

/// A directory that looks like a bare repository whose config names a man viewer that runs a
/// program: what `curl --create-dirs -o x/HEAD -o x/config …` would have planted.
fn plant_bare_repository(h: &Host, dir: &Path, marker: &Path) {
    h.remote_dir(dir);
    h.remote_dir(&dir.join("objects"));
    h.remote_dir(&dir.join("refs"));
    h.remote_dir(&dir.join("refs/heads"));
    h.remote_file(&dir.join("HEAD"), "ref: refs/heads/main\n");
    h.remote_file(
        &dir.join("config"),
        &format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = true\n[help]\n\tformat = man\n[man]\n\tviewer = planted\n[man \"planted\"]\n\tcmd = touch {}\n",
            marker.display()
        ),
    );
}

#[test]
fn the_remote_bare_repository_chain_is_stopped_at_its_first_step_and_its_second_finds_nothing() {
    if !can_run("the_remote_bare_repository_chain_…") {
        return;
    }
    let h = Host::start();
    let http = HttpServer::start();
    // Step 1 through the gate at tier 2: curl building `x/` as a bare repository in the login
    // directory of a host without workspaces. Refused before anything connects.
    let before = h.sessions();
    let url = http.url();
    let plant = format!("curl -s --create-dirs -o x/HEAD -o x/config -o x/refs/heads/main {url}/HEAD {url}/config {url}/main");
    let out = h.gate(2, &plant);
    assert_eq!(out.status.code(), Some(77), "{}", text(&out.stderr));
    assert_eq!(last(&h.env), ("refuse".into(), "ssh.remote-write".into()));
    assert!(
        text(&out.stderr).contains(
            "curl GET writing x/HEAD (-o) on 127.0.0.1 (a relative path without an absolute `cd` in front, so below the remote login directory the gate does not know) requires tier 3"
        ),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stderr).contains("remote.127.0.0.1.workspaces"), "{}", text(&out.stderr));
    assert_eq!(h.sessions(), before, "nothing connected");
    assert!(!h.remote.home.join("x").exists());
    assert!(http.requests().is_empty());

    // Step 2, had step 1 happened some other way (a tier-3 session, a human): the planted
    // config runs its program when git reads it, as the real ssh alone shows.
    let marker = h.remote.home.join("viewer-ran");
    let control = h.remote.home.join("control-ran");
    plant_bare_repository(&h, &h.remote.home.join("x"), &marker);
    plant_bare_repository(&h, &h.remote.home.join("y"), &control);
    let out = h.direct("git -C y help push");
    assert!(control.exists(), "without the gate the planted viewer runs: {}", text(&out.stderr));
    let out = h.direct("git -C y rev-parse --git-dir");
    assert_eq!(text(&out.stdout).trim(), ".", "{}", text(&out.stderr));
    // Through the gate the same tier-1 read runs with safe.bareRepository=explicit and the git
    // gate's other settings: `x` is no repository, its config is never read.
    let out = h.gate(1, "git -C x help push");
    assert_eq!(last(&h.env), ("allow".into(), "git.read".into()), "{}", text(&out.stderr));
    let forced = h.env.last_audit()["remote"]["git_forced"].clone();
    assert!(
        forced
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == "safe.bareRepository=explicit")),
        "{forced}"
    );
    assert!(!marker.exists(), "the planted viewer ran through the gate: {}", text(&out.stderr));
    let out = h.gate(1, "git -C x rev-parse --git-dir");
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("safe.bareRepository"), "{}", text(&out.stderr));
}

#[test]
fn sudo_git_is_refused_as_root_s_git_before_anything_connects() {
    if !can_run("sudo_git_is_refused_…") {
        return;
    }
    let h = Host::start();
    let marker = h.remote.home.join("viewer-ran");
    plant_bare_repository(&h, &h.remote.home.join("x"), &marker);
    let before = h.sessions();
    for (tier, command) in [
        (2, "sudo git -C x help push"),
        (2, "sudo -n -u root git -C /srv/app status"),
        (2, "sudo -u deploy git -C x log"),
    ] {
        let out = h.gate(tier, command);
        assert_eq!(out.status.code(), Some(77), "{command}: {}", text(&out.stderr));
        assert_eq!(last(&h.env), ("refuse".into(), "ssh.as-root.git".into()), "{command}");
        assert!(text(&out.stderr).contains("git as root or another user"), "{}", text(&out.stderr));
    }
    // sudo keeping the environment, and a root login, are judged the same way.
    let out = h.gate(2, "sudo -E git -C x status");
    assert_eq!(out.status.code(), Some(77));
    assert_eq!(last(&h.env).1, "ssh.as-root.env");
    assert_eq!(h.sessions(), before, "nothing connected");
    assert!(!marker.exists());
}

#[test]
fn a_tier_2_write_runs_inside_a_remote_workspace_and_not_where_a_symlink_there_leads() {
    if !can_run("a_tier_2_write_runs_inside_a_remote_workspace_…") {
        return;
    }
    let h = Host::start();
    let http = HttpServer::start();
    let work = h.path("work");
    h.remote_dir(&work);
    h.configure(&format!("    workspaces: [{}]\n", work.display()));
    let url = http.url();
    // Inside the workspace: the gate reads where the path leads (one session), then runs it.
    let before = h.sessions();
    let out = h.gate(2, &format!("curl -s -o {}/out.json {url}/x", work.display()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(work.join("out.json")).unwrap(), "{}");
    assert_eq!(last(&h.env).1, "ssh.remote-write");
    assert_eq!(h.sessions(), before + 2, "one read, one call");
    // Tier 1 writes nothing, not even there.
    let out = h.gate(1, &format!("cd {} && curl -s -o again.json {url}/x", work.display()));
    assert_eq!(out.status.code(), Some(77));
    assert!(text(&out.stderr).contains("tier 1 writes no file"), "{}", text(&out.stderr));
    assert!(!work.join("again.json").exists());
    // A symlink in the workspace leading to the login directory: the text is inside, the
    // place is not. Refused after the read, and nothing is written.
    std::os::unix::fs::symlink(&h.remote.home, work.join("home")).unwrap();
    let out = h.gate(2, &format!("curl -s -o {}/home/planted.sh {url}/x", work.display()));
    assert_eq!(out.status.code(), Some(77), "{}", text(&out.stderr));
    assert_eq!(last(&h.env), ("refuse".into(), "ssh.remote-write".into()));
    let really = format!("really is {}/planted.sh", h.remote.home.display());
    assert!(text(&out.stderr).contains(&really), "{}", text(&out.stderr));
    assert!(!h.remote.home.join("planted.sh").exists());
    assert_eq!(http.requests().len(), 1, "only the allowed call fetched");
}

/// A compose project the operator owns: root-owned files and directories, a bind of its own
/// `config` directory and a named volume.
fn project(h: &Host, compose: &str) -> PathBuf {
    let dir = h.path("srv/jellyfin");
    std::fs::create_dir_all(dir.join("config")).unwrap();
    for d in [h.path("srv"), dir.clone(), dir.join("config")] {
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(dir.join("compose.yaml"), compose).unwrap();
    std::fs::set_permissions(dir.join("compose.yaml"), std::fs::Permissions::from_mode(0o644)).unwrap();
    dir
}

const HARMLESS: &str =
    "services:\n  jellyfin:\n    image: jellyfin/jellyfin:10.9\n    volumes: [./config:/config, media:/media]\nvolumes:\n  media: {}\n";

#[test]
fn a_remote_compose_up_is_allowed_at_tier_2_when_the_files_read_over_ssh_are_the_operators_and_harmless() {
    if !can_run("a_remote_compose_up_is_allowed_…") {
        return;
    }
    let h = Host::start();
    let dir = project(&h, HARMLESS);
    let up = format!("cd {} && docker compose up -d jellyfin", dir.display());
    // Tier 1 is refused by the rule itself, without a connection.
    let before = h.sessions();
    let out = h.gate(1, &up);
    assert_eq!(out.status.code(), Some(77));
    assert_eq!(last(&h.env).1, "docker.compose.up");
    assert_eq!(h.sessions(), before);
    // Tier 2: the files are read (compose file and .env, then the bind source), then it runs.
    let out = h.gate(2, &up);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(last(&h.env), ("allow".into(), "docker.compose.up".into()));
    let message = h.env.last_audit()["message"].to_string();
    assert!(message.contains("Using: ssh → docker compose up"), "{message}");
    assert_eq!(h.sessions(), before + 3, "two reads and the call");
    let reasons = h.env.last_audit()["reasons"].to_string();
    assert!(reasons.contains("the compose files were read over ssh"), "{reasons}");
    assert_eq!(
        std::fs::read_to_string(&h.docker_log).unwrap(),
        format!("{} | compose up -d jellyfin\n", dir.display())
    );
    // The same files named with -f from the login directory.
    let out = h.gate(2, &format!("docker compose -f {}/compose.yaml up -d jellyfin", dir.display()));
    assert_eq!(last(&h.env), ("allow".into(), "docker.compose.up".into()), "{}", text(&out.stderr));
}

#[test]
fn a_remote_compose_up_is_refused_naming_what_the_login_user_can_change_or_what_the_files_ask_for() {
    if !can_run("a_remote_compose_up_is_refused_…") {
        return;
    }
    let h = Host::start();
    let dir = project(&h, HARMLESS);
    let up = format!("cd {} && docker compose up -d jellyfin", dir.display());
    let refused = |want_rule: &str, want: &str| {
        let out = h.gate(2, &up);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(77), "{err}");
        assert_eq!(last(&h.env), ("refuse".into(), want_rule.to_string()), "{err}");
        assert!(err.contains(want), "missing {want:?} in {err}");
    };
    let uid = h.remote.uid;
    // The login user owns the compose file: it, not the operator, decides what starts.
    h.remote.chown(&dir.join("compose.yaml"));
    refused(
        "docker.compose.file-writable",
        &format!(
            "the compose file {}/compose.yaml: the login user (uid {uid}) can write it",
            dir.display()
        ),
    );
    // … unless the operator vouches for the project in tiershim.yaml.
    h.configure(&format!("    compose: [{}]\n", dir.display()));
    let out = h.gate(2, &up);
    assert_eq!(last(&h.env), ("allow".into(), "docker.compose.up".into()), "{}", text(&out.stderr));
    h.configure("");
    std::os::unix::fs::chown(dir.join("compose.yaml"), Some(0), Some(0)).unwrap();
    // The login user can write the bind source: a symlink there could send the bind anywhere.
    h.remote.chown(&dir.join("config"));
    refused(
        "docker.compose.file-writable",
        &format!(
            "service jellyfin: the bind source {}/config: the login user (uid {uid}) can write it",
            dir.display()
        ),
    );
    std::os::unix::fs::chown(dir.join("config"), Some(0), Some(0)).unwrap();
    // The login user can write the project directory: compose would pick up an override file.
    h.remote.chown(&dir);
    refused("docker.compose.file-writable", &format!("the project directory {}", dir.display()));
    std::os::unix::fs::chown(&dir, Some(0), Some(0)).unwrap();
    // Operator-owned, but asking for what docker run needs tier 3 for.
    std::fs::write(
        dir.join("compose.yaml"),
        "services:\n  jellyfin:\n    image: jellyfin/jellyfin\n    privileged: true\n    volumes: [/var/run/docker.sock:/var/run/docker.sock]\n",
    )
    .unwrap();
    refused("docker.compose.file-escalates", "service jellyfin: privileged");
    // No compose file at all: unknown.
    std::fs::remove_file(dir.join("compose.yaml")).unwrap();
    refused("docker.compose.file-remote", "no compose file in");
    // docker ran once: for the project the operator vouched for.
    assert_eq!(
        std::fs::read_to_string(&h.docker_log).unwrap(),
        format!("{} | compose up -d jellyfin\n", dir.display())
    );
}
