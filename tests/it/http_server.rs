//! A recording HTTP server on 127.0.0.1 for tests of curl and gh: every request (method,
//! target, headers, body) is kept; every answer is `200 {}` with `Connection: close`. Stopped
//! (its thread joined) on drop. [`TlsFront`] puts a TLS listener (socat, with a certificate the
//! test makes with openssl) in front of it, for gh, which talks HTTPS to enterprise hosts.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// The request target as sent (`/api/v3/repos/o/r/issues?x=1`).
    pub target: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Request {
    /// `METHOD target`.
    pub fn line(&self) -> String {
        format!("{} {}", self.method, self.target)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

pub struct HttpServer {
    pub port: u16,
    seen: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl HttpServer {
    pub fn start() -> HttpServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, halt) = (Arc::clone(&seen), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if halt.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(s) = stream {
                    serve(s, &log);
                }
            }
        });
        HttpServer {
            port,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }

    /// `METHOD target` of every request so far.
    pub fn lines(&self) -> Vec<String> {
        self.requests().iter().map(Request::line).collect()
    }

    pub fn forget(&self) {
        self.seen.lock().unwrap().clear();
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Read one request, record it, then answer: the client cannot see the answer before the
/// request is on record.
fn serve(stream: TcpStream, log: &Mutex<Vec<Request>>) -> Option<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut first = String::new();
    reader.read_line(&mut first).ok()?;
    let mut parts = first.split_whitespace();
    let (method, target) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).ok()?;
    log.lock().unwrap().push(Request {
        method,
        target,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    let mut s = stream;
    s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        .ok()
}

fn tool(name: &str) -> PathBuf {
    ["/usr/bin", "/bin", "/usr/local/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not installed; scripts/test-deps.sh installs it"))
}

/// TLS on 127.0.0.1 in front of an [`HttpServer`], with a self-signed certificate for
/// 127.0.0.1 (in `dir/cert.pem`, which a client trusts through `SSL_CERT_FILE`).
pub struct TlsFront {
    pub port: u16,
    pub cert: PathBuf,
    child: Child,
}

impl TlsFront {
    pub fn start(backend: &HttpServer, dir: &Path) -> TlsFront {
        let cert = dir.join("cert.pem");
        let key = dir.join("key.pem");
        let out = Command::new(tool("openssl"))
            .args([
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=127.0.0.1",
            ])
            .args(["-addext", "subjectAltName=IP:127.0.0.1"])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "openssl: {}", String::from_utf8_lossy(&out.stderr));
        let both = dir.join("tls.pem");
        let mut pem = std::fs::read(&cert).unwrap();
        pem.extend(std::fs::read(&key).unwrap());
        std::fs::write(&both, pem).unwrap();
        for _ in 0..20 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let mut child = Command::new(tool("socat"))
                .arg(format!(
                    "OPENSSL-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork,verify=0,cert={}",
                    both.display()
                ))
                .arg(format!("TCP:127.0.0.1:{}", backend.port))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            for _ in 0..100 {
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return TlsFront { port, cert, child };
                }
                if child.try_wait().unwrap().is_some() {
                    break; // the port was taken meanwhile; try another
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("socat did not start");
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
