//! `proxy_main_with_args` as a real child process: this test binary re-runs itself with
//! `PROXY_CLI_ARGS` set, and the `child` entry hands those arguments to the CLI.

use std::process::Stdio;
use std::time::Duration;

use mcp_mock_server::proxy::proxy_main_with_args;
use mcp_mock_server::{MockOptions, MockServer};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::timeout;

const ARGS_VAR: &str = "PROXY_CLI_ARGS";
const DEADLINE: Duration = Duration::from_secs(10);
/// How long a black-holed connection must stay silent to pass (a bound, not a synchronization).
const SILENCE: Duration = Duration::from_millis(300);

async fn within<F: Future>(what: &str, future: F) -> F::Output {
    timeout(DEADLINE, future)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

/// Not a test of its own: the entry point of the child process.
#[test]
fn child() {
    let Ok(args) = std::env::var(ARGS_VAR) else {
        return;
    };
    let code = proxy_main_with_args(args.split(' ').map(str::to_owned));
    std::process::exit(if code == std::process::ExitCode::SUCCESS {
        0
    } else {
        1
    });
}

struct Proxy {
    child: Child,
    /// `None` once closed.
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    addr: String,
}

impl Proxy {
    async fn spawn(args: &str) -> Proxy {
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "proxy_cli::child",
                "--nocapture",
                "-q",
                "--test-threads=1",
            ])
            .env(ARGS_VAR, args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the proxy");
        let stdin = child.stdin.take().expect("stdin");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        // libtest may print its own lines first.
        let addr = loop {
            let line = within("LISTENING", lines.next_line()).await.expect("read");
            let line = line.expect("the proxy exited before listening");
            if let Some((_, addr)) = line.split_once("LISTENING ") {
                break addr.trim().to_owned();
            }
        };
        Proxy {
            child,
            stdin: Some(stdin),
            lines,
            addr,
        }
    }

    async fn line(&mut self) -> String {
        let line = within("a line", self.lines.next_line())
            .await
            .expect("read");
        line.expect("the proxy closed stdout")
    }

    async fn command(&mut self, command: &str) -> String {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        let line = format!("{command}\n");
        let sent = stdin.write_all(line.as_bytes());
        within("command", sent).await.expect("write a command");
        self.line().await
    }

    async fn exited(&mut self) -> bool {
        within("exit", self.child.wait())
            .await
            .expect("wait")
            .success()
    }
}

async fn echo_server() -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (mut read, mut write) = stream.split();
                let _ = tokio::io::copy(&mut read, &mut write).await;
            });
        }
    });
    (addr, task)
}

#[tokio::test]
async fn tcp_form_obeys_stdin_commands_and_exits_on_sigterm() {
    let (upstream, echo) = echo_server().await;
    let mut proxy = Proxy::spawn(&format!("tcp --upstream {upstream}")).await;
    let mut stream = within("connect", TcpStream::connect(&proxy.addr))
        .await
        .expect("connect");
    let mut back = [0u8; 4];
    within("write", stream.write_all(b"ping"))
        .await
        .expect("write");
    within("echo", stream.read_exact(&mut back))
        .await
        .expect("echo");
    assert_eq!(&back, b"ping");

    assert_eq!(proxy.command("blackhole").await, "OK blackhole");
    within("write", stream.write_all(b"lost"))
        .await
        .expect("write");
    assert!(
        timeout(SILENCE, stream.read(&mut back)).await.is_err(),
        "the hole answered"
    );
    let stats: Value = serde_json::from_str(&proxy.command("stats").await).expect("stats json");
    assert_eq!(
        stats,
        json!({"mode": "blackhole", "open": 1, "accepted": 1})
    );
    assert!(proxy.command("bogus").await.starts_with("ERR "));

    let pid = Pid::from_raw(proxy.child.id().expect("pid") as i32);
    kill(pid, Signal::SIGTERM).expect("SIGTERM");
    assert!(proxy.exited().await, "the proxy failed on SIGTERM");
    echo.abort();
}

#[tokio::test]
async fn http_form_injects_and_reports_totals_at_stdin_eof() {
    let mock = within("mock", MockServer::start(MockOptions::default()))
        .await
        .expect("mock");
    let args = format!(
        "http --upstream http://{} --fail-status 503 --fail-every 1 --fail-methods tools/call",
        mock.addr()
    );
    let mut proxy = Proxy::spawn(&args).await;
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let url = format!("http://{}/mcp", proxy.addr);
    let post = |method: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method}).to_string();
        client
            .post(&url)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let call = within("tools/call", post("tools/call"))
        .await
        .expect("post");
    assert_eq!(call.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    let ping = within("ping", post("ping")).await.expect("post");
    assert_ne!(ping.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);

    proxy.stdin = None;
    let totals: Value = serde_json::from_str(&proxy.line().await).expect("totals json");
    assert_eq!(totals, json!({"injected": 1, "forwarded": 1}));
    assert!(proxy.exited().await, "the proxy failed at stdin EOF");
    within("mock shutdown", mock.shutdown()).await;
}

#[tokio::test]
async fn bad_arguments_exit_with_usage() {
    let child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", "proxy_cli::child", "--nocapture", "-q"])
        .env(ARGS_VAR, "tcp --upstream nowhere")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let output = within("exit", child.wait_with_output())
        .await
        .expect("wait");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--upstream: expected 127.0.0.1:PORT"),
        "{stderr}"
    );
    assert!(stderr.contains("usage: proxy tcp"), "{stderr}");
}
