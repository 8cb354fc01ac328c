//! The binary: build the context from the process, run, exit. The only place that exits.
//!
//! `main` is the C entry point itself (`no_main`): Rust's own start-up is skipped. The gate runs
//! on every call an agent makes, and that start-up costs it a read of `/proc/self/maps` (to find
//! the main thread's stack for the stack-overflow handler), an alternate signal stack and four
//! `sigaction`s. What of it matters here is done below: the standard descriptors are made sure
//! to be open. The arguments and the environment are read as in any Rust program (glibc
//! hands them to the standard library at load). A stack overflow is still stopped by the guard
//! page, without the standard library's message.

// Under `cargo test` the test harness brings its own `main`.
#![cfg_attr(not(test), no_main)]

#[cfg(not(test))]
use std::ffi::{c_char, c_int};

#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    // The gate runs setgid: a descriptor 0, 1 or 2 that the caller closed would be the next file
    // the gate opens (the audit log as its stdout). The standard library's start-up reopens
    // them on /dev/null; so does this, and stops if it cannot.
    for fd in 0..3 {
        // SAFETY: F_GETFD and open take no pointers but the literal path.
        unsafe {
            if libc::fcntl(fd, libc::F_GETFD) == -1
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
                && libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) != fd
            {
                libc::abort();
            }
        }
    }
    // SIGPIPE as a program expects it (Rust's start-up would have ignored it): the real tool,
    // which the gate execs, inherits the disposition (an ignored SIGPIPE turns `git log | head`
    // into write errors), and the admin CLI should end quietly when its reader goes away.
    // SAFETY: setting a default disposition before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let ctx = tiershim::context::Context::from_process();
    let code = tiershim::run(&ctx);
    std::process::exit(code);
}
