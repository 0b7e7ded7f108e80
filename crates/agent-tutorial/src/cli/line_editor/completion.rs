//! Tab completion at the prompt: slash command names from chapter 20 on, from the one table
//! `/help` prints (`cli::slash::COMMANDS`); nothing before.

use rustyline::completion::Completer;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

/// What Tab completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Completion {
    /// Slash command names (chapter 20).
    SlashCommands,
    /// Nothing (chapters 11–19: a `/line` is a prompt).
    Off,
}

/// rustyline's helper: completes a first word starting with `/`, and does nothing else.
pub(crate) struct SlashHelper(pub(crate) Completion);

impl SlashHelper {
    /// The completions of the text before the cursor, replacing it from its start.
    fn candidates(&self, before_cursor: &str) -> Vec<String> {
        if self.0 == Completion::Off || before_cursor.contains(char::is_whitespace) {
            return Vec::new();
        }
        crate::cli::slash::completions(before_cursor)
    }
}

impl Completer for SlashHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let before = line.get(..pos).unwrap_or(line);
        Ok((0, self.candidates(before)))
    }
}

impl Hinter for SlashHelper {
    type Hint = String;
}

impl Highlighter for SlashHelper {}

impl Validator for SlashHelper {}

impl Helper for SlashHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_first_word_after_a_slash_is_completed_and_only_from_chapter_20() {
        let on = SlashHelper(Completion::SlashCommands);
        assert_eq!(on.candidates("/cl"), ["/clear"]);
        assert_eq!(on.candidates("/m"), ["/memory", "/mcp"]);
        assert_eq!(on.candidates("/clear x"), Vec::<String>::new());
        assert_eq!(on.candidates("fix /cl"), Vec::<String>::new());
        assert_eq!(
            SlashHelper(Completion::Off).candidates("/cl"),
            Vec::<String>::new()
        );
    }
}
