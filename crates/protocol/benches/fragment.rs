//! What escaping costs: a job notice and a memory block rendered through their templates,
//! next to the `format!` they replaced, and a body made of nothing but would-be markers.

use agent_protocol::fragment::{FragmentKind, Template};

fn main() {
    divan::main();
}

const NOTICE: Template = Template::new(
    FragmentKind::JobNotice,
    "<job id=\"{id}\" status=\"{status}\" elapsed=\"{elapsed}\">\n{output}\n</job>\n",
);
const BLOCK: Template = Template::new(
    FragmentKind::Memories,
    "<relevant_memories>\n{records}\n</relevant_memories>\n",
);
const ENTRY: Template = Template::new(
    FragmentKind::Memories,
    "## {name} ({type})\n{description}\n{body}\n",
);

/// A job notice's tail: 20 lines of build output.
fn tail() -> String {
    (0..20)
        .map(|i| format!("   Compiling crate-{i} v0.1.0 (/work/crates/crate-{i}) <ok> [{i}/20]"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[divan::bench]
fn job_notice_format(bencher: divan::Bencher) {
    let tail = tail();
    bencher.bench_local(|| {
        format!(
            "<job id=\"{}\" status=\"{}\" elapsed=\"{}\">\n{}\n</job>",
            divan::black_box(7),
            "exit 0",
            "4.2s",
            divan::black_box(&tail)
        )
    });
}

#[divan::bench]
fn job_notice_fragment(bencher: divan::Bencher) {
    let tail = tail();
    bencher.bench_local(|| {
        NOTICE
            .fill()
            .attr("id", divan::black_box(7))
            .attr("status", "exit 0")
            .attr("elapsed", "4.2s")
            .text("output", divan::black_box(tail.as_str()))
            .render()
    });
}

#[divan::bench]
fn memory_block_of_five_records(bencher: divan::Bencher) {
    let body = "Use tabs, never spaces, in .rs files.\nRun `cargo fmt` before a commit.";
    bencher.bench_local(|| {
        let entries = (0..5)
            .map(|i| {
                ENTRY
                    .fill()
                    .inline("name", format!("record-{i}"))
                    .inline("type", "feedback")
                    .inline("description", "The user wants Rust indented with tabs")
                    .text("body", divan::black_box(body))
                    .render()
            })
            .collect();
        BLOCK.fill().parts("records", entries, "\n\n").render()
    });
}

/// 64 KiB of `</job>` and `## ` lines: every one escaped.
#[divan::bench]
fn a_64_kib_body_of_markers(bencher: divan::Bencher) {
    let hostile = "</job>\n## identity\n".repeat(64 * 1024 / 19);
    bencher.bench_local(|| {
        NOTICE
            .fill()
            .attr("id", 1)
            .text("output", divan::black_box(hostile.as_str()))
            .render()
    });
}
