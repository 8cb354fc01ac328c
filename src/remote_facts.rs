//! What the gate reads on the remote host of an ssh call before it decides, over the same
//! connection the call would use: the files a remote `compose up` starts containers from, and
//! where the paths a tier-2 remote command writes really lead.
//!
//! The read is a second ssh exec, built by the gate and never by the caller: the real ssh with
//! the pinned config, `BatchMode=yes`, no terminal, the caller's own connection options
//! (destination, user, port, jump hosts, identity), and as its command a fixed POSIX shell
//! script ([`script`]) that only runs `id`, `cd`, `pwd`, `realpath`, `stat`, `dirname`, `wc` and
//! `cat` on the paths the gate asks about, each passed single-quoted. It answers, per path,
//! where it really leads, its owner and mode, the owner and mode of every directory met on the
//! way to it, and (when asked) its contents, bounded. The gate then judges those answers as it
//! judges local files: a compose file the remote login user could change (it, or a directory on
//! its way, is writable by that user), or one that asks for what `docker run` needs tier 3 for,
//! makes the `compose up` tier 3; a write that really leads outside the host's workspaces needs
//! tier 3. Whatever cannot be read is unknown, and unknown is refused below tier 3.
//!
//! Runs only when a first decision asks for it (`Needs::remote`): below tier 3, for a call
//! nothing else refuses. `tiershim explain` does not connect.
//!
//! Must not: decide, or run anything on the remote host but the script. Parsing the answer and
//! judging it are pure ([`parse`], [`writable`], [`judge_compose`]); only [`Connection::run`]
//! does I/O.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::decision::RemoteFacts;
use crate::grammar::compose::Judged;
use crate::grammar::remote::Remote;
use crate::grammar::{ComposeFiles, ssh};
use crate::remote_fence;
use crate::remote_fence::RemoteHost;

/// How long the whole read may take before the gate gives up (and refuses below tier 3).
const TIMEOUT: Duration = Duration::from_secs(30);
/// The most output the gate reads from the script.
const MAX_OUTPUT: usize = 16 << 20;
/// The first and last line of the script's answer.
const HELLO: &str = "tiershim-remote-facts 1";
const BYE: &str = "tiershim-remote-facts end";

/// The connection of the call being judged, and how the gate runs the real ssh.
pub struct Connection {
    /// The real ssh.
    pub real: PathBuf,
    /// The caller's argv without the words of the remote command.
    pub args: Vec<String>,
    /// The environment the real ssh gets for the call itself.
    pub env: Vec<(OsString, OsString)>,
}

/// One thing to ask about a remote path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ask {
    /// Where it leads, and who could change it.
    Path(String),
    /// The same, and its contents.
    Contents(String),
    /// Compose's search for a default file from this directory up; the file found and its
    /// override, with their contents.
    Search(String),
}

impl Ask {
    fn word(&self) -> String {
        let (k, p) = match self {
            Ask::Path(p) => ("r", p),
            Ask::Contents(p) => ("c", p),
            Ask::Search(p) => ("s", p),
        };
        shell_words::quote(&format!("{k}:{p}")).into_owned()
    }
}

/// The owner and mode of a file or directory, as `stat` printed them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
    /// `stat`'s `%F`: `regular file`, `directory`, …
    pub kind: String,
}

/// The answer about one path.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    /// Where it really leads (`realpath -m`); None when that failed.
    pub real: Option<String>,
    /// What is there; None when nothing is.
    pub meta: Option<Meta>,
    /// Every directory met on the way to it, with its owner and mode (missing ones left out).
    pub dirs: Vec<(String, Meta)>,
    /// Every entry the path names on the way (a symlink itself, not where it leads), with its
    /// owner: in a sticky directory only the owner may replace it.
    pub entries: Vec<(String, Meta)>,
    /// Its contents when asked for and it is a regular file: Some(None) when it is larger than
    /// the gate reads.
    pub contents: Option<Option<Vec<u8>>>,
}

/// The whole answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// The login user and its groups.
    pub uid: u32,
    pub gids: Vec<u32>,
    /// The working directory after the `cd` (physical).
    pub cwd: String,
    /// One per [`Ask`], in order: the records (a search has one per file found).
    pub answers: Vec<Vec<Record>>,
}

/// The script the remote login shell runs: fixed text, with the `cd` and the questions as
/// single-quoted words. `tsr KIND PATH` answers for one path: `P` where it leads, `S` what is
/// there, `A` each directory met while resolving each prefix of the path, `L` each entry named
/// on the way (a symlink's own owner: who could replace it), `C` the contents; `tss DIR` is
/// compose's search for a default file.
fn script(cd: Option<&str>, asks: &[Ask]) -> String {
    let defaults = crate::compose::DEFAULT_FILES.join(" ");
    let overrides = crate::compose::OVERRIDE_FILES.join(" ");
    let max = crate::compose::MAX_READ;
    let cd = match cd {
        Some(d) => format!("cd -- {} || {{ printf 'X\\n'; exit 0; }}\n", shell_words::quote(d)),
        None => String::new(),
    };
    let words: Vec<String> = asks.iter().map(Ask::word).collect();
    format!(
        r#"LC_ALL=C; export LC_ALL; set -f
tsc() {{ if [ -e "$1" ]; then stat -c "$2 %u %g %a %F" -- "$1" 2>/dev/null || printf '%s\n' "$2"; else printf '%s\n' "$2"; fi; }}
tsa() {{ _x=$(realpath -m -- "$1" 2>/dev/null) || return 0; while :; do if [ -d "$_x" ]; then stat -c 'A %u %g %a %n' -- "$_x" 2>/dev/null; fi; [ "$_x" = / ] && break; _x=$(dirname -- "$_x"); done; }}
tsr() {{ if _p=$(realpath -m -- "$2" 2>/dev/null) && [ -n "$_p" ]; then printf 'P %s\n' "$_p"; else printf 'P\nE\n'; return 0; fi
  tsc "$_p" S
  case $2 in /*) _q=/ ;; *) _q= ;; esac
  _i=$IFS; IFS=/; for _c in $2; do IFS=$_i; [ -n "$_c" ] || continue; tsa "${{_q:-.}}"
    if _r=$(realpath -m -- "${{_q:-.}}" 2>/dev/null); then [ "$_r" = / ] && _e=/$_c || _e=$_r/$_c
      if [ -e "$_e" ] || [ -L "$_e" ]; then stat -c 'L %u %g %a %n' -- "$_e" 2>/dev/null; fi; fi
    _q="$_q$_c/"; done; IFS=$_i; tsa "$_p"
  if [ "$1" = c ] && [ -f "$_p" ]; then _n=$(wc -c < "$_p" 2>/dev/null) || _n=-1
    if [ "$_n" -ge 0 ] && [ "$_n" -le {max} ]; then printf 'C %s\n' "$_n"; cat -- "$_p"; printf '\n'; else printf 'C\n'; fi; fi
  printf 'E\n'; }}
tss() {{ if _d=$(cd -- "$1" 2>/dev/null && pwd -P); then :; else printf 'N\n'; return 0; fi
  while :; do for _f in {defaults}; do if [ -f "$_d/$_f" ]; then printf 'F\n'; tsr c "$_d/$_f"
    for _o in {overrides}; do if [ -f "$_d/$_o" ]; then printf 'F\n'; tsr c "$_d/$_o"; break; fi; done; printf 'N\n'; return 0; fi; done
    [ "$_d" = / ] && break; _d=$(dirname -- "$_d"); done; printf 'N\n'; }}
printf '%s\n' '{HELLO}'; printf 'U %s\n' "$(id -u)"; printf 'G %s\n' "$(id -G)"
{cd}printf 'W %s\n' "$(pwd -P)"
for _a in {words}; do case $_a in r:*) tsr r "${{_a#r:}}" ;; c:*) tsr c "${{_a#c:}}" ;; s:*) tss "${{_a#s:}}" ;; esac; done
printf '%s\n' '{BYE}'
"#,
        words = words.join(" ")
    )
}

/// Lines and counted bytes of the script's answer.
struct Cursor<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn line(&mut self) -> Result<&'a str, String> {
        let rest = &self.text[self.at.min(self.text.len())..];
        let end = rest.iter().position(|b| *b == b'\n').ok_or("the answer ends early")?;
        self.at += end + 1;
        std::str::from_utf8(&rest[..end]).map_err(|_| "the answer is not UTF-8".to_string())
    }

    fn peek(&self) -> Option<&'a [u8]> {
        let rest = &self.text[self.at.min(self.text.len())..];
        rest.iter().position(|b| *b == b'\n').map(|e| &rest[..e])
    }

    fn bytes(&mut self, n: usize) -> Result<Vec<u8>, String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e < self.text.len())
            .ok_or("the answer ends early")?;
        let out = self.text[self.at..end].to_vec();
        if self.text[end] != b'\n' {
            return Err("a file changed while it was read".into());
        }
        self.at = end + 1;
        Ok(out)
    }
}

fn meta(fields: &str) -> Result<Meta, String> {
    let mut it = fields.splitn(4, ' ');
    let num = |s: Option<&str>, radix| s.and_then(|v| u32::from_str_radix(v, radix).ok());
    let (Some(uid), Some(gid), Some(mode), Some(kind)) = (num(it.next(), 10), num(it.next(), 10), num(it.next(), 8), it.next()) else {
        return Err(format!("`{fields}` is not an owner and a mode"));
    };
    Ok(Meta {
        uid,
        gid,
        mode,
        kind: kind.to_string(),
    })
}

fn record(c: &mut Cursor) -> Result<Record, String> {
    let mut r = Record::default();
    let p = c.line()?;
    match p.strip_prefix("P") {
        Some("") => {
            c.line()?;
            return Ok(r);
        }
        Some(rest) => r.real = Some(rest.strip_prefix(' ').ok_or("a bad path line")?.to_string()),
        None => return Err(format!("expected a path, got `{p}`")),
    }
    let s = c.line()?;
    match s.strip_prefix("S") {
        Some("") => {}
        Some(rest) => r.meta = Some(meta(rest.trim_start())?),
        None => return Err(format!("expected what is at a path, got `{s}`")),
    }
    while c.peek().is_some_and(|l| l.starts_with(b"A ") || l.starts_with(b"L ")) {
        let l = c.line()?;
        let rest = &l[2..];
        // `A|L uid gid mode path`: the path is everything after the third space.
        let mut it = rest.splitn(4, ' ');
        let (Some(u), Some(g), Some(m), Some(path)) = (it.next(), it.next(), it.next(), it.next()) else {
            return Err(format!("`{l}` is not a directory or entry line"));
        };
        let m = meta(&format!("{u} {g} {m} -"))?;
        let list = if l.starts_with('A') { &mut r.dirs } else { &mut r.entries };
        if !list.iter().any(|(p, _)| p == path) {
            list.push((path.to_string(), m));
        }
    }
    if c.peek().is_some_and(|l| l.starts_with(b"C")) {
        let l = c.line()?;
        r.contents = Some(match l.strip_prefix("C ") {
            Some(n) => Some(c.bytes(n.parse::<usize>().map_err(|_| format!("`{l}` is not a size"))?)?),
            None => None,
        });
    }
    let e = c.line()?;
    if e != "E" {
        return Err(format!("expected the end of a record, got `{e}`"));
    }
    Ok(r)
}

/// Read the script's answer to `asks`. Err when it is not the answer of [`script`] (another login
/// shell, a forced command, a failed `cd`, a file that changed while it was read, …).
fn parse(out: &[u8], asks: &[Ask]) -> Result<Report, String> {
    let mut c = Cursor { text: out, at: 0 };
    let hello = c.line().map_err(|_| "the remote host gave no answer".to_string())?;
    if hello != HELLO {
        return Err("the remote login shell did not run the gate's read-only script".into());
    }
    let mut report = Report::default();
    let u = c.line()?;
    report.uid = u
        .strip_prefix("U ")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("`{u}` is not the login user"))?;
    let g = c.line()?;
    report.gids = g
        .strip_prefix("G ")
        .ok_or_else(|| format!("`{g}` is not the login user's groups"))?
        .split_whitespace()
        .map(|x| x.parse().map_err(|_| format!("`{g}` is not the login user's groups")))
        .collect::<Result<_, _>>()?;
    let w = c.line()?;
    if w == "X" {
        return Err("the `cd` in front of the command failed on the remote host".into());
    }
    report.cwd = w.strip_prefix("W ").ok_or_else(|| format!("`{w}` is not a directory"))?.to_string();
    for a in asks {
        let records = match a {
            Ask::Path(_) | Ask::Contents(_) => vec![record(&mut c)?],
            Ask::Search(_) => {
                let mut found = Vec::new();
                loop {
                    match c.line()? {
                        "F" => found.push(record(&mut c)?),
                        "N" => break,
                        other => return Err(format!("expected a found file, got `{other}`")),
                    }
                }
                found
            }
        };
        report.answers.push(records);
    }
    if c.line()? != BYE {
        return Err("the answer does not end as the script does".into());
    }
    Ok(report)
}

/// May `uid`/`gids` write a file or directory with this owner and mode (mode bits only; root
/// may write anything)?
fn may_write(uid: u32, gids: &[u32], m: &Meta) -> bool {
    if uid == 0 {
        return true;
    }
    let bits = if m.uid == uid {
        m.mode >> 6
    } else if gids.contains(&m.gid) {
        m.mode >> 3
    } else {
        m.mode
    };
    bits & 0o2 != 0
}

/// Why the login user of `report` could change what `r` names, if it could: write the file, or
/// a directory met on the way to it, which lets it replace an entry there. In a sticky directory
/// (`/tmp`) that holds only for entries the user owns, or when it owns the directory.
pub fn writable(report: &Report, r: &Record) -> Option<String> {
    let who = format!("the login user (uid {})", report.uid);
    if report.uid == 0 {
        return Some("the login user is root".into());
    }
    if let Some(m) = r.meta.as_ref().filter(|m| may_write(report.uid, &report.gids, m)) {
        return Some(format!("{who} can write it (owner uid {}, mode {:o})", m.uid, m.mode));
    }
    let itself = r.real.iter().zip(r.meta.iter());
    let known: Vec<(&String, &Meta)> = r.entries.iter().chain(&r.dirs).map(|(p, m)| (p, m)).chain(itself).collect();
    for (p, m) in r.dirs.iter().filter(|(_, m)| may_write(report.uid, &report.gids, m)) {
        let shown = format!("{who} can write the directory {p} (owner uid {}, mode {:o})", m.uid, m.mode);
        if m.mode & 0o1000 == 0 || m.uid == report.uid {
            return Some(shown);
        }
        if let Some((q, _)) = known.iter().find(|(q, e)| parent(q) == *p && e.uid == report.uid) {
            return Some(format!("{shown} and owns {q} there"));
        }
    }
    None
}

/// One remote `compose up` to judge: the options that choose its files.
struct ComposeAsk {
    part: usize,
    action: usize,
    files: ComposeFiles,
    /// Indexes into the asks of round one: the files (or the search), the env files, and the
    /// project directory (when `--project-directory` names it).
    file_asks: Vec<usize>,
    search: Option<usize>,
    env_asks: Vec<usize>,
    dir_ask: Option<usize>,
    override_ask: Option<usize>,
}

/// A directory's parent as text (`/srv/a/b` -> `/srv/a`).
fn parent(p: &str) -> String {
    match p.rsplit_once('/') {
        Some(("", _)) => "/".into(),
        Some((d, _)) => d.into(),
        None => ".".into(),
    }
}

/// A path as written below a directory as written.
fn join(dir: &str, p: &str) -> String {
    if p.starts_with('/') || dir == "." {
        p.to_string()
    } else {
        format!("{}/{p}", dir.trim_end_matches('/'))
    }
}

/// Read what the decision asked for about `remote`'s host, and judge it.
pub fn gather(conn: &Connection, remote: &Remote, host: Option<&RemoteHost>) -> Result<RemoteFacts, String> {
    let workspaces: &[String] = host.map_or(&[], |h| h.workspaces.as_slice());
    let mut asks: Vec<Ask> = Vec::new();
    let mut add = |a: Ask| {
        asks.push(a);
        asks.len() - 1
    };
    // Where the tier-2 writes lead.
    let mut writes: Vec<(String, usize)> = Vec::new();
    for p in &remote.parts {
        for w in &p.writes {
            if let Ok(abs) = remote_fence::locate(&w.path, remote.cd.as_deref())
                && remote_fence::judge(&abs, workspaces, w.repository).is_ok()
                && !writes.iter().any(|(a, _)| *a == abs)
            {
                let i = add(Ask::Path(abs.clone()));
                writes.push((abs, i));
            }
        }
    }
    // The files of each remote `compose up`.
    let mut composes = Vec::new();
    for (pi, p) in remote.parts.iter().enumerate() {
        for (ai, a) in p.inv.actions.iter().enumerate() {
            let (true, Some(files)) = (a.has(crate::grammar::compose::REMOTE), a.compose.clone()) else {
                continue;
            };
            let mut c = ComposeAsk {
                part: pi,
                action: ai,
                files: files.clone(),
                file_asks: Vec::new(),
                search: None,
                env_asks: Vec::new(),
                dir_ask: None,
                override_ask: None,
            };
            let dir = files.dir.clone();
            if files.files.is_empty() {
                c.search = Some(add(Ask::Search(dir.clone().unwrap_or_else(|| ".".into()))));
            } else {
                for f in &files.files {
                    c.file_asks.push(add(Ask::Contents(f.clone())));
                }
            }
            let env_dir = dir
                .clone()
                .or_else(|| files.files.first().map(|f| parent(f)))
                .unwrap_or_else(|| ".".into());
            if files.env_files.is_empty() {
                c.env_asks.push(add(Ask::Contents(join(&env_dir, ".env"))));
            } else {
                for e in &files.env_files {
                    c.env_asks.push(add(Ask::Contents(e.clone())));
                }
            }
            if let Some(d) = &dir {
                c.dir_ask = Some(add(Ask::Path(d.clone())));
            }
            if !files.files.is_empty() {
                c.override_ask = Some(add(Ask::Path(join(&env_dir, "compose.override.yaml"))));
            }
            composes.push(c);
        }
    }
    let mut facts = RemoteFacts::default();
    if asks.is_empty() {
        return Ok(facts);
    }
    let report = conn.ask(remote.cd.as_deref(), &asks)?;
    for (abs, i) in writes {
        let r = report.answers.get(i).and_then(|v| v.first());
        let got = match r.and_then(|r| r.real.clone()) {
            Some(real) => Ok(real),
            None => Err(format!("realpath of {abs} failed")),
        };
        facts.paths.insert(abs, got);
    }
    let vouched: &[String] = host.map_or(&[], |h| h.compose.as_slice());
    for c in composes {
        let judged = judge_compose(conn, &report, &c, remote.cd.as_deref(), vouched);
        facts.compose.insert((c.part, c.action), judged);
    }
    Ok(facts)
}

/// What the files of one remote `compose up` come to: read in round one, bind sources asked
/// about in a second read.
fn judge_compose(conn: &Connection, report: &Report, c: &ComposeAsk, cd: Option<&str>, vouched: &[String]) -> Result<Judged, String> {
    let one =
        |i: usize| -> Result<&Record, String> { report.answers.get(i).and_then(|v| v.first()).ok_or_else(|| "no answer".to_string()) };
    let found: Vec<(String, &Record)> = match c.search {
        Some(i) => report
            .answers
            .get(i)
            .map(|v| v.iter().map(|r| (r.real.clone().unwrap_or_default(), r)).collect())
            .unwrap_or_default(),
        None => c
            .file_asks
            .iter()
            .zip(&c.files.files)
            .map(|(i, f)| one(*i).map(|r| (f.clone(), r)))
            .collect::<Result<_, _>>()?,
    };
    let mut env_text = Vec::new();
    let mut out = Judged::default();
    let mut changeable = Vec::new();
    for (i, written) in c.env_asks.iter().zip(env_shown(&c.files)) {
        let r = one(*i)?;
        match (&r.meta, &r.contents) {
            (None, _) if !c.files.env_files.is_empty() => return Err(format!("the env file {written} does not exist")),
            (None, _) => {}
            (Some(_), Some(Some(bytes))) => {
                env_text.push(String::from_utf8(bytes.clone()).map_err(|_| format!("the env file {written} is not UTF-8"))?);
                if let Some(why) = writable(report, r) {
                    changeable.push((format!("the env file {}", r.real.clone().unwrap_or(written)), why));
                }
            }
            (Some(_), _) => return Err(format!("the env file {written} could not be read")),
        }
    }
    let env: Vec<(String, String)> = env_text.iter().flat_map(|t| crate::compose::dotenv(t)).collect();
    if c.files.files.is_empty() && env.iter().any(|(k, _)| k == "COMPOSE_FILE") {
        return Err("COMPOSE_FILE in the remote .env chooses the compose files; name them with -f".into());
    }
    if found.is_empty() {
        return Err(match cd {
            Some(d) => format!("no compose file in {d} or above it"),
            None => "no compose file in the remote login directory or above it".into(),
        });
    }
    // The project directory, where relative binds start and an override file would be found.
    let first_real = found[0].1.real.clone().ok_or("where the compose file leads is unknown")?;
    let base = match c.dir_ask {
        Some(i) => one(i)?.real.clone().ok_or("where the project directory leads is unknown")?,
        None => parent(&first_real),
    };
    let mut binds = Vec::new();
    for (written, r) in &found {
        let real = r.real.clone().unwrap_or_else(|| written.clone());
        let bytes = match (&r.meta, &r.contents) {
            (None, _) => return Err(format!("the compose file {written} does not exist")),
            (_, Some(Some(b))) => b,
            (_, Some(None)) => return Err(format!("the compose file {real} is larger than the gate reads")),
            (_, None) => return Err(format!("the compose file {real} could not be read")),
        };
        let text = std::str::from_utf8(bytes).map_err(|_| format!("the compose file {real} is not UTF-8"))?;
        let (escalates, b) = crate::compose::judge_read(text, Path::new(&base)).map_err(|e| format!("the compose file {real} {e}"))?;
        out.escalates.extend(escalates);
        binds.extend(b);
        if let Some(why) = writable(report, r) {
            changeable.push((format!("the compose file {real}"), why));
        }
    }
    // Where compose would pick up an override file nobody reviewed.
    let dir_record = match c.override_ask {
        Some(i) => Some(one(i)?.clone()),
        None => Some(Record {
            real: Some(format!("{}/compose.override.yaml", parent(&first_real))),
            meta: None,
            dirs: found[0].1.dirs.clone(),
            entries: found[0].1.entries.clone(),
            contents: None,
        }),
    };
    if let Some(r) = dir_record
        && let Some(why) = writable(report, &Record { meta: None, ..r })
    {
        changeable.push((format!("the project directory {base}"), why));
    }
    // Each bind source: where it really is, and whether the login user can change it.
    if !binds.is_empty() {
        let asks: Vec<Ask> = binds.iter().map(|(_, _, h)| Ask::Path(h.display().to_string())).collect();
        let second = conn.ask(None, &asks)?;
        for ((who, src, host), answer) in binds.iter().zip(&second.answers) {
            let Some(r) = answer.first() else { continue };
            if let Some(real) = &r.real
                && Path::new(real) != host.as_path()
                && crate::grammar::docker::protected_host_path(real)
            {
                out.escalates.push(format!("{who}: a bind of {src}, which is {real}"));
            }
            if let Some(why) = writable(&second, r) {
                changeable.push((format!("{who}: the bind source {}", host.display()), why));
            }
        }
    }
    let is_vouched = vouched.iter().any(|v| remote_fence::within(&base, v).is_some());
    if !is_vouched {
        out.changeable = changeable.into_iter().map(|(what, why)| format!("{what}: {why}")).collect();
        out.changeable.dedup();
    }
    Ok(out)
}

/// The env files as written, for messages.
fn env_shown(f: &ComposeFiles) -> Vec<String> {
    if f.env_files.is_empty() {
        let dir = f
            .dir
            .clone()
            .or_else(|| f.files.first().map(|x| parent(x)))
            .unwrap_or_else(|| ".".into());
        vec![join(&dir, ".env")]
    } else {
        f.env_files.clone()
    }
}

impl Connection {
    /// The connection of an ssh call: its argv without the remote command's words.
    pub fn of(real: PathBuf, args: &[String], remote: &Remote, env: Vec<(OsString, OsString)>) -> Connection {
        let keep = args.len().saturating_sub(remote.command_words);
        Connection {
            real,
            args: args[..keep].to_vec(),
            env,
        }
    }

    /// Ask the remote host: run the script over the call's connection and read its answer.
    fn ask(&self, cd: Option<&str>, asks: &[Ask]) -> Result<Report, String> {
        let out = self.run(&script(cd, asks))?;
        parse(&out, asks)
    }

    /// The argv of the read: the pinned config, batch mode (never a prompt), no terminal, then
    /// the caller's connection options and destination, then the script.
    fn argv(&self, command: &str) -> Vec<String> {
        let mut argv: Vec<String> = ssh::PREPEND.iter().map(|s| s.to_string()).collect();
        argv.extend(["-o", "BatchMode=yes", "-o", "ConnectTimeout=15", "-T"].map(String::from));
        argv.extend(self.args.iter().cloned());
        argv.push(command.to_string());
        argv
    }

    /// Run the real ssh with `command`; its stdout, or why it failed (the first line of its
    /// stderr). Killed after [`TIMEOUT`].
    fn run(&self, command: &str) -> Result<Vec<u8>, String> {
        let (mut cmd, _fd) = crate::harden::command(&self.real, std::ffi::OsStr::new("ssh"))
            .map_err(|e| format!("cannot open {}: {e}", self.real.display()))?;
        let mut child = cmd
            .args(self.argv(command))
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.real.display()))?;
        let mut stdout = child.stdout.take().ok_or("no stdout")?;
        let mut stderr = child.stderr.take().ok_or("no stderr")?;
        let out = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut stdout).take(MAX_OUTPUT as u64 + 1).read_to_end(&mut buf);
            buf
        });
        let err = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut stderr).take(64 * 1024).read_to_end(&mut buf);
            buf
        });
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if started.elapsed() > TIMEOUT => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => return Err(format!("waiting for ssh: {e}")),
            }
        };
        let out = out.join().unwrap_or_default();
        let err = err.join().unwrap_or_default();
        let Some(status) = status else {
            return Err(format!("no answer within {} seconds", TIMEOUT.as_secs()));
        };
        if out.len() > MAX_OUTPUT {
            return Err(format!("more than {MAX_OUTPUT} bytes of answer"));
        }
        if !status.success() {
            let text = String::from_utf8_lossy(&err);
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no message")
                .trim()
                .to_string();
            return Err(format!("ssh failed ({status}): {}", crate::sanitize::escape(&first)));
        }
        Ok(out)
    }
}

/// The facts for the remote host of `remote`, as `decide()` takes them: what was read, or why
/// nothing could be.
pub fn facts(conn: &Connection, remote: &Remote, remote_cfg: &BTreeMap<String, RemoteHost>) -> Result<RemoteFacts, String> {
    gather(conn, remote, remote_cfg.get(&remote.host.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn run_local(cd: Option<&str>, asks: &[Ask]) -> Vec<u8> {
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(script(cd, asks))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }

    #[test]
    fn the_script_answers_for_each_path_with_its_owner_every_directory_on_the_way_and_the_contents() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("proj");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("compose.yaml"), "services:\n  web: {image: x}\n").unwrap();
        std::fs::set_permissions(d.join("compose.yaml"), std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        std::os::unix::fs::symlink("/etc", d.join("etc-link")).unwrap();
        let asks = vec![
            Ask::Contents("compose.yaml".into()),
            Ask::Path("etc-link/x".into()),
            Ask::Search("sub".into()),
            Ask::Contents("missing.env".into()),
        ];
        let cd = d.display().to_string();
        let report = parse(&run_local(Some(&cd), &asks), &asks).unwrap();
        let real_d = std::fs::canonicalize(&d).unwrap().display().to_string();
        assert_eq!(report.cwd, real_d);
        assert_eq!(report.uid, nix::unistd::getuid().as_raw());
        let compose = &report.answers[0][0];
        assert_eq!(compose.real.as_deref(), Some(format!("{real_d}/compose.yaml").as_str()));
        assert_eq!(
            compose.meta.as_ref().map(|m| (m.mode, m.kind.as_str())),
            Some((0o644, "regular file"))
        );
        assert_eq!(compose.contents, Some(Some(b"services:\n  web: {image: x}\n".to_vec())));
        assert!(compose.dirs.iter().any(|(p, _)| *p == real_d), "{:?}", compose.dirs);
        assert!(compose.dirs.iter().any(|(p, _)| p == "/"));
        // A symlink is followed, and the directory it sits in counts as met on the way.
        assert_eq!(report.answers[1][0].real.as_deref(), Some("/etc/x"));
        assert_eq!(report.answers[1][0].meta, None);
        assert!(report.answers[1][0].dirs.iter().any(|(p, _)| *p == real_d));
        // The search from sub/ finds the compose file one level up.
        assert_eq!(report.answers[2].len(), 1);
        assert_eq!(report.answers[2][0].real.as_deref(), compose.real.as_deref());
        assert_eq!(report.answers[3][0].meta, None);
    }

    #[test]
    fn a_failed_cd_or_a_foreign_answer_is_an_error() {
        let asks = vec![Ask::Path("x".into())];
        let out = run_local(Some("/nonexistent/dir"), &asks);
        assert!(parse(&out, &asks).unwrap_err().contains("`cd`"));
        assert!(
            parse(b"Welcome to the restricted shell\n", &asks)
                .unwrap_err()
                .contains("did not run")
        );
        assert!(parse(b"", &asks).unwrap_err().contains("no answer"));
        let mut cut = run_local(None, &asks);
        cut.truncate(cut.len() - 5);
        assert!(parse(&cut, &asks).is_err());
    }

    #[test]
    fn paths_with_quotes_reach_the_script_as_one_word() {
        let t = tempfile::tempdir().unwrap();
        let name = "it's $(id) `x` ;a";
        std::fs::write(t.path().join(name), "hi").unwrap();
        let asks = vec![Ask::Contents(name.into())];
        let cd = t.path().display().to_string();
        let report = parse(&run_local(Some(&cd), &asks), &asks).unwrap();
        assert_eq!(report.answers[0][0].contents, Some(Some(b"hi".to_vec())));
    }

    #[test]
    fn who_can_change_a_path_is_read_from_its_owner_and_every_directory_on_the_way() {
        let m = |uid, mode| Meta {
            uid,
            gid: 50,
            mode,
            kind: "directory".into(),
        };
        let report = Report {
            uid: 1000,
            gids: vec![1000],
            ..Report::default()
        };
        let rec = |file: Meta, dirs: Vec<(&str, Meta)>| Record {
            real: Some("/srv/a/compose.yaml".into()),
            meta: Some(file),
            dirs: dirs.into_iter().map(|(p, m)| (p.to_string(), m)).collect(),
            entries: Vec::new(),
            contents: None,
        };
        let safe = rec(
            m(0, 0o644),
            vec![("/srv/a", m(0, 0o755)), ("/srv", m(0, 0o755)), ("/", m(0, 0o755))],
        );
        assert_eq!(writable(&report, &safe), None);
        assert!(writable(&report, &rec(m(1000, 0o644), vec![])).unwrap().contains("can write it"));
        assert!(writable(&report, &rec(m(0, 0o666), vec![])).is_some());
        let in_group = Report {
            gids: vec![1000, 50],
            ..report.clone()
        };
        assert!(writable(&in_group, &rec(m(0, 0o664), vec![])).is_some());
        assert!(
            writable(&report, &rec(m(0, 0o644), vec![("/srv/a", m(1000, 0o755))]))
                .unwrap()
                .contains("the directory /srv/a")
        );
        // A sticky directory: only what the user owns there is the user's to replace.
        let in_tmp = |entry_owner| Record {
            real: Some("/tmp/p/compose.yaml".into()),
            meta: Some(m(0, 0o644)),
            dirs: vec![("/tmp/p".into(), m(0, 0o755)), ("/tmp".into(), m(0, 0o1777))],
            entries: vec![("/tmp/p".into(), m(entry_owner, 0o777))],
            contents: None,
        };
        assert_eq!(writable(&report, &in_tmp(0)), None);
        assert!(writable(&report, &in_tmp(1000)).unwrap().contains("owns /tmp/p there"));
        let root = Report {
            uid: 0,
            ..Report::default()
        };
        assert!(writable(&root, &safe).unwrap().contains("root"));
    }
}
