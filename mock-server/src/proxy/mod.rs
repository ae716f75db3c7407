//! Loopback fault proxies that sit between a client under test and a [`MockServer`](crate::MockServer).
//!
//! - [`TcpProxy`] forwards raw TCP and simulates network partitions: a black hole (a half-open
//!   NAT entry that swallows everything without closing), refused connections, and a reset of
//!   every open connection.
//! - [`HttpFaultProxy`] is an HTTP/1.1 reverse proxy that streams every exchange through
//!   unbuffered (SSE included) but answers some JSON-RPC POSTs itself, the way an overloaded
//!   gateway answers `429`/`503` without the server ever seeing the request ([`GatewayFault`]),
//!   and can cut one POST's response stream part-way while the server lives on ([`StreamCut`]).
//! - [`proxy_main_with_args`] runs either one as a command-line tool.
//!
//! The mock server injects faults from the inside (it knows about sessions); these proxies
//! inject them on the path, where a real deployment's load balancer or NAT does.
//!
//! # Invariants
//!
//! 1. Both proxies bind 127.0.0.1 only and refuse a non-loopback upstream.
//! 2. One task owns each proxy's listener and every connection task (the HTTP proxy's upstream
//!    connection tasks included); `shutdown` cancels and awaits all of them, `Drop` cancels them.
//! 3. A TCP connection that was open while the proxy was black-holed, or that was accepted
//!    while it was, never forwards another byte in either direction, and is never closed by
//!    the proxy before its client closes it (except by `reset_all` or shutdown).
//! 4. A POST that the HTTP proxy answers itself never reaches the upstream; every other
//!    request is forwarded with its body and headers (hop-by-hop headers aside, `Host`
//!    rewritten) and its response streams back frame by frame, but for the one response an
//!    armed [`StreamCut`] takes, which is cut where it says.

mod args;
mod cli;
mod cut;
mod fault;
mod forward;
mod gateway;
mod http;
mod tcp;
mod tcp_conn;

pub use cli::proxy_main_with_args;
pub use cut::StreamCut;
pub use fault::GatewayFault;
pub use http::HttpFaultProxy;
pub use tcp::TcpProxy;
pub use tcp_conn::ProxyMode;
