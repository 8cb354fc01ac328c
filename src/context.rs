//! Everything read from the process once: the executed path (from the kernel), argv, the
//! environment, cwd, pid, and the clock. Nothing else in the crate reads process state, which
//! keeps the rest testable and makes plain what the caller controls (all of it but `exec_path`).

use std::ffi::{CStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::{Instant, SystemTime};

#[derive(Debug, Clone)]
pub struct Context {
    /// The path the kernel executed (`AT_EXECFN`), made absolute against the cwd it was resolved
    /// in; argv[0] only where the kernel gives nothing.
    pub exec_path: PathBuf,
    /// argv[1..], exactly as received.
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
    pub pid: u32,
    pub ppid: u32,
    pub started: Instant,
    pub now: SystemTime,
}

impl Context {
    pub fn from_process() -> Context {
        let started = Instant::now();
        let mut argv = std::env::args_os();
        let argv0 = argv.next().unwrap_or_default();
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let exec = execfn().unwrap_or_else(|| PathBuf::from(argv0));
        let exec_path = if exec.is_absolute() { exec } else { cwd.join(exec) };
        Context {
            exec_path,
            args: argv.collect(),
            env: std::env::vars_os().collect(),
            cwd,
            pid: std::process::id(),
            ppid: nix::unistd::getppid().as_raw() as u32,
            started,
            now: SystemTime::now(),
        }
    }

    pub fn var(&self, name: &str) -> Option<String> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.to_string_lossy().into_owned())
    }
}

/// The file name the kernel executed, from the auxiliary vector. The caller can forge argv[0]
/// but not this.
fn execfn() -> Option<PathBuf> {
    // SAFETY: getauxval has no preconditions; AT_EXECFN, when present, points at a
    // NUL-terminated string the kernel placed on the initial stack for the process lifetime.
    let p = unsafe { libc::getauxval(libc::AT_EXECFN) } as *const libc::c_char;
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null AT_EXECFN is a valid C string (see above).
    let s = unsafe { CStr::from_ptr(p) };
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(s.to_bytes())))
}
