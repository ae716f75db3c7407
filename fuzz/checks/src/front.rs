//! What a host's bytes reach on the gateway's own host-facing front (`serve --front own`): its
//! `/mcp` router with `Host`/`Origin` checks, the `POST` path (`Accept`, `Content-Type`, body
//! bound, `MCP-Protocol-Version`, parsing into a JSON-RPC message, `initialize`, requests,
//! notifications, answers, progress), `GET` (the standalone stream, `Last-Event-ID`), `DELETE`,
//! and what goes on to rmcp's service (no session). Built by
//! `mcp_resilient_gateway::fuzzing::OwnFront` with no upstream, in memory, on a runtime whose
//! clock is paused (so a stream's minute of silence passes at once).
//!
//! The input is up to [`MAX_REQUESTS`] requests separated by a NUL byte. Each request: one
//! byte `s`, then header lines (`Name: value\n`) up to an empty line, then the body.
//!
//! - `s & 3`: the method: `POST`, `GET`, `DELETE`, `PUT`.
//! - `(s >> 2) & 3`: `Mcp-Session-Id`: none, session A's id, A's id in capitals, none (the
//!   input's own header lines may carry one).
//! - `(s >> 4) & 1`: the headers a host sends (`Accept` of both kinds, `Content-Type` JSON,
//!   `MCP-Protocol-Version: 2025-11-25`) before the input's; `Host: 127.0.0.1:8808` always
//!   comes first.
//! - `(s >> 5) & 3`: the body: as given; in a batch (`[` body `]`); repeated up to half the
//!   body bound; nested 200 objects deep around it.
//!
//! In header values and the body, `{A}` and `{B}` stand for the two sessions' ids, except in an
//! `Mcp-Session-Id` line, where `{B}` is B's id with its last digit changed: the input may
//! name B anywhere but in the one header that would address B. `{E}` stands for the event id of
//! the answer on a stream of B's (a `ping` that asked for progress), for a `Last-Event-ID`.
//!
//! Asserted: no panic; every answer has a status below 500 and a body no longer than the
//! bound, read without error; a `202` or `204` has no body; a whole JSON body is JSON; a new
//! `Mcp-Session-Id` comes only with a `200` and is a session of its own; no session exists but
//! A, B and those the input opened; session B is as it was after every request (invariant 1
//! of `gateway/src/http/own/`: a request reaches only the session it names), no answer carries
//! an event of B's stream (`own/replay.rs`, invariant 1), and B still answers a `ping` at the
//! end.

use mcp_resilient_gateway::fuzzing::{Answer, End, OwnFront};

/// The requests read from one input, at most.
const MAX_REQUESTS: usize = 6;
/// The front's body bound.
const MAX_BODY: usize = 64 * 1024;
/// The most an answer's body may be.
const MAX_ANSWER: usize = 256 * 1024;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
const STREAMED: &str =
    r#"{"jsonrpc":"2.0","id":8,"method":"ping","params":{"_meta":{"progressToken":"b"}}}"#;

/// Runs `data`'s requests through the own front (module docs).
pub fn own_front(data: &[u8]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let front = OwnFront::start(MAX_BODY).await;
        let a = open(&front).await;
        let b = open(&front).await;
        let (b_events, e) = stream_of(&front, &b).await;
        let b_was = front.state_of(&b).expect("B is open");
        let mut opened = vec![a.clone(), b.clone()];
        for request in data.split(|&byte| byte == 0).take(MAX_REQUESTS) {
            let Some((&selector, rest)) = request.split_first() else {
                continue;
            };
            let (method, headers, body) = shape(selector, rest, &a, &b, &e);
            let answer = front.send(method, &headers, body, MAX_ANSWER).await;
            check(&answer);
            let lines = answer.body.split(|&byte| byte == b'\n');
            assert!(
                !lines
                    .clone()
                    .any(|line| line.starts_with(b_events.as_bytes())),
                "B's events answered {method} {headers:?}"
            );
            if let Some(id) = header(&answer, "mcp-session-id") {
                let id = String::from_utf8(id.to_vec()).expect("a session id is text");
                assert_eq!(answer.status, 200, "a session opened with {answer:?}");
                assert!(!opened.contains(&id), "a session id given twice: {id}");
                opened.push(id);
            }
            assert_eq!(
                front.state_of(&b).as_ref(),
                Some(&b_was),
                "session B changed after {method} {headers:?}"
            );
            for id in front.sessions() {
                assert!(opened.contains(&id), "a session no host opened: {id}");
            }
        }
        let pong = front
            .send("POST", &host_headers(Some(&b)), PING.into(), MAX_ANSWER)
            .await;
        check(&pong);
        let pong: serde_json::Value = serde_json::from_slice(&pong.body).expect("a JSON answer");
        assert_eq!(pong["id"], 7, "B's ping: {pong}");
        assert!(pong.get("result").is_some(), "B's ping: {pong}");
        assert_eq!(front.state_of(&b), Some(b_was), "B after its ping");
        front.stop().await;
    });
}

/// A session opened the way a host opens one.
async fn open(front: &OwnFront) -> String {
    let answer = front
        .send("POST", &host_headers(None), INITIALIZE.into(), MAX_ANSWER)
        .await;
    assert_eq!(answer.status, 200, "initialize: {answer:?}");
    let id = header(&answer, "mcp-session-id").expect("initialize gives a session");
    let id = String::from_utf8(id.to_vec()).expect("a session id is text");
    let done = front
        .send("POST", &host_headers(Some(&id)), INITIALIZED.into(), 0)
        .await;
    assert_eq!(done.status, 202, "initialized: {done:?}");
    id
}

/// A stream of session `id`'s: the start of its event ids (`id: {stream}.`) and its last id.
async fn stream_of(front: &OwnFront, id: &str) -> (String, String) {
    let answer = (front.send("POST", &host_headers(Some(id)), STREAMED.into(), MAX_ANSWER)).await;
    check(&answer);
    let body = String::from_utf8_lossy(&answer.body);
    let last = body
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .next_back();
    let last = last.unwrap_or_else(|| panic!("a stream with ids: {body}"));
    let stream = last.split('.').next().expect("a stream number");
    (format!("id: {stream}."), last.to_owned())
}

type Headers = Vec<(Vec<u8>, Vec<u8>)>;

fn host_headers(session: Option<&str>) -> Headers {
    let mut headers: Headers = vec![
        (b"host".to_vec(), b"127.0.0.1:8808".to_vec()),
        (
            b"accept".to_vec(),
            b"application/json, text/event-stream".to_vec(),
        ),
        (b"content-type".to_vec(), b"application/json".to_vec()),
        (b"mcp-protocol-version".to_vec(), b"2025-11-25".to_vec()),
    ];
    if let Some(id) = session {
        headers.push((b"mcp-session-id".to_vec(), id.as_bytes().to_vec()));
    }
    headers
}

/// One request of the input (module docs).
fn shape(selector: u8, rest: &[u8], a: &str, b: &str, e: &str) -> (&'static str, Headers, Vec<u8>) {
    let method = ["POST", "GET", "DELETE", "PUT"][usize::from(selector & 3)];
    let session = match (selector >> 2) & 3 {
        1 => Some(a.to_owned()),
        2 => Some(a.to_ascii_uppercase()),
        _ => None,
    };
    let mut headers = match (selector >> 4) & 1 {
        1 => host_headers(session.as_deref()),
        _ => {
            let mut headers = vec![(b"host".to_vec(), b"127.0.0.1:8808".to_vec())];
            if let Some(id) = &session {
                headers.push((b"mcp-session-id".to_vec(), id.as_bytes().to_vec()));
            }
            headers
        }
    };
    let not_b = not(b);
    let mut lines = rest.split_inclusive(|&byte| byte == b'\n');
    let mut consumed = 0;
    for line in lines.by_ref() {
        consumed += line.len();
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        if line.is_empty() {
            break;
        }
        let Some(colon) = line.iter().position(|&byte| byte == b':') else {
            continue;
        };
        let name = line[..colon].to_vec();
        let value = line[colon + 1..].trim_ascii();
        let value = match name.eq_ignore_ascii_case(b"mcp-session-id") {
            true => replace(&replace(value, "{B}", &not_b), "{A}", a),
            false => replace(&replace(&replace(value, "{E}", e), "{B}", b), "{A}", a),
        };
        headers.push((name, value));
    }
    let body = replace(
        &replace(&rest[consumed.min(rest.len())..], "{B}", b),
        "{A}",
        a,
    );
    let body = match (selector >> 5) & 3 {
        0 => body,
        1 => [b"[".as_slice(), &body, b"]"].concat(),
        2 if !body.is_empty() => body.repeat((MAX_BODY / 2) / body.len()),
        2 => body,
        _ => {
            let depth = 200;
            [b"{\"a\":".repeat(depth), body, b"}".repeat(depth)].concat()
        }
    };
    (method, headers, body)
}

/// `id` with its last character changed: a session that does not exist.
fn not(id: &str) -> String {
    let mut not = id.to_owned();
    let last = not.pop().map_or('0', |c| if c == '0' { '1' } else { '0' });
    not.push(last);
    not
}

fn replace(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    let from = from.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at..].starts_with(from) {
            out.extend_from_slice(to.as_bytes());
            at += from.len();
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    out
}

fn header<'a>(answer: &'a Answer, name: &str) -> Option<&'a [u8]> {
    (answer.headers.iter())
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_slice())
}

/// What every answer must be.
fn check(answer: &Answer) {
    assert!(
        (100..500).contains(&answer.status),
        "status {} ({:?})",
        answer.status,
        String::from_utf8_lossy(&answer.body)
    );
    assert_ne!(answer.end, End::Over, "an answer past {MAX_ANSWER} bytes");
    assert_ne!(
        answer.end,
        End::Failed,
        "an answer's body failed: {answer:?}"
    );
    if matches!(answer.status, 202 | 204) {
        assert!(answer.body.is_empty(), "a {} with a body", answer.status);
    }
    let json =
        header(answer, "content-type").is_some_and(|kind| kind.starts_with(b"application/json"));
    if json && answer.end == End::Whole {
        serde_json::from_slice::<serde_json::Value>(&answer.body)
            .unwrap_or_else(|error| panic!("a JSON answer that is not JSON ({error}): {answer:?}"));
    }
}

#[cfg(test)]
mod tests {
    /// The tracked seeds of the `front` target (`fuzz/corpus/front/`), each through the target.
    #[test]
    fn the_seeds_pass() {
        let seeds = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/front");
        let mut count = 0;
        for entry in std::fs::read_dir(seeds).expect("the seeds") {
            let path = entry.expect("a seed").path();
            super::own_front(&std::fs::read(&path).expect("a seed's bytes"));
            count += 1;
        }
        assert!(count >= 10, "{count} seeds");
    }
}
