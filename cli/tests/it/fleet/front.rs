//! The balancer in front of a test's replicas: nginx or HAProxy, with the shipped
//! configurations, so that a fleet test runs behind either.

use std::path::Path;

use super::{haproxy::HaProxy, nginx::Nginx};

/// Which balancer.
#[derive(Debug, Clone, Copy)]
pub enum Balancer {
    Nginx,
    HaProxy,
}

/// A running balancer.
pub enum Front {
    Nginx(Nginx),
    HaProxy(HaProxy),
}

impl Front {
    /// Starts `balancer` in `dir` in front of the replicas on `ports`.
    pub async fn start(balancer: Balancer, dir: &Path, ports: &[u16]) -> Front {
        match balancer {
            Balancer::Nginx => Front::Nginx(Nginx::start(dir, ports).await),
            Balancer::HaProxy => Front::HaProxy(HaProxy::start(dir, ports).await),
        }
    }

    /// `http://127.0.0.1:PORT/mcp`
    pub fn url(&self) -> String {
        let port = match self {
            Front::Nginx(nginx) => nginx.port,
            Front::HaProxy(haproxy) => haproxy.port,
        };
        format!("http://127.0.0.1:{port}/mcp")
    }

    /// Ends it.
    pub async fn stop(self) {
        match self {
            Front::Nginx(nginx) => nginx.stop().await,
            Front::HaProxy(haproxy) => haproxy.stop().await,
        }
    }
}
