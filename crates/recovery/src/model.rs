//! [`RecoveringModel`]: retries, the fallback model, and (with [`crate::truncation`]) cut-off
//! replies, around any [`ModelClient`].

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_core::{
    AgentEvent, EventSink, ModelClient, ModelError, ModelReply, ModelRequest, NoEvents,
    RecoveryAction, RetryAfter, RetryCause, RetryLimit,
};
use async_trait::async_trait;

use crate::policy::{Decision, Jitter, RetryPolicy};
use agent_workspace::{Clock, SystemClock};
use tokio::time::Instant;

/// The model asked once the main one is overloaded, and its name for the user.
#[derive(Clone)]
pub struct Fallback {
    /// The model itself (already configured with its own model name).
    pub client: Arc<dyn ModelClient>,
    /// The name shown when the switch happens (in the "switching to …" notice).
    pub name: String,
}

impl std::fmt::Debug for Fallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fallback")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct State {
    /// Overloaded answers in a row, across requests.
    overloads: u32,
    /// Switched for the rest of the session: the main model was overloaded just now, and
    /// going back and forth would only meet it overloaded again.
    on_fallback: bool,
    /// The last answer was "prompt too long": the next one is the loop's single retry.
    overflowed: bool,
}

/// A [`ModelClient`] that recovers from what is normal on a network: rate limits, overloads,
/// dropped connections, replies cut off at the completion limit.
///
/// ```
/// use std::sync::Arc;
/// use std::time::{Duration, SystemTime};
///
/// use agent_core::{Message, ModelClient, ModelError, ModelReply, ModelRequest, NoEvents};
/// use agent_recovery::{RecoveringModel, RetryPolicy};
/// use agent_test_support::{ScriptStep, ScriptedModel};
/// use agent_workspace::{ManualClock, Sleeping};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// // The connection drops once, then the server answers.
/// let primary = Arc::new(ScriptedModel::new([
///     ScriptStep::Fail(ModelError::Transport { message: "connection reset".into() }),
///     ScriptStep::Reply(ModelReply::text("Hello.")),
/// ]));
/// let clock = Arc::new(ManualClock::with_sleeping(SystemTime::UNIX_EPOCH, Sleeping::Jumps));
/// let policy = RetryPolicy { jitter_percent: 0, ..RetryPolicy::default() };
/// let model = RecoveringModel::new(primary, policy, Arc::new(NoEvents)).clock(clock.clone());
///
/// let request = ModelRequest {
///     messages: vec![Message::user("hi").into()],
///     ..ModelRequest::default()
/// };
/// assert_eq!(model.complete(&request).await.unwrap(), ModelReply::text("Hello."));
/// // One retry, after the policy's base wait (on the manual clock: no real waiting).
/// assert_eq!(clock.sleeps(), vec![Duration::from_millis(500)]);
/// # });
/// ```
pub struct RecoveringModel {
    primary: Arc<dyn ModelClient>,
    fallback: Option<Fallback>,
    pub(crate) policy: RetryPolicy,
    events: Arc<dyn EventSink>,
    clock: Arc<dyn Clock>,
    jitter: Mutex<Jitter>,
    state: Mutex<State>,
    /// The completion limit the wrapped client sends by default, when the caller knows it.
    pub(crate) configured_max_tokens: Option<u32>,
}

impl std::fmt::Debug for RecoveringModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecoveringModel")
            .field("fallback", &self.fallback)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// Why a failure is worth another attempt, or `None` when it is not (other 4xx, a reply we
/// cannot use, "prompt too long", which the loop handles).
pub fn transient(error: &ModelError) -> Option<RetryCause> {
    match error {
        ModelError::RateLimited { .. } => Some(RetryCause::Status(429)),
        ModelError::Server { status, .. } if matches!(status, 500 | 502 | 503 | 504 | 529) => {
            Some(RetryCause::Status(*status))
        }
        ModelError::Transport { .. } => Some(RetryCause::Transport),
        _ => None,
    }
}

/// An overloaded server (503, 529): counted towards the switch to the fallback model.
fn overloaded(error: &ModelError) -> bool {
    matches!(
        error,
        ModelError::Server {
            status: 503 | 529,
            ..
        }
    )
}

fn retry_after(error: &ModelError) -> Option<RetryAfter> {
    match error {
        ModelError::RateLimited { retry_after, .. } | ModelError::Server { retry_after, .. } => {
            *retry_after
        }
        _ => None,
    }
}

impl RecoveringModel {
    /// Wraps `primary`; no fallback model, tokio's clock, jitter seeded from the clock.
    pub fn new(
        primary: Arc<dyn ModelClient>,
        policy: RetryPolicy,
        events: Arc<dyn EventSink>,
    ) -> Self {
        Self {
            primary,
            fallback: None,
            policy,
            events,
            clock: Arc::new(SystemClock),
            jitter: Mutex::new(Jitter::from_clock()),
            state: Mutex::new(State::default()),
            configured_max_tokens: None,
        }
    }

    /// The model to switch to after [`RetryPolicy::fallback_after`] overloaded answers.
    pub fn fallback(mut self, fallback: Fallback) -> Self {
        self.fallback = Some(fallback);
        self
    }

    /// The clock the waits and the deadline are measured on (a manual one in tests, so a
    /// retry never waits for real).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The jitter generator: a fixed seed makes every wait reproducible in tests.
    pub fn jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = Mutex::new(jitter);
        self
    }

    /// The completion limit the wrapped client sends (`--max-tokens`): the retry after a
    /// cut-off reply asks for at least twice as much.
    pub fn configured_max_tokens(mut self, max_tokens: Option<u32>) -> Self {
        self.configured_max_tokens = max_tokens;
        self
    }

    /// Tells the user (the event, printed by the CLI) and the log.
    pub(crate) fn emit(&self, action: RecoveryAction) {
        tracing::info!(target: "agent_recovery", "{action}");
        self.events.emit(&AgentEvent::Recovery(action));
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn current(&self) -> &Arc<dyn ModelClient> {
        match &self.fallback {
            Some(fallback) if self.state().on_fallback => &fallback.client,
            _ => &self.primary,
        }
    }

    /// Counts an overloaded answer; true when this one switches to the fallback model.
    fn count_overload(&self, error: &ModelError) -> bool {
        let mut state = self.state();
        if !overloaded(error) {
            state.overloads = 0;
            return false;
        }
        state.overloads += 1;
        let switch = self.fallback.is_some()
            && !state.on_fallback
            && state.overloads >= self.policy.fallback_after;
        if switch {
            state.on_fallback = true;
            state.overloads = 0;
        }
        switch
    }

    /// One request, sent again after each transient failure until it succeeds or a bound of
    /// the policy is reached.
    /// `start` is when the whole `complete` began: the retries of a cut-off reply's follow-up
    /// requests share one deadline with the first request's.
    pub(crate) async fn with_retries(
        &self,
        request: &ModelRequest,
        start: Instant,
        deltas: &dyn EventSink,
    ) -> Result<ModelReply, ModelError> {
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            // The deadline bounds the attempt in flight too, not only the waits between
            // attempts: a server that stopped answering would otherwise hold the run for a whole
            // --request-timeout past it.
            // A timer raced against the request: a manual clock in a test never fires it on
            // its own (see `agent_workspace::clock`).
            let expire: agent_workspace::Sleep = match start.checked_add(self.policy.deadline) {
                Some(at) => self.clock.sleep_until(at),
                None => Box::pin(std::future::pending()),
            };
            let outcome = tokio::select! {
                outcome = self.current().complete_streamed(request, deltas) => Some(outcome),
                () = expire => None,
            };
            let Some(outcome) = outcome else {
                return Err(ModelError::GaveUp {
                    attempts: attempt,
                    elapsed: self.clock.now().saturating_duration_since(start),
                    limit: RetryLimit::Deadline {
                        after: self.policy.deadline,
                    },
                    last: Box::new(ModelError::Transport {
                        message: "no reply yet when the deadline came".into(),
                    }),
                });
            };
            let error = match outcome {
                Ok(reply) => {
                    let mut state = self.state();
                    state.overloads = 0;
                    state.overflowed = false;
                    return Ok(reply);
                }
                Err(error) => error,
            };
            if let ModelError::PromptTooLong { .. } = error {
                let retry_failed = std::mem::replace(&mut self.state().overflowed, true);
                // The second one in a row is the loop's retry failing: its error says it all.
                if !retry_failed {
                    self.emit(RecoveryAction::PromptTooLong);
                }
                return Err(error);
            }
            self.state().overflowed = false;
            let Some(cause) = transient(&error) else {
                return Err(error);
            };
            let elapsed = self.clock.now().saturating_duration_since(start);
            let give_up = |limit| ModelError::GaveUp {
                attempts: attempt,
                elapsed,
                limit,
                last: Box::new(error.clone()),
            };
            if self.count_overload(&error) {
                // The switch always gets its attempt, even past the attempt limit: giving up
                // with a fallback configured and never asked would waste it (with
                // `--retry-attempts 3` the third overload is also the last attempt).
                let model = self
                    .fallback
                    .as_ref()
                    .map(|f| f.name.clone())
                    .unwrap_or_default();
                self.emit(RecoveryAction::FallbackModel {
                    model,
                    after: self.policy.fallback_after,
                });
                // Another model, not the overloaded one: no reason to wait.
                continue;
            }
            let jitter = self
                .jitter
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .next_permille();
            let remaining = self.policy.deadline.saturating_sub(elapsed);
            match self.policy.delay(
                attempt,
                retry_after(&error),
                self.clock.wall(),
                remaining,
                jitter,
            ) {
                Decision::Wait(wait) => {
                    self.emit(RecoveryAction::Retrying {
                        wait,
                        cause,
                        attempt: attempt + 1,
                        max_attempts: self.policy.max_attempts,
                    });
                    if wait > Duration::ZERO {
                        self.clock.sleep(wait).await;
                    }
                }
                Decision::GiveUp(limit) => return Err(give_up(limit)),
            }
        }
    }
}

#[async_trait]
impl ModelClient for RecoveringModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        self.complete_streamed(request, &NoEvents).await
    }

    /// Every attempt streams to `deltas`: a retried one from the start again, after the
    /// [`RecoveryAction`] event that says why, which is how a watcher knows the text it
    /// showed is being sent again; a continuation's text follows the part before it.
    async fn complete_streamed(
        &self,
        request: &ModelRequest,
        deltas: &dyn EventSink,
    ) -> Result<ModelReply, ModelError> {
        let start = self.clock.now();
        let reply = self.with_retries(request, start, deltas).await?;
        self.repair_cut_off(request, reply, start, deltas).await
    }
}
