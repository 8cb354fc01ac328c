//! The real kubectl (1.31.9) and helm (3.17.3), pinned in scripts/test-deps.sh, behind the gate,
//! against a fake Kubernetes API server on 127.0.0.1 that records every request
//! (`tests/kube/fake_apiserver.py`): a verdict is compared with what the tool really sent. Reads
//! send only GETs; a refused call sends nothing at all; `rollout restart` sends the one PATCH and
//! counts against the workload's restart budget whatever spelling names it; a helm upgrade sends
//! the release and counts against the release's redeploy budget.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::harden::Account;
use crate::harness::{Run, TestEnv};
use crate::installed::repo;

/// The real kubectl or helm test-deps.sh unpacks; under CI its absence fails the test.
fn real(tool: &str) -> Option<PathBuf> {
    let p = repo().join(format!("target/test-deps/kube/{tool}/{tool}"));
    if p.is_file() {
        return Some(p);
    }
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "{tool} is not installed at {}: scripts/test-deps.sh unpacks it from the npm registry (make test runs it)",
        p.display()
    );
    eprintln!("SKIPPED: {tool} is not installed at {}; run scripts/test-deps.sh", p.display());
    None
}

/// The fake API server; stopped on drop.
struct ApiServer {
    child: Child,
    port: String,
    record: PathBuf,
    _dir: tempfile::TempDir,
}

impl ApiServer {
    fn start() -> ApiServer {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("record.jsonl");
        let port_file = dir.path().join("port");
        let mut child = Command::new("python3")
            .arg(repo().join("tests/kube/fake_apiserver.py"))
            .arg(&record)
            .arg(&port_file)
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 runs the fake API server (scripts/test-deps.sh installs python3)");
        for _ in 0..500 {
            if let Ok(port) = std::fs::read_to_string(&port_file) {
                return ApiServer {
                    child,
                    port,
                    record,
                    _dir: dir,
                };
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("the fake API server did not start");
    }

    /// Every request so far, as (method, path with query, body).
    fn requests(&self) -> Vec<(String, String, String)> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (
                    v["method"].as_str().unwrap().to_string(),
                    v["path"].as_str().unwrap().to_string(),
                    v["body"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    fn forget(&self) {
        let _ = std::fs::write(&self.record, "");
    }

    /// The requests that change something.
    fn writes(&self) -> Vec<(String, String, String)> {
        self.requests().into_iter().filter(|(m, _, _)| m != "GET").collect()
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tier directory whose real kubectl and helm are the pinned ones, with a kubeconfig for the
/// fake API server pinned as KUBECONFIG (root's, readable by all), a cooldown state file, and
/// `extra` lines.
struct Kube {
    env: TestEnv,
    api: ApiServer,
    state: PathBuf,
    kubeconfig: PathBuf,
}

/// `pins`: more `env:` lines (indented) for tiershim.yaml.
fn kube(pins: &str) -> Option<Kube> {
    let (kubectl, helm) = (real("kubectl")?, real("helm")?);
    let env = TestEnv::new(3, "");
    let api = ApiServer::start();
    let kubeconfig = env.path("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: fake, cluster: {{server: \"http://127.0.0.1:{}\"}}}}]\n\
             users: [{{name: agent, user: {{}}}}]\n\
             contexts: [{{name: fake, context: {{cluster: fake, user: agent, namespace: default}}}}]\n\
             current-context: fake\n",
            api.port
        ),
    )
    .unwrap();
    let state_dir = env.path("state");
    std::fs::create_dir(&state_dir).unwrap();
    let state = state_dir.join("cooldown.json");
    env.write_config(&format!(
        "tier: 3\nreal_dirs: [{}]\nreal: {{kubectl: {}, helm: {}}}\naudit_log: {}\ncooldown_state: {}\nworkspaces: [{}]\nenv:\n  KUBECONFIG: {}\n{pins}",
        env.real.display(),
        kubectl.display(),
        helm.display(),
        env.audit.display(),
        state.display(),
        env.tmp.path().display(),
        kubeconfig.display(),
    ));
    Some(Kube {
        env,
        api,
        state,
        kubeconfig,
    })
}

impl Kube {
    fn run(&self, tool: &str, args: &[&str], tier: &str) -> Run {
        self.env.run(tool, args, &[("CLAUDEOPS_TIER", tier)])
    }

    fn state(&self) -> String {
        std::fs::read_to_string(&self.state).unwrap_or_default()
    }
}

/// Refused (77) by `rule`, as the audit record names it.
fn refused_by(env: &TestEnv, r: &Run, rule: &str) {
    assert_eq!(r.code(), 77, "stdout: {} stderr: {}", r.stdout(), r.stderr());
    assert_eq!(env.last_audit()["rule"].as_str(), Some(rule), "{}", r.stderr());
}

fn allowed(r: &Run) {
    assert_eq!(r.code(), 0, "stdout: {} stderr: {}", r.stdout(), r.stderr());
}

#[test]
fn kubectl_reads_at_tier_1_send_only_gets() {
    let Some(k) = kube("") else { return };
    for args in [
        &["get", "pods"][..],
        &["-n", "default", "get", "deploy", "api", "-o", "yaml"],
        &["get", "deployment.apps/api", "-o", "json"],
        &["describe", "deploy", "api"],
        &["api-resources"],
    ] {
        let r = k.run("kubectl", args, "1");
        allowed(&r);
    }
    let reqs = k.api.requests();
    assert!(!reqs.is_empty());
    assert!(k.api.writes().is_empty(), "a read wrote: {:?}", k.api.writes());
    assert!(k.run("kubectl", &["get", "pods"], "1").stdout().contains("api-0"));
}

#[test]
fn a_secret_is_never_printed_and_kubectl_is_never_asked() {
    let Some(k) = kube("") else { return };
    for args in [
        &["get", "secret", "db", "-o", "yaml"][..],
        &["get", "secrets"],
        &["-n", "default", "get", "Secret/db", "-o", "jsonpath={.data.password}"],
        &["get", "--raw", "/api/v1/namespaces/default/secrets/db"],
    ] {
        let r = k.run("kubectl", args, "3");
        refused_by(&k.env, &r, "kubectl.secret");
        assert!(!r.stdout().contains("aHVudGVyMg"), "{}", r.stdout());
    }
    assert!(k.api.requests().is_empty(), "{:?}", k.api.requests());
    // describe shows the keys, not the values.
    let r = k.run("kubectl", &["describe", "secret", "db"], "1");
    allowed(&r);
    assert!(
        !r.stdout().contains("aHVudGVyMg") && !r.stdout().contains("hunter2"),
        "{}",
        r.stdout()
    );
}

#[test]
fn rollout_restart_sends_one_patch_and_counts_every_spelling_against_one_budget() {
    let Some(k) = kube("") else { return };
    let r = k.run("kubectl", &["rollout", "restart", "deploy/api"], "2");
    allowed(&r);
    let writes = k.api.writes();
    assert_eq!(writes.len(), 1, "{writes:?}");
    let (method, path, body) = &writes[0];
    assert_eq!(method, "PATCH");
    assert!(path.starts_with("/apis/apps/v1/namespaces/default/deployments/api?"), "{path}");
    assert!(body.contains("kubectl.kubernetes.io/restartedAt"), "{body}");
    assert!(k.state().contains("deployment/api"), "{}", k.state());
    // Another spelling of the same deployment is the same budget (2 restarts in 4 hours).
    allowed(&k.run("kubectl", &["-n", "default", "rollout", "restart", "deployment.apps/api"], "2"));
    k.api.forget();
    let r = k.run("kubectl", &["rollout", "restart", "deployments", "api"], "2");
    refused_by(&k.env, &r, "kubectl.cooldown");
    assert!(
        k.api.requests().is_empty(),
        "a refused restart reached the API: {:?}",
        k.api.requests()
    );
}

#[test]
fn a_restart_that_names_no_workload_cannot_be_counted_below_tier_3() {
    let Some(k) = kube("") else { return };
    refused_by(
        &k.env,
        &k.run("kubectl", &["rollout", "restart", "deploy", "-l", "app=api"], "2"),
        "kubectl.cooldown-target",
    );
    refused_by(
        &k.env,
        &k.run("kubectl", &["rollout", "restart", "deployment"], "2"),
        "kubectl.cooldown-target",
    );
    assert!(k.api.requests().is_empty());
}

#[test]
fn tier_3_changes_send_what_the_verdict_named() {
    let Some(k) = kube("") else { return };
    refused_by(
        &k.env,
        &k.run("kubectl", &["scale", "deploy/api", "--replicas=3"], "2"),
        "kubectl.change",
    );
    assert!(k.api.requests().is_empty());
    allowed(&k.run("kubectl", &["scale", "deploy/api", "--replicas=3"], "3"));
    let writes = k.api.writes();
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert_eq!(writes[0].0, "PATCH");
    assert!(
        writes[0].1.starts_with("/apis/apps/v1/namespaces/default/deployments/api/scale"),
        "{:?}",
        writes[0]
    );
    k.api.forget();
    allowed(&k.run("kubectl", &["delete", "pod", "api-0"], "3"));
    let writes = k.api.writes();
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert_eq!(writes[0].0, "DELETE");
    assert!(writes[0].1.starts_with("/api/v1/namespaces/default/pods/api-0"), "{:?}", writes[0]);
}

#[test]
fn deleting_anything_but_pods_draining_and_choosing_the_cluster_send_nothing() {
    let Some(k) = kube("") else { return };
    refused_by(&k.env, &k.run("kubectl", &["delete", "deploy", "api"], "3"), "kubectl.delete");
    refused_by(
        &k.env,
        &k.run(
            "kubectl",
            &["delete", "--raw", "/apis/apps/v1/namespaces/default/deployments/api"],
            "3",
        ),
        "kubectl.delete",
    );
    refused_by(&k.env, &k.run("kubectl", &["drain", "node-1"], "3"), "kubectl.never");
    refused_by(
        &k.env,
        &k.run("kubectl", &["--server", "http://127.0.0.1:1", "get", "pods"], "3"),
        "kubectl.connection",
    );
    refused_by(
        &k.env,
        &k.run("kubectl", &["get", "pods", "--token", "x"], "3"),
        "kubectl.connection",
    );
    refused_by(
        &k.env,
        &k.run("kubectl", &["--kubeconfig", "/tmp/other", "get", "pods"], "3"),
        "kubectl.pinned",
    );
    let r = k.env.run(
        "kubectl",
        &["get", "pods"],
        &[("CLAUDEOPS_TIER", "3"), ("KUBECONFIG", "/tmp/other")],
    );
    refused_by(&k.env, &r, "kubectl.pinned-env");
    assert!(k.api.requests().is_empty(), "{:?}", k.api.requests());
    // The pinned kubeconfig named again is the same cluster.
    allowed(&k.run("kubectl", &["--kubeconfig", k.kubeconfig.to_str().unwrap(), "get", "pods"], "1"));
}

#[test]
fn kubectl_gets_no_caller_variable_that_runs_a_program() {
    let Some(k) = kube("") else { return };
    // kubectl's environment is an allow-list: KUBECTL_EXTERNAL_DIFF and KUBE_EDITOR never reach
    // it; what does is recorded by a stub standing in for kubectl.
    let stubbed = TestEnv::new(3, "env:\n  KUBECONFIG: /etc/kube/agent.conf\n");
    let r = stubbed.run(
        "kubectl",
        &["get", "pods"],
        &[
            ("CLAUDEOPS_TIER", "1"),
            ("KUBECTL_EXTERNAL_DIFF", "/tmp/x"),
            ("KUBE_EDITOR", "/tmp/x"),
            ("KUBECTL_KUBERC", "/tmp/rc"),
            ("LANG", "C.UTF-8"),
        ],
    );
    allowed(&r);
    let env = stubbed.received_env("kubectl").unwrap();
    for v in ["KUBECTL_EXTERNAL_DIFF", "KUBE_EDITOR", "KUBECTL_KUBERC"] {
        assert!(!env.contains_key(v), "{v} reached kubectl");
    }
    assert_eq!(env.get("KUBECONFIG").map(String::as_str), Some("/etc/kube/agent.conf"));
    assert_eq!(env.get("LANG").map(String::as_str), Some("C.UTF-8"));
    drop(k);
}

/// An operator's chart: root-owned, not writable by anyone else.
fn operator_chart(dir: &Path) -> PathBuf {
    let chart = dir.join("charts/web");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(chart.join("Chart.yaml"), "apiVersion: v2\nname: web\nversion: 0.1.0\n").unwrap();
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  greeting: hello\n",
    )
    .unwrap();
    for p in [dir.join("charts"), chart.clone(), chart.join("templates")] {
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    chart
}

/// Run the gate's link for `tool` as `agent` in `dir`.
fn as_agent(k: &Kube, agent: &Account, dir: &Path, tool: &str, args: &[&str], tier: &str) -> std::process::Output {
    let link = k.env.dir.join(tool);
    let mut argv = vec![link.to_str().unwrap()];
    argv.extend_from_slice(args);
    agent.run_in(dir, &argv, &[("CLAUDEOPS_TIER", tier), ("PATH", k.env.dir.to_str().unwrap())])
}

fn root_or_skip(name: &str) -> bool {
    if nix::unistd::getuid().is_root() {
        return true;
    }
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "{name} must run as root under CI (it makes the agent's user)"
    );
    eprintln!("SKIPPED {name}: not root");
    false
}

#[test]
fn helm_reads_at_tier_1_and_an_upgrade_at_tier_3_spends_the_release_budget() {
    if !root_or_skip("helm_reads_at_tier_1_and_an_upgrade_at_tier_3_spends_the_release_budget") {
        return;
    }
    let agent = Account::create();
    // helm keeps its caches where the agent's user can write (the tool home is root's).
    let Some(k) = kube(&format!(
        "  HELM_CACHE_HOME: /tmp/helm-cache-{0}\n  HELM_CONFIG_HOME: /tmp/helm-config-{0}\n  HELM_DATA_HOME: /tmp/helm-data-{0}\n",
        agent.uid
    )) else {
        return;
    };
    // The agent appends to the audit log and the cooldown state (an unhardened install).
    std::fs::write(&k.env.audit, "").unwrap();
    std::fs::set_permissions(&k.env.audit, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    std::fs::set_permissions(k.env.path("state"), std::os::unix::fs::PermissionsExt::from_mode(0o1777)).unwrap();
    let chart = operator_chart(k.env.tmp.path());
    let cwd = k.env.tmp.path();
    let out = as_agent(&k, &agent, cwd, "helm", &["list"], "1");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        k.api
            .requests()
            .iter()
            .map(|(m, p, _)| format!("{m} {p}"))
            .collect::<Vec<_>>()
            .last()
            .map(String::as_str),
        Some("GET /api/v1/namespaces/default/secrets?labelSelector=owner%3Dhelm")
    );
    assert!(k.api.writes().is_empty());
    let upgrade = [
        "upgrade",
        "--install",
        "web",
        chart.to_str().unwrap(),
        "--disable-openapi-validation",
    ];
    let out = as_agent(&k, &agent, cwd, "helm", &upgrade, "2");
    assert_eq!(out.status.code(), Some(77), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(k.api.writes().is_empty());
    let out = as_agent(&k, &agent, cwd, "helm", &upgrade, "3");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let writes: Vec<String> = k.api.writes().into_iter().map(|(m, p, _)| format!("{m} {p}")).collect();
    assert!(
        writes.iter().any(|w| w.starts_with("POST /api/v1/namespaces/default/configmaps")),
        "{writes:?}"
    );
    assert!(
        writes.iter().any(|w| w.starts_with("POST /api/v1/namespaces/default/secrets")),
        "{writes:?}"
    );
    assert!(k.state().contains("release/web"), "{}", k.state());
    // One redeployment per release in 24 hours: the next upgrade reaches nothing.
    k.api.forget();
    let out = as_agent(&k, &agent, cwd, "helm", &upgrade, "3");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(77), "{err}");
    assert!(err.contains("cooldown for release/web"), "{err}");
    assert_eq!(k.env.last_audit()["rule"].as_str(), Some("helm.cooldown"));
    assert!(k.api.requests().is_empty(), "{:?}", k.api.requests());
}

#[test]
fn a_chart_the_agent_could_have_written_is_refused_before_helm_runs() {
    if !root_or_skip("a_chart_the_agent_could_have_written_is_refused_before_helm_runs") {
        return;
    }
    let Some(k) = kube("") else { return };
    let agent = Account::create();
    std::fs::write(&k.env.audit, "").unwrap();
    std::fs::set_permissions(&k.env.audit, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    let chart = operator_chart(k.env.tmp.path());
    // One template the agent owns.
    nix::unistd::chown(&chart.join("templates/cm.yaml"), Some(nix::unistd::Uid::from_raw(agent.uid)), None).unwrap();
    let out = as_agent(
        &k,
        &agent,
        k.env.tmp.path(),
        "helm",
        &["upgrade", "--install", "web", chart.to_str().unwrap()],
        "3",
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(77), "{err}");
    assert!(err.contains("rule helm.agent-file"), "{err}");
    let reasons = k.env.last_audit()["reasons"].to_string();
    assert!(
        reasons.contains("cm.yaml") && reasons.contains(&format!("uid {} can write", agent.uid)),
        "{reasons}"
    );
    assert!(k.api.requests().is_empty(), "{:?}", k.api.requests());
    // Uninstall is never allowed.
    let out = as_agent(&k, &agent, k.env.tmp.path(), "helm", &["uninstall", "web"], "3");
    assert_eq!(out.status.code(), Some(77));
    assert!(k.api.requests().is_empty(), "{:?}", k.api.requests());
}

#[test]
fn kubectl_over_ssh_is_judged_by_the_kubectl_policy() {
    let env = TestEnv::new(3, "");
    let r = env.run("ssh", &["ie01", "kubectl get secret db -o yaml"], &[("CLAUDEOPS_TIER", "3")]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("kubectl.secret"), "{}", r.stderr());
    let r = env.run("ssh", &["ie01", "kubectl get pods -n prod"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let r = env.run("ssh", &["ie01", "helm uninstall api"], &[("CLAUDEOPS_TIER", "3")]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("helm.uninstall"), "{}", r.stderr());
}

/// Every argv of a small generated set (global flags before and after the verb, resource
/// spellings, output formats, `--`), judged at tier 1 and, when allowed, run by the real kubectl:
/// an allowed call sends only GETs and never reads a secret; a refused one sends nothing.
#[test]
fn what_kubectl_sends_for_every_call_the_gate_allows_at_tier_1_is_a_read_of_no_secret() {
    let Some(k) = kube("") else { return };
    let resources: &[&[&str]] = &[
        &["pods"],
        &["po", "api-0"],
        &["pod/api-0"],
        &["deploy", "api"],
        &["deployment.apps/api"],
        &["Deployments.v1.apps", "api"],
        &["configmaps"],
        &["secrets"],
        &["secret/db"],
        &["Secret", "db"],
        &["secrets.v1."],
        &["configmaps,secrets"],
        &["--", "secrets"],
    ];
    let outputs: &[&[&str]] = &[&[], &["-o", "yaml"], &["-o=json"], &["-oname"], &["--output", "jsonpath={.items}"]];
    let mut allowed_calls = 0;
    for verb in ["get", "describe"] {
        for res in resources {
            for out in outputs {
                for ns_first in [true, false] {
                    let mut argv: Vec<&str> = Vec::new();
                    if ns_first {
                        argv.extend(["-n", "default"]);
                    }
                    argv.push(verb);
                    if verb == "describe" && !out.is_empty() {
                        continue;
                    }
                    // `--` must come last: the options go before it.
                    let (opts, tail): (Vec<&str>, Vec<&str>) = if res.first() == Some(&"--") {
                        (out.to_vec(), res.to_vec())
                    } else {
                        let mut v = res.to_vec();
                        v.extend_from_slice(out);
                        (Vec::new(), v)
                    };
                    argv.extend(opts);
                    argv.extend(tail);
                    if !ns_first {
                        argv.splice(1..1, ["--namespace=default"]);
                    }
                    k.api.forget();
                    let r = k.run("kubectl", &argv, "1");
                    let reqs = k.api.requests();
                    match r.code() {
                        77 => assert!(reqs.is_empty(), "refused {argv:?} sent {reqs:?}"),
                        _ => {
                            allowed_calls += 1;
                            for (m, p, _) in &reqs {
                                assert_eq!(m, "GET", "{argv:?} sent {m} {p}");
                                let secret_read = p.contains("/secrets") && verb == "get";
                                assert!(!secret_read, "{argv:?} read a secret: {p}");
                                assert!(!r.stdout().contains("aHVudGVyMg"), "{argv:?} printed the secret");
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(allowed_calls > 40, "only {allowed_calls} calls were allowed");
}
