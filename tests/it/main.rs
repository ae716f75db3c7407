//! The library's integration tests: a supervisor against the mock server in this process, over
//! real sockets on 127.0.0.1, with the library's default features. What needs a server as a
//! child process (stdio, kills and restarts of a process) is tested in the command line's
//! package, whose binary is that child (`cli/tests/it/`).

// Modules share helpers through `common`; what they export to each other is `pub`.
#![allow(unreachable_pub)]

#[path = "../support/mod.rs"]
mod common;

mod direct_probe;
mod http2;
mod http2_many;
mod liveness;
mod oauth;
mod pre_call_probe;
mod remote_transport;
mod status;
