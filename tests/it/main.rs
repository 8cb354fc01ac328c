//! The one integration test binary. Every test drives the real tiershim binary through real
//! links in a temp directory, with a `tiershim.yaml` beside them and stub "real" tools that
//! record their argv and environment (see `harness`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod agent;
mod ansible;
mod harness;
mod installed;

mod inventory;
mod kube;

mod bad_input;
mod check;
mod claude;
mod cooldown;
mod corpus;
mod dbserver;
mod demo;
mod differential;
mod dist;
mod docker_engine;
mod docs;
mod doctor;
mod explain;
mod fence;
mod fence_harden;
mod gate;
mod git_diff;
mod git_fence;
mod harden;
mod http;
mod http_server;
mod install;
mod kernel_fence;
mod mariadb;
mod mcp;
mod mistakes;
mod package;
mod postgres;
mod real_tools;
mod rotation;
mod scope;
mod shell;
mod skills;
mod ssh;
mod sshd;
