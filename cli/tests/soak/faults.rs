//! The fault injectors: one per server, each running seeded random episodes (raise the health
//! flag, inject, end the fault, wait until the server answers again, lower the flag).

use std::{collections::BTreeMap, net::SocketAddr, sync::Arc, time::Duration};

use mcp_mock_server::{
    MockOptions, MockServer, MockTransport, PortHold, SetTools, StatusFault,
    proxy::{ProxyMode, TcpProxy},
};
use mcp_resilient::{CallError, Supervisor, ToolRegistry, call::CallOptions};
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::check::{Health, Violations};

/// A fault, and whether it may end a generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    Kill,
    Hang,
    Wedge,
    Expire,
    StreamDrop,
    Partition,
    Overload,
    Suspect,
    Busy,
    ListChange,
}

impl Fault {
    fn may_kill(self) -> bool {
        !matches!(
            self,
            Fault::Overload | Fault::Suspect | Fault::Busy | Fault::ListChange
        )
    }
}

const STDIO_FAULTS: [Fault; 5] = [
    Fault::Kill,
    Fault::Hang,
    Fault::Wedge,
    Fault::Busy,
    Fault::ListChange,
];

const REMOTE_FAULTS: [Fault; 9] = [
    Fault::Kill,
    Fault::Hang,
    Fault::Expire,
    Fault::StreamDrop,
    Fault::Partition,
    Fault::Overload,
    Fault::Suspect,
    Fault::Busy,
    Fault::ListChange,
];

/// A remote mock behind a TCP proxy; the mock is restarted on its port after a kill (held
/// meanwhile, so no other server takes it).
pub struct Remote {
    pub transport: MockTransport,
    pub mock: Option<MockServer>,
    pub port: u16,
    pub proxy: TcpProxy,
    _hold: PortHold,
}

impl Remote {
    pub async fn start(transport: MockTransport) -> Remote {
        let hold = PortHold::new().expect("a port");
        let port = hold.port();
        let mock = start_mock(transport, port).await;
        let proxy = TcpProxy::start(SocketAddr::from(([127, 0, 0, 1], port)))
            .await
            .expect("proxy");
        Remote {
            transport,
            mock: Some(mock),
            port,
            proxy,
            _hold: hold,
        }
    }

    fn faults(&self) -> &mcp_mock_server::Faults {
        self.mock.as_ref().expect("the mock runs").faults()
    }

    pub async fn shutdown(mut self) {
        if let Some(mock) = self.mock.take() {
            mock.shutdown().await;
        }
        self.proxy.shutdown().await;
    }
}

async fn start_mock(transport: MockTransport, port: u16) -> MockServer {
    MockServer::start(MockOptions {
        transport,
        port,
        ..MockOptions::default()
    })
    .await
    .expect("the mock starts")
}

/// What an injector works on.
pub enum Target {
    Stdio,
    Remote(Remote),
}

pub struct Injector {
    pub name: String,
    pub target: Target,
    pub server: Arc<Supervisor>,
    pub registry: ToolRegistry,
    pub health: Arc<Health>,
    pub violations: Arc<Violations>,
    pub counts: BTreeMap<Fault, u64>,
    /// Pids of every stdio child seen, to prove them gone at the end.
    pub pids: Vec<u32>,
    rng: StdRng,
    extra: u32,
}

impl Injector {
    pub fn new(
        name: &str,
        target: Target,
        server: Arc<Supervisor>,
        registry: ToolRegistry,
        health: Arc<Health>,
        violations: Arc<Violations>,
        seed: u64,
    ) -> Self {
        Injector {
            name: name.to_owned(),
            target,
            server,
            registry,
            health,
            violations,
            counts: BTreeMap::new(),
            pids: Vec::new(),
            rng: StdRng::seed_from_u64(seed),
            extra: 0,
        }
    }

    /// Runs episodes until `stop`.
    pub async fn run(mut self, stop: CancellationToken) -> Injector {
        while !stop.is_cancelled() {
            let quiet = Duration::from_millis(self.rng.random_range(500..1500));
            tokio::select! {
                _ = tokio::time::sleep(quiet) => {}
                _ = stop.cancelled() => break,
            }
            let choices: &[Fault] = match self.target {
                Target::Stdio => &STDIO_FAULTS,
                Target::Remote(_) => &REMOTE_FAULTS,
            };
            let fault = choices[self.rng.random_range(0..choices.len())];
            self.health.disturb(fault.may_kill());
            tracing::info!(server = %self.name, ?fault, "fault begins");
            self.inject(fault).await;
            self.recover(fault).await;
            *self.counts.entry(fault).or_default() += 1;
            tracing::info!(server = %self.name, ?fault, "fault over");
            self.health.settle();
        }
        self
    }

    async fn call(&self, tool: &str, args: serde_json::Value, timeout: Duration) {
        if let Ok(handle) = self.registry.handle(&format!("mcp__{}__{tool}", self.name)) {
            let _ = handle
                .call_with(args, CallOptions::new().timeout(timeout))
                .await;
        }
    }

    async fn inject(&mut self, fault: Fault) {
        let hold = Duration::from_millis(self.rng.random_range(500..2000));
        match (fault, &mut self.target) {
            (Fault::Kill, Target::Stdio) => {
                if let Some(pid) = self.stdio_pid().await {
                    let pid = nix::unistd::Pid::from_raw(pid as i32);
                    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
                }
            }
            (Fault::Hang, Target::Stdio) => {
                self.call("hang", json!({}), Duration::from_millis(300))
                    .await;
            }
            (Fault::Wedge, Target::Stdio) => {
                self.call("wedge", json!({}), Duration::from_secs(2)).await;
                let big = "x".repeat(300 * 1024);
                let calls = (0..2)
                    .map(|_| self.call("echo", json!({ "text": big }), Duration::from_secs(10)));
                futures::future::join_all(calls).await;
            }
            (Fault::Kill, Target::Remote(remote)) => {
                if let Some(mock) = remote.mock.take() {
                    mock.faults().kill();
                    mock.shutdown().await;
                }
                tokio::time::sleep(hold / 2).await;
                remote.mock = Some(start_mock(remote.transport, remote.port).await);
            }
            (Fault::Hang, Target::Remote(remote)) => {
                remote.faults().hang();
                tokio::time::sleep(hold).await;
                remote.faults().unhang();
            }
            (Fault::Expire, Target::Remote(remote)) => remote.faults().expire_sessions().await,
            (Fault::StreamDrop, Target::Remote(remote)) => remote.faults().drop_streams().await,
            (Fault::Partition, Target::Remote(remote)) => {
                remote.proxy.set_mode(ProxyMode::BlackHole);
                tokio::time::sleep(hold).await;
                remote.proxy.set_mode(ProxyMode::Pass);
                // A half-open entry does not last for ever: the peer answers the next packet
                // with a reset. Until then the path is not healthy, and calls may fail.
                remote.proxy.reset_all();
            }
            (Fault::Overload, Target::Remote(remote)) => {
                let status = if self.rng.random_bool(0.5) { 429 } else { 503 };
                let burst = StatusFault {
                    retry_after: Some("0".into()),
                    methods: vec!["tools/call".into(), "ping".into()],
                    count: Some(self.rng.random_range(2..8)),
                    every: self.rng.random_range(1..3),
                    ..StatusFault::new(status)
                };
                remote
                    .faults()
                    .set_status_fault(Some(burst))
                    .expect("valid");
                tokio::time::sleep(hold).await;
                remote.faults().set_status_fault(None).expect("valid");
            }
            (Fault::Suspect, Target::Remote(remote)) => {
                let once = StatusFault {
                    methods: vec!["tools/call".into()],
                    count: Some(1),
                    ..StatusFault::new(502)
                };
                remote.faults().set_status_fault(Some(once)).expect("valid");
                tokio::time::sleep(hold).await;
                remote.faults().set_status_fault(None).expect("valid");
            }
            (Fault::Busy, _) => {
                let ms = hold.as_millis().min(1500) as u64;
                self.call("block", json!({ "ms": ms }), Duration::from_secs(5))
                    .await;
            }
            (Fault::ListChange, _) => {
                self.extra += 1;
                let change = SetTools {
                    add: vec![format!("extra_{}", self.extra)],
                    remove: vec![format!("extra_{}", self.extra - 1)],
                    notify: true,
                };
                self.call(
                    "set_tools",
                    serde_json::to_value(change_json(&change)).unwrap_or_default(),
                    Duration::from_secs(2),
                )
                .await;
            }
            (fault, _) => unreachable!("{fault:?} is not injected here"),
        }
    }

    async fn stdio_pid(&mut self) -> Option<u32> {
        let handle = self
            .registry
            .handle(&format!("mcp__{}__whoami", self.name))
            .ok()?;
        let result = handle.call(json!({})).await.ok()?;
        let who = mcp_mock_server::Whoami::from_result(&result)?;
        self.pids.push(who.pid);
        Some(who.pid)
    }

    /// Waits until the server answers a call again (bounded); a server that does not is a
    /// violation: every fault here is one it must recover from.
    async fn recover(&mut self, fault: Fault) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let echo = async {
            loop {
                let outcome = match self.registry.handle(&format!("mcp__{}__echo", self.name)) {
                    Ok(handle) => handle.call(json!({"text": "settled?"})).await,
                    Err(unknown) => Err(CallError::ToolNotFound { name: unknown.name }),
                };
                match outcome {
                    Ok(_) => return,
                    Err(CallError::Unavailable { .. } | CallError::ToolNotFound { .. }) => {
                        let _ = self.server.wait_ready(Duration::from_secs(1)).await;
                    }
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
        };
        if tokio::time::timeout_at(deadline, echo).await.is_err() {
            self.violations.add(format!(
                "{}: not answering 30 s after {fault:?} ended ({})",
                self.name,
                self.server.status().state
            ));
        }
        // Let what the fault left in flight (timed-out calls, abandoned attempts) drain away.
        tokio::time::sleep(Duration::from_millis(300)).await;
        if let Target::Stdio = self.target {
            let _ = self.stdio_pid().await;
        }
    }
}

fn change_json(change: &SetTools) -> serde_json::Value {
    json!({ "add": change.add, "remove": change.remove, "notify": change.notify })
}
