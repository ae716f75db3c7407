//! A fleet of `serve` replicas behind a real nginx (and HAProxy, for the kill and the drain), their
//! host sessions in a real Redis (feature `fleet-tests`: `redis-server`, `nginx` and `haproxy`
//! from Debian's packages (`scripts/fleet/deps.sh`) must be on the `PATH`; a
//! missing one fails the test). Every process is started by the test on free loopback ports, in
//! a temp dir with its own configuration, and killed at the end.

mod claim;
mod degraded;
mod drain;
mod front;
mod haproxy;
mod in_flight;
mod nginx;
mod redis;
mod replica;
mod script;
mod takeover;
mod tokens;

/// Resumes session `session`'s stream at `url` after `last_event_id` and checks that request
/// `request` is answered there as lost: a tool error that says the call may have run.
pub async fn resumed_as_may_have_run(url: &str, session: &str, last_event_id: &str, request: u64) {
    let resumed = crate::serve::raw::Raw::new(url)
        .resume(session, last_event_id)
        .await;
    assert_eq!(resumed.status(), reqwest::StatusCode::OK);
    let messages = crate::serve::raw::messages(resumed).await;
    let answer = messages
        .iter()
        .find(|m| m["id"] == request)
        .unwrap_or_else(|| panic!("the call is answered on the resumed stream: {messages:?}"));
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("may have run"), "{text}");
}
