//! What `tools` and `call` tell a person while they wait for a server, with real child processes
//! and real sockets on 127.0.0.1: a refused connection ends the first attempt at once unless
//! `--wait` asks to wait; a wait says one line per failed attempt (stderr is not a terminal
//! here) and no log line; each failure is said once; a mistyped tool names the closest one.

use std::{
    process::Stdio,
    time::{Duration, Instant},
};

use tokio::{
    io::{AsyncBufReadExt, AsyncReadExt, BufReader, Lines},
    net::TcpSocket,
    process::{ChildStderr, Command},
};

use crate::{
    cli::{run, with_mock},
    common::{LIMIT, mock_binary, process::MockProcess},
};

/// A port of 127.0.0.1 that refuses every connection while the socket is held: bound, never
/// listening, and without `SO_REUSEADDR`, so no other socket (another test's server) can bind it
/// meanwhile, and a connection to it is answered with a reset (`ECONNREFUSED`).
fn refusing_port() -> (TcpSocket, u16) {
    let socket = TcpSocket::new_v4().expect("a socket");
    socket
        .bind(([127, 0, 0, 1], 0).into())
        .expect("bound to 127.0.0.1");
    let port = socket.local_addr().expect("its address").port();
    (socket, port)
}

/// The next stderr line (at most [`LIMIT`]); `None` at its end.
async fn next_line(lines: &mut Lines<BufReader<ChildStderr>>) -> Option<String> {
    tokio::time::timeout(LIMIT, lines.next_line())
        .await
        .expect("a stderr line or its end in time")
        .expect("stderr is read")
}

#[tokio::test]
async fn a_refused_connection_ends_the_first_attempt_at_once_with_one_message_naming_the_address() {
    let (_refusing, port) = refusing_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let commands: [&[&str]; 2] = [&["tools"], &["call", "echo", "{}"]];
    for command in commands {
        let mut args = command.to_vec();
        args.extend(["--url", &url]);
        let started = Instant::now();
        let (code, stdout, stderr) = run(&args).await;
        let took = started.elapsed();
        assert_eq!(code, 3, "{command:?}: {stderr}");
        assert!(stdout.is_empty(), "{command:?}: {stdout}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{command:?}: one message: {stderr}");
        let at = format!("nothing accepts connections at 127.0.0.1:{port} (connection refused)");
        assert!(
            lines[0].contains(&at) && lines[0].contains("--wait"),
            "{command:?}: {stderr}"
        );
        // A deadline, not a speed: it took the whole connect timeout (30 s) before.
        assert!(took < Duration::from_secs(10), "{command:?} took {took:?}");
    }
}

#[tokio::test]
async fn with_wait_a_refused_server_is_waited_for_and_its_tools_listed_once_it_starts() {
    let (refusing, port) = refusing_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut child = Command::new(mock_binary())
        .args(["tools", "--url", &url, "--wait", "10s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the CLI starts");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr")).lines();
    // The server starts only once the first refusal has been said.
    let first = next_line(&mut stderr).await.expect("a first line");
    assert!(
        first.contains("attempt 1 failed (connection refused)"),
        "{first}"
    );
    drop(refusing);
    let (_server, _) =
        mcp_mock_server::spawn_process(mock_binary(), &["mock-server"], "http", port, LIMIT)
            .await
            .expect("the mock server starts on the refused port");
    let mut said = vec![first];
    while let Some(line) = next_line(&mut stderr).await {
        said.push(line);
    }
    let mut listed = String::new();
    stdout.read_to_string(&mut listed).await.expect("stdout");
    let status = tokio::time::timeout(LIMIT, child.wait())
        .await
        .expect("the CLI ended in time")
        .expect("wait");
    assert_eq!(status.code(), Some(0), "{said:#?}");
    assert!(listed.contains("mcp__server__echo"), "{listed}");
    // One line per failed attempt, then one that says the wait is over; no log line.
    let (last, failures) = said.split_last().expect("lines");
    assert_eq!(
        last,
        &format!("mcp-resilient: connected to {url}"),
        "{said:#?}"
    );
    let mut attempts = Vec::new();
    for line in failures {
        let number = line
            .strip_prefix(&format!("mcp-resilient: connecting to {url}: attempt "))
            .and_then(|rest| rest.split_once(" failed (connection refused); next in "))
            .and_then(|(number, _)| number.parse::<u32>().ok());
        attempts.push(number.unwrap_or_else(|| panic!("not a failed attempt: {line}")));
    }
    assert_eq!(attempts.first(), Some(&1), "{said:#?}");
    assert!(
        attempts.windows(2).all(|pair| pair[0] < pair[1]),
        "each attempt said once: {said:#?}"
    );
}

#[tokio::test]
async fn a_refusal_by_the_server_is_said_once_and_logs_still_show_it_when_asked_for() {
    let server = MockProcess::start("http").await;
    let wrong = format!("http://127.0.0.1:{}/no-such-path", server.port);
    let (code, _, stderr) = run(&["tools", "--url", &wrong]).await;
    assert_eq!(code, 3, "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one message, no log line: {stderr}");
    assert!(
        lines[0].starts_with(&format!(
            "mcp-resilient: could not connect to {wrong}: rejected: "
        )) && lines[0].contains("404"),
        "{stderr}"
    );
    let (code, _, logged) = run(&["tools", "--url", &wrong, "-v"]).await;
    assert_eq!(code, 3, "{logged}");
    assert!(
        logged.contains("ERROR") && logged.contains("refused by the server"),
        "-v shows the supervisor's log line: {logged}"
    );
}

#[tokio::test]
async fn an_unknown_tool_is_named_with_the_closest_one() {
    let (code, stdout, stderr) = run(&with_mock(&["call", "echoo", "{}"])).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(
        stderr.trim_end(),
        "mcp-resilient: no tool named 'echoo' (did you mean 'echo'?)"
    );
}
