//! Chapter 14: scheduled prompts run as user turns, between the person's turns.
//!
//! The scheduler fires nothing by itself. The REPL calls [`run_due`] when no turn is running
//! — before it shows the prompt, so right after each turn and after an empty line — and the
//! one-shot mode calls it after the prompt's turn. A schedule that comes due during a turn
//! therefore waits for that turn to end, and the first call of a process runs, once each, the
//! durable schedules missed while it was down (the scheduler folds their missed fire times).
//!
//! A read of the terminal blocks, so a schedule that comes due while the REPL waits for input
//! runs when the person submits a line (an empty one will do), not at its minute; see
//! `docs/ch14.md` for why.

use std::io::{self, Write};

use agent_core::{RunError, TurnOutcome};

use crate::Agent;

/// How a batch of scheduled runs ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batch {
    /// Every due schedule ran (or none was due); a failed run was reported and skipped.
    Done,
    /// The person cancelled a scheduled run (Ctrl-C): the rest of the batch was not run.
    Cancelled,
}

/// [`run_due_to`] with the marker and errors on stderr and the answers on stdout.
pub fn run_due(
    agent: &mut Agent,
    turn: impl FnMut(&mut Agent, &str) -> Result<TurnOutcome, RunError>,
) -> Batch {
    run_due_to(agent, turn, &mut io::stdout(), &mut io::stderr())
}

/// Asks the agent's scheduler what is due now and runs each as one user turn through `turn`:
/// the marker line goes to `err` first, then the turn's text is the marker line and the
/// prompt ([`agent_cron::Due::turn_text`]), and its answer goes to `out` like any answer.
/// Chapters without a scheduler run nothing. A scheduler that cannot be read is reported on
/// `err` and the REPL goes on: schedules never break the person's session.
pub fn run_due_to(
    agent: &mut Agent,
    mut turn: impl FnMut(&mut Agent, &str) -> Result<TurnOutcome, RunError>,
    out: &mut impl Write,
    err: &mut impl Write,
) -> Batch {
    let Some(scheduler) = agent.scheduler().cloned() else {
        return Batch::Done;
    };
    let due = match scheduler.due() {
        Ok(due) => due,
        Err(error) => {
            // `CronError`'s messages already name their cause: no chain, or it shows twice.
            let _ = writeln!(err, "[cron] cannot check the schedules: {error}");
            return Batch::Done;
        }
    };
    for run in due {
        let _ = writeln!(err, "{}", run.marker());
        let _ = err.flush();
        match turn(agent, &run.turn_text()) {
            Ok(outcome) => {
                let _ = writeln!(out, "{}", outcome.final_text);
            }
            Err(RunError::Cancelled) => {
                let _ = writeln!(err, "[cancel] scheduled run cancelled");
                return Batch::Cancelled;
            }
            Err(error) => {
                let _ = writeln!(err, "error: {}", super::hint::with_hint(&error, &error));
            }
        }
        let _ = out.flush();
    }
    Batch::Done
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use agent_cron::{Durability, ManualClock, NewSchedule, Timestamp};
    use agent_test_support::ScriptedModel;
    use agent_tools::Workspace;

    use super::*;
    use crate::{AgentDeps, Profile, build_agent};

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn agent(chapter: u8, dir: &std::path::Path, clock: &Arc<ManualClock>) -> Agent {
        let model = Arc::new(ScriptedModel::new([]));
        let mut deps = AgentDeps::new(model, Workspace::new(dir).unwrap());
        deps.cron_clock = clock.clone();
        build_agent(Profile::for_chapter(chapter).unwrap(), deps).unwrap()
    }

    fn schedule(agent: &Agent, cron: &str, prompt: &str) {
        let new = NewSchedule {
            cron: cron.to_string(),
            prompt: prompt.to_string(),
            timezone: None,
            durability: Durability::Session,
        };
        agent.scheduler().unwrap().add(new).unwrap();
    }

    /// Runs a batch with a stand-in turn that records its text and answers `done <n>`.
    fn run(agent: &mut Agent, fail: Option<RunError>) -> (Batch, Vec<String>, String, String) {
        let mut texts = Vec::new();
        let mut fail = fail;
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let batch = run_due_to(
            agent,
            |_, text| {
                texts.push(text.to_string());
                match fail.take() {
                    Some(error) => Err(error),
                    None => Ok(TurnOutcome {
                        final_text: format!("done {}", texts.len()),
                        requests: 1,
                        tool_calls: 0,
                        stopped: None,
                    }),
                }
            },
            &mut out,
            &mut err,
        );
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
        (batch, texts, text(out), text(err))
    }

    #[test]
    fn due_schedules_run_in_order_marker_on_stderr_answer_on_stdout() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(at("2026-03-02T08:59:30Z")));
        let mut agent = agent(14, dir.path(), &clock);
        schedule(&agent, "0 9 * * *", "check the build");
        schedule(&agent, "30 8 * * *", "not due yet");
        clock.set(at("2026-03-02T09:00:00Z"));

        let (batch, texts, out, err) = run(&mut agent, None);

        let marker = "[scheduled run of cron s1 (`0 9 * * *` UTC), due 2026-03-02 09:00 UTC]";
        assert_eq!(batch, Batch::Done);
        assert_eq!(texts, vec![format!("{marker}\ncheck the build")]);
        assert_eq!(err, format!("{marker}\n"));
        assert_eq!(out, "done 1\n");
        // Asked again at the same instant: nothing is due twice.
        assert_eq!(run(&mut agent, None).1, Vec::<String>::new());
    }

    #[test]
    fn a_cancelled_run_stops_the_batch_and_a_failed_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(at("2026-03-02T08:00:00Z")));
        let mut agent = agent(14, dir.path(), &clock);
        schedule(&agent, "0 9 * * *", "first");
        schedule(&agent, "0 9 * * *", "second");
        clock.set(at("2026-03-02T09:00:00Z"));

        let (batch, texts, _, err) = run(&mut agent, Some(RunError::Cancelled));
        assert_eq!(batch, Batch::Cancelled);
        assert_eq!(texts.len(), 1);
        assert_eq!(
            err,
            "[scheduled run of cron s1 (`0 9 * * *` UTC), due 2026-03-02 09:00 UTC]\n\
             [cancel] scheduled run cancelled\n"
        );

        clock.set(at("2026-03-03T09:00:00Z"));
        let failure = RunError::TurnLimit { limit: 1 };
        let (batch, texts, out, err) = run(&mut agent, Some(failure));
        assert_eq!(batch, Batch::Done);
        assert_eq!(texts.len(), 2);
        assert_eq!(out, "done 2\n");
        assert_eq!(
            err.lines().nth(1),
            Some(
                "error: turn limit reached: the model still asked for tools after 1 requests; raise --max-turns or narrow the task"
            )
        );
    }

    #[test]
    fn chapters_before_14_have_no_scheduler_and_run_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(at("2026-03-02T08:00:00Z")));
        let mut agent = agent(13, dir.path(), &clock);
        assert!(agent.scheduler().is_none());
        assert_eq!(
            run(&mut agent, None),
            (Batch::Done, vec![], String::new(), String::new())
        );
    }

    #[test]
    fn an_unreadable_schedule_file_is_reported_and_the_repl_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(at("2026-03-02T08:00:00Z")));
        let mut agent = agent(14, dir.path(), &clock);
        std::fs::create_dir_all(dir.path().join(".agent_tutorial/crons.json")).unwrap();

        let (batch, texts, out, err) = run(&mut agent, None);

        assert_eq!((batch, texts, out), (Batch::Done, vec![], String::new()));
        assert_eq!(
            err,
            "[cron] cannot check the schedules: cannot use the schedule file: \
             `.agent_tutorial/crons.json` is a directory, not a regular file\n"
        );
    }
}
