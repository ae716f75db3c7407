use super::*;

fn url(s: &str) -> url::Url {
    url::Url::parse(s).unwrap()
}

const S: Duration = Duration::from_secs(1);

#[test]
fn sessions_to_one_endpoint_with_one_heartbeat_share_a_group() {
    let a = join(&url("http://127.0.0.1:9/mcp"), S, S / 3, 20).unwrap();
    let b = join(&url("http://127.0.0.1:9/mcp?x=1"), S, S / 3, 20).unwrap();
    assert!(Arc::ptr_eq(&a.proof, &b.proof));
    let other_path = join(&url("http://127.0.0.1:9/other"), S, S / 3, 20).unwrap();
    let other_interval = join(&url("http://127.0.0.1:9/mcp"), 2 * S, S / 3, 20).unwrap();
    assert!(!Arc::ptr_eq(&a.proof, &other_path.proof));
    assert!(!Arc::ptr_eq(&a.proof, &other_interval.proof));
    assert!(join(&url("file:///tmp/x"), S, S / 3, 20).is_none());
}

#[tokio::test(start_paused = true)]
async fn an_answer_proves_the_group_alive_for_one_interval() {
    let group = join(&url("http://127.0.0.1:9/paused"), S, S / 3, 20).unwrap();
    assert_eq!(group.turn(S).await, Turn::Probe { for_group: true });
    group.proof.finished(true);
    tokio::time::advance(S / 2).await;
    assert_eq!(group.turn(S).await, Turn::Proven);
    tokio::time::advance(S / 2).await;
    assert!(!group.proof.answered_within(S), "an interval old: stale");
}

#[tokio::test(start_paused = true)]
async fn a_turn_during_the_groups_probe_waits_for_its_outcome() {
    let url = url("http://127.0.0.1:9/waits");
    let prober = join(&url, S, S / 3, 20).unwrap();
    let member = join(&url, S, S / 3, 20).unwrap();
    assert_eq!(prober.turn(S).await, Turn::Probe { for_group: true });
    let waiting = tokio::spawn(async move { member.turn(S).await });
    tokio::task::yield_now().await;
    assert!(!waiting.is_finished(), "waits for the probe under way");
    prober.proof.finished(true);
    assert_eq!(waiting.await.unwrap(), Turn::Proven);
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_group_probe_leaves_each_member_to_probe_for_itself() {
    let url = url("http://127.0.0.1:9/unanswered");
    let prober = join(&url, S, S / 3, 20).unwrap();
    let member = join(&url, S, S / 3, 20).unwrap();
    assert_eq!(prober.turn(S).await, Turn::Probe { for_group: true });
    let waiting = tokio::spawn(async move { member.turn(S).await });
    tokio::task::yield_now().await;
    prober.proof.finished(false);
    assert_eq!(waiting.await.unwrap(), Turn::Probe { for_group: false });
    // A claim whose probe never told how it ended goes stale after one probe timeout.
    let other = join(&url, S, S / 3, 20).unwrap();
    assert_eq!(other.turn(S).await, Turn::Probe { for_group: true });
    let late = join(&url, S, S / 3, 20).unwrap();
    assert_eq!(late.turn(S).await, Turn::Probe { for_group: false });
}
