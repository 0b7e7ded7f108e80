//! Ctrl-C from chapter 11 on: the first one cancels the running turn, a second one (while it
//! is cancelling, or at the prompt) ends the process with exit code 130.
//!
//! Chapters 1–10 install nothing, so SIGINT keeps its default action there: the process dies.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use agent_core::Cancellation;
use tokio::signal::unix::{SignalKind, signal};

/// The exit code of a run ended by Ctrl-C (128 + SIGINT), as shells report it.
pub const EXIT_INTERRUPTED: u8 = 130;

/// The stderr line printed when a turn starts cancelling.
pub const CANCELLING_NOTICE: &str = "[cancel] stopping the turn (Ctrl-C again to quit)";

/// What a Ctrl-C means right now.
#[derive(Debug)]
enum Phase {
    /// No turn is running: Ctrl-C quits.
    Idle,
    /// A turn is running: Ctrl-C cancels it through this handle.
    Running(Cancellation),
    /// The turn was asked to stop and has not returned yet: Ctrl-C quits.
    Cancelling,
}

/// What must happen before the process leaves on a second Ctrl-C: `exit` runs no destructor,
/// so whatever a drop would have ended (chapter 13's background jobs) is ended here.
type OnQuit = Box<dyn Fn() + Send + Sync>;

/// The installed SIGINT handler, and what it would do now.
#[derive(Clone)]
pub(crate) struct Interrupts {
    phase: Arc<Mutex<Phase>>,
    on_quit: Arc<Mutex<Vec<OnQuit>>>,
}

impl std::fmt::Debug for Interrupts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interrupts")
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}

/// What [`Interrupts::on_interrupt`] decided.
#[derive(Debug)]
pub(crate) enum Reaction {
    /// Cancel the running turn through this handle.
    CancelTurn(Cancellation),
    Quit,
}

impl Interrupts {
    /// Takes SIGINT over for the rest of the process. The handler is registered before this
    /// returns, so a Ctrl-C during the first turn already cancels it.
    pub(crate) fn install(rt: &tokio::runtime::Runtime) -> std::io::Result<Self> {
        let interrupts = Self::unattached();
        let mut signals = {
            let _context = rt.enter();
            signal(SignalKind::interrupt())?
        };
        let handler = interrupts.clone();
        rt.spawn(async move {
            while signals.recv().await.is_some() {
                match handler.on_interrupt() {
                    Reaction::CancelTurn(cancel) => {
                        // Said before the turn wakes up, so it comes before the turn's
                        // `[result] Error [cancelled]` line, always.
                        let _ = writeln!(std::io::stderr(), "{CANCELLING_NOTICE}");
                        cancel.cancel();
                    }
                    Reaction::Quit => {
                        // Nothing of the turn is left running (it was dropped on the first
                        // Ctrl-C, or there is none); what outlives turns (background jobs)
                        // is ended by the quit hooks, since `exit` runs no destructor.
                        handler.run_quit_hooks();
                        let _ = std::io::stderr().flush();
                        std::process::exit(i32::from(EXIT_INTERRUPTED));
                    }
                }
            }
        });
        Ok(interrupts)
    }

    /// The state machine without a signal behind it (tests drive it by hand).
    fn unattached() -> Self {
        Self {
            phase: Arc::new(Mutex::new(Phase::Idle)),
            on_quit: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Runs `hook` before the process leaves on Ctrl-C.
    pub(crate) fn on_quit(&self, hook: impl Fn() + Send + Sync + 'static) {
        self.on_quit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Box::new(hook));
    }

    fn run_quit_hooks(&self) {
        for hook in self
            .on_quit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            hook();
        }
    }

    /// A turn starts: the handle a Ctrl-C will cancel, until the guard is dropped.
    pub(crate) fn turn(&self) -> TurnGuard {
        let cancel = Cancellation::new();
        *self.lock() = Phase::Running(cancel.clone());
        TurnGuard {
            interrupts: self.clone(),
            cancel,
        }
    }

    /// One Ctrl-C: cancel the running turn (the caller calls `cancel`), or quit.
    pub(crate) fn on_interrupt(&self) -> Reaction {
        let mut phase = self.lock();
        match std::mem::replace(&mut *phase, Phase::Cancelling) {
            Phase::Running(cancel) => Reaction::CancelTurn(cancel),
            Phase::Idle | Phase::Cancelling => Reaction::Quit,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Phase> {
        self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The running turn's cancellation; dropping it returns Ctrl-C to "quit".
#[derive(Debug)]
pub(crate) struct TurnGuard {
    interrupts: Interrupts,
    cancel: Cancellation,
}

impl TurnGuard {
    pub(crate) fn cancellation(&self) -> &Cancellation {
        &self.cancel
    }
}

impl Drop for TurnGuard {
    fn drop(&mut self) {
        *self.interrupts.lock() = Phase::Idle;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quitting_runs_the_quit_hooks() {
        let interrupts = Interrupts::unattached();
        let ran = Arc::new(Mutex::new(0));
        let counter = ran.clone();
        interrupts.on_quit(move || *counter.lock().unwrap() += 1);
        assert!(matches!(interrupts.on_interrupt(), Reaction::Quit));
        interrupts.run_quit_hooks();
        assert_eq!(*ran.lock().unwrap(), 1);
    }

    #[test]
    fn the_first_ctrl_c_cancels_the_turn_and_the_second_quits() {
        let interrupts = Interrupts::unattached();
        let turn = interrupts.turn();
        let Reaction::CancelTurn(cancel) = interrupts.on_interrupt() else {
            panic!("the first Ctrl-C during a turn must cancel it");
        };
        cancel.cancel();
        assert!(turn.cancellation().is_cancelled());
        assert!(matches!(interrupts.on_interrupt(), Reaction::Quit));
    }

    #[test]
    fn ctrl_c_at_the_prompt_quits_and_each_turn_gets_a_fresh_handle() {
        let interrupts = Interrupts::unattached();
        assert!(matches!(interrupts.on_interrupt(), Reaction::Quit));
        let first = interrupts.turn();
        let Reaction::CancelTurn(cancel) = interrupts.on_interrupt() else {
            panic!("a Ctrl-C during a turn must cancel it");
        };
        cancel.cancel();
        drop(first);
        let second = interrupts.turn();
        assert!(!second.cancellation().is_cancelled());
        drop(second);
        assert!(matches!(interrupts.on_interrupt(), Reaction::Quit));
    }
}
