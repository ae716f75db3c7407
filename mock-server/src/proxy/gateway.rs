//! What the HTTP proxy does with one request: answer it from the fault plan, or forward it
//! (and cut its response stream, when a [`StreamCut`] is armed for it).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::body::{Body, Bytes, to_bytes};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use super::cut::StreamCut;
use super::fault::{FaultPlan, GatewayFault, methods_match};
use super::forward::{self, Upstream, UpstreamClient};

/// Largest POST body read to find its JSON-RPC method.
const BODY_LIMIT: usize = 16 * 1024 * 1024;
/// The body of every answer the proxy makes up.
const INJECTED_BODY: &str = "injected by fault proxy";

/// The state every connection of one HTTP proxy shares.
pub(super) struct Gateway {
    upstream: Upstream,
    client: UpstreamClient,
    /// Replaced by `set_fault`; locked only to decide one POST, never across an `.await`.
    plan: Mutex<Option<FaultPlan>>,
    /// Requests answered from the plan; changed only by `handle`.
    pub(super) injected: AtomicU64,
    /// Requests sent upstream, whatever came back; changed only by `handle`.
    pub(super) forwarded: AtomicU64,
    /// The one response cut armed, if any; set by `arm_cut`, taken by `handle`, never locked
    /// across an `.await`.
    cut: Mutex<Option<StreamCut>>,
    /// Response streams cut so far; changed only by the cut bodies.
    pub(super) cuts: Arc<AtomicU64>,
}

impl Gateway {
    pub(super) fn new(
        upstream: Upstream,
        client: UpstreamClient,
        fault: Option<GatewayFault>,
    ) -> Gateway {
        Gateway {
            upstream,
            client,
            plan: Mutex::new(fault.map(FaultPlan::new)),
            injected: AtomicU64::new(0),
            forwarded: AtomicU64::new(0),
            cut: Mutex::new(None),
            cuts: Arc::default(),
        }
    }

    /// Arms `cut` for the next matching POST (replacing one still armed).
    pub(super) fn arm_cut(&self, cut: StreamCut) {
        *self.cut.lock().unwrap_or_else(PoisonError::into_inner) = Some(cut);
    }

    /// Whether a cut is armed, and whether it needs a POST's body to match it.
    fn cut_needs_body(&self) -> Option<bool> {
        let cut = self.cut.lock().unwrap_or_else(PoisonError::into_inner);
        cut.as_ref().map(|cut| !cut.methods.is_empty())
    }

    /// Takes one of the armed cuts if the POST whose body is `body` matches them.
    fn take_cut(&self, body: &[u8]) -> Option<StreamCut> {
        let mut cut = self.cut.lock().unwrap_or_else(PoisonError::into_inner);
        let armed = cut.as_mut()?;
        if !methods_match(&armed.methods, body) {
            return None;
        }
        armed.times = armed.times.saturating_sub(1);
        match armed.times {
            0 => cut.take(),
            _ => Some(armed.clone()),
        }
    }

    /// Replaces the fault; the pattern starts over.
    pub(super) fn set_fault(&self, fault: Option<GatewayFault>) {
        *self.plan() = fault.map(FaultPlan::new);
    }

    fn plan(&self) -> MutexGuard<'_, Option<FaultPlan>> {
        self.plan.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Answers `request` itself if the plan says so, else forwards it and streams the answer.
    pub(super) async fn handle(&self, request: Request<Body>) -> Response<Body> {
        if request.method() != Method::POST {
            return self.forward(request).await;
        }
        // The guard must be gone before any `.await`.
        let plan_needs_body = self.plan().as_ref().map(|plan| plan.fault.needs_body());
        let cut_needs_body = self.cut_needs_body();
        if plan_needs_body.is_none() && cut_needs_body.is_none() {
            return self.forward(request).await;
        }
        let needs_body = plan_needs_body.unwrap_or(false) || cut_needs_body.unwrap_or(false);
        let (parts, body) = request.into_parts();
        // `seen` is what the plan matches methods against; empty when it does not need to.
        let (body, seen) = match needs_body {
            false => (body, Bytes::new()),
            true => match to_bytes(body, BODY_LIMIT).await {
                Ok(bytes) => (Body::from(bytes.clone()), bytes),
                Err(error) => {
                    let why = format!("unreadable request body: {error}");
                    return text(StatusCode::BAD_REQUEST, &why);
                }
            },
        };
        if let Some(answer) = self.decide(&seen) {
            self.injected.fetch_add(1, Ordering::SeqCst);
            return answer;
        }
        let cut = self.take_cut(&seen);
        let response = self.forward(Request::from_parts(parts, body)).await;
        match cut {
            Some(cut) => cut.apply(response, self.cuts.clone()),
            None => response,
        }
    }

    /// Consults the plan current now (it may have changed while the body was read).
    fn decide(&self, body: &[u8]) -> Option<Response<Body>> {
        let mut plan = self.plan();
        let plan = plan.as_mut()?;
        if !plan.fault.matches(body) || !plan.answer_next() {
            return None;
        }
        let fault = &plan.fault;
        let status =
            StatusCode::from_u16(fault.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = text(status, INJECTED_BODY);
        if let Some(value) = fault
            .retry_after
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        Some(response)
    }

    async fn forward(&self, request: Request<Body>) -> Response<Body> {
        let request = match forward::to_upstream(request, &self.upstream) {
            Ok(request) => request,
            Err(error) => {
                return text(StatusCode::BAD_REQUEST, &format!("cannot forward: {error}"));
            }
        };
        self.forwarded.fetch_add(1, Ordering::SeqCst);
        match self.client.request(request).await {
            Ok(response) => forward::from_upstream(response),
            Err(error) => {
                tracing::debug!(%error, "upstream request failed");
                text(
                    StatusCode::BAD_GATEWAY,
                    &format!("upstream failed: {error}"),
                )
            }
        }
    }
}

fn text(status: StatusCode, body: &str) -> Response<Body> {
    let mut response = Response::new(Body::from(body.to_owned()));
    *response.status_mut() = status;
    let plain = HeaderValue::from_static("text/plain; charset=utf-8");
    response.headers_mut().insert(header::CONTENT_TYPE, plain);
    response
}
