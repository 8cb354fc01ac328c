//! Differential tests: what the real tools send, compared with what the gate judged.
//!
//! For each tool a generator with a fixed seed makes hundreds of argv variants: option
//! spellings (abbreviations, case, clusters, `=value`), operands that a client pastes into an
//! API path, uploads to directory URLs, globs, repeated fields, placeholders, method overrides.
//! Each variant is judged by `tiershim explain --json` at tier 3. Each one the gate allows is
//! then run by the real tool, directly, against a recorder on this machine: the real docker CLI
//! against a fake Docker Engine on a unix socket, the real curl against an HTTP recorder, and
//! Debian's gh against the same recorder behind TLS. Every request the tool really sent is then
//! judged on its own:
//!
//! - docker: its route must be one the table below knows, at a tier no higher than the one the
//!   gate asked for the call (`GET /swarm`, the swarm's join tokens, is never), its query
//!   string included (`stop?signal=KILL` is a kill, `DELETE /containers/x?v=1` deletes volumes);
//! - curl and gh: the request as the recorder saw it (method, path, query, headers, body) must
//!   need no higher tier than the call did, by this file's own rules ([`request_floor`]: what
//!   the endpoints do, every method override a server may honour), never the gate's grammar or
//!   policy; and its path must be one the gate judged for the call.
//!
//! Any difference is a failure that names the variant and the request. The next grammar change
//! is checked against the real tools by the same run.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::docker_engine::Engine;
use crate::http_server::{HttpServer, TlsFront};

/// A fixed-seed xorshift64* generator: the same variants on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[(self.next() % v.len() as u64) as usize]
    }

    fn chance(&mut self, in_n: u64) -> bool {
        self.next().is_multiple_of(in_n)
    }
}

fn real(tool: &str) -> PathBuf {
    ["/usr/bin", "/bin", "/usr/local/bin"]
        .iter()
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{tool} is not installed; scripts/test-deps.sh installs it"))
}

/// What the gate said about a call at tier 3.
#[derive(Debug)]
struct Judged {
    allowed: bool,
    /// 1..=3, or 4 for never.
    tier: u8,
    /// `METHOD /path` of every HTTP request the gate judged (paths as it normalised them).
    requests: BTreeSet<String>,
    reasons: String,
}

fn explain(config: Option<&Path>, cwd: &Path, tool: &str, args: &[String]) -> Judged {
    let mut c = Command::new(crate::harness::bin());
    c.arg("explain").arg("--json").arg("--tier").arg("3").arg("--cwd").arg(cwd);
    if let Some(cfg) = config {
        c.arg("--config").arg(cfg);
    }
    let out = c
        .arg("--")
        .arg(tool)
        .args(args)
        .env_remove("CLAUDEOPS_TIER")
        .env_remove("CLAUDEOPS_DRY_RUN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("explain {tool} {args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    let tier = match &v["required_tier"] {
        serde_json::Value::Number(n) => n.as_u64().unwrap_or(4) as u8,
        _ => 4,
    };
    let requests = v["actions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| {
            let h = &a["http"];
            Some(format!("{} {}", h["method"].as_str()?, h["path"].as_str()?))
        })
        .collect();
    Judged {
        allowed: v["verdict"] == "allow",
        tier,
        requests,
        reasons: v["reasons"].to_string(),
    }
}

/// Run a real tool with a watchdog (a hung client must not hang the suite); stdin is empty.
fn run_real(mut c: Command) {
    c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

// ---------------------------------------------------------------------------------------------
// docker

/// Docker Engine routes (the version prefix cut) and the tier each needs, as the policy's
/// verbs do: `*` one segment, `**` any number. A route the CLI sent that is not here is a
/// request no rule of the gate was about.
const ENGINE_ROUTES: &[(&str, &str, u8)] = &[
    ("HEAD", "/_ping", 1),
    ("GET", "/_ping", 1),
    ("GET", "/version", 1),
    ("GET", "/info", 1),
    ("GET", "/system/df", 1),
    ("GET", "/containers/json", 1),
    ("GET", "/containers/**/json", 1),
    ("GET", "/containers/*/logs", 1),
    ("GET", "/containers/*/top", 1),
    ("GET", "/containers/*/stats", 1),
    ("GET", "/containers/*/changes", 1),
    ("POST", "/containers/*/wait", 1),
    ("POST", "/containers/*/start", 2),
    ("POST", "/containers/*/stop", 2),
    ("POST", "/containers/*/restart", 2),
    ("POST", "/containers/*/kill", 3),
    ("POST", "/containers/*/pause", 3),
    ("POST", "/containers/*/unpause", 3),
    ("POST", "/containers/*/update", 3),
    ("POST", "/containers/*/rename", 3),
    ("DELETE", "/containers/*", 3),
    ("POST", "/containers/create", 3),
    ("POST", "/containers/*/exec", 3),
    ("POST", "/exec/*/start", 3),
    ("GET", "/exec/*/json", 3),
    ("POST", "/containers/*/attach", 3),
    ("POST", "/containers/*/resize", 3),
    ("GET", "/images/json", 1),
    ("GET", "/images/**/json", 1),
    ("GET", "/images/**/history", 1),
    ("DELETE", "/images/**", 3),
    ("POST", "/images/**/tag", 3),
    ("POST", "/images/create", 3),
    ("GET", "/networks", 1),
    ("GET", "/networks/*", 1),
    ("POST", "/networks/create", 3),
    ("POST", "/networks/*/connect", 3),
    ("POST", "/networks/*/disconnect", 3),
    ("DELETE", "/networks/*", 3),
    ("GET", "/volumes", 1),
    ("GET", "/volumes/*", 1),
    ("POST", "/volumes/create", 3),
    ("GET", "/secrets", 1),
    ("GET", "/secrets/*", 1),
    ("GET", "/configs", 1),
    ("GET", "/configs/*", 1),
    ("GET", "/nodes", 1),
    ("GET", "/nodes/*", 1),
    ("GET", "/services", 1),
    ("GET", "/services/*", 1),
    ("GET", "/tasks", 1),
    ("GET", "/plugins", 1),
    ("GET", "/plugins/**/json", 1),
    ("GET", "/distribution/**/json", 1),
];

fn route_matches(pattern: &str, route: &str) -> bool {
    fn go(p: &[&str], r: &[&str]) -> bool {
        match p.split_first() {
            None => r.is_empty(),
            Some((&"**", rest)) => (1..=r.len()).any(|k| go(rest, &r[k..])),
            Some((seg, rest)) => r.split_first().is_some_and(|(x, more)| (*seg == "*" || seg == x) && go(rest, more)),
        }
    }
    let p: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    let r: Vec<&str> = route.split('/').filter(|s| !s.is_empty()).collect();
    go(&p, &r)
}

/// The tier of a request the CLI sent: its route's, raised by what its query asks: a stop or
/// restart with a signal other than SIGTERM, or no grace period (`t=0`), is a kill (3);
/// removing a container with its volumes (`v=1`) deletes data (never); `force` on a removal is
/// still a removal.
fn engine_tier(method: &str, route: &str, query: &str) -> Option<u8> {
    let base = ENGINE_ROUTES
        .iter()
        .filter(|(m, p, _)| *m == method && route_matches(p, route))
        .map(|(_, _, t)| *t)
        .max()?;
    let params: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (form_decode(k), form_decode(v))
        })
        .collect();
    let param = |k: &str| params.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let truthy = |v: Option<&str>| v.is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true"));
    let mut tier = base;
    if method == "POST" && (route_matches("/containers/*/stop", route) || route_matches("/containers/*/restart", route)) {
        let term = |s: &str| {
            let s = s.to_ascii_uppercase();
            matches!(s.strip_prefix("SIG").unwrap_or(&s), "TERM" | "15")
        };
        if param("signal").is_some_and(|s| !term(s)) || param("t") == Some("0") {
            tier = tier.max(3);
        }
    }
    if method == "DELETE" && route_matches("/containers/*", route) && truthy(param("v")) {
        tier = 4;
    }
    Some(tier)
}

/// Operands a client might paste into a path: names, ids, references, and every way out.
const DOCKER_OPERANDS: &[&str] = &[
    "web",
    "c0ffee",
    "/web",
    "api-1.blue_2",
    "nginx:1.25",
    "registry.example:5000/ops/app:v2",
    "app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "../swarm",
    "../../swarm",
    "../swarm/unlockkey",
    "../exec/e1",
    "../volumes/data",
    "../plugins/p1",
    "web/../../swarm",
    "a/b",
    "..",
    ".",
    "%2e%2e",
    "web%2F..%2Fswarm",
    "web?force=1",
    "web#x",
    "web\\..\\swarm",
    "-",
];

/// `(verb words, operands after it, extra words after the operands)`.
const DOCKER_VERBS: &[(&[&str], usize, &[&str])] = &[
    (&["ps"], 0, &[]),
    (&["container", "ls"], 0, &[]),
    (&["images"], 0, &[]),
    (&["info"], 0, &[]),
    (&["version"], 0, &[]),
    (&["system", "df"], 0, &[]),
    (&["network", "ls"], 0, &[]),
    (&["volume", "ls"], 0, &[]),
    (&["context", "ls"], 0, &[]),
    (&["context", "show"], 0, &[]),
    (&["inspect"], 1, &[]),
    (&["container", "inspect"], 1, &[]),
    (&["network", "inspect"], 1, &[]),
    (&["volume", "inspect"], 1, &[]),
    (&["secret", "inspect"], 1, &[]),
    (&["config", "inspect"], 1, &[]),
    (&["image", "inspect"], 1, &[]),
    (&["history"], 1, &[]),
    (&["logs"], 1, &[]),
    (&["top"], 1, &[]),
    (&["port"], 1, &[]),
    (&["diff"], 1, &[]),
    (&["stats", "--no-stream"], 1, &[]),
    (&["wait"], 1, &[]),
    (&["restart"], 1, &[]),
    (&["container", "restart"], 1, &[]),
    (&["start"], 1, &[]),
    (&["stop"], 1, &[]),
    (&["stop", "-s", "KILL"], 1, &[]),
    (&["stop", "--signal=SIGTERM"], 1, &[]),
    (&["stop", "-t", "0"], 1, &[]),
    (&["restart", "--signal", "9"], 1, &[]),
    (&["rm", "-v"], 1, &[]),
    (&["kill"], 1, &[]),
    (&["pause"], 1, &[]),
    (&["unpause"], 1, &[]),
    (&["rm"], 1, &[]),
    (&["rm", "-f"], 1, &[]),
    (&["container", "rm"], 1, &[]),
    (&["rmi"], 1, &[]),
    (&["tag"], 1, &["copy:1"]),
    (&["update", "--restart", "no"], 1, &[]),
    (&["rename"], 1, &["new-name"]),
    (&["network", "rm"], 1, &[]),
    (&["network", "connect"], 1, &["web"]),
    (&["network", "disconnect"], 1, &["web"]),
    (&["volume", "rm"], 1, &[]),
    (&["plugin", "inspect"], 1, &[]),
    (&["node", "inspect"], 1, &[]),
    (&["service", "inspect"], 1, &[]),
    (&["exec", "-d"], 1, &["true"]),
    (&["create"], 1, &[]),
    (&["run", "-d"], 1, &[]),
];

/// Ways to write the same call: help forms, global options, format options.
fn docker_variant(rng: &mut Rng) -> Vec<String> {
    let (verb, n, extra) = *rng.pick(DOCKER_VERBS);
    let mut w: Vec<String> = Vec::new();
    match rng.next() % 6 {
        0 => w.extend(words(&["-D"])),
        1 => w.extend(words(&["--log-level=error"])),
        2 => w.extend(words(&["-l", "warn"])),
        _ => {}
    }
    w.extend(words(verb));
    for _ in 0..n {
        w.push(rng.pick(DOCKER_OPERANDS).to_string());
    }
    w.extend(words(extra));
    match rng.next() % 14 {
        0 => w.push("--help".into()),
        1 => w.push("-h".into()),
        2 if verb[0] == "ps" || verb[0] == "images" => w.extend(words(&["--format", "{{.ID}}"])),
        3 if verb[0] == "inspect" => w.push("--format={{.Id}}".into()),
        _ => {}
    }
    w
}

#[test]
fn the_real_docker_cli_sends_nothing_the_gate_did_not_judge() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = Engine::start(tmp.path());
    let config = tmp.path().join("docker-config");
    std::fs::create_dir_all(&config).unwrap();
    let docker = real("docker");
    let mut rng = Rng(0x5eed_d0c4);
    let mut seen = BTreeSet::new();
    let (mut allowed, mut ran, mut requests) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut help_refused = Vec::new();
    while seen.len() < 300 {
        let args = docker_variant(&mut rng);
        if !seen.insert(args.clone()) {
            continue;
        }
        let j = explain(None, tmp.path(), "docker", &args);
        let is_help = args.iter().any(|a| a == "--help" || a == "-h") && !args.iter().any(|a| a == "run" || a == "create");
        engine.forget();
        let mut c = Command::new(&docker);
        c.args(&args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", tmp.path())
            .env("DOCKER_HOST", engine.host())
            .env("DOCKER_CONFIG", &config)
            .env("DOCKER_CLI_HINTS", "false");
        run_real(c);
        ran += 1;
        let sent = engine.requests();
        // A help form sends nothing, so refusing it is refusing for nothing.
        if is_help && !j.allowed && sent.iter().all(|r| r.route() == "/_ping") {
            help_refused.push(args.join(" "));
        }
        if !j.allowed {
            continue;
        }
        allowed += 1;
        for r in &sent {
            requests += 1;
            let route = r.route();
            match engine_tier(&r.method, &route, &r.query) {
                None => failures.push(format!(
                    "docker {}: allowed at tier {}, sent {} {}?{} (a route no rule judged)",
                    args.join(" "),
                    j.tier,
                    r.method,
                    r.path,
                    r.query
                )),
                Some(t) if t > j.tier => failures.push(format!(
                    "docker {}: allowed at tier {}, sent {} {}?{} (tier {t})",
                    args.join(" "),
                    j.tier,
                    r.method,
                    r.path,
                    r.query
                )),
                Some(_) => {}
            }
        }
    }
    eprintln!(
        "docker: {} variants, {allowed} allowed, {ran} run, {requests} requests judged",
        seen.len()
    );
    assert!(
        allowed > 100 && requests > 150,
        "too few calls were compared: {allowed} allowed, {requests} requests"
    );
    assert_eq!(failures, Vec::<String>::new());
    assert_eq!(help_refused, Vec::<String>::new(), "help forms refused");
}

// ---------------------------------------------------------------------------------------------
// HTTP: curl and gh

/// The tier a request needs by this test's own reading of what the server got (method, path,
/// query, headers, body), written from what the endpoints do and never from the gate's
/// grammar or policy: a floor the gate's verdict for the call must reach. The server is taken
/// to honour every method override it might (the `X-HTTP-Method-Override` headers, a `_method`
/// field in the query or the body), and to treat a branch named `refs/heads/<b>` as `<b>`.
fn request_floor(r: &crate::http_server::Request, strip: &[&str]) -> (u8, String) {
    let (path, query) = r.target.split_once('?').unwrap_or((&r.target, ""));
    let mut path = normalised(path);
    for prefix in strip {
        if let Some(rest) = path.strip_prefix(prefix)
            && rest.starts_with('/')
        {
            path = rest.to_string();
            break;
        }
    }
    let segs: Vec<String> = path.split('/').filter(|s| !s.is_empty()).map(str::to_ascii_lowercase).collect();
    let seg = |k: usize| segs.get(k).map(String::as_str).unwrap_or("");
    let fields = request_fields(query, &r.body);
    let field = |k: &str| {
        fields
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(k))
            .map(|(_, v)| v.as_str())
    };
    let mut methods = vec![r.method.to_ascii_uppercase()];
    for (k, v) in &r.headers {
        if matches!(k.as_str(), "x-http-method-override" | "x-http-method" | "x-method-override") {
            methods.push(v.trim().to_ascii_uppercase());
        }
    }
    if let Some(m) = field("_method") {
        methods.push(m.trim().to_ascii_uppercase());
    }
    const DEFAULT: &[&str] = &["main", "master", "trunk", "develop", "production"];
    let default_branch = |b: Option<&str>| {
        b.is_none_or(|b| {
            let b = b.strip_prefix("refs/heads/").unwrap_or(b);
            DEFAULT.iter().any(|d| d.eq_ignore_ascii_case(b))
        })
    };
    let mut floor = (1u8, String::from("a read"));
    let mut raise = |t: u8, why: String| {
        if t > floor.0 {
            floor = (t, why);
        }
    };
    let graphql = segs.last().is_some_and(|l| l == "graphql");
    for m in &methods {
        let write = !matches!(m.as_str(), "GET" | "HEAD");
        match m.as_str() {
            "GET" | "HEAD" => {}
            // A GraphQL request is a read or a write by its document (below), not by POST.
            "POST" if graphql => {}
            "DELETE" => raise(3, format!("{m}: a deletion")),
            _ => raise(2, format!("{m}: a write")),
        }
        // The Docker Engine API, on any port.
        if seg(0).starts_with("v1.")
            || matches!(seg(0), "containers" | "exec" | "swarm" | "build")
            || (seg(0), seg(1)) == ("images", "create")
        {
            raise(4, format!("{m} {path}: the Docker Engine API"));
        }
        let numbered = |k: usize| !seg(k).is_empty() && seg(k).bytes().all(|b| b.is_ascii_digit());
        for k in 0..segs.len() {
            if !write {
                break;
            }
            if seg(k) == "pulls" && numbered(k + 1) && seg(k + 2) == "merge" {
                raise(4, format!("{m} {path}: a pull request merged"));
            }
            // A review is created (`POST …/reviews`) or a pending one submitted (`POST
            // …/reviews/<id>/events`) with an event; no other method takes one.
            if m == "POST"
                && seg(k) == "pulls"
                && numbered(k + 1)
                && seg(k + 2) == "reviews"
                && field("event").is_some_and(|e| e.eq_ignore_ascii_case("approve"))
            {
                raise(4, format!("{m} {path}: a pull request approved"));
            }
            if (seg(k), seg(k + 1)) == ("git", "refs") {
                let named = segs[k + 2..].join("/");
                let branch = named
                    .strip_prefix("heads/")
                    .map(str::to_string)
                    .or_else(|| field("ref").map(str::to_string));
                if branch.as_deref().is_some_and(|b| default_branch(Some(b))) {
                    raise(4, format!("{m} {path}: the default branch's ref written"));
                }
            }
            // (The contents API takes PUT, POST and DELETE; a PATCH there changes nothing.)
            if seg(k) == "contents" && k >= 1 && matches!(m.as_str(), "PUT" | "POST" | "DELETE") && default_branch(field("branch")) {
                raise(4, format!("{m} {path}: a file written on the default branch"));
            }
            if seg(k) == "hooks" {
                raise(3, format!("{m} {path}: a webhook (data sent elsewhere)"));
            }
            if ["delete", "destroy", "drop", "purge", "truncate", "wipe", "flush"]
                .iter()
                .any(|w| seg(k).contains(w))
            {
                raise(3, format!("{m} {path}: a destructive action"));
            }
            if (seg(k), seg(k + 1)) == ("_cluster", "settings") {
                raise(3, format!("{m} {path}: cluster settings"));
            }
        }
        if !write
            && matches!(
                segs.last().map(String::as_str),
                Some("keys" | "secrets" | "tokens" | "credentials" | "variables")
            )
        {
            raise(3, format!("{m} {path}: secret values read"));
        }
        if graphql {
            let doc = field("query").unwrap_or("").to_string();
            let compact: String = doc.chars().filter(|c| !c.is_whitespace()).collect();
            if compact.contains("mutation") {
                let forbidden = [
                    "mergePullRequest",
                    "enablePullRequestAutoMerge",
                    "deleteRef",
                    "updateRef",
                    "createCommitOnBranch",
                    "deleteRepository",
                    "createRef",
                ];
                if forbidden.iter().any(|f| compact.contains(f)) || (compact.contains("PullRequestReview") && compact.contains("APPROVE")) {
                    raise(4, format!("graphql: {doc}"));
                } else {
                    raise(2, format!("graphql: a mutation ({doc})"));
                }
            }
        }
    }
    floor
}

/// The fields a server reads from a request: the query string's, then the body's (a JSON
/// object's top-level members and a GraphQL request's `variables`, or a form).
fn request_fields(query: &str, body: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let form = |text: &str, out: &mut Vec<(String, String)>| {
        for pair in text.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            out.push((form_decode(k), form_decode(v)));
        }
    };
    form(query, &mut out);
    match serde_json::from_str::<serde_json::Value>(body) {
        Ok(serde_json::Value::Object(map)) => {
            for (k, v) in &map {
                match (k.as_str(), v) {
                    ("variables", serde_json::Value::Object(vars)) => {
                        for (vk, vv) in vars {
                            out.push((vk.clone(), vv.as_str().map_or_else(|| vv.to_string(), str::to_string)));
                        }
                    }
                    _ => out.push((k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_string))),
                }
            }
        }
        _ => form(body, &mut out),
    }
    out
}

/// `+` and `%XX` decoded, as a form field is.
fn form_decode(s: &str) -> String {
    normalised_bytes(&s.replace('+', " "))
}

/// `%XX` decoded.
fn normalised_bytes(s: &str) -> String {
    let mut bytes = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            bytes.push(v);
            i += 3;
            continue;
        }
        bytes.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A request target's path as the gate normalises one: query cut, decoded, no empty segments.
fn normalised(target: &str) -> String {
    let path = target.split(['?', '#']).next().unwrap_or("");
    let mut bytes = Vec::new();
    let b = path.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(&path[i + 1..i + 3], 16)
        {
            bytes.push(v);
            i += 3;
            continue;
        }
        bytes.push(b[i]);
        i += 1;
    }
    let decoded = String::from_utf8_lossy(&bytes).into_owned();
    let segs: Vec<&str> = decoded.split('/').filter(|s| !s.is_empty()).collect();
    format!("/{}", segs.join("/"))
}

/// Compare what a tool sent for an allowed call with what the gate judged. `paths`: the call
/// is an HTTP call the gate judged request by request (curl, `gh api`), so every path sent must
/// be one it judged; other gh commands are judged by their verb, and only the tier is compared.
#[allow(clippy::too_many_arguments)]
fn compare(what: &str, j: &Judged, sent: &[crate::http_server::Request], strip: &[&str], paths: bool, failures: &mut Vec<String>) -> usize {
    let judged_paths: BTreeSet<String> = j
        .requests
        .iter()
        .filter_map(|r| r.split_once(' ').map(|(_, p)| p.to_ascii_lowercase()))
        .collect();
    for r in sent {
        let (floor, why) = request_floor(r, strip);
        if floor > j.tier {
            failures.push(format!(
                "{what}: allowed at tier {}, sent {} {} body {:?}, which needs tier {floor} ({why})",
                j.tier, r.method, r.target, r.body
            ));
        }
        let mut path = normalised(&r.target);
        for prefix in strip {
            if let Some(rest) = path.strip_prefix(prefix)
                && rest.starts_with('/')
            {
                path = rest.to_string();
                break;
            }
        }
        if paths && !judged_paths.contains(&path.to_ascii_lowercase()) {
            failures.push(format!(
                "{what}: sent {} {} to a path the gate did not judge ({:?})",
                r.method, r.target, j.requests
            ));
        }
    }
    sent.len()
}

const CURL_PATHS: &[&str] = &[
    "/health",
    "/repos/o/r/issues",
    "/repos/o/r/pulls/1/",
    "/repos/o/r/pulls/1/merge",
    "/repos/o/r/pulls/1/reviews",
    "/repos/o/r/git/refs/heads/",
    "/repos/o/r/contents/checks/",
    "/repositories/42/pulls/1/merge",
    "/repositories/42/hooks",
    "/api/v1/repos/o/r/",
    "/idx/_delete_by_query",
    "/job/deploy/doDelete",
    "/indexes/m/documents/delete-batch",
    "/_cluster/settings",
    "/keys",
    "/api/v4/projects/42/variables",
    "/images/create",
    "/swarm",
    "/v1.45/containers/json",
    "/items/{1,2}",
    "/items/[1-2]/",
    "/search?q=a",
    "/items/1?_method=DELETE",
];

/// Files in the working directory that uploads name: their names are endpoints.
const UPLOADS: &[&str] = &["merge", "reviews", "main", "a.md", "{merge,a.md}", "sub/merge", "-"];

fn curl_variant(rng: &mut Rng, base: &str) -> Vec<String> {
    let mut w = Vec::new();
    w.push(
        rng.pick(&["-s", "--silent", "--SILENT", "--sil", "-sS", "--no-progress-meter"])
            .to_string(),
    );
    let method = *rng.pick(&["", "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "put"]);
    if !method.is_empty() {
        match rng.next() % 5 {
            0 => w.extend([String::from("-X"), method.into()]),
            1 => w.push(format!("-X{method}")),
            2 => w.extend([String::from("--request"), method.into()]),
            3 => w.extend([String::from("--REQUEST"), method.into()]),
            _ => w.extend([String::from("--Request"), method.into()]),
        }
    }
    match rng.next() % 10 {
        0 => w.extend(words(&["-d", "event=APPROVE"])),
        8 => w.extend(words(&["-d", "_method=DELETE"])),
        1 => w.extend(words(&["--data", r#"{"event":"COMMENT","body":"x"}"#])),
        2 => w.extend(words(&["--data-b", r#"{"state":"closed"}"#])),
        3 => w.extend(words(&["--DATA-RAW", "a=1"])),
        4 => w.extend(words(&["--json", r#"{"query":"{ viewer { login } }"}"#])),
        5 | 6 => w.extend([String::from("-T"), rng.pick(UPLOADS).to_string()]),
        7 => w.extend(words(&["-G", "--data-urlencode", "q=a b"])),
        _ => {}
    }
    if rng.chance(6) {
        w.extend(words(&["-H", "X-HTTP-Method-Override: DELETE"]));
    }
    if rng.chance(8) {
        w.push("-I".into());
    }
    let path = *rng.pick(CURL_PATHS);
    w.push(format!("{base}{path}"));
    if rng.chance(7) {
        w.push(rng.pick(&["--next", "--nex", "-:"]).to_string());
        w.push(format!("{base}{}", rng.pick(CURL_PATHS)));
    }
    w
}

#[test]
fn the_real_curl_sends_nothing_the_gate_did_not_judge() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    for f in ["merge", "reviews", "main", "a.md", "sub/merge"] {
        std::fs::write(work.join(f), "x\n").unwrap();
    }
    let srv = HttpServer::start();
    let curl = real("curl");
    let mut rng = Rng(0xc0ff_ee42);
    let mut seen = BTreeSet::new();
    let (mut allowed, mut requests) = (0, 0);
    let mut failures = Vec::new();
    while seen.len() < 300 {
        let args = curl_variant(&mut rng, &srv.url());
        if !seen.insert(args.clone()) {
            continue;
        }
        let j = explain(None, &work, "curl", &args);
        if !j.allowed {
            continue;
        }
        allowed += 1;
        srv.forget();
        let mut c = Command::new(&curl);
        c.arg("-q").args(&args).current_dir(&work).env_clear().env("HOME", tmp.path());
        run_real(c);
        requests += compare(&format!("curl {}", args.join(" ")), &j, &srv.requests(), &[], true, &mut failures);
    }
    eprintln!("curl: {} variants, {allowed} allowed, {requests} requests judged", seen.len());
    assert!(
        allowed > 100 && requests > 100,
        "too few calls were compared: {allowed} allowed, {requests} requests"
    );
    assert_eq!(failures, Vec::<String>::new());
}

const GH_ENDPOINTS: &[&str] = &[
    "repos/o/r/issues",
    "repos/o/r/pulls/1/merge",
    "repos/o/r/pulls/1/reviews",
    "repos/o/r/git/refs/heads/main",
    "repos/{owner}/{repo}/{branch}",
    "repos/:owner/:repo/pulls",
    "repos/{owner}/{repo}/issues/1",
    "repositories/42/hooks",
    "repositories/42/pulls/1/merge",
    "user/keys",
    "repos/o/r/contents/checks/a.md",
    "graphql",
];

fn gh_variant(rng: &mut Rng) -> Vec<String> {
    if rng.chance(8) {
        let verb = *rng.pick(&[&["label", "delete"][..], &["release", "view"], &["variable", "get"]]);
        let op = *rng.pick(&["bug", "v1.0", "../git/refs/heads/main", "a/b", "x%2F..", "DEPLOY_HOST"]);
        let mut w = words(verb);
        w.push(op.into());
        w.extend(words(&["-R", "o/r"]));
        if verb[0] == "label" {
            w.push("--yes".into());
        }
        return w;
    }
    let mut w = vec!["api".to_string()];
    let endpoint = *rng.pick(GH_ENDPOINTS);
    let method = *rng.pick(&["", "", "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "put"]);
    if !method.is_empty() {
        match rng.next() % 4 {
            0 => w.extend([String::from("-X"), method.into()]),
            1 => w.push(format!("-X{method}")),
            2 => w.extend([String::from("--method"), method.into()]),
            _ => w.push(format!("--method={method}")),
        }
    }
    w.push(endpoint.into());
    if endpoint == "graphql" {
        let q = *rng.pick(&[
            "query={ viewer { login } }",
            "query=mutation { addStar(input: {starrableId: \"S\"}) { clientMutationId } }",
            "query=mutation { mergePullRequest(input: {pullRequestId: \"P\"}) { clientMutationId } }",
        ]);
        w.extend([String::from(if rng.chance(2) { "-f" } else { "-F" }), q.into()]);
    } else {
        match rng.next() % 8 {
            0 => w.extend(words(&["-f", "title=disk full"])),
            6 => w.extend(words(&["-f", "_method=DELETE"])),
            1 => w.extend(words(&["-F", "event={branch}"])),
            2 => w.extend(words(&["-F", "event=APPROVE", "-f", "event=COMMENT"])),
            3 => w.extend(words(&["-f", "labels[]=a", "-f", "labels[]=b"])),
            4 => w.extend(words(&["-F", "base=:branch", "-f", "body=x"])),
            _ => {}
        }
    }
    if rng.chance(6) {
        w.extend(words(&["-H", "X-HTTP-Method-Override: DELETE"]));
    }
    if rng.chance(6) {
        w.push("--paginate".into());
    }
    w
}

#[test]
fn debians_gh_sends_nothing_the_gate_did_not_judge() {
    use crate::real_tools::git;
    let srv = HttpServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let tls = TlsFront::start(&srv, tmp.path());
    let gh_config = tmp.path().join("ghconfig");
    std::fs::create_dir_all(&gh_config).unwrap();
    let host = format!("127.0.0.1:{}", tls.port);
    let repo = format!("{host}/o/r");
    // Two clones whose branch names are endpoints and field values.
    let mut clones = Vec::new();
    for branch in ["pulls/1/merge", "APPROVE"] {
        let dir = tmp.path().join(format!("clone-{}", clones.len()));
        std::fs::create_dir_all(&dir).unwrap();
        git(&dir, &["init", "-q", "-b", branch]);
        git(&dir, &["commit", "-q", "--allow-empty", "-m", "x"]);
        git(&dir, &["remote", "add", "origin", "https://github.com/o/r.git"]);
        clones.push(dir);
    }
    // The install pins GH_REPO, as gh's own remote lookup would not match a host with a port.
    let cfg = tmp.path().join("tiershim.yaml");
    std::fs::write(
        &cfg,
        format!(
            "tier: 3\nreal:\n  git: {}\n  gh: {}\nenv:\n  GH_REPO: \"{repo}\"\ntool_home: {}\n",
            crate::real_tools::which("git").display(),
            real("gh").display(),
            gh_config.display()
        ),
    )
    .unwrap();
    let gh = real("gh");
    let mut rng = Rng(0x9e37_79b9);
    let mut seen = BTreeSet::new();
    let (mut allowed, mut requests) = (0, 0);
    let mut failures = Vec::new();
    while seen.len() < 200 {
        let args = gh_variant(&mut rng);
        let clone = &clones[(rng.next() % 2) as usize];
        if !seen.insert((args.clone(), clone.clone())) {
            continue;
        }
        let j = explain(Some(&cfg), clone, "gh", &args);
        if !j.allowed {
            continue;
        }
        allowed += 1;
        srv.forget();
        let mut c = Command::new(&gh);
        c.args(&args)
            .current_dir(clone)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", tmp.path())
            .env("GH_HOST", &host)
            .env("GH_REPO", &repo)
            .env("GH_ENTERPRISE_TOKEN", "tok")
            .env("SSL_CERT_FILE", &tls.cert)
            .env("GH_CONFIG_DIR", &gh_config)
            .env("GH_PROMPT_DISABLED", "1")
            .env("GH_NO_UPDATE_NOTIFIER", "1");
        run_real(c);
        let what = format!("gh {} (in a clone on branch {})", args.join(" "), clone.display());
        let api = args[0] == "api";
        requests += compare(&what, &j, &srv.requests(), &["/api/v3", "/api"], api, &mut failures);
    }
    eprintln!("gh: {} variants, {allowed} allowed, {requests} requests judged", seen.len());
    assert!(
        allowed > 60 && requests > 60,
        "too few calls were compared: {allowed} allowed, {requests} requests"
    );
    assert_eq!(failures, Vec::<String>::new());
}

/// The escapes found with the real tools, each refused now, and each shown to be real: the
/// tool run directly sends the request the refusal is about.
#[test]
fn the_escapes_the_real_tools_showed_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = Engine::start(tmp.path());
    let config = tmp.path().join("docker-config");
    std::fs::create_dir_all(&config).unwrap();
    for (args, sent) in [
        (&["network", "inspect", "../swarm"][..], "GET /swarm"),
        (&["secret", "inspect", "../swarm/unlockkey"], "GET /swarm/unlockkey"),
        (&["start", "../exec/e1"], "POST /exec/e1/start"),
        (&["rm", "../volumes/data"], "DELETE /volumes/data"),
        (&["rm", "../plugins/p1"], "DELETE /plugins/p1"),
    ] {
        let args = words(args);
        let j = explain(None, tmp.path(), "docker", &args);
        assert!(!j.allowed, "docker {args:?} is allowed: {}", j.reasons);
        engine.forget();
        let mut c = Command::new(real("docker"));
        c.args(&args)
            .env_clear()
            .env("DOCKER_HOST", engine.host())
            .env("DOCKER_CONFIG", &config)
            .env("HOME", tmp.path());
        run_real(c);
        let routes: Vec<String> = engine.requests().iter().map(|r| format!("{} {}", r.method, r.route())).collect();
        assert!(routes.contains(&sent.to_string()), "docker {args:?} sent {routes:?}");
    }

    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("merge"), "x").unwrap();
    let srv = HttpServer::start();
    let args = words(&["-s", "-T", "merge", &format!("{}/repos/o/r/pulls/1/", srv.url())]);
    let j = explain(None, &work, "curl", &args);
    assert!(!j.allowed && j.reasons.contains("http.pulls.merge"), "{}", j.reasons);
    let mut c = Command::new(real("curl"));
    c.arg("-q").args(&args).current_dir(&work).env_clear();
    run_real(c);
    assert_eq!(srv.lines(), vec!["PUT /repos/o/r/pulls/1/merge"]);

    // The last of -g and --no-globoff decides: curl expands the -T glob and uploads the
    // hidden file, which the gate never lets a call read.
    std::fs::write(work.join(".env"), "TOKEN=s3cret\n").unwrap();
    std::fs::write(work.join("a.md"), "a\n").unwrap();
    let args = words(&["-s", "-g", "-T", "{.env,a.md}", "--no-globoff", &format!("{}/x/", srv.url())]);
    let j = explain(None, &work, "curl", &args);
    assert!(!j.allowed && j.reasons.contains(".env"), "{}", j.reasons);
    srv.forget();
    let mut c = Command::new(real("curl"));
    c.arg("-q").args(&args).current_dir(&work).env_clear();
    run_real(c);
    assert!(srv.lines().contains(&"PUT /x/.env".to_string()), "{:?}", srv.lines());

    // `-O URL --no-remote-name`: the -O is the URL's, so curl writes .bashrc here; a tier-1
    // call writes no file, and a hidden one never.
    let args = words(&["-s", "-O", &format!("{}/d/.bashrc", srv.url()), "--no-remote-name"]);
    let j = explain(None, &work, "curl", &args);
    assert!(!j.allowed && j.reasons.contains(".bashrc"), "{}", j.reasons);
    let mut c = Command::new(real("curl"));
    c.arg("-q").args(&args).current_dir(&work).env_clear();
    run_real(c);
    assert!(work.join(".bashrc").exists(), "curl wrote no .bashrc");
}
