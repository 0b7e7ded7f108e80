//! How fast a streamed reply is parsed (`--stream`): the SSE parser and the assembler over a
//! 1 MiB event stream of small text deltas, fed in reads of 1,500 bytes (a TCP segment) and of
//! 16 KiB. Throughput is in bytes of the stream per second.
//!
//! `cargo bench -p agent-openai --bench stream`
//!
//! On the shared 2-core machine (load 3.5): median 208 MB/s with 1,500-byte reads, 198 MB/s
//! with 16 KiB reads (about 5 ms per MiB; most of it is serde reading each chunk's JSON). A
//! model streams kilobytes per second: the parse is never what the person waits for.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_core::NoEvents;
use agent_openai::stream::{Assembler, DONE, SseParser};
use divan::counter::BytesCount;

fn main() {
    divan::main();
}

/// A stream of text deltas of a few tokens each, as OpenAI sends them, about `size` bytes.
fn stream(size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(size + 1024);
    let mut i = 0;
    while out.len() < size {
        out.extend_from_slice(
            format!(
                "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" word{i}\"}},\"finish_reason\":null}}]}}\n\n"
            )
            .as_bytes(),
        );
        i += 1;
    }
    out.extend_from_slice(b"data: [DONE]\n\n");
    out
}

fn parse(bytes: &[u8], read: usize) -> usize {
    let mut parser = SseParser::default();
    let mut assembler = Assembler::default();
    for chunk in bytes.chunks(read) {
        let done = parser.feed(chunk, |data| {
            if data == DONE {
                return Some(());
            }
            assembler.apply(data, &NoEvents).unwrap();
            None
        });
        if done.is_some() {
            break;
        }
    }
    assembler.finish().unwrap().content.map_or(0, |c| c.len())
}

#[divan::bench(args = [1500, 16 * 1024])]
fn parse_1mib(bencher: divan::Bencher, read: usize) {
    let bytes = stream(1024 * 1024);
    bencher
        .counter(BytesCount::new(bytes.len()))
        .bench(|| parse(divan::black_box(&bytes), read));
}
