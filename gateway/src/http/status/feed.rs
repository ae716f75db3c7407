//! `/status/events`: the snapshot as Server-Sent Events, at once, then after every upstream
//! change and at least every [`EVERY`] (so that ages move), never more often than [`MIN_GAP`];
//! at most [`MAX_WATCHERS`] streams at once (one more is answered 503).

use std::{sync::Arc, time::Duration};

use axum::{
    body::{Body, Bytes},
    extract::State,
    http::{HeaderValue, StatusCode, header},
    response::Response,
};
use tokio::{sync::OwnedSemaphorePermit, time::Instant};

use super::Board;
use crate::http::refusal::refuse;

/// The most event streams open at once.
pub(in crate::http) const MAX_WATCHERS: usize = 16;
/// The least time between two events of one stream.
pub(in crate::http) const MIN_GAP: Duration = Duration::from_millis(250);
/// The most time between two events of one stream.
pub(in crate::http) const EVERY: Duration = Duration::from_secs(1);

/// One watcher's state.
struct Watch {
    board: Arc<Board>,
    last: Option<Instant>,
    _permit: OwnedSemaphorePermit,
}

/// `/status/events`.
pub(super) async fn events(State(board): State<Arc<Board>>) -> Response {
    let Ok(permit) = board.watchers.clone().try_acquire_owned() else {
        let message = format!("{MAX_WATCHERS} status streams are open, the most there may be");
        return refuse(StatusCode::SERVICE_UNAVAILABLE, &message);
    };
    let watch = Watch {
        board,
        last: None,
        _permit: permit,
    };
    let stream = futures::stream::unfold(watch, |mut watch| async move {
        if let Some(last) = watch.last {
            let changed = watch.board.changed.notified();
            tokio::select! {
                _ = watch.board.stop.cancelled() => return None,
                _ = watch.board.gate.drain.over.cancelled() => return None,
                _ = changed => {}
                _ = tokio::time::sleep_until(last + EVERY) => {}
            }
            // A burst of changes is one event.
            tokio::time::sleep_until(last + MIN_GAP).await;
        }
        watch.last = Some(Instant::now());
        let event = format!("data: {}\n\n", watch.board.snapshot());
        Some((Ok::<_, std::convert::Infallible>(Bytes::from(event)), watch))
    });
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}
