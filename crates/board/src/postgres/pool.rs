//! A few connections to the server, handed out one caller at a time. Hand-written (40 lines)
//! instead of a pool crate: the board needs "at most N, reuse idle ones, drop dead ones",
//! nothing more.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_postgres::{Client, Config, NoTls};

use crate::error::BoardError;

#[derive(Debug)]
pub(crate) struct Pool {
    config: Config,
    /// Runs on every new connection: `search_path` and `lock_timeout`.
    setup: String,
    idle: Mutex<Vec<Client>>,
    permits: Arc<Semaphore>,
}

/// A connection lent to one caller; it goes back to the pool when dropped.
pub(crate) struct Lent<'p> {
    pub(crate) client: Option<Client>,
    pool: &'p Pool,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(client) = self.client.take().filter(|c| !c.is_closed()) {
            self.pool
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(client);
        }
    }
}

impl Pool {
    pub(crate) fn new(config: Config, setup: String, size: usize) -> Self {
        Self {
            config,
            setup,
            idle: Mutex::new(Vec::new()),
            permits: Arc::new(Semaphore::new(size.max(1))),
        }
    }

    /// An idle connection, or a new one when none is idle (waiting while `size` are lent).
    pub(crate) async fn get(&self) -> Result<Lent<'_>, BoardError> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|err| BoardError::Interrupted(err.to_string()))?;
        let idle = {
            let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
            idle.retain(|c| !c.is_closed());
            idle.pop()
        };
        let client = match idle {
            Some(client) => client,
            None => {
                let (client, connection) = self.config.connect(NoTls).await?;
                tokio::spawn(async move {
                    if let Err(err) = connection.await {
                        tracing::warn!("board: PostgreSQL connection ended: {err}");
                    }
                });
                client.batch_execute(&self.setup).await?;
                client
            }
        };
        Ok(Lent {
            client: Some(client),
            pool: self,
            _permit: permit,
        })
    }
}

impl Lent<'_> {
    /// The connection (always there until dropped).
    pub(crate) fn client(&mut self) -> Result<&mut Client, BoardError> {
        self.client
            .as_mut()
            .ok_or_else(|| BoardError::Interrupted("the connection was already returned".into()))
    }
}
