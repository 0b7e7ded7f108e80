//! The terminal as a client of the session: it renders the session's events, asks the person
//! what the session asks (prompts, approval questions) through the line editor's thread, and
//! turns keys and signals into submissions. It never blocks on the terminal itself.

use std::collections::{BTreeSet, VecDeque};
use std::io::{IsTerminal, Write};
use std::sync::Arc;

use agent_core::{AgentEvent, AgentId, EventEnvelope, RunError, TurnId};
use agent_harness::session::{
    ApprovalId, Closed, Decision, EndReason, InterruptFrom, Op, SessionEvent, SessionHandle,
};
use agent_policy::ApprovalRequest;
use tokio::sync::mpsc;

use super::deps::question;
use super::line_editor::{Ask, Input, Read};
use super::output::{OutputFormat, Summary, event_line};
use crate::observer::{CliObserver, StreamOutput};

/// The exit code of a run ended by Ctrl-C (128 + SIGINT), as shells report it.
pub const EXIT_INTERRUPTED: u8 = 130;

/// The stderr line printed when a turn starts cancelling.
pub const CANCELLING_NOTICE: &str = "[cancel] stopping the turn (Ctrl-C again to quit)";

/// The stderr line after a first Ctrl-C at the prompt (it cleared the line).
pub const AT_PROMPT_NOTICE: &str = "[cancel] (Ctrl-C again to quit)";

/// Where the client's text goes: above the line being typed when a line editor runs on a
/// terminal, else straight to stdout or stderr.
pub(crate) struct Screen {
    printer: Option<Box<dyn rustyline::ExternalPrinter + Send>>,
    stdout_tty: bool,
    stderr_tty: bool,
    /// A streamed answer's line is open on stdout (`--stream`): on a terminal, a stderr line
    /// printed now starts on a line of its own.
    half_line: bool,
}

impl Screen {
    pub(crate) fn new(printer: Option<Box<dyn rustyline::ExternalPrinter + Send>>) -> Self {
        Self {
            printer,
            stdout_tty: std::io::stdout().is_terminal(),
            stderr_tty: std::io::stderr().is_terminal(),
            half_line: false,
        }
    }

    /// An answer: stdout. Like every line of the session, it passes the terminal sanitizer
    /// here, in the one place the client prints: an answer, a tool line or a marker quotes
    /// text the model or a repository chose, and none of our own lines carry styling.
    fn out(&mut self, text: &str) {
        let text = &agent_policy::sanitize(text);
        match &mut self.printer {
            Some(printer) if self.stdout_tty => {
                let _ = printer.print(text.to_string());
            }
            _ => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(text.as_bytes());
                let _ = out.flush();
            }
        }
    }

    /// Everything else: stderr (sanitized like [`Self::out`]).
    fn err(&mut self, text: &str) {
        let text = &agent_policy::sanitize(text);
        let text = &if std::mem::take(&mut self.half_line) && self.stdout_tty && self.stderr_tty {
            format!("\n{text}")
        } else {
            text.to_string()
        };
        match &mut self.printer {
            Some(printer) if self.stderr_tty => {
                let _ = printer.print(text.to_string());
            }
            _ => {
                let _ = std::io::stderr().lock().write_all(text.as_bytes());
            }
        }
    }
}

/// `[agent] ` when the session has more than one agent; nothing for the lead alone, so a
/// one-agent session prints as it always did.
fn prefix(agents: usize, agent: &AgentId) -> String {
    if agents > 1 {
        format!("[{agent}] ")
    } else {
        String::new()
    }
}

/// `text`'s lines, each led by who said it when the session has several agents.
pub(crate) fn said_by(agents: usize, agent: &AgentId, text: &str) -> String {
    let prefix = prefix(agents, agent);
    if prefix.is_empty() {
        return text.to_string();
    }
    text.lines()
        .map(|line| format!("{prefix}{line}\n"))
        .collect()
}

/// What the client is, for what it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClientMode {
    /// `--prompt`: the prompt's turn ends the run; its failure is the run's error.
    OneShot,
    /// The REPL: `prompt` is shown when the session is idle.
    Interactive,
}

/// The terminal client of one session.
pub(crate) struct Client {
    pub(crate) handle: SessionHandle,
    pub(crate) lead: AgentId,
    pub(crate) observer: Arc<CliObserver>,
    pub(crate) screen: Screen,
    pub(crate) mode: ClientMode,
    /// The REPL's prompt text (`ch14 >> `).
    pub(crate) prompt: String,
    /// How many agents the session has: with more than one, each line names who said it.
    pub(crate) agents: usize,
    /// Asks the line editor's thread to read (interactive mode).
    pub(crate) asks: Option<std::sync::mpsc::Sender<Ask>>,
    /// What the editor is reading now.
    pub(crate) reading: Option<Ask>,
    /// Questions not shown yet, oldest first.
    pub(crate) questions: VecDeque<(ApprovalId, AgentId, ApprovalRequest)>,
    /// The session said it is idle and nothing was submitted since.
    pub(crate) idle: bool,
    /// The last thing read at the prompt was a Ctrl-C.
    pub(crate) interrupted_at_prompt: bool,
    /// Turns that a schedule started (their cancel line says so).
    pub(crate) scheduled: BTreeSet<(AgentId, TurnId)>,
    /// The wrap width of approval questions.
    pub(crate) width: usize,
    /// The person ended the session (`exit`, end of input): nothing more is read.
    pub(crate) closing: bool,
    /// What stdout gets (`--output-format`).
    pub(crate) format: OutputFormat,
    /// What `--output-format json` prints at the end, counted as the events pass.
    pub(crate) summary: Arc<std::sync::Mutex<Summary>>,
    /// Chapter 20: what the slash commands read; `None`: a `/line` is a prompt.
    pub(crate) slash: Option<super::slash::SlashContext>,
    /// Requests and tokens so far, every agent's (`/cost`).
    pub(crate) cost: Summary,
}

impl Client {
    /// Renders events and reads input until the session ends; returns why it ended.
    pub(crate) async fn run(
        mut self,
        mut events: mpsc::UnboundedReceiver<SessionEvent>,
        mut reads: mpsc::UnboundedReceiver<Read>,
    ) -> EndReason {
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Some(SessionEvent::Ended(reason)) => return reason,
                    Some(event) => self.on_event(event),
                    None => return EndReason::Done,
                },
                Some((ask, read)) = reads.recv() => self.on_read(ask, read),
            }
        }
    }

    fn prefix(&self, agent: &AgentId) -> String {
        prefix(self.agents, agent)
    }

    fn lines_of(&self, agent: &AgentId, text: &str) -> String {
        said_by(self.agents, agent, text)
    }

    fn on_event(&mut self, event: SessionEvent) {
        match event {
            SessionEvent::Agent(envelope) => self.on_agent_event(envelope),
            SessionEvent::ApprovalRequested { id, agent, request } => {
                if matches!(self.reading, Some(Ask::Prompt(_))) {
                    // The prompt is open (a scheduled turn asks): the question is shown above
                    // it, and the line typed there answers it.
                    let text = format!(
                        "{}{}\n",
                        self.prefix(&agent),
                        question(&request, self.width)
                    );
                    self.screen.err(&text);
                }
                self.questions.push_back((id, agent, request));
                self.ask_next();
            }
            SessionEvent::ApprovalClosed { id, closed } => {
                self.questions.retain(|(q, _, _)| *q != id);
                if closed == Closed::Abandoned {
                    self.screen
                        .err(&format!("[cancel] question {id} withdrawn\n"));
                }
            }
            SessionEvent::TurnEnded {
                agent,
                turn,
                result,
            } => self.on_turn_ended(&agent, turn, &result),
            SessionEvent::Cancelling { agent } => {
                let line = self.lines_of(&agent, &format!("{CANCELLING_NOTICE}\n"));
                self.screen.err(&line);
            }
            SessionEvent::CronFailed { agent, error } => {
                let line = format!("[cron] cannot check the schedules: {error}\n");
                let line = self.lines_of(&agent, &line);
                self.screen.err(&line);
            }
            SessionEvent::Idle => {
                self.idle = true;
                self.ask_next();
            }
            SessionEvent::Ended(_) => {}
        }
    }

    fn on_agent_event(&mut self, envelope: EventEnvelope) {
        self.cost.record(&envelope);
        match self.format {
            OutputFormat::Text => {}
            // These print their own output; `--record` and the cache report are still kept.
            OutputFormat::Json | OutputFormat::StreamJson => self.observer.keep(&envelope.event),
        }
        match self.format {
            OutputFormat::Text => {}
            OutputFormat::Json => {
                self.summary
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .record(&envelope);
                return;
            }
            OutputFormat::StreamJson => {
                // Already escaped for the terminal (`output::json_text`).
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", event_line(&envelope));
                let _ = out.flush();
                return;
            }
        }
        let EventEnvelope {
            agent, turn, event, ..
        } = envelope;
        // `--stream`: the answer as it arrives, for a session of one agent (several would
        // interleave their half lines).
        if self.agents == 1 {
            let mut shown = false;
            for output in self.observer.stream_output(&event) {
                match output {
                    StreamOutput::Text(text) => {
                        self.screen.out(&text);
                        self.screen.half_line = !text.ends_with('\n');
                    }
                    StreamOutput::Notice(line) => self.screen.err(&line),
                    StreamOutput::AlreadyShown => shown = true,
                }
            }
            if shown {
                return;
            }
        }
        match &event {
            AgentEvent::TurnAnswered { text } => {
                let text = self.lines_of(&agent, &format!("{text}\n"));
                self.screen.out(&text);
                return;
            }
            // Told by `SessionEvent::TurnEnded`, which carries the typed error (for the hint).
            AgentEvent::TurnFailed { .. } | AgentEvent::TurnCancelled => return,
            // Written to the audit log where it was decided (`AuditedEvents`); nothing to show.
            AgentEvent::PermissionDecided(_) => return,
            AgentEvent::ScheduleDue { .. } => {
                // A turn runs now, even if the prompt is still open.
                self.idle = false;
                if let Some(turn) = turn {
                    self.scheduled.insert((agent.clone(), turn));
                }
            }
            _ => {}
        }
        if let Some(text) = self.observer.render(&event) {
            let text = self.lines_of(&agent, &text);
            self.screen.err(&text);
        }
    }

    /// A failed or cancelled turn is said on stderr; the one-shot prompt's own failure is the
    /// run's error instead, printed once on exit.
    fn on_turn_ended(&mut self, agent: &AgentId, turn: TurnId, result: &Result<(), RunError>) {
        let scheduled = self.scheduled.remove(&(agent.clone(), turn));
        let the_prompt = self.mode == ClientMode::OneShot
            && turn == TurnId(1)
            && *agent == self.lead
            && !scheduled;
        let line = match result {
            Ok(()) => return,
            Err(_) if the_prompt => return,
            Err(RunError::Cancelled) if scheduled => "[cancel] scheduled run cancelled".to_string(),
            Err(RunError::Cancelled) => "[cancel] turn cancelled".to_string(),
            Err(error) => format!("error: {}", super::hint::with_hint(error, error)),
        };
        let line = self.lines_of(agent, &format!("{line}\n"));
        self.screen.err(&line);
    }

    /// Starts the next read, if the editor is free: a waiting question first, else the prompt
    /// when the session is idle.
    fn ask_next(&mut self) {
        if self.reading.is_some() || self.closing {
            return;
        }
        let Some(asks) = &self.asks else { return };
        let ask = if let Some((id, agent, request)) = self.questions.pop_front() {
            let text = format!("{}{}", self.prefix(&agent), question(&request, self.width));
            Ask::Question { id, text }
        } else if self.idle {
            Ask::Prompt(self.prompt.clone())
        } else {
            return;
        };
        if asks.send(ask.clone()).is_ok() {
            self.reading = Some(ask);
        }
    }

    fn submit(&mut self, op: Op) {
        if !self.handle.submit(op) {
            tracing::debug!("the session has ended; input dropped");
        }
    }

    fn on_read(&mut self, ask: Ask, read: std::io::Result<Input>) {
        self.reading = None;
        let input = match read {
            Ok(input) => input,
            Err(err) => {
                self.screen
                    .err(&format!("error: cannot read the terminal: {err}\n"));
                Input::End
            }
        };
        match ask {
            Ask::Question { id, .. } => {
                let decision = match input {
                    Input::Line(answer) => match answer.trim().to_ascii_lowercase().as_str() {
                        "y" | "yes" => Decision::Approve,
                        _ => Decision::Decline,
                    },
                    Input::End => Decision::Decline,
                    Input::Interrupted => {
                        self.screen
                            .err(&format!("[cancel] question {id} cancelled\n"));
                        Decision::Cancel
                    }
                };
                self.submit(Op::Approval { id, decision });
            }
            Ask::Prompt(_) => self.on_prompt(input),
        }
        self.ask_next();
    }

    fn on_prompt(&mut self, input: Input) {
        let interrupted_before = std::mem::take(&mut self.interrupted_at_prompt);
        // A question was shown above the open prompt: this line is its answer.
        if let Some((id, _, _)) = self.questions.pop_front() {
            let decision = match input {
                Input::Line(answer) => match answer.trim().to_ascii_lowercase().as_str() {
                    "y" | "yes" => Decision::Approve,
                    _ => Decision::Decline,
                },
                Input::End => Decision::Decline,
                Input::Interrupted => Decision::Cancel,
            };
            self.submit(Op::Approval { id, decision });
            return;
        }
        if let (Input::Line(line), Some(context)) = (&input, &self.slash) {
            let parsed = super::slash::parse(line);
            if let Some(outcome) = super::slash::run(parsed, context, &self.lead, &self.cost) {
                return self.on_slash(outcome);
            }
        }
        match input {
            Input::Line(line) => match line.trim() {
                "" => {}
                "exit" | "quit" => {
                    self.closing = true;
                    self.submit(Op::Shutdown(EndReason::Done));
                }
                text => {
                    self.idle = false;
                    let op = Op::Prompt {
                        agent: self.lead.clone(),
                        text: text.to_string(),
                    };
                    self.submit(op);
                }
            },
            Input::End => {
                self.screen.err("\n");
                self.closing = true;
                self.submit(Op::Shutdown(EndReason::Done));
            }
            // While a turn runs (a scheduled one, with the prompt still open), Ctrl-C is for
            // the turn; at an idle prompt the first one clears the line, the second quits.
            Input::Interrupted if !self.idle || interrupted_before => {
                // At an idle prompt this second one ends the session: nothing more is read.
                self.closing = self.idle;
                self.submit(Op::Interrupt(InterruptFrom::Keyboard));
            }
            Input::Interrupted => {
                self.interrupted_at_prompt = true;
                self.screen.err(&format!("{AT_PROMPT_NOTICE}\n"));
            }
        }
    }
}

impl Client {
    /// Shows what a slash command said and submits what it asks of the session.
    fn on_slash(&mut self, outcome: super::slash::Outcome) {
        self.screen.out(&outcome.out);
        match outcome.op {
            // The prompt can be open while a scheduled turn runs: its history is in use.
            Some(Op::Clear(_)) if !self.idle => {
                self.screen
                    .err("a turn is running: /clear when it has ended\n");
            }
            Some(op) => {
                self.screen.err(&outcome.err);
                self.closing = matches!(op, Op::Shutdown(_));
                self.submit(op);
            }
            None => self.screen.err(&outcome.err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_several_agents_each_line_names_who_said_it_and_the_lead_alone_prints_as_before() {
        let helper = AgentId::new("helper").unwrap();
        let text = "[tool] bash {}\n[result] ok: 1 line, 3 bytes\n";
        assert_eq!(
            said_by(2, &helper, text),
            "[helper] [tool] bash {}\n[helper] [result] ok: 1 line, 3 bytes\n"
        );
        assert_eq!(said_by(1, &AgentId::lead(), text), text);
    }
}
