use super::*;

fn names(list: &[&str]) -> Vec<Arc<str>> {
    list.iter().map(|n| Arc::from(*n)).collect()
}

#[test]
fn a_caller_sees_the_tools_its_names_grant_and_the_default_otherwise() {
    let access = Access::from_json(
        r#"{"identities": {
            "alice": {"tools": ["*"]},
            "bot": {"tools": ["files/read_*", "query"], "requestsPerSecond": 2},
            "mcp:write": {"tools": ["files/write"], "requestsPerSecond": 5, "burst": 9}
        }, "default": {"tools": ["files/stat"], "requestsPerSecond": 1}}"#,
    )
    .expect("a policy");
    let alice = access.grant(&names(&["alice"]));
    assert!(alice.sees("files", "rm") && alice.sees("search", "query"));
    assert_eq!(alice.rate, None);
    let bot = access.grant(&names(&["bot"]));
    assert!(bot.sees("files", "read_text") && bot.sees("search", "query"));
    assert!(!bot.sees("files", "write") && !bot.sees("files", "read"));
    let both = access.grant(&names(&["bot", "mcp:write"]));
    assert!(both.sees("files", "write") && both.sees("files", "read_x"));
    assert_eq!(both.rate.map(|r| (r.per_second, r.burst)), Some((5.0, 9.0)));
    let stranger = access.grant(&names(&["mallory"]));
    assert!(stranger.sees("files", "stat") && !stranger.sees("files", "read_x"));
    assert_eq!(stranger.rate.map(|r| r.burst), Some(1.0));
}

#[test]
fn without_a_default_an_unlisted_caller_sees_nothing() {
    let access = Access::from_json(r#"{"identities": {"alice": {"tools": ["*"]}}}"#).expect("ok");
    let grant = access.grant(&[]);
    assert!(!grant.sees("files", "read"));
}

#[test]
fn a_malformed_policy_is_refused_with_what_is_wrong() {
    for (text, wanted) in [
        (r#"{"identities": {}, "extra": 1}"#, "unknown field"),
        (
            r#"{"identities": {"a": {"tools": ["fi*les/x"]}}}"#,
            "a: tool pattern",
        ),
        (
            r#"{"identities": {"a": {"tools": ["/x"]}}}"#,
            "no part is empty",
        ),
        (
            r#"{"identities": {"a": {"requestsPerSecond": 0}}}"#,
            "above 0",
        ),
        (r#"{"default": {"burst": 3}}"#, "default: burst needs"),
    ] {
        let error = Access::from_json(text).expect_err(text).to_string();
        assert!(error.contains(wanted), "{text}: {error}");
    }
}
