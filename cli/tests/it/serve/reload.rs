//! SIGHUP: a real `serve --config FILE` reads the file again and takes the servers added,
//! removed and changed, while a host calls an unchanged server in a loop; a file that does
//! not load changes nothing and is reported.

use std::{
    path::Path,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use serde_json::{Value, json};

use super::gateway::{FAST, Gateway, HttpHost};
use crate::common::{LIMIT, mock_binary};

fn server(extra: &[&str]) -> Value {
    let mut args = vec!["mock-server", "--transport", "stdio"];
    args.extend(extra);
    json!({"command": mock_binary(), "args": args})
}

fn write(path: &Path, servers: Value) {
    std::fs::write(path, json!({"mcpServers": servers}).to_string()).expect("config");
}

fn hangup(gateway: &Gateway) {
    let pid = nix::unistd::Pid::from_raw(gateway.child.id().expect("running") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).expect("SIGHUP");
}

/// Waits until the gateway has said `what` `count` times on stderr.
async fn wait_said(gateway: &Gateway, what: &str, count: usize) -> String {
    let waited = tokio::time::timeout(LIMIT, async {
        loop {
            let said: Vec<String> = (gateway.log().into_iter())
                .filter(|l| l.contains(what))
                .collect();
            if said.len() >= count {
                return said[count - 1].clone();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    waited
        .await
        .unwrap_or_else(|_| panic!("never said '{what}' {count} times: {:?}", gateway.log()))
}

async fn status(gateway: &Gateway) -> Value {
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let response = http
        .get(format!("{}/status.json", gateway.base))
        .send()
        .await;
    response.expect("status").json().await.expect("JSON")
}

fn generation_of(facts: &Value, name: &str) -> Option<u64> {
    let upstreams = facts["upstreams"].as_array()?;
    let upstream = upstreams.iter().find(|u| u["name"] == name)?;
    upstream["generation"].as_u64()
}

async fn wait_tools(host: &HttpHost, what: &str, want: impl Fn(&[String]) -> bool) {
    let waited = tokio::time::timeout(LIMIT, async {
        loop {
            if want(&host.tool_names().await) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    waited
        .await
        .unwrap_or_else(|_| panic!("the host's tools never {what}"));
}

fn has(tools: &[String], name: &str) -> bool {
    tools.iter().any(|t| t == name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_adds_changes_and_removes_servers_and_a_host_calling_meanwhile_loses_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("servers.json");
    write(&config, json!({"a": server(&[]), "b": server(&[])}));
    let path = config.display().to_string();
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--config", &path]);
    let gateway = Gateway::start(&args).await;
    let host = gateway.host().await;
    wait_tools(&host, "listed a and b", |t| {
        has(t, "mcp__a__echo") && has(t, "mcp__b__echo")
    })
    .await;
    let before = status(&gateway).await;
    let a_generation = generation_of(&before, "a").expect("a's generation");

    // A host calling the unchanged server in a loop across every reload.
    let caller = gateway.host().await;
    let stop = Arc::new(AtomicBool::new(false));
    let calling = tokio::spawn({
        let stop = stop.clone();
        async move {
            let (mut ok, mut failed) = (0u64, Vec::new());
            while !stop.load(Ordering::SeqCst) {
                match caller
                    .try_call("mcp__a__echo", json!({"text": "steady"}))
                    .await
                {
                    Ok(result) if result.is_error != Some(true) => ok += 1,
                    other => failed.push(format!("{other:?}")),
                }
            }
            caller.close().await;
            (ok, failed)
        }
    });

    // Added.
    write(
        &config,
        json!({"a": server(&[]), "b": server(&[]), "c": server(&[])}),
    );
    hangup(&gateway);
    let said = wait_said(&gateway, "configuration reloaded", 1).await;
    assert!(
        said.contains("1 added, 0 removed, 0 changed, 2 unchanged"),
        "{said}"
    );
    wait_tools(&host, "listed c", |t| has(t, "mcp__c__echo")).await;
    // Changed: b gets one more tool.
    write(
        &config,
        json!({"a": server(&[]), "b": server(&["--extra-tools", "1"]), "c": server(&[])}),
    );
    hangup(&gateway);
    let said = wait_said(&gateway, "configuration reloaded", 2).await;
    assert!(
        said.contains("0 added, 0 removed, 1 changed, 2 unchanged"),
        "{said}"
    );
    wait_tools(&host, "listed b's new tool", |t| has(t, "mcp__b__extra_0")).await;
    // Removed.
    write(
        &config,
        json!({"a": server(&[]), "b": server(&["--extra-tools", "1"])}),
    );
    hangup(&gateway);
    let said = wait_said(&gateway, "configuration reloaded", 3).await;
    assert!(
        said.contains("0 added, 1 removed, 0 changed, 2 unchanged"),
        "{said}"
    );
    wait_tools(&host, "dropped c", |t| {
        !t.iter().any(|n| n.starts_with("mcp__c__"))
    })
    .await;

    // Nothing changed, and a file that does not load: the host is told nothing.
    let told = host.told(|t| t.tools_changed);
    hangup(&gateway);
    let said = wait_said(&gateway, "configuration reloaded", 4).await;
    assert!(
        said.contains("0 added, 0 removed, 0 changed, 2 unchanged"),
        "{said}"
    );
    std::fs::write(&config, "{\"mcpServers\": {not json").expect("config");
    hangup(&gateway);
    let said = wait_said(&gateway, "configuration not reloaded", 1).await;
    assert!(said.contains("could not be loaded"), "{said}");
    let after = status(&gateway).await;
    assert_eq!(after["reloads"]["refused"], 1, "{after}");
    assert_eq!(after["reloads"]["applied"], 4, "{after}");
    assert_eq!(after["reloads"]["last"]["outcome"], "refused", "{after}");
    let tools = host.tool_names().await;
    assert!(
        has(&tools, "mcp__a__echo") && has(&tools, "mcp__b__extra_0"),
        "{tools:?}"
    );
    assert_eq!(
        host.told(|t| t.tools_changed),
        told,
        "told of a list that did not change"
    );

    stop.store(true, Ordering::SeqCst);
    let (ok, failed) = tokio::time::timeout(LIMIT, calling)
        .await
        .expect("in time")
        .expect("ran");
    assert!(
        failed.is_empty(),
        "{} of {} calls failed across the reloads: {failed:?}",
        failed.len(),
        ok + failed.len() as u64
    );
    assert!(ok > 0, "no call was made");
    // The unchanged server kept its generation; the host sessions were kept.
    assert_eq!(generation_of(&after, "a"), Some(a_generation), "{after}");
    assert_eq!(after["sessions"]["total"], 2, "{after}");
    assert!(
        generation_of(&after, "c").is_none(),
        "c is gone from the page: {after}"
    );
    host.call("mcp__b__extra_0", json!({"text": "new"})).await;
    host.close().await;
    eprintln!("reload: {ok} calls across 5 reloads, 0 failed");
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_that_does_not_validate_changes_nothing_and_is_reported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("servers.json");
    write(&config, json!({"a": server(&[])}));
    let path = config.display().to_string();
    let mut args: Vec<&str> = FAST.to_vec();
    // One server, not aggregated: a transparent gateway, which cannot take two.
    args.extend(["--config", &path]);
    let gateway = Gateway::start(&args).await;
    let host = gateway.host().await;
    wait_tools(&host, "listed echo", |t| has(t, "echo")).await;
    let told = host.told(|t| t.tools_changed);
    write(&config, json!({"a": server(&[]), "b": server(&[])}));
    hangup(&gateway);
    let said = wait_said(&gateway, "configuration not reloaded", 1).await;
    assert!(
        said.contains("transparent gateway serves one server"),
        "{said}"
    );
    let facts = status(&gateway).await;
    assert_eq!(facts["reloads"]["last"]["outcome"], "refused", "{facts}");
    assert_eq!(
        facts["upstreams"].as_array().map(Vec::len),
        Some(1),
        "{facts}"
    );
    assert_eq!(generation_of(&facts, "a"), Some(1), "{facts}");
    host.call("echo", json!({"text": "still"})).await;
    assert_eq!(host.told(|t| t.tools_changed), told);
    host.close().await;
    gateway.stop().await;
}
