//! The one terminal sanitizer: text the harness did not write itself (a model's answer, a tool
//! line, a stored task subject, a schedule's prompt, a hook command, an approval question)
//! must only *show* on a terminal, never drive it.
//!
//! A raw `ESC ] 52 ; c ; … BEL` (OSC 52) sets the user's clipboard, `ESC [ 2 J` clears the
//! screen, `ESC P … ESC \` (DCS) talks to the terminal itself, and the one-byte C1 forms
//! (U+009B for CSI, U+009D for OSC, U+0090 for DCS) do the same on terminals that honour them.
//! A right-to-left override (U+202E) reorders what follows; invisible characters (a zero-width
//! space, a variation selector such as U+FE0F or U+E0101, the Hangul fillers U+3164 and
//! U+115F, the combining grapheme joiner U+034F, the tag characters) hide a difference in
//! plain sight. Every such character is replaced by a visible escape; everything else is kept
//! as is, backslashes included, so ordinary text reads as written. Our own styling (colour,
//! the spinner) is written by our own code after sanitizing, never passed through it.

/// Characters that change how text is laid out or read without being visible: bidi
/// embeddings, overrides, isolates and marks; zero-width characters; line/paragraph
/// separators; the soft hyphen and the BOM; variation selectors; fillers that render as
/// nothing (Hangul, Khmer, braille blank); format characters (Unicode category Cf) and the
/// invisible tag characters.
pub fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{034f}'
            | '\u{061c}'
            | '\u{0600}'..='\u{0605}'
            | '\u{06dd}'
            | '\u{070f}'
            | '\u{08e2}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{2800}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e007f}'
            | '\u{e0100}'..='\u{e01ef}'
    )
}

/// Whether `c` would be shown escaped by [`escape_controls`]: a C0 or C1 control, DEL, or an
/// invisible character ([`is_invisible`]).
pub fn needs_escape(c: char) -> bool {
    c.is_control() || is_invisible(c)
}

/// The visible form of one character: `None` when it is shown as itself.
fn escape_char(c: char) -> Option<String> {
    match c {
        '\u{1b}' => Some("\\e".into()),
        '\n' => Some("\\n".into()),
        '\r' => Some("\\r".into()),
        '\t' => Some("\\t".into()),
        '\0'..='\u{1f}' | '\u{7f}' => Some(format!("\\x{:02x}", u32::from(c))),
        '\u{80}'..='\u{9f}' => Some(format!("\\u{{{:x}}}", u32::from(c))),
        c if is_invisible(c) => Some(format!("\\u{{{:x}}}", u32::from(c))),
        _ => None,
    }
}

/// `text` on one line, with every control, bidi and invisible character replaced by a
/// visible escape (`\e`, `\n`, `\r`, `\t`, `\x07`, `\u{202e}`, …). Nothing is dropped or
/// shortened. For one-line fields: an approval summary, a listing's column, a file name.
pub fn escape_controls(text: &str) -> String {
    escape_keeping(text, |_| false)
}

/// `text` for the terminal as lines: like [`escape_controls`], but a line feed and a tab are
/// kept as themselves, so an answer, a listing or a rendered prompt keeps its layout. A
/// carriage return is still escaped (it would let a line overwrite what came before it).
/// Every printer of text we did not write ourselves goes through this or [`escape_controls`].
pub fn sanitize(text: &str) -> String {
    escape_keeping(text, |c| matches!(c, '\n' | '\t'))
}

fn escape_keeping(text: &str, keep: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match escape_char(c).filter(|_| !keep(c)) {
            Some(escape) => out.push_str(&escape),
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_and_backslashes_are_kept_as_typed() {
        assert_eq!(
            escape_controls(r#"grep -n "a\|b" src/*.rs  | wc -l"#),
            r#"grep -n "a\|b" src/*.rs  | wc -l"#
        );
        assert_eq!(escape_controls("café ✓ 你好"), "café ✓ 你好");
    }

    #[test]
    fn terminal_controls_become_visible_escapes() {
        assert_eq!(
            escape_controls("ls\u{1b}[2K\r\u{1b}]0;title\u{7}\n\trm x\u{0}\u{7f}\u{9b}"),
            r"ls\e[2K\r\e]0;title\x07\n\trm x\x00\x7f\u{9b}"
        );
    }

    #[test]
    fn an_osc_52_clipboard_write_is_shown_not_run() {
        let answer = "Done.\u{1b}]52;c;Y3VybCBldmlsIHwgc2g=\u{7}\nBye";
        assert_eq!(
            sanitize(answer),
            "Done.\\e]52;c;Y3VybCBldmlsIHwgc2g=\\x07\nBye"
        );
        // The one-byte C1 OSC and the string terminator ST.
        assert_eq!(sanitize("\u{9d}52;c;eA==\u{9c}"), r"\u{9d}52;c;eA==\u{9c}");
    }

    #[test]
    fn a_csi_clear_screen_and_a_dcs_are_shown_not_run() {
        assert_eq!(
            sanitize("ok\u{1b}[2J\u{1b}[H\u{1b}P+q544e\u{1b}\\\r\n"),
            "ok\\e[2J\\e[H\\eP+q544e\\e\\\\r\n"
        );
        assert_eq!(sanitize("\u{9b}2J\u{90}x"), r"\u{9b}2J\u{90}x");
    }

    #[test]
    fn bidi_overrides_are_shown_escaped() {
        assert_eq!(
            escape_controls("a\u{202e}b\u{2066}c\u{200b}d\u{feff}e\u{e0041}f\u{00ad}g"),
            r"a\u{202e}b\u{2066}c\u{200b}d\u{feff}e\u{e0041}f\u{ad}g"
        );
        assert_eq!(
            sanitize("invoice\u{202e}fdp.exe"),
            r"invoice\u{202e}fdp.exe"
        );
    }

    #[test]
    fn invisible_characters_are_shown_escaped() {
        assert_eq!(
            sanitize("a\u{fe0f}b\u{e0101}c\u{3164}d\u{115f}e\u{34f}f\u{ffa0}g\u{2800}h"),
            r"a\u{fe0f}b\u{e0101}c\u{3164}d\u{115f}e\u{34f}f\u{ffa0}g\u{2800}h"
        );
    }

    #[test]
    fn sanitize_keeps_lines_and_tabs_but_not_carriage_returns() {
        assert_eq!(sanitize("a\tb\nc\r\n"), "a\tb\nc\\r\n");
        assert_eq!(escape_controls("a\tb\nc"), r"a\tb\nc");
    }

    #[test]
    fn sanitizing_is_idempotent() {
        let raw = "x\u{1b}[31m\u{202e}\u{fe0f}\n\u{7}";
        assert_eq!(sanitize(&sanitize(raw)), sanitize(raw));
        assert_eq!(escape_controls(&escape_controls(raw)), escape_controls(raw));
    }
}
