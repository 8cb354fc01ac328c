//! Real database servers for the tests: one PostgreSQL and one MariaDB per test binary run,
//! started on first use (a `OnceLock`), each on a Unix socket in a private directory, run as an
//! unprivileged user when the tests run as root (initdb and mariadbd refuse root or want a
//! system user). Tests get a database of their own.
//!
//! A server must not outlive the run: a small watchdog (`sh`, all output to /dev/null) waits
//! for this test process to end, then stops the server and removes its directory. Servers write
//! their output to a log file, never to the test's stdout or stderr.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static NEXT_DB: AtomicUsize = AtomicUsize::new(0);

/// A unique database name for one test.
pub fn db_name(prefix: &str) -> String {
    format!("{prefix}_{}_{}", std::process::id(), NEXT_DB.fetch_add(1, Ordering::SeqCst))
}

/// uid and gid of a system user, from /etc/passwd.
fn system_user(name: &str) -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.first() == Some(&name)).then(|| Some((f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?)))?
    })
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A private directory that outlives this process until the watchdog removes it.
fn private_dir(prefix: &str) -> PathBuf {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir().expect("tempdir").keep();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

fn own(path: &Path, user: Option<(u32, u32)>) {
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).expect("chown");
    }
}

fn as_user(cmd: &mut Command, user: Option<(u32, u32)>) -> &mut Command {
    if let Some((uid, gid)) = user {
        cmd.uid(uid).gid(gid).env("HOME", "/");
    }
    cmd
}

/// Stop `pid` (with `signal`, then SIGKILL) and remove `dir` once this test process is gone.
fn watchdog(pid: u32, signal: &str, dir: &Path) {
    let script = format!(
        "while kill -0 {me} 2>/dev/null; do sleep 0.2; done; kill -{signal} {pid} 2>/dev/null; \
         i=0; while kill -0 {pid} 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i+1)); done; \
         kill -KILL {pid} 2>/dev/null; rm -rf '{dir}'",
        me = std::process::id(),
        dir = dir.display()
    );
    // Started in the background by a shell that exits at once (and is waited for), so the
    // watchdog is nobody's child here.
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", &format!("( {script} ) &")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Its own session: a signal to the test's process group does not take it down early.
    // SAFETY: setsid is async-signal-safe and touches no memory.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let status = cmd.status().expect("spawn watchdog");
    assert!(status.success(), "watchdog: {status}");
}

fn wait_until(what: &str, log: &Path, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if ready() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!(
        "{what} did not start; its log:\n{}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

pub struct Pg {
    /// The server; stopped by the watchdog, never waited for here.
    _server: std::process::Child,
    /// The socket directory (PGHOST).
    pub sock: PathBuf,
    pub port: u16,
    /// The server's own psql, for setting up and checking, never through the gate.
    pub psql: PathBuf,
    pub superuser: &'static str,
}

/// The newest `/usr/lib/postgresql/<ver>/bin` with initdb in it.
fn pg_bindir() -> PathBuf {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let v: u32 = e.file_name().to_str()?.parse().ok()?;
                    let bin = e.path().join("bin");
                    bin.join("initdb").is_file().then_some((v, bin))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
        .pop()
        .map(|(_, b)| b)
        .unwrap_or_else(|| panic!("no PostgreSQL server in /usr/lib/postgresql; `make test` installs Debian's postgresql"))
}

pub fn pg() -> &'static Pg {
    static PG: OnceLock<Pg> = OnceLock::new();
    PG.get_or_init(start_pg)
}

fn start_pg() -> Pg {
    let bin = pg_bindir();
    let user = if is_root() {
        Some(system_user("postgres").expect("the postgres system user (Debian's postgresql package creates it)"))
    } else {
        None
    };
    let base = private_dir("tiershim-pg-");
    let data = base.join("data");
    let sock = base.join("sock");
    let log = base.join("server.log");
    for d in [&data, &sock] {
        std::fs::create_dir(d).expect("mkdir");
        own(d, user);
    }
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    std::fs::write(&log, "").expect("log");
    own(&log, user);
    let out = as_user(Command::new(bin.join("initdb")).current_dir(&base), user)
        .args(["-D"])
        .arg(&data)
        .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"])
        .stdin(Stdio::null())
        .output()
        .expect("run initdb");
    assert!(
        out.status.success(),
        "initdb failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let port = 5432;
    let logf = std::fs::OpenOptions::new().append(true).open(&log).expect("log");
    let child = as_user(Command::new(bin.join("postgres")).current_dir(&base), user)
        .arg("-D")
        .arg(&data)
        .arg("-k")
        .arg(&sock)
        .args(["-c", "listen_addresses=", "-c", "fsync=off", "-p", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(logf.try_clone().expect("log"))
        .stderr(logf)
        .spawn()
        .expect("start postgres");
    // SIGINT: PostgreSQL's fast shutdown.
    watchdog(child.id(), "INT", &base);
    let pg = Pg {
        _server: child,
        sock,
        port,
        psql: bin.join("psql"),
        superuser: "postgres",
    };
    wait_until("postgres", &log, || pg.try_sql("postgres", "select 1").is_ok());
    pg
}

impl Pg {
    /// The environment a client needs to reach this server as the superuser.
    pub fn env(&self, db: &str) -> Vec<(String, String)> {
        vec![
            ("PGHOST".into(), self.sock.display().to_string()),
            ("PGPORT".into(), self.port.to_string()),
            ("PGUSER".into(), self.superuser.into()),
            ("PGDATABASE".into(), db.into()),
        ]
    }

    pub fn try_sql(&self, db: &str, sql: &str) -> Result<String, String> {
        let out = Command::new(&self.psql)
            .args(["-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .env_clear()
            .envs(self.env(db))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        answer(&out)
    }

    /// Run SQL directly (not through the gate), as the superuser.
    pub fn sql(&self, db: &str, sql: &str) -> String {
        self.try_sql(db, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// A fresh database with table `t` (three rows), sequence `s`, and nothing else.
    pub fn fresh_db(&self) -> String {
        let db = db_name("ts");
        self.sql("postgres", &format!("create database {db}"));
        self.sql(
            &db,
            "create table t (id int primary key, v text); insert into t values (1, 'one'), (2, 'two'), (3, 'three'); create sequence s;",
        );
        db
    }
}

// ---------------------------------------------------------------------------------------------
// MariaDB

pub struct Maria {
    /// The server; stopped by the watchdog, never waited for here.
    _server: std::process::Child,
    pub socket: PathBuf,
    pub client: PathBuf,
}

pub fn maria() -> &'static Maria {
    static M: OnceLock<Maria> = OnceLock::new();
    M.get_or_init(start_maria)
}

fn find(cands: &[&str]) -> PathBuf {
    cands
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("none of {cands:?} exists; `make test` installs Debian's mariadb-server"))
}

fn start_maria() -> Maria {
    let install_db = find(&["/usr/bin/mariadb-install-db", "/usr/bin/mysql_install_db"]);
    let server = find(&["/usr/sbin/mariadbd", "/usr/sbin/mysqld"]);
    let client = find(&["/usr/bin/mariadb", "/usr/bin/mysql"]);
    let user = if is_root() {
        Some(system_user("mysql").expect("the mysql system user (Debian's mariadb-server creates it)"))
    } else {
        None
    };
    let base = private_dir("tiershim-maria-");
    let data = base.join("data");
    let log = base.join("server.log");
    let socket = base.join("mysqld.sock");
    std::fs::create_dir(&data).expect("mkdir");
    own(&data, user);
    own(&base, user);
    std::fs::write(&log, "").expect("log");
    own(&log, user);
    let user_name = if user.is_some() {
        "mysql".to_string()
    } else {
        std::env::var("USER").unwrap_or_default()
    };
    let out = Command::new(&install_db)
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--user={user_name}"))
        .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
        .current_dir(&base)
        .stdin(Stdio::null())
        .output()
        .expect("run mariadb-install-db");
    assert!(
        out.status.success(),
        "mariadb-install-db failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let logf = std::fs::OpenOptions::new().append(true).open(&log).expect("log");
    let mut cmd = Command::new(&server);
    cmd.arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--socket={}", socket.display()))
        .arg(format!("--pid-file={}", base.join("mysqld.pid").display()))
        .arg(format!("--log-error={}", log.display()))
        .args(["--skip-networking", "--innodb-buffer-pool-size=16M"])
        .current_dir(&base)
        .stdin(Stdio::null())
        .stdout(logf.try_clone().expect("log"))
        .stderr(logf);
    if user.is_some() {
        cmd.arg("--user=mysql");
    }
    let child = cmd.spawn().expect("start mariadbd");
    watchdog(child.id(), "TERM", &base);
    let m = Maria {
        _server: child,
        socket,
        client,
    };
    wait_until("mariadbd", &log, || m.try_sql("", "select 1").is_ok());
    m
}

impl Maria {
    pub fn try_sql(&self, db: &str, sql: &str) -> Result<String, String> {
        let mut cmd = Command::new(&self.client);
        cmd.arg("--no-defaults")
            .arg(format!("--socket={}", self.socket.display()))
            .args(["-uroot", "-N", "-B", "-e", sql]);
        if !db.is_empty() {
            cmd.arg(db);
        }
        let out = cmd.env_clear().stdin(Stdio::null()).output().map_err(|e| e.to_string())?;
        answer(&out)
    }

    pub fn sql(&self, db: &str, sql: &str) -> String {
        self.try_sql(db, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// A fresh database with table `t` (three rows).
    pub fn fresh_db(&self) -> String {
        let db = db_name("tm");
        self.sql("", &format!("create database {db}"));
        self.sql(
            &db,
            "create table t (id int primary key, v varchar(20)); insert into t values (1, 'one'), (2, 'two'), (3, 'three');",
        );
        db
    }
}

/// A client's answer: its output without the final newline, or its error output.
fn answer(out: &std::process::Output) -> Result<String, String> {
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}
