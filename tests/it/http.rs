//! HTTP through the gate, for real: the real curl, and Debian's real gh over HTTPS, against a
//! server on 127.0.0.1 that records every request. A refused or dry-run call must never reach
//! it; an allowed one must, exactly as asked. Local files, endpoint rules and secret redaction
//! are checked on the same path.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::TestEnv;
use crate::http_server::{HttpServer, TlsFront};

fn real(tool: &str) -> PathBuf {
    ["/usr/bin", "/bin", "/usr/local/bin"]
        .iter()
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{tool} is not installed; scripts/test-deps.sh installs it"))
}

/// An install of tier 3 with the real curl, its working directory `work/` (with `sub/`).
fn curl_env() -> (TestEnv, PathBuf) {
    let env = TestEnv::new(3, &format!("real:\n  curl: {}\n", real("curl").display()));
    let work = env.path("work");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    (env, work)
}

struct Out {
    code: i32,
    stderr: String,
}

fn run(env: &TestEnv, dir: &Path, tool: &str, args: &[&str], tier: u8, dry_run: bool) -> Out {
    let mut c = env.cmd(tool, args);
    c.current_dir(dir).env("CLAUDEOPS_TIER", tier.to_string());
    if dry_run {
        c.env("CLAUDEOPS_DRY_RUN", "1");
    }
    let out = c.output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn curl_calls_reach_the_server_only_when_allowed_and_never_in_a_dry_run() {
    let (env, work) = curl_env();
    let srv = HttpServer::start();
    let u = |p: &str| format!("{}{p}", srv.url());
    // (argv, tier, dry run, what the server must see)
    let cases: Vec<(Vec<String>, u8, bool, Vec<&str>)> = vec![
        (vec!["-s".into(), u("/health")], 1, false, vec!["GET /health"]),
        (vec!["-sI".into(), u("/health")], 1, false, vec!["HEAD /health"]),
        (vec!["-sXDELETE".into(), u("/items/1")], 2, false, vec![]),
        (vec!["-sXDELETE".into(), u("/items/1")], 3, false, vec!["DELETE /items/1"]),
        (vec!["-s".into(), "-d".into(), "x=1".into(), u("/api")], 1, false, vec![]),
        (vec!["-s".into(), "-d".into(), "x=1".into(), u("/api")], 2, true, vec![]),
        (vec!["-s".into(), "-d".into(), "x=1".into(), u("/api")], 2, false, vec!["POST /api"]),
        (
            vec!["-s".into(), "-G".into(), "-d".into(), "q=1".into(), u("/search")],
            1,
            false,
            vec!["GET /search?q=1"],
        ),
        // A transfer after --next that needs more refuses the whole call, the GET included.
        (
            vec!["-s".into(), u("/a"), "--next".into(), "-XDELETE".into(), u("/b")],
            2,
            false,
            vec![],
        ),
        // Method-override headers count as the method they name.
        (
            vec![
                "-s".into(),
                "-H".into(),
                "X-HTTP-Method-Override: DELETE".into(),
                "-d".into(),
                "x".into(),
                u("/items/1"),
            ],
            2,
            false,
            vec![],
        ),
        // Globs multiply requests, and every one is judged.
        (
            vec!["-s".into(), u("/repos/o/r/pulls/7/{files,commits}")],
            1,
            false,
            vec!["GET /repos/o/r/pulls/7/files", "GET /repos/o/r/pulls/7/commits"],
        ),
        (
            vec!["-s".into(), "-XPUT".into(), u("/repos/o/r/pulls/7/{files,merge}")],
            3,
            false,
            vec![],
        ),
        // Endpoint rules, whatever the host.
        (
            vec!["-s".into(), "-XPUT".into(), u("/api/v3/repos/o/r/pulls/7/merge")],
            3,
            false,
            vec![],
        ),
        (
            vec![
                "-s".into(),
                "--json".into(),
                r#"{"event":"APPROVE"}"#.into(),
                u("/repos/o/r/pulls/7/reviews"),
            ],
            3,
            false,
            vec![],
        ),
        (
            vec![
                "-s".into(),
                "--json".into(),
                r#"{"event":"COMMENT","body":"x"}"#.into(),
                u("/repos/o/r/pulls/7/reviews"),
            ],
            2,
            false,
            vec!["POST /repos/o/r/pulls/7/reviews"],
        ),
        (
            vec![
                "-s".into(),
                "-XPATCH".into(),
                "-d".into(),
                "private=false".into(),
                u("/api/v1/repos/o/r"),
            ],
            3,
            false,
            vec![],
        ),
        (
            vec!["-s".into(), "-XDELETE".into(), u("/api/v1/repos/o/r/branches/main")],
            3,
            false,
            vec![],
        ),
        (
            vec![
                "-s".into(),
                u("/graphql"),
                "--json".into(),
                r#"{"query":"mutation { mergePullRequest(input:{}) { clientMutationId } }"}"#.into(),
            ],
            3,
            false,
            vec![],
        ),
        // The server routes by the request target, and so does the gate.
        (
            vec![
                "-s".into(),
                "-XPUT".into(),
                "--request-target".into(),
                "/repos/o/r/pulls/7/merge".into(),
                u("/x"),
            ],
            3,
            false,
            vec![],
        ),
        (
            vec!["-s".into(), "--request-target".into(), "/health".into(), u("/x")],
            1,
            false,
            vec!["GET /health"],
        ),
        // A write that follows redirects could land anywhere; --max-redirs 0 keeps it here.
        (vec!["-sL".into(), "-XPUT".into(), u("/items/1")], 3, false, vec![]),
        (
            vec!["-sL".into(), "--max-redirs".into(), "0".into(), "-XPUT".into(), u("/items/1")],
            2,
            false,
            vec!["PUT /items/1"],
        ),
        (vec!["-s".into(), u("/v1.43/containers/json")], 3, false, vec![]),
        (vec!["-s".into(), "file:///etc/passwd".into()], 3, false, vec![]),
        (vec!["-s".into(), "-K".into(), "cfg.txt".into(), u("/x")], 3, false, vec![]),
        (
            vec!["-s".into(), "-w".into(), "%output{w.txt}%{http_code}".into(), u("/x")],
            3,
            false,
            vec![],
        ),
    ];
    for (args, tier, dry, want) in &cases {
        srv.forget();
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&env, &work, "curl", &argv, *tier, *dry);
        let expect_code = if want.is_empty() && !dry { 77 } else { 0 };
        assert_eq!(out.code, expect_code, "{args:?} at tier {tier}: {}", out.stderr);
        assert_eq!(srv.lines(), *want, "{args:?} at tier {tier} (dry run {dry}): {}", out.stderr);
    }
    assert!(!work.join("w.txt").exists());
}

#[test]
fn a_curlrc_in_home_changes_no_request() {
    let (env, work) = curl_env();
    let srv = HttpServer::start();
    // HOME is the temp dir (see TestEnv::cmd).
    std::fs::write(
        env.tmp.path().join(".curlrc"),
        format!(
            "request = DELETE\nheader = \"X-From-Curlrc: 1\"\nurl = \"{}/from-curlrc\"\n",
            srv.url()
        ),
    )
    .unwrap();
    let out = run(&env, &work, "curl", &["-s", &format!("{}/x", srv.url())], 1, false);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let seen = srv.requests();
    assert_eq!(seen.iter().map(|r| r.line()).collect::<Vec<_>>(), vec!["GET /x"]);
    assert_eq!(seen[0].header("x-from-curlrc"), None);
}

#[test]
fn curl_writes_files_only_inside_the_working_directory_and_tier_1_only_to_streams() {
    let (env, work) = curl_env();
    let srv = HttpServer::start();
    let u = format!("{}/x", srv.url());
    let outside = env.path("outside.json");
    std::os::unix::fs::symlink(&outside, work.join("link.json")).unwrap();
    std::fs::create_dir_all(work.join(".git/hooks")).unwrap();

    let ok = run(&env, &work, "curl", &["-s", "-o", "/dev/null", "-D", "-", &u], 1, false);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    for (args, tier) in [
        (&["-s", "-o", "out.json", u.as_str()][..], 1),
        (&["-s", "-D", "headers.txt", u.as_str()], 1),
        (&["-s", "-o", "../escape.json", u.as_str()], 3),
        (&["-s", "-o", outside.to_str().unwrap(), u.as_str()], 3),
        (&["-s", "-o", "link.json", u.as_str()], 3),
        (&["-s", "-o", ".bashrc", u.as_str()], 3),
        (&["-s", "-o", ".git/hooks/pre-commit", u.as_str()], 3),
        (&["-s", "--output-dir", "..", "-O", &format!("{}/file.txt", srv.url())], 3),
        (&["-s", "-OJ", u.as_str()], 3),
    ] {
        srv.forget();
        let out = run(&env, &work, "curl", args, tier, false);
        assert_eq!(out.code, 77, "{args:?}: {}", out.stderr);
        assert!(srv.lines().is_empty(), "{args:?} reached the server");
    }
    for p in [
        work.join("out.json"),
        work.join("headers.txt"),
        env.path("escape.json"),
        outside.clone(),
        work.join(".bashrc"),
    ] {
        assert!(!p.exists(), "{} was written", p.display());
    }
    assert!(!work.join(".git/hooks/pre-commit").exists());

    let out = run(&env, &work, "curl", &["-s", "-o", "out.json", &u], 2, false);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(work.join("out.json")).unwrap(), "{}");
    let out = run(
        &env,
        &work,
        "curl",
        &["-s", "--output-dir", "sub", "-O", &format!("{}/file.txt", srv.url())],
        2,
        false,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(work.join("sub/file.txt").exists());
}

#[test]
fn curl_sends_local_files_only_from_inside_the_working_directory() {
    let (env, work) = curl_env();
    let srv = HttpServer::start();
    let u = format!("{}/api", srv.url());
    std::fs::write(work.join("body.json"), r#"{"a":1}"#).unwrap();
    std::fs::write(work.join(".env"), "TOKEN=x").unwrap();
    std::fs::write(work.join("id_rsa"), "key").unwrap();
    std::fs::write(env.path("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(env.path("secret.txt"), work.join("innocent.txt")).unwrap();

    let secret = env.path("secret.txt");
    for (args, tier) in [
        (&["-s", "-d", "@body.json", u.as_str()][..], 1),
        (&["-s", "-d", "@../secret.txt", u.as_str()], 3),
        (&["-s", "-d", &format!("@{}", secret.display()), u.as_str()], 3),
        (&["-s", "--data-binary", "@.env", u.as_str()], 3),
        (&["-s", "-F", "k=@id_rsa", u.as_str()], 3),
        // curl sends every file of a comma list (`tool_formparse.c`), and header files too.
        (&["-s", "-F", &format!("k=@body.json,{}", secret.display()), u.as_str()], 3),
        (&["-s", "-F", "k=@body.json;type=text/plain,\"../secret.txt\"", u.as_str()], 3),
        (&["-s", "-F", "k=v;headers=@../secret.txt", u.as_str()], 3),
        (&["-s", "-T", "innocent.txt", u.as_str()], 3),
        (&["-s", "-d", "@innocent.txt", u.as_str()], 3),
        (&["-s", "-n", u.as_str()], 3),
    ] {
        srv.forget();
        let out = run(&env, &work, "curl", args, tier, false);
        assert_eq!(out.code, 77, "{args:?}: {}", out.stderr);
        assert!(srv.lines().is_empty(), "{args:?} reached the server");
    }
    let out = run(&env, &work, "curl", &["-s", "-d", "@body.json", &u], 2, false);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let seen = srv.requests();
    assert_eq!((seen[0].line(), seen[0].body.as_str()), ("POST /api".to_string(), r#"{"a":1}"#));
    // Both files of an allowed comma list reach the server.
    std::fs::write(work.join("sub/b.txt"), "bee").unwrap();
    srv.forget();
    let out = run(&env, &work, "curl", &["-s", "-F", "k=@body.json,sub/b.txt", &u], 2, false);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let seen = srv.requests();
    assert!(
        seen[0].body.contains(r#"{"a":1}"#) && seen[0].body.contains("bee"),
        "{}",
        seen[0].body
    );
}

#[test]
fn a_header_file_is_read_by_the_gate_so_a_method_override_in_it_counts() {
    let (env, work) = curl_env();
    let srv = HttpServer::start();
    let u = format!("{}/items/1", srv.url());
    std::fs::write(work.join("override.txt"), "Accept: */*\nX-HTTP-Method-Override: DELETE\n").unwrap();
    std::fs::write(work.join("plain.txt"), "X-Trace: 42\n").unwrap();
    let out = run(&env, &work, "curl", &["-s", "-d", "x", "-H", "@override.txt", &u], 2, false);
    assert_eq!(out.code, 77, "{}", out.stderr);
    assert!(out.stderr.contains("DELETE"), "{}", out.stderr);
    assert!(srv.lines().is_empty());
    let out = run(&env, &work, "curl", &["-s", "-H", "@plain.txt", &u], 2, false);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(srv.requests()[0].header("x-trace"), Some("42"));
    let out = run(&env, &work, "curl", &["-s", "-H", "@missing.txt", &u], 3, false);
    assert_eq!(out.code, 77, "{}", out.stderr);
}

/// A clone of `ops/infra` (origin on github.com, `origin/main` and `origin/HEAD` set) under `repos/`, the shipped
/// git-pr skill as the baseline, the real curl and git: what a pull request through the API is
/// checked against.
fn clone_env() -> (TestEnv, PathBuf) {
    use crate::real_tools::{git, which};
    let env = TestEnv::new(2, "");
    let skills = env.path("skills");
    std::fs::create_dir_all(&skills).unwrap();
    std::fs::write(skills.join("git-pr.md"), include_str!("../../skills/git-pr.md")).unwrap();
    let work = env.path("repos/infra");
    std::fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    std::fs::write(work.join("README.md"), "infra\n").unwrap();
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "base"]);
    git(&work, &["remote", "add", "origin", "https://github.com/ops/infra.git"]);
    git(&work, &["update-ref", "refs/remotes/origin/main", "main"]);
    git(&work, &["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"]);
    for (branch, file) in [("fix", "checks/disk.md"), ("bad", "CLAUDE.md")] {
        git(&work, &["switch", "-q", "-c", branch, "main"]);
        std::fs::create_dir_all(work.join("checks")).unwrap();
        std::fs::write(work.join(file), "x\n").unwrap();
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-q", "-m", "change"]);
    }
    env.write_config(&format!(
        "tier: 3\nreal_dirs: [{}]\nreal:\n  curl: {}\n  git: {}\naudit_log: {}\nskills:\n  baseline: {}\n  repos: {}\n",
        env.real.display(),
        real("curl").display(),
        which("git").display(),
        env.audit.display(),
        skills.display(),
        env.path("repos").display()
    ));
    (env, work)
}

#[test]
fn an_api_pull_request_is_scope_checked_and_needs_a_body_the_gate_can_read() {
    let (env, work) = clone_env();
    let srv = HttpServer::start();
    let u = format!("{}/api/v1/repos/ops/infra/pulls", srv.url());
    std::fs::write(work.join("pr.json"), r#"{"head":"fix","base":"main","title":"t"}"#).unwrap();
    for (args, tier) in [
        (&["-s", "-d", "@-", u.as_str()][..], 3),
        (&["-s", "-X", "POST", "--json", r#"{"title":"no head"}"#, u.as_str()], 3),
        (&["-s", "--json", "@pr.json", u.as_str()], 1),
        // The branch changes CLAUDE.md, which the git-pr skill denies.
        (&["-s", "--json", r#"{"head":"bad","base":"main","title":"t"}"#, u.as_str()], 3),
        // Another repository than the one this directory is a clone of.
        (
            &[
                "-s",
                "--json",
                r#"{"head":"fix","base":"main"}"#,
                &u.replace("ops/infra", "ops/other"),
            ],
            3,
        ),
    ] {
        let out = run(&env, &work, "curl", args, tier, false);
        assert_eq!(out.code, 77, "{args:?}: {}", out.stderr);
    }
    assert!(srv.lines().is_empty());
    let bad = run(
        &env,
        &work,
        "curl",
        &["-s", "--json", r#"{"head":"bad","base":"main"}"#, &u],
        2,
        false,
    );
    assert!(
        bad.stderr.contains("SCOPE VIOLATION: Refusing to create PR modifying CLAUDE.md"),
        "{}",
        bad.stderr
    );
    let out = run(&env, &work, "curl", &["-s", "--json", "@pr.json", &u], 2, false);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(srv.lines(), vec!["POST /api/v1/repos/ops/infra/pulls"]);
    assert_eq!(env.last_audit()["scope"]["files"], serde_json::json!(["checks/disk.md"]));
}

#[test]
fn an_api_contents_write_needs_tier_3_and_a_path_the_skills_allow() {
    let (env, work) = clone_env();
    let srv = HttpServer::start();
    let u = |p: &str| format!("{}/repos/ops/infra/contents/{p}", srv.url());
    let body = r#"{"message":"m","content":"eA==","branch":"fix"}"#;
    let out = run(
        &env,
        &work,
        "curl",
        &["-s", "-X", "PUT", "--json", body, &u("checks/disk.md")],
        2,
        false,
    );
    assert_eq!(out.code, 77, "{}", out.stderr);
    let out = run(&env, &work, "curl", &["-s", "-X", "PUT", "--json", body, &u("CLAUDE.md")], 3, false);
    assert!(
        out.stderr.contains("SCOPE VIOLATION: Refusing to write a file modifying CLAUDE.md"),
        "{}",
        out.stderr
    );
    // A Gitea rename writes checks/disk.md and removes ie.yaml, which the skill denies.
    let rename = r#"{"message":"m","content":"eA==","From_Path":"ie.yaml","branch":"fix"}"#;
    let out = run(
        &env,
        &work,
        "curl",
        &["-s", "-X", "PUT", "--json", rename, &u("checks/disk.md")],
        3,
        false,
    );
    assert!(
        out.stderr.contains("SCOPE VIOLATION: Refusing to write a file modifying ie.yaml"),
        "{}",
        out.stderr
    );
    assert!(srv.lines().is_empty());
    let out = run(
        &env,
        &work,
        "curl",
        &["-s", "-X", "PUT", "--json", body, &u("checks/disk.md")],
        3,
        false,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(srv.lines(), vec!["PUT /repos/ops/infra/contents/checks/disk.md"]);
}

#[test]
fn secrets_never_reach_stderr_or_the_audit_log() {
    let (env, work) = curl_env();
    let srv = HttpServer::start();
    let u = format!("{}/x", srv.url());
    let with_password = u.replace("http://", "http://bob:hunter2@");
    let secrets = ["hunter2", "sekrit-token-value", "s3cr3tpw", "cookieval", "certpass"];
    let calls: Vec<(Vec<&str>, u8, bool)> = vec![
        (vec!["-s", "-u", "bob:hunter2", &u], 1, false),
        (vec!["-s", "-ubob:hunter2", "-XDELETE", &u], 1, false),
        (vec!["-su", "bob:hunter2", "-d", "x", &u], 2, true),
        (
            vec!["-s", "-H", "Authorization: Bearer sekrit-token-value", "-d", "a=1", &u],
            2,
            true,
        ),
        (vec!["-s", "-H", "X-Api-Key: sekrit-token-value", &u], 1, false),
        (vec!["-s", &with_password], 1, false),
        (vec!["-s", "--json", r#"{"password":"s3cr3tpw"}"#, &u], 1, false),
        (vec!["-s", "-d", "token=sekrit-token-value", &u], 2, true),
        (vec!["-s", "-b", "sid=cookieval", &u], 1, false),
        (vec!["-s", "-E", "client.pem:certpass", &u], 1, false),
        (vec!["-s", "--oauth2-bearer", "sekrit-token-value", "-XDELETE", &u], 1, false),
        // A call the grammar cannot parse echoes its URL in the reason: redacted there too.
        (vec!["http://bob:hunter2@127.0.0.1/a b"], 1, false),
    ];
    let mut stderr = String::new();
    for (args, tier, dry) in &calls {
        let out = run(&env, &work, "curl", args, *tier, *dry);
        stderr.push_str(&out.stderr);
    }
    let gh = run(
        &env,
        &work,
        "gh",
        &[
            "api",
            "-H",
            "Authorization: token sekrit-token-value",
            "-f",
            "password=hunter2",
            "repos/o/r/issues",
        ],
        1,
        false,
    );
    stderr.push_str(&gh.stderr);
    let audit = std::fs::read_to_string(&env.audit).unwrap();
    assert_eq!(audit.lines().count(), calls.len() + 1);
    for s in secrets {
        assert!(!stderr.contains(s), "{s} on stderr:\n{stderr}");
        assert!(!audit.contains(s), "{s} in the audit log:\n{audit}");
    }
    assert!(audit.contains("[REDACTED]"));
    // The allowed calls did send their credentials: only the record is redacted.
    assert!(
        srv.requests()
            .iter()
            .any(|r| r.header("authorization").is_some_and(|a| a.starts_with("Basic ")))
    );
}

/// An install with Debian's real gh pointed at a local HTTPS server: host, token, CA bundle and
/// config directory pinned in tiershim.yaml, as an operator would.
fn gh_env(srv: &HttpServer) -> (TestEnv, TlsFront, PathBuf) {
    gh_env_with(srv, &real("gh"))
}

/// [`gh_env`] with `gh` as the real gh.
fn gh_env_with(srv: &HttpServer, gh: &Path) -> (TestEnv, TlsFront, PathBuf) {
    let probe = TestEnv::bare();
    let tls = TlsFront::start(srv, probe.tmp.path());
    let cfg = probe.path("ghconfig");
    std::fs::create_dir_all(&cfg).unwrap();
    let env = TestEnv::new(
        3,
        &format!(
            "real:\n  gh: {}\nenv:\n  GH_HOST: \"127.0.0.1:{}\"\n  SSL_CERT_FILE: {}\n  GH_CONFIG_DIR: {}\n",
            gh.display(),
            tls.port,
            tls.cert.display(),
            cfg.display()
        ),
    );
    // Keep the certificate's directory alive with the install.
    std::mem::forget(probe);
    // The token is a credential: in the secrets file, never in tiershim.yaml.
    env.pin_secrets(&[("GH_ENTERPRISE_TOKEN", "tok-for-tests")]);
    let work = env.path("work");
    std::fs::create_dir_all(&work).unwrap();
    (env, tls, work)
}

#[test]
fn gh_api_calls_reach_an_enterprise_host_only_when_allowed() {
    let srv = HttpServer::start();
    let (env, _tls, work) = gh_env(&srv);
    std::fs::write(
        work.join("merge.graphql"),
        "mutation { mergePullRequest(input: {pullRequestId: \"P\"}) { clientMutationId } }",
    )
    .unwrap();
    std::fs::write(work.join("read.graphql"), "query { viewer { login } }").unwrap();
    let cases: Vec<(Vec<&str>, u8, bool, Vec<&str>)> = vec![
        (vec!["api", "repos/o/r/issues", "-f", "title=disk full"], 1, false, vec![]),
        (vec!["api", "repos/o/r/issues", "-f", "title=disk full"], 2, true, vec![]),
        (
            vec!["api", "repos/o/r/issues", "-f", "title=disk full"],
            2,
            false,
            vec!["POST /api/v3/repos/o/r/issues"],
        ),
        (vec!["api", "repos/o/r/pulls"], 1, false, vec!["GET /api/v3/repos/o/r/pulls"]),
        (vec!["api", "-X", "PUT", "repos/o/r/pulls/1/merge"], 3, false, vec![]),
        (vec!["api", "-X", "DELETE", "repos/o/r"], 3, false, vec![]),
        (vec!["api", "-XPATCH", "repos/o/r", "-f", "visibility=public"], 3, false, vec![]),
        (
            vec![
                "api",
                "-X",
                "PUT",
                "repos/o/r/contents/a.md",
                "-f",
                "message=m",
                "-f",
                "content=eA==",
                "-f",
                "branch=fix",
            ],
            2,
            false,
            vec![],
        ),
        (
            vec!["api", "graphql", "-f", "query={viewer{login}}"],
            1,
            false,
            vec!["POST /api/graphql"],
        ),
        (
            vec![
                "api",
                "graphql",
                "-f",
                "query=mutation { mergePullRequest(input: {pullRequestId: \"P\"}) { clientMutationId } }",
            ],
            3,
            false,
            vec![],
        ),
        (vec!["api", "graphql", "-F", "query=@merge.graphql"], 3, false, vec![]),
        (
            vec!["api", "graphql", "-F", "query=@read.graphql"],
            2,
            false,
            vec!["POST /api/graphql"],
        ),
        (vec!["api", "graphql", "-F", "query=@missing.graphql"], 3, false, vec![]),
        (vec!["api", "https://evil.example/x"], 3, false, vec![]),
    ];
    for (args, tier, dry, want) in &cases {
        srv.forget();
        let out = run(&env, &work, "gh", args, *tier, *dry);
        let expect_code = if want.is_empty() && !dry { 77 } else { 0 };
        assert_eq!(out.code, expect_code, "{args:?} at tier {tier}: {}", out.stderr);
        assert_eq!(srv.lines(), *want, "{args:?} at tier {tier}: {}", out.stderr);
    }
    // What an allowed call sent: the pinned token, the body gh built.
    srv.forget();
    let out = run(
        &env,
        &work,
        "gh",
        &["api", "repos/o/r/issues/7/comments", "-f", "body=restarted"],
        2,
        false,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let r = &srv.requests()[0];
    assert_eq!(r.line(), "POST /api/v3/repos/o/r/issues/7/comments");
    assert_eq!(r.header("authorization"), Some("token tok-for-tests"));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&r.body).unwrap(),
        serde_json::json!({"body": "restarted"})
    );
    // A caller's GH_HOST that is not the pinned one refuses the call.
    srv.forget();
    let mut c = env.cmd("gh", &["api", "user"]);
    c.current_dir(&work).env("CLAUDEOPS_TIER", "1").env("GH_HOST", "github.com");
    assert_eq!(c.output().unwrap().status.code(), Some(77));
    assert!(srv.lines().is_empty());
}

fn explain(args: &[&str]) -> serde_json::Value {
    let out = Command::new(crate::harness::bin())
        .arg("explain")
        .arg("--json")
        .args(args)
        .env_remove("CLAUDEOPS_TIER")
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn explain_names_the_endpoint_rule_for_gh_api_and_curl_alike() {
    for (call, verdict, rule, tier) in [
        (
            &["gh", "api", "-X", "PUT", "repos/o/r/pulls/1/merge"][..],
            "refuse",
            "http.pulls.merge",
            "never",
        ),
        (
            &["curl", "-XPUT", "https://ghe.example/api/v3/repos/o/r/pulls/1/merge"],
            "refuse",
            "http.pulls.merge",
            "never",
        ),
        // Outside a clone of o/r the scope check cannot work out the pull request's files.
        (
            &["gh", "api", "repos/o/r/pulls", "-f", "head=fix", "-f", "base=main"],
            "refuse",
            "gh.scope",
            "never",
        ),
        (
            &["gh", "api", "repos/o/r/issues", "-f", "title=x"],
            "allow",
            "http.issues.create",
            "2",
        ),
        (
            &[
                "gh",
                "api",
                "-X",
                "PUT",
                "repos/o/r/contents/checks/a.md",
                "-f",
                "content=eA==",
                "-f",
                "branch=fix",
            ],
            "allow",
            "http.contents.write",
            "3",
        ),
        (
            &["gh", "api", "-X", "PUT", "repos/o/r/branches/main/protection"],
            "refuse",
            "http.branch-protection",
            "never",
        ),
        (
            &["gh", "api", "-X", "PUT", "repos/o/r/actions/secrets/T", "-f", "encrypted_value=x"],
            "refuse",
            "http.secrets",
            "never",
        ),
        (
            &["gh", "api", "repos/o/r/keys", "-f", "key=ssh-ed25519 A"],
            "refuse",
            "http.deploy-keys",
            "never",
        ),
        (&["gh", "api", "repos/o/r/hooks", "-f", "name=web"], "refuse", "http.hooks", "never"),
        (
            &[
                "gh",
                "api",
                "graphql",
                "-f",
                "query=mutation { addStar(input: {starrableId: \"S\"}) { clientMutationId } }",
            ],
            "allow",
            "http.graphql.mutation",
            "3",
        ),
        (
            &[
                "gh",
                "api",
                "graphql",
                "-f",
                "query=mutation { deleteRef(input: {refId: \"R\"}) { clientMutationId } }",
            ],
            "refuse",
            "http.commit-on-branch",
            "never",
        ),
        (
            &["gh", "api", "graphql", "-f", "query={ viewer { login } }"],
            "allow",
            "gh.api.graphql",
            "1",
        ),
        (&["curl", "http://127.0.0.1:2375/info"], "refuse", "curl.docker-api", "never"),
        (
            &["curl", "--unix-socket", "/run/docker.sock", "http://x/info"],
            "refuse",
            "curl.docker-api",
            "never",
        ),
    ] {
        let v = explain(&[&["--tier", "3", "--"][..], call].concat());
        let got = (
            v["verdict"].as_str().unwrap(),
            v["rule"].as_str().unwrap(),
            v["required_tier"].to_string().replace('"', ""),
        );
        assert_eq!(got, (verdict, rule, tier.to_string()), "{call:?}: {v}");
    }
}

#[test]
fn explain_checks_local_files_against_the_directory_it_is_given() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("pr.json"), r#"{"head":"fix","base":"main"}"#).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", work.join("p.json")).unwrap();
    let cwd = work.to_str().unwrap();
    let v = explain(&[
        "--tier",
        "2",
        "--cwd",
        cwd,
        "--",
        "curl",
        "-d",
        "@pr.json",
        "https://h/api/v1/repos/o/r/issues",
    ]);
    assert_eq!(
        (v["verdict"].as_str(), v["rule"].as_str()),
        (Some("allow"), Some("http.issues.create")),
        "{v}"
    );
    let v = explain(&["--tier", "3", "--cwd", cwd, "--", "curl", "-d", "@p.json", "https://h/x"]);
    assert_eq!(
        (v["verdict"].as_str(), v["rule"].as_str()),
        (Some("refuse"), Some("curl.local-file")),
        "{v}"
    );
    assert!(v["reasons"].to_string().contains("/etc/passwd"), "{v}");
}

#[test]
fn operator_endpoint_rules_in_tiershim_yaml_judge_their_own_services() {
    let srv = HttpServer::start();
    let rules = "endpoints:\n  - id: http.billing.refund\n    methods: [POST]\n    path: \"**/billing/refunds\"\n    tier: never\n    what: \"refunding a payment\"\n    instead: \"ask finance\"\n    examples:\n      refuse: [[curl, -d, id=1, \"https://billing.internal/api/billing/refunds\"]]\n";
    let env = TestEnv::new(3, &format!("real:\n  curl: {}\n{rules}", real("curl").display()));
    let work = env.path("work");
    std::fs::create_dir_all(&work).unwrap();
    let out = run(
        &env,
        &work,
        "curl",
        &["-s", "-d", "id=1", &format!("{}/api/billing/refunds", srv.url())],
        3,
        false,
    );
    assert_eq!(out.code, 77, "{}", out.stderr);
    assert!(
        out.stderr.contains("refunding a payment") && out.stderr.contains("ask finance"),
        "{}",
        out.stderr
    );
    assert!(srv.lines().is_empty());
    // Everything else is judged as before.
    let out = run(
        &env,
        &work,
        "curl",
        &["-s", "-d", "id=1", &format!("{}/api/billing/invoices", srv.url())],
        2,
        false,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(srv.lines(), vec!["POST /api/billing/invoices"]);
    // A rule whose example disagrees stops every curl call, naming the file and the line.
    let bad = rules.replace("refuse: [[curl, -d, id=1,", "refuse: [[curl,");
    env.write_config(&format!(
        "tier: 3\nreal:\n  curl: {}\naudit_log: {}\n{}",
        real("curl").display(),
        env.audit.display(),
        bad
    ));
    let out = run(&env, &work, "curl", &["-s", &format!("{}/health", srv.url())], 1, false);
    assert_eq!(out.code, 78, "{}", out.stderr);
    assert!(
        out.stderr.contains("tiershim.yaml") && out.stderr.contains("line 6"),
        "{}",
        out.stderr
    );
}

/// A real tool behind a script that does what an agent could do between the gate's check and
/// the tool's read: replace each file `X` of the working directory that has an `X.evil` with it.
fn swapping(dir: &Path, tool: &str) -> PathBuf {
    let p = dir.join(format!("{tool}-swapping"));
    crate::harness::write_exec(
        &p,
        &format!(
            "#!/bin/sh\nfor e in *.evil; do [ -f \"$e\" ] && /bin/cp \"$e\" \"${{e%.evil}}\"; done\nexec {} \"$@\"\n",
            real(tool).display()
        ),
    );
    p
}

#[test]
fn request_files_changed_after_the_check_reach_the_server_as_the_gate_read_them() {
    let srv = HttpServer::start();
    let env = TestEnv::new(3, "");
    let curl = swapping(&env.real, "curl");
    env.write_config(&format!(
        "tier: 3\nreal:\n  curl: {}\nreal_dirs: [{}]\nworkspaces: [{}]\n",
        curl.display(),
        env.real.display(),
        env.tmp.path().display()
    ));
    let work = env.path("work");
    std::fs::create_dir_all(&work).unwrap();
    // What the gate judges, and what the agent swaps in before the tool reads it.
    let fresh = || {
        for (name, judged, swapped) in [
            ("body.json", r#"{"event":"COMMENT"}"#, r#"{"event":"APPROVE"}"#),
            ("raw.json", r#"{"state":"open"}"#, r#"{"state":"closed"}"#),
            ("hdr.txt", "X-Trace: 42\n", "X-HTTP-Method-Override: DELETE\n"),
            ("enc.txt", "a b", "DROP"),
        ] {
            std::fs::write(work.join(name), judged).unwrap();
            std::fs::write(work.join(format!("{name}.evil")), swapped).unwrap();
        }
    };
    let reviews = format!("{}/repos/o/r/pulls/1/reviews", srv.url());
    for (args, body) in [
        (vec!["-s", "-d", "@body.json", reviews.as_str()], r#"{"event":"COMMENT"}"#),
        (vec!["-s", "--data-binary", "@raw.json", reviews.as_str()], r#"{"state":"open"}"#),
        (vec!["-s", "--data-urlencode", "q@enc.txt", reviews.as_str()], "q=a+b"),
    ] {
        fresh();
        srv.forget();
        let out = run(&env, &work, "curl", &args, 2, false);
        assert_eq!(out.code, 0, "curl {args:?}: {}", out.stderr);
        let got = srv.requests();
        assert_eq!(got.len(), 1, "curl {args:?}");
        assert_eq!(got[0].body, body, "curl {args:?}");
        // The swap did happen: the tool was handed the bytes the gate read instead.
        assert_eq!(std::fs::read_to_string(work.join("body.json")).unwrap(), r#"{"event":"APPROVE"}"#);
    }
    fresh();
    srv.forget();
    let out = run(
        &env,
        &work,
        "curl",
        &["-s", "-H", "@hdr.txt", &format!("{}/items/1", srv.url())],
        2,
        false,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(srv.requests()[0].method, "GET");
    assert_eq!(srv.requests()[0].header("x-trace"), Some("42"));
    assert_eq!(srv.requests()[0].header("x-http-method-override"), None);
    assert_eq!(
        std::fs::read_to_string(work.join("hdr.txt")).unwrap(),
        "X-HTTP-Method-Override: DELETE\n"
    );

    // gh: --input and -F k=@file.
    let gh = swapping(&env.real, "gh");
    let (genv, _tls, gwork) = gh_env_with(&srv, &gh);
    std::fs::write(gwork.join("in.json"), r#"{"title":"disk full"}"#).unwrap();
    std::fs::write(gwork.join("in.json.evil"), r#"{"title":"x","state":"closed"}"#).unwrap();
    std::fs::write(gwork.join("q.graphql"), "query { viewer { login } }").unwrap();
    std::fs::write(
        gwork.join("q.graphql.evil"),
        "mutation { mergePullRequest(input: {pullRequestId: \"P\"}) { clientMutationId } }",
    )
    .unwrap();
    srv.forget();
    let out = run(&genv, &gwork, "gh", &["api", "repos/o/r/issues", "--input", "in.json"], 2, false);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(srv.requests()[0].body, r#"{"title":"disk full"}"#);
    std::fs::write(gwork.join("q.graphql"), "query { viewer { login } }").unwrap();
    srv.forget();
    let out = run(&genv, &gwork, "gh", &["api", "graphql", "-F", "query=@q.graphql"], 2, false);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = &srv.requests()[0].body;
    assert!(sent.contains("viewer") && !sent.contains("merge"), "{sent}");
}
