//! `mcp-resilient serve`, the gateway, as hosts see it over Streamable HTTP: a real `serve`
//! process on 127.0.0.1, mock servers in processes of their own as its upstreams, hosts that
//! are rmcp clients (session era) or plain HTTP requests (statuses, 2026-07-28).

mod doors;
mod doors_access;
mod drain;
mod flood;
pub mod gateway;
mod guards;
mod issuer;
mod operate;
mod own;
mod own_asks;
mod own_resume;
mod per_host;
pub mod raw;
mod reload;
mod sessions;
mod shared;
mod status;
mod store;
mod store_bound;
