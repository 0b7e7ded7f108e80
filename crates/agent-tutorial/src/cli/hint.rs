//! What the person can do about an error, in the CLI's words. The library errors say what
//! failed and name no flag and no environment variable (a library does not know how it was
//! configured); the CLI knows, so it adds the hint after the error: `error: <error>; <hint>`.

use std::error::Error;
use std::fmt::Display;

use agent_core::{ModelError, RetryLimit, RunError};

/// The hint for `error`, or for the first of its causes that has one.
pub fn hint(error: &(dyn Error + 'static)) -> Option<&'static str> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(hint) = own_hint(error) {
            return Some(hint);
        }
        next = error.source();
    }
    None
}

/// `text` (the error as shown) followed by the hint for `error`, when there is one.
pub fn with_hint(text: impl Display, error: &(dyn Error + 'static)) -> String {
    match hint(error) {
        Some(hint) => format!("{text}; {hint}"),
        None => text.to_string(),
    }
}

fn own_hint(error: &(dyn Error + 'static)) -> Option<&'static str> {
    if let Some(error) = error.downcast_ref::<RunError>() {
        return match error {
            RunError::TurnLimit { .. } => Some("raise --max-turns or narrow the task"),
            RunError::Model(error) => model_hint(error),
            _ => None,
        };
    }
    error.downcast_ref::<ModelError>().and_then(model_hint)
}

fn model_hint(error: &ModelError) -> Option<&'static str> {
    match error {
        ModelError::Auth { .. } => Some("check OPENAI_API_KEY"),
        ModelError::Transport { .. } => Some("check OPENAI_BASE_URL"),
        ModelError::TruncatedToolCall { .. } => Some("raise --max-tokens"),
        ModelError::GaveUp { limit, last, .. } => {
            let unreachable = matches!(last.as_ref(), ModelError::Transport { .. });
            Some(match (limit, unreachable) {
                (RetryLimit::Attempts { .. }, false) => "raise --retry-attempts",
                (RetryLimit::Deadline { .. }, false) => "raise --retry-deadline",
                (RetryLimit::Attempts { .. }, true) => {
                    "check OPENAI_BASE_URL, or raise --retry-attempts"
                }
                (RetryLimit::Deadline { .. }, true) => {
                    "check OPENAI_BASE_URL, or raise --retry-deadline"
                }
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use agent_core::{ModelError, RetryLimit, RunError};

    use super::with_hint;

    fn shown(error: &RunError) -> String {
        with_hint(error, error)
    }

    #[test]
    fn each_error_that_has_a_hint_reads_as_before_the_hints_moved_out() {
        let transport = ModelError::Transport {
            message: "connection refused".into(),
        };
        let errors = [
            RunError::TurnLimit { limit: 2 },
            RunError::Model(ModelError::Auth {
                status: 401,
                message: "bad key".into(),
            }),
            RunError::Model(transport.clone()),
            RunError::Model(ModelError::TruncatedToolCall {
                calls: vec!["write_file (w1)".into()],
            }),
            RunError::Model(ModelError::GaveUp {
                attempts: 2,
                elapsed: Duration::ZERO,
                limit: RetryLimit::Attempts { max: 2 },
                last: Box::new(ModelError::RateLimited {
                    message: "slow down".into(),
                    retry_after: None,
                }),
            }),
            RunError::Model(ModelError::GaveUp {
                attempts: 1,
                elapsed: Duration::ZERO,
                limit: RetryLimit::Deadline {
                    after: Duration::from_secs(300),
                },
                last: Box::new(transport),
            }),
            RunError::Model(ModelError::Http {
                status: 400,
                message: "no".into(),
            }),
        ];
        assert_eq!(
            errors.iter().map(shown).collect::<Vec<_>>(),
            [
                "turn limit reached: the model still asked for tools after 2 requests; raise --max-turns or narrow the task",
                "the model server rejected the credentials (HTTP 401): bad key; check OPENAI_API_KEY",
                "could not reach the model server: connection refused; check OPENAI_BASE_URL",
                "the reply was cut off at the length limit inside tool call write_file (w1); a cut-off call is never run; raise --max-tokens",
                "gave up after 2 attempts in 0.0 s, at the limit of 2 attempts; the last one failed: rate limited by the model server (HTTP 429): slow down; raise --retry-attempts",
                "gave up after 1 attempt in 0.0 s, at the 300 s deadline; the last one failed: could not reach the model server: connection refused; check OPENAI_BASE_URL, or raise --retry-deadline",
                "the model server rejected the request (HTTP 400): no",
            ]
        );
    }

    #[test]
    fn a_hint_is_found_through_an_anyhow_context() {
        let error = anyhow::Error::new(RunError::TurnLimit { limit: 1 }).context("scheduled run");
        assert_eq!(
            with_hint(format_args!("{error:#}"), error.as_ref()),
            "scheduled run: turn limit reached: the model still asked for tools after 1 requests; raise --max-turns or narrow the task"
        );
    }
}
