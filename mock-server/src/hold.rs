//! [`PortHold`]: a port on 127.0.0.1 kept for a mock server that is killed and started again
//! on it.

use std::{
    io,
    net::{Ipv4Addr, SocketAddr},
};

use tokio::net::TcpSocket;

/// A port on 127.0.0.1 held by a socket that is bound with `SO_REUSEADDR` and never listens.
///
/// While it lives (Linux):
///
/// 1. a connection to the port is refused at once whenever no server listens on it: "the server
///    is down" is deterministic, with nothing timed;
/// 2. the kernel hands the port to no other socket (a bind to port 0 passes over it): between a
///    kill and a restart no other test can take it;
/// 3. a server bound to it by number ([`MockOptions::port`](crate::MockOptions), or
///    `--port` for [`spawn_process`](crate::spawn_process)) still binds and listens, since
///    both sockets allow reuse and this one never listens.
///
/// So take the hold first, start the server on [`port`](Self::port), and keep the hold for as
/// long as anything may use the port.
#[derive(Debug)]
pub struct PortHold {
    /// Never read: keeping it open is the hold.
    _socket: TcpSocket,
    port: u16,
}

impl PortHold {
    /// Holds a port that the kernel picks.
    ///
    /// # Errors
    /// The socket cannot be made or bound.
    pub fn new() -> io::Result<PortHold> {
        let socket = TcpSocket::new_v4()?;
        socket.set_reuseaddr(true)?;
        socket.bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))?;
        let port = socket.local_addr()?.port();
        Ok(PortHold {
            _socket: socket,
            port,
        })
    }

    /// The held port.
    pub fn port(&self) -> u16 {
        self.port
    }
}
