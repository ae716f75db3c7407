//! Without feature `otel`: the same calls, doing nothing. Every type is zero-sized and every
//! function an empty `#[inline(always)]` one, so an instrumentation site compiles to nothing.

#![allow(clippy::unused_self, clippy::needless_pass_by_value)]

use std::{future::Future, sync::Arc, time::Duration};

use rmcp::model::{ClientRequest, RequestId, RequestMetaObject};

use super::Outcome;
use crate::{
    CallError,
    config::{ProtocolChoice, ServerConfig},
    state::{Cause, ConnectionState, Death, Generation, Reason, ToolsChanged},
    transport::detect::Protocol,
    verdict::Verdict,
};

#[derive(Debug, Clone)]
pub(crate) struct Labels;

impl Labels {
    #[inline(always)]
    pub(crate) fn new(_: &str, _: Generation, _: &'static str, _: &str) -> Self {
        Labels
    }
}

#[inline(always)]
pub(crate) fn transport(_: &ServerConfig, _: Option<Protocol>) -> &'static str {
    ""
}

#[derive(Debug)]
pub(crate) struct Op;

impl Op {
    #[inline(always)]
    pub(crate) fn request(_: &Labels, _: &ClientRequest) -> Op {
        Op
    }
    #[inline(always)]
    pub(crate) fn internal(_: &Labels, _: &'static str) -> Op {
        Op
    }
    #[inline(always)]
    pub(crate) fn inject(&self, _: &mut ClientRequest) {}
    #[inline(always)]
    pub(crate) fn within<F: Future>(&self, work: F) -> F {
        work
    }
    #[inline(always)]
    pub(crate) fn verdict(&self, _: &Verdict) {}
    #[inline(always)]
    pub(crate) fn end(self, _: Outcome<'_>) {}
    #[inline(always)]
    pub(crate) fn end_probe(self, _: &Verdict) {}
}

#[inline(always)]
pub(crate) fn request_id(_: &RequestId) {}
#[inline(always)]
pub(crate) fn error_kind(_: &CallError) -> &'static str {
    ""
}
#[inline(always)]
pub(crate) fn state(_: &str, _: &ConnectionState, _: &ConnectionState) {}
#[inline(always)]
pub(crate) fn ready(_: &Labels, _: Option<Duration>) {}
#[inline(always)]
pub(crate) fn lost(_: &Labels, _: &Death) {}
#[inline(always)]
pub(crate) fn closed(_: &Labels) {}
#[inline(always)]
pub(crate) fn handshake(_: &Labels, _: tokio::time::Instant, _: ProtocolChoice, _: Option<Cause>) {}
#[inline(always)]
pub(crate) fn attempt_failed(_: &str, _: &Death) {}
#[inline(always)]
pub(crate) fn retry(_: &str, _: Reason, _: &Death, _: Duration) {}
#[inline(always)]
pub(crate) fn call_failed(_: &str, _: &CallError) {}
#[inline(always)]
pub(crate) fn tools(_: &ToolsChanged) {}
#[inline(always)]
pub(crate) fn auth_renewal(_: &str, _: Option<bool>) {}
#[inline(always)]
pub(crate) fn auth_refused(_: &str) {}
#[cfg_attr(not(feature = "proxy"), allow(dead_code))]
#[inline(always)]
pub(crate) fn notification_dropped(_: &'static str) {}
#[inline(always)]
pub(crate) fn stray(_: &str) {}
#[cfg_attr(not(feature = "proxy"), allow(dead_code))]
#[inline(always)]
pub(crate) fn served_error(
    _: &Result<rmcp::model::CallToolResult, CallError>,
) -> Option<&'static str> {
    None
}

#[derive(Debug)]
pub(crate) struct Held;

impl Held {
    #[inline(always)]
    pub(crate) fn start(_: &Arc<str>) -> Held {
        Held
    }
    #[inline(always)]
    pub(crate) fn ready(&mut self) {}
}

#[cfg_attr(not(feature = "proxy"), allow(dead_code))]
#[derive(Debug)]
pub(crate) struct Served;

#[cfg_attr(not(feature = "proxy"), allow(dead_code))]
impl Served {
    #[inline(always)]
    pub(crate) fn start(
        _: &'static str,
        _: &[Option<&RequestMetaObject>],
        _: Option<&str>,
    ) -> Served {
        Served
    }
    #[inline(always)]
    pub(crate) fn within<F: Future>(&self, work: F) -> F {
        work
    }
    #[inline(always)]
    pub(crate) fn end(self, _: Option<&'static str>) {}
}
