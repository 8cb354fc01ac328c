//! The binary: build the context from the process, run, exit. The only place that exits.

fn main() {
    // Rust starts with SIGPIPE ignored. Put it back as a program expects it: the real tool,
    // which the gate execs, inherits the disposition (an ignored SIGPIPE turns `git log | head`
    // into write errors), and the admin CLI should end quietly when its reader goes away.
    // SAFETY: restoring a default disposition before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let ctx = tiershim::context::Context::from_process();
    let code = tiershim::run(&ctx);
    std::process::exit(code);
}
