//! Schedules as a table, for `list_crons` and for `agent-tutorial cron list`.

use agent_workspace::Workspace;

use crate::error::CronError;
use crate::schedule::Schedule;
use crate::store::{CRONS_FILE, Store};
use crate::when::show_utc;

/// The prompt column shows at most this many characters.
const PROMPT_WIDTH: usize = 60;

/// One line per schedule under a header, columns padded to their widest cell; prompts on one
/// line, cut at 60 characters. `(no schedules)` when there is none.
pub fn format_table(schedules: &[Schedule]) -> String {
    if schedules.is_empty() {
        return "(no schedules)".to_string();
    }
    let header = ["ID", "KIND", "CRON", "TIMEZONE", "NEXT RUN (UTC)", "PROMPT"].map(String::from);
    let rows: Vec<[String; 6]> = schedules
        .iter()
        .map(|s| {
            [
                s.id.to_string(),
                s.durability.to_string(),
                s.cron.clone(),
                s.timezone.clone(),
                show_utc(s.next_fire_utc),
                one_line(&s.prompt),
            ]
        })
        .collect();
    let mut widths = [0usize; 6];
    for row in std::iter::once(&header).chain(&rows) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    std::iter::once(&header)
        .chain(&rows)
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The prompt on one line, any hidden character (control, bidi, invisible) shown as
/// `\u{…}`: a stored prompt is checked on load, but a table printed to a terminal must not
/// depend on that.
fn one_line(prompt: &str) -> String {
    let flat: String = prompt
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| {
            if agent_workspace::store::is_hidden_char(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    if flat.chars().count() <= PROMPT_WIDTH {
        return flat;
    }
    let cut: String = flat.chars().take(PROMPT_WIDTH - 3).collect();
    format!("{cut}...")
}

/// The durable schedules of `workspace` as a table, for `agent-tutorial cron list` (a new
/// process has no session schedules). Records that could not be read are counted below it.
pub fn durable_table(workspace: &Workspace) -> Result<String, CronError> {
    let contents = Store::new(workspace).read()?;
    let schedules: Vec<Schedule> = contents.schedules().cloned().collect();
    let mut table = format_table(&schedules);
    match contents.unreadable() {
        0 => {}
        1 => table.push_str(&format!("\n(1 unreadable record in {CRONS_FILE} skipped)")),
        n => table.push_str(&format!(
            "\n({n} unreadable records in {CRONS_FILE} skipped)"
        )),
    }
    Ok(table)
}
