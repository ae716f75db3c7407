//! OAuth mode: the MCP routes become OAuth 2.1 protected resources, and the mock serves its
//! own authorization server on the same port (see the crate docs, "OAuth mode").
//!
//! - [`options`]: [`OAuthOptions`] and [`OAuthStats`];
//! - [`guard`]: the bearer check the gate runs before the MCP handler (401 / 403);
//! - [`metadata`], [`authorize`], [`token`], [`routes`]: the discovery documents and endpoints;
//! - [`signer`]: the JWT signing keys, the JWKS and its rotation;
//! - [`ledger`]: clients, codes and tokens (plain logic, time passed in), kept by
//!   [`authority`] behind one lock; [`clients`]: registration and client credentials;
//!   [`secret`]: random tokens and PKCE.
//!
//! # Invariants
//!
//! 1. No MCP request (either transport, any HTTP method, either protocol era) reaches the MCP
//!    handler without passing [`check`]; the gate's own answers (redirect, status fault,
//!    modern-only) come before it, and the authorization server's routes are not checked.
//! 2. A token is checked when a request arrives, never afterwards: an access token that
//!    expires does not end a session or a stream.
//! 3. No code, token, secret or client id is logged; the ledger's lock is never held across
//!    an `.await`.

pub(crate) mod args;
mod authority;
mod authorize;
mod clients;
mod control;
mod grant;
mod guard;
mod ledger;
mod metadata;
mod options;
mod routes;
mod secret;
mod signer;
mod token;

#[cfg(test)]
mod tests;

pub(crate) use authority::Authority;
pub(crate) use guard::check;
pub use options::{IssuedTokens, OAuthOptions, OAuthStats};
pub(crate) use routes::routes;
