//! The `agent-tutorial` binary; everything lives in the library so tests can reach it.
//!
//! It is also every chapter's program: started under the name `chNN` (by the chapter launcher,
//! `chapters/launcher.rs`, or a link named so), it runs chapter NN, so the harness is linked
//! once for all chapters.

use std::ffi::OsStr;
use std::path::Path;

fn main() -> std::process::ExitCode {
    match std::env::args_os().next().as_deref().and_then(chapter_of) {
        Some(chapter) => agent_tutorial::cli::chapter_main(chapter),
        None => agent_tutorial::cli::main(),
    }
}

/// The chapter a program named `chNN` (any folder) runs; `None` for any other name.
fn chapter_of(argv0: &OsStr) -> Option<u8> {
    let name = Path::new(argv0).file_name()?.to_str()?;
    let digits = name.strip_prefix("ch")?;
    if digits.len() == 2 && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::chapter_of;
    use std::ffi::OsStr;

    #[test]
    fn only_a_program_named_ch_and_two_digits_is_a_chapter() {
        let cases = [
            ("ch01", Some(1)),
            ("/usr/local/bin/ch14", Some(14)),
            ("../target/debug/ch20", Some(20)),
            ("agent-tutorial", None),
            ("/x/ch01/agent-tutorial", None),
            ("ch1", None),
            ("ch001", None),
            ("ch+1", None),
            ("ch0a", None),
            ("xch01", None),
            ("", None),
        ];
        let got: Vec<_> = cases
            .iter()
            .map(|(n, _)| chapter_of(OsStr::new(n)))
            .collect();
        let want: Vec<_> = cases.iter().map(|(_, c)| *c).collect();
        assert_eq!(got, want);
    }
}
