use std::time::Duration;

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    time::Instant,
};

use super::{POOL_IDLE, default_http_client};

/// Past this idle time the server below resets a connection at its next request: it stands for
/// a server whose keep-alive ends then, caught at the moment it closes (the race, made certain).
const SERVER_KEEP_ALIVE: Duration = Duration::from_millis(4_500);

/// Answers `GET`s on one connection with `ok`; a request that comes after the connection sat
/// idle past [`SERVER_KEEP_ALIVE`] is read and then reset.
async fn serve(mut socket: TcpStream) {
    let mut idle_since = Instant::now();
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let Ok(n) = socket.read(&mut buf).await else {
            return;
        };
        if n == 0 {
            return;
        }
        seen.extend_from_slice(&buf[..n]);
        while let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            seen.drain(..end + 4);
            if idle_since.elapsed() > SERVER_KEEP_ALIVE {
                // A linger of zero makes the close a reset, which is the point; it cannot block.
                #[allow(deprecated)]
                let _ = socket.set_linger(Some(Duration::ZERO));
                return;
            }
            let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
            if socket.write_all(answer).await.is_err() {
                return;
            }
            idle_since = Instant::now();
        }
    }
}

#[tokio::test]
async fn a_connection_idle_longer_than_a_servers_keep_alive_is_not_used_again() {
    assert!(POOL_IDLE < SERVER_KEEP_ALIVE);
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/", listener.local_addr().expect("address"));
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(serve(socket));
        }
    });
    let client = default_http_client().expect("the default client");
    let limit = Duration::from_secs(20);
    let get = || async {
        let answer = tokio::time::timeout(limit, client.get(&url).send())
            .await
            .expect("answered in time")?;
        answer.text().await
    };
    assert_eq!(get().await.expect("the first request"), "ok");
    // The idle time is what is tested here: the connection must sit past both limits.
    tokio::time::sleep(SERVER_KEEP_ALIVE + Duration::from_millis(300)).await;
    assert_eq!(
        get()
            .await
            .expect("the second request, on a connection opened for it"),
        "ok"
    );
}
