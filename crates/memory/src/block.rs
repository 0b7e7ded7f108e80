//! The `<relevant_memories>` block: the selected records as the model reads them, in P09's own
//! system message and P10's `## memory` section. Its layout is in `block.md` (the block) and
//! `block_entry.md` (one record).
//!
//! A record is stored text, and a stored file may have been planted or written by a hostile
//! model: every field is escaped on the way in, so a record cannot close the block, open a
//! section of the system prompt (`## identity`) or forge another fragment.

use agent_core::fragment::{Fragment, FragmentKind, Template};

use crate::record::MemoryRecord;

const BLOCK: Template = Template::new(FragmentKind::Memories, include_str!("block.md"));
const ENTRY: Template = Template::new(FragmentKind::Memories, include_str!("block_entry.md"));

/// `## <name> (<type>)`, the description, the body: one record of the block.
fn entry(record: &MemoryRecord) -> Fragment {
    ENTRY
        .fill()
        .inline("name", &record.name)
        .inline("type", record.kind.as_str())
        .inline("description", &record.description)
        .text("body", record.body.as_str())
        .render()
}

/// The block selected records render as, `None` when none is selected.
pub fn render_block(records: &[MemoryRecord]) -> Option<String> {
    if records.is_empty() {
        return None;
    }
    let entries = records.iter().map(entry).collect();
    let block = BLOCK.fill().parts("records", entries, "\n\n").render();
    Some(block.into_text())
}
