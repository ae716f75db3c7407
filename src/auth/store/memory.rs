//! [`MemoryTokenStore`]: tokens in memory only, for tests and hosts that keep secrets their
//! own way.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::{StoreError, StoreLock, StoredAuth, TokenStore};

/// Tokens kept in memory only, lost with the process; a clone shares the same record.
#[derive(Debug, Clone, Default)]
pub struct MemoryTokenStore {
    record: Arc<Mutex<Option<StoredAuth>>>,
    refresh: Arc<tokio::sync::Mutex<()>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl TokenStore for MemoryTokenStore {
    async fn load(&self) -> Result<Option<StoredAuth>, StoreError> {
        Ok(self.record.lock().map_err(|_| poisoned())?.clone())
    }

    async fn save(&self, auth: &StoredAuth) -> Result<(), StoreError> {
        *self.record.lock().map_err(|_| poisoned())? = Some(auth.clone());
        Ok(())
    }

    async fn clear(&self) -> Result<(), StoreError> {
        *self.record.lock().map_err(|_| poisoned())? = None;
        Ok(())
    }

    async fn lock(&self) -> Result<Option<StoreLock>, StoreError> {
        Ok(Some(StoreLock::new(
            self.refresh.clone().lock_owned().await,
        )))
    }

    fn location(&self) -> String {
        "memory".to_owned()
    }
}

fn poisoned() -> StoreError {
    StoreError::new("memory", "poisoned by a panic")
}
