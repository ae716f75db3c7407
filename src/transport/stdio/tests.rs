use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

use super::*;

fn state_of(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

#[tokio::test]
async fn the_group_is_swept_while_the_leader_is_still_unreaped() {
    // The leader starts a grandchild in its own group, prints its pid and exits.
    let mut config = StdioConfig::new("sh");
    config.args = vec!["-c".into(), "sleep 60 & echo $!; exit 0".into()];
    let (stdout, stdin, mut guard) = spawn(&config, "sweep", Generation::FIRST)
        .await
        .expect("spawn");
    let leader = guard.pid().expect("a pid");
    let mut lines = BufReader::new(stdout).lines();
    let grandchild: u32 = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("the leader talks in time")
        .expect("read")
        .expect("a line")
        .trim()
        .parse()
        .expect("a pid");
    drop(stdin);
    let exit = guard.exit_detail(Duration::from_secs(10)).await;
    assert_eq!(exit.as_deref(), Some("exit status: 0"));
    // Observing the exit did not reap the leader: its pid (the group id) is still taken, so the
    // sweep below cannot hit anyone else's group.
    assert_eq!(
        state_of(leader),
        Some('Z'),
        "the leader is a zombie, not reaped"
    );
    assert!(
        state_of(grandchild).is_some_and(|s| s != 'Z'),
        "the grandchild runs"
    );
    tokio::time::timeout(
        Duration::from_secs(10),
        guard.dispose(Stop::Dead, Duration::from_secs(10)),
    )
    .await
    .expect("disposed in time");
    assert_eq!(state_of(leader), None, "the leader is reaped");
    // The grandchild was SIGKILLed; it is reaped by init, so wait (bounded) for it to vanish.
    let gone = async {
        while state_of(grandchild).is_some_and(|s| s != 'Z') {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), gone)
        .await
        .expect("the grandchild was killed by the sweep");
}

#[tokio::test]
async fn a_child_judged_dead_is_signalled_without_waiting_for_its_stdin_grace() {
    // A child that ignores stdin EOF; the graceful grace is long, the dead one is short.
    let mut config = StdioConfig::new("sh");
    config.args = vec!["-c".into(), "exec sleep 60".into()];
    config.stdin_close_grace = Duration::from_secs(30);
    config.term_grace = Duration::from_secs(30);
    let (_stdout, stdin, guard) = spawn(&config, "dead", Generation::FIRST)
        .await
        .expect("spawn");
    let pid = guard.pid().expect("a pid");
    drop(stdin);
    // Far less than either grace: the escalation starts after the short dead grace and SIGTERM
    // ends `sleep`.
    tokio::time::timeout(
        Duration::from_secs(10),
        guard.dispose(Stop::Dead, Duration::from_secs(10)),
    )
    .await
    .expect("a dead generation is stopped without its stdin grace");
    assert_eq!(state_of(pid), None);
}
