//! Idle cost of N supervised connections with a 1 s heartbeat. Each N runs in a child process
//! (this benchmark binary re-run with `--idle-child`), so its CPU time and resident memory are
//! the client's alone: the mock server is another process. Bytes per probe are counted by a
//! small TCP proxy on 127.0.0.1 in front of the mock, with one connection.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use mcp_resilient::{Supervisor, ToolRegistry, config::Heartbeat};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

use crate::{
    Mode,
    mock::{self, LIMIT, MockProcess, Res},
    stats::{Row, Samples},
};

const SECTION: &str = "4. idle cost (1 s heartbeat)";

/// Each session probes for itself: these rows are what one connection's probes cost.
fn heartbeat() -> Heartbeat {
    Heartbeat::every(Duration::from_secs(1)).scope(mcp_resilient::config::HeartbeatScope::Session)
}

/// `(utime + stime)` of this process in clock ticks.
pub fn cpu_ticks() -> u64 {
    cpu_ticks_of("self").unwrap_or(0)
}

/// `(utime + stime)` of the process `/proc/PROC` (`self` or a pid) in clock ticks; `None` when
/// it cannot be read (the process is gone).
pub fn cpu_ticks_of(proc: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{proc}/stat")).ok()?;
    let rest = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the command: state is field 3, utime 14, stime 15 (1-based over the whole line).
    let field = |i: usize| {
        fields
            .get(i - 3)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Some(field(14) + field(15))
}

pub fn rss_kib() -> u64 {
    rss_kib_of("self").unwrap_or(0)
}

/// The resident memory of the process `/proc/PROC` (`self` or a pid); `None` when it cannot be
/// read (the process is gone).
pub fn rss_kib_of(proc: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{proc}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

pub fn clk_tck() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// Heartbeat probes in the request log: POSTs on an existing session.
fn probes(kind: &str, requests: &[Value]) -> usize {
    requests
        .iter()
        .filter(|r| r["method"] == "POST" && !crate::support::opens_session(kind, r))
        .count()
}

/// The child: `--idle-child KIND PORT N WINDOW_MS`. Prints one JSON line.
pub async fn child(args: &[String]) -> Res<()> {
    let [kind, port, n, window] = args else {
        return Err(format!("idle child: bad arguments {args:?}"));
    };
    let kind: &'static str = if kind == "sse" { "sse" } else { "http" };
    let n: usize = n.parse().map_err(|_| "n")?;
    let window = Duration::from_millis(window.parse().map_err(|_| "window")?);
    let mock = MockProcess::attach(kind, port.parse().map_err(|_| "port")?);
    let rss_before = rss_kib();
    let registry = ToolRegistry::new();
    let mut servers = Vec::with_capacity(n);
    for i in 0..n {
        let config = mock::remote(
            &format!("idle{i}"),
            &mock,
            mock::backoff(Duration::from_millis(500), 0.2),
            heartbeat(),
        );
        servers.push(Supervisor::spawn(config, &registry).map_err(|e| e.to_string())?);
    }
    let ready = futures::future::join_all(servers.iter().map(|s| s.wait_ready(LIMIT))).await;
    let generations: Vec<u64> = ready
        .into_iter()
        .map(|r| r.map(u64::from))
        .collect::<Result<_, _>>()
        .map_err(|s| format!("not ready: {s}"))?;
    // Let the handshakes' garbage settle and every heartbeat reach its steady phase.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    mock.try_clear_requests().await?;
    let (cpu0, t0) = (cpu_ticks(), Instant::now());
    tokio::time::sleep(window).await;
    let (cpu1, elapsed) = (cpu_ticks(), t0.elapsed());
    let rss_after = rss_kib();
    let requests = mock.try_requests().await?;
    let still = servers
        .iter()
        .zip(&generations)
        .filter(|(s, g)| s.status().ready().map(u64::from) == Some(**g))
        .count();
    // Pinned to 2025-11-25 (legacy SSE: 2024-11-05): the probes are `ping`s on a session.
    let negotiated: std::collections::BTreeSet<String> = servers
        .iter()
        .filter_map(|s| s.status().protocol().map(str::to_owned))
        .collect();
    let out = json!({
        "n": n,
        "cpu_s": (cpu1 - cpu0) as f64 / clk_tck(),
        "window_s": elapsed.as_secs_f64(),
        "rss_before_kib": rss_before,
        "rss_after_kib": rss_after,
        "probes": probes(kind, &requests),
        "still_ready_same_generation": still,
        "negotiated": negotiated,
    });
    println!("{out}");
    Ok(())
}

async fn run_child(kind: &'static str, port: u16, n: usize, window: Duration) -> Res<Value> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let run = tokio::process::Command::new(exe)
        .args([
            "--idle-child",
            kind,
            &port.to_string(),
            &n.to_string(),
            &window.as_millis().to_string(),
        ])
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(LIMIT * 4 + window, run)
        .await
        .map_err(|_| "idle child timed out")?
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .ok_or_else(|| {
            format!(
                "idle child failed: {}",
                String::from_utf8_lossy(&output.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            )
        })?;
    serde_json::from_str(line).map_err(|e| e.to_string())
}

pub async fn run(mode: Mode, rows: &mut Vec<Row>) -> Res<()> {
    let window = if mode.quick {
        Duration::from_secs(5)
    } else {
        Duration::from_secs(30)
    };
    for kind in ["sse", "http"] {
        for n in [1usize, 100, 1000] {
            let mut mock = MockProcess::try_start(kind).await?;
            let name = format!("{kind} N={n}");
            match run_child(kind, mock.port, n, window).await {
                Ok(v) => push_rows(&name, n, &v, rows),
                Err(e) => {
                    let mut s = Samples::default();
                    s.fail(e);
                    rows.push(Row::new(
                        SECTION,
                        format!("{name}: CPU per connection per minute"),
                        "ms",
                        s,
                    ));
                }
            }
            mock.try_kill().await?;
        }
        rows.push(bytes_per_probe(kind, window).await);
    }
    Ok(())
}

fn push_rows(name: &str, n: usize, v: &Value, rows: &mut Vec<Row>) {
    let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let (cpu, window) = (f("cpu_s"), f("window_s"));
    let still = v["still_ready_same_generation"].as_u64().unwrap_or(0) as usize;
    let want = if name.starts_with("sse") {
        "2024-11-05"
    } else {
        "2025-11-25"
    };
    let negotiated = v["negotiated"].clone();
    let probes = f("probes");
    let rate = probes / window / n as f64;
    let mut cpu_per = Samples::default();
    let mut core = Samples::default();
    let mut rss = Samples::default();
    for s in [&mut cpu_per, &mut core, &mut rss] {
        if negotiated != json!([want]) {
            s.fail(format!("negotiated {negotiated}, wanted {want}"));
        }
        if still < n {
            s.fail(format!(
                "{} of {n} connections did not stay ready on one generation",
                n - still
            ));
        }
    }
    cpu_per.push(cpu * 1e3 / (window / 60.0) / n as f64);
    core.push(cpu / window * 100.0);
    rss.push((f("rss_after_kib") - f("rss_before_kib")) / n as f64);
    let note = format!("window {window:.1} s, {probes} probes = {rate:.2}/conn/s");
    let big = n == 1000;
    let mut core_row = Row::new(
        SECTION,
        format!("{name}: client CPU, % of one core"),
        "%",
        core,
    )
    .note(note);
    let mut rss_row = Row::new(
        SECTION,
        format!("{name}: resident memory per connection"),
        "KiB",
        rss,
    );
    if big {
        let met = core_row.samples.median() < 2.0;
        core_row = core_row.target("< 2 % of one core", met);
        let met = rss_row.samples.median() < 100.0;
        rss_row = rss_row.target("< 100 KiB", met);
    }
    rows.push(Row::new(
        SECTION,
        format!("{name}: CPU per connection per minute"),
        "ms",
        cpu_per,
    ));
    rows.push(core_row);
    rows.push(rss_row);
}

/// Application bytes (both directions, HTTP headers included, TCP/IP headers not) through a
/// counting proxy during an idle window, divided by the probes the mock logged in it.
async fn bytes_per_probe(kind: &'static str, window: Duration) -> Row {
    let name = format!("{kind} bytes on the wire per probe (1 connection)");
    let mut s = Samples::default();
    match measure_bytes(kind, window).await {
        Ok((bytes, probes)) if probes > 0 => {
            s.push(bytes as f64 / probes as f64);
            return Row::new(SECTION, name, "bytes", s).note(format!(
                "{bytes} B / {probes} probes, via a counting TCP proxy"
            ));
        }
        Ok(_) => s.fail("no probe in the window"),
        Err(e) => s.fail(e),
    }
    Row::new(SECTION, name, "bytes", s)
}

async fn measure_bytes(kind: &'static str, window: Duration) -> Res<(u64, usize)> {
    let mut mock = MockProcess::try_start(kind).await?;
    let counter = Arc::new(AtomicU64::new(0));
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let proxy_port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let proxy = tokio::spawn(proxy(listener, mock.port, counter.clone()));
    let via = MockProcess::attach(kind, proxy_port);
    let registry = ToolRegistry::new();
    let config = mock::remote(
        "bytes",
        &via,
        mock::backoff(Duration::from_millis(500), 0.2),
        heartbeat(),
    );
    let server = Supervisor::spawn(config, &registry).map_err(|e| e.to_string())?;
    server
        .wait_ready(LIMIT)
        .await
        .map_err(|s| format!("not ready: {s}"))?;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    mock.try_clear_requests().await?;
    counter.store(0, Ordering::SeqCst);
    tokio::time::sleep(window).await;
    let bytes = counter.load(Ordering::SeqCst);
    let probes = probes(kind, &mock.try_requests().await?);
    server.shutdown().await;
    proxy.abort();
    mock.try_kill().await?;
    Ok((bytes, probes))
}

async fn proxy(listener: TcpListener, upstream: u16, counter: Arc<AtomicU64>) {
    while let Ok((client, _)) = listener.accept().await {
        let counter = counter.clone();
        tokio::spawn(async move {
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
                return;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let (cr, cw) = client.into_split();
            let (sr, sw) = server.into_split();
            tokio::join!(pipe(cr, sw, counter.clone()), pipe(sr, cw, counter));
        });
    }
}

async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    counter: Arc<AtomicU64>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                counter.fetch_add(n as u64, Ordering::Relaxed);
                if to.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown().await;
}
