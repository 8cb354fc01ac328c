//! The cooldown state file on disk: an exclusive lock (`flock` on `<file>.lock` beside it,
//! taken within a bounded time), the read, and the write: to a temporary file in the same
//! directory, synced, renamed over the file, and the directory synced, so concurrent gates never
//! lose a count and a crash never leaves a torn file.
//!
//! The lock is held from the read the decision is made on until the count is written (and, for
//! the gate, until exec: the descriptor is close-on-exec, so the real tool never holds it). A
//! recorded count can be taken back while the lock is held ([`Locked::rollback`]), for a call
//! that fails after it was counted (the audit line, the exec).
//!
//! Must not: decide. It reads and writes one file and its lock file.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::{Standing, State};
use crate::policy::cooldown::{Budgets, Class};

/// How long a gate waits for the lock when `tiershim.yaml` does not say.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

/// The lock file of a state file: `<file>.lock`, never replaced, so every gate locks the same
/// inode whatever the renames do to the state file.
pub fn lock_path(state: &Path) -> PathBuf {
    let mut s = state.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
}

/// The state file with its lock held.
pub struct Locked {
    path: PathBuf,
    _lock: Flock<File>,
    pub state: State,
    /// The bytes before this process wrote (None: there was no file), once it has written.
    before: Option<Option<Vec<u8>>>,
    /// What [`Locked::record`] added: per service and class, how many calls, and when.
    added: Vec<(String, Class, usize)>,
    added_at: Option<SystemTime>,
}

/// A count written and its lock released ([`Locked::release`]): what it takes to take the count
/// back if the call then does not run (the exec fails). The gate releases the lock before it
/// writes to the agent's stderr, which the agent can keep from draining: a gate blocked there
/// must never hold every other gate's budget.
pub struct Recorded {
    path: PathBuf,
    added: Vec<(String, Class, usize)>,
    at: SystemTime,
    wait: Duration,
}

/// Read the file as it is, without the lock (`tiershim cooldown`, `explain`, `doctor`): a reader
/// sees the old or the new file, never a torn one. A missing file is an empty state.
pub fn read(path: &Path) -> Result<State, String> {
    Ok(read_bytes(path)?.map(|b| parse(&b)).transpose()?.unwrap_or_default())
}

fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>, String> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot be read ({e})")),
    }
}

fn parse(bytes: &[u8]) -> Result<State, String> {
    State::parse(bytes).map_err(|e| format!("cannot be used: {e}"))
}

/// Take the lock (waiting at most `wait`), then read the file.
pub fn lock(path: &Path, wait: Duration) -> Result<Locked, String> {
    let lp = lock_path(path);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o660)
        .custom_flags(libc::O_CLOEXEC)
        .open(&lp)
        .map_err(|e| format!("its lock file {} cannot be opened ({e})", lp.display()))?;
    let deadline = Instant::now() + wait;
    let mut pause = Duration::from_millis(1);
    let mut file = file;
    let lock = loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(l) => break l,
            Err((f, Errno::EWOULDBLOCK | Errno::EINTR)) => {
                let now = Instant::now();
                if now >= deadline {
                    return Err(format!(
                        "is locked by another process for more than {:.1}s ({})",
                        wait.as_secs_f64(),
                        lp.display()
                    ));
                }
                std::thread::sleep(pause.min(deadline - now));
                pause = (pause * 2).min(Duration::from_millis(20));
                file = f;
            }
            Err((_, e)) => return Err(format!("its lock file {} cannot be locked ({e})", lp.display())),
        }
    };
    let state = match read_bytes(path)? {
        Some(b) => parse(&b)?,
        None => State::default(),
    };
    Ok(Locked {
        path: path.to_path_buf(),
        _lock: lock,
        state,
        before: None,
        added: Vec::new(),
        added_at: None,
    })
}

impl Locked {
    /// Record the calls of the standings at `now` (each window as its budget says), and write.
    pub fn record(&mut self, standings: &[Standing], budgets: &Budgets, now: SystemTime) -> Result<(), String> {
        for s in standings {
            let window = budgets.budget(&s.key, s.class).window;
            self.state.record(&s.key, s.class, s.adding, window, now);
            self.added.push((s.key.clone(), s.class, s.adding));
        }
        self.added_at = Some(now);
        self.write()
    }

    /// Release the lock once the count is on disk, keeping what it takes to take the count back
    /// later (under the lock again, waiting at most `wait`).
    pub fn release(self, wait: Duration) -> Recorded {
        Recorded {
            path: self.path.clone(),
            added: self.added.clone(),
            at: self.added_at.unwrap_or(SystemTime::UNIX_EPOCH),
            wait,
        }
    }

    /// Empty both lists of `key`, and write. False (and nothing written) when the file has no
    /// such service.
    pub fn reset(&mut self, key: &str) -> Result<bool, String> {
        if !self.state.reset(key) {
            return Ok(false);
        }
        self.write().map(|()| true)
    }

    fn write(&mut self) -> Result<(), String> {
        let before = read_bytes(&self.path)?;
        write_atomic(&self.path, &self.state.to_bytes()).map_err(|e| format!("cannot be written ({e})"))?;
        if self.before.is_none() {
            self.before = Some(before);
        }
        Ok(())
    }

    /// Put the file back as it was before this process wrote it (the lock is still held, so no
    /// other gate has read the new counts).
    pub fn rollback(&mut self) -> Result<(), String> {
        match self.before.take() {
            None => Ok(()),
            Some(Some(bytes)) => write_atomic(&self.path, &bytes).map_err(|e| format!("cannot be restored ({e})")),
            Some(None) => std::fs::remove_file(&self.path).map_err(|e| format!("cannot be removed again ({e})")),
        }
    }
}

impl Recorded {
    /// Take the count back (the call did not run): take the lock again, remove the times this
    /// call added (other gates may have counted since, so the file is not put back as it was),
    /// and write.
    pub fn take_back(&self) -> Result<(), String> {
        let mut l = lock(&self.path, self.wait)?;
        let mut changed = false;
        for (key, class, n) in &self.added {
            changed |= l.state.take_back(key, *class, *n, self.at);
        }
        if changed { l.write() } else { Ok(()) }
    }
}

/// Write `bytes` to a temporary file beside `path` (the mode of the file it replaces, else
/// 0644), sync it, rename it over `path`, and sync the directory.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mode = std::fs::metadata(path).map(|m| m.permissions().mode() & 0o7777).unwrap_or(0o644);
    let _ = std::fs::remove_file(&tmp);
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_CLOEXEC)
            .open(&tmp)?;
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cooldown::{Charge, evaluate};
    use crate::policy::cooldown::Class;
    use crate::time::parse_time;

    #[test]
    fn a_recorded_count_is_written_and_can_be_taken_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cooldown.json");
        let b = Budgets::embedded().unwrap();
        let now = parse_time("2026-03-21T15:00:00Z").unwrap();
        let mut l = lock(&path, LOCK_WAIT).unwrap();
        let charges = [Charge {
            key: "api".into(),
            class: Class::Restart,
        }];
        let st = evaluate(&charges, &b, &l.state, now);
        l.record(&st, &b, now).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"2026-03-21T15:00:00Z\""), "{text}");
        assert!(lock_path(&path).exists());
        l.rollback().unwrap();
        assert!(!path.exists());
        drop(l);
        std::fs::write(&path, "{\"services\": {}, \"last_run\": null}").unwrap();
        let mut l = lock(&path, LOCK_WAIT).unwrap();
        l.record(&st, &b, now).unwrap();
        l.rollback().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"services\": {}, \"last_run\": null}");
        // No temporary file is left behind.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn a_lock_held_elsewhere_fails_after_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cooldown.json");
        let held = lock(&path, LOCK_WAIT).unwrap();
        let e = lock(&path, Duration::from_millis(50)).err().unwrap();
        assert!(e.contains("is locked by another process for more than 0.1s"), "{e}");
        drop(held);
        assert!(lock(&path, Duration::from_millis(50)).is_ok());
    }
}
