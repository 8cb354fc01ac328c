//! A fake Docker Engine on a unix socket for the real docker CLI: every request (method, path,
//! query, body) is recorded, and each gets a small answer of the shape the CLI expects (the
//! API version on `/_ping`, `[]` for lists, an `Id` for a create), so the CLI goes on to the
//! requests a real daemon would see. Stopped (its thread joined) on drop.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineRequest {
    pub method: String,
    /// The path as sent, without the query (`/v1.45/containers/web/restart`).
    pub path: String,
    pub query: String,
    pub body: String,
}

impl EngineRequest {
    /// The path without the `/v1.NN` version prefix the client negotiated.
    pub fn route(&self) -> String {
        let mut segs = self.path.split('/').filter(|s| !s.is_empty()).peekable();
        if segs.peek().is_some_and(|s| s.starts_with("v1.")) {
            segs.next();
        }
        format!("/{}", segs.collect::<Vec<_>>().join("/"))
    }
}

pub struct Engine {
    pub socket: PathBuf,
    seen: Arc<Mutex<Vec<EngineRequest>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The API version the fake daemon speaks (docker 28's client negotiates down to it).
const API_VERSION: &str = "1.45";

impl Engine {
    pub fn start(dir: &Path) -> Engine {
        let socket = dir.join("docker.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, halt) = (Arc::clone(&seen), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if halt.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(s) = stream {
                    let log = Arc::clone(&log);
                    std::thread::spawn(move || serve(s, &log));
                }
            }
        });
        Engine {
            socket,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    pub fn host(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    pub fn requests(&self) -> Vec<EngineRequest> {
        self.seen.lock().unwrap().clone()
    }

    pub fn forget(&self) {
        self.seen.lock().unwrap().clear();
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = UnixStream::connect(&self.socket);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Serve requests on one connection until the client closes it.
fn serve(stream: UnixStream, log: &Mutex<Vec<EngineRequest>>) -> Option<()> {
    stream.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut out = stream;
    loop {
        let mut first = String::new();
        if reader.read_line(&mut first).ok()? == 0 {
            return Some(());
        }
        let mut parts = first.split_whitespace();
        let (method, target) = (parts.next()?.to_string(), parts.next()?.to_string());
        let mut len = 0usize;
        let mut chunked = false;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
                if k == "content-length" {
                    len = v.parse().unwrap_or(0);
                } else if k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked") {
                    chunked = true;
                }
            }
        }
        let body = if chunked {
            read_chunked(&mut reader)?
        } else {
            read_exact(&mut reader, len)?
        };
        let (path, query) = target.split_once('?').unwrap_or((target.as_str(), ""));
        let req = EngineRequest {
            method: method.clone(),
            path: path.to_string(),
            query: query.to_string(),
            body: String::from_utf8_lossy(&body).into_owned(),
        };
        let route = req.route();
        log.lock().unwrap().push(req);
        let (status, answer) = answer(&method, &route);
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nApi-Version: {API_VERSION}\r\nOstype: linux\r\nDocker-Experimental: false\r\nContent-Length: {}\r\n\r\n",
            if method == "HEAD" { 0 } else { answer.len() }
        );
        out.write_all(head.as_bytes()).ok()?;
        if method != "HEAD" {
            out.write_all(answer.as_bytes()).ok()?;
        }
        out.flush().ok()?;
    }
}

fn read_exact(r: &mut impl Read, len: usize) -> Option<Vec<u8>> {
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).ok()?;
    Some(body)
}

fn read_chunked(r: &mut BufReader<UnixStream>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        r.read_line(&mut size).ok()?;
        let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
        let mut chunk = vec![0u8; n + 2];
        r.read_exact(&mut chunk).ok()?;
        chunk.truncate(n);
        body.extend(chunk);
        if n == 0 {
            return Some(body);
        }
    }
}

/// The status and body for one request: enough for the CLI to carry on.
fn answer(method: &str, route: &str) -> (&'static str, String) {
    let last = route.rsplit('/').next().unwrap_or("");
    let body = match (method, route) {
        (_, "/_ping") => "OK".to_string(),
        ("GET", "/version") => format!(r#"{{"Version":"28.2.2","ApiVersion":"{API_VERSION}","MinAPIVersion":"1.24","Os":"linux","Arch":"amd64"}}"#),
        ("GET", "/containers/json" | "/images/json" | "/networks" | "/plugins" | "/secrets" | "/configs" | "/nodes" | "/services" | "/tasks") => {
            "[]".to_string()
        }
        ("GET", "/volumes") => r#"{"Volumes":[],"Warnings":[]}"#.to_string(),
        ("POST", "/containers/create") => r#"{"Id":"c0ffee","Warnings":[]}"#.to_string(),
        ("POST", _) if last == "exec" => r#"{"Id":"e1"}"#.to_string(),
        ("POST", _) if last == "wait" => r#"{"StatusCode":0}"#.to_string(),
        ("GET", _) if last == "top" => r#"{"Titles":[],"Processes":[]}"#.to_string(),
        ("GET", _) if last == "changes" || last == "history" => "[]".to_string(),
        ("DELETE", _) if route.starts_with("/images/") => "[]".to_string(),
        ("GET", _) if route.starts_with("/containers/") && last == "json" => {
            r#"{"Id":"c0ffee","Name":"/web","State":{"Running":true},"Config":{"Tty":false},"HostConfig":{},"NetworkSettings":{"Ports":{}}}"#
                .to_string()
        }
        _ => "{}".to_string(),
    };
    ("200 OK", body)
}
