//! `--stream` / `--no-stream`: whether the model's replies are streamed (chapter 11 on, the
//! chapter that owns the transport and its recovery; on by default from chapter 20, the
//! [`Features::stream_default`] the harness answers).

use agent_harness::{Features, ModelFallback, StreamDefault};
use agent_openai::Streaming;

use super::output::OutputFormat;
use super::{CliError, CliResult, RunArgs};

/// The streaming the flags ask for, or a usage error before chapter 11: a cut stream is
/// only safe to show with chapter 11's recovery, which retries it. `--output-format` is
/// checked here too: chapter 11 on, one-shot runs only.
pub(crate) fn streaming(chapter: u8, features: Features, args: &RunArgs) -> CliResult<Streaming> {
    let asked = args.stream || args.no_stream;
    // Chapter 11's recovery is what tells the fallback model apart: it is the feature that
    // retries a cut stream.
    if asked && features.fallback != ModelFallback::Required {
        let flag = if args.stream {
            "--stream"
        } else {
            "--no-stream"
        };
        return Err(CliError::usage(anyhow::anyhow!(
            "{flag} needs chapter 11 or later (the chapter that owns the model transport and retries a cut stream); chapter {chapter} reads each reply whole"
        )));
    }
    if args.output_format != OutputFormat::Text {
        if features.fallback != ModelFallback::Required {
            return Err(CliError::usage(anyhow::anyhow!(
                "--output-format needs chapter 11 or later (the chapter whose events a script can rely on); chapter {chapter} prints text"
            )));
        }
        if args.prompt.is_none() {
            return Err(CliError::usage(anyhow::anyhow!(
                "--output-format is for one-shot runs: give the prompt with --prompt"
            )));
        }
    }
    // Neither flag: the chapter's default (chapter 20 streams, chapters 11–19 read whole).
    let streamed =
        args.stream || (!args.no_stream && features.stream_default == StreamDefault::Streamed);
    Ok(if streamed {
        Streaming::On
    } else {
        Streaming::Off
    })
}
