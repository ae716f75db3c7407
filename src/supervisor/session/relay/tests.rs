use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicU32, Ordering},
    },
    time::Duration,
};

use rmcp::model::{NumberOrString, ProgressNotificationParam, ProgressToken};

use super::{
    Relay,
    progress::{HELD_LIMIT, SETTLE_LIMIT},
};
use crate::{call::ProgressFn, state::Generation};

fn progress(token: &str, value: f64) -> ProgressNotificationParam {
    ProgressNotificationParam::new(ProgressToken(NumberOrString::String(token.into())), value)
}

fn token(token: &str) -> ProgressToken {
    progress(token, 0.0).progress_token
}

/// A callback that records the progress values it is given, in order.
fn recorder() -> (ProgressFn, Arc<Mutex<Vec<f64>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let into = seen.clone();
    let callback: ProgressFn = Arc::new(move |progress: ProgressNotificationParam| {
        into.lock().unwrap().push(progress.progress);
    });
    (callback, seen)
}

#[tokio::test(start_paused = true)]
async fn progress_reaches_its_own_call_only_while_the_route_lives() {
    let relay = Arc::new(Relay::default());
    let seen = Arc::new(AtomicU32::new(0));
    let counter = seen.clone();
    let route = relay.sending(Generation::of(2)).route(
        token("1"),
        Arc::new(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        }),
    );
    let on = |generation: u64, token: &str, value: f64| {
        relay.progress(Generation::of(generation), progress(token, value))
    };
    assert!(on(2, "1", 0.5).await.is_none());
    // The same token on another generation is another request.
    assert!(on(1, "1", 0.5).await.is_some());
    assert!(on(2, "2", 0.5).await.is_some());
    drop(route);
    assert!(on(2, "1", 1.0).await.is_some());
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn a_route_is_settled_only_when_what_arrived_was_delivered() {
    let relay = Arc::new(Relay::default());
    let generation = Generation::of(1);
    let route = relay
        .sending(generation)
        .route(token("7"), Arc::new(|_| {}));
    assert!(route.settled(Duration::ZERO).await, "nothing arrived yet");

    relay.arrived(generation, &token("7"));
    relay.arrived(generation, &token("7"));
    // Another generation's token of the same number, and a token without a route, are
    // not this route's.
    relay.arrived(Generation::of(2), &token("7"));
    relay.arrived(generation, &token("8"));
    assert!(
        !route.settled(Duration::from_millis(50)).await,
        "two arrived, none delivered: the wait ends at its limit"
    );

    // A delivery while the call waits wakes it; it settles once both are delivered.
    let route = Arc::new(route);
    let waiting = tokio::spawn({
        let route = route.clone();
        async move { route.settled(Duration::from_secs(5)).await }
    });
    tokio::task::yield_now().await;
    assert!(
        relay
            .progress(generation, progress("7", 0.5))
            .await
            .is_none()
    );
    tokio::task::yield_now().await;
    assert!(
        !waiting.is_finished(),
        "one of two delivered: still waiting"
    );
    assert!(
        relay
            .progress(generation, progress("7", 1.0))
            .await
            .is_none()
    );
    assert!(
        waiting.await.expect("the waiter ends"),
        "settled by deliveries"
    );
    assert!(route.settled(Duration::ZERO).await);

    drop(route);
    relay.arrived(generation, &token("7"));
    assert!(
        relay
            .progress(generation, progress("7", 1.0))
            .await
            .is_some()
    );
    let table = relay.lock();
    assert_eq!(
        (table.routes(), table.held()),
        (0, 0),
        "arrival without a route keeps nothing"
    );
}

/// The race rmcp's send leaves open: the server's progress comes back before the call has
/// learnt its token and registered its route.
#[tokio::test(start_paused = true)]
async fn progress_before_its_route_is_held_and_delivered_in_order() {
    let relay = Arc::new(Relay::default());
    let generation = Generation::of(3);
    let sending = relay.sending(generation);
    let mut handlers = Vec::new();
    for value in [0.25, 0.5, 0.75] {
        relay.arrived(generation, &token("4"));
        let relay = relay.clone();
        handlers.push(tokio::spawn(async move {
            relay.progress(generation, progress("4", value)).await
        }));
        // rmcp's tasks run in their own order; these are spawned, and run, one by one.
        tokio::task::yield_now().await;
    }
    assert_eq!(relay.lock().held(), 3, "held while the call is being sent");

    let (callback, seen) = recorder();
    let route = sending.route(token("4"), callback);
    for handler in handlers {
        assert!(
            handler.await.unwrap().is_none(),
            "taken by the route, not given to the host"
        );
    }
    assert_eq!(*seen.lock().unwrap(), [0.25, 0.5, 0.75]);
    assert!(
        route.settled(Duration::ZERO).await,
        "the early arrivals count as the route's, and were delivered"
    );

    // One more arrives after its handler has not run yet: the answer waits for it.
    relay.arrived(generation, &token("4"));
    assert!(!route.settled(Duration::from_millis(10)).await);
    assert!(
        relay
            .progress(generation, progress("4", 1.0))
            .await
            .is_none()
    );
    assert!(route.settled(Duration::ZERO).await);
    assert_eq!(seen.lock().unwrap().len(), 4);
}

#[tokio::test(start_paused = true)]
async fn held_progress_no_route_takes_goes_to_the_host_and_holding_is_bounded() {
    let relay = Arc::new(Relay::default());
    let generation = Generation::of(1);

    // Another call's progress (one without a callback), held while this one is being sent,
    // is given back when the send ends without claiming it...
    let sending = relay.sending(generation);
    let other = tokio::spawn({
        let relay = relay.clone();
        async move { relay.progress(generation, progress("9", 0.5)).await }
    });
    tokio::task::yield_now().await;
    assert!(!other.is_finished(), "held while a call is being sent");
    let route = sending.route(token("10"), Arc::new(|_| {}));
    let given_back = other.await.unwrap().expect("given back to the host");
    assert_eq!(given_back.progress_token, token("9"));
    drop(route);

    // ...and at the latest after SETTLE_LIMIT, when the send stalls.
    let stalled = relay.sending(generation);
    let started = tokio::time::Instant::now();
    assert!(
        relay
            .progress(generation, progress("9", 0.75))
            .await
            .is_some(),
        "given back"
    );
    assert_eq!(started.elapsed(), SETTLE_LIMIT);

    // A server flooding progress while a call is sent gets HELD_LIMIT held, not more: the
    // rest goes to the host at once.
    let mut held = Vec::new();
    for n in 0..HELD_LIMIT + 10 {
        relay.arrived(generation, &token(&format!("flood-{n}")));
        let relay = relay.clone();
        held.push(tokio::spawn(async move {
            relay
                .progress(generation, progress(&format!("flood-{n}"), 0.0))
                .await
        }));
    }
    // Every handler has run once when HELD_LIMIT are held and the rest have finished.
    let mut turns = 0;
    while relay.lock().held() < HELD_LIMIT || held.iter().filter(|h| h.is_finished()).count() < 10 {
        turns += 1;
        assert!(turns < 1_000, "the handlers ran");
        tokio::task::yield_now().await;
    }
    let counted = {
        let table = relay.lock();
        assert_eq!(table.held(), HELD_LIMIT);
        table.early_counted()
    };
    assert_eq!(
        counted, HELD_LIMIT,
        "early arrivals counted are bounded too"
    );
    drop(stalled);
    for handler in held {
        assert!(handler.await.unwrap().is_some());
    }
    let table = relay.lock();
    assert_eq!(
        (table.routes(), table.held(), table.early_counted()),
        (0, 0, 0),
        "nothing kept once no call is being sent"
    );
}
