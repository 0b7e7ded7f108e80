//! Error text for places that have no `{:#}`: a log line, a message that goes into a typed error.

/// `err` and each of its causes, `: `-separated.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}
