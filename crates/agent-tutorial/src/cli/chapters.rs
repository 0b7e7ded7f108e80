//! `agent-tutorial chapters`.

use std::fmt::Write as _;

use crate::Profile;

/// The chapter table: built chapters first, then what is planned.
pub fn table() -> String {
    let mut out = String::from("chapter  profile  adds                      what it teaches\n");
    let row = |out: &mut String, p: Profile, note: &str| {
        let adds: Vec<&str> = p.adds.iter().map(|c| c.name()).collect();
        let _ = writeln!(
            out,
            "{:>7}  {:<7}  {:<24}  {}{note}",
            p.chapter,
            p.id(),
            adds.join(", "),
            p.title
        );
    };
    for p in Profile::built() {
        row(&mut out, p, "");
    }
    for p in Profile::planned() {
        row(&mut out, p, " (planned)");
    }
    out
}
