//! The fence (DESIGN §3.2), replayed with the real tools: no allowed call may leave a file that a
//! later call runs. Each chain found by the review is shown stopped at its first step, with a
//! refusal that names the rule, the option and the path.

use std::path::{Path, PathBuf};

use crate::harness::{Run, TestEnv};
use crate::http_server::{HttpServer, TlsFront};
use crate::real_tools::which;

/// An install of ceiling 3 with these real tools, whose workspace is `<tmp>/repos` (the agent's
/// working directory below it is `<tmp>/repos/work`).
fn fenced(tools: &[&str], extra: &str) -> (TestEnv, PathBuf) {
    let mut real = String::from("real:\n");
    for t in tools {
        real.push_str(&format!("  {t}: {}\n", which(t).display()));
    }
    let env = TestEnv::new(3, &format!("{real}{extra}"));
    let repos = env.path("repos");
    std::fs::create_dir_all(repos.join("work")).unwrap();
    let text = std::fs::read_to_string(env.config_path()).unwrap();
    let text = text.replace(
        &format!("workspaces: [{}]", env.tmp.path().display()),
        &format!("workspaces: [{}]", repos.display()),
    );
    env.write_config(&text);
    (env, repos.join("work"))
}

fn run_in(env: &TestEnv, dir: &Path, tool: &str, args: &[&str], tier: u8) -> Run {
    let mut c = env.cmd(tool, args);
    c.current_dir(dir).env("CLAUDEOPS_TIER", tier.to_string());
    Run { out: c.output().unwrap() }
}

#[test]
fn curl_cannot_build_a_bare_repository_for_git_to_run_in_one_call_or_in_several() {
    let (env, work) = fenced(&["curl", "git"], "");
    let srv = HttpServer::start();
    let u = format!("{}/x", srv.url());
    // The review's chain: one tier-2 curl writes HEAD, config, objects/ and refs/, and then
    // `git -C bare …` takes `bare` for a repository and runs what its config names.
    let out = run_in(
        &env,
        &work,
        "curl",
        &[
            "-s",
            "--create-dirs",
            "-o",
            "bare/HEAD",
            "-o",
            "bare/config",
            "-o",
            "bare/objects/info/x",
            "-o",
            "bare/refs/heads/x",
            &u,
            &u,
            &u,
            &u,
        ],
        2,
    );
    assert_eq!(out.code(), 77, "{}", out.stderr());
    assert!(
        out.stderr()
            .contains("REFUSED: curl writing bare/HEAD (-o) is never allowed (this agent is tier 2; rule curl.local-file)"),
        "{}",
        out.stderr()
    );
    assert!(out.stderr().contains("HEAD would make bare a git directory"), "{}", out.stderr());
    assert!(srv.lines().is_empty());
    assert!(!work.join("bare").exists());

    // Step by step: the parts that do not make a repository may be written, the one that would
    // (HEAD beside objects/ and refs/) never is.
    for part in ["bare/objects/info/x", "bare/refs/heads/x", "bare/config"] {
        let out = run_in(&env, &work, "curl", &["-s", "--create-dirs", "-o", part, &u], 2);
        assert_eq!(out.code(), 0, "{part}: {}", out.stderr());
    }
    let out = run_in(&env, &work, "curl", &["-s", "-o", "bare/HEAD", &u], 2);
    assert_eq!(out.code(), 77, "{}", out.stderr());
    assert!(!work.join("bare/HEAD").exists());
    // So the real git does not take it for a repository.
    let git = std::process::Command::new(which("git"))
        .args(["-C", "bare", "rev-parse", "--git-dir"])
        .current_dir(&work)
        .env("GIT_CEILING_DIRECTORIES", work.parent().unwrap())
        .output()
        .unwrap();
    assert!(!git.status.success());
    assert!(String::from_utf8_lossy(&git.stderr).contains("not a git repository"));
    // A HEAD there (written by someone else) makes objects/ or refs/ beside it never.
    std::fs::create_dir_all(work.join("half")).unwrap();
    std::fs::write(work.join("half/HEAD"), "ref: refs/heads/main\n").unwrap();
    let out = run_in(&env, &work, "curl", &["-s", "--create-dirs", "-o", "half/refs/heads/main", &u], 2);
    assert_eq!(out.code(), 77, "{}", out.stderr());
    assert!(out.stderr().contains("would make it a git directory"), "{}", out.stderr());
}

#[test]
fn tier_1_writes_no_file_and_tier_2_writes_only_below_a_workspace() {
    let (env, work) = fenced(&["curl"], "");
    let srv = HttpServer::start();
    let u = format!("{}/x", srv.url());

    let out = run_in(&env, &work, "curl", &["-s", "-o", "out.json", &u], 1);
    assert_eq!(out.code(), 77, "{}", out.stderr());
    assert!(
        out.stderr()
            .contains("REFUSED: curl writing out.json (-o) requires tier 2 (this agent is tier 1)"),
        "{}",
        out.stderr()
    );
    // Standard output is not a file.
    assert_eq!(run_in(&env, &work, "curl", &["-s", "-o", "-", &u], 1).code(), 0);

    let out = run_in(&env, &work, "curl", &["-s", "-D", "headers.txt", "-o", "out.json", &u], 2);
    assert_eq!(out.code(), 0, "{}", out.stderr());
    assert!(work.join("out.json").exists() && work.join("headers.txt").exists());

    // A working directory outside the workspaces: tier 3.
    let elsewhere = env.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let out = run_in(&env, &elsewhere, "curl", &["-s", "-o", "out.json", &u], 2);
    assert_eq!(out.code(), 77, "{}", out.stderr());
    assert!(
        out.stderr()
            .contains("REFUSED: curl writing out.json (-o) requires tier 3 (this agent is tier 2)"),
        "{}",
        out.stderr()
    );
    assert!(out.stderr().contains("is outside the workspaces"), "{}", out.stderr());
    assert!(!elsewhere.join("out.json").exists());

    // The install's own directories, even below the working directory.
    let out = run_in(&env, env.tmp.path(), "curl", &["-s", "-o", "tier/profile", &u], 3);
    assert_eq!(out.code(), 77, "{}", out.stderr());
    assert!(out.stderr().contains("the install's tier directory"), "{}", out.stderr());
    assert!(!env.dir.join("profile").exists());
}

/// Debian's gh against a TLS server on 127.0.0.1 (the enterprise-host form of `GH_HOST`).
fn gh_fenced(srv: &HttpServer) -> (TestEnv, TlsFront, PathBuf) {
    let probe = TestEnv::bare();
    let tls = TlsFront::start(srv, probe.tmp.path());
    let cfg = probe.path("ghconfig");
    std::fs::create_dir_all(&cfg).unwrap();
    let (env, work) = fenced(
        &["gh", "git"],
        &format!(
            "env:\n  GH_HOST: \"127.0.0.1:{}\"\n  SSL_CERT_FILE: {}\n  GH_CONFIG_DIR: {}\n",
            tls.port,
            tls.cert.display(),
            cfg.display()
        ),
    );
    std::mem::forget(probe);
    // The token is a credential: in the secrets file, never in tiershim.yaml.
    env.pin_secrets(&[("GH_ENTERPRISE_TOKEN", "tok-for-tests")]);
    (env, tls, work)
}

#[test]
fn gh_downloads_are_writes_tier_1_makes_none_and_no_tier_plants_a_dotfile() {
    let srv = HttpServer::start();
    let (env, _tls, work) = gh_fenced(&srv);
    let home = env.tmp.path().display().to_string();
    // The review's first step: a tier-1 "read" that wrote ~/.gitconfig.
    let gitconfig = format!("{home}/.gitconfig");
    for (args, tier, want) in [
        (
            vec!["release", "download", "v1", "-p", "app.tgz", "-O", ".gitconfig"],
            1,
            "REFUSED: gh writing .gitconfig (-O) is never allowed (this agent is tier 1; rule gh.local-file)",
        ),
        (
            vec!["release", "download", "v1", "-O", gitconfig.as_str()],
            2,
            "(-O) is never allowed (this agent is tier 2; rule gh.local-file)",
        ),
        (
            vec!["release", "download", "v1", "-p", "app.tgz"],
            1,
            "REFUSED: gh writing app.tgz (-p) requires tier 2 (this agent is tier 1)",
        ),
        (
            vec!["run", "download", "42", "-D", home.as_str()],
            2,
            "(-D) is never allowed (this agent is tier 2; rule gh.local-file)",
        ),
        (
            vec!["run", "download", "42"],
            2,
            "REFUSED: gh writing . (run download) requires tier 3 (this agent is tier 2)",
        ),
    ] {
        let out = run_in(&env, &work, "gh", &args, tier);
        assert_eq!(out.code(), 77, "{args:?}: {}", out.stderr());
        assert!(out.stderr().contains(want), "{args:?}: {}", out.stderr());
    }
    assert!(srv.lines().is_empty(), "{:?}", srv.lines());
    assert!(!env.path(".gitconfig").exists());
}

#[test]
fn a_jq_expression_that_reads_the_environment_never_runs() {
    let srv = HttpServer::start();
    let (env, _tls, work) = gh_fenced(&srv);
    for args in [
        &["api", "/user", "--jq", "$ENV.GH_ENTERPRISE_TOKEN"][..],
        &["api", "/user", "-q", "env.GH_ENTERPRISE_TOKEN"],
        &["pr", "list", "--json", "title", "--jq", "env"],
    ] {
        let out = run_in(&env, &work, "gh", args, 3);
        assert_eq!(out.code(), 77, "{args:?}: {}", out.stderr());
        assert!(out.stderr().contains("rule gh.jq-env"), "{args:?}: {}", out.stderr());
        assert!(!out.stdout().contains("tok-for-tests"));
    }
    assert!(srv.lines().is_empty(), "{:?}", srv.lines());
    // A field named env is a field.
    let out = run_in(&env, &work, "gh", &["api", "/user", "--jq", ".env"], 1);
    assert_eq!(out.code(), 0, "{}", out.stderr());
    assert_eq!(srv.lines(), ["GET /api/v3/user"]);
}

/// The start of a PostgreSQL connection as a server reads it: an SSLRequest or GSSENCRequest is
/// refused with `N`, then the startup message is read. False when the client went away first.
pub fn pg_startup(s: &mut std::net::TcpStream) -> bool {
    use std::io::{Read, Write};
    fn read_n(s: &mut std::net::TcpStream, n: usize) -> Option<Vec<u8>> {
        let mut b = vec![0u8; n];
        s.read_exact(&mut b).ok().map(|_| b)
    }
    while let Some(head) = read_n(s, 8) {
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let code = u32::from_be_bytes([head[4], head[5], head[6], head[7]]);
        if code == 80877103 || code == 80877104 {
            let _ = s.write_all(b"N");
            continue;
        }
        return read_n(s, len.saturating_sub(8)).is_some();
    }
    false
}

/// A server on 127.0.0.1 that speaks just enough of PostgreSQL's protocol to ask for the
/// password in clear text, as a server the agent runs would: what it was sent, per connection.
pub struct PasswordCatcher {
    pub port: u16,
    caught: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl PasswordCatcher {
    pub fn start() -> PasswordCatcher {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let caught = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = std::sync::Arc::clone(&caught);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { continue };
                let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(5)));
                let read_n = |s: &mut std::net::TcpStream, n: usize| -> Option<Vec<u8>> {
                    let mut b = vec![0u8; n];
                    s.read_exact(&mut b).ok().map(|_| b)
                };
                let mut got = String::from("connected");
                if pg_startup(&mut s) {
                    // AuthenticationCleartextPassword.
                    let _ = s.write_all(&[b'R', 0, 0, 0, 8, 0, 0, 0, 3]);
                    if let Some(t) = read_n(&mut s, 5)
                        && t[0] == b'p'
                    {
                        let n = u32::from_be_bytes([t[1], t[2], t[3], t[4]]) as usize;
                        if let Some(pw) = read_n(&mut s, n.saturating_sub(4)) {
                            got = format!("password {}", String::from_utf8_lossy(&pw).trim_end_matches('\0'));
                        }
                    }
                }
                log.lock().unwrap().push(got);
            }
        });
        PasswordCatcher { port, caught }
    }

    pub fn caught(&self) -> Vec<String> {
        self.caught.lock().unwrap().clone()
    }
}

#[test]
fn a_pinned_database_password_is_only_ever_sent_to_the_pinned_server() {
    let pg = crate::dbserver::pg();
    let db = pg.fresh_db();
    let (env, work) = fenced(
        &["psql"],
        &format!(
            "env: {{PGHOST: {}, PGPORT: \"{}\", PGUSER: {}, PGDATABASE: {db}}}\n",
            pg.sock.display(),
            pg.port,
            pg.superuser
        ),
    );
    env.pin_secrets(&[("PGPASSWORD", "pinned-pw")]);
    let catcher = PasswordCatcher::start();
    let port = catcher.port.to_string();

    // Without the gate, the same psql hands the password over in clear text when asked: the
    // chain the fence stops.
    let out = std::process::Command::new("/usr/bin/psql")
        .args(["-X", "-h", "127.0.0.1", "-p", &port, "-c", "select 1"])
        .env_clear()
        .env("PGPASSWORD", "pinned-pw")
        .env("PGCONNECT_TIMEOUT", "5")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(catcher.caught(), ["password pinned-pw"]);

    let uri = format!("postgresql://127.0.0.1:{port}/{db}");
    let host_kv = format!("host=127.0.0.1 port={port}");
    for args in [
        vec!["-h", "127.0.0.1", "-p", port.as_str(), "-c", "select 1"],
        vec!["--host=127.0.0.1", "-c", "select 1"],
        vec!["-d", host_kv.as_str(), "-c", "select 1"],
        vec![uri.as_str(), "-c", "select 1"],
    ] {
        let out = run_in(&env, &work, "psql", &args, 3);
        assert_eq!(out.code(), 77, "{args:?}: {}", out.stderr());
        assert!(
            out.stderr().contains("rule psql.credential-destination"),
            "{args:?}: {}",
            out.stderr()
        );
        assert!(!out.stderr().contains("pinned-pw"));
    }
    // The caller's PGHOST and PGPORT do not reach psql: the pinned server answers.
    let mut c = env.cmd("psql", &["-At", "-c", "select 42"]);
    c.current_dir(&work)
        .env("CLAUDEOPS_TIER", "1")
        .env("PGHOST", "127.0.0.1")
        .env("PGPORT", &port);
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n");
    assert_eq!(catcher.caught(), ["password pinned-pw"], "the gate let a call reach the catcher");
    let resets = env.last_audit()["env_resets"].to_string();
    assert!(resets.contains(r#"{"action":"pinned","var":"PGHOST"}"#), "{resets}");
}

#[test]
fn git_makes_work_trees_below_a_workspace_and_never_a_bare_repository() {
    let (env, work) = fenced(&["git"], "");
    let out = run_in(&env, &work, "git", &["init", "-q", "sub"], 2);
    assert_eq!(out.code(), 0, "{}", out.stderr());
    assert!(work.join("sub/.git/HEAD").is_file());
    for args in [
        &["init", "--bare", "bare"][..],
        &["--bare", "init", "bare"],
        &["init", "--separate-git-dir", "gd", "wt"],
        &["clone", "--bare", "https://example.com/o/r.git"],
    ] {
        let out = run_in(&env, &work, "git", args, 3);
        assert_eq!(out.code(), 77, "{args:?}: {}", out.stderr());
        // The write is never; so are `--bare` and `--separate-git-dir` themselves (git's own
        // rules), and the first of equals explains the refusal. The write is in the reasons.
        let rec = env.last_audit();
        assert!(
            ["git.local-file", "git.retarget", "git.separate-git-dir"].contains(&rec["rule"].as_str().unwrap_or("")),
            "{args:?}: {}",
            out.stderr()
        );
        assert!(rec["reasons"].to_string().contains("would make"), "{args:?}: {rec}");
    }
    assert!(!work.join("bare").exists() && !work.join("gd").exists() && !work.join("r.git").exists());
    // A clone into a hidden directory, or out of the working directory, is never.
    for args in [
        &["clone", "https://example.com/o/r.git", ".config/git"][..],
        &["clone", "https://example.com/o/r.git", "../r"],
    ] {
        let out = run_in(&env, &work, "git", args, 3);
        assert_eq!(out.code(), 77, "{args:?}: {}", out.stderr());
        assert!(out.stderr().contains("rule git.local-file"), "{args:?}: {}", out.stderr());
    }
}
