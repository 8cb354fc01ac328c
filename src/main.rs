//! The binary: build the context from the process, run, exit. The only place that exits.

fn main() {
    let ctx = tiershim::context::Context::from_process();
    let code = tiershim::run(&ctx);
    std::process::exit(code);
}
