//! Change detection for `tiershim mcp`: an inotify instance watching what the last scan read
//! ([`WatchSet`]: every directory searched, each skill file reached through a link, and the
//! nearest existing ancestor of a skills directory that does not exist yet). A request only
//! reads the events queued since the last one, so an unchanged set of skills costs one `read`
//! that returns nothing, however many skills there are; the kernel queues an event before the
//! change that caused it returns, so a change a client made before its request is seen by it.
//!
//! It only says whether something that matters changed; the scan decides what changed.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Arc;

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, InotifyEvent, WatchDescriptor};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use crate::sanitize::escape;
use crate::skill::served::{WatchSet, matters};

/// The inotify descriptor, for the runtime's reactor.
pub struct Fd(Inotify);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

/// Why a path is watched.
enum Role<'a> {
    /// A directory searched for skills.
    Dir,
    /// The nearest existing ancestor of a missing skills directory, and the name there that
    /// leads to it.
    Ancestor(&'a OsString),
    /// A skill file reached through a symlink.
    File,
}

/// What one watch descriptor stands for (one inode may be reached by several paths and roles).
#[derive(Debug, Default)]
struct Watched {
    /// The paths it was added for; the first names the directory an event's name is in.
    paths: Vec<PathBuf>,
    /// A directory searched for skills: its entries matter.
    dir: bool,
    /// The ancestor of a missing skills directory: only these names in it matter.
    names: Vec<OsString>,
}

pub struct Watcher {
    fd: Arc<AsyncFd<Fd>>,
    wds: HashMap<WatchDescriptor, Watched>,
    links: HashSet<PathBuf>,
    /// Failures to watch a path, already reported.
    warned: HashSet<String>,
}

fn dir_mask() -> AddWatchFlags {
    AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_MODIFY
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_ONLYDIR
}

/// An ancestor of a missing skills directory: only names appearing and going matter.
fn ancestor_mask() -> AddWatchFlags {
    AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_ONLYDIR
}

fn file_mask() -> AddWatchFlags {
    AddWatchFlags::IN_MODIFY
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
}

impl Watcher {
    /// A new, empty watcher, registered with the current runtime.
    pub fn new() -> std::io::Result<Watcher> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
        // SAFETY: `Fd` owns the inotify descriptor (an `OwnedFd` inside `Inotify`): it stays open,
        // and is the same descriptor, for as long as the `AsyncFd` holding it lives.
        let fd = unsafe { AsyncFd::register_with_interest(Fd(inotify), Interest::READABLE) }.map_err(|e| e.into_parts().1)?;
        Ok(Watcher {
            fd: Arc::new(fd),
            wds: HashMap::new(),
            links: HashSet::new(),
            warned: HashSet::new(),
        })
    }

    /// The descriptor, to wait for events on.
    pub fn fd(&self) -> Arc<AsyncFd<Fd>> {
        Arc::clone(&self.fd)
    }

    /// Watch exactly what `set` names. True when a path is watched that was not before, or a
    /// path vanished since the scan: the scan may have read it before the watch saw a change,
    /// so the caller scans again.
    pub fn sync(&mut self, set: &WatchSet) -> bool {
        // One watch per inode, with every role it has: adding a watch again replaces its mask.
        let mut wanted: Vec<(AddWatchFlags, Watched)> = Vec::new();
        let mut by_inode: HashMap<(u64, u64), usize> = HashMap::new();
        let mut again = false;
        let targets = set
            .dirs
            .iter()
            .map(|d| (d, Role::Dir))
            .chain(set.ancestors.iter().map(|(d, n)| (d, Role::Ancestor(n))))
            .chain(set.files.iter().map(|f| (f, Role::File)));
        for (path, role) in targets {
            let Ok(meta) = std::fs::metadata(path) else {
                again = true;
                continue;
            };
            let i = *by_inode.entry((meta.dev(), meta.ino())).or_insert_with(|| {
                wanted.push((AddWatchFlags::empty(), Watched::default()));
                wanted.len() - 1
            });
            let (mask, w) = &mut wanted[i];
            w.paths.push(path.clone());
            match role {
                Role::Dir => {
                    *mask |= dir_mask();
                    w.dir = true;
                }
                Role::Ancestor(n) => {
                    *mask |= ancestor_mask();
                    w.names.push(n.clone());
                }
                Role::File => *mask |= file_mask(),
            }
        }
        let inotify = &self.fd.get_ref().0;
        let mut next: HashMap<WatchDescriptor, Watched> = HashMap::new();
        for (mask, w) in wanted {
            let Some(path) = w.paths.first() else { continue };
            match inotify.add_watch(path.as_path(), mask) {
                Ok(wd) => {
                    again |= !self.wds.contains_key(&wd);
                    next.insert(wd, w);
                }
                Err(Errno::ENOENT | Errno::ENOTDIR) => again = true,
                Err(e) => {
                    let why = if e == Errno::ENOSPC {
                        format!("{e} (raise fs.inotify.max_user_watches)")
                    } else {
                        e.to_string()
                    };
                    let line = format!(
                        "tiershim mcp: warning: {}: cannot watch it for changes: {why}; changes there are noticed within 30 s",
                        escape(&path.display().to_string())
                    );
                    if self.warned.insert(line.clone()) {
                        eprintln!("{line}");
                    }
                }
            }
        }
        for wd in self.wds.keys().filter(|wd| !next.contains_key(wd)) {
            // Gone with its directory, or no longer wanted; either way nothing to undo.
            let _ = inotify.rm_watch(*wd);
        }
        self.wds = next;
        self.links = set.links.clone();
        again
    }

    /// Read every queued event. True when one of them can change the skills.
    pub fn drain(&mut self) -> std::io::Result<bool> {
        let mut changed = false;
        loop {
            match self.fd.get_ref().0.read_events() {
                Ok(events) => {
                    for e in &events {
                        changed |= self.matters(e);
                    }
                }
                Err(Errno::EAGAIN) => return Ok(changed),
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn matters(&self, e: &InotifyEvent) -> bool {
        if e.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
            return true;
        }
        let Some(w) = self.wds.get(&e.wd) else {
            // A watch removed by `sync` reports IN_IGNORED: nothing changed.
            return false;
        };
        let Some(name) = &e.name else {
            // The watched directory or file itself changed, moved or went.
            return true;
        };
        if w.names.contains(name) {
            return true;
        }
        w.dir
            && w.paths
                .first()
                .is_some_and(|dir| matters(dir, name, e.mask.contains(AddWatchFlags::IN_ISDIR), &self.links))
    }
}
