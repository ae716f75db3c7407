//! The host sessions' state store (`ServeOptions::store`): what a host negotiated and asked for
//! is written to the store the gateway was given, under its session id, and leaves it with the
//! session. The gateway runs in this process (the store is a value), its upstream is the mock
//! on stdio, the host an rmcp client over 127.0.0.1.

#![allow(deprecated)]

use std::sync::{Arc, Mutex, PoisonError};

use mcp_resilient_gateway::{
    http::{Gateway, ServeOptions},
    state::{HostState, HostStore, MemoryHostStore},
};
use rmcp::{
    ServiceExt,
    model::{
        ClientCapabilities, ClientInfo, Implementation, LoggingLevel, SetLevelRequestParams,
        SubscribeRequestParams,
    },
    transport::StreamableHttpClientTransport,
};
use tokio_util::sync::CancellationToken;

use crate::common::{self, LIMIT};

/// A store that keeps its state in memory and remembers every key it was written under.
#[derive(Debug, Default)]
struct Recording {
    inner: MemoryHostStore,
    keys: Mutex<Vec<String>>,
}

impl Recording {
    fn keys(&self) -> Vec<String> {
        self.keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn state(&self, key: &str) -> Option<HostState> {
        let mut found = None;
        self.inner.view(key, &mut |state| found = state.cloned());
        found
    }
}

impl HostStore for Recording {
    fn view(&self, key: &str, look: &mut dyn FnMut(Option<&HostState>)) {
        self.inner.view(key, look);
    }

    fn update(&self, key: &str, change: &mut dyn FnMut(&mut HostState)) {
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        if !keys.iter().any(|k| k == key) {
            keys.push(key.to_owned());
        }
        drop(keys);
        self.inner.update(key, change);
    }

    fn remove(&self, key: &str) -> Option<HostState> {
        self.inner.remove(key)
    }

    fn len(&self) -> usize {
        self.inner.len()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_sessions_state_lives_in_the_given_store_for_as_long_as_the_session() {
    let store = Arc::new(Recording::default());
    let mut options = ServeOptions::default();
    options.store = store.clone();
    let gateway = Gateway::transparent(common::stdio_mock("store", &[]))
        .expect("gateway")
        .options(options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
    let stop = CancellationToken::new();
    let serving = tokio::spawn(gateway.serve(listener, stop.clone()));

    let mut info = ClientInfo::new(
        ClientCapabilities::builder().enable_elicitation().build(),
        Implementation::new("store-host", "1.2.3"),
    );
    info.protocol_version = rmcp::model::ProtocolVersion::V_2025_06_18;
    let host = tokio::time::timeout(
        LIMIT,
        info.serve(StreamableHttpClientTransport::from_uri(url)),
    )
    .await
    .expect("initialize in time")
    .expect("initialize");
    tokio::time::timeout(
        LIMIT,
        host.set_level(SetLevelRequestParams::new(LoggingLevel::Debug)),
    )
    .await
    .expect("in time")
    .expect("logging/setLevel");
    tokio::time::timeout(
        LIMIT,
        host.subscribe(SubscribeRequestParams::new("mock://counter")),
    )
    .await
    .expect("in time")
    .expect("resources/subscribe");

    let keys = store.keys();
    assert_eq!(keys.len(), 1, "one host, one key: {keys:?}");
    let state = store.state(&keys[0]).expect("the host's state");
    assert_eq!(state.protocol.as_deref(), Some("2025-06-18"));
    assert_eq!(
        state.client.as_ref().map(|c| c.name.as_str()),
        Some("store-host")
    );
    assert!(state.capabilities.elicitation.is_some());
    assert_eq!(state.level, Some(LoggingLevel::Debug));
    assert!(
        state.subscriptions.contains_key("mock://counter"),
        "{state:?}"
    );

    // The host ends its session (DELETE): its state leaves the store.
    let _ = host.cancel().await;
    let deadline = tokio::time::Instant::now() + LIMIT;
    while store.len() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the ended session's state is still in the store"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    stop.cancel();
    let _ = tokio::time::timeout(LIMIT, serving).await;
}
