//! The interactive mode's input (chapter 11 on): a real line editor on a terminal (rustyline:
//! editing keys, ↑/↓ through earlier prompts, Ctrl-C and Ctrl-D as events; from chapter 20 Tab
//! completes slash commands, `completion`), plain lines otherwise (a pipe, as the tests drive
//! it), and the prompt history kept in the user's data directory (`history`).

mod completion;
mod history;

use std::io::{self, BufRead, IsTerminal, Write};

use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{Behavior, CompletionType, Config, Editor};

use agent_harness::session::ApprovalId;

pub(crate) use completion::Completion;
use completion::SlashHelper;
pub use history::{HistoryError, HistoryFile, MAX_HISTORY_ENTRIES, MAX_HISTORY_FILE_BYTES};

/// One read from the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A line the person typed (without its newline).
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
        editor: Box<Editor<SlashHelper, DefaultHistory>>,
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
    /// rustyline when stdin is a terminal (completing what `completion` says), else plain
    /// lines.
    pub(crate) fn open(completion: Completion) -> Self {
        if !io::stdin().is_terminal() {
            return Self::Plain;
        }
        let config = Config::builder()
            .max_history_size(MAX_HISTORY_ENTRIES)
            .unwrap_or_else(|_| Config::builder())
            .behavior(Behavior::PreferTerm)
            .auto_add_history(false)
            .completion_type(CompletionType::List)
            .build();
        let mut editor = match Editor::<SlashHelper, DefaultHistory>::with_config(config) {
            Ok(editor) => editor,
            Err(err) => {
                tracing::warn!("no line editor ({err}); reading plain lines");
                return Self::Plain;
            }
        };
        editor.set_helper(Some(SlashHelper(completion)));
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

    /// A printer that shows text above the line being typed without destroying it (a
    /// terminal only). rustyline's `ExternalPrinter` rather than reedline's: rustyline is the
    /// editor already built (reedline would bring crossterm and a second terminal layer), and
    /// its printer writes straight through when no line is being read.
    pub(crate) fn printer(&mut self) -> Option<Box<dyn rustyline::ExternalPrinter + Send>> {
        match self {
            Self::Plain => None,
            Self::Terminal { editor, .. } => match editor.create_external_printer() {
                Ok(printer) => Some(Box::new(printer)),
                Err(err) => {
                    tracing::warn!("no printer above the prompt ({err}); printing plainly");
                    None
                }
            },
        }
    }

    /// Reads the answer to a question: like [`read`](Self::read), kept out of the history.
    pub(crate) fn read_answer(&mut self, prompt: &str) -> io::Result<Input> {
        match self {
            Self::Plain => read_plain(prompt),
            Self::Terminal { editor, .. } => from_readline(editor.readline(prompt)),
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
                Err(err) => from_readline(Err(err)),
            },
        }
    }
}

fn from_readline(read: Result<String, ReadlineError>) -> io::Result<Input> {
    match read {
        Ok(line) => Ok(Input::Line(line)),
        Err(ReadlineError::Eof) => Ok(Input::End),
        Err(ReadlineError::Interrupted) => Ok(Input::Interrupted),
        Err(ReadlineError::Io(err)) => Err(err),
        Err(err) => Err(io::Error::other(err)),
    }
}

/// What the editor thread is asked to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ask {
    /// The next prompt, after this prompt text (`ch14 >> `).
    Prompt(String),
    /// The answer to approval question `id`; `text` ends with the line the answer is typed on.
    Question { id: ApprovalId, text: String },
}

/// What the editor thread read, and for what.
pub(crate) type Read = (Ask, io::Result<Input>);

/// The line editor on its own blocking thread: it reads whenever it is asked and sends what it
/// read to the client's loop, which never blocks on the terminal.
pub(crate) fn spawn_editor(
    mut editor: LineEditor,
    reads: tokio::sync::mpsc::UnboundedSender<Read>,
) -> std::sync::mpsc::Sender<Ask> {
    let (asks, asked) = std::sync::mpsc::channel::<Ask>();
    let thread = std::thread::Builder::new()
        .name("line-editor".into())
        .spawn(move || {
            while let Ok(ask) = asked.recv() {
                let read = match &ask {
                    Ask::Prompt(prompt) => editor.read(prompt),
                    Ask::Question { text, .. } => {
                        // Only the last line is the editor's prompt; the lines above it are
                        // printed as they are (a long command is shown whole, wrapped).
                        let (above, last) = text.rsplit_once('\n').unwrap_or(("", text));
                        if !above.is_empty() {
                            eprintln!("{above}");
                        }
                        editor.read_answer(last)
                    }
                };
                if reads.send((ask, read)).is_err() {
                    break;
                }
            }
        });
    if let Err(err) = thread {
        tracing::warn!("cannot start the line editor's thread: {err}");
    }
    asks
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
