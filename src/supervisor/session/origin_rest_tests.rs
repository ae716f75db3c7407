use std::{sync::Arc, time::Duration};

use tokio::time::Instant;

use super::*;
use crate::supervisor::session::origin::join;

const S: Duration = Duration::from_secs(1);

fn url(s: &str) -> url::Url {
    url::Url::parse(s).unwrap()
}

/// A member resting with `not_before`, whose last message is now.
fn resting(not_before: Instant) -> Arc<Resting> {
    Arc::new(Resting::new(
        crate::transport::Activity::new(false),
        S,
        not_before,
    ))
}

#[tokio::test(start_paused = true)]
async fn a_member_lies_down_only_while_the_groups_answer_is_fresh() {
    let group = join(&url("http://127.0.0.1:9/lie"), S, S / 3, 20).unwrap();
    let member = resting(Instant::now());
    assert!(group.lay(&member).is_none(), "never answered: stale");
    group.proof.finished(true);
    let laid = group.lay(&member).expect("answered just now");
    assert_eq!(group.proof.state().resting.len(), 1);
    drop(laid);
    assert!(
        group.proof.state().resting.is_empty(),
        "off the list when its rest ends"
    );
    tokio::time::advance(S).await;
    assert!(group.lay(&member).is_none(), "an interval old: stale");
}

#[tokio::test(start_paused = true)]
async fn the_stale_groups_probe_goes_to_the_member_resting_longest_whose_rules_allow_one() {
    let url = url("http://127.0.0.1:9/duty");
    let group = join(&url, S, S / 3, 20).unwrap();
    let t0 = Instant::now();
    group.proof.finished(true);
    // First down, but in a backoff after "overloaded" until 3 s; then one free at 1 s; then one
    // whose last message (its activity's start) is too recent.
    let backoff = resting(t0 + 3 * S);
    let free = resting(t0 + S);
    let (_a, _b) = (group.lay(&backoff).unwrap(), group.lay(&free).unwrap());
    tokio::time::advance(S / 2).await;
    let chatty = resting(t0 + S);
    let _c = group.lay(&chatty).unwrap();
    assert_eq!(
        group.proof.tick(Instant::now()),
        Some(t0 + S),
        "fresh until 1 s"
    );
    tokio::time::advance(S / 2).await;
    let now = Instant::now();
    assert_eq!(
        group.proof.tick(now),
        Some(now + S / 3),
        "handed, looked at again"
    );
    assert_eq!(free.why(), Woke::Duty);
    assert_eq!(
        group.proof.state().resting.len(),
        2,
        "the one handed the probe is off"
    );
    // Nobody claimed it within a probe timeout: the next one whose rules allow it. The chatty
    // member's message clock allows a probe at 1.5 s, the backoff at 3 s.
    tokio::time::advance(S / 3).await;
    assert_eq!(group.proof.tick(Instant::now()), Some(t0 + S * 3 / 2));
    tokio::time::advance(S * 3 / 2 - S * 4 / 3).await;
    group.proof.tick(Instant::now());
    assert_eq!(chatty.why(), Woke::Duty);
    assert_eq!(backoff.why(), Woke::Stale, "not woken");
    assert_eq!(group.proof.state().resting.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn no_member_is_handed_the_probe_before_its_own_rules_allow_one() {
    let group = join(&url("http://127.0.0.1:9/backoff"), S, S / 3, 20).unwrap();
    let t0 = Instant::now();
    group.proof.finished(true);
    let alone = resting(t0 + 4 * S);
    let _laid = group.lay(&alone).unwrap();
    tokio::time::advance(S).await;
    assert_eq!(group.proof.tick(Instant::now()), Some(t0 + 4 * S));
    assert_eq!(group.proof.state().resting.len(), 1, "not handed the probe");
    tokio::time::advance(3 * S).await;
    group.proof.tick(Instant::now());
    assert_eq!(alone.why(), Woke::Duty);
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_group_probe_wakes_every_resting_member() {
    let group = join(&url("http://127.0.0.1:9/stale"), S, S / 3, 20).unwrap();
    group.proof.finished(true);
    let members: Vec<_> = (0..3).map(|_| resting(Instant::now() + S)).collect();
    let laid: Vec<_> = members.iter().map(|m| group.lay(m).unwrap()).collect();
    group.proof.finished(false);
    assert!(group.proof.state().resting.is_empty());
    for member in &members {
        assert_eq!(member.why(), Woke::Stale);
        let woken = tokio::time::timeout(Duration::ZERO, member.wake.notified()).await;
        assert!(woken.is_ok(), "the wake is kept for the member");
    }
    drop(laid);
}

#[tokio::test(start_paused = true)]
async fn the_timer_waits_for_a_member_to_lie_down_when_nobody_rests() {
    let group = join(&url("http://127.0.0.1:9/idle"), S, S / 3, 20).unwrap();
    assert_eq!(group.proof.tick(Instant::now()), None);
    assert!(group.proof.state().timer_waits);
    group.proof.finished(true);
    let _laid = group.lay(&resting(Instant::now() + S)).unwrap();
    assert!(!group.proof.state().timer_waits, "poked");
}

#[test]
fn a_resting_clock_turns_one_interval_apart_from_its_anchor() {
    let anchor = Instant::now();
    assert_eq!(next_turn(anchor + S, S, anchor), anchor + S);
    assert_eq!(next_turn(anchor, S, anchor), anchor);
    assert_eq!(next_turn(anchor, S, anchor + S / 4), anchor + S);
    assert_eq!(next_turn(anchor, S, anchor + 3 * S), anchor + 3 * S);
    assert_eq!(next_turn(anchor, S, anchor + S * 7 / 2), anchor + 4 * S);
}
