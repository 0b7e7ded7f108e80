//! The rules a task is held to: when a tool adds or changes one, and again when a file is read
//! back (a repository may ship `.tasks/` written by anyone). A record that breaks them is
//! skipped with a warning, never shown to the model or the terminal.

use std::collections::BTreeSet;

use agent_workspace::store::{MAX_ID, is_hidden_char};

use crate::model::{
    MAX_BLOCKED_BY, MAX_DESCRIPTION_BYTES, MAX_OWNER_CHARS, MAX_SUBJECT_CHARS, Task, TaskId,
};
use crate::store::{Field, TaskError};

/// A one-line text (subject, owner): trimmed, not blank, at most `limit_chars` characters,
/// no control, bidi or invisible character. The subject and owner go into the system prompt's
/// `## tasks` and onto the terminal, where a line break could start a section of its own and an
/// escape sequence would be run.
pub(crate) fn check_text(
    field: Field,
    text: &str,
    limit_chars: usize,
) -> Result<String, TaskError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(TaskError::Blank(field));
    }
    if text.chars().count() > limit_chars {
        return Err(TaskError::TooLong {
            field,
            limit: format!("{limit_chars} characters"),
        });
    }
    if text.chars().any(char::is_control) {
        return Err(TaskError::NotOneLine(field));
    }
    hidden(field, text, &[])?;
    Ok(text.to_string())
}

/// The description: trimmed, at most [`MAX_DESCRIPTION_BYTES`], several lines allowed but no
/// other hidden character.
pub(crate) fn check_description(text: &str) -> Result<String, TaskError> {
    let text = text.trim();
    if text.len() > MAX_DESCRIPTION_BYTES {
        return Err(TaskError::TooLong {
            field: Field::Description,
            limit: format!("{MAX_DESCRIPTION_BYTES} bytes"),
        });
    }
    hidden(Field::Description, text, &['\n', '\t'])?;
    Ok(text.to_string())
}

fn hidden(field: Field, text: &str, allowed: &[char]) -> Result<(), TaskError> {
    match text
        .chars()
        .find(|c| !allowed.contains(c) && is_hidden_char(*c))
    {
        Some(c) => Err(TaskError::HiddenCharacter {
            field,
            code: u32::from(c),
        }),
        None => Ok(()),
    }
}

/// Checks a record read back from disk by the rules it was written under: every text as
/// [`check_text`] / [`check_description`] would store it (already trimmed), the id and every
/// blocker a bounded id, at most [`MAX_BLOCKED_BY`] blockers, none twice, none itself.
pub(crate) fn check_record(task: &Task) -> Result<(), TaskError> {
    let same = |field, checked: String, stored: &str| {
        if checked == stored {
            Ok(())
        } else {
            Err(TaskError::NotTrimmed(field))
        }
    };
    same(
        Field::Subject,
        check_text(Field::Subject, &task.subject, MAX_SUBJECT_CHARS)?,
        &task.subject,
    )?;
    same(
        Field::Description,
        check_description(&task.description)?,
        &task.description,
    )?;
    if let Some(owner) = &task.owner {
        same(
            Field::Owner,
            check_text(Field::Owner, owner, MAX_OWNER_CHARS)?,
            owner,
        )?;
    }
    if task.blocked_by.len() > MAX_BLOCKED_BY {
        return Err(TaskError::TooManyBlockers);
    }
    let mut seen: BTreeSet<TaskId> = BTreeSet::new();
    for &blocker in &task.blocked_by {
        if !is_id(blocker) || blocker == task.id || !seen.insert(blocker) {
            return Err(TaskError::BadEdge(blocker));
        }
    }
    Ok(())
}

/// Whether `id` is in the range every store id is: 1 to [`MAX_ID`].
pub(crate) fn is_id(id: TaskId) -> bool {
    (1..=MAX_ID).contains(&id)
}
