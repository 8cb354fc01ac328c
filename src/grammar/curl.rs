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
//! - long options match in any case and as any unique prefix (`--REQUEST`, `--nex`, `--data-b`;
//!   an exact name wins over longer ones, as curl 7.88's `getparameter` does it); `--no-<switch>`
//!   turns a switch off and needs the whole name (an error on anything but a switch);
//!   `--expand-<opt>` expands `{{variables}}` in a value; `--opt=value` is taken (curl 8.16+;
//!   older curl rejects it, so accepting it is the safe superset);
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
//!
//! The path an action carries is the one the server routes by: `--request-target` when given
//! (`request-target-unknown` when it has no path, as `*`), else the URL's. A write (any method
//! but GET and HEAD, or a body) in a transfer that follows redirects (`-L`, `--follow`,
//! `--location-trusted`, unless `--max-redirs 0`) is marked `redirect-write`: the request can
//! end up at an endpoint no rule saw.

use std::collections::BTreeSet;

use crate::grammar::opts::{self, Arity, Item, Opt, Style, Unknown};
use crate::grammar::{Access, Action, Body, Claim, Contents, Invocation, LocalFile, http};
use crate::packed::{pairs, words};
use crate::tool::Tool;

/// `-q` as argv[1] stops curl reading `.curlrc` (`tool_operate.c` only looks at argv[1]).
pub const PREPEND: &[&str] = &["-q"];

/// curl's own parser: exact long names, `--no-` on switches, clusters, `--opt=value` (8.16+).
const STYLE: Style = Style {
    // curl 7.88 takes any unique prefix of a long name, in any case (`--REQ`, `--data-b`); an
    // exact name wins over longer ones (`--data`). Prefixes are judged against this table,
    // a superset of 7.88's: one unique here is the same option there or unknown there.
    long_abbrev: true,
    long_ignore_case: true,
    negation_exact: true,
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
    end_of_options: false,
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

words! {
    /// Switches curl declares `ARG_NONE`: `--no-<name>` is an error for them, as for any value option.
    static NOT_NEGATABLE = &[
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
}

words! {
    /// Methods with a verb of their own; anything else is `OTHER` with a `method=<M>` mark.
    static METHODS = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
}

words! {
    /// Options whose value curl writes into the request head: a CR or LF there injects headers or a
    /// whole second request (verified with 7.88.1: `-H $'A: b\r\nX-HTTP-Method-Override: DELETE'`).
    static HEAD_VALUES = &[
        "header",
        "proxy-header",
        "request",
        "request-target",
        "user-agent",
        "referer",
        "cookie",
        "oauth2-bearer",
    ];
}

words! {
    /// Options that route the request somewhere other than the URL's host.
    static REROUTE = &[
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
}

words! {
    /// Options that write the named local file. For these, `-` is standard output (or the stream
    /// the option names) and `/dev/null`, `/dev/stdout`, `/dev/stderr` are not files either.
    static WRITES_PATH = &[
        "dump-header",
        "cookie-jar",
        "trace",
        "trace-ascii",
        "stderr",
        "libcurl",
        "etag-save",
    ];
}

words! {
    /// Options that write (and read back) a file or a directory, where `-` is just a name.
    static WRITES_CACHE = &["hsts", "alt-svc", "ssl-sessions"];
}

pairs! {
    /// Schemes curl guesses from a scheme-less URL's host prefix (`lib/urlapi.c`); anything else is
    /// HTTP.
    static GUESSED = &[
        ("ftp.", "ftp"),
        ("dict.", "dict"),
        ("ldap.", "ldap"),
        ("imap.", "imap"),
        ("smtp.", "smtp"),
        ("pop3.", "pop3"),
    ];
}

words! {
    /// Schemes curl knows. A URL starting `<one of these>:` is read as that scheme even without the
    /// `/` curl itself wants after the colon, so a URL is never taken for HTTP when it might not be.
    static SCHEMES = &[
        "dict", "file", "ftp", "ftps", "gopher", "gophers", "http", "https", "imap", "imaps", "ipfs", "ipns", "ldap", "ldaps", "mqtt", "mqtts",
        "pop3", "pop3s", "rtmp", "rtmpe", "rtmps", "rtmpt", "rtmpte", "rtmpts", "rtsp", "scp", "sftp", "smb", "smbs", "smtp", "smtps",
        "telnet", "tftp", "ws", "wss",
    ];
}

/// The most URLs one call may expand to through globbing. Past it the gate would judge
/// thousands of requests one by one; the call is refused with a hint to use `-g`.
pub const MAX_URLS: usize = 1000;

/// The ports of the Docker Engine API over TCP (plain and TLS).
const DOCKER_PORTS: &[u16] = &[2375, 2376];

words! {
    /// Unix sockets of container engines: the whole Engine API without the docker gate.
    static ENGINE_SOCKETS = &[
        "docker.sock",
        "containerd.sock",
        "podman.sock",
        "dockershim.sock",
        "cri-dockerd.sock",
    ];
}

/// One piece of request data, in argv order.
#[derive(Debug, Clone)]
enum Piece {
    /// Text sent as it is (`-d x`, `--data-raw`, `--json x`).
    Text(String),
    /// A file's contents (`-d @f`): `strip` when curl removes CR and LF (`-d`, `--data-ascii`).
    File { path: String, strip: bool },
    /// `--data-urlencode`: `name` (possibly empty) and the content or the file it comes from.
    Encoded {
        name: Option<String>,
        text: Option<String>,
        file: Option<String>,
    },
    /// Standard input, or anything the gate will not read.
    Opaque,
}

/// A URL or an output option, as curl 7.88's `getparameter` pairs them (`tool_getparam.c`):
/// each URL takes the first node without one, each `-o`/`-O`/`--no-remote-name` the first node
/// without an output; a node made by a URL starts with `--remote-name-all` as set then.
#[derive(Debug, Clone, Copy)]
enum OutEvent {
    /// A URL: its index in [`Segment::urls`] (None for `--expand-url`, never requested as seen).
    Url(Option<usize>),
    /// `-o` (the file is declared where it is read) or `-O`/`--no-remote-name` (`true`: the
    /// file is named after the URL).
    Out(bool),
    /// `--remote-name-all` / `--no-remote-name-all`.
    All(bool),
}

/// The options of one transfer, as far as the decision needs them.
#[derive(Debug, Default)]
struct Segment {
    urls: Vec<String>,
    /// `--expand-url`: a URL whose text is only known at run time (and refused for that).
    expanded_url: bool,
    /// `-X`, last wins.
    request: Option<String>,
    /// `--request-target`: sent in the request line instead of the URL's path.
    request_target: Option<String>,
    /// `-L`, `--follow`, `--location-trusted` (which implies `-L`), as last set.
    location: bool,
    follow: bool,
    location_trusted: bool,
    /// `--max-redirs 0`: no redirect is followed whatever `-L` says.
    no_redirects: bool,
    /// `-d` family (`--json` included), in order.
    data: Vec<Piece>,
    json: bool,
    /// `-F`, `--form-string`: the form's fields, or `None` once a field comes from a file.
    form: bool,
    form_fields: Option<Vec<(String, String)>>,
    /// `-T`.
    upload: bool,
    /// `-T` values that name files (not stdin), as written, with the option as written: curl
    /// appends a file's name to a URL whose path ends in `/` (`tool_operhlp.c`
    /// `add_file_name_to_url`). Globs are expanded when the segment ends, with `-g` as last set.
    upload_files: Vec<(String, String)>,
    /// `-I`, `-G`, `-g` as last set.
    head: bool,
    get: bool,
    globoff: bool,
    proto_default: Option<String>,
    headers: Vec<String>,
    /// `-o` values and `--output-dir`, resolved against each other when the segment ends.
    outputs: Vec<String>,
    output_dir: Option<String>,
    /// The URLs and the output options, in argv order, for pairing them as curl does
    /// ([`Segment::remote_named`]).
    out_events: Vec<OutEvent>,
    /// `-J`: with `-O`, the server's Content-Disposition names the file instead.
    header_name: bool,
    /// Marks that do not depend on the method: files, sockets, schemes, variables.
    marks: BTreeSet<String>,
}

impl Segment {
    fn has_url(&self) -> bool {
        !self.urls.is_empty() || self.expanded_url
    }

    fn add_url(&mut self, u: &str) {
        self.out_events.push(OutEvent::Url(Some(self.urls.len())));
        self.urls.push(u.to_string());
    }

    /// Per URL of [`Segment::urls`]: whether curl writes it to a file named after the URL
    /// (`-O` paired with it, or `--remote-name-all` on when its node was made).
    fn remote_named(&self) -> Vec<bool> {
        struct Node {
            url: Option<Option<usize>>,
            out: bool,
            remote: bool,
        }
        let mut nodes: Vec<Node> = Vec::new();
        let mut all = false;
        for e in &self.out_events {
            match *e {
                OutEvent::Url(i) => match nodes.iter_mut().find(|n| n.url.is_none()) {
                    Some(n) => n.url = Some(i),
                    None => nodes.push(Node {
                        url: Some(i),
                        out: false,
                        remote: all,
                    }),
                },
                OutEvent::Out(remote) => match nodes.iter_mut().find(|n| !n.out) {
                    Some(n) => {
                        n.out = true;
                        n.remote = remote;
                    }
                    None => nodes.push(Node {
                        url: None,
                        out: true,
                        remote,
                    }),
                },
                OutEvent::All(on) => all = on,
            }
        }
        (0..self.urls.len())
            .map(|i| nodes.iter().any(|n| n.url == Some(Some(i)) && n.remote))
            .collect()
    }

    fn mark(&mut self, m: impl Into<String>) {
        self.marks.insert(m.into());
    }

    /// A plain form field, kept while no field of the form reads a file.
    fn form_value(&mut self, name: &str, value: &str) {
        if self.marks.contains("form-file") {
            return;
        }
        self.form_fields
            .get_or_insert_with(Vec::new)
            .push((name.to_string(), value.to_string()));
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
        } else if self.form || (!self.data.is_empty() && !self.get) {
            "POST"
        } else if self.head {
            "HEAD"
        } else {
            "GET"
        };
        m.to_string()
    }

    /// A request body goes out (`-X GET -d x` sends a GET with a body).
    fn sends_body(&self) -> bool {
        self.upload || self.form || (!self.data.is_empty() && !self.get)
    }

    /// The body as the endpoint rules see it.
    fn body(&self, contents: &Contents) -> Body {
        if !self.sends_body() {
            return Body::None;
        }
        if self.upload {
            return Body::Opaque;
        }
        if self.form {
            return match &self.form_fields {
                Some(f) if self.data.is_empty() => http::fields(f.iter().cloned()),
                _ => Body::Opaque,
            };
        }
        let mut parts = Vec::with_capacity(self.data.len());
        for p in &self.data {
            let text = match p {
                Piece::Text(t) => t.clone(),
                Piece::File { path, strip } => match contents.get(path) {
                    Some(Ok(t)) if *strip => t.replace(['\r', '\n'], ""),
                    Some(Ok(t)) => t.clone(),
                    _ => return Body::Opaque,
                },
                Piece::Encoded { name, text, file } => {
                    let content = match (text, file) {
                        (Some(t), _) => t.clone(),
                        (None, Some(f)) => match contents.get(f) {
                            Some(Ok(t)) => t.clone(),
                            _ => return Body::Opaque,
                        },
                        (None, None) => return Body::Opaque,
                    };
                    match name {
                        Some(n) => format!("{n}={}", form_encode(&content)),
                        None => form_encode(&content),
                    }
                }
                Piece::Opaque => return Body::Opaque,
            };
            parts.push(text);
        }
        // `-d` pieces are joined with `&` (tool_getparam.c); `--json` pieces are appended.
        let joined = if self.json && self.data.iter().all(|p| !matches!(p, Piece::Encoded { .. })) {
            parts.concat()
        } else {
            parts.join("&")
        };
        http::body_of(&joined)
    }

    /// Whether curl follows redirects for this transfer.
    fn follows_redirects(&self) -> bool {
        (self.location || self.follow || self.location_trusted) && !self.no_redirects
    }

    /// The path the server is asked for: the `--request-target` when given (origin-form
    /// `/path` or absolute-form `http://host/path`), else the URL's. `Ok(None)`: a target
    /// whose path cannot be known (`*`, authority-form, anything else).
    fn target_path(&self) -> Result<Option<String>, String> {
        let Some(t) = &self.request_target else {
            return Ok(None);
        };
        if t.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!("--request-target {t:?} holds whitespace or control characters"));
        }
        if t.starts_with('/') {
            return http::normalise_path(t).map(Some);
        }
        match split_scheme(t) {
            Some((scheme, rest)) if is_http(&scheme) && rest.starts_with("//") => {
                let after = &rest[2..];
                let path = after.find(['/', '?', '#']).map_or("", |i| &after[i..]);
                http::normalise_path(path).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Methods named by override headers, upper-cased.
    fn overrides(&self) -> Vec<String> {
        http::method_overrides(&self.headers)
    }

    /// The actions for this segment: one per URL (after globbing) and per method-override
    /// header. `extra` are marks carried from elsewhere in the call; `budget` counts URLs left.
    fn actions(
        &self,
        extra: &BTreeSet<String>,
        contents: &Contents,
        budget: &mut usize,
        files: &mut Vec<LocalFile>,
    ) -> Result<Vec<Action>, String> {
        let method = self.method();
        let mut base = method_action(&method);
        if self.sends_body() {
            base.add("body");
        }
        // A redirect sends a write on to wherever the server points: `-X M` keeps M on every
        // hop, and a 307/308 keeps POST or PUT and its body. The gate judges the URL it sees.
        let follows = self.follows_redirects();
        if follows && (!matches!(method.as_str(), "GET" | "HEAD") || self.sends_body()) {
            base.add("redirect-write");
        }
        let target = self.target_path()?;
        if self.request_target.is_some() && target.is_none() {
            base.add("request-target-unknown");
        }
        for m in self.marks.iter().chain(extra) {
            base.add(m.clone());
        }
        // `--proto-default` is the scheme of every scheme-less URL (it beats curl's guessing).
        if let Some(p) = self.proto_default.as_deref().filter(|p| !is_http(p)) {
            base.add("non-http-scheme");
            base.add(format!("scheme={}", p.to_ascii_lowercase()));
        }
        let overrides = self.overrides();
        let body = self.body(contents);
        let mut urls = Vec::new();
        let mut named = Vec::new();
        for (u, remote) in self.urls.iter().zip(self.remote_named()) {
            let expanded = if self.globoff || u.starts_with('@') {
                vec![u.clone()]
            } else {
                glob::expand(u)?
            };
            if expanded.len() > *budget {
                return Err(format!(
                    "the URLs expand to more than {MAX_URLS} requests; use -g (--globoff) or split the call"
                ));
            }
            *budget -= expanded.len();
            if remote {
                named.extend(expanded.iter().cloned());
            }
            urls.extend(expanded);
        }
        self.output_files(&named, files)?;
        for (name, flag) in self.upload_reads()? {
            files.push(read(&name, &flag, false));
        }
        let mut out: Vec<Action> = Vec::new();
        let mut push = |a: Action| {
            if !out.contains(&a) {
                out.push(a);
            }
        };
        let override_action = |m: &str| {
            let o = method_action(m).mark("method-override");
            if follows && !matches!(m, "GET" | "HEAD") {
                o.mark("redirect-write")
            } else {
                o
            }
        };
        if urls.is_empty() {
            // No URL (a `-K` file would supply them, or `--expand-url`): judged on its options.
            push(base.clone());
            for m in &overrides {
                push(override_action(m));
            }
        }
        for url in &urls {
            let (marks, path) = url_facts(url)?;
            // The server routes by the request target, not by the URL's path.
            let path = match (&target, path) {
                (Some(t), Some(_)) => Some(t.clone()),
                (_, p) => p,
            };
            let mut a = base.clone();
            for m in marks {
                a.add(m);
            }
            let Some(path) = path else {
                push(a);
                continue;
            };
            // `-T FILE` to a URL whose path ends in `/` goes to that path plus the file's name
            // (every file of a `-T` glob). Which URL an upload pairs with is curl's to choose,
            // so each such URL is judged with and without each name.
            let mut paths = vec![path.clone()];
            if target.is_none() && url_path_is_directory(url) {
                for name in self.upload_names()? {
                    let name = upload_name(&name)?;
                    if !name.is_empty() {
                        paths.push(format!("{}/{name}", path.trim_end_matches('/')));
                    }
                }
            }
            for path in &paths {
                for x in http::actions(a.clone(), &method, path, body.clone()) {
                    push(x);
                }
                // The override headers, and a `_method` in this URL's query or the body.
                let mut ovs = overrides.clone();
                ovs.extend(http::param_overrides(url, &body));
                for m in &ovs {
                    let mut o = override_action(m);
                    for mark in &a.marks {
                        if mark != "body" && mark != "redirect-write" {
                            o.add(mark.clone());
                        }
                    }
                    for x in http::actions(o, m, path, body.clone()) {
                        push(x);
                    }
                }
            }
        }
        Ok(out)
    }

    /// The files of every `-T` that names files, globs expanded as curl expands them: with
    /// the segment's last `-g`/`--no-globoff` (curl reads `globoff` when the transfer starts).
    fn upload_names(&self) -> Result<Vec<String>, String> {
        Ok(self.upload_reads()?.into_iter().map(|(n, _)| n).collect())
    }

    /// Each file `-T` reads, with the option that names it.
    fn upload_reads(&self) -> Result<Vec<(String, String)>, String> {
        let mut out = Vec::new();
        for (v, flag) in &self.upload_files {
            if self.globoff {
                out.push((v.clone(), flag.clone()));
            } else {
                out.extend(glob::expand(v)?.into_iter().map(|n| (n, flag.clone())));
            }
        }
        Ok(out)
    }

    /// The files `-o`/`-O` write, placed in `--output-dir` when their name is relative: every
    /// `-o` file, and one named after each URL of `named` (those written by remote name).
    fn output_files(&self, named: &[String], files: &mut Vec<LocalFile>) -> Result<(), String> {
        let place = |name: &str| match &self.output_dir {
            Some(d) if !name.starts_with('/') => format!("{}/{name}", d.trim_end_matches('/')),
            _ => name.to_string(),
        };
        for o in &self.outputs {
            if !self.globoff && has_template(o) {
                return Err(format!("-o {o:?} names the file after a URL glob (#N); name each file directly"));
            }
            if !is_stream(o, true) {
                files.push(write(&place(o), "-o"));
            }
        }
        if !named.is_empty() && self.header_name {
            // The server names each file (Content-Disposition), in `--output-dir` or here.
            let dir = self.output_dir.clone().unwrap_or_else(|| ".".into());
            files.push(LocalFile::writes(dir, "-J", Access::WriteNamed));
        }
        for u in named {
            // curl -O takes the last segment of the URL's path, as written.
            let rest = split_scheme(u).map_or(u.as_str(), |(_, r)| r).trim_start_matches('/');
            let path = rest.find('/').map_or("", |i| &rest[i..]);
            let path = path.split(['?', '#']).next().unwrap_or("");
            let name = path.rsplit('/').next().unwrap_or("");
            if name.is_empty() {
                return Err(format!("-O needs a file name in the URL {u:?}"));
            }
            files.push(write(&place(name), "-O"));
        }
        Ok(())
    }
}

fn write(path: &str, flag: &str) -> LocalFile {
    LocalFile::write(path, flag)
}

fn read(path: &str, flag: &str, content: bool) -> LocalFile {
    LocalFile::read(path, flag, content)
}

/// `#1`, `#2`… in an output name: replaced by what a URL glob matched.
fn has_template(o: &str) -> bool {
    o.as_bytes().windows(2).any(|w| w[0] == b'#' && w[1].is_ascii_digit())
}

/// Standard streams and the null device: not files the call writes. `-` is a stream only for
/// the options that read it as one.
fn is_stream(path: &str, dash_is_stream: bool) -> bool {
    matches!(path, "/dev/null" | "/dev/stdout" | "/dev/stderr") || (dash_is_stream && path == "-")
}

/// Percent-encode everything but unreserved characters (`--data-urlencode`).
fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn method_action(m: &str) -> Action {
    if METHODS.contains(m) {
        Action::new(m)
    } else {
        Action::new("OTHER").mark(format!("method={m}"))
    }
}

fn is_http(scheme: &str) -> bool {
    scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
}

pub fn parse(args: &[String]) -> Invocation {
    parse_with(args, &Contents::new())
}

/// Parse with the contents of the files the call reads into its request (`-d @f`, `-H @f`),
/// as the gate read them.
pub fn parse_with(args: &[String], contents: &Contents) -> Invocation {
    let mut inv = Invocation::new(Tool::Curl, args);
    let parsed = match opts::scan(args, TABLE, &STYLE) {
        Ok(p) => p,
        Err(e) => return inv.with_problem(e),
    };
    let mut files = Vec::new();
    match transfers(&parsed.items, contents, &mut files) {
        Ok(actions) => {
            inv.files = files;
            inv.claims = proxy_claims(&parsed.items);
            actions.into_iter().fold(inv, Invocation::with_action)
        }
        Err(p) => inv.with_problem(p),
    }
}

/// Every option that sends the request somewhere but the URL's host (a proxy, `--connect-to`,
/// `--resolve`, DNS): curl sends the credentials of a pinned proxy (`https_proxy=http://u:p@…`)
/// to whatever it connects to first, so with one pinned it may only be the pinned proxy.
fn proxy_claims(items: &[Item]) -> Vec<Claim> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::Opt(f) if REROUTE.contains(&f.id) && !f.negated => Some(Claim::Destination {
                var: "HTTPS_PROXY",
                value: f.value.clone().unwrap_or_default(),
                flag: f.written.split('=').next().unwrap_or_default().to_string(),
            }),
            _ => None,
        })
        .filter(|c| !matches!(c, Claim::Destination { value, .. } if value.is_empty()))
        .collect()
}

/// Walk argv in order, one segment per transfer.
fn transfers(items: &[Item], contents: &Contents, files: &mut Vec<LocalFile>) -> Result<Vec<Action>, String> {
    let mut done: Vec<Segment> = Vec::new();
    let mut seg = Segment::default();
    for item in items {
        let f = match item {
            Item::Pos(u) if u == "-" => return Err("`-` is neither an option nor a URL curl accepts".into()),
            Item::Pos(u) => {
                seg.add_url(u);
                continue;
            }
            Item::Unknown { written, .. } => return Err(format!("unknown option {written}")),
            Item::Opt(f) => f,
        };
        // Long names are matched in any case (`--EXPAND-url`).
        let expand = f.written.to_ascii_lowercase().starts_with("--expand-");
        if expand {
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
        let flag = f.written.split('=').next().unwrap_or_default();
        if HEAD_VALUES.contains(&f.id) && v.contains(['\r', '\n']) {
            seg.mark("crlf");
        }
        match f.id.as_str() {
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
            "url" if expand => {
                seg.expanded_url = true;
                seg.out_events.push(OutEvent::Url(None));
            }
            "url" => seg.add_url(v),
            "request" => seg.request = Some(v.to_string()),
            "request-target" => seg.request_target = Some(v.to_string()),
            "location" => seg.location = on,
            "follow" => seg.follow = on,
            "location-trusted" => {
                seg.location_trusted = on;
                if on {
                    seg.mark("location-trusted");
                }
            }
            "max-redirs" => seg.no_redirects = v.trim().parse::<i64>() == Ok(0),
            "data" | "data-ascii" | "data-binary" | "json" => {
                seg.json |= f.id == "json";
                match v.strip_prefix('@') {
                    Some("-") => {
                        seg.mark("stdin");
                        seg.data.push(Piece::Opaque);
                    }
                    Some(path) => {
                        seg.mark("file-read");
                        files.push(read(path, flag, true).at(f.at));
                        seg.data.push(Piece::File {
                            path: path.to_string(),
                            strip: matches!(f.id.as_str(), "data" | "data-ascii"),
                        });
                    }
                    None => seg.data.push(Piece::Text(v.to_string())),
                }
            }
            "data-raw" => seg.data.push(Piece::Text(v.to_string())),
            "data-urlencode" => seg.data.push(urlencode_piece(v, flag, f.at, &mut seg.marks, files)),
            "url-query" if !v.starts_with('+') => {
                urlencode_piece(v, flag, f.at, &mut seg.marks, files);
            }
            "form" => {
                seg.form = true;
                form_field(v, flag, &mut seg, files);
            }
            "form-string" => {
                seg.form = true;
                let (k, val) = v.split_once('=').unwrap_or((v, ""));
                seg.form_value(k, val);
            }
            "upload-file" => {
                seg.upload = true;
                if v == "-" || v == "." {
                    seg.mark("stdin");
                } else {
                    seg.mark("file-read");
                    seg.upload_files.push((v.to_string(), flag.to_string()));
                }
            }
            "head" => seg.head = on,
            "get" => seg.get = on,
            "globoff" => seg.globoff = on,
            "header" => match v.strip_prefix('@') {
                Some("-") => seg.mark("stdin"),
                Some(path) => {
                    // Headers from a file: read by the gate, so a method override in them counts.
                    seg.mark("file-read");
                    files.push(read(path, flag, true).at(f.at));
                    match contents.get(path) {
                        Some(Ok(text)) => seg.headers.extend(text.lines().map(str::to_string)),
                        _ => seg.mark("unread-file"),
                    }
                }
                None => seg.headers.push(v.to_string()),
            },
            "proxy-header" => match v.strip_prefix('@') {
                Some("-") => seg.mark("stdin"),
                Some(path) => {
                    seg.mark("file-read");
                    files.push(read(path, flag, false));
                }
                None => {}
            },
            // Without `=` the value is a cookie file (`-` is stdin).
            "cookie" if !v.is_empty() && !v.contains('=') => {
                if v == "-" {
                    seg.mark("stdin");
                } else {
                    seg.mark("file-read");
                    files.push(read(v, flag, false));
                }
            }
            "config" => seg.mark("config"),
            "variable" => seg.mark("variables"),
            // `%output{file}` writes a file (8.3+); a format read from a file is unseen.
            "write-out" if v.starts_with('@') || v.to_ascii_lowercase().contains("%output{") => seg.mark("write-out-file"),
            "unix-socket" | "abstract-unix-socket" => {
                seg.mark("unix-socket");
                let name = v.rsplit('/').next().unwrap_or(v);
                if ENGINE_SOCKETS.iter().any(|s| name.eq_ignore_ascii_case(s)) {
                    seg.mark("docker-api");
                }
            }
            "proto-redir" if loosens_redirects(v) => seg.mark("proto-redir"),
            "proto-default" => seg.proto_default = Some(v.to_string()),
            "engine" if v != "list" => seg.mark("engine"),
            "quote" | "ftp-alternative-to-user" => seg.mark("ftp-command"),
            id if REROUTE.contains(id) && !v.is_empty() => {
                seg.mark("reroute");
                if names_docker_port(v) {
                    seg.mark("docker-api");
                }
            }
            "netrc" | "netrc-optional" if on => seg.mark("netrc"),
            "netrc-file" => {
                seg.mark("netrc");
                files.push(read(v, flag, false));
            }
            "etag-compare" => {
                seg.mark("file-read");
                files.push(read(v, flag, false));
            }
            "output" => {
                if !is_stream(v, true) {
                    seg.mark("file-write");
                }
                seg.outputs.push(v.to_string());
                seg.out_events.push(OutEvent::Out(false));
            }
            "output-dir" => {
                seg.mark("file-write");
                seg.output_dir = Some(v.to_string());
                files.push(write(v, flag));
            }
            "remote-name" | "remote-name-all" => {
                seg.out_events.push(if f.id == "remote-name" {
                    OutEvent::Out(on)
                } else {
                    OutEvent::All(on)
                });
                if on {
                    seg.mark("file-write");
                }
            }
            // The server names the file (Content-Disposition): the gate cannot check it.
            "remote-header-name" => {
                seg.header_name = on;
                if on {
                    seg.mark("server-named-file");
                }
            }
            "remove-on-error" if on => seg.mark("file-write"),
            id if (WRITES_PATH.contains(id) || WRITES_CACHE.contains(id)) && !is_stream(v, WRITES_PATH.contains(id)) => {
                seg.mark("file-write");
                files.push(write(v, flag));
            }
            _ => {}
        }
    }
    let mut budget = MAX_URLS;
    if done.is_empty() {
        // No transfer closed by `--next`: the last segment is the transfer, with or without a
        // URL (a call with none is judged on its options: `-K` would supply the URLs).
        return seg.actions(&BTreeSet::new(), contents, &mut budget, files);
    }
    // A trailing segment without a URL transfers nothing, but what its options do to local
    // files (global options such as `--stderr`, `--libcurl`) still happens.
    let carried = if seg.has_url() { BTreeSet::new() } else { seg.marks.clone() };
    if seg.has_url() {
        done.push(seg);
    }
    let mut out = Vec::new();
    for s in &done {
        for a in s.actions(&carried, contents, &mut budget, files)? {
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    Ok(out)
}

/// `--data-urlencode` (and `--url-query`): `content`, `=content`, `name=content`, `@file` or
/// `name@file` (a file only when there is no `=` before the `@`; `tool_getparam.c`).
fn urlencode_piece(v: &str, flag: &str, word: usize, marks: &mut BTreeSet<String>, files: &mut Vec<LocalFile>) -> Piece {
    let eq = v.find('=');
    let at = v.find('@');
    match (eq, at) {
        (Some(e), a) if a.is_none_or(|a| e < a) => {
            let name = (e > 0).then(|| v[..e].to_string());
            Piece::Encoded {
                name,
                text: Some(v[e + 1..].to_string()),
                file: None,
            }
        }
        (_, Some(a)) => {
            let path = &v[a + 1..];
            if path == "-" {
                marks.insert("stdin".into());
                return Piece::Opaque;
            }
            marks.insert("file-read".into());
            files.push(read(path, flag, true).at(word));
            Piece::Encoded {
                name: (a > 0).then(|| v[..a].to_string()),
                text: None,
                file: Some(path.to_string()),
            }
        }
        _ => Piece::Encoded {
            name: None,
            text: Some(v.to_string()),
            file: None,
        },
    }
}

/// One `-F name=value` field, read as curl's `formparse` (`tool_formparse.c`) reads it: `@a,b`
/// uploads every file of the comma list, `<f` sends a file's contents as the value, and any
/// part may carry `;type=`, `;filename=`, `;encoder=` and `;headers=@f`/`;headers=<f` (headers
/// read from a file). File names may be double-quoted (with `\"` and `\\` escapes) to hold
/// `,` or `;`; an unquoted word loses its surrounding spaces.
fn form_field(v: &str, flag: &str, seg: &mut Segment, files: &mut Vec<LocalFile>) {
    let (name, value) = v.split_once('=').unwrap_or((v, ""));
    let mut paths = Vec::new();
    if let Some(mut rest) = value.strip_prefix('@') {
        // One part per file: `get_param_part(',')` until no comma is left.
        loop {
            let part = form_part(rest, Some(','));
            paths.push(part.data);
            paths.extend(part.header_files);
            match part.rest.strip_prefix(',') {
                Some(more) => rest = more,
                None => break,
            }
        }
    } else if let Some(rest) = value.strip_prefix('<') {
        let part = form_part(rest, None);
        paths.push(part.data);
        paths.extend(part.header_files);
    } else {
        let part = form_part(value, None);
        if part.header_files.is_empty() {
            seg.form_value(name, &part.data);
            return;
        }
        paths.extend(part.header_files);
    }
    // A field that reads something: the form is no longer visible as fields.
    seg.form_fields = None;
    seg.mark("form-file");
    seg.mark("file-read");
    for p in paths {
        if p == "-" {
            seg.mark("stdin");
        } else {
            files.push(read(&p, flag, false));
        }
    }
}

/// One part of a form value, as `get_param_part` splits it.
struct FormPart<'a> {
    /// The value or file name, unquoted.
    data: String,
    /// Files named by `;headers=@f` or `;headers=<f`.
    header_files: Vec<String>,
    /// What follows the part: empty, or starting with the separator (`,`).
    rest: &'a str,
}

/// `get_param_part`: a word, then `;`-separated parameters up to the end or `end`.
fn form_part(s: &str, end: Option<char>) -> FormPart<'_> {
    let (data, mut rest) = form_word(s.trim_start(), end);
    let mut header_files = Vec::new();
    while let Some(r) = rest.strip_prefix(';') {
        let r = r.trim_start();
        if let Some(h) = r.strip_prefix("headers=")
            && let Some(f) = h.strip_prefix(['@', '<'])
        {
            let (file, after) = form_word(f.trim_start(), end);
            header_files.push(file);
            rest = after;
        } else if let Some(t) = r.strip_prefix("type=") {
            // A content type runs to the next `;` or separator, unquoted.
            let stop = t.find(|c| c == ';' || Some(c) == end).unwrap_or(t.len());
            rest = &t[stop..];
        } else if let Some(w) = r.strip_prefix("filename=").or_else(|| r.strip_prefix("encoder=")) {
            let (_, after) = form_word(w.trim_start(), end);
            rest = after;
        } else {
            // `headers=` with a literal header, or an unknown parameter: a word from here.
            let (_, after) = form_word(r.strip_prefix("headers=").map_or(r, str::trim_start), end);
            rest = after;
        }
    }
    FormPart { data, header_files, rest }
}

/// `get_param_word`: a double-quoted word (escapes `\"` and `\\`, anything up to the next `;`
/// or `end` after the closing quote ignored), or the text up to `;` or `end` with trailing
/// spaces cut. A quote that never closes makes the word unquoted.
fn form_word(s: &str, end: Option<char>) -> (String, &str) {
    let stops = |c: char| c == ';' || Some(c) == end;
    if let Some(q) = s.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = q.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' if q[i + 1..].starts_with(['"', '\\']) => out.extend(chars.next().map(|(_, c)| c)),
                '"' => {
                    let after = &q[i + 1..];
                    let stop = after.find(stops).unwrap_or(after.len());
                    return (out, &after[stop..]);
                }
                c => out.push(c),
            }
        }
    }
    let stop = s.find(stops).unwrap_or(s.len());
    (s[..stop].trim_end().to_string(), &s[stop..])
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

/// A proxy, `--connect-to` or `--resolve` value that names port 2375 or 2376 anywhere.
fn names_docker_port(v: &str) -> bool {
    v.match_indices(':').any(|(i, _)| {
        let digits: String = v[i + 1..].chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u16>().is_ok_and(|p| DOCKER_PORTS.contains(&p))
    })
}

/// Whether the path of `url` (before any query or fragment) is empty or ends in `/`: curl then
/// appends an upload's file name to it.
fn url_path_is_directory(url: &str) -> bool {
    let rest = split_scheme(url).map_or(url, |(_, r)| r).trim_start_matches('/');
    let path = rest.find(['/', '?', '#']).map_or("", |i| &rest[i..]);
    let path = path.split(['?', '#']).next().unwrap_or("");
    path.is_empty() || path.ends_with('/')
}

/// The name curl appends for an upload of `file`: what follows its last `/` or `\`, which the
/// server reads back decoded (curl percent-encodes it). A name that would step out of the path
/// or carry a path parameter is a problem, as in a URL.
fn upload_name(file: &str) -> Result<String, String> {
    let name = file.rsplit(['/', '\\']).next().unwrap_or(file);
    if name == "." || name == ".." || name.contains(';') {
        return Err(format!(
            "-T {file:?} would add the path segment {name:?} to the URL; name the upload's URL in full"
        ));
    }
    Ok(name.to_string())
}

/// Marks for one URL as curl will use it, and its normalised path when it is HTTP(S). Errors
/// for URLs whose scheme, host or path cannot be known.
fn url_facts(url: &str) -> Result<(Vec<String>, Option<String>), String> {
    if url.starts_with('@') {
        // curl 8.13+: `@file` is a file of URLs, unseen here.
        return Ok((vec!["url-file".into()], None));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("URL {url:?} holds whitespace or control characters"));
    }
    let (scheme, rest) = match split_scheme(url) {
        Some((s, rest)) => (Some(s), rest),
        None => (None, url),
    };
    let after = rest.trim_start_matches('/');
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let authority = &after[..end];
    let path = &after[end..];
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let scheme = match scheme {
        Some(s) => s,
        None => {
            let host = host_port.to_ascii_lowercase();
            GUESSED
                .iter()
                .find(|(prefix, _)| host.starts_with(*prefix))
                .map_or("http", |(_, s)| s)
                .to_string()
        }
    };
    let mut marks = Vec::new();
    if port(host_port).is_some_and(|p| DOCKER_PORTS.contains(&p)) {
        marks.push("docker-api".to_string());
    }
    if !is_http(&scheme) {
        marks.push("non-http-scheme".into());
        marks.push(format!("scheme={scheme}"));
        return Ok((marks, None));
    }
    Ok((marks, Some(http::normalise_path(path)?)))
}

/// The port of `host:port` or `[v6]:port`.
fn port(host_port: &str) -> Option<u16> {
    let after = match host_port.rfind(']') {
        Some(i) => &host_port[i + 1..],
        None => host_port.rfind(':').map_or("", |i| &host_port[i..]),
    };
    after.strip_prefix(':')?.parse().ok()
}

/// `scheme:` at the start of a URL, lower-cased, and what follows. curl needs `scheme:/`; a
/// known scheme name followed by `:` alone counts too.
fn split_scheme(url: &str) -> Option<(String, &str)> {
    let end = url.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))?;
    let name = &url[..end];
    let rest = url[end..].strip_prefix(':')?;
    let first_alpha = name.starts_with(|c: char| c.is_ascii_alphabetic());
    let lower = name.to_ascii_lowercase();
    (first_alpha && (rest.starts_with('/') || SCHEMES.contains(&lower))).then_some((lower, rest))
}

/// curl's URL globbing (`src/tool_urlglob.c`): `{a,b}` sets and `[1-10]`, `[a-z]`, `[01-10:2]`
/// ranges multiply one argument into many; `\` escapes a glob character; `[` that opens an IPv6
/// address is literal.
mod glob {
    use super::MAX_URLS;

    enum Part {
        Fixed(String),
        Choice(Vec<String>),
    }

    pub fn expand(s: &str) -> Result<Vec<String>, String> {
        let parts = parse(s)?;
        let mut out = vec![String::new()];
        for p in parts {
            match p {
                Part::Fixed(t) => out.iter_mut().for_each(|o| o.push_str(&t)),
                Part::Choice(c) => {
                    if out.len().saturating_mul(c.len()) > MAX_URLS {
                        return Err(format!(
                            "{s:?} expands to more than {MAX_URLS} URLs; use -g (--globoff) or split the call"
                        ));
                    }
                    out = out.iter().flat_map(|o| c.iter().map(move |x| format!("{o}{x}"))).collect();
                }
            }
        }
        Ok(out)
    }

    fn parse(s: &str) -> Result<Vec<Part>, String> {
        let chars: Vec<char> = s.chars().collect();
        let mut parts = Vec::new();
        let mut fixed = String::new();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '\\' if i + 1 < chars.len() && matches!(chars[i + 1], '{' | '}' | '[' | ']' | ',') => {
                    fixed.push(chars[i + 1]);
                    i += 2;
                }
                '{' => {
                    let (set, next) = set(&chars, i + 1, s)?;
                    parts.push(Part::Fixed(std::mem::take(&mut fixed)));
                    parts.push(Part::Choice(set));
                    i = next;
                }
                '[' => {
                    if let Some(end) = ipv6(&chars, i) {
                        fixed.extend(&chars[i..=end]);
                        i = end + 1;
                        continue;
                    }
                    let end = chars[i..].iter().position(|&c| c == ']').map(|p| p + i);
                    let Some(end) = end else {
                        return Err(format!("URL glob in {s:?} has an unmatched ["));
                    };
                    let inner: String = chars[i + 1..end].iter().collect();
                    parts.push(Part::Fixed(std::mem::take(&mut fixed)));
                    parts.push(Part::Choice(range(&inner, s)?));
                    i = end + 1;
                }
                '}' | ']' => return Err(format!("URL glob in {s:?} has an unmatched {}", chars[i])),
                c => {
                    fixed.push(c);
                    i += 1;
                }
            }
        }
        parts.push(Part::Fixed(fixed));
        Ok(parts)
    }

    fn set(chars: &[char], mut i: usize, s: &str) -> Result<(Vec<String>, usize), String> {
        let mut items = vec![String::new()];
        while i < chars.len() {
            match chars[i] {
                '\\' if i + 1 < chars.len() => {
                    if let Some(x) = items.last_mut() {
                        x.push(chars[i + 1]);
                    }
                    i += 2;
                    continue;
                }
                ',' => items.push(String::new()),
                '}' => return Ok((items, i + 1)),
                '{' | '[' | ']' => return Err(format!("URL glob in {s:?} nests {} inside {{}}", chars[i])),
                c => {
                    if let Some(x) = items.last_mut() {
                        x.push(c);
                    }
                }
            }
            i += 1;
        }
        Err(format!("URL glob in {s:?} has an unmatched {{"))
    }

    /// `[a-z]`, `[A-Z]`, `[0-9]`, `[001-100]` (zero-padded), each with an optional `:step`.
    fn range(inner: &str, s: &str) -> Result<Vec<String>, String> {
        let bad = || format!("URL glob range [{inner}] in {s:?} is not one curl accepts");
        let (span, step) = match inner.split_once(':') {
            Some((a, b)) => (a, b.parse::<u64>().map_err(|_| bad())?),
            None => (inner, 1),
        };
        if step == 0 {
            return Err(bad());
        }
        let (lo, hi) = span.split_once('-').ok_or_else(bad)?;
        let letters = |x: &str| {
            let mut c = x.chars();
            match (c.next(), c.next()) {
                (Some(ch), None) if ch.is_ascii_alphabetic() => Some(ch),
                _ => None,
            }
        };
        if let (Some(a), Some(b)) = (letters(lo), letters(hi)) {
            if a > b || a.is_ascii_lowercase() != b.is_ascii_lowercase() {
                return Err(bad());
            }
            let n = (b as u64 - a as u64) / step + 1;
            if n as usize > MAX_URLS {
                return Err(format!(
                    "{s:?} expands to more than {MAX_URLS} URLs; use -g (--globoff) or split the call"
                ));
            }
            return Ok((0..n).map(|k| char::from((a as u64 + k * step) as u8).to_string()).collect());
        }
        let (a, b) = (lo.parse::<u64>().map_err(|_| bad())?, hi.parse::<u64>().map_err(|_| bad())?);
        if a > b || !lo.bytes().all(|c| c.is_ascii_digit()) || !hi.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let n = (b - a) / step + 1;
        if n > MAX_URLS as u64 {
            return Err(format!(
                "{s:?} expands to more than {MAX_URLS} URLs; use -g (--globoff) or split the call"
            ));
        }
        let width = if lo.starts_with('0') && lo.len() > 1 { lo.len() } else { 0 };
        Ok((0..n).map(|k| format!("{:0width$}", a + k * step)).collect())
    }

    /// The index of the `]` closing an IPv6 literal that starts at `i`.
    fn ipv6(chars: &[char], i: usize) -> Option<usize> {
        let end = chars[i..].iter().position(|&c| c == ']')? + i;
        let inside = &chars[i + 1..end];
        let ok = inside.contains(&':')
            && inside
                .iter()
                .all(|c| c.is_ascii_hexdigit() || matches!(c, ':' | '.' | '%' | '_') || c.is_ascii_alphanumeric());
        ok.then_some(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;
    use pretty_assertions::assert_eq;

    const U: &str = "http://127.0.0.1:8080/x";

    /// Verb and marks of each action (the request itself is checked by the tests that name
    /// it), equal ones once.
    fn actions(words: &[&str]) -> Vec<Action> {
        let inv = parse(&argv(words));
        assert_eq!(inv.problem, None, "{words:?}");
        let mut out: Vec<Action> = Vec::new();
        for a in inv.actions {
            let bare = a.marks.iter().fold(Action::new(a.verb.clone()), |x, m| x.mark(m.clone()));
            if !out.contains(&bare) {
                out.push(bare);
            }
        }
        out
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
        assert_eq!(a, vec![act("GET", &["crlf"]), act("DELETE", &["crlf", "method-override"])]);
        assert_eq!(actions(&["-A", "x\nHost: y", U]), vec![act("GET", &["crlf"])]);
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
        for url in ["127.0.0.1:8080/x", "HTTPS://example.com", "http:/127.0.0.1/x", "[::1]:8080/x"] {
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
    fn globs_expand_to_every_url_so_schemes_and_hosts_in_them_are_judged() {
        assert_eq!(
            actions(&["{file,http}:///etc/passwd"]),
            vec![act("GET", &["non-http-scheme", "scheme=file"]), act("GET", &[])]
        );
        assert_eq!(
            actions(&["[e-g]ile:///etc/passwd"])[1],
            act("GET", &["non-http-scheme", "scheme=file"])
        );
        assert_eq!(
            actions(&["{ftp,www}.example.com/x"])[0],
            act("GET", &["non-http-scheme", "scheme=ftp"])
        );
        // With -g the braces are part of the URL (and this one is not HTTP at all).
        assert!(problem(&["-g", "{file,http}:///x"]).is_none());
        assert_eq!(
            paths(&["http://127.0.0.1/{a,b}/[1-3]"]),
            vec!["GET /a/1", "GET /a/2", "GET /a/3", "GET /b/1", "GET /b/2", "GET /b/3"]
        );
        assert_eq!(
            paths(&["http://h/[a-c:2]/[08-10]"]),
            vec!["GET /a/08", "GET /a/09", "GET /a/10", "GET /c/08", "GET /c/09", "GET /c/10"]
        );
        assert_eq!(paths(&["http://h/\\{x\\}"]), vec!["GET /{x}"]);
        assert_eq!(paths(&["http://[::1]:8080/[1-2]"]), vec!["GET /1", "GET /2"]);
        // A glob can reach a path a rule names: each expansion is its own request.
        assert_eq!(
            paths(&["-XPUT", "https://api.github.com/repos/o/r/pulls/1/{files,merge}"]),
            vec!["PUT /repos/o/r/pulls/1/files", "PUT /repos/o/r/pulls/1/merge"]
        );
    }

    #[test]
    fn globs_that_curl_rejects_or_that_expand_too_far_are_problems() {
        for url in [
            "http://h/{a,b",
            "http://h/[1-",
            "http://h/a}",
            "http://h/[z-a]",
            "http://h/[1-2:0]",
            "http://h/{a,{b}}",
        ] {
            assert!(problem(&[url]).is_some(), "{url}");
        }
        assert!(problem(&["http://h/[1-1001]"]).unwrap().contains("more than 1000"));
        assert!(problem(&["http://h/[1-40]/[1-40]"]).unwrap().contains("more than 1000"));
        assert!(
            problem(&["http://h/[1-600]", "http://h/[1-600]"])
                .unwrap()
                .contains("more than 1000")
        );
        assert!(problem(&["-g", "http://h/[1-5000]"]).is_none());
    }

    #[test]
    fn url_files_sockets_and_redirect_loosening_are_marked() {
        assert_eq!(actions(&["@urls.txt"]), vec![act("GET", &["url-file"])]);
        assert_eq!(actions(&["--url", "@urls.txt"]), vec![act("GET", &["url-file"])]);
        assert_eq!(actions(&["--abstract-unix-socket", "s", U]), vec![act("GET", &["unix-socket"])]);
        assert_eq!(actions(&["--proto-redir", "+file", "-L", U]), vec![act("GET", &["proto-redir"])]);
        assert_eq!(actions(&["--proto-redir", "=https", "-L", U]), vec![act("GET", &[])]);
        assert_eq!(actions(&["--proto-redir", "-all,+http", U]), vec![act("GET", &[])]);
    }

    #[test]
    fn docker_engine_sockets_and_ports_are_marked_docker_api() {
        for words in [
            &["--unix-socket", "/var/run/docker.sock", "-XPOST", "http://x/containers/c/kill"][..],
            &["--unix-socket", "/run/user/1000/podman/podman.sock", "http://d/v1.41/info"],
            &["http://127.0.0.1:2375/containers/json"],
            &["https://docker.internal:2376/info"],
            &["http://[::1]:2375/info"],
            &["localhost:2375/info"],
            &["--connect-to", "::127.0.0.1:2375", U],
            &["--resolve", "example.com:80:127.0.0.1", "-x", "http://127.0.0.1:2376", U],
        ] {
            assert!(actions(words).iter().all(|a| a.has("docker-api")), "{words:?}");
        }
        assert!(!actions(&["http://127.0.0.1:23750/x"])[0].has("docker-api"));
        assert!(!actions(&["--unix-socket", "/run/app.sock", U])[0].has("docker-api"));
    }

    #[test]
    fn local_file_reads_are_marked_and_listed_and_stdin_apart() {
        for (words, mark, path) in [
            (&["-d", "@body.json", U][..], "file-read", Some("body.json")),
            (&["--data-binary", "@-", U], "stdin", None),
            (&["--data-urlencode", "name@file", U], "file-read", Some("file")),
            (&["--json", "@x.json", U], "file-read", Some("x.json")),
            (&["-F", "f=@file", U], "file-read", Some("file")),
            (&["-F", "f=<\"a;b\";type=text/plain", U], "file-read", Some("a;b")),
            (&["-F", "f=x;headers=@h.txt", U], "file-read", Some("h.txt")),
            (&["-F", "f=<-", U], "stdin", None),
            (&["-T", "-", U], "stdin", None),
            (&["-T", ".", U], "stdin", None),
            (&["-T", "up.bin", U], "file-read", Some("up.bin")),
            (&["-b", "cookies.txt", U], "file-read", Some("cookies.txt")),
            (&["--netrc-file", "n", U], "netrc", Some("n")),
            (&["-H", "@headers.txt", U], "file-read", Some("headers.txt")),
            (&["-H", "@-", U], "stdin", None),
            (&["--url-query", "q@secret", U], "file-read", Some("secret")),
            (&["--etag-compare", "etag", U], "file-read", Some("etag")),
        ] {
            assert!(actions(words)[0].has(mark), "{words:?} should be {mark}");
            let files: Vec<String> = parse(&argv(words)).files.into_iter().map(|f| f.path).collect();
            assert_eq!(files, path.map(|p| vec![p.to_string()]).unwrap_or_default(), "{words:?}");
        }
        assert_eq!(actions(&["-n", U]), vec![act("GET", &["netrc"])]);
        assert_eq!(actions(&["--data-urlencode", "a=b@c", U]), vec![act("POST", &["body"])]);
        assert_eq!(actions(&["--data-raw", "@x", U]), vec![act("POST", &["body"])]);
        assert_eq!(actions(&["-b", "a=b", U]), vec![act("GET", &[])]);
        assert_eq!(actions(&["--url-query", "+q@x", U]), vec![act("GET", &[])]);
        assert_eq!(actions(&["-G", "-d", "@q", U]), vec![act("GET", &["file-read"])]);
        // Bodies and header files are read by the gate; uploads and form files are not.
        let content: Vec<bool> = parse(&argv(&["-d", "@a", "-H", "@h", "-T", "u", "-F", "f=@x", U]))
            .files
            .iter()
            .map(|f| f.content)
            .collect();
        assert_eq!(content, vec![true, true, false, false]);
    }

    #[test]
    fn a_header_file_counts_its_method_overrides_once_read() {
        let words = argv(&["-d", "x", "-H", "@h.txt", U]);
        assert!(parse(&words).actions[0].has("unread-file"));
        let contents = Contents::from([("h.txt".to_string(), Ok("Accept: */*\nX-HTTP-Method-Override: DELETE\n".to_string()))]);
        let verbs: Vec<String> = parse_with(&words, &contents).actions.iter().map(|a| a.verb.clone()).collect();
        assert_eq!(verbs, vec!["POST", "DELETE"]);
    }

    #[test]
    fn local_file_writes_are_marked_and_listed_except_standard_streams() {
        for (words, path) in [
            (&["-o", "out.json", U][..], "out.json"),
            (&["-O", "http://h/dir/file.tar.gz"], "file.tar.gz"),
            (&["--remote-name-all", "http://h/a.txt"], "a.txt"),
            (&["--output-dir", "d", U], "d"),
            (&["-D", "h.txt", U], "h.txt"),
            (&["-c", "jar", U], "jar"),
            (&["--trace", "t", U], "t"),
            (&["--stderr", "e", U], "e"),
            (&["--libcurl", "x.c", U], "x.c"),
            (&["--etag-save", "e", U], "e"),
            (&["--hsts", "-", U], "-"),
            (&["--alt-svc", "a", U], "a"),
            (&["-o", "/home/a/.bashrc", U], "/home/a/.bashrc"),
        ] {
            assert!(actions(words)[0].has("file-write"), "{words:?}");
            let files: Vec<String> = parse(&argv(words)).files.into_iter().map(|f| f.path).collect();
            assert!(files.contains(&path.to_string()), "{words:?}: {files:?}");
        }
        let files: Vec<String> = parse(&argv(&["--output-dir", "out", "-o", "a.txt", "-O", "http://h/b.txt", "-o", "/abs"]))
            .files
            .into_iter()
            .map(|f| f.path)
            .collect();
        // The URL takes the first output (`-o a.txt`); the `-O` has no URL of its own, so curl
        // writes no b.txt. Every `-o` is declared.
        assert_eq!(files, vec!["out", "out/a.txt", "/abs"]);
        for words in [
            &["-o", "/dev/null", U][..],
            &["-D", "-", U],
            &["--trace-ascii", "-", U],
            &["-o-", U],
        ] {
            assert_eq!(actions(words), vec![act("GET", &[])], "{words:?}");
            assert!(parse(&argv(words)).files.is_empty(), "{words:?}");
        }
        assert_eq!(actions(&["--no-remote-name", U]), vec![act("GET", &[])]);
        assert_eq!(actions(&["-J", "-O", U]), vec![act("GET", &["file-write", "server-named-file"])]);
        assert!(problem(&["-o", "out_#1.txt", "http://h/{a,b}"]).is_some());
        assert!(problem(&["-O", "http://h/"]).is_some());
    }

    #[test]
    fn reroutes_engines_and_ftp_commands_are_marked() {
        assert_eq!(actions(&["-x", "http://p:3128", U]), vec![act("GET", &["reroute"])]);
        assert_eq!(actions(&["-x", "", U]), vec![act("GET", &[])]);
        assert_eq!(actions(&["--connect-to", "::127.0.0.1:8443", U]), vec![act("GET", &["reroute"])]);
        assert_eq!(actions(&["--engine", "/tmp/x.so", U]), vec![act("GET", &["engine"])]);
        assert_eq!(actions(&["-Q", "DELE x", U]), vec![act("GET", &["ftp-command"])]);
    }

    #[test]
    fn help_and_version_stop_parsing_and_keep_earlier_marks() {
        assert_eq!(actions(&["--help"]), vec![act("help", &[])]);
        assert_eq!(actions(&["-h", "all"]), vec![act("help", &[])]);
        assert_eq!(actions(&["-X", "DELETE", U, "-M"]), vec![act("help", &[])]);
        assert_eq!(actions(&["-V"]), vec![act("version", &[])]);
        let inv = parse(&argv(&["--stderr", "/home/a/.profile", "-h"]));
        assert_eq!(inv.actions, vec![act("help", &["file-write"])]);
        assert_eq!(inv.files.len(), 1);
    }

    /// `METHOD /path` of each request the call makes.
    fn paths(words: &[&str]) -> Vec<String> {
        let inv = parse(&argv(words));
        assert_eq!(inv.problem, None, "{words:?}");
        inv.actions
            .iter()
            .filter_map(|a| a.http.as_ref().map(|h| format!("{} {}", h.method, h.path)))
            .collect()
    }

    fn body(words: &[&str], contents: &Contents) -> Body {
        let inv = parse_with(&argv(words), contents);
        assert_eq!(inv.problem, None, "{words:?}");
        inv.actions[0].http.as_ref().map_or(Body::None, |h| h.body.clone())
    }

    fn fields(pairs: &[(&str, &str)]) -> Body {
        Body::Fields(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn each_request_has_its_method_and_normalised_path() {
        assert_eq!(
            paths(&["https://git.example/api/v1//repos/o/r/?x=1"]),
            vec!["GET /api/v1/repos/o/r"]
        );
        assert_eq!(paths(&["-XPOST", "example.com"]), vec!["POST /"]);
        assert_eq!(paths(&["--url", "http://h/a%2Fb", "-I"]), vec!["HEAD /a/b"]);
        assert_eq!(
            paths(&["-H", "X-HTTP-Method-Override: DELETE", "-d", "x", "http://h/repos/o/r"]),
            vec!["POST /repos/o/r", "DELETE /repos/o/r"]
        );
        assert_eq!(
            paths(&["http://h/a", "--next", "-XDELETE", "http://h/b"]),
            vec!["GET /a", "DELETE /b"]
        );
        assert!(paths(&["file:///etc/passwd"]).is_empty());
        assert!(problem(&["http://h/a/../b"]).is_some());
        assert!(problem(&["http://h/a/%2e%2e/b"]).is_some());
    }

    /// The files a call lists, as written.
    fn listed(words: &[&str]) -> Vec<String> {
        parse(&argv(words)).files.into_iter().map(|f| f.path).collect()
    }

    #[test]
    fn every_file_of_a_form_field_is_listed_as_curl_reads_the_value() {
        assert_eq!(listed(&["-F", "k=@x,/tmp/secret.txt", U]), vec!["x", "/tmp/secret.txt"]);
        assert_eq!(
            listed(&["-F", "k=@a;type=text/plain,b;filename=x.txt,\"c,d\";headers=@h", U]),
            vec!["a", "b", "c,d", "h"]
        );
        assert_eq!(listed(&["-F", "k=@\"q\\\"x\" , /etc/passwd", U]), vec!["q\"x", "/etc/passwd"]);
        assert_eq!(listed(&["-F", "k=@ a ; type=text/plain , b ", U]), vec!["a", "b"]);
        assert_eq!(listed(&["-F", "k=<body.txt;headers=< h2", U]), vec!["body.txt", "h2"]);
        assert_eq!(listed(&["-F", "k=v;filename=\"a;headers=@no\";headers=@yes", U]), vec!["yes"]);
        // An unclosed quote is an ordinary word.
        assert_eq!(listed(&["-F", "k=@\"a,b", U]), vec!["\"a", "b"]);
        let a = actions(&["-F", "k=@x,-", U]);
        assert!(a[0].has("stdin") && a[0].has("form-file"), "{a:?}");
    }

    #[test]
    fn a_plain_form_value_is_read_without_its_parameters() {
        let none = Contents::new();
        assert_eq!(
            body(&["-F", "event=APPROVE;type=text/plain", U], &none),
            fields(&[("event", "APPROVE")])
        );
        assert_eq!(body(&["-F", "event=\"APPROVE\"", U], &none), fields(&[("event", "APPROVE")]));
        assert_eq!(body(&["-F", "event=COMMENT", "-F", "event=APPROVE", U], &none), Body::Opaque);
    }

    #[test]
    fn the_request_target_is_the_path_the_endpoint_rules_see() {
        assert_eq!(
            paths(&[
                "-X",
                "PUT",
                "--request-target",
                "/repos/o/r/pulls/1/merge",
                "https://api.github.com/x"
            ]),
            vec!["PUT /repos/o/r/pulls/1/merge"]
        );
        assert_eq!(
            paths(&["--request-target", "http://h/a/%62?q", "https://api.github.com/x"]),
            vec!["GET /a/b"]
        );
        // Reset by --next, like every option of a transfer.
        assert_eq!(paths(&["--request-target", "/a", U, "--next", U]), vec!["GET /a", "GET /x"]);
        for t in ["*", "api.github.com:443", "a/b"] {
            assert_eq!(
                actions(&["--request-target", t, U]),
                vec![act("GET", &["request-target-unknown"])],
                "{t}"
            );
        }
        assert!(problem(&["--request-target", "/a b", U]).is_some());
        assert!(problem(&["--request-target", "/a/../b", U]).is_some());
    }

    #[test]
    fn writes_that_follow_redirects_are_marked_and_reads_are_not() {
        for words in [
            &["-L", "-X", "PUT", U][..],
            &["-sSfL", "-d", "a=1", U],
            &["--follow", "-T", "f.txt", U],
            &["--location-trusted", "-XPOST", U],
            &["-L", "-X", "GET", "-d", "a", U],
        ] {
            assert!(
                actions(words).iter().all(|a| a.has("redirect-write")),
                "{words:?}: {:?}",
                actions(words)
            );
        }
        // The override header goes along with every hop.
        let a = actions(&["-L", "-H", "X-HTTP-Method-Override: DELETE", U]);
        assert_eq!(a, vec![act("GET", &[]), act("DELETE", &["method-override", "redirect-write"])]);
        for words in [
            &["-L", U][..],
            &["-LI", U],
            &["-L", "-G", "-d", "q=1", U],
            &["-L", "--max-redirs", "0", "-XPUT", U],
            &["-L", "--no-location", "-XPUT", U],
            &["-XPUT", U, "--next", "-L", U],
        ] {
            assert!(actions(words).iter().all(|a| !a.has("redirect-write")), "{words:?}");
        }
        assert_eq!(actions(&["--location-trusted", U]), vec![act("GET", &["location-trusted"])]);
    }

    #[test]
    fn bodies_are_read_from_data_forms_and_files() {
        let none = Contents::new();
        assert_eq!(
            body(&["-d", r#"{"head":"f","base":"main"}"#, U], &none),
            fields(&[("base", "main"), ("head", "f")])
        );
        assert_eq!(body(&["-d", "a=1", "-d", "b=2", U], &none), fields(&[("a", "1"), ("b", "2")]));
        assert_eq!(body(&["--data-urlencode", "t=a&b", U], &none), fields(&[("t", "a&b")]));
        assert_eq!(
            body(&["--json", r#"{"event":"APPROVE"}"#, U], &none),
            fields(&[("event", "APPROVE")])
        );
        assert_eq!(
            body(&["-F", "a=1", "--form-string", "b=@x", U], &none),
            fields(&[("a", "1"), ("b", "@x")])
        );
        assert_eq!(body(&["-F", "a=@f", U], &none), Body::Opaque);
        assert_eq!(body(&["-T", "f", U], &none), Body::Opaque);
        assert_eq!(body(&["-d", "@-", U], &none), Body::Opaque);
        assert_eq!(body(&["-d", "@b.json", U], &none), Body::Opaque);
        assert_eq!(body(&["-G", "-d", "a=1", U], &none), Body::None);
        let contents = Contents::from([
            ("b.json".to_string(), Ok("{\"head\":\n\"fix\"}\n".to_string())),
            ("bad".to_string(), Err("not readable".to_string())),
        ]);
        assert_eq!(body(&["-d", "@b.json", U], &contents), fields(&[("head", "fix")]));
        assert_eq!(body(&["--data-binary", "@b.json", U], &contents), fields(&[("head", "fix")]));
        assert_eq!(body(&["-d", "@bad", U], &contents), Body::Opaque);
    }

    #[test]
    fn api_shapes_carry_scope_targets_through_curl() {
        let inv = parse(&argv(&[
            "-X",
            "POST",
            "https://git.example/api/v1/repos/o/r/pulls",
            "--json",
            r#"{"head":"fix","base":"main","title":"t"}"#,
        ]));
        assert!(inv.actions[0].has("pr-create"));
        assert!(inv.actions[0].scope.is_some());
        let inv = parse(&argv(&[
            "-X",
            "PUT",
            "https://api.github.com/repos/o/r/contents/a/b.md",
            "-d",
            "{}",
        ]));
        assert!(inv.actions[0].has("contents-write"));
        let inv = parse(&argv(&[
            "https://api.github.com/graphql",
            "--json",
            r#"{"query":"mutation { deleteRef(input:{}) { clientMutationId } }"}"#,
        ]));
        assert_eq!(inv.actions[0].http.as_ref().and_then(|h| h.mutation.as_deref()), Some("deleteRef"));
    }

    #[test]
    fn long_options_match_in_any_case_and_as_unique_prefixes_as_curl_7_88_reads_them() {
        for (words, want) in [
            (&["--REQUEST", "DELETE", U][..], "DELETE"),
            (&["--Request=PUT", U], "PUT"),
            (&["--data-b", "x", U], "POST"),
            (&["--DATA", "x", U], "POST"),
            (&["-s", "--nex", U], "GET"),
            (&["--request", "PATCH", "--request-t", "/a", U], "PATCH"),
        ] {
            let inv = parse(&argv(words));
            assert_eq!(inv.problem, None, "{words:?}");
            assert_eq!(inv.actions[0].verb, want, "{words:?}");
        }
        // `--no-` takes whole names only, and in lower case.
        assert_eq!(problem(&["--no-prog", U]), Some("unknown option --no-prog".into()));
        assert!(parse(&argv(&["--no-progress-meter", U])).problem.is_none());
        assert_eq!(problem(&["--in", U]), Some("option --in is ambiguous".into()));
    }

    #[test]
    fn an_upload_to_a_directory_url_goes_to_the_file_name_curl_appends() {
        let paths = |words: &[&str]| -> Vec<String> {
            let inv = parse(&argv(words));
            assert_eq!(inv.problem, None, "{words:?}");
            inv.actions
                .iter()
                .filter_map(|a| a.http.as_ref().map(|h| format!("{} {}", h.method, h.path)))
                .collect()
        };
        assert_eq!(
            paths(&["-T", "merge", "https://h/repos/o/r/pulls/1/?x=1"]),
            vec!["PUT /repos/o/r/pulls/1", "PUT /repos/o/r/pulls/1/merge"]
        );
        assert_eq!(paths(&["-T", "dir/a b", "https://h"]), vec!["PUT /", "PUT /a b"]);
        assert_eq!(paths(&["-T", "{a,b}", "https://h/x/"]), vec!["PUT /x", "PUT /x/a", "PUT /x/b"]);
        assert_eq!(paths(&["-T", "a", "https://h/x/y"]), vec!["PUT /x/y"]);
        assert_eq!(paths(&["-T", "-", "https://h/x/"]), vec!["PUT /x"]);
        assert!(problem(&["-T", "x/..", "https://h/x/"]).is_some_and(|p| p.contains("\"..\"")));
    }

    /// `access path` of every local file the call declares.
    fn local(words: &[&str]) -> Vec<String> {
        let inv = parse(&argv(words));
        assert_eq!(inv.problem, None, "{words:?}");
        inv.files
            .iter()
            .map(|f| format!("{} {}", if f.access.writes() { "write" } else { "read" }, f.path))
            .collect()
    }

    #[test]
    fn the_last_of_g_and_no_globoff_decides_how_t_files_expand() {
        assert_eq!(
            local(&["-g", "-T", "{a,b}", "--no-globoff", "https://h/x/"]),
            vec!["read a", "read b"]
        );
        assert_eq!(local(&["--no-globoff", "-T", "{a,b}", "-g", "https://h/x/"]), vec!["read {a,b}"]);
        assert_eq!(local(&["-T", "{a,b}", "https://h/x/"]), vec!["read a", "read b"]);
    }

    #[test]
    fn o_and_no_remote_name_pair_with_urls_as_curl_pairs_them() {
        let u = "https://h/d/.bashrc";
        // Each -O / --no-remote-name takes the first URL without an output, in argv order.
        assert_eq!(local(&["-O", u, "--no-remote-name"]), vec!["write .bashrc"]);
        assert_eq!(local(&["-O", "--no-remote-name", u]), vec!["write .bashrc"]);
        assert!(local(&["--no-remote-name", "-O", u]).is_empty());
        // --remote-name-all counts for the URLs that come after it.
        assert_eq!(local(&["--remote-name-all", u, "--no-remote-name-all"]), vec!["write .bashrc"]);
        assert!(local(&["--remote-name-all", "--no-remote-name-all", u]).is_empty());
        assert_eq!(local(&["-o", "out", u, "-O", "https://h/d/two"]), vec!["write out", "write two"]);
    }

    #[test]
    fn grammar_problems_name_the_token() {
        assert_eq!(problem(&["--reqest", "POST", U]), Some("unknown option --reqest".into()));
        assert_eq!(problem(&["--reques", "POST", U]), Some("option --reques is ambiguous".into()));
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
            let words = [
                format!("--{}", o.long.iter().next().unwrap()),
                "file:///etc/passwd".to_string(),
                U.to_string(),
            ];
            let inv = parse(&words);
            let urls_seen = inv.actions.iter().any(|a| a.has("scheme=file"));
            assert!(!urls_seen || o.id == "url", "--{} let its value be a URL", o.id);
        }
        assert_eq!(TABLE.iter().filter(|o| o.arity != Arity::Flag).count(), 151);
    }
}
