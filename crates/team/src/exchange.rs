//! Answering a protocol request end to end, for the tools and the runtime alike: the answer
//! is recorded first, then (the first time only) sent to the requester's mailbox. A replay
//! records nothing and sends nothing; a failed delivery leaves the answer recorded.

use crate::mailbox::{MailError, Mailbox};
use crate::message::{MailKind, MailMessage};
use crate::requests::{Answered, ProtocolRequest, RequestError, RequestStore, Response};
use crate::roster::Roster;

/// What answering did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    /// The request after the answer, and whether the answer is new.
    pub answered: Answered,
    /// The message sent to the requester (none for a replay).
    pub mail: Option<MailMessage>,
}

/// Why an answer was not recorded, or was recorded but not delivered.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// The store refused the answer (nothing changed unless it expired the request).
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The answer is recorded; sending it failed.
    #[error("request `{id}` is {status}, but the answer could not be delivered: {source}", id = .request.id.0, status = .request.status)]
    Undelivered {
        /// The request with its recorded answer.
        request: Box<ProtocolRequest>,
        /// Why the mail was not sent.
        #[source]
        source: MailError,
    },
}

/// Records `response`, then sends it to the requester with `response.feedback` as the body.
pub fn answer(
    requests: &RequestStore,
    mailbox: &Mailbox,
    roster: &Roster,
    response: &Response,
) -> Result<Delivered, AnswerError> {
    let answered = requests.respond(response)?;
    if let Answered::Replayed(_) = answered {
        return Ok(Delivered {
            answered,
            mail: None,
        });
    }
    let kind = MailKind::Response {
        request_id: response.request_id.clone(),
        request: response.kind,
        decision: response.decision,
    };
    match mailbox.send(
        roster,
        &response.from,
        response.to.as_str(),
        kind,
        &response.feedback,
    ) {
        Ok(mail) => Ok(Delivered {
            answered,
            mail: Some(mail),
        }),
        Err(source) => Err(AnswerError::Undelivered {
            request: Box::new(answered.request().clone()),
            source,
        }),
    }
}
