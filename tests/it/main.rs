//! The one integration test binary. Every test drives the real tiershim binary through real
//! links in a temp directory, with a `tiershim.yaml` beside them and stub "real" tools that
//! record their argv and environment (see `harness`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod harness;

mod inventory;

mod bad_input;
mod corpus;
mod explain;
mod gate;
mod http;
mod http_server;
mod mcp;
mod real_tools;
mod scope;
mod skills;
