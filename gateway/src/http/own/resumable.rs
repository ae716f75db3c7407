//! A request's response as a resumable SSE stream, and a host's `GET` with `Last-Event-ID`
//! (the logs and the ids are `replay.rs`'s). The request's work runs on a task that belongs to
//! its session: it goes on when the host's connection breaks, and ends (its work dropped, its
//! log ended) when the session does.
//!
//! What a `Last-Event-ID` gets, in the host's session only:
//!
//! - an event of a request stream this process wrote and still keeps: the events after it,
//!   then the rest as it comes (the request's answer last);
//! - a request's event it cannot serve (another process wrote it: a replica killed, or this
//!   gateway restarted; or its stream is no longer kept): that request's answer "may have run"
//!   (`gateway/src/http/lost/mod.rs`), as rmcp's front answers it;
//! - an event of the standalone stream: the standalone stream, from after that event when this
//!   process wrote it and still keeps it, else from now;
//! - anything else (garbled, or a request's id with no request named): an empty stream that
//!   ends at once, as rmcp's front answers it (an error would have the host ask again forever).

use std::{convert::Infallible, sync::Arc};

use axum::{body::Body, response::Response};
use bytes::Bytes;
use futures::{Stream, StreamExt};

use super::{
    answer::{event, sse},
    replay::{self, Log, STANDALONE},
    table::{Session, lock},
};
use crate::http::{
    lost::{self, Tag},
    opening::{OUT_LIMIT, Paced},
    sessions::RESUME_AFTER,
};

/// `work`'s events as the response of the host's request (its tag, if its id can be carried):
/// the work runs on its own task, through a new log of the session's, so that it goes on while
/// the host is away and can be asked for again. The priming event is the first.
///
/// `early`: the work starts only once the response's head and the priming event were handed
/// to the socket (or the host is gone, or [`OUT_LIMIT`] passed), so that a balancer that saw no
/// head from a process that died knows nothing ran there (`gateway/src/http/opening/mod.rs`,
/// invariant 1).
pub(super) fn respond(
    session: &Arc<Session>,
    tag: Option<String>,
    early: bool,
    work: impl Stream<Item = Bytes> + Send + 'static,
) -> Response {
    let suffix = tag.unwrap_or_else(|| lost::process().to_owned());
    let log = lock(&session.logs).open(suffix);
    log.prime(RESUME_AFTER);
    let writer = log.clone();
    let (out, written) = match early {
        true => {
            let (out, written) = tokio::sync::oneshot::channel::<()>();
            (Some(out), Some(written))
        }
        false => (None, None),
    };
    // The writer belongs to the session: it ends with it (the host's `DELETE`, its expiry, a
    // take-over elsewhere, the gateway's end), the request's work dropped; not with the host's
    // connection, which may come back with `Last-Event-ID`.
    let ended = session.ended.clone();
    tokio::spawn(async move {
        let run = async {
            if let Some(written) = written {
                // Sent or dropped: either way the head is out or nobody waits for it.
                if tokio::time::timeout(OUT_LIMIT, written).await.is_err() {
                    tracing::debug!("a response head was not out in time; its work runs anyway");
                }
            }
            let mut work = std::pin::pin!(work);
            while let Some(event) = work.next().await {
                writer.push(&event);
            }
        };
        tokio::select! {
            biased;
            () = ended.cancelled() => tracing::debug!("a request's stream ends with its session"),
            () = run => {}
        }
        writer.end();
    });
    match out {
        Some(out) => {
            let events = events(log, 0).map(Ok::<_, axum::Error>).boxed();
            sse(Body::from_stream(Paced::new(events, move || drop(out), ())))
        }
        None => sse(read(log, 0)),
    }
}

/// `log`'s events from `from` on, as a body.
fn read(log: Arc<Log>, from: u64) -> Body {
    Body::from_stream(events(log, from).map(Ok::<_, Infallible>))
}

/// `log`'s events from `from` on.
fn events(log: Arc<Log>, from: u64) -> impl Stream<Item = Bytes> + Send + 'static {
    futures::stream::unfold((log, from), |(log, mut from)| async move {
        let event = log.next(&mut from).await?;
        Some((event, (log, from)))
    })
}

/// What a `GET` with `Last-Event-ID` is answered.
pub(super) enum Resumed {
    /// This response.
    Answered(Response),
    /// The standalone stream, from this event on (`None`: from the first no stream took).
    Standalone(Option<u64>),
}

/// `last` asked for in `session` (module docs).
pub(super) fn resumed(session: &Session, last: &str) -> Resumed {
    let Some((local, suffix)) = last.rsplit_once('~') else {
        return Resumed::Answered(empty());
    };
    let (_, tag) = Tag::split(last);
    let here = tag.as_ref().map_or(suffix == lost::process(), Tag::here);
    let asked = replay::parse(local);
    if let Some(asked) = &asked
        && asked.stream == STANDALONE
    {
        return Resumed::Standalone(here.then_some(asked.from));
    }
    let log = (asked.filter(|_| here)).and_then(|asked| {
        let log = lock(&session.logs).get(asked.stream)?;
        Some((log, asked.from))
    });
    if let Some((log, from)) = log {
        tracing::debug!("a request's stream is asked for again; its events are replayed");
        return Resumed::Answered(sse(read(log, from)));
    }
    match tag {
        Some(tag) => {
            tracing::info!("a request's stream asked for again is not here: answered as lost");
            let lost = tag.answer();
            let answer = lost.message.as_deref().and_then(event).unwrap_or_default();
            Resumed::Answered(sse(Body::from(answer)))
        }
        None => Resumed::Answered(empty()),
    }
}

/// An SSE stream that ends at once.
fn empty() -> Response {
    sse(Body::empty())
}
