//! Reading a session file back: bounded, sealed, every line checked.

use std::collections::BTreeSet;

use agent_protocol::Message;
use agent_workspace::{StateDir, Workspace};

use crate::record::{FORMAT_VERSION, Header, Line, SessionId};
use crate::seal::{SealStore, Sealed};
use crate::{FOLDER, Limits, SessionError};

/// A session read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// Its header.
    pub header: Header,
    /// The history, exactly as stored, every call answered.
    pub messages: Vec<Message>,
    /// The lines to write back when the session goes on (the valid ones, in order).
    pub lines: Vec<Line>,
    /// The person's turns in it.
    pub turns: usize,
    /// Lines left out, each with why.
    pub skipped: Vec<Skipped>,
}

/// A line [`parse`] left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The line (from 1).
    pub line: usize,
    /// Why.
    pub reason: String,
}

/// Tool-call ids and names are short; longer ones are not ours.
const MAX_ID_BYTES: usize = 256;

/// The session `id` of the workspace, refused unless this machine's harness wrote exactly
/// this content ([`SealStore`]). Skipped lines are also logged as warnings.
pub fn load(
    workspace: &Workspace,
    seals: &SealStore,
    id: &SessionId,
    limits: Limits,
) -> Result<Loaded, SessionError> {
    let (path, bytes) = read(workspace, id, limits)?;
    let bytes = match seals.check(id, &bytes)? {
        Sealed::Whole => &bytes[..],
        Sealed::Prefix { bytes: keep } => {
            tracing::warn!("{path}: the last line was cut by a crash; it is left out");
            &bytes[..usize::try_from(keep).unwrap_or(0)]
        }
        Sealed::Unsealed => return Err(SessionError::Unsealed { path }),
        Sealed::Changed => return Err(SessionError::Changed { path }),
    };
    let loaded = parse(&path, id, bytes, limits)?;
    for skipped in &loaded.skipped {
        tracing::warn!("{path} line {}: skipped: {}", skipped.line, skipped.reason);
    }
    if loaded.lines.contains(&Line::Truncated) {
        return Err(SessionError::Truncated { path });
    }
    Ok(loaded)
}

/// The file of `id`, bounded: its workspace-relative path and its bytes.
pub(crate) fn read(
    workspace: &Workspace,
    id: &SessionId,
    limits: Limits,
) -> Result<(String, Vec<u8>), SessionError> {
    let folder = StateDir::new(workspace, FOLDER);
    let file = folder.file(&id.file_name())?;
    let path = file.to_string();
    match workspace.read_bytes(&file, limits.file_bytes) {
        Ok(bytes) => Ok((path, bytes)),
        Err(err) if err.is_not_found() => Err(SessionError::NotFound { id: id.to_string() }),
        Err(err) => Err(err.into()),
    }
}

/// Checks `bytes`, the file `path` of session `id`, line by line. A line that is not JSON of a
/// line's shape, or a message of a bad shape, is skipped; a broken call/result pairing refuses
/// the file; calls left unanswered at the very end (a crash in the middle of a batch) are left
/// out with the reply that made them.
pub fn parse(
    path: &str,
    id: &SessionId,
    bytes: &[u8],
    limits: Limits,
) -> Result<Loaded, SessionError> {
    let mut raw = bytes.split(|b| *b == b'\n');
    let bad_header = |reason: String| SessionError::BadHeader {
        path: path.to_string(),
        reason,
    };
    let header = match raw.next().map(serde_json::from_slice::<Line>) {
        Some(Ok(Line::Header(header))) => header,
        Some(Ok(_)) | None => return Err(bad_header("the first line is not a header".into())),
        Some(Err(err)) => return Err(bad_header(err.to_string())),
    };
    if header.version != FORMAT_VERSION {
        return Err(bad_header(format!("version {}", header.version)));
    }
    if header.id != id.as_str() {
        return Err(bad_header(format!(
            "it names another session, {:?}",
            header.id
        )));
    }
    let mut check = Pairing::new(path);
    let mut loaded = Loaded {
        header: header.clone(),
        messages: Vec::new(),
        lines: vec![Line::Header(header)],
        turns: 0,
        skipped: Vec::new(),
    };
    for (index, text) in raw.enumerate() {
        let number = index + 2;
        // Empty pieces (the one after the last line end) are no lines; the file's byte
        // bound bounds them.
        if text.is_empty() {
            continue;
        }
        if number > limits.lines {
            return Err(SessionError::TooManyLines {
                path: path.to_string(),
                limit: limits.lines,
            });
        }
        let mut skip = |reason: String| {
            loaded.skipped.push(Skipped {
                line: number,
                reason,
            });
        };
        if text.len() > limits.line_bytes {
            skip(format!("over {} bytes", limits.line_bytes));
            continue;
        }
        let line = match serde_json::from_slice::<Line>(text) {
            Ok(line) => line,
            Err(err) => {
                skip(format!("not a session line: {err}"));
                continue;
            }
        };
        match &line {
            Line::Header(_) => {
                skip("a second header".into());
                continue;
            }
            Line::Turn => loaded.turns += 1,
            Line::Message { message } => {
                if let Err(reason) = shape(message) {
                    skip(reason);
                    continue;
                }
                check.next(number, message, loaded.messages.len())?;
                loaded.messages.push(message.clone());
            }
            Line::Truncated => {}
        }
        loaded.lines.push(line);
    }
    if let Some(start) = check.open_batch() {
        // The reply whose calls were not all answered, and the answers it got: the session
        // goes on from the message before it, as if that reply had not come.
        let dropped = loaded.messages.len() - start;
        loaded.messages.truncate(start);
        let mut left = dropped;
        while left > 0 {
            if let Some(Line::Message { .. }) = loaded.lines.pop() {
                left -= 1;
            }
        }
        loaded.skipped.push(Skipped {
            line: 0,
            reason: format!(
                "the last reply's calls were not all answered: its {dropped} message(s) are left out"
            ),
        });
    }
    Ok(loaded)
}

/// What a message must look like to be sent again: ids and names short and plain.
fn shape(message: &Message) -> Result<(), String> {
    let plain = |text: &str| {
        !text.is_empty() && text.len() <= MAX_ID_BYTES && !text.chars().any(char::is_control)
    };
    match message {
        Message::Assistant { tool_calls, .. } => {
            for call in tool_calls {
                if !plain(&call.id) || !plain(&call.name) {
                    return Err("a tool call with an empty, long or odd id or name".into());
                }
            }
            Ok(())
        }
        Message::Tool { tool_call_id, .. } if !plain(tool_call_id) => {
            Err("a tool result with an empty, long or odd call id".into())
        }
        _ => Ok(()),
    }
}

/// The call/result pairing the loop keeps: every call of a reply answered once, right after
/// it, before any other message; every call id used once in the whole history.
struct Pairing<'a> {
    path: &'a str,
    pending: BTreeSet<String>,
    seen: BTreeSet<String>,
    /// Where the reply with pending calls is in the history.
    batch_start: usize,
}

impl<'a> Pairing<'a> {
    fn new(path: &'a str) -> Self {
        Self {
            path,
            pending: BTreeSet::new(),
            seen: BTreeSet::new(),
            batch_start: 0,
        }
    }

    fn refuse(&self, line: usize, reason: String) -> SessionError {
        SessionError::Pairing {
            path: self.path.to_string(),
            line,
            reason,
        }
    }

    fn next(&mut self, line: usize, message: &Message, at: usize) -> Result<(), SessionError> {
        match message {
            Message::Tool { tool_call_id, .. } => {
                if !self.pending.remove(tool_call_id) {
                    return Err(self.refuse(
                        line,
                        format!("a result for {tool_call_id:?}, which no open call has"),
                    ));
                }
                Ok(())
            }
            _ if !self.pending.is_empty() => Err(self.refuse(
                line,
                format!("{} call(s) still unanswered", self.pending.len()),
            )),
            Message::Assistant { tool_calls, .. } => {
                for call in tool_calls {
                    if !self.seen.insert(call.id.clone()) {
                        return Err(self.refuse(line, format!("call id {:?} used twice", call.id)));
                    }
                    self.pending.insert(call.id.clone());
                }
                self.batch_start = at;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Where the reply with unanswered calls starts, if the history ends before they are.
    fn open_batch(&self) -> Option<usize> {
        (!self.pending.is_empty()).then_some(self.batch_start)
    }
}
