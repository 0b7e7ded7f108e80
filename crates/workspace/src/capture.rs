//! Bounded output: lossy UTF-8 and a head/tail cap with an honest marker. Shared by the tools
//! (`bash`, `read_file`) and the shell hooks, so a command's output costs the cap, never more.

/// Collects a byte stream of any length in bounded memory: the first `cap / 2` bytes and the
/// last `cap - cap / 2` bytes, plus the total count.
#[derive(Debug, Clone)]
pub struct Capture {
    head: Vec<u8>,
    tail: Vec<u8>,
    head_cap: usize,
    tail_cap: usize,
    total: usize,
}

impl Capture {
    /// An empty capture keeping at most `cap` bytes: half from the start, half from the end.
    pub fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        Self {
            head: Vec::new(),
            tail: Vec::new(),
            head_cap,
            tail_cap: cap - head_cap,
            total: 0,
        }
    }

    /// A capture of a buffer already in memory.
    pub fn of(bytes: &[u8], cap: usize) -> Self {
        let mut capture = Self::new(cap);
        capture.push(bytes);
        capture
    }

    /// A capture of a stream read only at its two ends: `head`, `tail`, and the length of the
    /// whole (so a 3 GB file costs the cap, not 3 GB).
    pub fn of_parts(head: Vec<u8>, tail: Vec<u8>, total: usize) -> Self {
        Self {
            head_cap: head.len(),
            tail_cap: tail.len(),
            head,
            tail,
            total,
        }
    }

    /// Adds the next chunk: the head fills first, then the tail keeps only the newest bytes.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len();
        let room = self.head_cap - self.head.len();
        let into_head = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..into_head]);
        bytes = &bytes[into_head..];
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend_from_slice(&bytes[bytes.len() - self.tail_cap..]);
        } else {
            self.tail.extend_from_slice(bytes);
            let excess = self.tail.len().saturating_sub(self.tail_cap);
            self.tail.drain(..excess);
        }
    }

    /// Every byte pushed, kept or not: what the truncation marker reports.
    pub fn total(&self) -> usize {
        self.total
    }

    /// The text: everything when it fit, else head, a marker saying how much was cut, and
    /// tail. Invalid UTF-8 becomes U+FFFD.
    pub fn render(&self) -> String {
        let kept = self.head.len() + self.tail.len();
        if kept == self.total {
            let mut all = self.head.clone();
            all.extend_from_slice(&self.tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        format!(
            "{}\n[... output truncated: {} of {} bytes omitted ...]\n{}",
            String::from_utf8_lossy(&self.head),
            self.total - kept,
            self.total,
            String::from_utf8_lossy(&self.tail)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Capture;

    #[test]
    fn short_output_is_unchanged() {
        assert_eq!(Capture::of(b"abc", 10).render(), "abc");
        assert_eq!(Capture::of("héllo".as_bytes(), 4).total(), 6);
    }

    #[test]
    fn long_output_keeps_head_and_tail_across_chunks() {
        let mut capture = Capture::new(10);
        for chunk in [&b"0123"[..], b"456789ab", b"cdefghij"] {
            capture.push(chunk);
        }
        assert_eq!(
            capture.render(),
            "01234\n[... output truncated: 10 of 20 bytes omitted ...]\nfghij"
        );
    }

    #[test]
    fn exactly_the_cap_is_not_truncated() {
        assert_eq!(Capture::of(b"0123456789", 10).render(), "0123456789");
    }
}
