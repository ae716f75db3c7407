//! A host of either revision on either front, with no MCP client in between: it writes its
//! requests itself and checks every message it receives against its revision's schema.

use std::collections::HashMap;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::schema::{Revision, check};
use crate::{
    common::{LIMIT, mock_binary, raw::RawHost},
    serve::{
        gateway::Gateway,
        raw::{Raw, messages},
    },
};

/// The front a host reaches its upstream through.
#[derive(Debug, Clone, Copy)]
pub enum Front {
    /// `mcp-resilient proxy` on the host's stdin and stdout.
    Proxy,
    /// `mcp-resilient serve` over Streamable HTTP.
    Serve,
}

enum Link {
    Stdio(RawHost),
    Http {
        gateway: Gateway,
        raw: Raw,
        /// A 2025-11-25 host's session, and its standalone stream's messages once it ends.
        session: Option<(String, JoinHandle<Vec<Value>>)>,
    },
}

/// One host: its link, its revision, what it asked, and how many messages it checked.
pub struct Host {
    link: Link,
    revision: Revision,
    /// Which method each request id asked, to know what its answer must be.
    asked: HashMap<u64, &'static str>,
    checked: usize,
}

impl Host {
    /// Starts `front` with the mock as its stdio child, held to `upstream`'s revision.
    pub async fn start(front: Front, revision: Revision, upstream: Revision) -> Host {
        let args = [
            "--protocol",
            upstream.as_str(),
            "--stdio",
            "--",
            mock_binary(),
            "mock-server",
            "--transport",
            "stdio",
        ];
        let link = match front {
            Front::Proxy => Link::Stdio(RawHost::start(&args, None).await),
            Front::Serve => {
                let gateway = Gateway::start(&args).await;
                let raw = Raw::new(&gateway.url());
                Link::Http {
                    gateway,
                    raw,
                    session: None,
                }
            }
        };
        Host {
            link,
            revision,
            asked: HashMap::new(),
            checked: 0,
        }
    }

    /// `initialize` and `notifications/initialized` (2025-11-25), or `server/discover`.
    pub async fn handshake(&mut self) {
        match self.revision {
            Revision::V2025 => {
                // On stdio the host answers elicitations (`request` does); over HTTP it declares
                // none, since its reader takes a response whole.
                let capabilities = match self.link {
                    Link::Stdio(_) => json!({"elicitation": {}}),
                    Link::Http { .. } => json!({}),
                };
                let params = json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": capabilities,
                    "clientInfo": {"name": "revisions", "version": "0"},
                });
                let answer = self.request(1, "initialize", params).await;
                assert!(
                    answer
                        .iter()
                        .any(|m| m["id"] == json!(1) && m.get("result").is_some()),
                    "initialize: {answer:?}"
                );
                self.initialized().await;
            }
            Revision::V2026 => {
                let answer = self.request(1, "server/discover", json!({})).await;
                assert!(
                    answer
                        .iter()
                        .any(|m| m["id"] == json!(1) && m.get("result").is_some()),
                    "server/discover: {answer:?}"
                );
            }
        }
    }

    /// `notifications/initialized`; over HTTP, also the session's standalone stream.
    async fn initialized(&mut self) {
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        match &mut self.link {
            Link::Stdio(host) => host.send(done).await,
            Link::Http { raw, session, .. } => {
                let (id, _) = session.as_ref().expect("initialize opened a session");
                let sent = raw.post(&done, &raw.in_session(id)).await;
                assert_eq!(sent.status(), StatusCode::ACCEPTED);
                let stream = raw.standalone(id).await;
                assert_eq!(stream.status(), StatusCode::OK);
                let id = id.clone();
                *session = Some((id, tokio::spawn(messages(stream))));
            }
        }
    }

    /// The JSON-RPC body of request `id` (recorded as asked), with the 2026-07-28 `_meta` that
    /// a host of that revision sends with every request.
    fn body(&mut self, id: u64, method: &'static str, params: &mut Value) -> Value {
        self.asked.insert(id, method);
        if self.revision == Revision::V2026 {
            let meta = params["_meta"].as_object().cloned().unwrap_or_default();
            let mut all = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "revisions", "version": "0"},
                "io.modelcontextprotocol/logLevel": "debug",
            });
            all.as_object_mut().expect("an object").extend(meta);
            params["_meta"] = all;
        }
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    /// Sends request `id` on stdio without waiting for anything (a listen stream's request,
    /// whose answer comes at its end, if ever).
    pub async fn send(&mut self, id: u64, method: &'static str, mut params: Value) {
        let body = self.body(id, method, &mut params);
        self.stdio().send(body).await;
    }

    /// Sends notification `method` on stdio.
    pub async fn notify(&mut self, method: &'static str, params: Value) {
        let body = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.stdio().send(body).await;
    }

    /// Reads stdio until a message `want` accepts; every message read, that one last, checked.
    pub async fn read_until(&mut self, want: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut received = Vec::new();
        loop {
            let message = self.stdio().read().await.expect("the proxy is still there");
            self.check(&message);
            let done = want(&message);
            received.push(message);
            if done {
                return received;
            }
        }
    }

    fn stdio(&mut self) -> &mut RawHost {
        match &mut self.link {
            Link::Stdio(host) => host,
            Link::Http { .. } => panic!("a stdio host's step"),
        }
    }

    /// Sends request `id` and returns every message received until its answer, the answer
    /// included, each checked.
    pub async fn request(
        &mut self,
        id: u64,
        method: &'static str,
        mut params: Value,
    ) -> Vec<Value> {
        let body = self.body(id, method, &mut params);
        let received = match &mut self.link {
            Link::Stdio(host) => {
                host.send(body).await;
                let mut received = Vec::new();
                loop {
                    let message = host.read().await.expect("the proxy is still there");
                    let done = message["id"] == json!(id) && message.get("method").is_none();
                    if message["method"] == json!("elicitation/create") {
                        // What a person would answer `confirm`'s form.
                        let content = json!({"confirmed": true, "note": "from the host"});
                        let result = json!({"action": "accept", "content": content});
                        let reply =
                            json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
                        host.send(reply).await;
                    }
                    received.push(message);
                    if done {
                        break received;
                    }
                }
            }
            Link::Http { raw, session, .. } => {
                let mut headers = vec![("mcp-method", method)];
                // `Mcp-Name`: the tool's or prompt's name, the resource's URI.
                let name = (params["name"].as_str())
                    .or(params["uri"].as_str())
                    .map(str::to_owned);
                match (&self.revision, &session) {
                    (Revision::V2026, _) => {
                        headers.push(("mcp-protocol-version", "2026-07-28"));
                        if let Some(name) = &name {
                            headers.push(("mcp-name", name));
                        }
                    }
                    (Revision::V2025, Some((session, _))) => {
                        headers.extend(raw.in_session(session))
                    }
                    (Revision::V2025, None) => {}
                }
                let response = raw.post(&body, &headers).await;
                let status = response.status();
                assert_eq!(
                    status,
                    StatusCode::OK,
                    "{method}: {}",
                    response.text().await.unwrap_or_default()
                );
                if method == "initialize" {
                    let session_id = response
                        .headers()
                        .get("mcp-session-id")
                        .and_then(|v| v.to_str().ok())
                        .expect("a session id")
                        .to_owned();
                    *session = Some((session_id, tokio::spawn(async { Vec::new() })));
                }
                messages(response).await
            }
        };
        for message in &received {
            self.check(message);
        }
        received
    }

    fn check(&mut self, message: &Value) {
        let answers = message
            .get("method")
            .is_none()
            .then(|| {
                message["id"]
                    .as_u64()
                    .and_then(|id| self.asked.get(&id).copied())
            })
            .flatten();
        if let Err(refused) = check(self.revision, message, answers) {
            panic!("{refused}");
        }
        self.checked += 1;
    }

    /// Ends the host's session and checks what came after the last answer (the standalone
    /// stream's messages, the proxy's last lines); the count of messages checked.
    pub async fn finish(mut self) -> usize {
        let rest = match &mut self.link {
            Link::Stdio(host) => {
                host.close_stdin();
                let mut rest = Vec::new();
                while let Some(message) = host.read().await {
                    rest.push(message);
                }
                rest
            }
            Link::Http { raw, session, .. } => match session.take() {
                Some((id, stream)) => {
                    let deleted = raw.delete(&id).await;
                    assert!(deleted.status().is_success(), "{}", deleted.status());
                    tokio::time::timeout(LIMIT, stream)
                        .await
                        .expect("the standalone stream ends with its session")
                        .expect("the stream's reader")
                }
                None => Vec::new(),
            },
        };
        for message in &rest {
            self.check(message);
        }
        if let Link::Http { gateway, .. } = self.link {
            gateway.stop().await;
        }
        self.checked
    }
}
