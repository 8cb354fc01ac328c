//! curl's command line (`src/tool_getparam.c` `getparameter`/`parse_args`) -> one [`Action`] per
//! transfer.
//!
//! Owns: curl's option table (every option of 7.88.1 and of current curl, so a value-taking option
//! never lets its value pass for a URL), the transfer model (`-:`/`--next` segments), the
//! effective HTTP method of each transfer, and the marks for everything that reaches past plain
//! HTTP: other schemes, Unix sockets, config files, variables, local files read into a request or
//! written from one, header injection. It must not decide tiers; `policy/curl.yaml` does.
//!
//! Parsing, as curl does it:
//! - any token not starting with `-`, and everything after `--`, is a URL; so is `--url <u>`;
//! - long options are exact (no abbreviations); `--no-<switch>` turns a switch off (an error on
//!   anything else); `--expand-<opt>` expands `{{variables}}` in a value; `--opt=value` is taken
//!   (curl 8.16+; older curl rejects it, so accepting it is the safe superset);
//! - short switches cluster; a value-taking short ends the cluster and takes the rest
//!   (`-sXPOST`) or the next word;
//! - `-:`/`--next` after a URL starts a new transfer with fresh options. With no URL yet, curl
//!   7.88 keeps going with the same options (`-X DELETE --next URL` sends DELETE; 8.x refuses
//!   the call), so a segment closes only once it has a URL;
//! - `-h`/`--help`, `-M`/`--manual` and `-V`/`--version` make curl stop parsing and print, with no
//!   transfer at all (options before them still act: `--stderr F` already opened F).
//!
//! The verb of an action is the HTTP method upper-cased (`GET`, `HEAD`, `POST`, `PUT`, `PATCH`,
//! `DELETE`), `OTHER` with a `method=<M>` mark for anything else, or `help`/`version`. A
//! method-override header (`X-HTTP-Method-Override` and friends) adds a second action for the
//! same transfer with the method the server is told to use, so the stricter of the two decides.
//! A call with no URL at all (a `-K` file would supply them) is reported as one transfer of the
//! method its options give, so its marks are still judged.

use std::collections::BTreeSet;

use crate::grammar::opts::{self, Arity, Item, Opt, Style, Unknown};
use crate::grammar::{Action, Invocation};
use crate::tool::Tool;

/// `-q` as argv[1] stops curl reading `.curlrc` (`tool_operate.c` only looks at argv[1]).
pub const PREPEND: &[&str] = &["-q"];

/// curl's own parser: exact long names, `--no-` on switches, clusters, `--opt=value` (8.16+).
const STYLE: Style = Style {
    long_abbrev: false,
    single_dash_long: false,
    clusters: true,
    attached_short: true,
    // `-X=POST` sends the method `=POST`.
    short_eq: false,
    long_eq: true,
    // curl 8.16+ ignores `=value` on a switch (`--get=false` is `--get`); refusing it is safer
    // than reading it as pflag would.
    flag_eq_value: false,
    negation: true,
    interspersed: true,
    double_dash: true,
    unknown: Unknown::Error,
};

/// A value-taking option, also reachable as `--expand-<name>` (reported with that spelling).
macro_rules! value {
    ($name:literal) => {
        Opt::value($name, &[$name, concat!("expand-", $name)], &[])
    };
    ($name:literal, $short:literal) => {
        Opt::value($name, &[$name, concat!("expand-", $name)], &[$short])
    };
}

/// A switch (`ARG_BOOL` or `ARG_NONE` in curl's table).
macro_rules! switch {
    ($name:literal) => {
        Opt::flag($name, &[$name], &[])
    };
    ($name:literal, $short:literal) => {
        Opt::flag($name, &[$name], &[$short])
    };
}

/// Every curl option: the `aliases[]` table of current curl plus what 7.88.1 still had.
/// The id is the long name.
const TABLE: &[Opt] = &[
    // Value-taking (`Arg:` in docs/cmdline-opts), all of them: a missing one would let its
    // value be read as a URL.
    value!("abstract-unix-socket"),
    value!("alt-svc"),
    value!("aws-sigv4"),
    value!("cacert"),
    value!("capath"),
    value!("cert", 'E'),
    value!("cert-type"),
    value!("ciphers"),
    value!("config", 'K'),
    value!("connect-timeout"),
    value!("connect-to"),
    value!("continue-at", 'C'),
    value!("cookie", 'b'),
    value!("cookie-jar", 'c'),
    value!("create-file-mode"),
    value!("crlfile"),
    value!("curves"),
    value!("data", 'd'),
    value!("data-ascii"),
    value!("data-binary"),
    value!("data-raw"),
    value!("data-urlencode"),
    value!("delegation"),
    value!("dns-interface"),
    value!("dns-ipv4-addr"),
    value!("dns-ipv6-addr"),
    value!("dns-servers"),
    value!("doh-url"),
    value!("dump-header", 'D'),
    value!("ech"),
    value!("egd-file"),
    value!("engine"),
    value!("etag-compare"),
    value!("etag-save"),
    value!("expect100-timeout"),
    value!("form", 'F'),
    value!("form-string"),
    value!("ftp-account"),
    value!("ftp-alternative-to-user"),
    value!("ftp-method"),
    value!("ftp-port", 'P'),
    value!("ftp-ssl-ccc-mode"),
    value!("happy-eyeballs-timeout-ms"),
    value!("haproxy-clientip"),
    value!("header", 'H'),
    // `-h [subject]`: curl prints help and stops whatever follows, so only the stuck form is
    // taken as its value here.
    Opt::opt_value("help", &["help", "expand-help"], &['h']),
    value!("hostpubmd5"),
    value!("hostpubsha256"),
    value!("hsts"),
    value!("httpsig-algo"),
    value!("httpsig-headers"),
    value!("httpsig-key"),
    value!("httpsig-keyid"),
    value!("interface"),
    value!("ip-tos"),
    value!("ipfs-gateway"),
    value!("json"),
    value!("keepalive-cnt"),
    value!("keepalive-time"),
    value!("key"),
    value!("key-type"),
    value!("knownhosts"),
    value!("krb"),
    value!("krb4"),
    value!("libcurl"),
    value!("limit-rate"),
    value!("local-port"),
    value!("login-options"),
    value!("mail-auth"),
    value!("mail-from"),
    value!("mail-rcpt"),
    value!("max-filesize"),
    value!("max-redirs"),
    value!("max-time", 'm'),
    value!("netrc-file"),
    value!("noproxy"),
    value!("oauth2-bearer"),
    value!("output", 'o'),
    value!("output-dir"),
    value!("parallel-max"),
    value!("parallel-max-host"),
    value!("pass"),
    value!("pinnedpubkey"),
    value!("preproxy"),
    value!("proto"),
    value!("proto-default"),
    value!("proto-redir"),
    value!("proxy", 'x'),
    value!("proxy-cacert"),
    value!("proxy-capath"),
    value!("proxy-cert"),
    value!("proxy-cert-type"),
    value!("proxy-ciphers"),
    value!("proxy-crlfile"),
    value!("proxy-header"),
    value!("proxy-key"),
    value!("proxy-key-type"),
    value!("proxy-pass"),
    value!("proxy-pinnedpubkey"),
    value!("proxy-service-name"),
    value!("proxy-tls13-ciphers"),
    value!("proxy-tlsauthtype"),
    value!("proxy-tlspassword"),
    value!("proxy-tlsuser"),
    value!("proxy-user", 'U'),
    value!("proxy1.0"),
    value!("pubkey"),
    value!("quote", 'Q'),
    value!("random-file"),
    value!("range", 'r'),
    value!("rate"),
    value!("referer", 'e'),
    value!("request", 'X'),
    value!("request-target"),
    value!("resolve"),
    value!("retry"),
    value!("retry-delay"),
    value!("retry-max-time"),
    value!("sasl-authzid"),
    value!("service-name"),
    value!("sigalgs"),
    value!("socks4"),
    value!("socks4a"),
    value!("socks5"),
    value!("socks5-gssapi-service"),
    value!("socks5-hostname"),
    value!("speed-limit", 'Y'),
    value!("speed-time", 'y'),
    value!("ssl-sessions"),
    value!("stderr"),
    value!("telnet-option", 't'),
    value!("tftp-blksize"),
    value!("time-cond", 'z'),
    value!("tls-max"),
    value!("tls13-ciphers"),
    value!("tlsauthtype"),
    value!("tlspassword"),
    value!("tlsuser"),
    value!("trace"),
    value!("trace-ascii"),
    value!("trace-config"),
    value!("unix-socket"),
    value!("upload-file", 'T'),
    value!("upload-flags"),
    value!("url"),
    value!("url-query"),
    value!("user", 'u'),
    value!("user-agent", 'A'),
    value!("variable"),
    value!("vlan-priority"),
    value!("write-out", 'w'),
    // Switches.
    switch!("alpn"),
    switch!("anyauth"),
    switch!("append", 'a'),
    switch!("basic"),
    switch!("buffer", 'N'),
    switch!("ca-native"),
    switch!("cert-status"),
    switch!("clobber"),
    switch!("compressed"),
    switch!("compressed-ssh"),
    switch!("create-dirs"),
    switch!("crlf"),
    switch!("digest"),
    switch!("disable", 'q'),
    switch!("disable-eprt"),
    switch!("disable-epsv"),
    switch!("disallow-username-in-url"),
    switch!("doh-cert-status"),
    switch!("doh-insecure"),
    switch!("dump-ca-embed"),
    switch!("eprt"),
    switch!("epsv"),
    switch!("fail", 'f'),
    switch!("fail-early"),
    switch!("fail-with-body"),
    switch!("false-start"),
    switch!("follow"),
    switch!("form-escape"),
    switch!("ftp-create-dirs"),
    switch!("ftp-pasv"),
    switch!("ftp-pret"),
    switch!("ftp-skip-pasv-ip"),
    switch!("ftp-ssl"),
    switch!("ftp-ssl-ccc"),
    switch!("ftp-ssl-control"),
    switch!("ftp-ssl-reqd"),
    switch!("get", 'G'),
    switch!("globoff", 'g'),
    switch!("haproxy-protocol"),
    switch!("head", 'I'),
    switch!("http0.9"),
    switch!("http1.0", '0'),
    switch!("http1.1"),
    switch!("http2"),
    switch!("http2-prior-knowledge"),
    switch!("http3"),
    switch!("http3-only"),
    switch!("ignore-content-length"),
    // `-i` is `--include` in 7.88 and `--show-headers` since 8.10; both names stay valid.
    Opt::flag("show-headers", &["show-headers", "include"], &['i']),
    switch!("insecure", 'k'),
    switch!("ipv4", '4'),
    switch!("ipv6", '6'),
    switch!("junk-session-cookies", 'j'),
    switch!("keepalive"),
    switch!("list-only", 'l'),
    switch!("location", 'L'),
    switch!("location-trusted"),
    switch!("mail-rcpt-allowfails"),
    switch!("manual", 'M'),
    switch!("metalink"),
    switch!("mptcp"),
    switch!("negotiate"),
    switch!("netrc", 'n'),
    switch!("netrc-optional"),
    switch!("next", ':'),
    switch!("npn"),
    switch!("ntlm"),
    switch!("ntlm-wb"),
    switch!("out-null"),
    switch!("parallel", 'Z'),
    switch!("parallel-immediate"),
    switch!("path-as-is"),
    switch!("post301"),
    switch!("post302"),
    switch!("post303"),
    switch!("progress-bar", '#'),
    switch!("progress-meter"),
    switch!("proxy-anyauth"),
    switch!("proxy-basic"),
    switch!("proxy-ca-native"),
    switch!("proxy-digest"),
    switch!("proxy-http2"),
    switch!("proxy-insecure"),
    switch!("proxy-negotiate"),
    switch!("proxy-ntlm"),
    switch!("proxy-ssl-allow-beast"),
    switch!("proxy-ssl-auto-client-cert"),
    switch!("proxy-tlsv1"),
    switch!("proxytunnel", 'p'),
    switch!("raw"),
    switch!("remote-header-name", 'J'),
    switch!("remote-name", 'O'),
    switch!("remote-name-all"),
    switch!("remote-time", 'R'),
    switch!("remove-on-error"),
    switch!("retry-all-errors"),
    switch!("retry-connrefused"),
    switch!("sasl-ir"),
    switch!("sessionid"),
    switch!("show-error", 'S'),
    switch!("silent", 's'),
    switch!("skip-existing"),
    switch!("socks5-basic"),
    switch!("socks5-gssapi"),
    switch!("socks5-gssapi-nec"),
    switch!("ssl"),
    switch!("ssl-allow-beast"),
    switch!("ssl-auto-client-cert"),
    switch!("ssl-no-revoke"),
    switch!("ssl-reqd"),
    switch!("ssl-revoke-best-effort"),
    switch!("sslv2", '2'),
    switch!("sslv3", '3'),
    switch!("styled-output"),
    switch!("suppress-connect-headers"),
    switch!("tcp-fastopen"),
    switch!("tcp-nodelay"),
    switch!("tftp-no-options"),
    switch!("tls-earlydata"),
    switch!("tlsv1", '1'),
    switch!("tlsv1.0"),
    switch!("tlsv1.1"),
    switch!("tlsv1.2"),
    switch!("tlsv1.3"),
    switch!("tr-encoding"),
    switch!("trace-ids"),
    switch!("trace-time"),
    switch!("use-ascii", 'B'),
    switch!("verbose", 'v'),
    switch!("version", 'V'),
    switch!("xattr"),
];

/// Switches curl declares `ARG_NONE`: `--no-<name>` is an error for them, as for any value option.
const NOT_NEGATABLE: &[&str] = &[
    "anyauth",
    "dump-ca-embed",
    "ftp-pasv",
    "help",
    "http1.0",
    "http1.1",
    "http2",
    "http2-prior-knowledge",
    "http3",
    "http3-only",
    "ipv4",
    "ipv6",
    "next",
    "proxy-tlsv1",
    "sslv2",
    "sslv3",
    "tlsv1",
    "tlsv1.0",
    "tlsv1.1",
    "tlsv1.2",
    "tlsv1.3",
];

/// Methods with a verb of their own; anything else is `OTHER` with a `method=<M>` mark.
const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/// Headers many servers honour as the real method of a POST.
const OVERRIDE_HEADERS: &[&str] = &["x-http-method-override", "x-http-method", "x-method-override"];

/// Options whose value curl writes into the request head: a CR or LF there injects headers or a
/// whole second request (verified with 7.88.1: `-H $'A: b\r\nX-HTTP-Method-Override: DELETE'`).
const HEAD_VALUES: &[&str] = &[
    "header",
    "proxy-header",
    "request",
    "request-target",
    "user-agent",
    "referer",
    "cookie",
    "oauth2-bearer",
];

/// Options that route the request somewhere other than the URL's host.
const REROUTE: &[&str] = &[
    "proxy",
    "preproxy",
    "proxy1.0",
    "socks4",
    "socks4a",
    "socks5",
    "socks5-hostname",
    "connect-to",
    "resolve",
    "doh-url",
    "dns-servers",
];

/// Options that write the named local file. For these, `-` is standard output (or the stream
/// the option names) and `/dev/null`, `/dev/stdout`, `/dev/stderr` are not files either.
const WRITES_PATH: &[&str] = &[
    "output",
    "dump-header",
    "cookie-jar",
    "trace",
    "trace-ascii",
    "stderr",
    "libcurl",
    "etag-save",
];

/// Options that write (and read back) a file or a directory, where `-` is just a name.
const WRITES_CACHE: &[&str] = &["output-dir", "hsts", "alt-svc", "ssl-sessions"];

/// Switches that make curl write files whose names it picks (or delete them).
const WRITES_SWITCH: &[&str] = &["remote-name", "remote-name-all", "remote-header-name", "remove-on-error"];

/// Switches and options that read local files into the request (credentials included).
const READS_SWITCH: &[&str] = &["netrc", "netrc-optional"];
const READS_PATH: &[&str] = &["netrc-file", "etag-compare"];

/// Schemes curl guesses from a scheme-less URL's host prefix (`lib/urlapi.c`); anything else is
/// HTTP.
const GUESSED: &[(&str, &str)] = &[
    ("ftp.", "ftp"),
    ("dict.", "dict"),
    ("ldap.", "ldap"),
    ("imap.", "imap"),
    ("smtp.", "smtp"),
    ("pop3.", "pop3"),
];

/// Schemes curl knows. A URL starting `<one of these>:` is read as that scheme even without the
/// `/` curl itself wants after the colon, so a URL is never taken for HTTP when it might not be.
const SCHEMES: &[&str] = &[
    "dict", "file", "ftp", "ftps", "gopher", "gophers", "http", "https", "imap", "imaps", "ipfs", "ipns", "ldap", "ldaps", "mqtt", "mqtts",
    "pop3", "pop3s", "rtmp", "rtmpe", "rtmps", "rtmpt", "rtmpte", "rtmpts", "rtsp", "scp", "sftp", "smb", "smbs", "smtp", "smtps",
    "telnet", "tftp", "ws", "wss",
];

/// The options of one transfer, as far as the decision needs them.
#[derive(Debug, Default)]
struct Segment {
    urls: Vec<String>,
    /// `--expand-url`: a URL whose text is only known at run time (and refused for that).
    expanded_url: bool,
    /// `-X`, last wins.
    request: Option<String>,
    /// `-d` family (`--json` included).
    data: bool,
    /// `-F`, `--form-string`.
    form: bool,
    /// `-T`.
    upload: bool,
    /// `-I`, `-G`, `-g` as last set.
    head: bool,
    get: bool,
    globoff: bool,
    proto_default: Option<String>,
    headers: Vec<String>,
    /// Marks that do not depend on the method: files, sockets, schemes, variables.
    marks: BTreeSet<String>,
}

impl Segment {
    fn has_url(&self) -> bool {
        !self.urls.is_empty() || self.expanded_url
    }

    fn mark(&mut self, m: impl Into<String>) {
        self.marks.insert(m.into());
    }

    /// The method curl sends (`tool_operate.c` `single_transfer`, `tool_helpers.c`
    /// `SetHTTPrequest`): `-X` wins; else an upload is PUT; a form is POST; data is POST unless
    /// `-G` moved it into the query; else `-I` is HEAD; else GET. Combinations curl refuses
    /// (`-I -d`, `-d -F`, `-T -d`) get the stricter reading.
    fn method(&self) -> String {
        if let Some(m) = &self.request {
            return m.to_ascii_uppercase();
        }
        let m = if self.upload {
            "PUT"
        } else if self.form || (self.data && !self.get) {
            "POST"
        } else if self.head {
            "HEAD"
        } else {
            "GET"
        };
        m.to_string()
    }

    /// A request body goes out (`-X GET -d x` sends a GET with a body).
    fn body(&self) -> bool {
        self.upload || self.form || (self.data && !self.get)
    }

    /// The actions for this segment's transfer(s): the method curl sends, and one per
    /// method-override header. `extra` are marks carried from elsewhere in the call.
    fn actions(&self, extra: &BTreeSet<String>) -> Result<Vec<Action>, String> {
        let mut main = method_action(&self.method());
        if self.body() {
            main.add("body");
        }
        for m in self.marks.iter().chain(extra) {
            main.add(m.clone());
        }
        for url in &self.urls {
            for m in url_marks(url, !self.globoff)? {
                main.add(m);
            }
        }
        // `--proto-default` is the scheme of every scheme-less URL (it beats curl's guessing).
        if let Some(p) = self.proto_default.as_deref().filter(|p| !is_http(p)) {
            main.add("non-http-scheme");
            main.add(format!("scheme={}", p.to_ascii_lowercase()));
        }
        let mut out = vec![main];
        for m in self.overrides() {
            let a = method_action(&m).mark("method-override");
            if !out.contains(&a) {
                out.push(a);
            }
        }
        Ok(out)
    }

    /// Methods named by override headers, upper-cased. Every line of a header counts (a
    /// header with a line break is refused anyway, but its meaning is still reported).
    fn overrides(&self) -> Vec<String> {
        let mut out = Vec::new();
        for h in &self.headers {
            for line in h.split(['\r', '\n']) {
                let Some((name, value)) = line.split_once(':') else {
                    continue;
                };
                let value = value.trim();
                if OVERRIDE_HEADERS.contains(&name.trim().to_ascii_lowercase().as_str()) && !value.is_empty() {
                    out.push(value.to_ascii_uppercase());
                }
            }
        }
        out
    }
}

fn method_action(m: &str) -> Action {
    if METHODS.contains(&m) {
        Action::new(m)
    } else {
        Action::new("OTHER").mark(format!("method={m}"))
    }
}

fn is_http(scheme: &str) -> bool {
    scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
}

pub fn parse(args: &[String]) -> Invocation {
    let inv = Invocation::new(Tool::Curl, args);
    let parsed = match opts::scan(args, TABLE, &STYLE) {
        Ok(p) => p,
        Err(e) => return inv.with_problem(e),
    };
    match transfers(&parsed.items) {
        Ok(actions) => actions.into_iter().fold(inv, Invocation::with_action),
        Err(p) => inv.with_problem(p),
    }
}

/// Walk argv in order, one segment per transfer.
fn transfers(items: &[Item]) -> Result<Vec<Action>, String> {
    let mut done: Vec<Segment> = Vec::new();
    let mut seg = Segment::default();
    for item in items {
        let f = match item {
            Item::Pos(u) if u == "-" => return Err("`-` is neither an option nor a URL curl accepts".into()),
            Item::Pos(u) => {
                seg.urls.push(u.clone());
                continue;
            }
            Item::Unknown { written, .. } => return Err(format!("unknown option {written}")),
            Item::Opt(f) => f,
        };
        if f.written.starts_with("--expand-") {
            seg.mark("variables");
        }
        if f.negated {
            let takes_value = TABLE.iter().any(|o| o.id == f.id && o.arity != Arity::Flag);
            if takes_value || NOT_NEGATABLE.contains(&f.id) {
                return Err(format!("curl takes --no- only on a switch, not {}", f.written));
            }
        }
        let on = !f.negated;
        let v = f.value.as_deref().unwrap_or_default();
        if HEAD_VALUES.contains(&f.id) && v.contains(['\r', '\n']) {
            seg.mark("crlf");
        }
        match f.id {
            // curl opens a new transfer only after a URL (see the module doc).
            "next" if seg.has_url() => done.push(std::mem::take(&mut seg)),
            "help" | "manual" | "version" if on => {
                // curl prints and stops: no transfer happens, but options so far have acted.
                let verb = if f.id == "version" { "version" } else { "help" };
                let mut a = Action::new(verb);
                for m in done.iter().chain([&seg]).flat_map(|s| s.marks.iter()) {
                    a.add(m.clone());
                }
                return Ok(vec![a]);
            }
            "url" if f.written.starts_with("--expand-") => seg.expanded_url = true,
            "url" => seg.urls.push(v.to_string()),
            "request" => seg.request = Some(v.to_string()),
            "data" | "data-ascii" | "data-binary" | "json" => {
                seg.data = true;
                if let Some(path) = v.strip_prefix('@') {
                    seg.mark(reads(path));
                }
            }
            "data-raw" => seg.data = true,
            "data-urlencode" => {
                seg.data = true;
                if let Some(path) = urlencode_file(v) {
                    seg.mark(reads(path));
                }
            }
            "url-query" => {
                if let Some(path) = v.strip_prefix('+').map_or_else(|| urlencode_file(v), |_| None) {
                    seg.mark(reads(path));
                }
            }
            "form" => {
                seg.form = true;
                // `name=@file`, `name=<file`, `;headers=@file`, …: any `@` or `<` may read a
                // file. A form is POST already, so over-reading an e-mail address costs nothing.
                if v.contains(['@', '<']) {
                    seg.mark("file-read");
                }
                if v.contains("@-") || v.contains("<-") {
                    seg.mark("stdin");
                }
            }
            "form-string" => seg.form = true,
            "upload-file" => {
                seg.upload = true;
                seg.mark(if v == "-" || v == "." { "stdin" } else { "file-read" });
            }
            "head" => seg.head = on,
            "get" => seg.get = on,
            "globoff" => seg.globoff = on,
            "header" => {
                // Headers from a file are unseen: they could name any method.
                match v.strip_prefix('@') {
                    Some("-") => seg.mark("stdin"),
                    Some(_) => seg.mark("header-file"),
                    None => seg.headers.push(v.to_string()),
                }
            }
            "proxy-header" => {
                if let Some(path) = v.strip_prefix('@') {
                    seg.mark(reads(path));
                }
            }
            // Without `=` the value is a cookie file (`-` is stdin).
            "cookie" if !v.is_empty() && !v.contains('=') => seg.mark(reads(v)),
            "config" => seg.mark("config"),
            "variable" => seg.mark("variables"),
            // `%output{file}` writes a file (8.3+); a format read from a file is unseen.
            "write-out" if v.starts_with('@') || v.to_ascii_lowercase().contains("%output{") => seg.mark("write-out-file"),
            "unix-socket" | "abstract-unix-socket" => seg.mark("unix-socket"),
            "proto-redir" if loosens_redirects(v) => seg.mark("proto-redir"),
            "proto-default" => seg.proto_default = Some(v.to_string()),
            "engine" if v != "list" => seg.mark("engine"),
            "quote" | "ftp-alternative-to-user" => seg.mark("ftp-command"),
            id if REROUTE.contains(&id) && !v.is_empty() => seg.mark("reroute"),
            id if WRITES_PATH.contains(&id) || WRITES_CACHE.contains(&id) => {
                for m in writes(v, WRITES_PATH.contains(&id)) {
                    seg.mark(m);
                }
            }
            id if WRITES_SWITCH.contains(&id) && on => seg.mark("file-write"),
            id if (READS_SWITCH.contains(&id) && on) || READS_PATH.contains(&id) => seg.mark("file-read"),
            _ => {}
        }
    }
    if done.is_empty() {
        // No transfer closed by `--next`: the last segment is the transfer, with or without a
        // URL (a call with none is judged on its options: `-K` would supply the URLs).
        return seg.actions(&BTreeSet::new());
    }
    // A trailing segment without a URL transfers nothing, but what its options do to local
    // files (global options such as `--stderr`, `--libcurl`) still happens.
    let carried = if seg.has_url() { BTreeSet::new() } else { seg.marks.clone() };
    if seg.has_url() {
        done.push(seg);
    }
    let mut out = Vec::new();
    for s in &done {
        out.extend(s.actions(&carried)?);
    }
    Ok(out)
}

/// The mark for reading `path` (after `@`): stdin or a file.
fn reads(path: &str) -> &'static str {
    if path == "-" { "stdin" } else { "file-read" }
}

/// `--data-urlencode` (and `--url-query`): `[name]@file` reads a file when there is no `=`
/// before it (`tool_getparam.c` `data_urlencode`).
fn urlencode_file(v: &str) -> Option<&str> {
    if v.contains('=') {
        return None;
    }
    v.split_once('@').map(|(_, path)| path)
}

/// Marks for writing `path`: none for the standard streams (`-` only where the option reads it
/// as one), `dotfile-write` too when a component is hidden (`~/.bashrc`, `.git/hooks/x`, `.ssh/`).
fn writes(path: &str, dash_is_stream: bool) -> Vec<&'static str> {
    if matches!(path, "/dev/null" | "/dev/stdout" | "/dev/stderr") || (dash_is_stream && path == "-") {
        return Vec::new();
    }
    let hidden = path.split('/').any(|c| c.starts_with('.') && c != "." && c != "..");
    if hidden {
        vec!["file-write", "dotfile-write"]
    } else {
        vec!["file-write"]
    }
}

/// `--proto-redir` enables a protocol other than HTTP(S) for redirects (`all`, `+file`, `=ftp`,
/// …). Removing protocols (`-ftp`) is fine.
fn loosens_redirects(v: &str) -> bool {
    v.split(',').any(|token| {
        let token = token.trim();
        let (removing, name) = match token.strip_prefix('-') {
            Some(n) => (true, n),
            None => (false, token.trim_start_matches(['+', '='])),
        };
        !removing && !name.is_empty() && !is_http(name)
    })
}

/// Marks for one URL as curl will use it. Errors for URLs whose scheme or host cannot be known.
fn url_marks(url: &str, glob: bool) -> Result<Vec<String>, String> {
    if url.starts_with('@') {
        // curl 8.13+: `@file` is a file of URLs, unseen here.
        return Ok(vec!["url-file".into()]);
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("URL {url:?} holds whitespace or control characters"));
    }
    let (scheme, rest) = match split_scheme(url) {
        Some((s, rest)) => (Some(s), rest),
        None => (None, url),
    };
    let authority = rest.trim_start_matches('/');
    let authority = &authority[..authority.find(['/', '?', '#']).unwrap_or(authority.len())];
    // Globbing runs before curl reads the URL: `{file,http}://…` or `[e-g]ile:…` may expand to
    // any scheme or host, so a glob there is refused unless `-g` turns globbing off.
    if glob && scheme.is_none() && has_glob(authority) {
        return Err(format!("URL {url:?} globs its scheme or host; use -g or spell it out"));
    }
    let scheme = match scheme {
        Some(s) => s,
        None => {
            let host = authority.rsplit('@').next().unwrap_or_default().to_ascii_lowercase();
            GUESSED
                .iter()
                .find(|(prefix, _)| host.starts_with(prefix))
                .map_or("http", |(_, s)| s)
                .to_string()
        }
    };
    if is_http(&scheme) {
        Ok(Vec::new())
    } else {
        Ok(vec!["non-http-scheme".into(), format!("scheme={scheme}")])
    }
}

/// `scheme:` at the start of a URL, lower-cased, and what follows. curl needs `scheme:/`; a
/// known scheme name followed by `:` alone counts too.
fn split_scheme(url: &str) -> Option<(String, &str)> {
    let end = url.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))?;
    let name = &url[..end];
    let rest = url[end..].strip_prefix(':')?;
    let first_alpha = name.starts_with(|c: char| c.is_ascii_alphabetic());
    let lower = name.to_ascii_lowercase();
    (first_alpha && (rest.starts_with('/') || SCHEMES.contains(&lower.as_str()))).then_some((lower, rest))
}

/// A `{` or a `[` that is not an IPv6 literal (`[::1]`): curl would glob it.
fn has_glob(s: &str) -> bool {
    if s.contains(['{', '}']) {
        return true;
    }
    let mut rest = s;
    while let Some(i) = rest.find('[') {
        let after = &rest[i + 1..];
        let Some(j) = after.find(']') else {
            return true;
        };
        let inside = &after[..j];
        let ipv6 = inside.contains(':')
            && inside
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '.' | '%' | '_'));
        if !ipv6 {
            return true;
        }
        rest = &after[j + 1..];
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;
    use pretty_assertions::assert_eq;

    const U: &str = "http://127.0.0.1:8080/x";

    fn actions(words: &[&str]) -> Vec<Action> {
        let inv = parse(&argv(words));
        assert_eq!(inv.problem, None, "{words:?}");
        inv.actions
    }

    fn act(verb: &str, marks: &[&str]) -> Action {
        marks.iter().fold(Action::new(verb), |a, m| a.mark(*m))
    }

    fn problem(words: &[&str]) -> Option<String> {
        parse(&argv(words)).problem
    }

    #[test]
    fn prepend_is_q_so_curlrc_is_never_read() {
        assert_eq!(PREPEND, &["-q"]);
    }

    #[test]
    fn a_plain_url_is_one_get() {
        assert_eq!(actions(&["-sSfL", U]), vec![act("GET", &[])]);
    }

    #[test]
    fn every_spelling_of_request_sets_the_method() {
        for words in [
            &["-XPOST", U][..],
            &["-X", "POST", U],
            &["--request", "POST", U],
            &["--request=POST", U],
            &["-sXPOST", U],
            &["-sX", "POST", U],
            &["-Xpost", U],
            &["--expand-request", "POST", U],
        ] {
            assert_eq!(actions(words)[0].verb, "POST", "{words:?}");
        }
    }

    #[test]
    fn the_last_request_wins_within_a_transfer() {
        assert_eq!(actions(&["-X", "DELETE", U, "-X", "GET"]), vec![act("GET", &[])]);
    }

    #[test]
    fn unknown_methods_are_other_with_the_method_marked() {
        assert_eq!(actions(&["-X", "PROPFIND", U]), vec![act("OTHER", &["method=PROPFIND"])]);
        assert_eq!(actions(&["-X", "GET ", U]), vec![act("OTHER", &["method=GET "])]);
    }

    #[test]
    fn data_options_make_a_post_with_a_body() {
        for opt in [
            "-d",
            "--data",
            "--data-ascii",
            "--data-binary",
            "--data-raw",
            "--data-urlencode",
            "--json",
        ] {
            assert_eq!(actions(&[opt, "a=1", U]), vec![act("POST", &["body"])], "{opt}");
        }
    }

    #[test]
    fn forms_post_and_uploads_put() {
        assert_eq!(actions(&["-F", "a=b", U]), vec![act("POST", &["body"])]);
        assert_eq!(actions(&["--form-string", "a=@b", U]), vec![act("POST", &["body"])]);
        assert_eq!(actions(&["-T", "f.txt", U]), vec![act("PUT", &["body", "file-read"])]);
    }

    #[test]
    fn get_moves_data_into_the_query_and_no_get_moves_it_back() {
        assert_eq!(actions(&["-G", "-d", "q=1", U]), vec![act("GET", &[])]);
        assert_eq!(actions(&["-G", "-I", "-d", "q=1", U]), vec![act("HEAD", &[])]);
        assert_eq!(actions(&["-G", "--no-get", "-d", "q=1", U]), vec![act("POST", &["body"])]);
        // -G does not turn a form or an upload into a GET (verified with 7.88.1).
        assert_eq!(actions(&["-G", "-F", "a=b", U])[0].verb, "POST");
        assert_eq!(actions(&["-G", "-T", "f", U])[0].verb, "PUT");
    }

    #[test]
    fn head_is_head_and_a_get_with_a_body_is_marked() {
        assert_eq!(actions(&["-I", U]), vec![act("HEAD", &[])]);
        assert_eq!(actions(&["-X", "GET", "-d", "x", U]), vec![act("GET", &["body"])]);
    }

    #[test]
    fn next_starts_a_transfer_with_fresh_options() {
        assert_eq!(
            actions(&[
                U,
                "-:",
                "-X",
                "DELETE",
                "http://127.0.0.1/b",
                "--next",
                "-d",
                "x",
                "http://127.0.0.1/c"
            ]),
            vec![act("GET", &[]), act("DELETE", &[]), act("POST", &["body"])]
        );
    }

    #[test]
    fn next_without_a_url_keeps_the_options_as_curl_7_88_does() {
        assert_eq!(actions(&["-X", "DELETE", "--next", U]), vec![act("DELETE", &[])]);
    }

    #[test]
    fn a_url_given_with_url_counts_as_a_transfer() {
        assert_eq!(
            actions(&[U, "--next", "-X", "DELETE", "--url", "http://127.0.0.1/b"]),
            vec![act("GET", &[]), act("DELETE", &[])]
        );
    }

    #[test]
    fn a_trailing_segment_without_a_url_is_no_transfer_but_its_file_writes_count() {
        assert_eq!(actions(&[U, "--next", "-X", "DELETE"]), vec![act("GET", &[])]);
        assert_eq!(actions(&[U, "--next", "--stderr", "log.txt"]), vec![act("GET", &["file-write"])]);
    }

    #[test]
    fn everything_after_double_dash_is_a_url() {
        assert_eq!(actions(&["--", "-X", U]), vec![act("GET", &[])]);
    }

    #[test]
    fn method_override_headers_add_the_overridden_method() {
        assert_eq!(
            actions(&["-d", "x", "-H", "X-HTTP-Method-Override: delete", U]),
            vec![act("POST", &["body"]), act("DELETE", &["method-override"])]
        );
        assert_eq!(
            actions(&["-H", "x-method-override:PATCH", U])[1],
            act("PATCH", &["method-override"])
        );
        assert_eq!(
            actions(&["-H", "X-HTTP-Method: MOVE", U])[1],
            act("OTHER", &["method-override", "method=MOVE"])
        );
        assert_eq!(actions(&["-H", "X-HTTP-Method-Override;", U]), vec![act("GET", &[])]);
    }

    #[test]
    fn line_breaks_in_header_values_are_marked() {
        let a = actions(&["-H", "A: b\r\nX-HTTP-Method-Override: DELETE", U]);
        assert_eq!(a, vec![act("GET", &["crlf"]), act("DELETE", &["method-override"])]);
        assert_eq!(actions(&["-A", "x\nHost: y", U]), vec![act("GET", &["crlf"])]);
    }

    #[test]
    fn config_variables_and_write_out_files_are_marked() {
        assert_eq!(actions(&["-K", "-"]), vec![act("GET", &["config"])]);
        assert_eq!(actions(&["--config=cmds.txt", U]), vec![act("GET", &["config"])]);
        assert_eq!(actions(&["-Kcmds", U]), vec![act("GET", &["config"])]);
        assert_eq!(actions(&["--variable", "a=b", U]), vec![act("GET", &["variables"])]);
        assert_eq!(actions(&["--expand-url", "{{a}}"]), vec![act("GET", &["variables"])]);
        assert_eq!(actions(&["-w", "%output{x}%{http_code}", U]), vec![act("GET", &["write-out-file"])]);
        assert_eq!(actions(&["-w", "@fmt", U]), vec![act("GET", &["write-out-file"])]);
        assert_eq!(actions(&["-w", "%{http_code}", U]), vec![act("GET", &[])]);
    }

    #[test]
    fn other_schemes_are_marked_and_guessed_ones_too() {
        for (url, scheme) in [
            ("file:///etc/passwd", "file"),
            ("FILE:/etc/passwd", "file"),
            ("file:etc/passwd", "file"),
            ("gopher://127.0.0.1:6379/_x", "gopher"),
            ("dict://127.0.0.1:11211/stat", "dict"),
            ("ftp.example.com/x", "ftp"),
            ("user@ldap.example.com", "ldap"),
            ("DICT.example.com", "dict"),
            ("scp://h/etc/shadow", "scp"),
        ] {
            assert_eq!(
                actions(&[url]),
                vec![act("GET", &["non-http-scheme", &format!("scheme={scheme}")])],
                "{url}"
            );
        }
        for url in [
            "127.0.0.1:8080/x",
            "localhost:2375/info",
            "HTTPS://example.com",
            "http:/127.0.0.1/x",
            "[::1]:2375/x",
        ] {
            assert_eq!(actions(&[url]), vec![act("GET", &[])], "{url}");
        }
    }

    #[test]
    fn proto_default_sets_the_scheme_of_scheme_less_urls() {
        assert_eq!(
            actions(&["--proto-default", "file", "/etc/passwd"]),
            vec![act("GET", &["non-http-scheme", "scheme=file"])]
        );
        assert_eq!(actions(&["--proto-default", "https", "example.com"]), vec![act("GET", &[])]);
    }

    #[test]
    fn globs_that_could_make_a_scheme_or_host_are_refused_unless_globbing_is_off() {
        for url in [
            "{file,http}:///etc/passwd",
            "[e-g]ile:///etc/passwd",
            "fi{le,}:///etc/passwd",
            "{ftp,www}.example.com/x",
        ] {
            assert!(problem(&[url]).is_some(), "{url}");
        }
        assert_eq!(actions(&["-g", "{file,http}:///x"]), vec![act("GET", &[])]);
        assert_eq!(actions(&["http://127.0.0.1/{a,b}/[1-3]"]), vec![act("GET", &[])]);
    }

    #[test]
    fn url_files_sockets_and_redirect_loosening_are_marked() {
        assert_eq!(actions(&["@urls.txt"]), vec![act("GET", &["url-file"])]);
        assert_eq!(actions(&["--url", "@urls.txt"]), vec![act("GET", &["url-file"])]);
        assert_eq!(
            actions(&["--unix-socket", "/var/run/docker.sock", "-XPOST", "http://x/containers/c/kill"]),
            vec![act("POST", &["unix-socket"])]
        );
        assert_eq!(actions(&["--abstract-unix-socket", "s", U]), vec![act("GET", &["unix-socket"])]);
        assert_eq!(actions(&["--proto-redir", "+file", "-L", U]), vec![act("GET", &["proto-redir"])]);
        assert_eq!(actions(&["--proto-redir", "=https", "-L", U]), vec![act("GET", &[])]);
        assert_eq!(actions(&["--proto-redir", "-all,+http", U]), vec![act("GET", &[])]);
    }

    #[test]
    fn local_file_reads_are_marked_and_stdin_apart() {
        for (words, mark) in [
            (&["-d", "@body.json", U][..], "file-read"),
            (&["--data-binary", "@-", U], "stdin"),
            (&["--data-urlencode", "name@file", U], "file-read"),
            (&["--json", "@x.json", U], "file-read"),
            (&["-F", "f=@file", U], "file-read"),
            (&["-F", "f=<-", U], "stdin"),
            (&["-T", "-", U], "stdin"),
            (&["-T", ".", U], "stdin"),
            (&["-b", "cookies.txt", U], "file-read"),
            (&["-n", U], "file-read"),
            (&["--netrc-file", "n", U], "file-read"),
            (&["-H", "@headers.txt", U], "header-file"),
            (&["-H", "@-", U], "stdin"),
            (&["--url-query", "q@secret", U], "file-read"),
        ] {
            assert!(actions(words)[0].has(mark), "{words:?} should be {mark}");
        }
        assert_eq!(actions(&["--data-urlencode", "a=b@c", U]), vec![act("POST", &["body"])]);
        assert_eq!(actions(&["--data-raw", "@x", U]), vec![act("POST", &["body"])]);
        assert_eq!(actions(&["-b", "a=b", U]), vec![act("GET", &[])]);
        assert_eq!(actions(&["--url-query", "+q@x", U]), vec![act("GET", &[])]);
        assert_eq!(actions(&["-G", "-d", "@q", U]), vec![act("GET", &["file-read"])]);
    }

    #[test]
    fn local_file_writes_are_marked_except_standard_streams() {
        for words in [
            &["-o", "out.json", U][..],
            &["-O", U],
            &["--remote-name-all", U],
            &["--output-dir", "d", U],
            &["-D", "h.txt", U],
            &["-c", "jar", U],
            &["--trace", "t", U],
            &["--stderr", "e", U],
            &["--libcurl", "x.c", U],
            &["--etag-save", "e", U],
            &["--hsts", "h", U],
            &["--alt-svc", "a", U],
            &["--remove-on-error", "-o", "/dev/null", U],
        ] {
            assert!(actions(words)[0].has("file-write"), "{words:?}");
        }
        for words in [
            &["-o", "/dev/null", U][..],
            &["-D", "-", U],
            &["--trace-ascii", "-", U],
            &["-o-", U],
        ] {
            assert_eq!(actions(words), vec![act("GET", &[])], "{words:?}");
        }
        assert_eq!(actions(&["--hsts", "-", U]), vec![act("GET", &["file-write"])]);
        assert_eq!(
            actions(&["-o", "/home/a/.bashrc", U]),
            vec![act("GET", &["dotfile-write", "file-write"])]
        );
        assert_eq!(actions(&["--no-remote-name", U]), vec![act("GET", &[])]);
    }

    #[test]
    fn reroutes_engines_and_ftp_commands_are_marked() {
        assert_eq!(actions(&["-x", "http://p:3128", U]), vec![act("GET", &["reroute"])]);
        assert_eq!(actions(&["-x", "", U]), vec![act("GET", &[])]);
        assert_eq!(actions(&["--connect-to", "::127.0.0.1:2375", U]), vec![act("GET", &["reroute"])]);
        assert_eq!(actions(&["--engine", "/tmp/x.so", U]), vec![act("GET", &["engine"])]);
        assert_eq!(actions(&["-Q", "DELE x", U]), vec![act("GET", &["ftp-command"])]);
    }

    #[test]
    fn help_and_version_stop_parsing_and_keep_earlier_marks() {
        assert_eq!(actions(&["--help"]), vec![act("help", &[])]);
        assert_eq!(actions(&["-h", "all"]), vec![act("help", &[])]);
        assert_eq!(actions(&["-X", "DELETE", U, "-M"]), vec![act("help", &[])]);
        assert_eq!(actions(&["-V"]), vec![act("version", &[])]);
        assert_eq!(
            actions(&["--stderr", "/home/a/.profile", "-h"]),
            vec![act("help", &["dotfile-write", "file-write"])]
        );
    }

    #[test]
    fn grammar_problems_name_the_token() {
        assert_eq!(problem(&["--reques", "POST", U]), Some("unknown option --reques".into()));
        assert_eq!(problem(&["-X"]), Some("option -X needs a value".into()));
        assert_eq!(problem(&["-sj%", U]), Some("unknown option -% in -sj%".into()));
        assert_eq!(
            problem(&["--no-request", U]),
            Some("curl takes --no- only on a switch, not --no-request".into())
        );
        assert_eq!(
            problem(&["--no-next", U]),
            Some("curl takes --no- only on a switch, not --no-next".into())
        );
        assert_eq!(problem(&["--silent=yes", U]), Some("option --silent=yes takes no value".into()));
        assert_eq!(problem(&["--expand-silent", U]), Some("unknown option --expand-silent".into()));
        assert!(problem(&["-", U]).is_some());
        assert!(problem(&["http://127.0.0.1/a b"]).is_some());
    }

    #[test]
    fn a_value_taking_option_never_lets_its_value_pass_for_a_url() {
        // Each value-taking option consumes the next word, which must then not be a URL.
        for o in TABLE.iter().filter(|o| o.arity == Arity::Value) {
            let words = [format!("--{}", o.long[0]), "file:///etc/passwd".to_string(), U.to_string()];
            let inv = parse(&words);
            let urls_seen = inv.actions.iter().any(|a| a.has("scheme=file"));
            assert!(!urls_seen || o.id == "url", "--{} let its value be a URL", o.id);
        }
        assert_eq!(TABLE.iter().filter(|o| o.arity != Arity::Flag).count(), 151);
    }
}
