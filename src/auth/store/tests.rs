//! The token store's files on disk: modes repaired, links refused, targets never touched.

use std::{
    os::unix::fs::{PermissionsExt, symlink},
    path::Path,
};

use rmcp::transport::auth::StoredCredentials;

use super::{FileTokenStore, StoredAuth, TokenStore};

fn record() -> StoredAuth {
    let credentials = StoredCredentials::new("client-1".to_owned(), None, Vec::new(), None);
    StoredAuth::new("http://127.0.0.1:9/mcp", credentials)
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[tokio::test]
async fn a_token_directory_open_to_others_is_made_private_and_still_read() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("tokens");
    FileTokenStore::in_dir(&dir, "s")
        .save(&record())
        .await
        .unwrap();
    chmod(&dir, 0o777);
    // A fresh store, as the next process would have.
    let store = FileTokenStore::in_dir(&dir, "s");
    let loaded = store.load().await.expect("loaded").expect("a record");
    assert_eq!(loaded.credentials.client_id, "client-1");
    assert_eq!(mode(&dir), 0o700, "repaired");
}

#[tokio::test]
async fn a_token_file_open_to_others_is_made_private_and_still_read() {
    let root = tempfile::tempdir().unwrap();
    let store = FileTokenStore::in_dir(root.path(), "s");
    store.save(&record()).await.unwrap();
    assert_eq!(mode(store.path()), 0o600);
    assert!(store.load().await.expect("loaded").is_some(), "cached now");
    chmod(store.path(), 0o644);
    // Even with the record cached (same inode, size and mtime): the mode is checked first.
    let loaded = store.load().await.expect("loaded");
    assert!(loaded.is_some());
    assert_eq!(mode(store.path()), 0o600, "repaired");
    let lock_path = store.path().with_extension("lock");
    let held = store.lock().await.expect("locked");
    drop(held);
    chmod(&lock_path, 0o666);
    drop(store.lock().await.expect("locked again"));
    assert_eq!(mode(&lock_path), 0o600, "the lock file is repaired too");
}

#[tokio::test]
async fn a_symbolic_link_at_the_lock_path_is_refused_and_its_target_never_created() {
    let root = tempfile::tempdir().unwrap();
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let target = elsewhere.join("created-by-the-refresh");
    let store = FileTokenStore::in_dir(root.path().join("tokens"), "s");
    store.save(&record()).await.unwrap();
    symlink(&target, store.path().with_extension("lock")).unwrap();
    let error = store.lock().await.expect_err("refused");
    assert!(error.to_string().contains("symbolic link"), "{error}");
    assert!(!target.exists(), "the link was followed");
}

#[tokio::test]
async fn a_symbolic_link_at_the_token_path_is_refused_not_read() {
    let root = tempfile::tempdir().unwrap();
    let theirs = FileTokenStore::in_dir(root.path().join("theirs"), "s");
    theirs.save(&record()).await.unwrap();
    let dir = root.path().join("tokens");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o700);
    let store = FileTokenStore::in_dir(&dir, "s");
    symlink(theirs.path(), store.path()).unwrap();
    let error = store.load().await.expect_err("refused");
    assert!(error.to_string().contains("symbolic link"), "{error}");
    // A save replaces the link itself; the file it pointed to is untouched.
    let before = std::fs::read(theirs.path()).unwrap();
    store.save(&record()).await.unwrap();
    assert!(
        !std::fs::symlink_metadata(store.path())
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(theirs.path()).unwrap(), before);
}

#[test]
fn an_expiry_past_the_end_of_time_saturates() {
    // `expires_in` is the authorization server's number: u64::MAX used to overflow.
    let record: StoredAuth = serde_json::from_str(
        r#"{"server_url":"https://s/mcp","credentials":{"client_id":"c","token_response":
        {"access_token":"a","token_type":"bearer","expires_in":18446744073709551615},
        "token_received_at":1700000000}}"#,
    )
    .expect("a record");
    assert_eq!(record.expires_at(), Some(u64::MAX));
    assert!(
        record
            .expires_in()
            .is_some_and(|left| left.as_secs() > 1 << 60)
    );
}
