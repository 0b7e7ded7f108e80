//! The one HTTP exchange behind a model call, owned here rather than by async-openai's client.
//!
//! async-openai's client retries 429s and 5xx with its own backoff (a `Retry-After: 3600` sleeps
//! an hour), outside any timeout we set, and logs raw error bodies through `tracing`. This layer
//! makes exactly one attempt, bounds the whole exchange (connect, send, every byte of the reply)
//! with one deadline, reads the body in chunks up to a size limit, and hands status, the
//! headers that matter and the body back untouched so the caller (and chapter 11's recovery)
//! decides what they mean.

use std::time::Duration;

use agent_core::RetryAfter;

use crate::config::ApiKey;

/// The largest reply body read by default. A chat completion is kilobytes; a server sending
/// more than this is broken or hostile, and holding it whole would cost its size in memory.
pub const DEFAULT_MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// How long opening the connection may take; the request deadline still bounds the total.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the exchange produced no complete reply. Messages never contain the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The HTTP client could not be set up.
    #[error("cannot build the HTTP client: {message}")]
    Build {
        /// What reqwest said, the key redacted.
        message: String,
    },
    /// The deadline passed before the whole reply arrived.
    #[error("no complete reply within {} s (--request-timeout)", .after.as_secs_f64())]
    Timeout {
        /// The deadline.
        after: Duration,
    },
    /// The reply body grew past the limit; the rest was not read.
    #[error("the reply is larger than the {limit}-byte limit")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// A streamed reply sent nothing for this long (`--stream`): the server stalled.
    #[error("the streamed reply stalled: no data for {} s", .after.as_secs_f64())]
    Idle {
        /// The idle deadline.
        after: Duration,
    },
    /// Connecting, sending or reading failed.
    #[error("{message}")]
    Transport {
        /// What failed, the key redacted.
        message: String,
    },
}

/// A complete HTTP reply, whatever its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawReply {
    /// The HTTP status.
    pub status: u16,
    /// `Retry-After`, in seconds or as an HTTP date, when the server sent a readable one.
    pub retry_after: Option<RetryAfter>,
    /// The body, whole (at most the reply limit).
    pub body: Vec<u8>,
}

/// What [`HttpLayer::open`] got back.
#[derive(Debug)]
pub enum Opened {
    /// A failure status, its body read whole (at most the reply limit).
    Failed(RawReply),
    /// A success status, the body still to be read.
    Stream(BodyStream),
}

/// A success reply's body, read chunk by chunk as the server sends it, with the reply limit
/// counted over the whole body. Dropping it closes the connection: that is how a cancelled
/// turn (Ctrl-C) stops a streamed reply at once.
pub struct BodyStream {
    response: reqwest::Response,
    read: usize,
    limit: usize,
    key: ApiKey,
}

impl std::fmt::Debug for BodyStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodyStream")
            .field("read", &self.read)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl BodyStream {
    /// The next chunk as it arrived, `None` at the end of the body. Fails when nothing
    /// arrives for `idle`, or when the body grows past the reply limit (the chunk that would
    /// cross it is not handed out).
    pub async fn next_chunk(&mut self, idle: Duration) -> Result<Option<bytes::Bytes>, HttpError> {
        let chunk = match tokio::time::timeout(idle, self.response.chunk()).await {
            Err(_) => return Err(HttpError::Idle { after: idle }),
            Ok(Err(err)) => {
                return Err(HttpError::Transport {
                    message: self.key.redact(&agent_core::error_chain(&err)),
                });
            }
            Ok(Ok(chunk)) => chunk,
        };
        if let Some(chunk) = &chunk {
            self.read += chunk.len();
            if self.read > self.limit {
                return Err(HttpError::TooLarge { limit: self.limit });
            }
        }
        Ok(chunk)
    }
}

/// Posts JSON to one URL with one key, once per call.
#[derive(Clone)]
pub struct HttpLayer {
    client: reqwest::Client,
    url: String,
    key: ApiKey,
    timeout: Duration,
    max_reply_bytes: usize,
}

impl std::fmt::Debug for HttpLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpLayer")
            .field("url", &self.url)
            .field("key", &self.key)
            .field("timeout", &self.timeout)
            .field("max_reply_bytes", &self.max_reply_bytes)
            .finish_non_exhaustive()
    }
}

/// Makes `ring` the process's rustls crypto provider (reqwest is built without one, see the
/// workspace `Cargo.toml`). Idempotent: a provider already installed, ours or anyone's, stays.
fn install_crypto_provider() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// `Retry-After` is either delta-seconds or an HTTP date (RFC 9110 §10.2.3); anything else is
/// ignored, as if the server had not sent it.
pub fn parse_retry_after(value: &str) -> Option<RetryAfter> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(RetryAfter::Seconds(Duration::from_secs(secs)));
    }
    httpdate::parse_http_date(value).ok().map(RetryAfter::At)
}

impl HttpLayer {
    /// An exchange with `url`, authenticated with `key`, each bounded by `timeout`.
    pub fn new(url: String, key: ApiKey, timeout: Duration) -> Result<Self, HttpError> {
        install_crypto_provider();
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            // The key goes only to the server it was configured for: a redirect elsewhere is
            // answered as the error it is instead of being followed with the key attached.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|err| HttpError::Build {
                message: key.redact(&err.to_string()),
            })?;
        Ok(Self {
            client,
            url,
            key,
            timeout,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
        })
    }

    /// Changes the reply size bound (default [`DEFAULT_MAX_REPLY_BYTES`]).
    pub fn with_max_reply_bytes(mut self, limit: usize) -> Self {
        self.max_reply_bytes = limit;
        self
    }

    /// One POST of `body` (JSON text); the reply in full, or why there is none.
    pub async fn post_json(&self, body: bytes::Bytes) -> Result<RawReply, HttpError> {
        match tokio::time::timeout(self.timeout, self.exchange(body)).await {
            Ok(result) => result,
            Err(_) => Err(HttpError::Timeout {
                after: self.timeout,
            }),
        }
    }

    async fn exchange(&self, body: bytes::Bytes) -> Result<RawReply, HttpError> {
        let response = self.send(body).await?;
        self.read_whole(response).await
    }

    async fn read_whole(&self, mut response: reqwest::Response) -> Result<RawReply, HttpError> {
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let limit = self.max_reply_bytes;
        // A declared length over the limit fails before any byte is read.
        if response
            .content_length()
            .is_some_and(|len| usize::try_from(len).map_or(true, |len| len > limit))
        {
            return Err(HttpError::TooLarge { limit });
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|err| self.transport(&err))? {
            if body.len() + chunk.len() > limit {
                return Err(HttpError::TooLarge { limit });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(RawReply {
            status,
            retry_after,
            body,
        })
    }

    /// One POST of `body` whose success reply is handed back unread, to be read as it
    /// arrives ([`BodyStream`]); a failure status is read whole (bounded) as in
    /// [`Self::post_json`]. Not bounded in time: the caller bounds the whole exchange,
    /// reading included (a deadline here would end before the body is read).
    pub async fn open(&self, body: bytes::Bytes) -> Result<Opened, HttpError> {
        let response = self.send(body).await?;
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            return Ok(Opened::Stream(BodyStream {
                response,
                read: 0,
                limit: self.max_reply_bytes,
                key: self.key.clone(),
            }));
        }
        self.read_whole(response).await.map(Opened::Failed)
    }

    async fn send(&self, body: bytes::Bytes) -> Result<reqwest::Response, HttpError> {
        self.client
            .post(&self.url)
            // `bearer_auth` marks the header sensitive, so no debug output of it shows the key.
            .bearer_auth(self.key.expose())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|err| self.transport(&err))
    }

    fn transport(&self, err: &reqwest::Error) -> HttpError {
        // `{:#}`-style chains are not in reqwest's Display; walk the sources so "connection
        // refused" is visible rather than only "error sending request".
        let message = agent_core::error_chain(err);
        HttpError::Transport {
            message: self.key.redact(&message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    #[test]
    fn retry_after_is_read_as_seconds_or_an_http_date_and_nothing_else() {
        let date = SystemTime::UNIX_EPOCH + Duration::from_secs(1_735_689_613);
        assert_eq!(
            [
                " 7 ",
                "Wed, 01 Jan 2025 00:00:13 GMT",
                "Wednesday, 01-Jan-25 00:00:13 GMT",
                "soon",
                "-3",
            ]
            .map(parse_retry_after),
            [
                Some(RetryAfter::Seconds(Duration::from_secs(7))),
                Some(RetryAfter::At(date)),
                Some(RetryAfter::At(date)),
                None,
                None,
            ]
        );
    }
}
