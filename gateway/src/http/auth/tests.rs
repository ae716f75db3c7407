use super::*;

#[test]
fn only_a_configured_bearer_token_passes() {
    let tokens = Tokens::new(["alpha", "  beta  ", ""]);
    let check = |header: &[u8]| bearer(Some(header)).and_then(|t| tokens.find(t));
    assert_eq!(check(b"Bearer alpha"), Some(0));
    assert_eq!(check(b"bearer beta"), Some(1));
    assert_eq!(check(b"Bearer gamma"), None);
    assert_eq!(check(b"Bearer alph"), None);
    assert_eq!(bearer(Some(b"Basic alpha")), None);
    assert_eq!(bearer(None), None);
    assert!(!format!("{tokens:?}").contains("alpha"));
}

#[test]
fn a_token_line_may_name_its_token_and_a_bad_name_is_refused_not_guessed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tokens");
    std::fs::write(&path, "alice:a-secret\nplain-token\nci.bot@x:other\n").expect("write");
    let tokens = Tokens::from_file(&path).expect("tokens");
    assert_eq!(tokens.find(b"a-secret"), Some(0));
    assert_eq!(tokens.name(0).map(|n| &**n), Some("alice"));
    assert_eq!(
        tokens.find(b"alice:a-secret"),
        None,
        "the name is not the token"
    );
    assert_eq!(tokens.name(1), None);
    assert_eq!(tokens.name(2).map(|n| &**n), Some("ci.bot@x"));
    for bad in ["bad name:token\n", "alice:\n", ":token\n"] {
        std::fs::write(&path, bad).expect("write");
        let refused = Tokens::from_file(&path).expect_err(bad);
        assert!(
            matches!(refused, TokensError::BadName { line: 1, .. }),
            "{refused:?}"
        );
    }
}

#[test]
fn a_token_file_takes_one_token_per_line_and_skips_comments() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tokens");
    std::fs::write(&path, "# hosts\none\n\ntwo\n").expect("write");
    let tokens = Tokens::from_file(&path).expect("tokens");
    assert_eq!(tokens.find(b"two"), Some(1));
    std::fs::write(&path, "# nothing\n").expect("write");
    assert!(matches!(
        Tokens::from_file(&path),
        Err(TokensError::NoToken(p)) if p == path
    ));
}

#[test]
fn a_token_file_over_the_bound_is_refused_after_reading_at_most_the_bound() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tokens");
    let at_bound = "t".repeat(MAX_TOKEN_FILE as usize);
    std::fs::write(&path, &at_bound).expect("write");
    assert!(
        Tokens::from_file(&path).is_ok(),
        "exactly the bound is read"
    );
    std::fs::write(&path, at_bound + "t").expect("write");
    let refused = Tokens::from_file(&path).expect_err("refused");
    assert!(
        matches!(
            refused,
            TokensError::TooLarge {
                max: MAX_TOKEN_FILE,
                ..
            }
        ),
        "{refused:?}"
    );
    assert!(
        refused.to_string().ends_with(": over 1048576 bytes"),
        "{refused}"
    );
}
