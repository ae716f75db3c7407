//! A restartable, fault-injecting MCP server for testing `mcp-resilient`.
//!
//! It is a real rmcp 3.11 server speaking stdio, legacy HTTP+SSE (hand-written: rmcp has none)
//! and Streamable HTTP, usable as a binary ([`main_with_args`]) or in-process ([`MockServer`]).
//!
//! Tools (same list in every mode): `echo`, `add`, `sleep`, `whoami`, `fail`, `crash`, `hang`,
//! `set_tools`, `block` (`{"ms": N}`: send nothing for N ms, then everything held, then
//! `"blocked Nms"`; with a progress token, a `notifications/progress` "blocking" announces that
//! the block has started), `wedge` (stdio: reply, then never read stdin again; elsewhere a tool
//! error), `confirm` (`{"question": s}`: asks the client, see below), `end_listens`
//! (`{"graceful": b}`: like [`Faults::end_listens`]), `bump` (adds one to `mock://counter`,
//! like [`Faults::bump_counter`]; replies the new value), `log` (`{"level": l, "message": s}`:
//! sends `notifications/message`, see below), `progress` (`{"steps": N, "ms": M}`: N times,
//! waits M ms then sends `notifications/progress` `i`/`N` with the request's progress token;
//! replies `"progressed N steps"`), plus `extra_N` and tools added by `set_tools`, which behave
//! like `echo`. `whoami` reports `{"boot_id", "pid", "calls", "methods": {"<json-rpc method>":
//! N, …}, "counter", "resource_subscriptions", "log_level", "cancelled"}` ([`Whoami`]).
//! `sleep`, `block` and `progress` end as soon as their request is cancelled, and each such
//! end is counted (`cancelled` in [`Whoami`] and [`MockState`]).
//!
//! # Resources, prompts, completions, logging
//!
//! Both eras declare the capabilities `resources` (`subscribe`, `listChanged`), `prompts`,
//! `completions` and `logging` next to `tools` (`listChanged`).
//!
//! - Resources: `mock://static/hello` (text `hello`), `mock://counter` (the counter in decimal,
//!   0 at start) and the template `mock://echo/{text}` (reads back the percent-decoded `text`).
//!   A bump (`bump` tool, [`Faults::bump_counter`], `POST /_mock/bump-counter`) sends
//!   `notifications/resources/updated` for `mock://counter` to every initialize-era session
//!   that sent `resources/subscribe` for it and to every `subscriptions/listen` whose filter
//!   named it (the acknowledged filter keeps only URIs that exist). Live subscriptions are
//!   counted in `resource_subscriptions` ([`Whoami`], [`MockState`]).
//! - Prompts: `greet` with the required argument `name`: one user message `Hello, <name>!`.
//! - Completions (`completion/complete`): `greet`'s `name` from `alice, albert, bob, carol,
//!   dave`, the template's `text` from `hello, help, helium, world, wonder`, by prefix.
//! - Logging: `logging/setLevel` is recorded (`log_level`). The `log` tool sends its message
//!   (initialize era) when `level` is at least the last level set (any when none was), or
//!   (2026-07-28) only when the request's `_meta` carries `io.modelcontextprotocol/logLevel`
//!   and `level` is at least that. Its reply says `logged <level>: <message>` or
//!   `not logged: <why>`.
//!
//! # Protocol eras
//!
//! Every mode serves initialize-era clients (2024-11-05 … 2025-11-25); stdio and Streamable
//! HTTP also serve 2026-07-28 clients, which rmcp 3.11 handles by itself: `server/discover` is
//! answered, requests carrying 2026-07-28 `_meta` are served without a session (on Streamable
//! HTTP always statelessly, whatever [`MockOptions::stateless`] says), and their `ping` gets
//! `-32601` (method not found). The mock adds `subscriptions/listen` (tools `list_changed`,
//! ended on demand by `end_listens`), the `confirm` tool's `input_required` rounds and, with
//! `modern_only`, a 2026-07-28-only server: `initialize` is refused with `-32022`
//! (`data.supported = ["2026-07-28"]`) and `server/discover` lists only that version.
//!
//! Remote modes also answer requests in the server's place when asked (see [`Faults`] and the
//! `/_mock/*` routes): an injected HTTP status ([`StatusFault`]), a redirect, or a 2026-07-28-only
//! server's `-32022` answer to `initialize`.
//!
//! # HTTP/2
//!
//! Every remote connection is served HTTP/1.1 or HTTP/2 by prior knowledge (h2c), as its first
//! bytes say; with [`MockOptions::tls`] ([`MockTls`], `--tls CERT KEY`) it is https instead, and
//! ALPN chooses between `h2` and `http/1.1` (`http/1.1` alone with `--http1-only`). Its faults: [`MockOptions::h2_max_streams`]
//! (`--h2-max-streams N`, the `SETTINGS_MAX_CONCURRENT_STREAMS`), [`Faults::goaway`] (a
//! graceful `GOAWAY` on the connections open now), [`Faults::refuse_streams`] (`RST_STREAM
//! REFUSED_STREAM` before the routes), [`Faults::silence_pings`] (the client's `PING`s go
//! unanswered on the connections open now, every other frame flows) and
//! [`MockOptions::http1_only`] (`--http1-only`). [`Faults::wire`] ([`WireCounts`]) counts
//! connections accepted and closed, ALPN's choices, requests by version, and the client's
//! `PING`s.
//!
//! # Conformance mode
//!
//! `--conformance` (binary only, `--transport stdio|http`) serves nothing of the above: only the
//! tools, resources, prompts and completions the official conformance suite's server scenarios
//! ask for (`scripts/conformance-server.sh`, CONFORMANCE-SERVER.md).
//!
//! # Hostile mode
//!
//! Kinds of a server that answers badly, each in its own file under `hostile/`: `discover`
//! ([`DiscoverRefusal`], [`Faults::set_discover_refusal`], `--discover-refusal SHAPE`), a
//! 2025-11-25 server that refuses `server/discover` in one of the ways real ones do (on stdio,
//! with `--discover-late`, only once the client's next request came).
//!
//! # OAuth mode
//!
//! With [`MockOptions::oauth`] ([`OAuthOptions`]; binary: `--oauth`, `--oauth-access-ttl
//! SECS`, `--oauth-client ID[:SECRET]`…, `--oauth-step-up TOOL:SCOPE`,
//! `--oauth-refresh-delay-ms N`) every MCP request, on both transports and in both eras, needs
//! `Authorization: Bearer <access token>`, and the mock is its own OAuth 2.1 authorization
//! server on the same port (`<base>` = `http://127.0.0.1:<port>`, [`MockServer::base_url`]):
//!
//! - discovery: `/.well-known/oauth-protected-resource/mcp` (also `/sse` and the bare path;
//!   RFC 9728) and `/.well-known/oauth-authorization-server` (RFC 8414, issuer `<base>`);
//! - `POST /register` (RFC 7591): a new random `client_id`, public unless the request asks for
//!   `client_secret_basic`/`_post` (then a `client_secret` too); redirect URIs must be
//!   `http://127.0.0.1:*` or `http://localhost:*`;
//! - `GET /authorize`: approves at once (no user) with `302` to the exact registered
//!   redirect URI (any loopback one for pre-registered clients) with `code`, `state` and `iss`;
//!   S256 PKCE is required; a bad request gets 400 and no redirect;
//! - `POST /token`: `authorization_code` (single-use code, PKCE and `redirect_uri` checked),
//!   `refresh_token` (rotating: each use spends the old one; a spent or revoked one gets
//!   `invalid_grant`) and `client_credentials` (confidential clients only); client
//!   authentication by `client_secret_basic`, `client_secret_post` or none;
//! - JWT access tokens (RFC 9068), for tests of a resource server: `GET /jwks` publishes an
//!   RSA key (RS256, PS256) and a P-256 key (ES256), named by the metadata's `jwks_uri`;
//!   `POST /_mock/oauth/jwt` (`{"claims": {…}, "alg": "RS256", "key": "current", "kid": …,
//!   "typ": …, "header": {…}}`) signs any claims, hostile tokens included (`alg` `none`, `HS256`
//!   keyed with the RSA public key, `key` `previous` or `stranger`, a `kid` naming another key);
//!   `POST /_mock/oauth/rotate` (`{"keep_previous": true}`) makes new keys current and keeps the
//!   last ones published or drops them; `GET /_mock/oauth/jwks-fetches` counts `/jwks` answers.
//!   The MCP routes still take only the mock's own opaque tokens;
//! - without a valid token an MCP request gets 401 with `WWW-Authenticate: Bearer
//!   [error="invalid_token", ]scope="<default scopes>", resource_metadata="<metadata URL>"`
//!   (the `/mcp` document, or the `/sse` one for the legacy routes); a `tools/call` of the
//!   step-up tool with a token lacking its scope gets 403 `insufficient_scope` asking for the
//!   token's scopes plus that one. Tokens are checked per request only: an access token that
//!   expires never ends a session or stream.
//!
//! Controls: [`Faults::expire_access_tokens`], [`Faults::revoke_refresh_tokens`],
//! [`Faults::fail_token_requests`] and
//! [`Faults::oauth_stats`] ([`OAuthStats`]), also `POST /_mock/oauth/expire-access`,
//! `POST /_mock/oauth/revoke-refresh`, `POST /_mock/oauth/token-outage` (`{"count": N}`) and
//! `GET /_mock/oauth/stats`. Codes, tokens, secrets
//! and client ids are never logged. The OAuth routes are not recorded (`/_mock/requests`) and
//! no fault acts on them; the recorded MCP requests keep their `authorization` header.
//!
//! # Hostile mode
//!
//! `--hostile KIND` runs, instead of the mock, a small hand-written server that answers badly
//! (see `hostile`); in-process, [`HostileReplies`] serves the reply kinds on Streamable HTTP.
//! Reply kinds ([`ReplyKind`], stdio or `--transport http`): `huge-pages` (`tools/list` pages of
//! `--page-bytes N`, 4 MiB by default, for `--pages N`, 100 by default), `endless-pages` (one-tool
//! pages whose cursor never ends), `stray-response` (a response to an id never sent before every
//! answer), `duplicate-response` (every answer twice) and `malformed-json` (a line or event that
//! is not JSON before every `tools/call` answer; instead of it for the tool `broken`).
//! `--hostile flood` (stdio) floods `notifications/message` once the session is initialized.
//!
//! # Invariants
//!
//! 1. `crash` exits (in-process: kills the server) only after its reply has been flushed to the
//!    transport; so do `wedge` (it stops reading) and `--exit-after-list`; nothing is timed.
//! 2. `hang` silences every outgoing path of the server, ping answers included; `block` holds
//!    them in order and releases them when it ends.
//! 3. Remote modes bind 127.0.0.1 only.
//! 4. With `--lock-file`, a process that finds another live instance exits 99 and records
//!    `overlap <pid>` in `<PATH>.overlap`.
//! 5. With `--ignore-sigterm`, SIGTERM is blocked in every thread before any thread starts, so
//!    it stays pending and the process lives on until SIGKILL (or SIGINT).

#![forbid(unsafe_code)]

mod binary;
mod block;
mod cli;
mod complete;
mod confirm;
mod conformance;
mod crash;
mod era;
mod handler;
mod hold;
pub mod hostile;
mod listen;
mod lock;
mod logging;
mod notify;
mod process;
mod progress;
mod prompts;
pub mod proxy;
mod random;
mod remote;
mod resources;
mod set_tools;
mod shared;
mod stdio;
mod subscribers;
mod tools;
mod whoami;
mod withdraw;

pub use cli::main_with_args;
pub use hold::PortHold;
pub use hostile::discover::{DiscoverRefusal, EmptyKind};
pub use hostile::replies::{HostileReplies, ReplyKind, ReplyOptions};
pub use process::spawn_process;
pub use remote::MockServer;
pub use remote::faults::Faults;
pub use remote::oauth::{IssuedTokens, OAuthOptions, OAuthStats};
pub use remote::options::{MockOptions, MockTransport};
pub use remote::report::{MockState, RecordedRequest};
pub use remote::status::{InvalidFault, StatusFault};
pub use remote::tls::MockTls;
pub use remote::wire::WireCounts;
pub use set_tools::SetTools;
pub use tools::BUILTINS;
pub use whoami::Whoami;
