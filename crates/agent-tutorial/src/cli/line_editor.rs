//! The interactive mode's input (chapter 11 on): a real line editor on a terminal (rustyline:
//! editing keys, ↑/↓ through earlier prompts, Ctrl-C and Ctrl-D as events), plain lines
//! otherwise (a pipe, as the tests drive it), and the prompt history kept in the user's data
//! directory.
//!
//! The history file lives outside any workspace, like the trust file (`trust.rs`), and is
//! handled the same way: never through a symlink, never a FIFO, read bounded, created 0600.
//! A history problem is a warning: the loop works without one.

use std::ffi::OsString;
use std::io::{self, BufRead, IsTerminal, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{Behavior, Config, Editor};

use super::trust::{TrustError, read_bounded};

/// A larger history file is not loaded (and not appended to): it is the user's to trim.
pub const MAX_HISTORY_FILE_BYTES: u64 = 1 << 20;
/// At most this many earlier prompts are offered (the newest ones).
pub const MAX_HISTORY_ENTRIES: usize = 1000;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("no data directory to keep the prompt history in: set XDG_DATA_HOME or HOME")]
    NoDataDir,
    #[error("cannot load the prompt history")]
    Load(#[source] TrustError),
    #[error("{} is a symbolic link; refusing to write through it", path.display())]
    Symlink { path: PathBuf },
    #[error("{} is not a regular file", path.display())]
    NotAFile { path: PathBuf },
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// `history` in the user's data directory.
#[derive(Debug, Clone)]
pub struct HistoryFile {
    path: PathBuf,
}

impl HistoryFile {
    /// `$XDG_DATA_HOME/agent-tutorial/history`, else `$HOME/.local/share/agent-tutorial/history`.
    /// A relative `XDG_DATA_HOME` is ignored, as the XDG spec says.
    pub fn from_env(var: impl Fn(&str) -> Option<OsString>) -> Result<Self, HistoryError> {
        let base = match var("XDG_DATA_HOME").map(PathBuf::from) {
            Some(dir) if dir.is_absolute() => dir,
            _ => match var("HOME").map(PathBuf::from) {
                Some(home) if home.is_absolute() => home.join(".local/share"),
                _ => return Err(HistoryError::NoDataDir),
            },
        };
        Ok(Self {
            path: base.join("agent-tutorial").join("history"),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The newest [`MAX_HISTORY_ENTRIES`] prompts, oldest first; none when there is no file.
    pub fn load(&self) -> Result<Vec<String>, HistoryError> {
        let Some(bytes) =
            read_bounded(&self.path, MAX_HISTORY_FILE_BYTES).map_err(HistoryError::Load)?
        else {
            return Ok(Vec::new());
        };
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect();
        let skip = lines.len().saturating_sub(MAX_HISTORY_ENTRIES);
        Ok(lines.into_iter().skip(skip).collect())
    }

    /// Appends one prompt as one line (line breaks become spaces). The folder is created
    /// 0700 and the file 0600; a symlink or anything but a regular file is refused.
    pub fn append(&self, entry: &str) -> Result<(), HistoryError> {
        let write_error = |source| HistoryError::Write {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(write_error)?;
        }
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            // No-follow: a planted link is refused, not written through; non-blocking: a FIFO
            // without a reader fails at once instead of hanging the prompt.
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&self.path);
        let mut file = match file {
            Ok(file) => file,
            Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {
                return Err(HistoryError::Symlink {
                    path: self.path.clone(),
                });
            }
            Err(err) => return Err(write_error(err)),
        };
        if !file.metadata().map_err(write_error)?.is_file() {
            return Err(HistoryError::NotAFile {
                path: self.path.clone(),
            });
        }
        let line: String = entry
            .chars()
            .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
            .collect();
        writeln!(file, "{line}").map_err(write_error)
    }
}

/// One read from the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Line(String),
    /// Ctrl-D or the end of the input.
    End,
    /// Ctrl-C at the prompt.
    Interrupted,
}

/// Where lines come from.
pub(crate) enum LineEditor {
    /// A terminal: rustyline, talking to the terminal itself (not stdout, which carries only
    /// answers), with the history file when there is one.
    Terminal {
        editor: Box<Editor<(), DefaultHistory>>,
        history: Option<HistoryFile>,
    },
    /// Not a terminal: plain lines from stdin, the prompt on stderr, no history.
    Plain,
}

impl std::fmt::Debug for LineEditor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Terminal { history, .. } => f
                .debug_struct("Terminal")
                .field("history", history)
                .finish_non_exhaustive(),
            Self::Plain => f.write_str("Plain"),
        }
    }
}

impl LineEditor {
    /// rustyline when stdin is a terminal, else plain lines.
    pub(crate) fn open() -> Self {
        if !io::stdin().is_terminal() {
            return Self::Plain;
        }
        let config = Config::builder()
            .max_history_size(MAX_HISTORY_ENTRIES)
            .unwrap_or_else(|_| Config::builder())
            .behavior(Behavior::PreferTerm)
            .auto_add_history(false)
            .build();
        let mut editor = match Editor::<(), DefaultHistory>::with_config(config) {
            Ok(editor) => editor,
            Err(err) => {
                tracing::warn!("no line editor ({err}); reading plain lines");
                return Self::Plain;
            }
        };
        let history = match HistoryFile::from_env(|k| std::env::var_os(k)) {
            Ok(file) => match file.load() {
                Ok(entries) => {
                    for entry in entries {
                        let _ = editor.add_history_entry(entry);
                    }
                    Some(file)
                }
                Err(err) => {
                    warn_history(&err);
                    None
                }
            },
            Err(err) => {
                warn_history(&err);
                None
            }
        };
        Self::Terminal {
            editor: Box::new(editor),
            history,
        }
    }

    pub(crate) fn read(&mut self, prompt: &str) -> io::Result<Input> {
        match self {
            Self::Plain => read_plain(prompt),
            Self::Terminal { editor, history } => match editor.readline(prompt) {
                Ok(line) => {
                    if !line.trim().is_empty() {
                        let _ = editor.add_history_entry(line.as_str());
                        if let Some(file) = history
                            && let Err(err) = file.append(&line)
                        {
                            warn_history(&err);
                            // Said once: later prompts are kept in memory only.
                            *history = None;
                        }
                    }
                    Ok(Input::Line(line))
                }
                Err(ReadlineError::Eof) => Ok(Input::End),
                Err(ReadlineError::Interrupted) => Ok(Input::Interrupted),
                Err(ReadlineError::Io(err)) => Err(err),
                Err(err) => Err(io::Error::other(err)),
            },
        }
    }
}

fn warn_history(err: &HistoryError) {
    tracing::warn!(
        "prompt history off: {}",
        agent_core::error_chain(err as &dyn std::error::Error)
    );
}

/// The prompt on stderr, one line from stdin. Stdin is locked only while reading: the
/// approval prompt (chapter 3) reads from it too, in the middle of a turn.
pub(crate) fn read_plain(prompt: &str) -> io::Result<Input> {
    eprint!("{prompt}");
    let _ = io::stderr().flush();
    let mut line = String::new();
    if io::stdin().lock().read_line(&mut line)? == 0 {
        return Ok(Input::End);
    }
    Ok(Input::Line(line))
}
