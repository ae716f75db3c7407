//! Who sees and calls what at `serve`'s door, and how fast: the access policy per caller (a
//! static token's name, a JWT's identity claim), and a host's `DELETE` of its session.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{
    gateway::{FAST, Gateway, HttpHost},
    issuer::Doors,
    raw::{Raw, answer, initialize},
};
use crate::common::{LIMIT, process::MockProcess};

const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-0123456789";
const CAROL: &str = "carol-token-0123456789";

const POLICY: &str = r#"{
  "identities": {
    "alice": {"tools": ["*"]},
    "bob": {"tools": ["mock/echo"], "requestsPerSecond": 50, "burst": 50},
    "carol": {"tools": ["*"], "requestsPerSecond": 0.5, "burst": 3},
    "svc-reader": {"tools": ["echo", "whoami"]}
  },
  "default": {"tools": []}
}"#;

/// A gateway with named static tokens, the issuer's JWTs and the policy above.
async fn policed() -> (Doors, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let policy = dir.path().join("access.json");
    std::fs::write(&policy, POLICY).expect("policy");
    let policy = policy.display().to_string();
    let tokens = format!("alice:{ALICE}\nbob:{BOB}\ncarol:{CAROL}\n");
    let doors = Doors::start_with_tokens(&tokens, &["--access", &policy]).await;
    (doors, dir)
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

/// The JSON-RPC answer to a `tools/call` of `tool` in session `id` with `token`.
async fn raw_call(raw: &Raw, id: &str, token: &str, tool: &str) -> Value {
    let auth = format!("Bearer {token}");
    let mut headers = raw.in_session(id);
    headers.push(("authorization", &auth));
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": tool, "arguments": {"text": "x"}}});
    answer(raw.post(&call, &headers).await, 7).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_caller_lists_and_calls_only_the_tools_its_policy_grants() {
    let (doors, _dir) = policed().await;
    let url = doors.gateway.url();
    let alice = HttpHost::connect(&url, Some(ALICE)).await;
    let everything = sorted(alice.tool_names().await);
    assert!(
        everything.len() > 2,
        "alice sees every tool: {everything:?}"
    );
    let bob = HttpHost::connect(&url, Some(BOB)).await;
    assert_eq!(bob.tool_names().await, vec!["echo".to_owned()]);
    bob.call("echo", json!({"text": "bob may"})).await;
    let refused = bob.try_call("add", json!({"a": 1, "b": 2})).await;
    let refused = refused.expect_err("outside bob's tools");
    assert!(refused.contains("not one this caller may use"), "{refused}");
    // A JWT caller, named by its `sub`; one the policy does not list gets the default: nothing.
    let reader = doors.mint(json!({"sub": "svc-reader"}), json!({})).await;
    let reader = HttpHost::connect(&url, Some(&reader)).await;
    assert_eq!(sorted(reader.tool_names().await), vec!["echo", "whoami"]);
    let stranger = doors.mint(json!({"sub": "mallory"}), json!({})).await;
    let stranger_host = HttpHost::connect(&url, Some(&stranger)).await;
    assert!(stranger_host.tool_names().await.is_empty());
    // The refusal is a JSON-RPC error, and the call never reached the upstream.
    let id = doors
        .raw
        .session_with(&[("authorization", &format!("Bearer {stranger}"))])
        .await;
    let answer = raw_call(&doors.raw, &id, &stranger, "echo").await;
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    let seen = doors.upstream.admin_get("requests").await.to_string();
    assert!(seen.contains("bob may"), "bob's call went upstream: {seen}");
    assert!(
        !seen.contains("\"add\""),
        "a refused call went upstream: {seen}"
    );
    assert_eq!(
        seen.matches(r#""rpc_methods":["tools/call"]"#).count(),
        1,
        "{seen}"
    );
    for host in [alice, bob, reader, stranger_host] {
        host.close().await;
    }
    doors.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_past_its_rate_gets_429_with_retry_after_and_others_go_on() {
    let (doors, _dir) = policed().await;
    let raw = &doors.raw;
    let carol = format!("Bearer {CAROL}");
    let carol = [("authorization", carol.as_str())];
    // Burst 3 at 0.5/s: three requests pass, the fourth waits about two seconds.
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(raw.post(&initialize(1), &carol).await);
    }
    let last = statuses.pop().expect("four");
    for passed in &statuses {
        assert_eq!(passed.status(), StatusCode::OK);
    }
    assert_eq!(last.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry = last
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok());
    let retry: u64 = retry
        .and_then(|v| v.parse().ok())
        .expect("Retry-After in seconds");
    assert!((1..=2).contains(&retry), "Retry-After: {retry}");
    // Alice is not limited, and not slowed by Carol.
    let alice = format!("Bearer {ALICE}");
    for _ in 0..10 {
        let answer = raw
            .post(&initialize(1), &[("authorization", alice.as_str())])
            .await;
        assert_eq!(answer.status(), StatusCode::OK);
    }
    doors.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosts_delete_of_its_session_is_answered_204() {
    let mock = MockProcess::start("http").await;
    let url = mock.url();
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--name", "mock", "--url", &url]);
    let gateway = Gateway::start(&args).await;
    let raw = Raw::new(&gateway.url());
    let id = raw.session().await;
    let deleted = raw.delete(&id).await;
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let after = raw.post(&list, &raw.in_session(&id)).await;
    assert_eq!(after.status(), StatusCode::NOT_FOUND, "the session is gone");
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_access_policy_is_refused_before_listening() {
    let dir = tempfile::tempdir().expect("temp dir");
    let policy = dir.path().join("access.json");
    std::fs::write(&policy, r#"{"identities": {"a": {"tools": ["x*y"]}}}"#).expect("write");
    let policy = policy.display().to_string();
    let output = super::gateway::refused(&["--access", &policy, "--stdio", "--", "true"]).await;
    assert_eq!(output.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--access") && stderr.contains("tool pattern"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_answers_only_the_caller_that_opened_it() {
    let (doors, _dir) = policed().await;
    let raw = &doors.raw;
    let (alice, bob) = (format!("Bearer {ALICE}"), format!("Bearer {BOB}"));
    let id = raw.session_with(&[("authorization", &alice)]).await;
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let mut as_bob = raw.in_session(&id);
    as_bob.push(("authorization", &bob));
    assert_eq!(
        raw.post(&list, &as_bob).await.status(),
        StatusCode::FORBIDDEN
    );
    // Nor may another caller end it.
    let delete = (raw.http.delete(&raw.url))
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", "2025-11-25")
        .header("authorization", &bob);
    let ended = tokio::time::timeout(LIMIT, delete.send())
        .await
        .expect("DELETE answered in time")
        .expect("DELETE answered");
    assert_eq!(ended.status(), StatusCode::FORBIDDEN);
    let mut as_alice = raw.in_session(&id);
    as_alice.push(("authorization", &alice));
    let listed = answer(raw.post(&list, &as_alice).await, 3).await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    doors.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_scope_as_the_identity_claim_each_scope_grants_its_tools() {
    let dir = tempfile::tempdir().expect("temp dir");
    let policy = dir.path().join("access.json");
    let text =
        r#"{"identities": {"mcp:read": {"tools": ["echo"]}, "mcp:math": {"tools": ["add"]}}}"#;
    std::fs::write(&policy, text).expect("policy");
    let policy = policy.display().to_string();
    let flags = ["--jwt-identity-claim", "scope", "--access", &policy];
    let doors = Doors::start(&flags).await;
    let url = doors.gateway.url();
    let both = doors
        .mint(json!({"scope": "mcp:read mcp:math"}), json!({}))
        .await;
    let both = HttpHost::connect(&url, Some(&both)).await;
    assert_eq!(sorted(both.tool_names().await), vec!["add", "echo"]);
    let read = doors
        .mint(json!({"scope": "openid mcp:read"}), json!({}))
        .await;
    let read = HttpHost::connect(&url, Some(&read)).await;
    assert_eq!(read.tool_names().await, vec!["echo".to_owned()]);
    // A token without the identity claim names no caller: refused at the door.
    let unnamed = doors.mint(json!({"scope": null}), json!({})).await;
    let (status, challenge) = doors.knock(&unnamed).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(challenge.contains("lacks a required claim"), "{challenge}");
    for host in [both, read] {
        host.close().await;
    }
    doors.gateway.stop().await;
}
