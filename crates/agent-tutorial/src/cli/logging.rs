//! The process's log output: `-v`/`RUST_LOG` levels on stderr, the HTTP and TLS libraries
//! kept silent whatever they say, every field through the terminal sanitizer, colour only on a
//! terminal without `NO_COLOR`.
//!
//! Apart from the entry points (`mod.rs`) because it is set up once per process and is a
//! security boundary of its own: what these filters let through is what a log line can leak
//! (the key in a request header) or inject (an escape sequence in stored text).

/// Log targets that never print, whatever `-v` or `RUST_LOG` say: the HTTP and TLS stack can log
/// request and reply contents (headers, error bodies), and a server may echo the key in them.
const SILENCED_TARGETS: [&str; 8] = [
    "async_openai",
    "reqwest",
    "hyper",
    "hyper_util",
    "h2",
    "rustls",
    "tower",
    "tower_http",
];

fn silenced(target: &str) -> bool {
    SILENCED_TARGETS.iter().any(|silenced| {
        target
            .strip_prefix(silenced)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    })
}

/// Whether log lines may carry colour codes: only on a terminal, and not when `NO_COLOR` is set
/// to anything non-empty (<https://no-color.org>).
fn colored(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    terminal && no_color.is_none_or(std::ffi::OsStr::is_empty)
}

/// Installs the stderr log output; `verbose` counts the `-v` flags.
pub(super) fn init_tracing(verbose: u8) {
    use tracing_subscriber::field::MakeExt as _;
    use tracing_subscriber::layer::{Layer as _, SubscriberExt as _};
    use tracing_subscriber::util::SubscriberInitExt as _;
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let levels = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // A separate filter rather than `target=off` directives: a more specific RUST_LOG
    // directive (`hyper::proto=trace`) would win over those.
    let not_silenced = tracing_subscriber::filter::filter_fn(|meta| !silenced(meta.target()));
    // Every field passes the terminal sanitizer: a log line quotes stored text (a skipped
    // record, a server's message) that an attacker wrote, and a raw escape sequence or bidi
    // control in it must reach the terminal as text, like everything else we print.
    let fields = tracing_subscriber::fmt::format::debug_fn(|writer, field, value| {
        let text = agent_policy::escape_controls(&format!("{value:?}"));
        if field.name() == "message" {
            write!(writer, "{text}")
        } else {
            write!(writer, "{field}={text}")
        }
    })
    .delimited(" ");
    let output = tracing_subscriber::fmt::layer()
        .fmt_fields(fields)
        .with_writer(std::io::stderr)
        .with_ansi(colored(
            std::io::IsTerminal::is_terminal(&std::io::stderr()),
            std::env::var_os("NO_COLOR").as_deref(),
        ))
        .without_time()
        .with_target(false)
        .with_filter(levels)
        .with_filter(not_silenced);
    let _ = tracing_subscriber::registry().with(output).try_init();
}

#[cfg(test)]
mod tests {
    #[test]
    fn no_color_turns_colour_off_on_a_terminal() {
        use std::ffi::OsStr;
        let cases = [
            (true, None, true),
            (true, Some(OsStr::new("1")), false),
            (true, Some(OsStr::new("")), true),
            (false, None, false),
        ];
        for (terminal, no_color, want) in cases {
            assert_eq!(super::colored(terminal, no_color), want, "{no_color:?}");
        }
    }

    use super::silenced;

    #[test]
    fn http_and_tls_targets_are_silenced_and_ours_are_not() {
        let targets = [
            "async_openai::error",
            "hyper",
            "hyper::proto::h1::io",
            "hyper_util::client::legacy",
            "reqwest::connect",
            "h2::codec",
            "rustls::client::hs",
            "agent_openai::client",
            "agent_tutorial::cli",
            "hyperfine",
        ];
        assert_eq!(
            targets.map(silenced),
            [
                true, true, true, true, true, true, true, false, false, false
            ]
        );
    }
}
